# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The PCI layer: one-pass scan, identity, SR-IOV links, pci.ids lookups."""

from __future__ import annotations

import os

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _pci
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

PCI_IDS = """\
# comment line
#\tnot a device
10de  NVIDIA Corporation
\t1eb8  TU104GL [Tesla T4]
\t\t10de 12a2  Tesla T4 16GB
\t\t10de 12a3  Other T4
\t26b5  AD102GL [L40]
# a comment inside a vendor block
\t26b9  AD102GL [L40S]
10ee  Xilinx Corporation
\t5005  Alveo U250
8086  Intel Corporation
\t0b2b  PAC D5005
\t1572  Ethernet Controller X710 for 10GbE SFP+
\t\t8086 0007  Ethernet Converged Network Adapter X710-2
\t154c  Ethernet Virtual Function 700 Series
C 02  Network controller
\t00  Ethernet controller
C 03  Display controller
\t00  VGA compatible controller
\t02  3D controller
C 12  Processing accelerators
"""


@pytest.fixture
def ids(tmp_path):
    p = tmp_path / "pci.ids"
    p.write_text(PCI_IDS)
    return _pci.PciIds(str(p))


def test_pci_ids_lookups(ids):
    assert ids.vendor("10de") == "NVIDIA Corporation"
    assert ids.device("10de", "1eb8") == "TU104GL [Tesla T4]"
    assert ids.device("10de", "26b9") == "AD102GL [L40S]"  # after a comment in the block
    assert ids.device("10de", "5005") is None  # belongs to another vendor
    assert ids.device("10ee", "5005") == "Alveo U250"
    assert ids.subsystem("10de", "1eb8", "10de", "12a2") == "Tesla T4 16GB"
    assert ids.subsystem("10de", "1eb8", "10de", "12a3") == "Other T4"
    assert ids.subsystem("10de", "26b5", "10de", "12a2") is None  # not a subsystem of that device
    assert ids.subsystem("8086", "1572", "8086", "0007") == "Ethernet Converged Network Adapter X710-2"
    assert ids.class_name("030200") == "3D controller"
    assert ids.class_name("120000") == "Processing accelerators"  # no sub-class line: the base class
    assert ids.class_name("ff0000") is None
    assert ids.vendor("abcd") is None
    assert ids.vendor(None) is None


def test_pci_ids_missing_file(tmp_path):
    ids = _pci.PciIds(str(tmp_path / "none"))
    assert ids.vendor("10de") is None
    assert "cannot read" in ids.error


def test_pci_ids_real_file_if_present():
    path = _pci.find_pci_ids(Sysfs("/"))
    if path is None:
        pytest.skip("no pci.ids on this machine")
    ids = _pci.PciIds(path)
    assert ids.vendor("8086") == "Intel Corporation"
    assert ids.vendor("10de") == "NVIDIA Corporation"


def test_find_pci_ids_prefers_root(tmp_path, host):
    host.write("/usr/share/hwdata/pci.ids", PCI_IDS)
    assert _pci.find_pci_ids(Sysfs(host.root)) == host.path("/usr/share/hwdata/pci.ids")
    assert _pci.find_pci_ids(Sysfs(host.root), str(tmp_path / "nope")) is None


@pytest.mark.parametrize("raw,expected", [
    ("0000:3b:00.0", "0000:3b:00.0"),
    ("3B:00.7", "0000:3b:00.7"),
    ("00000000:3B:00.0", "0000:3b:00.0"),
    ("0000:3b:00.8", None),
    ("3b:00", None),
    ("", None),
    (None, None),
])
def test_pci_address_is_the_one_normal_form(raw, expected):
    assert pci_address(raw) == expected


def test_scan_and_identity(host):
    host.add_pci("0000:3b:00.0", "8086", "1572", "020000", revision="02", subsystem=("8086", "0007"),
                 driver="i40e", numa_node=1, local_cpulist="20-39", iommu_group=71,
                 link=("8.0 GT/s PCIe", 8, "8.0 GT/s PCIe", 8), sriov_totalvfs=64, sriov_vf_device="154c")
    host.add_pci("0000:3b:02.0", "8086", "154c", "020000", driver="iavf", iommu_group=80, physfn="0000:3b:00.0")
    host.add_pci("0000:3b:02.1", "8086", "154c", "020000", driver="vfio-pci", iommu_group=81,
                 physfn="0000:3b:00.0", driver_override="vfio-pci")
    host.add_pci("0000:00:00.0", "8086", "2020", "060000")  # no driver, no group, no link
    scan = _pci.scan(Sysfs(host.root))
    assert list(scan.functions) == ["0000:00:00.0", "0000:3b:00.0", "0000:3b:02.0", "0000:3b:02.1"]
    pf = scan.get("0000:3b:00.0")
    assert (pf.vendor_id, pf.device_id, pf.class_id, pf.driver, pf.iommu_group) == ("8086", "1572", "020000", "i40e", 71)
    ident = pf.identity()
    assert ident["subsystem_vendor_id"] == "8086" and ident["subsystem_device_id"] == "0007"
    assert ident["revision"] == "02"
    assert ident["numa_node"] == 1 and ident["local_cpulist"] == "20-39"
    assert ident["link"] == {"speed": "8.0 GT/s PCIe", "width": 8, "max_speed": "8.0 GT/s PCIe", "max_width": 8}
    assert ident["sriov"] == {"totalvfs": 64, "numvfs": 2, "vf_device_id": "154c",
                              "vfs": ["0000:3b:02.0", "0000:3b:02.1"]}
    vf = scan.get("0000:3b:02.1")
    assert vf.physfn == "0000:3b:00.0"
    assert vf.identity()["driver_override"] == "vfio-pci"
    assert scan.vf_index(vf) == 1
    bare = scan.get("0000:00:00.0").identity()
    assert bare["driver"] is None and bare["iommu_group"] is None and bare["numa_node"] is None
    assert bare["link"] is None and bare["sriov"]["totalvfs"] == 0
    assert scan.group_members(71) == ["0000:3b:00.0"]
    assert all(not f.warnings for f in scan.functions.values())


def test_scan_does_not_need_uevent(host):
    d = host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", subsystem=("10de", "12a2"), driver="nvidia")
    os.unlink(host.path(d + "/uevent"))
    f = _pci.scan(Sysfs(host.root)).get("0000:3b:00.0")
    assert (f.vendor_id, f.device_id, f.class_id, f.driver) == ("10de", "1eb8", "030200", "nvidia")
    assert f.identity()["subsystem_device_id"] == "12a2"
    assert not f.warnings


def _many_bound(host):
    """A PF with 40 VFs (iavf, two of them vfio-pci), a bridge with no driver: 42 functions, 3 drivers."""
    host.add_pci("0000:3b:00.0", "8086", "1572", "020000", driver="i40e", iommu_group=1, sriov_totalvfs=64)
    for n in range(40):
        host.add_pci("0000:3b:%02x.%d" % (2 + n // 8, n % 8), "8086", "154c", "020000",
                     driver="vfio-pci" if n in (3, 7) else "iavf", iommu_group=10 + n, physfn="0000:3b:00.0")
    host.add_pci("0000:00:00.0", "8086", "2020", "060000")


def _drivers(root):
    return dict((a, f.driver) for a, f in _pci.scan(Sysfs(root)).functions.items())


def test_drivers_from_the_drivers_directories_on_a_large_host(host, monkeypatch):
    _many_bound(host)
    assert _pci._LIST_DRIVERS_FACTOR * (len(os.listdir(host.path("/sys/bus/pci/drivers"))) + 1) <= 42  # listed
    want = _drivers(host.root)
    assert want["0000:3b:00.0"] == "i40e" and want["0000:3b:02.3"] == "vfio-pci" and want["0000:00:00.0"] is None
    # the same answers from the links alone (listing never pays), and the listing is what was read: a device
    # directory's driver link removed is still answered from the driver's directory
    monkeypatch.setattr(_pci, "_LIST_DRIVERS_FACTOR", 10 ** 6)
    assert _drivers(host.root) == want
    monkeypatch.undo()
    d = host.dev("0000:3b:02.0")
    os.unlink(host.path(d + "/driver"))
    assert _drivers(host.root)["0000:3b:02.0"] == "iavf"
    # a function listed under two drivers (a tree that is not the kernel's): its own link decides
    os.symlink("../../../bus/pci/drivers/iavf", host.path(d + "/driver"))
    os.symlink(host.path(d), host.path("/sys/bus/pci/drivers/vfio-pci/0000:3b:02.0"))
    assert _drivers(host.root)["0000:3b:02.0"] == "iavf"
    os.unlink(host.path(d + "/driver"))
    assert _drivers(host.root)["0000:3b:02.0"] is None


def test_drivers_from_the_links_on_a_small_host(host):
    # few functions per driver: each function's driver link is read, and it is what counts
    host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="nvidia")
    d = host.dev("0000:3b:00.0")
    os.unlink(host.path(d + "/driver"))
    os.symlink("../../../bus/pci/drivers/vfio-pci", host.path(d + "/driver"))
    assert _drivers(host.root) == {"0000:3b:00.0": "vfio-pci"}


def test_pci_ids_read_whole_and_classes_from_the_end(tmp_path):
    # a file larger than a few reads is read whole (one read of its size); a "C xx" line is found from the end
    p = tmp_path / "pci.ids"
    p.write_text("# " + "x" * 300000 + "\n" + PCI_IDS)
    ids = _pci.PciIds(str(p))
    assert ids.vendor("8086") == "Intel Corporation" and ids.class_name("020000") == "Ethernet controller"
    assert ids.class_name("0300") == "VGA compatible controller" and ids.class_name("1200") == "Processing accelerators"


def test_scan_without_pci_bus(tmp_path):
    scan = _pci.scan(Sysfs(str(tmp_path)))
    assert scan.functions == {}
    assert "does not exist" in scan.warnings[0]


def test_local_cpulist_is_read_once_per_numa_node_and_bus(host):
    """The kernel prints the CPUs of a function's NUMA node (or, without CONFIG_NUMA, of its bus): functions
    that share both share the list, so identity() reads it once for them and again for another node or bus."""
    host.add_pci("0000:3b:00.0", "8086", "1572", "020000", numa_node=0, local_cpulist="0-15")
    second = host.add_pci("0000:3b:00.1", "8086", "1572", "020000", numa_node=0, local_cpulist="0-15")
    host.add_pci("0000:3b:00.2", "8086", "1572", "020000", numa_node=1, local_cpulist="16-31")
    host.add_pci("0000:5e:00.0", "8086", "1572", "020000", numa_node=0, local_cpulist="0-7")
    # the second function's own file is gone: it is not read (its node and bus were seen)
    os.remove(host.path(second + "/local_cpulist"))
    scan = _pci.scan(Sysfs(host.root))
    cpus = dict((a, scan.get(a).identity()["local_cpulist"]) for a in scan.functions)
    assert cpus == {"0000:3b:00.0": "0-15", "0000:3b:00.1": "0-15", "0000:3b:00.2": "16-31", "0000:5e:00.0": "0-7"}
    assert scan.get("0000:3b:00.1").warnings == []


def test_vf_identity_does_not_read_sriov_attributes(host):
    """The kernel shows sriov_* only on a physical function: a VF's identity reports no SR-IOV capability
    and does not read those files, even where a tree has them."""
    host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", sriov_totalvfs=4)
    vf = host.add_pci("0000:d8:02.0", "8086", "154c", "020000", driver="iavf", physfn="0000:d8:00.0")
    host.write(vf + "/sriov_totalvfs", "8\n")
    scan = _pci.scan(Sysfs(host.root))
    ident = scan.get("0000:d8:02.0").identity()
    assert ident["physfn"] == "0000:d8:00.0"
    assert ident["sriov"] == {"totalvfs": 0, "numvfs": 0, "vf_device_id": None, "vfs": []}
    assert scan.get("0000:d8:00.0").identity()["sriov"]["totalvfs"] == 4


def _sriov_pf(host, order, offset="16", stride="1"):
    """A PF at 3b:00.0 with VFs added in ``order`` (virtfnN follows the order of addition), and its VF geometry."""
    host.add_pci("0000:3b:00.0", "8086", "1572", "020000", driver="i40e", sriov_totalvfs=8)
    for a in order:
        host.add_pci(a, "8086", "154c", "020000", driver="iavf", physfn="0000:3b:00.0")
    host.write("/sys/bus/pci/devices/0000:3b:00.0/sriov_offset", offset + "\n")
    host.write("/sys/bus/pci/devices/0000:3b:00.0/sriov_stride", stride + "\n")
    return _pci.scan(Sysfs(host.root))


def test_vfs_in_virtfn_order_from_the_vf_geometry(host):
    """The kernel puts VF N at routing id PF + sriov_offset + N * sriov_stride and links it as virtfnN: the PF's VF
    list and each VF's index are the links' (here 3b:02.0 ... 3b:02.3, stride 1; and every other devfn, stride 2)."""
    vfs = ["0000:3b:02.0", "0000:3b:02.1", "0000:3b:02.2", "0000:3b:02.3"]
    scan = _sriov_pf(host, vfs)
    assert scan.get("0000:3b:00.0").identity()["sriov"]["vfs"] == vfs
    assert [scan.vf_index(scan.get(a)) for a in vfs] == [0, 1, 2, 3]
    assert all(not f.warnings for f in scan.functions.values())
    # only the first and the last link are read (a host with thousands of VFs reads 2 links per PF, not one per VF)
    for n in (1, 2):
        os.unlink(host.path("/sys/bus/pci/devices/0000:3b:00.0/virtfn%d" % n))
    scan = _pci.scan(Sysfs(host.root))
    assert scan.get("0000:3b:00.0").identity()["sriov"]["vfs"] == vfs
    assert all(not f.warnings for f in scan.functions.values())


def test_vf_geometry_stride_two(host):
    vfs = ["0000:3b:02.0", "0000:3b:02.2", "0000:3b:02.4"]
    scan = _sriov_pf(host, vfs, stride="2")
    assert scan.get("0000:3b:00.0").identity()["sriov"]["vfs"] == vfs
    assert [scan.vf_index(scan.get(a)) for a in vfs] == [0, 1, 2]


@pytest.mark.parametrize("offset,stride", [("16", "1"), ("17", "1"), ("16", "0"), ("x", "1")])
def test_the_virtfn_links_win_when_the_geometry_does_not_place_them(host, offset, stride):
    """A tree whose links are not where the arithmetic puts them (virtfn0 -> 3b:02.1 here), or a geometry that places
    no VF or is garbled: the PF's VF list and the indexes are the links'."""
    scan = _sriov_pf(host, ["0000:3b:02.1", "0000:3b:02.0"], offset=offset, stride=stride)
    assert scan.get("0000:3b:00.0").identity()["sriov"]["vfs"] == ["0000:3b:02.1", "0000:3b:02.0"]
    assert scan.vf_index(scan.get("0000:3b:02.1")) == 0 and scan.vf_index(scan.get("0000:3b:02.0")) == 1


@pytest.mark.parametrize("shape", ["cycle", "self"])
def test_a_physfn_cycle_is_reported_not_followed(host, shape):
    """Two functions whose physfn links point at each other (or one at itself): the kernel never makes this; the
    scan reports it on the function and drops the link, and discovery over it ends (it used to recurse)."""
    from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
    a = host.add_pci("0000:3b:00.0", "1002", "740f", "038000", driver="gim", iommu_group=1, sriov_totalvfs=4)
    b = host.add_pci("0000:3b:02.0", "1002", "7410", "038000", driver="amdgpu", iommu_group=2)
    os.symlink("../0000:3b:02.0" if shape == "cycle" else "../0000:3b:00.0", host.path(a) + "/physfn")
    if shape == "cycle":
        os.symlink("../0000:3b:00.0", host.path(b) + "/physfn")
    scan = _pci.scan(Sysfs(host.root))
    warned = [f for f in scan.functions.values() if any("physfn: points at" in w for w in f.warnings)]
    assert warned and all(f.physfn is None for f in warned)
    result = discover(Sysfs(host.root), include_all=True)
    assert {r["address"] for r in result["accelerators"]} >= {"0000:3b:00.0"}


@pytest.mark.parametrize("text, low, high, want", [
    ("4", None, None, 4), ("-1", None, None, -1), ("0", 0, 64, 0), ("64", 0, 64, 64), ("65", 0, 64, None),
    ("1_0", None, None, None), ("\u0663", None, None, None), ("+4", None, None, None), ("1e5", None, None, None),
    ("", None, None, None), (None, None, None, None), ("9" * 5001, None, None, None), (" 7\n", None, None, 7),
])
def test_kernel_int_takes_only_what_the_kernel_prints(text, low, high, want):
    from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import kernel_int
    assert kernel_int(text, low, high) == want


def test_a_garbled_sriov_numvfs_is_reported_and_bounded(host):
    pf = host.add_pci("0000:3b:00.0", "8086", "1572", "020000", driver="i40e", iommu_group=71, sriov_totalvfs=8)
    with open(host.path(pf) + "/sriov_numvfs", "w") as f:
        f.write("1_0\n")
    ident = _pci.scan(Sysfs(host.root)).get("0000:3b:00.0")
    assert ident.identity()["sriov"]["numvfs"] == 0
    assert any("sriov_numvfs: '1_0' is not a VF count from 0 to sriov_totalvfs (8)" in w for w in ident.warnings)


def test_a_fifo_attribute_is_refused_never_waited_on(host):
    import threading
    pf = host.add_pci("0000:3b:00.0", "8086", "1572", "020000", driver="i40e", iommu_group=71)
    os.unlink(host.path(pf) + "/vendor")
    os.mkfifo(host.path(pf) + "/vendor")
    out = {}
    t = threading.Thread(target=lambda: out.update(v=Sysfs(host.root).read_optional(pf + "/vendor"),
                                                   ident=_pci.scan(Sysfs(host.root)).get("0000:3b:00.0").identity()))
    t.daemon = True
    t.start()
    t.join(5)
    assert not t.is_alive(), "a FIFO attribute hung the read"
    assert out["v"] is None and out["ident"]["vendor_id"] is None
