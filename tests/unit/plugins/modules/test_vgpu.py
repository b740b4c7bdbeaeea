# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The vgpu module against FUSE-mounted lab hosts (mdev on a Tesla T4, vendor-specific VFIO on an L40).

Matrix per backend: check mode -> real -> independent read-back -> check again -> real again (no sysfs write) ->
remove -> read-back; plus whole-card type changes, in-use refusal, bad input, kernel and tool faults, reboot.
"""

from __future__ import annotations

import errno
import os
import subprocess

import pytest


from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")
from accelsim.testing import require_fuse  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.module_utils import _sysfs  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import sriov as _sriov  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import exec_start  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.vgpu import mdev_uuid  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.modules import vgpu  # noqa: E402

T4 = "0000:18:00.0"
L40 = "0000:3b:00.0"
LAB_MDEV = "4b20d080-1b54-4048-85b3-a6a62d165c01"


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    require_fuse()   # every test here runs on a FUSE mount (skips without FUSE, fails in CI)
    patch_exits(monkeypatch)


def run(args, check=False, diff=False):
    return run_module(vgpu.main, args, check, diff)


def _mount(tmp_path, lab):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    return accelsim.mount(lab, str(mnt), state_dir=str(tmp_path / "state"))


@pytest.fixture
def t4(tmp_path):
    with _mount(tmp_path, "gpu-mdev") as h:
        yield h


@pytest.fixture
def l40(tmp_path):
    with _mount(tmp_path, "gpu-vendor-vfio") as h:
        yield h


def _args(h, tmp_path, addr, **kw):
    a = {"root": h.root, "addresses": [addr], "persist_root": str(tmp_path / "persist"), "hostname": "compute-1"}
    a.update(kw)
    return a


def _defs(h):
    return {u: (p, t, a) for p, u, t, a in h.store.mdevctl_definitions()}


def _script(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return str(path)


# -- mdev ------------------------------------------------------------------------------------------------------
def test_mdev_matrix(t4, tmp_path, writes):
    args = _args(t4, tmp_path, T4, type="GRID T4-2Q", count=4)
    want = [mdev_uuid("compute-1", T4, "nvidia-231", i) for i in range(4)]
    before = t4.state()["mdevs"]
    e = run(args, check=True, diff=True)
    assert e.kind == "exit", e.result
    assert e.result["changed"] and not writes and t4.state()["mdevs"] == before
    assert e.result["gpus"][0]["vgpus"] == want and e.result["gpus"][0]["removed"] == [LAB_MDEV]
    e = run(args)
    assert e.kind == "exit", e.result
    assert sorted(t4.state()["mdevs"]) == sorted(want)
    assert all(m["type"] == "nvidia-231" for m in t4.state()["mdevs"].values())
    assert set(os.listdir(os.path.join(t4.root, "sys/bus/mdev/devices"))) == set(want)
    assert _defs(t4) == {u: (T4, "nvidia-231", True) for u in want}
    assert any("create mdev" in line for line in e.result["audit"])
    del writes[:]
    assert run(args, check=True).result["changed"] is False
    e = run(args)
    assert e.result["changed"] is False and writes == [] and e.result["audit"] == []
    e = run(_args(t4, tmp_path, T4, state="absent"))
    assert e.kind == "exit" and e.result["changed"]
    assert t4.state()["mdevs"] == {} and _defs(t4) == {}
    assert run(_args(t4, tmp_path, T4, state="absent")).result["changed"] is False


def test_mdev_reboot_keeps_identities(t4, tmp_path):
    args = _args(t4, tmp_path, T4, type="nvidia-232", count=2)
    assert run(args).kind == "exit"
    ids = sorted(t4.state()["mdevs"])
    t4.reboot()
    assert sorted(t4.state()["mdevs"]) == ids
    assert run(args).result["changed"] is False


def test_mdev_without_mdevctl_uses_boot_unit(t4, tmp_path, monkeypatch):
    orig = _sriov.HostOps.find_tool
    monkeypatch.setattr(_sriov.HostOps, "find_tool", lambda self, name: None if name == "mdevctl" else orig(self, name))
    args = _args(t4, tmp_path, T4, type="GRID T4-1Q", count=3)
    e = run(args)
    assert e.kind == "exit", e.result
    unit = tmp_path / "persist/etc/systemd/system/accelops-vgpu-0000_18_00_0.service"
    text = unit.read_text()
    assert "Before=libvirtd.service" in text and "nova-compute.service" in text
    ids = sorted(t4.state()["mdevs"])
    t4.store.undefine_mdev(LAB_MDEV)
    t4.reboot()
    assert t4.state()["mdevs"] == {}
    p = subprocess.run(["/bin/bash", "-c", exec_start(text)], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert sorted(t4.state()["mdevs"]) == ids
    assert run(args).result["changed"] is False


def test_mdev_type_change_is_whole_card_and_refused_in_use(t4, tmp_path, writes):
    assert run(_args(t4, tmp_path, T4, type="GRID T4-2Q", count=2)).kind == "exit"
    used = mdev_uuid("compute-1", T4, "nvidia-231", 1)
    dom = t4.mark_in_use(used, by="domain", name="instance-0000002a")
    del writes[:]
    for force in (False, True):
        e = run(_args(t4, tmp_path, T4, type="GRID T4-4Q", count=1, force=force))
        assert e.kind == "fail" and "whole-card" in e.result["msg"] and "instance-0000002a" in e.result["msg"]
    # an orphan in use (count lowered) is refused too
    e = run(_args(t4, tmp_path, T4, type="GRID T4-2Q", count=1))
    assert e.kind == "fail" and used in e.result["msg"] and "orphan" in e.result["msg"]
    assert writes == []
    t4.release(dom)
    e = run(_args(t4, tmp_path, T4, type="GRID T4-4Q", count=2))
    assert e.kind == "exit" and e.result["gpus"][0]["whole_card_change"]
    assert sorted(m["type"] for m in t4.state()["mdevs"].values()) == ["nvidia-232", "nvidia-232"]


def test_mdev_bad_input(t4, tmp_path):
    e = run(_args(t4, tmp_path, T4, type="GRID T4-3Q", count=1))
    assert e.kind == "fail" and "GRID T4-3Q" in e.result["msg"] and "nvidia-231 (GRID T4-2Q)" in e.result["msg"]
    e = run(_args(t4, tmp_path, T4, type="GRID T4-8Q", count=3))
    assert e.kind == "fail" and "at most 2" in e.result["msg"]
    e = run(_args(t4, tmp_path, "0000:42:00.0", type="GRID T4-8Q"))
    assert e.kind == "fail" and "no PCI device 0000:42:00.0" in e.result["msg"]
    e = run(_args(t4, tmp_path, "0000:17:00.0", type="GRID T4-8Q"))
    assert e.kind == "fail" and "offers no vGPUs" in e.result["msg"]
    e = run(_args(t4, tmp_path, T4, count=1))
    assert e.kind == "fail" and "type" in e.result["msg"]


def test_mdev_kernel_refusal_rolls_back(t4, tmp_path, monkeypatch):
    """The third create fails with EUSERS: the two created are removed again and the orphan comes back."""
    orig = _sysfs.Sysfs.write
    n = {"create": 0}

    def failing(self, path, value):
        if path.endswith("/create"):
            n["create"] += 1
            if n["create"] == 3:
                raise _sysfs.SysfsError("write %r to" % value, path, OSError(errno.EUSERS, os.strerror(errno.EUSERS)))
        return orig(self, path, value)
    monkeypatch.setattr(_sysfs.Sysfs, "write", failing)
    e = run(_args(t4, tmp_path, T4, type="GRID T4-2Q", count=3))
    assert e.kind == "fail" and "no instances of that type are left" in e.result["msg"]
    assert e.result["state"] == "unchanged" and len(e.result["rolled_back"]) == 3
    assert sorted(t4.state()["mdevs"]) == [LAB_MDEV]


def test_mdev_vanishing_device(t4, tmp_path, monkeypatch):
    orig = _sysfs.Sysfs.write

    def gone(self, path, value):
        if path.endswith("/create"):
            raise _sysfs.SysfsError("open for write", path, OSError(errno.ENODEV, os.strerror(errno.ENODEV)))
        return orig(self, path, value)
    monkeypatch.setattr(_sysfs.Sysfs, "write", gone)
    e = run(_args(t4, tmp_path, T4, type="GRID T4-2Q", count=1))
    assert e.kind == "fail" and T4 in e.result["msg"] and "gone away" in e.result["msg"]
    # the orphan was removed before; recreating it fails too (the device is gone): reported exactly
    assert e.result["state"] == "partial" and e.result["still_applied"] == ["remove vGPU %s (type nvidia-231) from %s" % (LAB_MDEV, T4)]
    assert "STILL IN EFFECT" in e.result["msg"] and e.result["rollback_failed"][0]["error"].startswith("open for write")
    assert t4.state()["mdevs"] == {}


def test_mdevctl_failure_rolls_back(t4, tmp_path, monkeypatch):
    bad = _script(tmp_path / "mdevctl-bad", 'case "$1" in list) echo "[]";; *) echo "Error: nope" >&2; exit 1;; esac')
    monkeypatch.setattr(_sriov.HostOps, "find_tool", lambda self, name: bad if name == "mdevctl" else None)
    e = run(_args(t4, tmp_path, T4, type="GRID T4-2Q", count=1))
    assert e.kind == "fail" and "mdevctl" in e.result["msg"] and "nope" in e.result["msg"]
    assert e.result["state"] == "unchanged" and sorted(t4.state()["mdevs"]) == [LAB_MDEV]


# -- vendor-specific VFIO ---------------------------------------------------------------------------------------------
def _types(h):
    st = h.state()
    return {vf: t for vf, t in st["vgpu"].items() if t}


def test_vendor_matrix(l40, tmp_path, writes):
    args = _args(l40, tmp_path, L40, type="NVIDIA L40-8Q", count=6)
    e = run(args, check=True)
    assert e.kind == "exit", e.result
    assert e.result["changed"] and not writes and l40.state()["functions"][L40]["numvfs"] == 0
    e = run(args)
    assert e.kind == "exit", e.result
    assert e.result["gpus"][0]["type"] == "1145" and len(e.result["gpus"][0]["vgpus"]) == 6
    assert l40.state()["functions"][L40]["numvfs"] == 32
    assert sorted(_types(l40).values()) == [1145] * 6
    with open(os.path.join(l40.root, "sys/bus/pci/devices/0000:3b:00.4/nvidia/current_vgpu_type")) as f:
        assert f.read().strip() == "1145"
    del writes[:]
    assert run(args, check=True).result["changed"] is False
    e = run(args)
    assert e.result["changed"] is False and writes == []  # the card is full: the name comes from the cache
    # whole-card change to another type
    e = run(_args(l40, tmp_path, L40, type="NVIDIA L40-4Q", count=4))
    assert e.kind == "exit", e.result
    assert e.result["gpus"][0]["whole_card_change"] and sorted(_types(l40).values()) == [1143] * 4
    e = run(_args(l40, tmp_path, L40, state="absent"))
    assert e.kind == "exit" and _types(l40) == {}
    assert run(_args(l40, tmp_path, L40, state="absent")).result["changed"] is False


def test_vendor_reboot_with_boot_unit(l40, tmp_path):
    args = _args(l40, tmp_path, L40, type="NVIDIA L40-2Q", count=3)
    assert run(args).kind == "exit"
    before = _types(l40)
    text = (tmp_path / "persist/etc/systemd/system/accelops-vgpu-0000_3b_00_0.service").read_text()
    l40.reboot()
    assert _types(l40) == {} and l40.state()["functions"][L40]["numvfs"] == 0
    p = subprocess.run(["/bin/bash", "-c", exec_start(text)], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert _types(l40) == before
    assert run(args).result["changed"] is False


def test_vendor_in_use_and_bad_input(l40, tmp_path):
    assert run(_args(l40, tmp_path, L40, type="NVIDIA L40-8Q", count=2)).kind == "exit"
    vf = sorted(_types(l40))[0]
    dom = l40.mark_in_use(vf, by="domain", name="instance-00000007")
    e = run(_args(l40, tmp_path, L40, type="NVIDIA L40-4Q", count=2))
    assert e.kind == "fail" and "whole-card" in e.result["msg"] and "instance-00000007" in e.result["msg"]
    l40.release(dom)
    e = run(_args(l40, tmp_path, L40, type="NVIDIA L40-5Q", count=1))
    assert e.kind == "fail" and "NVIDIA L40-5Q" in e.result["msg"]
    e = run(_args(l40, tmp_path, L40, type="NVIDIA L40-8Q", count=33))
    assert e.kind == "fail" and "at most 32" in e.result["msg"]
    e = run(_args(l40, tmp_path, "0000:3b:00.4", type="NVIDIA L40-8Q", count=1))
    assert e.kind == "fail" and "is a VF" in e.result["msg"]


def test_vendor_einval_rolls_back_everything(l40, tmp_path):
    """Seven 8Q vGPUs do not fit (six do): the kernel refuses the seventh (EINVAL) and the run is undone,
    VFs included (sriov-manage -d)."""
    e = run(_args(l40, tmp_path, L40, type="NVIDIA L40-8Q", count=7))
    assert e.kind == "fail" and "0000:3b:01.2" in e.result["msg"] and "invalid" in e.result["msg"]
    assert e.result["state"] == "unchanged"
    assert _types(l40) == {} and l40.state()["functions"][L40]["numvfs"] == 0


@pytest.mark.parametrize("body,needle", [("sleep 30", "did not finish within 1 s"), ("echo boom >&2; exit 3", "boom")])
def test_vendor_tool_hangs_or_fails(l40, tmp_path, monkeypatch, body, needle):
    tool = _script(tmp_path / "sriov-manage", body)
    monkeypatch.setattr(_sriov.HostOps, "find_tool", lambda self, name: tool if name == "sriov-manage" else None)
    e = run(_args(l40, tmp_path, L40, type="NVIDIA L40-8Q", count=1, tool_timeout=1))
    assert e.kind == "fail" and needle in e.result["msg"] and "sriov-manage" in e.result["msg"]
    assert e.result["state"] == "unchanged" and l40.state()["functions"][L40]["numvfs"] == 0


# -- persistence through the mount (no persist_root: the host's own etc/) and the simulator's reboot ------------
def test_mdevctl_definitions_through_the_mount_come_back_at_reboot(t4):
    args = {"root": t4.root, "addresses": [T4], "type": "GRID T4-1Q", "count": 3}
    e = run(args)
    assert e.kind == "exit" and e.result["changed"], e.result
    host = accelsim.load_lab("gpu-mdev")["hostname"]        # the lab's etc/hostname names the UUIDs
    want = sorted(mdev_uuid(host, T4, "nvidia-230", i) for i in range(3))
    assert sorted(t4.state()["mdevs"]) == want
    assert sorted(os.listdir(os.path.join(t4.root, "etc", "mdevctl.d", T4))) == want
    t4.reboot()
    assert sorted(t4.state()["mdevs"]) == want and t4.state()["boot"] == 2
    assert run(args).result["changed"] is False


def test_vendor_boot_unit_through_the_mount_comes_back_at_reboot(l40):
    args = {"root": l40.root, "addresses": [L40], "type": "NVIDIA L40-2Q", "count": 3}
    e = run(args)
    assert e.kind == "exit" and e.result["changed"], e.result
    before = _types(l40)
    ran = l40.reboot()
    assert [(r["unit"], r["rc"]) for r in ran] == [("accelops-vgpu-0000_3b_00_0.service", 0)], ran
    assert _types(l40) == before and len(before) == 3
    count = len(l40.writes())
    assert run(args).result["changed"] is False and len(l40.writes()) == count


def test_mdev_kernel_busy_on_remove_through_the_mount(t4, tmp_path):
    """The kernel refuses removing the lab's mdev (EBUSY, injected): nothing was created, the message names it."""
    t4.fail_write("EBUSY", path="*/%s/remove" % LAB_MDEV)
    e = run(_args(t4, tmp_path, T4, type="GRID T4-2Q", count=2))
    assert e.kind == "fail" and LAB_MDEV in e.result["msg"] and "busy" in e.result["msg"], e.result
    assert e.result["state"] == "unchanged" and sorted(t4.state()["mdevs"]) == [LAB_MDEV]


def test_mdevctl_hangs(t4, tmp_path):
    """mdevctl hangs on define (simulated): stopped by the time limit, the vGPUs created before are removed again."""
    t4.fail_tool("mdevctl", hang="forever", args="define *")
    e = run(_args(t4, tmp_path, T4, type="GRID T4-2Q", count=1, tool_timeout=8))   # the fake's list must still fit
    assert e.kind == "fail" and "did not finish within 8 s" in e.result["msg"] and "mdevctl define" in e.result["msg"], e.result
    assert e.result["state"] == "unchanged" and sorted(t4.state()["mdevs"]) == [LAB_MDEV]


def test_vendor_boot_files_failing_undo_the_whole_run(l40):
    """Regression (host-fault sweep): a card whose type id is learnt only while running gets its boot files from a
    second plan; when they cannot be written, the VFs and types of the first plan are undone too and the result
    says so (it said unchanged while they stayed)."""
    l40.fail_write("EIO", path="*/etc/systemd/system/*")
    e = run({"root": l40.root, "addresses": [L40], "type": "NVIDIA L40-8Q", "count": 2})
    assert e.kind == "fail" and e.result["state"] == "unchanged", e.result
    assert "Input/output error" in e.result["msg"] and "the host is as it was" in e.result["msg"]
    assert l40.state()["functions"][L40]["numvfs"] == 0 and not l40.state()["vgpu"]
    assert not os.path.exists(os.path.join(l40.root, "etc/accelops/boot/accelops-vgpu-0000_3b_00_0.sh"))
