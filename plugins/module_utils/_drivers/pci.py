# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generic PCI driver: every function no family driver claims (family ``pci``, fixed function), and the
declaration's ``vfs`` kind, which any family's SR-IOV card can carry.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import (
    DRIVER_NAME_RE,
    HOST_PROGRAM_SETTINGS,
    Driver,
    Kind,
    mdev_units,
    read_mdev,
)

__metaclass__ = type


class PciDriver(Driver):
    name = "pci"
    family = "pci"
    programming_model = "fixed"
    claims_vfs = False

    def claims(self, func, ctx=None):
        return True

    def describe(self, func, ctx):
        out = {}
        if func.has("mdev_supported_types"):
            _types, mdevs = read_mdev(func, ctx)
            out["units"] = mdev_units(func, mdevs)
        return out


class VfsKind(Kind):
    """A PF's SR-IOV VF count, their kernel driver and per-VF settings (``accelops.lifecycle.sriov_vfs``)."""

    name = "vfs"
    keys = ("count", "driver", "vfs")
    module = "accelops.lifecycle.sriov_vfs"
    converge_settings = HOST_PROGRAM_SETTINGS

    def validate(self, c, raw):
        v = c.mapping(raw, "vfs", self.keys)
        drv = c.string(v.get("driver"), "vfs.driver", DRIVER_NAME_RE, "a kernel driver name like vfio-pci")
        per_vf = v.get("vfs")
        if per_vf is not None and not (isinstance(per_vf, list) and all(isinstance(x, dict) for x in per_vf)):
            c.fail("vfs.vfs", "must be a list of mappings (per-VF settings of accelops.lifecycle.sriov_vfs)")
        return {"count": c.integer(v.get("count"), "vfs.count", minimum=1, required=True), "driver": drv,
                "vfs": list(per_vf or [])}

    def refusal(self, entry, card):
        total = (card.get("sriov") or {}).get("totalvfs")
        if not total:
            return "not SR-IOV capable (sriov.totalvfs is 0)"
        if entry["vfs"]["count"] > total:
            return "vfs.count %d is more than its totalvfs %d" % (entry["vfs"]["count"], total)
        return None

    def carries(self, entry, card, by_addr):
        sriov = card.get("sriov") or {}
        if sriov.get("numvfs") != entry["vfs"]["count"]:
            return False
        drv = entry["vfs"]["driver"]
        if drv:
            folded = {u.get("address"): u for u in sriov.get("vf_units") or [] if u.get("kind") == "vf"}
            for a in sriov.get("vfs") or []:
                vf = by_addr.get(a) or folded.get(a) or {}
                if vf.get("driver") != drv:
                    return False
        return True

    def module_args(self, entry, address):
        args = {"address": address, "num_vfs": entry["vfs"]["count"]}
        if entry["vfs"]["driver"]:
            args["vf_driver"] = entry["vfs"]["driver"]
        if entry["vfs"]["vfs"]:
            args["vfs"] = entry["vfs"]["vfs"]
        return args

    def units(self, entry, card):
        return entry["vfs"]["count"]

    def nova_spec(self, assignment, card, by_addr):
        # one device_spec by the PF's address and the VF product id: Nova matches a PF's VFs by their parent address
        fn = assignment["function"]
        sriov = card.get("sriov") or {}
        product = sriov.get("vf_device_id")
        if not product:
            return None, ["%s: %s does not report its VF device id; no device_spec" % (fn, card["address"])]
        addrs = [card["address"]]
        if product == card.get("device_id"):
            # the PF's own ids: a spec by PF address would match the PF too (Nova refuses PF + VFs)
            addrs = sorted(sriov.get("vfs") or [])
            if not addrs:
                return None, ["%s: the VFs of %s share its PCI ids and are not enabled yet: enable them and render again"
                              % (fn, card["address"])]
        return {"addresses": addrs, "product_id": product, "device_type": "type-VF", "vfs_of": card["address"],
                "resource_class": None, "managed": None}, []


VFS_KIND = VfsKind()
