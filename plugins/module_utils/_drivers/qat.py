# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Intel QuickAssist (QAT) driver: PFs and their VFs, with the device state and, on generation 4
and later, the configured services (``qat/cfg_services``: sym, asym, dc, ... - the one program a
QAT device runs; older generations have fixed services).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Driver, function_record, read_text
from ansible_collections.accelops.lifecycle.plugins.module_utils._naming import function_trait

__metaclass__ = type

# device id -> product family (PFs and VFs)
DEVICES = {
    "0435": "dh895xcc", "0443": "dh895xcc",
    "37c8": "c62x", "37c9": "c62x",
    "19e2": "c3xxx", "19e3": "c3xxx",
    "18a0": "c4xxx", "18a1": "c4xxx",
    "4940": "4xxx", "4941": "4xxx",
    "4942": "401xx", "4943": "401xx",
    "4944": "402xx", "4945": "402xx",
    "4946": "420xx", "4947": "420xx",
}
KERNEL_DRIVERS = frozenset(("dh895xcc", "dh895xccvf", "c6xx", "c6xxvf", "c3xxx", "c3xxxvf", "c4xxx",
                            "c4xxxvf", "4xxx", "4xxxvf", "420xx", "420xxvf"))


class QatDriver(Driver):
    name = "qat"
    family = "qat"
    programming_model = "fixed"

    vfs_pooled_in_pf = True
    cyborg_driver_name = "intel_qat_driver"
    cyborg_profile_classes = {"qat": "CUSTOM_QAT"}
    pci_vendors = {"intel": "8086"}
    ironic_type = "QAT"
    ironic_default = True

    def provider_specs(self, record, base_traits, function_traits):
        """CUSTOM_QAT: a PF's VFs (at least 1: the PF itself), or a VF reported without its PF; a gen 4+ card with
        no services configured has no inventory."""
        fn = record.get("function")
        if record.get("programming_model") == "single" and not fn:
            return [(record.get("address"), None, 0, base_traits, "no services configured: no inventory")]
        n = 1 if record.get("physfn") else int((record.get("sriov") or {}).get("numvfs") or 0)
        return [(record.get("address"), "CUSTOM_QAT", n if n > 0 else 1, base_traits + function_traits(fn), None)]

    def cyborg_driver(self, record):
        # Cyborg's QAT driver reads Intel's devices only
        if record.get("vendor_id") != "8086":
            return None, self.no_cyborg_driver(record)
        return super(QatDriver, self).cyborg_driver(record)

    def claims(self, func, ctx=None):
        if func.driver in KERNEL_DRIVERS or (func.driver or "").startswith("qat_"):
            return True
        return func.vendor_id == "8086" and func.device_id in DEVICES

    def describe_folded_vf(self, func, ctx):
        # a folded VF keeps its units only: a QAT VF has no unit type or extra units, and its product, state and
        # services are its PF record's (nothing to read for it)
        return {}

    def describe(self, func, ctx):
        pf = ctx.scan.get(func.physfn) if func.physfn else func
        state = services = None
        if pf is not None and "qat" in pf.entries():
            # read once per PF, not once per VF (a QAT PF has up to 16 VFs per function)
            key = "qat_state:" + pf.address
            if key not in ctx.cache:
                ctx.cache[key] = (read_text(pf, pf.real + "/qat/state", "qat/state"),
                                  read_text(pf, pf.real + "/qat/cfg_services", "qat/cfg_services"))
            state, services = ctx.cache[key]
            if pf is not func:
                for w in pf.warnings:
                    func.warn("PF %s: %s" % (pf.address, w))
        qat = {"product": DEVICES.get(func.device_id), "state": state, "cfg_services": services}
        function = None
        if services:
            function = function_record(services, services, function_trait("QAT_" + services))
        healthy = None if state is None else state == "up"
        return {"qat": qat, "programming_model": "single" if services is not None else "fixed",
                "function": function, "healthy": healthy}
