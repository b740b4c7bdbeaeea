# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the FPGA family's cards (Intel DFL/OPAE, Xilinx Alveo) have in common beyond discovery: how a record
becomes Placement providers, how a loaded function is named, and what a programmable target is (the vendors'
drivers say where theirs is, which bitstream format and tool load it). The vendors' drivers subclass it. The
declaration's ``fpga`` kind (a bitstream to load) is the family's too.

Standard library only, Python 3.9+.
"""

from __future__ import annotations

import re
from abc import abstractmethod

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Driver, Kind, ReuseReset
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Refusal
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import SHA256_RE, function_id

__metaclass__ = type


HEX_ID_RE = re.compile(r"^[0-9a-f]{32}$")
# a function id as a declaration may give it: 32 hex digits, with or without a UUID's dashes
UUIDISH_RE = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def normalize_id(value):
    """A UUID-like id as 32 lower-case hex digits ('0x', dashes, braces and case removed); None for
    None/empty; the cleaned text (not 32 digits) when it is not one, so that comparisons still fail."""
    if value is None:
        return None
    v = ("%s" % value).strip().lower()
    if v.startswith("0x"):
        v = v[2:]
    v = v.replace("-", "").strip("{}")
    return v or None


def is_zero_id(hexid):
    return not hexid or set(hexid) <= {"0"}


class FpgaError(Refusal):
    """A refusal or failure with an operator-readable message (the module fails with it); ``extra``: result keys."""


class Target(object):
    """One programmable thing: an Intel port (dynamic region) or a whole Alveo card (single program)."""

    def __init__(self, address, vendor, model, layout, port, tool, record, driver=None):
        self.address = address          # the card's address as the record names it
        self.driver = driver            # the card's family driver: its tool's arguments, its bitstream format
        self.vendor = vendor            # intel | xilinx
        self.model = model              # dynamic | single
        self.layout = layout            # opae | dfl | xrt
        self.port = port                # Intel: the port's sysfs name; Xilinx: None
        self.tool = tool                # fpgaconf | xbmgmt
        self.record = record
        self.interface_ids = []         # what the region/shell accepts (hex)
        self.function_path = None       # host path of the attribute that names the loaded function
        self.function_glob = None       # the same, as a pattern that survives renumbering at boot
        self.management = None          # Xilinx: the management PF
        self.slots = []                 # units that get the function (all of a single-program card)
        self.related = []               # addresses whose users make the target busy
        self.port_nodes = []            # Intel: /dev nodes of the port
        self.port_on_vf = False         # Intel: the port was given to a VF of the card (read back there)

    @property
    def name(self):
        return "%s %s" % (self.address, self.port) if self.port else self.address

    def describe(self):
        return {"address": self.address, "vendor": self.vendor, "programming_model": self.model,
                "layout": self.layout, "port": self.port, "management_address": self.management,
                "interface_ids": list(self.interface_ids), "slots": list(self.slots),
                "function_path": self.function_path}


def find_rel(sysfs, base, name, depth=4):
    """The path below ``base`` of the directory ``name`` (breadth first, links not followed)."""
    level = [""]
    for _level in range(depth):
        nxt = []
        for rel in level:
            d = base + ("/" + rel if rel else "")
            for entry, is_dir, _is_link in sysfs.scandir(d):
                if not is_dir:
                    continue
                r = rel + "/" + entry if rel else entry
                if entry == name:
                    return r
                nxt.append(r)
        level = nxt
    return None


class FpgaDriver(Driver):
    """What the FPGA families share. Besides :class:`Driver`'s, an FPGA family must answer ``parse_bitstream``,
    ``program_target`` and ``tool_args`` (abstract), and states ``bitstream_format``, ``bitstream_magic``,
    ``bitstream_kind`` and ``tool``; ``product_traits`` defaults to none."""

    family = "fpga"
    cyborg_profile_classes = {"fpga": "FPGA"}
    ironic_type = "FPGA"
    ironic_default = True
    bitstream_format = None     # the file format its tool loads: gbs, xclbin
    bitstream_magic = None      # the bytes such a file starts with
    bitstream_kind = None       # the format, as a message names it
    tool = None

    @abstractmethod
    def parse_bitstream(self, data):
        """``{format, interface_id, function_id, name, platform}`` from a file of this family's format (ids as 32
        hex digits; ``data``: its first bytes). Raises :class:`FpgaError` when the metadata is broken."""

    @abstractmethod
    def program_target(self, sysfs, record, port, vfs, result):
        """The :class:`Target` that ``fpga_program`` loads a bitstream onto (``vfs``: the card's VF addresses,
        ``result``: the discovery it came from). Raises :class:`FpgaError` when the card cannot be programmed."""

    @abstractmethod
    def tool_args(self, target, staged_path):
        """The vendor tool's arguments (after its path) that load ``staged_path`` onto ``target``."""

    def reuse_reset(self, sysfs, record, assignment):
        """An FPGA's reset for the next tenant: the declared function loaded again (``fpga_program`` with
        ``force``) and read back, which replaces whatever the previous tenant left in the region's logic. Refused
        where no declared ``fpga`` function is assigned to the card."""
        if not assignment or assignment.get("kind") != FPGA_KIND.name:
            raise Refusal("%s: an FPGA is reset by loading its declared function again, and no declared fpga "
                          "function is assigned to it" % record["address"])
        args = dict(assignment["module_args"], force=True)
        return ReuseReset("load %s again (%s, force) and read it back" % (assignment["function"], args["bitstream"]),
                          program=(FPGA_KIND.name, args))

    def discovered_function_trait(self, record, function):
        # Cyborg's function-id trait, made valid: CUSTOM_FPGA_FUNCTION_ID_<VENDOR>_<ID>
        if not function.get("id"):
            return super(FpgaDriver, self).discovered_function_trait(record, function)
        vendor = (record.get("fpga") or {}).get("vendor") or record.get("vendor_id") or ""
        return _naming.fpga_function_trait(vendor, function["id"])

    def cyborg_vendor(self, record):
        return (record.get("fpga") or {}).get("vendor")

    def cyborg_vendor_trait(self, vendor):
        # Cyborg's FPGA drivers name the vendor in a trait of their own: CUSTOM_FPGA_INTEL, CUSTOM_FPGA_XILINX
        return _naming.trait("FPGA", vendor)

    def cyborg_function_trait(self, vendor, function):
        return _naming.fpga_function_trait(vendor, function)

    def product_traits(self, record):
        """The product trait Cyborg's driver for this vendor gives the card's provider (none by default)."""
        return []

    def card_traits(self, record, base_traits):
        """The traits of every provider of the card: ``base_traits``, Cyborg's vendor trait
        (``CUSTOM_FPGA_INTEL``/``CUSTOM_FPGA_XILINX``) and its product trait."""
        base = list(base_traits)
        vendor = (record.get("fpga") or {}).get("vendor")
        if vendor:
            base.append(self.cyborg_vendor_trait(vendor))
        return base + [t for t in self.product_traits(record) if t not in base]

    def provider_specs(self, record, base_traits, function_traits):
        addr = record.get("address")
        fpga = record.get("fpga") or {}
        base = self.card_traits(record, base_traits)
        regions = fpga.get("regions") or []
        ports = fpga.get("ports") or []
        fn = record.get("function")
        if record.get("programming_model") == "dynamic":
            # each partial-reconfiguration region is schedulable on its own, programmed or not
            if len(regions) <= 1:
                rtraits = [_naming.safe_trait(r["trait"]) for r in regions if r.get("trait")]
                return [(addr, "FPGA", 1, base + rtraits + function_traits(fn), None)]
            out = []
            for i, r in enumerate(regions):
                rfn = {"id": ports[i]["afu_id"]} if i < len(ports) and ports[i].get("afu_id") else None
                rt = [_naming.safe_trait(r["trait"])] if r.get("trait") else []
                out.append(("%s_%s" % (addr, _naming.normalize(r.get("id") or str(i)).lower()), "FPGA", 1,
                            base + rt + function_traits(rfn), None))
            return out
        rtraits = [_naming.safe_trait(r["trait"]) for r in regions if r.get("trait")]
        if not fn:
            return [(addr, None, 0, base + rtraits, "single-program card with no function loaded: no inventory")]
        return [(addr, "FPGA", int(fpga.get("slots") or 1), base + rtraits + function_traits(fn), None)]


class FpgaKind(Kind):
    """A bitstream loaded onto an FPGA card, pinned by its sha256 (``accelops.lifecycle.fpga_program``)."""

    name = "fpga"
    keys = ("bitstream", "sha256", "function_id", "port", "rollback_bitstream", "rollback_sha256")
    families = ("fpga",)
    module = "accelops.lifecycle.fpga_program"
    converge_settings = {"timeout": "fpga_timeout", "persistent": "fpga_persistent", "persist_root": "persist_root",
                         "libvirt_run_dir": "libvirt_run_dir"}
    provision_keys = ("bitstream", "sha256", "function_id")
    provision_id_key = "function_id"
    provision_label = "FPGA"

    def validate(self, c, raw):
        f = c.mapping(raw, "fpga", self.keys)
        out = {
            "bitstream": c.string(f.get("bitstream"), "fpga.bitstream", required=True, form="path of the bitstream file"),
            "sha256": c.string(f.get("sha256"), "fpga.sha256", SHA256_RE, "64 hex digits", required=True),
            "function_id": c.string(f.get("function_id"), "fpga.function_id", UUIDISH_RE,
                                    "the AFU / xclbin UUID, with or without dashes", required=True),
            "port": c.string(f.get("port"), "fpga.port"),
            "rollback_bitstream": c.string(f.get("rollback_bitstream"), "fpga.rollback_bitstream"),
            "rollback_sha256": c.string(f.get("rollback_sha256"), "fpga.rollback_sha256", SHA256_RE, "64 hex digits"),
        }
        out["sha256"] = out["sha256"].lower()
        if bool(out["rollback_bitstream"]) != bool(out["rollback_sha256"]):
            c.fail("fpga.rollback_sha256", "rollback_bitstream and rollback_sha256 go together")
        return out

    def carries(self, entry, card, by_addr):
        # the card as one device: a vendor may keep the loaded function on the card's VFs (an Intel PAC whose port
        # moved to its VF); the registry is imported here because it imports this file
        from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record  # pylint: disable=import-outside-toplevel
        card = for_record(card).card_view(card, by_addr)
        fid = function_id(entry["fpga"]["function_id"])
        ports = (card.get("fpga") or {}).get("ports") or []
        if entry["fpga"]["port"]:
            want = entry["fpga"]["port"]
            ports = [p for p in ports if p.get("id") == want or p.get("id", "").rsplit(".", 1)[-1] == want]
        loaded = [function_id(p.get("afu_id")) for p in ports]
        if not loaded:
            loaded = [function_id((card.get("function") or {}).get("id"))]
        return bool(loaded) and all(x == fid for x in loaded)

    def module_args(self, entry, address):
        f = entry["fpga"]
        args = {"address": address, "bitstream": f["bitstream"], "sha256": f["sha256"], "function_id": f["function_id"]}
        for key in ("port", "rollback_bitstream", "rollback_sha256"):
            if f[key]:
                args[key] = f[key]
        return args

    def function_names(self, entry):
        fid = entry["fpga"]["function_id"]
        return {function_id(fid): entry["name"], fid: entry["name"]}

    def units(self, entry, card):
        if entry["fpga"]["port"]:
            return 1
        return max(1, len((card.get("fpga") or {}).get("ports") or []))

    def provision_cards(self, count):
        # one card per unit the group asks for: an FPGA function is one device
        return count

    def provision_action(self, fn, count):
        return {"bitstream": fn["bitstream"], "sha256": fn["sha256"]}


FPGA_KIND = FpgaKind()
