# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Intel Data Center GPU Flex (140, 170) and Max (1100, 1350, 1550) with SR-IOV: the PF held by ``i915`` (Intel's
backport driver) or ``xe``, VFs created through ``sriov_numvfs`` (0 first, then the new count: the kernel's rule)
and passed whole to guests (``vfio-pci``; ``xe-vfio-pci`` on newer kernels). A VF has the PF's device id.

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
DEVICES = {
    "56c0": "Data Center GPU Flex 170",
    "56c1": "Data Center GPU Flex 140",
    "0bd0": "Data Center GPU Max (Ponte Vecchio XL, 2 tiles)",
    "0bd5": "Data Center GPU Max 1550",
    "0bd6": "Data Center GPU Max 1550",
    "0bd7": "Data Center GPU Max 1350",
    "0bd8": "Data Center GPU Max 1350",
    "0bd9": "Data Center GPU Max 1100",
    "0bda": "Data Center GPU Max 1100",
    "0bdb": "Data Center GPU Max 1100",
}
PF_DRIVERS = frozenset(("i915", "xe"))
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
        if driver not in PF_DRIVERS and driver != "vfio-pci":
            return ("%s is bound to %s; its VFs are created by i915 or xe (bind the PF to one of them)"
                    % (pf.get("address"), driver or "no driver"))
        return None

    def describe(self, func, ctx):
        gpu = empty_gpu_section()
        provisioning = None
        if not func.physfn and func.driver in PF_DRIVERS:
            numvfs = _int_or_none(func, read_text(func, func.real + "/sriov_numvfs", "sriov_numvfs"), "sriov_numvfs")
            provisioning = read_provisioning(func, numvfs or 0)
        gpu["iov"] = {
            "vendor": "intel",
            "product": DEVICES.get(func.device_id),
            "role": "vf" if func.physfn else "pf",
            "vf_count_programmable": None if func.physfn else func.driver in PF_DRIVERS,
            "host_driver": None if func.physfn else func.driver,
            "provisioning": provisioning,
        }
        return {"gpu": gpu, "programming_model": "fixed", "function": None}
