# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Intel FPGA driver (PAC Arria 10, D5005, N3000, N5010/N6000 and other DFL cards).

Two sysfs layouts exist and both are read:

- legacy OPAE (``intel-fpga-pci`` out-of-tree driver): ``<pci>/fpga/intel-fpga-dev.N/`` holding
  ``intel-fpga-fme.N/pr/interface_id`` (the PR region's interface id) and
  ``intel-fpga-port.N/afu_id`` (the loaded AFU);
- upstream DFL (``dfl-pci``): ``<pci>/fpga_region/regionN/dfl-fme.N/`` whose PR region is
  ``dfl-fme-region.M/fpga_region/regionK/compat_id``, and ``<pci>/fpga_region/regionN/dfl-port.N/afu_id``.

An id that is all ``f`` means the region/AFU is broken (a failed partial reconfiguration).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import json
import struct

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import (
    all_f,
    function_record,
    read_text,
    walk_dirs,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.fpga import (
    HEX_ID_RE, FpgaDriver, FpgaError, Target, find_rel, normalize_id)
from ansible_collections.accelops.lifecycle.plugins.module_utils._naming import fpga_function_trait, fpga_region_trait

__metaclass__ = type

# vendor:device -> board, for PFs and VFs of Intel FPGA cards
BOARDS = {
    ("8086", "bcc0"): "PAC_ARRIA10_INTEGRATED", ("8086", "bcc1"): "PAC_ARRIA10_INTEGRATED",
    ("8086", "09c4"): "PAC_ARRIA10", ("8086", "09c5"): "PAC_ARRIA10",
    ("8086", "0b2b"): "PAC_D5005", ("8086", "0b2c"): "PAC_D5005",
    ("8086", "0b30"): "PAC_N3000", ("8086", "0b31"): "PAC_N3000",
    ("8086", "af00"): "OFS", ("8086", "af01"): "OFS",
    ("8086", "bcce"): "N6000", ("8086", "bccf"): "N6000",
    ("1c2c", "1000"): "SILICOM_N5010", ("1c2c", "1001"): "SILICOM_N5011",
}
KERNEL_DRIVERS = frozenset(("intel-fpga-pci", "dfl-pci"))


GBS_GUID = b"XeonFPGA\xb7GBSv001"


def _id(value):
    if value is None:
        return None
    v = value.strip().lower()
    return v[2:] if v.startswith("0x") else v


class IntelFpgaDriver(FpgaDriver):
    name = "intel_fpga"
    summarize_vfs = False  # port VFs carry the FPGA data; a card has one or a few
    family = "fpga"
    cyborg_driver_name = "intel_fpga_driver"
    pci_vendors = {"intel": "8086"}
    programming_model = "dynamic"
    bitstream_format = "gbs"
    bitstream_magic = GBS_GUID
    bitstream_kind = "an Intel GBS (GUID XeonFPGA\\xb7GBSv001)"
    tool = "fpgaconf"

    def parse_bitstream(self, data):
        # the GBS header: the GUID, a uint32 length, then the JSON metadata (OPAE packager's layout)
        if len(data) < 20:
            raise FpgaError("GBS file is truncated: no metadata length after the GUID")
        (length,) = struct.unpack_from("<I", data, 16)
        if length == 0 or 20 + length > len(data):
            raise FpgaError("GBS metadata length %d does not fit the file's header" % length)
        try:
            meta = json.loads(data[20:20 + length].decode("utf-8"))
            image = meta["afu-image"]
            iface = normalize_id(image["interface-uuid"])
            cluster = image["accelerator-clusters"][0]
            afu = normalize_id(cluster["accelerator-type-uuid"])
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            raise FpgaError("GBS metadata is not valid (afu-image.interface-uuid and "
                            "afu-image.accelerator-clusters[0].accelerator-type-uuid are needed): %s" % e)
        for label, v in (("interface-uuid", iface), ("accelerator-type-uuid", afu)):
            if not v or not HEX_ID_RE.match(v):
                raise FpgaError("GBS metadata %s is not a UUID: %r" % (label, v))
        return {"format": "gbs", "interface_id": iface, "function_id": afu,
                "name": cluster.get("name") if isinstance(cluster, dict) else None,
                "platform": meta.get("platform-name") if isinstance(meta, dict) else None}

    def program_target(self, sysfs, record, port, vfs, result):
        """A port of the card (``port`` names it when there are several): a dynamic region loaded with fpgaconf."""
        rec = record
        fp = rec.get("fpga") or {}
        # where each port is: the PF, or the VF it was given to (SR-IOV on a PAC); the region is reconfigured
        # through the PF's FME either way, so the tool is pointed at the PF
        by_addr = dict((r["address"], r) for r in (result or {}).get("accelerators") or [])
        homes = [(c["address"], p) for c in self.function_carriers(rec, by_addr) for p in (c.get("fpga") or {}).get("ports") or []]
        ports = [p for _home, p in homes]
        if not ports or not fp.get("layout"):
            raise FpgaError("%s: no FPGA port found in sysfs (driver %s); is the OPAE/DFL driver loaded?"
                            % (rec["address"], rec.get("driver")))
        chosen = None
        if port in (None, ""):
            if len(ports) > 1:
                raise FpgaError("%s has %d ports (%s); say which one with port" % (
                    rec["address"], len(ports), ", ".join(p["id"] for p in ports)))
            chosen = ports[0]
        else:
            want = "%s" % port
            for p in ports:
                if want == p["id"] or want == p["id"].rsplit(".", 1)[-1]:
                    chosen = p
            if chosen is None:
                raise FpgaError("%s has no port %r; its ports: %s" % (rec["address"], want, ", ".join(p["id"] for p in ports)))
        t = Target(rec["address"], "intel", "dynamic", fp["layout"], chosen["id"], self.tool, rec, driver=self)
        t.interface_ids = [r["interface_id"] for r in fp.get("regions") or [] if r.get("interface_id")]
        home = next(h for h, p in homes if p is chosen)
        base = "/sys/bus/pci/devices/%s" % home
        t.port_on_vf = home != rec["address"]
        rel = find_rel(sysfs, base, chosen["id"])
        t.function_path = "%s/%s/afu_id" % (base, rel) if rel else None
        if fp["layout"] == "opae":
            t.function_glob = "%s/fpga/intel-fpga-dev.*/intel-fpga-port.*/afu_id" % base
        else:
            t.function_glob = "%s/fpga_region/region*/dfl-port.*/afu_id" % base
        t.slots = [chosen["id"]]
        t.related = [rec["address"]] + vfs
        t.port_nodes = ["/dev/%s" % chosen["id"]]
        t.result = result
        return t

    def tool_args(self, target, staged_path):
        # fpgaconf names the card by bus, device and function (and --segment for a non-zero PCI domain)
        dom, bus, rest = target.address.split(":")
        dev, fn = rest.split(".")
        args = []
        if int(dom, 16):
            args += ["--segment", "0x%s" % dom]
        return args + ["-B", "0x%s" % bus, "-D", "0x%s" % dev, "-F", "0x%s" % fn, staged_path]

    def matches_record(self, record):
        return record.get("family") == "fpga" and (record.get("fpga") or {}).get("vendor") in (None, "intel")

    def cyborg_driver(self, record):
        if (record.get("fpga") or {}).get("layout") == "dfl":
            return self.cyborg_driver_name, (
                "%s uses the upstream DFL driver; Cyborg's intel_fpga_driver reads the OPAE layout (/sys/class/fpga) "
                "and will not see it" % record.get("address"))
        return self.cyborg_driver_name, None

    def product_traits(self, record):
        # Cyborg's CUSTOM_FPGA_INTEL_<BOARD> (its intel driver: PAC_ARRIA10 for 8086:09c4)
        board = (record.get("fpga") or {}).get("board")
        return [_naming.trait("FPGA", "INTEL", board)] if board else []

    # -- a card whose port is on its VFs ---------------------------------------------------------------------
    # Before SR-IOV the host releases the port from the PF (the FME's port-release ioctl); each VF, bound to the
    # FPGA driver, then shows a port and the PF keeps only the FME (the PR region). Cyborg's Intel driver makes
    # one deployable of such a card: named after a VF, FPGA = number of VFs, with the PF's traits (vendor,
    # product, region) and the VFs' function ids together. The card is reported the same way here.
    def function_carriers(self, record, by_addr):
        if record.get("physfn") or (record.get("fpga") or {}).get("ports"):
            return [record]
        vfs = [by_addr[a] for a in (record.get("sriov") or {}).get("vfs") or [] if a in by_addr]
        return sorted(vfs, key=lambda r: r["address"]) or [record]

    def card_view(self, record, by_addr):
        carriers = self.function_carriers(record, by_addr)
        if carriers == [record]:
            return record
        view = dict(record)
        view["fpga"] = dict(record.get("fpga") or {})
        view["fpga"]["ports"] = [p for vf in carriers for p in (vf.get("fpga") or {}).get("ports") or []]
        view["function"] = next((vf["function"] for vf in carriers if vf.get("function")), None)
        return view

    def host_provider_specs(self, record, by_addr, base_traits, function_traits):
        pf = by_addr.get(record.get("physfn")) if record.get("physfn") else None
        if pf is not None and any(c is record for c in self.function_carriers(pf, by_addr)):
            return []  # counted by its card's provider (below, from the PF's record)
        carriers = self.function_carriers(record, by_addr)
        if carriers == [record]:
            return self.provider_specs(record, base_traits, function_traits)
        fpga = record.get("fpga") or {}
        traits = self.card_traits(record, base_traits)
        traits += [_naming.safe_trait(r["trait"]) for r in fpga.get("regions") or [] if r.get("trait")]
        for vf in carriers:
            traits += [t for t in function_traits(vf.get("function")) if t not in traits]
        # Cyborg names the deployable after the last VF it lists (one per card on the PAC A10 and D5005)
        return [(carriers[-1]["address"], "FPGA", len(carriers), traits, None)]

    def claims(self, func, ctx=None):
        if func.driver in KERNEL_DRIVERS:
            return True
        return (func.vendor_id, func.device_id) in BOARDS

    def describe(self, func, ctx):
        regions, ports = [], []
        layouts = set()
        bitstream_id = None
        base = func.real + "/"
        dirs = walk_dirs(func.real, 7)
        names = set(d[0] for d in dirs)
        for rel, name in dirs:
            if name.startswith("intel-fpga-fme.") or name.startswith("dfl-fme."):
                layouts.add("opae" if name.startswith("intel-fpga") else "dfl")
                bid = read_text(func, base + rel + "/bitstream_id", rel + "/bitstream_id")
                if bid is not None and bitstream_id is None:
                    bitstream_id = bid
                if rel + "/pr" in names:
                    iid = _id(read_text(func, base + rel + "/pr/interface_id", rel + "/pr/interface_id"))
                    if iid is not None:
                        regions.append({"id": name, "interface_id": iid})
            elif name.startswith("intel-fpga-port.") or name.startswith("dfl-port."):
                layouts.add("opae" if name.startswith("intel-fpga") else "dfl")
                afu = _id(read_text(func, base + rel + "/afu_id", rel + "/afu_id"))
                ports.append({"id": name, "afu_id": afu})
            elif name.startswith("region") and "/fpga_region/" in "/" + rel and "fme" in rel:
                # a DFL partial-reconfiguration region below the FME
                iid = _id(read_text(func, base + rel + "/compat_id", rel + "/compat_id"))
                if iid is not None:
                    layouts.add("dfl")
                    regions.append({"id": name, "interface_id": iid})
        for r in regions:
            r["healthy"] = not all_f(r["interface_id"])
            r["trait"] = fpga_region_trait("intel", r["interface_id"]) if r["interface_id"] else None
        for p in ports:
            p["healthy"] = p["afu_id"] is not None and not all_f(p["afu_id"])
            if p["afu_id"] is None:
                func.warn("%s: no readable afu_id" % p["id"])
        healthy = all(r["healthy"] for r in regions) and all(p["healthy"] for p in ports)
        if len(layouts) > 1:
            func.warn("both the legacy OPAE and the DFL sysfs layouts are present")
        layout = sorted(layouts)[0] if layouts else None
        if layout is None and func.driver in KERNEL_DRIVERS:
            func.warn("the %s driver is bound but no FME/port was found in sysfs" % func.driver)
        function = None
        for p in ports:
            if p["afu_id"]:
                function = function_record(p["afu_id"], None, fpga_function_trait("intel", p["afu_id"]))
                break
        fpga = {
            "vendor": "intel",
            "layout": layout,
            "board": BOARDS.get((func.vendor_id, func.device_id)),
            "bitstream_id": bitstream_id,
            "regions": regions,
            "ports": ports,
            "healthy": healthy,
            "management_address": None,
            "management_device_id": None,
            "user_address": None,
            "shell": None,
        }
        return {"fpga": fpga, "programming_model": "dynamic", "function": function,
                "healthy": healthy if (regions or ports) else None}
