# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The per-family provider mapping: what Placement providers (resource class, total, traits) one discovery
record of each device family becomes. Every family-specific rule of the Placement side is in this file (and
only here), so that a family can later take its part with it."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import OWNER_TRAIT, safe_trait


def _function_traits(rec, fn, function_names):
    """The traits of a loaded function: the discovery's own trait (made valid), and the friendly
    ``CUSTOM_FUNCTION_<NAME>`` when the declaration names the function id."""
    if not fn:
        return []
    out = []
    fid = fn.get("id")
    vendor = ((rec.get("fpga") or {}).get("vendor") or rec.get("vendor_id") or "")
    if fn.get("trait"):
        out.append(safe_trait(fn["trait"]))
    elif fid and rec.get("family") == "fpga":
        out.append(_naming.fpga_function_trait(vendor, fid))
    elif _naming.discovered_function_trait(fn.get("name"), fid):
        out.append(_naming.discovered_function_trait(fn.get("name"), fid))
    friendly = None
    if function_names:
        for key in (fid, fn.get("name")):
            if key is not None and str(key) in function_names:
                friendly = function_names[str(key)]
                break
    if friendly:
        out.append(_naming.function_trait(friendly))
    return out


def _common_traits(rec):
    t = [OWNER_TRAIT]
    fam = rec.get("family")
    if fam:
        t.append(_naming.family_trait(fam))
    vid, did = rec.get("vendor_id"), rec.get("device_id")
    if vid:
        t.append(_naming.trait("VENDOR", vid))
        if did:
            t.append(_naming.trait("PRODUCT", vid, did))
    if rec.get("programming_model"):
        t.append(_naming.programming_model_trait(rec["programming_model"]))
    numa = rec.get("numa_node")
    if isinstance(numa, int) and numa >= 0:
        t.append(_naming.trait("NUMA_NODE", str(numa)))
    fpga = rec.get("fpga") or {}
    if fam == "fpga" and fpga.get("vendor"):
        t.append(_naming.trait("FPGA", fpga["vendor"]))  # Cyborg's CUSTOM_FPGA_INTEL / CUSTOM_FPGA_XILINX
    return t


def _units_of_type(rec, kind, utype=None):
    return [u for u in rec.get("units") or [] if u.get("kind") == kind and (utype is None or u.get("type") == utype)]


def _device_specs(rec, addresses, function_names):
    """[(address, resource_class or None, total, traits, note)] for one discovery record."""
    fam = rec.get("family")
    addr = rec.get("address")
    physfn = rec.get("physfn")
    model = rec.get("programming_model")
    fn = rec.get("function")
    sriov = rec.get("sriov") or {}
    base = _common_traits(rec)
    ftraits = _function_traits(rec, fn, function_names)
    if fam in ("nic", "qat", "gpu") and physfn and physfn in addresses:
        return []  # a VF of a PF that is itself reported: the PF's provider is the pool
    if fam == "gpu":
        gpu = rec.get("gpu") or {}
        types = gpu.get("mdev_types") or []
        vgpu_vfs = gpu.get("vgpu_vfs") or []
        if types or vgpu_vfs or (gpu.get("vgpu") is not None) or model == "single":
            if not fn:
                return [(addr, None, 0, base, "single-program card with no vGPU type chosen: no inventory")]
            fid = fn.get("id")
            if vgpu_vfs:
                total = sum(1 for v in vgpu_vfs if (v.get("current_type") or {}).get("id") == fid)
            elif gpu.get("vgpu") is not None:
                total = 1
            else:
                avail = sum(int(t.get("available_instances") or 0) for t in types if t.get("id") == fid)
                total = avail + len(_units_of_type(rec, "mdev", fid))
            return [(addr, "VGPU", total, base + ftraits, None)]
        return [(addr, "PGPU", 1, base, None)]
    if fam == "fpga":
        fpga = rec.get("fpga") or {}
        regions = fpga.get("regions") or []
        ports = fpga.get("ports") or []
        if model == "dynamic":
            # each partial-reconfiguration region is schedulable on its own, programmed or not
            if len(regions) <= 1:
                rtraits = [safe_trait(r["trait"]) for r in regions if r.get("trait")]
                return [(addr, "FPGA", 1, base + rtraits + ftraits, None)]
            out = []
            for i, r in enumerate(regions):
                rfn = None
                if i < len(ports) and ports[i].get("afu_id"):
                    rfn = {"id": ports[i]["afu_id"]}
                rt = [safe_trait(r["trait"])] if r.get("trait") else []
                out.append(("%s_%s" % (addr, _naming.normalize(r.get("id") or str(i)).lower()), "FPGA", 1,
                            base + rt + _function_traits(rec, rfn, function_names), None))
            return out
        rtraits = [safe_trait(r["trait"]) for r in regions if r.get("trait")]
        if not fn:
            return [(addr, None, 0, base + rtraits, "single-program card with no function loaded: no inventory")]
        slots = fpga.get("slots") or 1
        return [(addr, "FPGA", int(slots), base + rtraits + ftraits, None)]
    if fam == "nic":
        n = int(sriov.get("numvfs") or 0)
        if physfn:
            n = 1
        if n <= 0:
            return [(addr, None, 0, base, "no VFs created: no inventory")]
        return [(addr, "SRIOV_NET_VF", n, base, None)]
    if fam == "qat":
        if model == "single" and not fn:
            return [(addr, None, 0, base, "no services configured: no inventory")]
        n = int(sriov.get("numvfs") or 0) if not physfn else 1
        return [(addr, "CUSTOM_QAT", n if n > 0 else 1, base + ftraits, None)]
    # generic passthrough: Nova's own class form
    try:
        rc = _naming.pci_resource_class(rec.get("vendor_id"), rec.get("device_id"))
    except ValueError:
        return [(addr, None, 0, base, "no usable PCI ids: no inventory")]
    return [(addr, rc, 1, base, None)]
