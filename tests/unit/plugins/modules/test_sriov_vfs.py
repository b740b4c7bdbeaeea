# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sriov_vfs module against FUSE-mounted lab hosts, where writes react like the kernel.

Matrix: check mode (reports, changes nothing) -> real -> independent read-back -> check again (no change) -> real
again (no change, no sysfs write) -> remove -> read-back; plus refusals, kernel errors, rollback, persistence.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess

import pytest

from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")
from accelsim.testing import require_fuse  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.module_utils import _sysfs  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import exec_start  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.modules import sriov_vfs  # noqa: E402

PF = "0000:d8:00.0"
PF1 = "0000:d8:00.1"


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    require_fuse()   # every test here runs on a FUSE mount (skips without FUSE, fails in CI)
    patch_exits(monkeypatch)


def run(args, check=False, diff=False):
    return run_module(sriov_vfs.main, args, check, diff)


@pytest.fixture
def nic(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with accelsim.mount("nic-sriov", str(mnt), state_dir=str(tmp_path / "state")) as h:
        yield h


def _args(h, tmp_path, **kw):
    a = {"root": h.root, "address": PF, "persist_root": str(tmp_path / "persist")}
    a.update(kw)
    return a


def _numvfs(h, pf=PF):
    with open(os.path.join(h.root, "sys/bus/pci/devices", pf, "sriov_numvfs")) as f:
        return int(f.read())


def _driver(h, addr):
    link = os.path.join(h.root, "sys/bus/pci/devices", addr, "driver")
    return os.path.basename(os.readlink(link)) if os.path.islink(link) else None


def test_matrix_count_and_vfio_binding(nic, tmp_path, writes):
    args = _args(nic, tmp_path, num_vfs=4, vf_driver="vfio-pci")
    before = nic.state()
    e = run(args, check=True, diff=True)
    assert e.kind == "exit", e.result
    assert e.result["changed"] is True and e.result["applied"] and not writes
    assert "sriov_numvfs 4" in e.result["diff"]["after"]
    assert nic.state()["functions"] == before["functions"]
    assert not (tmp_path / "persist").exists()
    e = run(args)
    assert e.kind == "exit", e.result
    assert e.result["changed"] is True and e.result["applied"] == [s["description"] for s in e.result["plan"]]
    assert e.result["vfs"] == ["0000:d8:02.0", "0000:d8:02.1", "0000:d8:02.2", "0000:d8:02.3"]
    assert any("set sriov_numvfs" in line and "new=4" in line for line in e.result["audit"])
    # independently: the sysfs tree and the kernel model
    assert _numvfs(nic) == 4
    assert [_driver(nic, a) for a in e.result["vfs"]] == ["vfio-pci"] * 4
    st = nic.state()["functions"]
    assert all(st[a]["driver"] == "vfio-pci" and st[a]["driver_override"] == "vfio-pci" for a in e.result["vfs"])
    del writes[:]
    e = run(args, check=True)
    assert e.result["changed"] is False and e.result["plan"] == []
    e = run(args)
    assert e.result["changed"] is False and e.result["audit"] == [] and writes == []
    # remove
    e = run(_args(nic, tmp_path, num_vfs=0))
    assert e.kind == "exit" and e.result["changed"] is True
    assert _numvfs(nic) == 0 and not os.listdir(tmp_path / "persist" / "etc" / "accelops" / "boot")
    e = run(_args(nic, tmp_path, num_vfs=0))
    assert e.result["changed"] is False


def test_count_change_goes_through_zero(nic, tmp_path):
    assert run(_args(nic, tmp_path, num_vfs=2)).result["changed"]
    e = run(_args(nic, tmp_path, num_vfs=6))
    assert e.kind == "exit", e.result
    descs = [s["description"] for s in e.result["plan"]]
    assert descs[0].startswith("remove the 2 VFs") and descs[1].startswith("create 6 VFs")
    assert _numvfs(nic) == 6


def test_bad_input(nic, tmp_path):
    e = run(_args(nic, tmp_path, address="0000:99:00.0", num_vfs=1))
    assert e.kind == "fail" and "no PCI device 0000:99:00.0" in e.result["msg"]
    e = run(_args(nic, tmp_path, address="zz:00.0", num_vfs=1))
    assert e.kind == "fail" and "not a PCI address" in e.result["msg"]
    e = run(_args(nic, tmp_path, num_vfs=65))
    assert e.kind == "fail" and "at most 64" in e.result["msg"] and PF in e.result["msg"]
    assert run(_args(nic, tmp_path, num_vfs=2)).kind == "exit"
    e = run(_args(nic, tmp_path, address="0000:d8:02.0", num_vfs=1))
    assert e.kind == "fail" and "is a VF" in e.result["msg"] and PF in e.result["msg"]
    e = run(_args(nic, tmp_path, address="0000:00:17.0", num_vfs=1))
    assert e.kind == "fail"
    e = run(_args(nic, tmp_path, num_vfs=2, vf_driver="nosuchdrv"))
    assert e.kind == "fail" and "not loaded" in e.result["msg"]
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=[{"index": 0, "mac": "01:00:00:00:00:01"}]))
    assert e.kind == "fail" and "multicast" in e.result["msg"]
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=[{"index": 2, "mac": "52:54:00:00:00:01"}]))
    assert e.kind == "fail" and "index 2" in e.result["msg"]
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=[{"index": 0, "vlan": 5000}]))
    assert e.kind == "fail" and "4094" in e.result["msg"]


def test_refuses_in_use_with_evidence_and_force_is_limited(nic, tmp_path, writes):
    assert run(_args(nic, tmp_path, num_vfs=2, vf_driver="vfio-pci")).kind == "exit"
    dom = nic.mark_in_use("0000:d8:02.1", by="domain", name="instance-00000001")
    del writes[:]
    for force in (False, True):
        e = run(_args(nic, tmp_path, num_vfs=4, force=force))
        assert e.kind == "fail" and "instance-00000001" in e.result["msg"] and "0000:d8:02.1" in e.result["msg"]
        assert e.result["blocked"][0]["evidence"][0]["kind"] == "domain"
    assert writes == [] and _numvfs(nic) == 2
    nic.release(dom)
    # a process holding the VF's VFIO group: refused without force; force passes our check, the kernel decides
    child = nic.hold("0000:d8:02.0")
    try:
        e = run(_args(nic, tmp_path, num_vfs=4))
        assert e.kind == "fail" and "process" in e.result["msg"]
        e = run(_args(nic, tmp_path, num_vfs=4, force=True))
        assert e.kind == "fail" and "busy" in e.result["msg"] and e.result["state"] == "unchanged"
        assert _numvfs(nic) == 2
    finally:
        nic.unhold(child)
    assert run(_args(nic, tmp_path, num_vfs=4, vf_driver="vfio-pci")).result["changed"]


def test_kernel_error_rolls_back_and_says_so(nic, tmp_path, monkeypatch):
    """EBUSY from the kernel on the third VF's unbind: the earlier steps are undone, the result says so."""
    orig = _sysfs.Sysfs.write

    def failing(self, path, value):
        if path.endswith("/iavf/unbind") and "02.2" in str(value):
            raise _sysfs.SysfsError("write %r to" % value, path, OSError(errno.EBUSY, os.strerror(errno.EBUSY)))
        return orig(self, path, value)
    monkeypatch.setattr(_sysfs.Sysfs, "write", failing)
    e = run(_args(nic, tmp_path, num_vfs=4, vf_driver="vfio-pci"))
    assert e.kind == "fail", e.result
    assert "0000:d8:02.2" in e.result["msg"] and "busy" in e.result["msg"]
    assert e.result["state"] == "unchanged" and e.result["rolled_back"]
    assert "the host is as it was" in e.result["msg"]
    assert _numvfs(nic) == 0
    assert not os.path.exists(tmp_path / "persist" / "etc" / "systemd" / "system" / "accelops-sriov-0000_d8_00_0.service")


def test_rollback_failure_reports_partial_state(nic, tmp_path, monkeypatch):
    orig = _sysfs.Sysfs.write
    calls = {"n": 0}

    def failing(self, path, value):
        if path.endswith("/drivers_probe") and "02.1" in str(value):
            raise _sysfs.SysfsError("write %r to" % value, path, OSError(errno.ENODEV, os.strerror(errno.ENODEV)))
        if path.endswith("sriov_numvfs") and str(value) == "0":
            calls["n"] += 1
            raise _sysfs.SysfsError("write %r to" % value, path, OSError(errno.EBUSY, os.strerror(errno.EBUSY)))
        return orig(self, path, value)
    monkeypatch.setattr(_sysfs.Sysfs, "write", failing)
    e = run(_args(nic, tmp_path, num_vfs=2, vf_driver="vfio-pci"))
    assert e.kind == "fail"
    assert e.result["state"] == "partial" and e.result["still_applied"]
    assert "STILL IN EFFECT" in e.result["msg"] and "create 2 VFs" in e.result["msg"]
    assert e.result["changed"] is True


def test_vanished_device_is_reported(nic, tmp_path, monkeypatch):
    orig = _sysfs.Sysfs.write

    def gone(self, path, value):
        if path.endswith("driver_override"):
            raise _sysfs.SysfsError("open for write", path, OSError(errno.ENOENT, os.strerror(errno.ENOENT)))
        return orig(self, path, value)
    monkeypatch.setattr(_sysfs.Sysfs, "write", gone)
    e = run(_args(nic, tmp_path, num_vfs=1, vf_driver="vfio-pci"))
    assert e.kind == "fail" and "0000:d8:02.0/driver_override" in e.result["msg"] and "does not exist" in e.result["msg"]
    assert e.result["state"] == "unchanged" and _numvfs(nic) == 0


def test_persistence_survives_reboot(nic, tmp_path):
    e = run(_args(nic, tmp_path, num_vfs=3, vf_driver="vfio-pci"))
    assert e.kind == "exit", e.result
    unit = tmp_path / "persist" / "etc" / "systemd" / "system" / "accelops-sriov-0000_d8_00_0.service"
    text = unit.read_text()
    assert "Before=libvirtd.service" in text and "nova-compute.service" in text and "Restart=on-failure" in text
    assert os.path.islink(tmp_path / "persist" / "etc" / "systemd" / "system" / "multi-user.target.wants" / unit.name)
    nic.reboot()
    assert _numvfs(nic) == 0
    cmd = exec_start(text)
    p = subprocess.run(["/bin/bash", "-c", cmd], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert _numvfs(nic) == 3 and _driver(nic, "0000:d8:02.2") == "vfio-pci"
    # the boot script is idempotent, and the module sees nothing to do
    p = subprocess.run(["/bin/bash", "-c", cmd], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert run(_args(nic, tmp_path, num_vfs=3, vf_driver="vfio-pci")).result["changed"] is False


def _vfinfo(h):
    rc, out, err = h.tool("ip", "-j", "link", "show", "dev", "enp216s0f0")
    assert rc == 0, err
    return {v["vf"]: (v["address"], (v.get("vlan_list") or [{"vlan": 0}])[0]["vlan"], v["trust"])
            for v in json.loads(out)[0].get("vfinfo_list", [])}


def test_mac_vlan_trust_against_the_simulated_ip(nic, tmp_path):
    """The simulator's ip fake (usr/sbin/ip in the lab) backed by the simulated kernel: set, read back through
    ip -j and the VF's netdev, idempotent (no ip link set on a rerun), change one setting, refused by the kernel."""
    nic.fail_tool("ip", rc=None, args="link set *", times=0)       # only counts the set commands (rc=None: they run)
    vfs = [{"index": 0, "mac": "52:54:00:AA:00:01", "vlan": 100, "trust": True}, {"index": 1, "mac": "52-54-00-aa-00-02"}]
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=vfs), check=True)
    assert e.kind == "exit" and e.result["changed"] and nic.faults()["tools"][0]["seen"] == 0
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=vfs))
    assert e.kind == "exit", e.result
    assert _vfinfo(nic) == {0: ("52:54:00:aa:00:01", 100, True), 1: ("52:54:00:aa:00:02", 0, False)}
    assert nic.faults()["tools"][0]["seen"] == 4
    assert sum("set vf" in line for line in e.result["audit"]) == 4
    with open(os.path.join(nic.root, "sys/class/net/enp216s0f0v0/address")) as f:
        assert f.read().strip() == "52:54:00:aa:00:01"
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=vfs))
    assert e.result["changed"] is False and nic.faults()["tools"][0]["seen"] == 4
    vfs[0]["vlan"] = 0
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=vfs))
    assert e.result["changed"] is True and nic.faults()["tools"][0]["seen"] == 5
    assert _vfinfo(nic)[0] == ("52:54:00:aa:00:01", 0, True)
    # the kernel refuses the second setting: the first one is undone, the result says so
    nic.clear_faults()
    nic.fail_tool("ip", rc=2, stderr="RTNETLINK answers: Invalid argument\n", args="link set * trust *")
    vfs[1]["trust"] = True
    vfs[1]["vlan"] = 7
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=vfs))
    assert e.kind == "fail" and "Invalid argument" in e.result["msg"] and e.result["state"] == "unchanged", e.result
    assert _vfinfo(nic)[1] == ("52:54:00:aa:00:02", 0, False)


def test_vf_settings_come_back_at_reboot(nic):
    """No persist_root: the boot unit in the mounted host's etc/ carries the ip commands; the reboot runs it."""
    vfs = [{"index": 1, "mac": "52:54:00:aa:00:09", "vlan": 42, "trust": True}]
    args = {"root": nic.root, "address": PF, "num_vfs": 2, "vfs": vfs}
    assert run(args).kind == "exit"
    ran = nic.reboot()
    assert [r["rc"] for r in ran] == [0], ran
    assert _vfinfo(nic) == {0: ("00:00:00:00:00:00", 0, False), 1: ("52:54:00:aa:00:09", 42, True)}
    assert run(args).result["changed"] is False


def test_injected_kernel_refusal_through_the_mount(nic, tmp_path):
    """The simulator's fault injection (docs/simulator.md): the kernel refuses the VF count write with EBUSY."""
    nic.fail_write("EBUSY", nth=1, path="*/%s/sriov_numvfs" % PF)
    e = run(_args(nic, tmp_path, num_vfs=4, vf_driver="vfio-pci"))
    assert e.kind == "fail" and PF in e.result["msg"] and "busy" in e.result["msg"].lower(), e.result
    assert e.result["state"] == "unchanged"
    assert nic.state()["functions"][PF]["numvfs"] == 0 and _numvfs(nic) == 0
    assert [(os.path.basename(w["path"]), w["errno"]) for w in nic.writes()] == [("sriov_numvfs", errno.EBUSY)]
    # the fault fired once: the rerun converges, and a no-op rerun writes nothing
    assert run(_args(nic, tmp_path, num_vfs=4, vf_driver="vfio-pci")).result["changed"]
    count = len(nic.writes())
    assert run(_args(nic, tmp_path, num_vfs=4, vf_driver="vfio-pci")).result["changed"] is False
    assert len(nic.writes()) == count


def test_persistence_through_the_mount_comes_back_at_reboot(nic):
    """No persist_root: the boot unit lands in the mounted host's etc/ (its disk); the simulator's reboot runs the
    enabled units as systemd would, and the VFs and their vfio-pci binding come back."""
    args = {"root": nic.root, "address": PF, "num_vfs": 3, "vf_driver": "vfio-pci"}
    e = run(args)
    assert e.kind == "exit" and e.result["changed"], e.result
    sysd = os.path.join(nic.root, "etc", "systemd", "system")
    assert os.path.islink(os.path.join(sysd, "multi-user.target.wants", "accelops-sriov-0000_d8_00_0.service"))
    assert os.path.exists(os.path.join(nic.state_dir, "etc", "systemd", "system", "accelops-sriov-0000_d8_00_0.service"))
    ran = nic.reboot()
    assert [(r["unit"], r["rc"]) for r in ran] == [("accelops-sriov-0000_d8_00_0.service", 0)], ran
    assert nic.state()["boot"] == 2
    assert _numvfs(nic) == 3 and [_driver(nic, "0000:d8:02.%d" % i) for i in range(3)] == ["vfio-pci"] * 3
    count = len(nic.writes())
    assert run(args).result["changed"] is False and len(nic.writes()) == count
    # without the units the kernel forgets
    nic.reboot(units=False)
    assert _numvfs(nic) == 0


@pytest.mark.parametrize("code,path,nth,device,reason", [
    ("ERANGE", "*/%s/sriov_numvfs" % PF, 1, PF, "out of the range"),
    ("EINVAL", "*/0000:d8:02.1/driver_override", 1, "0000:d8:02.1", "rejected the value as invalid"),
    ("EBUSY", "*/drivers/iavf/unbind", 3, "0000:d8:02.2", "busy"),
    ("ENODEV", "*/drivers_probe", 2, "0000:d8:02.1", "gone away"),      # a VF vanishing mid-change
], ids=["erange", "einval", "ebusy", "enodev-vanished"])
def test_kernel_refusals_through_the_mount(nic, tmp_path, code, path, nth, device, reason):
    """Each errno from the simulated kernel (injected on the n-th matching write): a message naming the device and
    the cause, everything done before undone (the host is as it was), nothing half-applied left unreported."""
    nic.fail_write(code, nth=nth, path=path)
    e = run(_args(nic, tmp_path, num_vfs=4, vf_driver="vfio-pci"))
    assert e.kind == "fail", e.result
    assert device in e.result["msg"] and reason in e.result["msg"], e.result["msg"]
    assert e.result["state"] == "unchanged" and "the host is as it was" in e.result["msg"]
    assert nic.faults()["writes"][0]["fired"] == 1
    assert _numvfs(nic) == 0 and not os.path.exists(tmp_path / "persist" / "etc" / "systemd" / "system" / "accelops-sriov-0000_d8_00_0.service")
    refused = [w for w in nic.writes() if w["errno"]]
    assert len(refused) == 1 and refused[0]["errno"] == getattr(errno, code)


def test_ip_tool_hangs(nic, tmp_path):
    """ip hangs (simulated): the time limit stops it, the VF count created before is undone."""
    nic.fail_tool("ip", hang="forever", args="link set *")
    e = run(_args(nic, tmp_path, num_vfs=2, vfs=[{"index": 0, "trust": True}], tool_timeout=1))
    assert e.kind == "fail" and "did not finish within 1 s" in e.result["msg"] and "vf 0 trust on" in e.result["msg"], e.result
    assert e.result["state"] == "unchanged" and _numvfs(nic) == 0


def test_count_change_rollback_restores_the_old_vfs_settings(nic, tmp_path):
    """Regression (host-fault sweep): the VFs' MAC/VLAN go with them when the count changes; a failure after the
    removal must bring them back, not only the VF count and binding, before the result says unchanged."""
    vfs = [{"index": 1, "mac": "52:54:00:aa:00:11", "vlan": 7}]
    assert run(_args(nic, tmp_path, num_vfs=2, vfs=vfs)).kind == "exit"
    before = _vfinfo(nic)
    nic.fail_write("EIO", path="*/0000:d8:02.0/driver_override")
    e = run(_args(nic, tmp_path, num_vfs=3, vf_driver="vfio-pci", vfs=vfs))
    assert e.kind == "fail" and e.result["state"] == "unchanged" and "Input/output error" in e.result["msg"], e.result
    assert _numvfs(nic) == 2 and _vfinfo(nic) == before == {0: ("00:00:00:00:00:00", 0, False), 1: ("52:54:00:aa:00:11", 7, False)}


def test_settings_of_new_vfs_are_not_reported_as_still_in_effect(nic):
    """Regression: a setting of a VF that the same run created goes with the VF when the creation is undone; a
    later failure (here: the boot unit cannot be written) must report the host unchanged, not partial."""
    nic.fail_write("ENOSPC", path="*/etc/systemd/system/*")
    e = run({"root": nic.root, "address": PF, "num_vfs": 2, "vfs": [{"index": 0, "mac": "52:54:00:aa:00:01"}]})
    assert e.kind == "fail" and e.result["state"] == "unchanged" and not e.result["rollback_failed"], e.result
    assert "the host is as it was" in e.result["msg"] and _numvfs(nic) == 0
