# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the FPGA family's cards (Intel DFL/OPAE, Xilinx Alveo) have in common beyond discovery: how a record
becomes Placement providers and how a loaded function is named. The vendors' drivers subclass it.

Standard library only, Python 3.9+.
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Driver

__metaclass__ = type


class FpgaDriver(Driver):
    family = "fpga"

    def discovered_function_trait(self, record, function):
        # Cyborg's function-id trait, made valid: CUSTOM_FPGA_FUNCTION_ID_<VENDOR>_<ID>
        if not function.get("id"):
            return super(FpgaDriver, self).discovered_function_trait(record, function)
        vendor = (record.get("fpga") or {}).get("vendor") or record.get("vendor_id") or ""
        return _naming.fpga_function_trait(vendor, function["id"])

    def cyborg_vendor(self, record):
        return (record.get("fpga") or {}).get("vendor")

    def product_traits(self, record):
        """The product trait Cyborg's driver for this vendor gives the card's provider (none by default)."""
        return []

    def card_traits(self, record, base_traits):
        """The traits of every provider of the card: ``base_traits``, Cyborg's vendor trait
        (``CUSTOM_FPGA_INTEL``/``CUSTOM_FPGA_XILINX``) and its product trait."""
        base = list(base_traits)
        vendor = (record.get("fpga") or {}).get("vendor")
        if vendor:
            base.append(_naming.trait("FPGA", vendor))
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
