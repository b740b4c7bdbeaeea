# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generic GPU driver: display/3D controllers of GPU vendors other than NVIDIA (AMD, Intel), with
their mdev types (GVT-g and the like) and SR-IOV. NVIDIA specifics live in :mod:`nvidia`. The declaration's
``vgpu`` kind (vGPUs of one type, as mdevs or typed VFs) is the GPU family's.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from collections import Counter

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import (
    HOST_PROGRAM_SETTINGS,
    Driver,
    Kind,
    function_record,
    mdev_units,
    read_mdev,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._naming import discovered_function_trait, pci_resource_class, resource_class

__metaclass__ = type

# Vendors whose display controllers are compute/virtualisation GPUs rather than a server's BMC VGA.
GPU_VENDORS = frozenset(("1002", "8086"))


def empty_gpu_section():
    return {"mdev_types": [], "mdevs": [], "vgpu": None, "vgpu_types": [], "vgpu_vfs": [], "mig": None, "iov": None}


class GpuDriver(Driver):
    name = "gpu"
    family = "gpu"
    programming_model = "fixed"

    vfs_pooled_in_pf = True
    cyborg_profile_classes = {"gpu": "PGPU", "pgpu": "PGPU", "vgpu": "VGPU"}
    pci_vendors = {"amd": "1002", "intel": "8086"}
    ironic_type = "GPU"
    ironic_default = True

    def claims(self, func, ctx=None):
        return func.base_class == "03" and func.vendor_id in GPU_VENDORS

    def provider_specs(self, record, base_traits, function_traits):
        """A whole GPU (PGPU 1), or the vGPUs of its one type: mdevs (available + created), vendor-VFIO VFs that
        carry the type, or a VF of its own with one (VGPU). A single-program card with no type chosen has no
        inventory."""
        addr = record.get("address")
        gpu = record.get("gpu") or {}
        types = gpu.get("mdev_types") or []
        vgpu_vfs = gpu.get("vgpu_vfs") or []
        fn = record.get("function")
        if types or vgpu_vfs or gpu.get("vgpu") is not None or record.get("programming_model") == "single":
            if not fn:
                return [(addr, None, 0, base_traits, "single-program card with no vGPU type chosen: no inventory")]
            fid = fn.get("id")
            if vgpu_vfs:
                total = sum(1 for v in vgpu_vfs if (v.get("current_type") or {}).get("id") == fid)
            elif gpu.get("vgpu") is not None:
                total = 1
            else:
                avail = sum(int(t.get("available_instances") or 0) for t in types if t.get("id") == fid)
                total = avail + sum(1 for u in record.get("units") or []
                                    if u.get("kind") == "mdev" and u.get("type") == fid)
            return [(addr, "VGPU", total, base_traits + function_traits(fn), None)]
        return [(addr, "PGPU", 1, base_traits, None)]

    def describe(self, func, ctx):
        gpu = empty_gpu_section()
        out = {"gpu": gpu, "programming_model": "fixed", "function": None}
        if func.has("mdev_supported_types") or any(len(e) == 36 for e in func.entries()):
            types, mdevs = read_mdev(func, ctx)
            gpu["mdev_types"] = types
            gpu["mdevs"] = mdevs
            out["units"] = mdev_units(func, mdevs)
            if types:
                out["programming_model"] = "single"
            out["function"] = mdev_function(types, mdevs, func)
        return out


def vendor_vfio_drivers():
    """The built-in GPU drivers whose GPUs give vGPUs as SR-IOV VFs typed through the vendor's own sysfs
    (vendor-specific VFIO), in priority order."""
    # the registry is imported here because it imports this file
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import family_drivers  # pylint: disable=import-outside-toplevel
    return [d for d in family_drivers(GpuDriver.family) if d.vendor_vfio_vendor]


def vendor_vfio_driver(vendor_id):
    """The one of :func:`vendor_vfio_drivers` for GPUs of PCI vendor ``vendor_id``, or None."""
    for drv in vendor_vfio_drivers():
        if drv.vendor_vfio_vendor == vendor_id:
            return drv
    return None


def vendor_vfio_names():
    """What messages call the GPUs of :func:`vendor_vfio_drivers` (``NVIDIA``: "an SR-IOV NVIDIA GPU")."""
    return " or ".join(d.vendor_vfio_name for d in vendor_vfio_drivers())


def mdev_function(types, mdevs, func):
    """The function a card runs now: the mdev type of its existing mdevs (the most common one when
    they differ, with a warning), or None when it has none."""
    if not mdevs:
        return None
    counts = Counter(m["type"] for m in mdevs if m["type"])
    if not counts:
        return None
    if len(counts) > 1:
        func.warn("mdevs of several types exist on this device: %s" % ", ".join(sorted(counts)))
    tid = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    name = None
    for t in types:
        if t["id"] == tid:
            name = t["name"]
    return function_record(tid, name, discovered_function_trait(name, tid))


class WholeVfGpuDriver(GpuDriver):
    """A GPU whose SR-IOV VFs are each passed to a guest whole (no vGPU type, no mdev): AMD Instinct under GIM,
    Intel Data Center GPUs. The vendor's family file says which cards (``DEVICES``: device id -> product) and
    what its ``gpu.iov`` holds."""

    DEVICES = {}
    VENDOR = None

    def claims(self, func, ctx=None):
        return func.vendor_id == self.VENDOR and func.device_id in self.DEVICES

    def matches_record(self, record):
        return (record.get("family") == "gpu" and record.get("vendor_id") == self.VENDOR
                and record.get("device_id") in self.DEVICES)

    def owns_sriov_pf(self, pf):
        return pf.get("vendor") == self.VENDOR and pf.get("device") in self.DEVICES

    def provider_specs(self, record, base_traits, function_traits):
        """Nova's own PCI resource class, ``CUSTOM_PCI_<VID>_<PID>``: a PF's VFs by the VF product id (a VF reported
        without its PF: itself), a PF without VFs as one whole GPU."""
        addr = record.get("address")
        sriov = record.get("sriov") or {}
        numvfs = int(sriov.get("numvfs") or 0)
        if record.get("physfn") or numvfs <= 0:
            product, total = record.get("device_id"), 1
        else:
            product, total = sriov.get("vf_device_id") or record.get("device_id"), numvfs
        try:
            rc = pci_resource_class(record.get("vendor_id"), product)
        except ValueError:
            return [(addr, None, 0, base_traits, "no usable PCI ids: no inventory")]
        return [(addr, rc, total, base_traits, None)]


def vgpu_state(card):
    """(type names and ids present on the card, number of vGPUs) for mdev and vendor-VFIO GPUs."""
    gpu = card.get("gpu") or {}
    names, count = set(), 0
    for t in gpu.get("mdev_types") or []:
        if t.get("mdevs"):
            names.update(x for x in (t.get("id"), t.get("name")) if x)
            count += len(t["mdevs"])
    for vf in gpu.get("vgpu_vfs") or []:
        cur = vf.get("current_type")
        if cur:
            names.update(x for x in (cur.get("id"), cur.get("name")) if x)
            count += 1
    return names, count


def same_type(declared, type_id, type_name):
    """Whether a declared vGPU type (an id or a name, any case) is the type ``type_id`` named ``type_name``."""
    d = ("%s" % declared).lower()
    return d == ("%s" % type_id).lower() or (type_name is not None and d == type_name.lower())


def _mdev_parents(a, card, by_addr, problems):
    """(mdev type id, parent addresses, on VFs?) of assignment ``a``, or None when the card is not an mdev GPU."""
    want = (a["module_args"] or {}).get("type")
    types = (card.get("gpu") or {}).get("mdev_types") or []
    if types:
        for t in types:
            if same_type(want, t.get("id"), t.get("name")):
                return t["id"], [card["address"]], False
        problems.append("%s: %s offers no mdev type %r (offered: %s)" % (
            a["function"], a["address"], want, ", ".join(t.get("id", "?") for t in types)))
        return None, [], False
    vfs = [by_addr[x] for x in (card.get("sriov") or {}).get("vfs") or [] if x in by_addr]
    vfs = [vf for vf in vfs if (vf.get("gpu") or {}).get("mdev_types")]
    if not vfs:
        return None
    count = (a["module_args"] or {}).get("count") or 0
    tid, carrying, free = None, [], []
    for vf in sorted(vfs, key=lambda r: r["address"]):
        for t in vf["gpu"]["mdev_types"]:
            if same_type(want, t.get("id"), t.get("name")):
                tid = t["id"]
                (carrying if t.get("mdevs") else free).append(vf["address"])
    if tid is None:
        problems.append("%s: no VF of %s offers mdev type %r" % (a["function"], a["address"], want))
        return None, [], True
    return tid, (carrying + free)[:count], True


def _vendor_vfs(a, card, problems):
    """The VFs that carry (or, by the vgpu module's choice, will carry) the type declared by assignment ``a``."""
    want = a["module_args"]["type"]
    count = a["module_args"]["count"]
    vgpu_vfs = sorted((card.get("gpu") or {}).get("vgpu_vfs") or [], key=lambda v: v["address"])
    if not vgpu_vfs:
        vfs = sorted((card.get("sriov") or {}).get("vfs") or [])
        if not vfs:
            problems.append("%s: the VFs of %s are not enabled yet, so their addresses are unknown: program the card "
                            "(accelops.lifecycle.vgpu) and render again" % (a["function"], a["address"]))
            return []
        vgpu_vfs = [{"address": v, "current_type": None} for v in vfs]
    keep = [v["address"] for v in vgpu_vfs if v.get("current_type")
            and same_type(want, v["current_type"].get("id"), v["current_type"].get("name"))][:count]
    free = [v["address"] for v in vgpu_vfs if not v.get("current_type")]
    chosen = keep + free[:max(0, count - len(keep))]
    if len(chosen) < count:
        problems.append("%s: %s has %d VF(s) for %d vGPU(s) of %s" % (a["function"], a["address"], len(chosen), count, want))
    return sorted(chosen)


class VgpuKind(Kind):
    """vGPUs of one type on a GPU, as mdevs or as typed SR-IOV VFs (``accelops.lifecycle.vgpu``)."""

    name = "vgpu"
    keys = ("type", "count")
    families = ("gpu",)
    module = "accelops.lifecycle.vgpu"
    converge_settings = HOST_PROGRAM_SETTINGS
    provision_keys = ("vgpu_type",)
    provision_id_key = "vgpu_type"
    provision_label = "GPU"

    def validate(self, c, raw):
        v = c.mapping(raw, "vgpu", self.keys)
        return {"type": c.string(v.get("type"), "vgpu.type", required=True,
                                 form="a vGPU type name like 'NVIDIA A40-12Q' or id like nvidia-231"),
                "count": c.integer(v.get("count"), "vgpu.count", minimum=1, required=True)}

    def refusal(self, entry, card):
        gpu = card.get("gpu") or {}
        vendor_vfio = vendor_vfio_driver(card.get("vendor_id")) is not None and (card.get("sriov") or {}).get("totalvfs")
        if not (gpu.get("mdev_types") or gpu.get("vgpu_types") or gpu.get("vgpu_vfs") or vendor_vfio):
            return "offers no vGPU types (no mdev types, not an SR-IOV %s GPU)" % vendor_vfio_names()
        offered = {str(x).lower() for t in (gpu.get("mdev_types") or []) + (gpu.get("vgpu_types") or [])
                   for x in (t.get("id"), t.get("name")) if x}
        if offered and entry["vgpu"]["type"].lower() not in offered:
            return "does not offer vGPU type %r" % entry["vgpu"]["type"]
        return None

    def carries(self, entry, card, by_addr):
        names, count = vgpu_state(card)
        want = entry["vgpu"]["type"]
        return count == entry["vgpu"]["count"] and (want in names or want.lower() in {n.lower() for n in names})

    def module_args(self, entry, address):
        return {"addresses": [address], "type": entry["vgpu"]["type"], "count": entry["vgpu"]["count"]}

    def function_names(self, entry):
        return {entry["vgpu"]["type"]: entry["name"]}

    def units(self, entry, card):
        return entry["vgpu"]["count"]

    def nova_spec(self, assignment, card, by_addr):
        """An mdev GPU (the card, or its VFs, offer ``mdev_supported_types``): Nova's mdev type and its parents; else
        (NVIDIA's vendor-specific VFIO, no mdev) the VFs that carry, or will carry, the type, which Nova assigns as
        PCI devices held by the vendor's host driver."""
        problems = []
        mdev = _mdev_parents(assignment, card, by_addr, problems)
        if mdev is not None:
            tid, addrs, on_vfs = mdev
            return ({"mdev_type": tid, "addresses": addrs, "on_vfs": on_vfs} if tid is not None else None), problems
        return {"addresses": _vendor_vfs(assignment, card, problems), "device_type": "type-VF", "vfs_of": None,
                "product_id": (card.get("sriov") or {}).get("vf_device_id") or card.get("device_id"),
                "resource_class": resource_class("VGPU", assignment["function"]),
                # the VF is held by the NVIDIA host driver: libvirt must not rebind it
                "managed": False}, problems

    def provision_fits(self, record, function_id):
        gpu = record.get("gpu") or {}
        types = [t.get("id") for t in gpu.get("mdev_types") or []]
        for vf in gpu.get("vgpu_vfs") or []:
            types.extend(t.get("id") for t in vf.get("creatable_types") or [])
            types.append((vf.get("current_type") or {}).get("id"))
        return function_id in types

    def provision_action(self, fn, count):
        # one card gives the group's vGPUs
        return {"vgpu_type": fn["id"], "vgpu_count": count}


VGPU_KIND = VgpuKind()
