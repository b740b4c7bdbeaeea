# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""SR-IOV NIC driver: network controllers (class 02) that can create VFs, and their VFs, with
netdev names, MAC addresses and link state from ``<pci>/net/<ifname>/``.

A VF bound to vfio-pci has no netdev on the host; its MAC is then only known to the PF's driver
(netlink), and is reported as null here.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import errno
import os

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Driver, listdir_real
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import (
    errno_text,
    read_attr_real,
    read_attrs_real,
    readlinks_real,
)

__metaclass__ = type

_NETDEV_ATTRS = ("address", "operstate")


def _netdev_index(ctx):
    """PCI address -> its netdev names (sorted), from the links in /sys/class/net, which the kernel makes for every
    netdev (``<name> -> ../../devices/.../<pci address>/net/<name>``): one listing and one readlink per netdev
    instead of a listing of each NIC function's ``net/`` (a host with thousands of VFs). Built once per discovery."""
    idx = ctx.cache.get("nic.netdevs")
    if idx is None:
        idx = ctx.cache["nic.netdevs"] = {}
        base = ctx.sysfs.real("/sys/class/net") + "/"
        names = listdir_real(base)
        for name, target in zip(names, readlinks_real(base, names)):
            if target:
                parts = target.rstrip("/").rsplit("/", 3)
                if len(parts) == 4 and parts[2] == "net" and parts[3] == name:
                    idx.setdefault(parts[1], []).append(name)
    return idx


def _interfaces(func, ctx, attrs):
    """``[{"name", "mac"[, "operstate"]}]`` of the function's netdevs, by name. The names come from the host's netdev
    index when it has the function and each netdev's ``address`` is below the function; else (and on a tree whose
    index does not agree) from a listing of the function's ``net/``."""
    names = _netdev_index(ctx).get(func.address) if ctx is not None else None
    if names:
        out = _read_netdevs(func, names, attrs, True)
        if out is not None:
            return out
    return _read_netdevs(func, listdir_real(func.real + "/net"), attrs, False)


def _read_netdevs(func, names, attrs, indexed):
    out = []
    for name in names:
        values = read_attrs_real(func.real + "/net/" + name + "/", attrs)
        if indexed and values[0][1] == errno.ENOENT:  # not below this function after all
            return None
        netdev = {"name": name}
        for attr, (value, err) in zip(attrs, values):
            if err is not None and err != errno.ENOENT:
                func.warn("net/%s/%s: %s" % (name, attr, errno_text(err)))
            netdev["operstate" if attr == "operstate" else "mac"] = value
        out.append(netdev)
    return out


class SriovNicDriver(Driver):
    name = "nic"
    family = "nic"
    programming_model = "fixed"

    vfs_pooled_in_pf = True
    cyborg_driver_name = "intel_nic_driver"
    pci_vendors = {"intel": "8086", "mellanox": "15b3"}
    ironic_type = "NIC"

    def provider_specs(self, record, base_traits, function_traits):
        """SRIOV_NET_VF: a PF's VFs (a VF reported without its PF: itself)."""
        n = 1 if record.get("physfn") else int((record.get("sriov") or {}).get("numvfs") or 0)
        if n <= 0:
            return [(record.get("address"), None, 0, base_traits, "no VFs created: no inventory")]
        return [(record.get("address"), "SRIOV_NET_VF", n, base_traits, None)]

    def cyborg_driver(self, record):
        # Cyborg's NIC driver reads Intel's devices only
        if record.get("vendor_id") != "8086":
            return None, self.no_cyborg_driver(record)
        return super(SriovNicDriver, self).cyborg_driver(record)

    def claims(self, func, ctx=None):
        if func.base_class != "02":
            return False
        # lexists: an unreadable sriov_totalvfs (a broken link) still makes it an SR-IOV NIC, reported with a warning
        return bool(func.physfn) or os.path.lexists(func.real + "/sriov_totalvfs")

    @staticmethod
    def interfaces(func, ctx=None):
        """The function's netdevs: name, MAC and link state."""
        return _interfaces(func, ctx, _NETDEV_ATTRS)

    @staticmethod
    def folded_interfaces(func, ctx=None):
        """The netdev names and MACs of a folded VF (its link state is not part of the summary: not read)."""
        return _interfaces(func, ctx, _NETDEV_ATTRS[:1])

    def describe_folded_vf(self, func, ctx):
        idx = ctx.cache.get("nic.netdevs")
        names = (_netdev_index(ctx) if idx is None else idx).get(func.address)
        if names is not None and len(names) == 1:  # the usual VF: one netdev (the general case below, same result)
            mac, emac = read_attr_real(func.real + "/net/" + names[0] + "/address")
            if emac is None:
                return {"nic": {"interfaces": [{"name": names[0], "mac": mac}], "mac": mac}}
        ifs = self.folded_interfaces(func, ctx)
        return {"nic": {"interfaces": ifs, "mac": ifs[0]["mac"] if ifs else None}}

    def describe(self, func, ctx):
        ifs = self.interfaces(func, ctx)
        nic = {"interfaces": ifs, "mac": ifs[0]["mac"] if ifs else None}
        return {"nic": nic, "programming_model": "fixed", "function": None}
