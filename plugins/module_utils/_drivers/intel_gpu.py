# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Intel Data Center GPU Flex (140, 170, 170V) and Max (1100, 1350, 1450, 1550) with SR-IOV: the PF held by Intel's
out-of-tree ``i915`` (the backport driver, with ``prelim_iov``), VFs created through ``sriov_numvfs`` (0 first, then
the new count: the kernel's rule) and passed whole to guests (``vfio-pci``). A VF has the PF's device id.

Upstream ``xe`` is no SR-IOV PF driver for these cards: it offers no SR-IOV on Flex (ATS-M has no ``has_sriov``) and
does not bind Max (PVC) at all; ``xe-vfio-pci`` covers only newer parts (PTL, WCL, BMG), not their VFs. Discovery
says so (``gpu.iov.limit``) and ``sriov_vfs`` refuses such a plan before it writes anything.

Per-VF resources: Intel's i915 exposes them under the PF's DRM card, ``drm/cardN/prelim_iov/``:
``pf/auto_provisioning`` (1: the driver shares the card fairly among the enabled VFs) and, per VF,
``vfK/<gt>/{contexts_quota,doorbells_quota,exec_quantum_ms,ggtt_quota,lmem_quota,preempt_timeout_us}`` (``gt`` on
Flex, ``gt0``/``gt1`` per tile on Max; K from 1). Discovery reports them in ``gpu.iov.provisioning`` for the enabled
VFs. They are not programmed: writing any quota turns the card's auto provisioning off for every VF, and the
driver refuses values by rules it does not publish. ``xe`` keeps them in debugfs, which is not read.
Sources: docs/families/intel-datacenter-gpu.md.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import re

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import listdir_real, read_text
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.gpu import WholeVfGpuDriver, empty_gpu_section

__metaclass__ = type

# device id -> product (pci.ids; the Max ids as Intel's Kubernetes resource driver lists them)
FLEX_DEVICES = {
    "56c0": "Data Center GPU Flex 170",
    "56c1": "Data Center GPU Flex 140",
    "56c2": "Data Center GPU Flex 170V",
}
MAX_DEVICES = {
    "0b69": "Data Center GPU Max 1450",
    "0b6e": "Data Center GPU Max 1100C",
    "0bd0": "Data Center GPU Max (Ponte Vecchio XL, 2 tiles)",
    "0bd4": "Data Center GPU Max 1550VG",
    "0bd5": "Data Center GPU Max 1550",
    "0bd6": "Data Center GPU Max 1550",
    "0bd7": "Data Center GPU Max 1350",
    "0bd8": "Data Center GPU Max 1350",
    "0bd9": "Data Center GPU Max 1100",
    "0bda": "Data Center GPU Max 1100",
    "0bdb": "Data Center GPU Max 1100",
}
DEVICES = dict(FLEX_DEVICES, **MAX_DEVICES)
# The PF driver that gives these cards SR-IOV: Intel's backport i915 (prelim_iov). The VFs go to vfio-pci.
SRIOV_PF_DRIVER = "i915"
VF_DRIVERS = ("vfio-pci",)


def driver_limit(device_id, driver):
    """What ``driver`` (bound to a PF of ``device_id``, or asked for as its VFs' driver: ``xe-vfio-pci``) cannot do
    on this card, or None. Upstream xe: no SR-IOV on Flex (ATS-M), no binding of Max (PVC); xe-vfio-pci: newer parts
    only (Linux drivers/gpu/drm/xe/xe_pci.c, drivers/vfio/pci/xe)."""
    family = "Data Center GPU Flex (ATS-M)" if device_id in FLEX_DEVICES else "Data Center GPU Max (PVC)"
    if driver == "xe":
        if device_id in FLEX_DEVICES:
            return ("the upstream xe driver offers no SR-IOV on %s (no VFs through sriov_numvfs); Intel's backport "
                    "i915 (prelim_iov) does" % family)
        return ("the upstream xe driver does not drive %s; Intel's backport i915 (prelim_iov) gives it SR-IOV"
                % family)
    if driver == "xe-vfio-pci":
        return ("xe-vfio-pci serves the VFs of newer Intel GPUs (Panther Lake, Wildcat Lake, Battlemage), not of %s: "
                "bind them to vfio-pci" % family)
    return None


VF_ATTRS = ("contexts_quota", "doorbells_quota", "exec_quantum_ms", "ggtt_quota", "lmem_quota", "preempt_timeout_us")
_GT_DIR = re.compile(r"^gt[0-9]*$")
_CARD_DIR = re.compile(r"^card[0-9]+$")


def _int_or_none(func, text, label):
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        func.warn("%s: unexpected value %r" % (label, text[:40]))
        return None


def read_provisioning(func, numvfs):
    """``{card, auto, vfs: [{index, tiles: {gt: {attr: int}}}]}`` from i915's ``prelim_iov`` for VFs 1..numvfs,
    or None when the PF's driver exposes no such directory."""
    for card in listdir_real(func.real + "/drm"):
        if not _CARD_DIR.match(card):
            continue
        base = "%s/drm/%s/prelim_iov" % (func.real, card)
        label = "drm/%s/prelim_iov/" % card
        auto_text = read_text(func, base + "/pf/auto_provisioning", label + "pf/auto_provisioning")
        vf_dirs = listdir_real(base)
        if auto_text is None and not vf_dirs:
            continue
        auto = _int_or_none(func, auto_text, label + "pf/auto_provisioning")
        vfs = []
        for k in range(1, numvfs + 1):
            vdir = "%s/vf%d" % (base, k)
            tiles = {}
            for gt in listdir_real(vdir):
                if not _GT_DIR.match(gt):
                    continue
                attrs = {}
                for name in VF_ATTRS:
                    lab = "%svf%d/%s/%s" % (label, k, gt, name)
                    attrs[name] = _int_or_none(func, read_text(func, "%s/%s/%s" % (vdir, gt, name), lab), lab)
                tiles[gt] = attrs
            vfs.append({"index": k, "tiles": tiles})
        return {"card": card, "auto": None if auto is None else bool(auto), "vfs": vfs}
    return None


class IntelDataCenterGpuDriver(WholeVfGpuDriver):
    name = "intel_gpu"
    family = "gpu"
    programming_model = "fixed"
    VENDOR = "8086"
    DEVICES = DEVICES

    def vf_count_refusal(self, pf, num_vfs):
        driver = pf.get("driver")
        limit = driver_limit(pf.get("device"), driver)
        if limit:
            return "%s is bound to xe: %s" % (pf.get("address"), limit)
        if driver not in (SRIOV_PF_DRIVER, "vfio-pci"):
            return ("%s is bound to %s; its VFs are created by Intel's backport i915 (prelim_iov): bind the PF to i915"
                    % (pf.get("address"), driver or "no driver"))
        return None

    def vf_driver_refusal(self, pf, vf_driver):
        return driver_limit(pf.get("device"), vf_driver)

    def describe(self, func, ctx):
        gpu = empty_gpu_section()
        provisioning = None
        if not func.physfn and func.driver == SRIOV_PF_DRIVER:
            numvfs = _int_or_none(func, read_text(func, func.real + "/sriov_numvfs", "sriov_numvfs"), "sriov_numvfs")
            provisioning = read_provisioning(func, numvfs or 0)
        gpu["iov"] = {
            "vendor": "intel",
            "product": DEVICES.get(func.device_id),
            "role": "vf" if func.physfn else "pf",
            "vf_count_programmable": None if func.physfn else func.driver == SRIOV_PF_DRIVER,
            "host_driver": None if func.physfn else func.driver,
            "provisioning": provisioning,
            # what gives this card SR-IOV, and what the bound driver cannot do (None: nothing known)
            "sriov_drivers": [SRIOV_PF_DRIVER],
            "vf_drivers": list(VF_DRIVERS),
            "limit": None if func.physfn else driver_limit(func.device_id, func.driver),
        }
        return {"gpu": gpu, "programming_model": "fixed", "function": None}
