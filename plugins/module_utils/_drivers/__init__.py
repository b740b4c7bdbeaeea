# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The driver registry: which family driver handles a PCI function, and the declaration's kinds.

Drivers are asked in priority order; the first whose ``claims()`` is true handles the function.
The generic PCI driver is last and claims everything. A VF is handled by its PF's driver when that
driver says ``claims_vfs``. Adding a vendor means adding one driver module and listing it here.
A declaration kind (:class:`_base.Kind`) lives in the file of the family that owns it and is listed here once.
The tables that Cyborg's, Ironic's and Nova's code need across families (``cyborg_families``, ``pci_vendors``,
``ironic_types``, ...) are built here from the drivers' own attributes.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import MODELS, PASSTHROUGH_KIND, Driver, Kind
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.amd_gpu import AmdInstinctDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.fpga import FPGA_KIND
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.gpu import VGPU_KIND, GpuDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.intel_fpga import IntelFpgaDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.intel_gpu import IntelDataCenterGpuDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nic import SriovNicDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia import MIG_KIND, NvidiaGpuDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.pci import VFS_KIND, PciDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.qat import QatDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.xilinx import XilinxFpgaDriver

from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import FAMILIES

__metaclass__ = type

__all__ = ["FAMILIES", "KIND_NAMES", "MODELS", "Driver", "Kind", "Registry", "cyborg_families", "cyborg_profile_families",
           "default_drivers", "family_drivers", "for_record", "ironic_default_families", "ironic_types", "kind", "kinds",
           "pci_vendors", "for_sriov_pf"]


def default_drivers():
    """A fresh list of the built-in drivers in priority order (generic PCI last)."""
    return [IntelFpgaDriver(), XilinxFpgaDriver(), QatDriver(), NvidiaGpuDriver(),
            AmdInstinctDriver(),
            IntelDataCenterGpuDriver(),
            GpuDriver(), SriovNicDriver(), PciDriver()]


_BUILT_IN = default_drivers()


# The declaration's kinds, one line each, in the order its messages list them. A kind's engine is imported by name
# in its program(), so that a module that only reads declarations does not ship it.
_KINDS = (
    ("fpga", FPGA_KIND),
    ("vgpu", VGPU_KIND),
    ("vfs", VFS_KIND),
    ("mig", MIG_KIND),
    ("passthrough", PASSTHROUGH_KIND),
)
KIND_NAMES = tuple(name for name, _kind in _KINDS)
_KIND_BY_NAME = dict(_KINDS)


def kind(name):
    """The declaration kind ``name`` (a :class:`Kind`); KeyError for a name that is not one."""
    return _KIND_BY_NAME[name]


def kinds():
    """Every declaration kind, in :data:`KIND_NAMES` order."""
    return [kind(name) for name in KIND_NAMES]


def family_drivers(family):
    """The built-in drivers of a family, in priority order (a family engine asks them for what differs)."""
    return [drv for drv in _BUILT_IN if drv.family == family]


def _families():
    """The families of the built-in drivers, in priority order."""
    out = []
    for drv in _BUILT_IN:
        if drv.family not in out:
            out.append(drv.family)
    return out


def cyborg_families():
    """The families Cyborg has a driver for (one of their drivers names it: ``cyborg_driver_name``)."""
    return tuple(f for f in _families() if any(d.cyborg_driver_name for d in family_drivers(f)))


def cyborg_profile_families():
    """``{word: driver}``: the words a device profile's friendly ``family`` takes and the driver whose family they ask
    for (its ``cyborg_profile_classes`` hold the resource class)."""
    out = {}
    for drv in _BUILT_IN:
        for word in drv.cyborg_profile_classes:
            out.setdefault(word, drv)
    return out


def pci_vendors():
    """``{name: PCI vendor id}``: the vendors of the built-in drivers' cards (their ``pci_vendors``)."""
    out = {}
    for drv in _BUILT_IN:
        out.update(drv.pci_vendors)
    return out


def ironic_types():
    """``{family: Ironic accelerator type}`` (the family's ``ironic_type``), those listed by default first."""
    first = dict((f, family_drivers(f)[0]) for f in FAMILIES)
    order = [f for f in FAMILIES if first[f].ironic_default] + [f for f in FAMILIES if not first[f].ironic_default]
    return dict((f, first[f].ironic_type) for f in order)


def ironic_default_families():
    """The families a bare-metal node's accelerators list when none are chosen (the families' ``ironic_default``)."""
    return tuple(f for f in FAMILIES if family_drivers(f)[0].ironic_default)


def for_record(record):
    """The built-in driver whose family rules (Placement, Cyborg, ...) apply to a discovery record: the one that
    made it (``handler``) when it is of the record's family, else the first whose ``matches_record`` says the
    record is its own, else the first of the record's family, else generic PCI."""
    family = record.get("family")
    handler = record.get("handler")
    same_family = [drv for drv in _BUILT_IN if drv.family == family]
    for drv in same_family:
        if drv.name == handler:
            return drv
    for drv in same_family:
        if drv.matches_record(record):
            return drv
    return same_family[0] if same_family else _BUILT_IN[-1]


def for_sriov_pf(pf):
    """The built-in driver whose SR-IOV rules (``vf_count_refusal``) apply to a PF as ``_engines.sriov.read_pf``
    reads it; generic PCI (the kernel's own rule) when no family claims it."""
    for drv in _BUILT_IN:
        if drv.owns_sriov_pf(pf):
            return drv
    return _BUILT_IN[-1]


class Registry(object):
    """Chooses the driver for each PCI function of a scan (results cached per address)."""

    def __init__(self, drivers=None):
        self.drivers = list(drivers) if drivers is not None else default_drivers()
        self._claims = {}

    def register(self, driver, first=True):
        """Add a driver; by default it is asked before the built-in ones (never after generic PCI)."""
        if first:
            self.drivers.insert(0, driver)
        else:
            self.drivers.insert(max(0, len(self.drivers) - 1), driver)
        self._claims = {}

    def generic(self):
        """The generic driver (the last of family ``pci``): it describes a function that another driver reports
        inside a record of its own (``is_secondary``) when that function gets a record too."""
        for d in reversed(self.drivers):
            if d.family == "pci":
                return d
        return PciDriver()

    def by_name(self, name):
        for d in self.drivers:
            if d.name == name:
                return d
        return None

    def claim(self, func, scan=None, ctx=None):
        """The driver for func."""
        d = self._claims.get(func.address)
        if d is not None:
            return d
        if func.physfn and scan is not None:
            pf = scan.get(func.physfn)
            if pf is not None and pf is not func:
                pd = self.claim(pf, scan, ctx)
                if pd.claims_vfs and pd.family != "pci":
                    self._claims[func.address] = pd
                    return pd
        for drv in self.drivers:
            try:
                ok = drv.claims(func, ctx)
            except Exception as e:  # a driver bug must not stop discovery of other devices
                func.warn("driver %s failed to inspect this function: %s" % (drv.name, e))
                ok = False
            if ok:
                self._claims[func.address] = drv
                return drv
        raise LookupError("no driver claims %s" % func.address)
