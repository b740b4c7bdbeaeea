# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""AMD Instinct with SR-IOV (MxGPU): the PF held by AMD's GIM host driver (``gim``), its VFs passed whole to
guests (``vfio-pci``). Each VF is one GPU to a guest; there is no vGPU type and no mdev.

GIM enables the VFs itself when it probes the PF, as many as its ``vf_num`` module parameter says (default 1;
AMD supports 1 VF per MI300X and per MI210). Its PCI driver has no ``sriov_configure``, so the kernel answers a
write to ``sriov_numvfs`` with ENOENT: the VF count is not programmable through sysfs, and ``sriov_vfs`` says so
before it writes anything (binding the VFs to vfio-pci still works). Sources: docs/families/amd-instinct.md.

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
}
HOST_DRIVER = "gim"


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
            return ("%s is held by AMD's gim driver, which enables the VFs itself at load (module parameter vf_num) "
                    "and does not take a count through sriov_numvfs (the kernel answers ENOENT); it has %d VF(s), "
                    "%d asked: set vf_num (options gim vf_num=...) and reload gim, or ask for %d"
                    % (pf.get("address"), pf.get("numvfs") or 0, num_vfs, pf.get("numvfs") or 0))
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
        }
        return {"gpu": gpu, "programming_model": "fixed", "function": None}
