# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""AMD Instinct with SR-IOV (MxGPU): the PF held by AMD's GIM host driver (``gim``), its VFs passed whole to
guests (``vfio-pci``). Each VF is one GPU to a guest; there is no vGPU type and no mdev.

GIM enables the VFs itself when it probes the PF, as many as its ``vf_num`` module parameter gives that GPU (one
value per GPU, default 1). How many a model offers is GIM's (since GIM 8.5: MI300X 1 or 8, 8 in CPX mode; MI355X 1,
2 or 8; MI210 1). Its PCI driver has no ``sriov_configure``, so the kernel answers a write of a new count to
``sriov_numvfs`` with ENOENT: the VF count is not programmable through sysfs, and ``sriov_vfs`` says so before it
writes anything (binding the VFs to vfio-pci still works). Sources: docs/families/amd-instinct.md.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.gpu import WholeVfGpuDriver, empty_gpu_section

__metaclass__ = type

# device id -> (product, pf or vf). PFs and VFs from GIM's marketing-name table (libgv/core/amdgv_marketing_name.c)
# and pci.ids; 7410 is Aldebaran's VF id (amdgpu's pciidlist lists it beside the MI200 PFs, GIM's amd-smi lists
# it as the MI200-series device a guest sees).
DEVICES = {
    "740f": ("Instinct MI210", "pf"),
    "7410": ("Instinct MI210 VF", "vf"),
    "74a1": ("Instinct MI300X", "pf"),
    "74b5": ("Instinct MI300X VF", "vf"),
    "74a5": ("Instinct MI325X", "pf"),
    "74b9": ("Instinct MI325X VF", "vf"),
    "74a9": ("Instinct MI300X HF", "pf"),
    "74bd": ("Instinct MI300X HF VF", "vf"),
    "74a2": ("Instinct MI308X", "pf"),
    "74b6": ("Instinct MI308X VF", "vf"),
    "74a8": ("Instinct MI308X HF", "pf"),
    "74bc": ("Instinct MI308X HF VF", "vf"),
    "7408": ("Instinct MI250X", "pf"),
    "740c": ("Instinct MI250X/MI250", "pf"),
    "75a0": ("Instinct MI350X", "pf"),
    "75b0": ("Instinct MI350X VF", "vf"),
    "75a3": ("Instinct MI355X", "pf"),
    "75b3": ("Instinct MI355X VF", "vf"),
}
# PF device id -> (the VF counts GIM offers on the model, when a count needs a mode), from GIM's README (8.5+);
# a model not listed: not published.
VF_COUNTS = {
    "740f": ((1,), None),
    "74a1": ((1, 8), "8 in CPX compute partition mode"),
    "75a3": ((1, 2, 8), None),
}
HOST_DRIVER = "gim"


def _or(counts):
    """``1, 2 or 8``."""
    words = ["%d" % c for c in counts]
    return words[0] if len(words) == 1 else "%s or %s" % (", ".join(words[:-1]), words[-1])


class AmdInstinctDriver(WholeVfGpuDriver):
    name = "amd_gpu"
    family = "gpu"
    programming_model = "fixed"
    VENDOR = "1002"
    DEVICES = DEVICES

    def claims(self, func, ctx=None):
        return super(AmdInstinctDriver, self).claims(func, ctx) or (
            func.driver == HOST_DRIVER and func.vendor_id == self.VENDOR)

    def vf_count_refusal(self, pf, num_vfs):
        driver = pf.get("driver")
        if driver == HOST_DRIVER:
            have = pf.get("numvfs") or 0
            product = DEVICES.get(pf.get("device"), ("an AMD GPU", None))[0]
            counts, mode = VF_COUNTS.get(pf.get("device"), (None, None))
            if counts is None:
                offered = "the counts GIM offers on %s are not published" % product
            else:
                offered = "GIM offers %s VF(s) on %s%s" % (_or(counts), product, " (%s)" % mode if mode else "")
                if num_vfs not in counts and num_vfs != 0:
                    offered += ", not %d" % num_vfs
            return ("%s is held by AMD's gim driver, which enables the VFs itself when it probes the GPU (vf_num, one "
                    "value per GPU) and takes no count through sriov_numvfs (the kernel answers ENOENT); it has %d "
                    "VF(s), %d asked; %s: set this GPU's vf_num (options gim vf_num=...) and reload gim, or ask for %d"
                    % (pf.get("address"), have, num_vfs, offered, have))
        if driver != "vfio-pci":
            return ("%s is bound to %s, which does not create VFs on an AMD Instinct GPU; load AMD's gim host driver "
                    "(it enables the VFs, vf_num of them)" % (pf.get("address"), driver or "no driver"))
        return None

    def describe(self, func, ctx):
        product = DEVICES.get(func.device_id, (None, None))[0]
        gpu = empty_gpu_section()
        gpu["iov"] = {
            "vendor": "amd",
            "product": product,
            "role": "vf" if func.physfn else "pf",
            # the VF count is GIM's vf_num at load, not sriov_numvfs
            "vf_count_programmable": None if func.physfn else False,
            "host_driver": None if func.physfn else func.driver,
            "provisioning": None,
            "sriov_drivers": [HOST_DRIVER],
            "vf_drivers": ["vfio-pci"],
            "limit": None if func.physfn or func.driver == HOST_DRIVER else
            "%s does not create VFs on an AMD Instinct GPU; GIM does" % (func.driver or "no driver"),
            # the VF counts GIM offers on this model (None: not published), and the mode a count needs
            "vf_counts": None if func.physfn else list(VF_COUNTS.get(func.device_id, (None, None))[0] or []) or None,
            "vf_counts_mode": None if func.physfn else VF_COUNTS.get(func.device_id, (None, None))[1],
        }
        return {"gpu": gpu, "programming_model": "fixed", "function": None}
