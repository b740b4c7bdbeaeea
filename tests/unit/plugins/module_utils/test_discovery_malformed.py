# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Malformed trees: every problem is a warning on the device concerned, never a traceback."""

from __future__ import annotations

import os
import shutil

from ansible_collections.accelops.lifecycle.plugins.module_utils import _discovery
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import Registry
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs


def _gpu(host, addr="0000:3b:00.0", **kw):
    kw.setdefault("driver", "nvidia")
    kw.setdefault("iommu_group", 7)
    return host.add_pci(addr, "10de", "1eb8", "030200", **kw)


def _disc(host, **kw):
    kw.setdefault("nvidia_smi", "never")
    return discover(Sysfs(host.root), **kw)


def _unreadable(host, path):
    """Replace a file by a directory: open() works, read() fails with EISDIR even for root."""
    p = host.path(path)
    os.unlink(p)
    os.mkdir(p)


def test_missing_identity_files(host):
    d = _gpu(host)
    for name in ("uevent", "vendor", "numa_node", "revision", "subsystem_vendor"):
        os.unlink(host.path(d + "/" + name))
    rec = _disc(host, include_all=True)["accelerators"][0]
    assert rec["vendor_id"] is None and rec["device_id"] == "1eb8"
    assert rec["numa_node"] is None and rec["revision"] is None
    assert any(w.startswith("vendor:") for w in rec["warnings"])


def test_unreadable_attributes(host):
    d = _gpu(host)
    _unreadable(host, d + "/uevent")
    _unreadable(host, d + "/class")
    _unreadable(host, d + "/numa_node")
    rec = _disc(host, include_all=True)["accelerators"][0]
    assert rec["class_id"] is None and rec["numa_node"] is None
    assert any(w.startswith("class:") for w in rec["warnings"])
    assert any(w.startswith("numa_node:") for w in rec["warnings"])
    assert rec["family"] == "pci"  # without a class it cannot be called a GPU


def test_non_utf8_and_garbage_and_huge(host):
    d = _gpu(host)
    os.unlink(host.path(d + "/uevent"))
    host.write(d + "/device", b"\xff\xfe\x00garbage")
    host.write(d + "/class", "0xzzzzzz\n")
    host.write(d + "/local_cpulist", "0-3," * 5000)
    rec = _disc(host, include_all=True)["accelerators"][0]
    w = "\n".join(rec["warnings"])
    assert "device: not UTF-8 text" in w
    assert "class: unexpected value" in w
    assert "local_cpulist: longer than" in w
    assert rec["device_id"] is None and rec["local_cpulist"] is None


def test_dangling_links(host):
    d = _gpu(host)
    host.add_pci("0000:3b:00.4", "10de", "1eb8", "030200", physfn="0000:3b:00.0", driver="nvidia")
    # without a readable uevent (which names the driver), the driver comes from the link
    os.unlink(host.path(d + "/uevent"))
    os.unlink(host.path(d + "/iommu_group"))
    os.symlink("../../../kernel/iommu_groups/notanumber", host.path(d + "/iommu_group"))
    os.unlink(host.path(d + "/driver"))
    os.symlink("../../../bus/pci/drivers/gone", host.path(d + "/driver"))  # dangling: still names the driver
    os.unlink(host.path(d + "/virtfn0"))
    os.symlink("../0000:3b:00.4", host.path(d + "/virtfn0"))
    host.write(d + "/sriov_totalvfs", "4\n")
    host.write(d + "/sriov_numvfs", "2\n")  # says 2, only virtfn0 exists
    host.add_mdev_type("0000:3b:00.0", "nvidia-1", "T")
    os.symlink("/nowhere", host.path(d + "/mdev_supported_types/nvidia-1/devices/12345678-1234-1234-1234-123456789abc"))
    res = _disc(host)
    recs = dict((r["address"], r) for r in res["accelerators"])
    rec = recs["0000:3b:00.0"]
    assert rec["driver"] == "gone" and rec["iommu_group"] is None
    assert any("iommu_group: unexpected link target" in w for w in rec["warnings"])
    assert any("virtfn1: missing" in w for w in rec["warnings"])
    assert rec["sriov"]["vfs"] == ["0000:3b:00.4"]
    assert recs["0000:3b:00.4"]["physfn"] == "0000:3b:00.0"


def test_device_gone_before_scan_reads_it(host):
    _gpu(host, "0000:3b:00.0")
    _gpu(host, "0000:5e:00.0", iommu_group=8)
    shutil.rmtree(host.path(host.dev("0000:5e:00.0")))  # the bus link now dangles
    res = _disc(host)
    assert [r["address"] for r in res["accelerators"]] == ["0000:3b:00.0"]
    assert any("0000:5e:00.0" in w and "went away" in w for w in res["warnings"])


def test_device_vanishing_mid_describe(host):
    _gpu(host, "0000:3b:00.0")
    _gpu(host, "0000:5e:00.0", iommu_group=8)
    reg = Registry()
    drv = reg.by_name("nvidia")
    orig = drv.describe

    def vanish(func, ctx):
        if func.address == "0000:5e:00.0":
            shutil.rmtree(os.path.realpath(func.real))
        return orig(func, ctx)
    drv.describe = vanish
    res = _disc(host, registry=reg)
    recs = dict((r["address"], r) for r in res["accelerators"])
    assert recs["0000:3b:00.0"]["warnings"] == []
    assert any("went away" in w for w in recs["0000:5e:00.0"]["warnings"])


def test_identity_vanishing_before_identity(host, monkeypatch):
    _gpu(host, "0000:3b:00.0")
    real_fill = _discovery._fill_record

    def fill(rec, func, driver, ctx):
        shutil.rmtree(os.path.realpath(func.real))
        return real_fill(rec, func, driver, ctx)
    monkeypatch.setattr(_discovery, "_fill_record", fill)
    rec = _disc(host)["accelerators"][0]
    assert rec["vendor_id"] == "10de"  # from the first pass
    assert any("went away" in w for w in rec["warnings"])


def test_broken_mdev_and_fpga_subtrees(host):
    d = _gpu(host)
    host.add_mdev_type("0000:3b:00.0", "nvidia-9", "T", available=3)
    host.write(d + "/mdev_supported_types/nvidia-9/available_instances", "lots\n")
    host.mkdir(d + "/4b20d080-1b54-4048-85b3-a6a62d165c01")  # an mdev dir without mdev_type
    f = host.add_pci("0000:86:00.0", "8086", "0b2b", "120000", driver="dfl-pci")
    host.mkdir(f + "/fpga_region/region0/dfl-port.0")  # no afu_id
    res = _disc(host)
    recs = dict((r["address"], r) for r in res["accelerators"])
    g = recs["0000:3b:00.0"]
    assert any("available_instances: unexpected value" in w for w in g["warnings"])
    assert any("without a readable mdev_type" in w for w in g["warnings"])
    fp = recs["0000:86:00.0"]
    assert fp["fpga"]["ports"][0]["afu_id"] is None and fp["healthy"] is False
    assert any("no readable afu_id" in w for w in fp["warnings"])


def test_not_an_address_in_bus_dir(host):
    _gpu(host)
    host.mkdir("/sys/bus/pci/devices/garbage")
    res = _disc(host)
    assert len(res["accelerators"]) == 1
    assert any("garbage" in w for w in res["warnings"])


def test_whole_root_missing(tmp_path):
    res = discover(Sysfs(str(tmp_path / "nothing")), include_all=True, nvidia_smi="never")
    assert res["accelerators"] == [] and res["warnings"]


def test_ids_and_driver_come_from_the_files_lspci_reads(host):
    """Issue 18, defect 8: the ids come from the vendor, device, class, subsystem_vendor and subsystem_device files
    and the driver from the driver link, as lspci (-k) and Cyborg read them, never from uevent's PCI_ID, PCI_CLASS,
    PCI_SUBSYS_ID and DRIVER lines, which here say something else."""
    bound = host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", subsystem=("10de", "12a2"), driver="nvidia")
    unbound = host.add_pci("0000:5e:00.0", "10de", "1eb8", "030200")
    stale = "DRIVER=vfio-pci\nPCI_CLASS=120000\nPCI_ID=10EE:5005\nPCI_SUBSYS_ID=10EE:000E\nPCI_SLOT_NAME=%s\n"
    host.write(bound + "/uevent", stale % "0000:3b:00.0")
    host.write(unbound + "/uevent", stale % "0000:5e:00.0")
    recs = dict((r["address"], r) for r in _disc(host, include_all=True)["accelerators"])
    for address in ("0000:3b:00.0", "0000:5e:00.0"):
        r = recs[address]
        assert (r["vendor_id"], r["device_id"], r["class_id"]) == ("10de", "1eb8", "030200"), r
        assert r["family"] == "gpu" and r["handler"] == "nvidia" and not r["warnings"], r
    assert (recs["0000:3b:00.0"]["subsystem_vendor_id"], recs["0000:3b:00.0"]["subsystem_device_id"]) == ("10de", "12a2")
    assert (recs["0000:5e:00.0"]["subsystem_vendor_id"], recs["0000:5e:00.0"]["subsystem_device_id"]) == ("0000", "0000")
    assert recs["0000:3b:00.0"]["driver"] == "nvidia"
    assert recs["0000:5e:00.0"]["driver"] is None
    # the files say a different device: the record follows them (a vendor filter too)
    host.write(bound + "/device", "0x26b5\n")
    host.write(bound + "/subsystem_device", "0x169d\n")
    rec = _disc(host, vendor_ids=["10de"], addresses=["3b:00.0"])["accelerators"][0]
    assert (rec["device_id"], rec["subsystem_device_id"]) == ("26b5", "169d")
    assert _disc(host, vendor_ids=["10ee"])["accelerators"] == []
