# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Malformed trees, continued: symlink loops, enormous and non-UTF-8 files below a device, unreadable
sub-directories, and a VF vanishing while its PF's record is being built with vf_detail summary. Each gives a
warning on the device concerned (or the host when no device can be named), never a traceback."""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import Registry
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs


def _disc(host, **kw):
    kw.setdefault("nvidia_smi", "never")
    return discover(Sysfs(host.root), **kw)


def _recs(res):
    return dict((r["address"], r) for r in res["accelerators"])


def _loop(host, path):
    """Make ``path`` a symlink loop (a link to itself): every open or stat of it fails with ELOOP."""
    p = host.path(path)
    if os.path.islink(p) or os.path.isfile(p):
        os.unlink(p)
    elif os.path.isdir(p):
        shutil.rmtree(p)
    os.symlink(os.path.basename(p), p)


def test_bus_link_loop_is_a_host_warning(host):
    host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="nvidia", iommu_group=7)
    host.add_pci("0000:5e:00.0", "10de", "1eb8", "030200", driver="nvidia", iommu_group=8)
    _loop(host, "/sys/bus/pci/devices/0000:5e:00.0")
    res = _disc(host)
    assert [r["address"] for r in res["accelerators"]] == ["0000:3b:00.0"]
    assert any(w.startswith("0000:5e:00.0:") for w in res["warnings"]), res["warnings"]


@pytest.mark.parametrize("attr,needle", [
    ("numa_node", "numa_node:"),
    ("uevent", None),          # falls back to the single attributes, which are fine
    ("sriov_totalvfs", "sriov_totalvfs:"),
])
def test_attribute_that_is_a_symlink_loop(host, attr, needle):
    d = host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", iommu_group=7, sriov_totalvfs=8)
    _loop(host, d + "/" + attr)
    rec = _recs(_disc(host))["0000:d8:00.0"]
    if needle:
        assert any(w.startswith(needle) and "symbolic links" in w for w in rec["warnings"]), rec["warnings"]
    assert rec["vendor_id"] == "8086" and rec["family"] == "nic"


def test_subdirectories_that_are_symlink_loops(host):
    d = host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="nvidia", iommu_group=7)
    host.add_mdev_type("0000:3b:00.0", "nvidia-231", "GRID T4-2Q", available=4)
    _loop(host, d + "/mdev_supported_types/nvidia-231/devices")
    _loop(host, d + "/nvidia")
    n = host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", iommu_group=8, sriov_totalvfs=8)
    _loop(host, n + "/net")
    f = host.add_pci("0000:86:00.0", "8086", "0b2b", "120000", driver="dfl-pci", iommu_group=9)
    host.mkdir(f + "/fpga_region/region0/dfl-port.0")
    host.write(f + "/fpga_region/region0/dfl-port.0/afu_id", "9aeffe5f84570612c72e0d8d4a6a2bc6\n")
    os.symlink("../..", host.path(f + "/fpga_region/region0/dfl-port.0/up"))  # a cycle back up the tree
    res = _disc(host)
    recs = _recs(res)
    g = recs["0000:3b:00.0"]
    assert g["gpu"]["mdev_types"][0]["mdevs"] == [] and g["gpu"]["vgpu"] is None
    assert recs["0000:d8:00.0"]["nic"] == {"interfaces": [], "mac": None}
    fp = recs["0000:86:00.0"]
    assert fp["fpga"]["ports"] == [{"id": "dfl-port.0", "afu_id": "9aeffe5f84570612c72e0d8d4a6a2bc6", "healthy": True}]
    assert res["warnings"] == []


def test_link_loops_where_a_link_target_is_read(host):
    d = host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="nvidia", iommu_group=7)
    _loop(host, d + "/iommu_group")
    _loop(host, d + "/driver")
    rec = _recs(_disc(host, include_all=True))["0000:3b:00.0"]
    # readlink of a loop gives its own name: not a group number (a warning); "driver" is not a driver
    assert rec["iommu_group"] is None
    assert any(w.startswith("iommu_group: unexpected link target") for w in rec["warnings"])


def test_enormous_and_non_utf8_files_below_a_device(host):
    d = host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="nvidia", iommu_group=7)
    host.add_mdev_type("0000:3b:00.0", "nvidia-231", "GRID T4-2Q", available=4)
    host.write(d + "/mdev_supported_types/nvidia-231/description", "x" * (64 << 20))  # 64 MiB
    host.write(d + "/mdev_supported_types/nvidia-231/name", b"GRID \xff\xfe\n")
    host.write(d + "/uevent", "PCI_ID=10DE:1EB8\n" + "X=" + "y" * (1 << 20))  # over a page: attributes instead
    n = host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", iommu_group=8, sriov_totalvfs=8)
    host.add_netdev("0000:d8:00.0", "enp216s0f0", "3c:fd:fe:a1:b2:c0")
    host.write(n + "/net/enp216s0f0/address", b"\x80\x81\n")
    res = _disc(host)
    recs = _recs(res)
    g = recs["0000:3b:00.0"]
    t = g["gpu"]["mdev_types"][0]
    assert t["description"] is None and t["name"] is None
    w = "\n".join(g["warnings"])
    assert "mdev_supported_types/nvidia-231/description: longer than" in w
    assert "mdev_supported_types/nvidia-231/name: not UTF-8 text" in w
    assert g["vendor_id"] == "10de" and g["class_id"] == "030200"  # read from the single attributes
    nic = recs["0000:d8:00.0"]
    assert nic["nic"]["mac"] is None
    assert any(x.startswith("net/enp216s0f0/address: not UTF-8") for x in nic["warnings"])


def test_enormous_domain_xml_is_a_host_warning(host):
    host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="vfio-pci", iommu_group=7)
    host.add_domain("instance-1", hostdevs=["0000:3b:00.0"])
    host.write("/run/libvirt/qemu/huge.xml", "<domain>" + " " * (17 << 20) + "</domain>")
    res = _disc(host)
    assert _recs(res)["0000:3b:00.0"]["units"][0]["in_use"]
    assert any("huge.xml" in w for w in res["warnings"]), res["warnings"]


def test_vf_vanishing_mid_scan_with_summary(host):
    host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", iommu_group=7, sriov_totalvfs=8)
    for i in range(3):
        host.add_pci("0000:d8:02.%d" % i, "8086", "154c", "020000", driver="iavf", iommu_group=20 + i,
                     physfn="0000:d8:00.0")
    reg = Registry()
    drv = reg.by_name("nic")
    orig = drv.describe_folded_vf  # what a folded VF is described by

    def vanish(func, ctx):
        if func.address == "0000:d8:02.1":
            shutil.rmtree(os.path.realpath(func.real))
        return orig(func, ctx)
    drv.describe_folded_vf = vanish
    res = _disc(host, registry=reg, vf_detail="summary")
    pf = _recs(res)["0000:d8:00.0"]
    assert [u["address"] for u in pf["sriov"]["vf_units"]] == ["0000:d8:02.0", "0000:d8:02.1", "0000:d8:02.2"]
    assert any(w.startswith("VF 0000:d8:02.1: the device went away") for w in pf["warnings"]), pf["warnings"]
