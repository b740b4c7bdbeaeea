# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Xilinx/AMD Alveo driver (XRT layout).

An Alveo card shows two PCI functions: the management PF (``xclmgmt``, function 0) that the host
keeps to program the card, and the user PF (``xocl``, function 1) that workloads use. They are
reported as **one record** keyed by the user PF, with the management PF in
``fpga.management_address``. The loaded xclbin (the function) is the user PF's
``icap*/xclbinuuid``; the shell's interface/logic UUIDs are the management PF's ``interface_uuids``
and ``logic_uuids``; the shell name is ``rom*/VBNV``; the board is ``board_name``.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import (
    Driver,
    all_f,
    function_record,
    read_text,
    walk_dirs,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.fpga import (
    HEX_ID_RE, FpgaDriver, FpgaError, Target, is_zero_id)
from ansible_collections.accelops.lifecycle.plugins.module_utils._naming import fpga_function_trait, fpga_region_trait
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import read_attr_real

__metaclass__ = type

VENDORS = frozenset(("10ee",))
MGMT_DRIVERS = frozenset(("xclmgmt", "xmgmt"))
USER_DRIVERS = frozenset(("xocl", "xuser"))


def role(func):
    """'management' or 'user' for an Alveo PF."""
    if func.driver in MGMT_DRIVERS:
        return "management"
    if func.driver in USER_DRIVERS:
        return "user"
    return "management" if func.address.endswith(".0") else "user"


def _find_files(func, wanted, depth=2):
    """{file name: (rel path, value)} for the first occurrence of each wanted file, in the device
    directory or its sub-directories (not following links)."""
    found = {}
    ent = func.entries()
    for w in wanted:
        if w in ent:
            found[w] = (w, read_text(func, func.real + "/" + w, w))
    if len(found) == len(wanted):
        return found
    for rel, _name in walk_dirs(func.real, depth):
        for w in wanted:
            if w in found:
                continue
            v, err = read_attr_real(func.real + "/" + rel + "/" + w)
            if err is None:
                found[w] = (rel + "/" + w, v)
    return found


def _uuids(text):
    if not text:
        return []
    return [t.strip().lower() for t in text.replace(",", " ").split() if t.strip()]


XCLBIN_MAGIC = b"xclbin2\0"
# struct axlf: magic[8], int32 signature length, reserved[28], keyBlock[256], uint64 uniqueId -> header
_AXLF_HEADER = 8 + 4 + 28 + 256 + 8
_AXLF_INTERFACE = _AXLF_HEADER + 32      # axlf_header.m_interface_uuid[16]
_AXLF_VBNV = _AXLF_HEADER + 48           # axlf_header.m_platformVBNV[64]
_AXLF_UUID = _AXLF_HEADER + 112          # axlf_header.uuid[16]
_AXLF_MIN = _AXLF_HEADER + 152


class XilinxFpgaDriver(FpgaDriver):
    name = "xilinx"
    summarize_vfs = False  # port VFs carry the FPGA data; a card has one or a few
    family = "fpga"
    cyborg_driver_name = "xilinx_fpga_driver"
    pci_vendors = {"xilinx": "10ee"}
    programming_model = "single"
    bitstream_format = "xclbin"
    bitstream_magic = XCLBIN_MAGIC
    bitstream_kind = "a Xilinx xclbin (magic xclbin2)"
    tool = "xbmgmt"

    def parse_bitstream(self, data):
        # the axlf header, as XRT's xclbin.h lays it out (docs/fpga.md)
        if len(data) < _AXLF_MIN:
            raise FpgaError("xclbin is truncated: %d bytes, the axlf header needs %d" % (len(data), _AXLF_MIN))
        iface = data[_AXLF_INTERFACE:_AXLF_INTERFACE + 16].hex()
        xid = data[_AXLF_UUID:_AXLF_UUID + 16].hex()
        platform = data[_AXLF_VBNV:_AXLF_VBNV + 64].split(b"\0", 1)[0].decode("utf-8", "replace") or None
        for label, v in (("interface uuid", iface), ("uuid", xid)):
            if not v or not HEX_ID_RE.match(v) or is_zero_id(v):
                raise FpgaError("xclbin %s is missing or not a UUID: %r" % (label, v))
        return {"format": "xclbin", "interface_id": iface, "function_id": xid, "name": None, "platform": platform}

    def program_target(self, sysfs, record, port, vfs, result):
        """The whole card: an xclbin fills the user partition; xbmgmt loads it through the management PF and it
        is read back on the user PF."""
        rec = record
        fp = rec.get("fpga") or {}
        if port not in (None, ""):
            raise FpgaError("%s is a single-program card (Xilinx Alveo): an xclbin fills the whole user partition, "
                            "so port must not be given" % rec["address"])
        mgmt, user = fp.get("management_address"), fp.get("user_address")
        if not mgmt:
            raise FpgaError("%s: the Alveo management PF (xclmgmt) was not found; xbmgmt programs through it" % rec["address"])
        if not user:
            raise FpgaError("%s: the Alveo user PF (xocl) was not found; the loaded xclbin cannot be read back" % rec["address"])
        t = Target(user, "xilinx", "single", fp.get("layout") or "xrt", None, self.tool, rec, driver=self)
        t.management = mgmt
        t.interface_ids = [r["interface_id"] for r in fp.get("regions") or [] if r.get("interface_id")]
        base = "/sys/bus/pci/devices/%s" % user
        if sysfs.exists(base + "/xclbinuuid"):
            t.function_path = base + "/xclbinuuid"
        else:
            for name in sysfs.listdir(base):
                if name.startswith("icap") and sysfs.exists("%s/%s/xclbinuuid" % (base, name)):
                    t.function_path = "%s/%s/xclbinuuid" % (base, name)
                    break
        t.function_glob = t.function_path
        t.slots = [u["id"] for u in rec.get("units") or []] or [user]
        t.related = [user, mgmt]
        t.result = result
        return t

    def tool_args(self, target, staged_path):
        return ["program", "--device", target.management, "--user", staged_path]

    def matches_record(self, record):
        return record.get("family") == "fpga" and (record.get("fpga") or {}).get("vendor") == "xilinx"

    # Cyborg's Xilinx driver lists the card's PFs with lspci (address order), makes one deployable named after
    # the first of them (the management PF, function 0) and gives it CUSTOM_FPGA_PRODUCT_ID_<that PF's id>.
    def _first_pf(self, record):
        """(address, device id) of the card's first PF in lspci's order."""
        fpga = record.get("fpga") or {}
        mgmt = fpga.get("management_address")
        if mgmt and mgmt < record.get("address", ""):
            return mgmt, fpga.get("management_device_id")
        return record.get("address"), record.get("device_id")

    def product_traits(self, record):
        pid = self._first_pf(record)[1]
        return [_naming.trait("FPGA", "PRODUCT_ID", pid)] if pid else []

    def provider_specs(self, record, base_traits, function_traits):
        first = self._first_pf(record)[0]
        return [(first, rc, total, traits, note) for _addr, rc, total, traits, note
                in super(XilinxFpgaDriver, self).provider_specs(record, base_traits, function_traits)]

    def claims(self, func, ctx=None):
        if func.driver in MGMT_DRIVERS or func.driver in USER_DRIVERS:
            return True
        return func.vendor_id in VENDORS and func.base_class not in ("06", None)

    def _partner(self, func, ctx):
        slot = func.address[:-1]
        for fn in "01234567":
            a = slot + fn
            if a == func.address:
                continue
            other = ctx.scan.get(a)
            if other is not None and self.claims(other) and not other.physfn:
                if role(other) != role(func):
                    return other
        return None

    def is_secondary(self, func, ctx):
        return role(func) == "management" and not func.physfn and self._partner(func, ctx) is not None

    def related_addresses(self, func, ctx):
        out = Driver.related_addresses(self, func, ctx)
        p = self._partner(func, ctx)
        if p is not None:
            out.append(p.address)
        return out

    def describe(self, func, ctx):
        partner = self._partner(func, ctx) if not func.physfn else None
        if role(func) == "management":
            mgmt, user = func, partner
        else:
            mgmt, user = partner, func
        xclbin = interface = logic = shell = board = None
        if user is not None:
            f = _find_files(user, ("xclbinuuid",))
            if "xclbinuuid" in f:
                xclbin = (f["xclbinuuid"][1] or "").strip().lower() or None
                if xclbin and xclbin.replace("0", "").replace("-", "") == "":
                    xclbin = None  # nothing loaded
        if mgmt is not None:
            f = _find_files(mgmt, ("interface_uuids", "logic_uuids", "VBNV", "board_name"))
            board = f.get("board_name", (None, None))[1] or None
            interface = _uuids(f.get("interface_uuids", (None, None))[1])
            logic = _uuids(f.get("logic_uuids", (None, None))[1])
            shell = f.get("VBNV", (None, None))[1] or None
            if mgmt is not func:
                for w in mgmt.warnings:
                    func.warn("management PF %s: %s" % (mgmt.address, w))
        regions = [{"id": str(i), "interface_id": iid, "healthy": not all_f(iid),
                    "trait": fpga_region_trait("xilinx", iid)} for i, iid in enumerate(interface or [])]
        healthy_ids = [x for x in [xclbin] + list(logic or []) if x]
        healthy = all(r["healthy"] for r in regions) and not any(all_f(x) for x in healthy_ids)
        known = bool(regions or healthy_ids)
        function = function_record(xclbin, None, fpga_function_trait("xilinx", xclbin)) if xclbin else None
        fpga = {
            "vendor": "xilinx",
            "layout": "xrt",
            "board": board,
            "bitstream_id": logic[0] if logic else None,
            "regions": regions,
            "ports": [],
            "healthy": healthy if known else None,
            "management_address": mgmt.address if mgmt is not None else None,
            "management_device_id": mgmt.device_id if mgmt is not None else None,
            "user_address": user.address if user is not None else None,
            "shell": shell,
        }
        return {"fpga": fpga, "programming_model": "single", "function": function,
                "healthy": healthy if known else None}
