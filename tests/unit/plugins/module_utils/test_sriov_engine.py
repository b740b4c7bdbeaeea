# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The SR-IOV engine (_sriov.py) on its own: pure helpers, reading PFs and planning on plain simulator trees (no
kernel behind them: plans are built and inspected, not run), the tool runner with a fake command runner."""

from __future__ import annotations

import json

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import sriov as _sriov
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import Files
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import (
    HostOps, ProgrammingError, SriovDesired, blocking, evidence_text, ip_vf_command, normalize_mac, parse_ip_vfinfo,
    plan_sriov, read_pf, resolve_address, validate_vf_settings, vf_address)
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

PF = "0000:d8:00.0"
NETDEV = "enp216s0f0"


@pytest.fixture
def nic(tmp_path):
    """A plain tree of the nic-sriov lab with 4 VFs enabled on PF (the tree is re-rendered by the simulator)."""
    h = accelsim.render_tree("nic-sriov", str(tmp_path / "nic"))
    with h.transaction() as host:
        host.set_numvfs(PF, "4")
    return h


def ops_for(h, run=None, **kw):
    return HostOps(Sysfs(root=h.root), run=run, **kw)


# -- pure helpers --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pf,offset,stride,index,want", [
    ("0000:d8:00.0", 16, 1, 0, "0000:d8:02.0"),
    ("0000:d8:00.1", 15, 1, 3, "0000:d8:02.3"),
    ("0000:3b:00.0", 4, 1, 31, "0000:3b:04.3"),
    ("0000:10:00.0", 128, 2, 70, "0000:11:01.4"),      # routing id 0x110c: past the PF's bus
])
def test_vf_address(pf, offset, stride, index, want):
    assert vf_address(pf, offset, stride, index) == want


def test_normalize_mac():
    assert normalize_mac("52-54-00-AA-bb-01") == "52:54:00:aa:bb:01"
    for bad, why in (("52:54:00:aa:bb", "not a MAC"), ("01:00:5e:00:00:01", "multicast"), ("00:00:00:00:00:00", "not allowed")):
        with pytest.raises(ProgrammingError, match=why):
            normalize_mac(bad)


def test_validate_vf_settings():
    got = validate_vf_settings([{"index": 1, "mac": "52:54:00:00:00:01", "vlan": 0, "trust": 1}, {"index": 0}], 2)
    assert got == {1: {"mac": "52:54:00:00:00:01", "vlan": 0, "trust": True}, 0: {}}
    for vfs, why in (([{"index": -1}], "index -1"), ([{"index": 2}], "index 2 does not exist with num_vfs 2"),
                     ([{"index": 0}, {"index": 0}], "listed twice"), ([{"index": 0, "vlan": 4095}], "0 \\(none\\) to 4094"),
                     ([{"index": "0"}], "must be a VF index")):
        with pytest.raises(ProgrammingError, match=why):
            validate_vf_settings(vfs, 2)


def test_ip_commands_and_vfinfo_parsing():
    assert ip_vf_command("/sbin/ip", NETDEV, 3, "trust", True) == ["/sbin/ip", "link", "set", "dev", NETDEV, "vf", "3", "trust", "on"]
    assert ip_vf_command("ip", NETDEV, 0, "vlan", 0)[-2:] == ["vlan", "0"]
    with pytest.raises(ValueError):
        ip_vf_command("ip", NETDEV, 0, "rate", 1)
    text = json.dumps([{"ifname": NETDEV, "vfinfo_list": [
        {"vf": 0, "address": "52:54:00:AA:00:01", "vlan_list": [{"vlan": 100, "qos": 2}], "trust": True},
        {"vf": 1, "mac": "00:00:00:00:00:00", "vlan": 7},           # older iproute2: "vlan" without a list
        {"address": "ignored: no vf index"}]}])
    assert parse_ip_vfinfo(text) == {0: {"mac": "52:54:00:aa:00:01", "vlan": 100, "trust": True},
                                     1: {"mac": "00:00:00:00:00:00", "vlan": 7, "trust": False}}
    assert parse_ip_vfinfo("") == {} and parse_ip_vfinfo("[]") == {}


def test_blocking_and_evidence_text():
    dom = {"kind": "domain", "name": "instance-1", "evidence": "/run/libvirt/qemu/instance-1.xml"}
    proc = {"kind": "process", "name": "qemu-kvm", "pid": 4242, "evidence": "/dev/vfio/12"}
    assert blocking([dom, proc], force=False) == [dom, proc]
    assert blocking([dom, proc], force=True) == [dom], "force overrides a process holding the group, never a domain"
    assert evidence_text([dom, proc]) == ("running domain instance-1 (/run/libvirt/qemu/instance-1.xml); "
                                          "process qemu-kvm pid 4242 (/dev/vfio/12)")


# -- reading ----------------------------------------------------------------------------------------------------------
def test_resolve_and_read_pf(nic):
    sysfs = Sysfs(root=nic.root)
    assert resolve_address(sysfs, "d8:00.0") == PF
    with pytest.raises(ProgrammingError, match="not a PCI address"):
        resolve_address(sysfs, "d8:00")
    with pytest.raises(ProgrammingError, match="no PCI device 0000:99:00.0"):
        resolve_address(sysfs, "0000:99:00.0")
    pf = read_pf(sysfs, PF)
    assert (pf["totalvfs"], pf["numvfs"], pf["offset"], pf["stride"], pf["driver"], pf["netdev"]) == (64, 4, 16, 1, "i40e", NETDEV)
    assert [v["address"] for v in pf["vfs"]] == ["0000:d8:02.%d" % i for i in range(4)]
    assert pf["vfs"][0] == {"index": 0, "address": "0000:d8:02.0", "driver": "iavf", "driver_override": None,
                            "netdev": NETDEV + "v0"}
    with pytest.raises(ProgrammingError, match="0000:d8:02.1 is a VF \\(of 0000:d8:00.0\\)"):
        read_pf(sysfs, "0000:d8:02.1")
    with pytest.raises(ProgrammingError, match="not SR-IOV capable"):
        read_pf(sysfs, "0000:00:17.0")


# -- planning ------------------------------------------------------------------------------------------------------------
def _descs(plan):
    return [s.description for s in plan.steps]


def test_plan_count_change_goes_through_zero_and_binds(nic, tmp_path):
    ops = ops_for(nic)
    plan, info = plan_sriov(ops, PF, SriovDesired(num_vfs=2, vf_driver="vfio-pci"), files=Files(ops.sysfs, str(tmp_path / "p")))
    d = _descs(plan)
    assert d[0] == "remove the 4 VFs of %s (sriov_numvfs 4 -> 0)" % PF
    assert d[1] == "create 2 VFs on %s (sriov_numvfs 0 -> 2)" % PF
    assert d[2:5] == ["set driver_override of VF 0 (0000:d8:02.0) to vfio-pci", "unbind VF 0 (0000:d8:02.0) from its default driver",
                      "bind VF 0 (0000:d8:02.0) to vfio-pci (drivers_probe)"]
    assert len([x for x in d if x.startswith("bind VF")]) == 2
    assert [x.split()[0] for x in d[-3:]] == ["create", "create", "enable"], "boot script, unit, wants link last"
    assert info == {"address": PF, "totalvfs": 64, "num_vfs_before": 4, "num_vfs": 2, "vf_driver": "vfio-pci",
                    "vfs": ["0000:d8:02.0", "0000:d8:02.1"]}
    assert all(s.undo is not None for s in plan.steps), "every step can be undone"


def test_plan_nothing_to_do_and_not_persistent(nic):
    ops = ops_for(nic)
    plan, _info = plan_sriov(ops, PF, SriovDesired(num_vfs=4, persistent=False))
    assert _descs(plan) == []


@pytest.mark.parametrize("desired,why", [
    (SriovDesired(num_vfs=65), "supports at most 64 VFs"),
    (SriovDesired(num_vfs=-1), "must be 0 or more"),
    (SriovDesired(num_vfs=2, vf_driver="vfio pci"), "is not a driver name"),
    (SriovDesired(num_vfs=2, vf_driver="nosuch"), "not loaded on this host"),
    (SriovDesired(num_vfs=2, vfs=[{"index": 2}]), "index 2 does not exist"),
])
def test_plan_bad_input(nic, desired, why):
    with pytest.raises(ProgrammingError, match=why):
        plan_sriov(ops_for(nic), PF, desired)


def test_plan_refuses_vfs_in_use_with_evidence(nic):
    nic.mark_in_use("0000:d8:02.2", by="domain", name="instance-0000002a")
    for force in (False, True):
        with pytest.raises(ProgrammingError) as e:
            plan_sriov(ops_for(nic), PF, SriovDesired(num_vfs=8, force=force))
        assert "0000:d8:02.2" in str(e.value) and "instance-0000002a" in str(e.value)
        assert e.value.extra["blocked"][0]["target"] == "0000:d8:02.2"


def test_plan_vf_settings_needs_ip_and_reads_current(nic):
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, json.dumps([{"ifname": NETDEV, "vfinfo_list": [{"vf": 0, "address": "52:54:00:00:00:01", "trust": False}]}]), ""
    ops = ops_for(nic, run=run, tool_paths={"ip": "/bin/true", "timeout": None})
    settings = [{"index": 0, "mac": "52:54:00:00:00:01", "trust": True}]
    plan, _info = plan_sriov(ops, PF, SriovDesired(num_vfs=4, vfs=settings, persistent=False))
    assert _descs(plan) == ["set trust of VF 0 on %s to True" % NETDEV], "the MAC already matches"
    assert calls[0][-6:] == ["-d", "-j", "link", "show", "dev", NETDEV]
    ops = ops_for(nic, tool_paths={"ip": None})
    with pytest.raises(ProgrammingError, match="the ip tool \\(iproute2\\) is not installed"):
        plan_sriov(ops, PF, SriovDesired(num_vfs=4, vfs=settings))


def test_boot_lines(nic):
    ops = ops_for(nic, tool_paths={"ip": "/sbin/ip"})
    pf = read_pf(ops.sysfs, PF)
    lines = _sriov.boot_lines(ops.sysfs, pf, 4, "vfio-pci", {1: {"vlan": 10}}, ops)
    text = "\n".join(lines)
    assert "pf=%s/sys/bus/pci/devices/%s" % (nic.root, PF) in text
    assert 'put 4 "$pf/sriov_numvfs"' in text and "for i in $(seq 0 3); do" in text
    assert lines[-1] == "/sbin/ip link set dev %s vf 1 vlan 10 || rc=1" % NETDEV


# -- the tool runner ------------------------------------------------------------------------------------------------------
def test_run_tool_outcomes(nic, tmp_path):
    tool = tmp_path / "t"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    results = iter([(0, "ok", ""), (3, "", "boom"), (124, "", ""), OSError("exec format error")])

    def run(argv):
        r = next(results)
        if isinstance(r, Exception):
            raise r
        return r
    ops = HostOps(Sysfs(root=nic.root), run=run, tool_timeout=5, tool_paths={"t": str(tool)})
    assert ops.run_tool("t", ["a"]) == (0, "ok", "")
    with pytest.raises(ProgrammingError, match="failed \\(exit 3\\): boom"):
        ops.run_tool("t", [])
    with pytest.raises(ProgrammingError, match="did not finish within 5 s"):
        ops.run_tool("t", [])
    with pytest.raises(ProgrammingError, match="failed to start: exec format error"):
        ops.run_tool("t", [])
    with pytest.raises(ProgrammingError, match="nosuchtool is not installed"):
        ops.run_tool("nosuchtool", [])
    assert ops.find_tool("mdevctl") == nic.root + "/usr/bin/mdevctl", "tools are found under the host root"


# -- hostile sysfs shapes ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["1_0", "\u0663", "+4", "1e5", "100000", "16000", " 4x", "-1"])
def test_a_sriov_numvfs_that_is_not_a_bounded_kernel_decimal_is_refused_at_once(nic, value):
    """sriov_numvfs as the kernel prints it (ASCII decimal) and at most sriov_totalvfs (64 here): int() would take
    "1_0", "\u0663" and "+4"; a huge count was walked VF by VF (16,000 took 7.6 s)."""
    path = nic.root + "/sys/bus/pci/devices/%s/sriov_numvfs" % PF
    with open(path, "w") as f:
        f.write(value + "\n")
    with pytest.raises(ProgrammingError, match="not a VF count from 0 to sriov_totalvfs \\(64\\)"):
        read_pf(Sysfs(root=nic.root), PF)


def test_a_fifo_at_sriov_numvfs_never_hangs(nic):
    import os
    import threading
    path = nic.root + "/sys/bus/pci/devices/%s/sriov_numvfs" % PF
    os.unlink(path)
    os.mkfifo(path)
    out = {}

    def read():
        try:
            read_pf(Sysfs(root=nic.root), PF)
        except ProgrammingError as e:
            out["msg"] = str(e)
    t = threading.Thread(target=read)
    t.daemon = True
    t.start()
    t.join(5)
    assert not t.is_alive(), "a FIFO at sriov_numvfs hung the read"
    assert "cannot read" in out["msg"]
