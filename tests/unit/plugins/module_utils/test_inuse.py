# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""In-use evidence: libvirt status XML and processes holding VFIO files."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _inuse
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Driver
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

UUID = "4b20d080-1b54-4048-85b3-a6a62d165c01"


def test_parse_domain_xml_every_kind():
    xml = b"""<domstatus state='paused' pid='77'><domain type='kvm'><name>vm1</name><devices>
      <hostdev mode='subsystem' type='pci'><source><address domain='0x0000' bus='0x3b' slot='0x00'
        function='0x1'/></source></hostdev>
      <hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='%s'/></source></hostdev>
      <interface type='hostdev'><source><address type='pci' domain='0' bus='216' slot='2' function='1'/></source></interface>
      <interface type='bridge'><source bridge='br0'/></interface>
      <hostdev mode='subsystem' type='usb'><source><vendor id='0x1'/></source></hostdev>
    </devices></domain></domstatus>""" % UUID.upper().encode()
    name, state, pid, pci, mdev = _inuse.parse_domain_xml(xml)
    assert (name, state, pid) == ("vm1", "paused", 77)
    assert pci == ["0000:3b:00.1", "0000:d8:02.1"]
    assert mdev == [UUID]


def test_parse_plain_domain_xml():
    name, state, pid, pci, mdev = _inuse.parse_domain_xml(b"<domain><name>x</name></domain>")
    assert (name, state, pid, pci, mdev) == ("x", None, None, [], [])


@pytest.mark.parametrize("data", [b"<domain", b"<other/>", b"", b"<domstatus/>"])
def test_parse_bad_xml_raises_value_error(data):
    with pytest.raises(ValueError):
        _inuse.parse_domain_xml(data)


def test_collect_domains_and_bad_files(host):
    host.add_domain("good", hostdevs=["0000:3b:00.0"])
    host.write("/run/libvirt/qemu/good.pid", "31337\n")
    host.write("/run/libvirt/qemu/broken.xml", "<domstatus><domain>")
    host.write("/run/libvirt/qemu/notes.txt", "ignored")
    inuse = _inuse.collect(Sysfs(host.root))
    assert inuse.by_address["0000:3b:00.0"] == [{"kind": "domain", "name": "good", "pid": 31337,
                                                 "evidence": "/run/libvirt/qemu/good.xml"}]
    assert len(inuse.warnings) == 1 and "broken.xml" in inuse.warnings[0]
    assert [d["name"] for d in inuse.domains] == ["good"]


def test_processes_holding_vfio_groups_and_cdevs(host):
    host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="vfio-pci", iommu_group=42)
    host.add_pci("0000:3b:00.1", "10de", "10f8", "040300", driver="vfio-pci", iommu_group=42)  # same group
    host.add_pci("0000:5e:00.0", "10de", "1eb8", "030200", driver="vfio-pci", iommu_group=43)
    host.write(host.dev("0000:5e:00.0") + "/vfio-dev/vfio7/dev", "511:7\n")
    host.write("/dev/vfio/42", "")
    host.write("/dev/vfio/devices/vfio7", "")
    host.add_process(1234, "qemu-system-x86", {0: "/dev/null", 17: "/dev/vfio/vfio", 18: "/dev/vfio/42"})
    host.add_process(999, "dpdk-testpmd", {5: "/dev/vfio/devices/vfio7"})
    host.mkdir("/proc/2/fd")  # a process without fds of interest
    res = discover(Sysfs(host.root), include_all=True, nvidia_smi="never")
    recs = dict((r["address"], r) for r in res["accelerators"])
    assert res["host"]["processes_scanned"] is True
    for addr in ("0000:3b:00.0", "0000:3b:00.1"):  # a held group holds every member
        ev = recs[addr]["units"][0]["in_use_by"]
        assert ev == [{"kind": "process", "name": "qemu-system-x86", "pid": 1234,
                       "evidence": "/proc/1234/fd/18 -> /dev/vfio/42"}]
        assert recs[addr]["iommu_group_members"] == ["0000:3b:00.0", "0000:3b:00.1"]
    ev = recs["0000:5e:00.0"]["units"][0]["in_use_by"]
    assert ev[0]["pid"] == 999 and ev[0]["evidence"].endswith("/dev/vfio/devices/vfio7")


def test_no_vfio_nodes_no_process_scan(host):
    host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="nvidia")
    host.add_process(1, "init", {3: "/dev/vfio/5"})
    res = discover(Sysfs(host.root), nvidia_smi="never")
    assert res["host"]["processes_scanned"] is False


def test_nvidia_caps_nodes_scan_in_the_same_pass(host):
    # a MIG host without VFIO nodes: /dev/nvidia-caps holding nodes is enough for the one /proc pass, which records
    # the holders of caps nodes and GPU nodes by path (and still VFIO holders, none here)
    host.write("/dev/nvidia-caps/nvidia-cap21", "")
    host.add_process(4321, "python3", {3: "/dev/nvidiactl", 4: "/dev/nvidia0", 5: "/dev/nvidia-caps/nvidia-cap21",
                                       6: "/dev/nvidia-uvm"})
    inuse = _inuse.collect(Sysfs(host.root), None)
    assert inuse.processes_scanned is True
    assert sorted(inuse.by_path) == ["/dev/nvidia-caps/nvidia-cap21", "/dev/nvidia0"]
    assert inuse.by_path["/dev/nvidia0"] == [{"kind": "process", "name": "python3", "pid": 4321,
                                              "evidence": "/proc/4321/fd/4 -> /dev/nvidia0"}]
    assert inuse.by_group == {} and inuse.by_cdev == {}


def test_no_caps_nodes_no_nvidia_paths(host):
    host.write("/dev/vfio/42", "")
    host.add_process(7, "qemu", {3: "/dev/vfio/42", 4: "/dev/nvidia0"})
    inuse = _inuse.collect(Sysfs(host.root), None)
    assert inuse.processes_scanned is True and inuse.by_path == {} and list(inuse.by_group) == [42]


class _TpuDriver(Driver):
    """A family whose units a process holds through /dev/accel<N> once its nodes exist."""

    name = family = "tpu"

    def claims(self, func, ctx=None):
        return func.vendor_id == "1ae0"

    def describe(self, func, ctx):
        return {}

    def held_device_nodes(self, sysfs):
        return (lambda target: target.startswith("/dev/accel")) if sysfs.exists("/dev/accel0") else None


def test_a_familys_device_nodes_are_scanned_only_where_they_exist(host):
    host.add_process(9, "trainer", {3: "/dev/accel0", 4: "/dev/nvidia0"})
    assert _inuse.collect(Sysfs(host.root), None, drivers=[_TpuDriver()]).processes_scanned is False
    host.write("/dev/accel0", "")
    inuse = _inuse.collect(Sysfs(host.root), None, drivers=[_TpuDriver()])
    assert inuse.processes_scanned is True
    assert inuse.by_path == {"/dev/accel0": [{"kind": "process", "name": "trainer", "pid": 9,
                                              "evidence": "/proc/9/fd/3 -> /dev/accel0"}]}


def test_in_use_off(host):
    host.add_pci("0000:3b:00.0", "10de", "1eb8", "030200", driver="vfio-pci", iommu_group=4)
    host.add_domain("vm", hostdevs=["0000:3b:00.0"])
    res = discover(Sysfs(host.root), in_use=False, nvidia_smi="never")
    assert res["accelerators"][0]["units"][0]["in_use"] is False
    assert res["host"]["domains"] == []


def test_evidence_text_is_the_one_rendering():
    """One rendering of in-use evidence for every host module (SR-IOV, vGPU, FPGA), tolerant of missing keys."""
    dom = {"kind": "domain", "name": "instance-1", "pid": None, "evidence": "/run/libvirt/qemu/instance-1.xml",
           "unit": "0000:5e:00.0"}
    proc = {"kind": "process", "name": "afu-app", "pid": 42, "evidence": "/proc/42/fd/3 -> /dev/dfl-port.0"}
    assert _inuse.evidence_text([dom, proc]) == ("running domain instance-1 (/run/libvirt/qemu/instance-1.xml); "
                                                 "process afu-app pid 42 (/proc/42/fd/3 -> /dev/dfl-port.0)")
    assert _inuse.evidence_text([{"kind": "process"}]) == "process None pid None (None)"
    assert _inuse.evidence_text([]) == ""
    from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import fpga as _fpga, sriov as _sriov
    assert _sriov.evidence_text is _inuse.evidence_text and not hasattr(_fpga, "evidence_text")


def test_evidence_text_names_each_kind_of_user():
    dom = {"kind": "domain", "name": "instance-1", "pid": None, "evidence": "/run/libvirt/qemu/instance-1.xml"}
    proc = {"kind": "process", "name": "qemu-kvm", "pid": 4242, "evidence": "/dev/vfio/12"}
    # a family's own evidence (a MIG-backed vGPU holding a GPU instance) is quoted whole, not read as a process
    vgpu = {"kind": "vgpu", "name": "0000:1b:00.4", "pid": None,
            "evidence": "vGPU NVIDIA H100-1-10C on VF 0000:1b:00.4 (nvidia-smi vgpu -q: GPU Instance ID 7)"}
    assert _inuse.evidence_text([dom, proc, vgpu]) == (
        "running domain instance-1 (/run/libvirt/qemu/instance-1.xml); process qemu-kvm pid 4242 (/dev/vfio/12); "
        "vGPU NVIDIA H100-1-10C on VF 0000:1b:00.4 (nvidia-smi vgpu -q: GPU Instance ID 7)")
    assert "pid None" not in _inuse.evidence_text([vgpu])


def test_a_fifo_or_link_among_the_domain_files_is_skipped_with_a_warning(host, tmp_path):
    import os
    import threading
    host.add_domain("good", hostdevs=["0000:3b:00.0"])
    os.mkfifo(host.path("/run/libvirt/qemu/fifo.xml"))
    secret = tmp_path / "secret.xml"
    secret.write_text("<domstatus state='running' pid='1'><domain><name>SECRET</name></domain></domstatus>")
    os.symlink(str(secret), host.path("/run/libvirt/qemu/link.xml"))
    out = {}
    t = threading.Thread(target=lambda: out.update(inuse=_inuse.collect(Sysfs(host.root))))
    t.daemon = True
    t.start()
    t.join(5)
    assert not t.is_alive(), "a FIFO among the domain files hung the scan"
    inuse = out["inuse"]
    assert [d["name"] for d in inuse.domains] == ["good"]
    assert any("fifo.xml: is a FIFO" in w for w in inuse.warnings)
    assert any("link.xml: is a symbolic link" in w for w in inuse.warnings)
