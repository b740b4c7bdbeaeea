# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""accelerator_converge against a FUSE-mounted lab host (lab-all), where writes react like the kernel.

Matrix: check mode (the plan and the drift, nothing changed) -> real -> independent read-back -> check again (no
change) -> real again (no change, no write); plus safe mode on a card in use, Placement evidence, ``cards``, a plan
that fails (nothing changed on any card), the allow-list, the lock held by another converge, bad input.
"""

from __future__ import annotations

import fcntl
import os

import pytest

from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")
from accelsim.testing import require_fuse  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge  # noqa: E402

NIC = "0000:d8:00.0"
T4 = "0000:18:00.0"
DFL = "0000:86:00.0"
DFL_IFACE = "9346116df8f65a1ba2b6f1ec3a8a0b5e"
AFU_B = "aaaabbbbccccddddeeeeffff00001111"
NIC_ENTRY = {"name": "x710-vf", "match": {"address": NIC}, "vfs": {"count": 4, "driver": "vfio-pci"}}
T4_ENTRY = {"name": "t4-4q", "match": {"family": "gpu", "vendor_id": "10de", "device_id": "1eb8"},
            "vgpu": {"type": "GRID T4-4Q", "count": 2}}


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    require_fuse()   # every test here runs on a FUSE mount (skips without FUSE, fails in CI)
    patch_exits(monkeypatch)


@pytest.fixture
def lab(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with accelsim.mount("lab-all", str(mnt), state_dir=str(tmp_path / "state")) as h:
        yield h


def args(h, tmp_path, functions, **kw):
    a = {"root": h.root, "functions": functions, "persist_root": str(tmp_path / "persist"),
         "lock_dir": str(tmp_path / "lock")}
    a.update(kw)
    return a


def run(a, check=False):
    return run_module(accelerator_converge.main, a, check)


def numvfs(h):
    with open(os.path.join(h.root, "sys/bus/pci/devices", NIC, "sriov_numvfs")) as f:
        return int(f.read())


def statuses(result):
    return dict((c["address"], c["status"]) for c in result["cards"])


def test_check_real_readback_rerun(lab, tmp_path):
    a = args(lab, tmp_path, [NIC_ENTRY, T4_ENTRY])
    before = numvfs(lab)
    w0 = len(lab.writes())
    planned = run(a, check=True)
    assert planned.kind == "exit" and planned.result["changed"]
    assert statuses(planned.result) == {NIC: "todo", T4: "todo"}
    assert planned.result["planned"][NIC]["steps"][0] == "create 4 VFs on %s (sriov_numvfs %d -> 4)" % (NIC, before)
    assert [d.split(":")[0] for d in planned.result["drift"]] == ["host %s" % NIC[:4], "host %s" % T4[:4]]
    assert len(lab.writes()) == w0 and numvfs(lab) == before          # check mode wrote nothing

    done = run(a)
    assert done.kind == "exit" and done.result["changed"], done.result
    assert done.result["verify"] == {NIC: True, T4: True} and done.result["kept_drained"] == []
    assert done.result["applied"][NIC]["applied"] == planned.result["planned"][NIC]["steps"]
    assert numvfs(lab) == 4
    pf_dir = os.path.join(lab.root, "sys/bus/pci/devices", NIC)
    drivers = [os.path.basename(os.readlink(os.path.join(pf_dir, "virtfn%d" % i, "driver"))) for i in range(4)]
    assert drivers == ["vfio-pci"] * 4
    mdevs = os.listdir(os.path.join(lab.root, "sys/bus/mdev/devices"))
    assert len(mdevs) == 2
    # the Placement item of the host as it is now: the function trait of the cards that carry it
    assert done.result["overrides"][NIC]["traits"] == ["CUSTOM_FUNCTION_X710_VF"]
    assert [r["address"] for r in done.result["discovery"]["accelerators"]].count(NIC) == 1

    again = run(a, check=True)
    assert not again.result["changed"] and statuses(again.result) == {NIC: "ok", T4: "ok"}
    assert again.result["drift"] == []
    w = len(lab.writes())
    third = run(a)
    assert third.kind == "exit" and not third.result["changed"] and third.result["applied"] == {}
    assert len(lab.writes()) == w


def test_safe_mode_blocks_a_card_in_use_and_converges_the_rest(lab, tmp_path):
    run(args(lab, tmp_path, [dict(NIC_ENTRY, vfs={"count": 2, "driver": "vfio-pci"})]))
    vf = os.path.basename(os.readlink(os.path.join(lab.root, "sys/bus/pci/devices", NIC, "virtfn0")))
    accelsim.mark_in_use(lab, vf, by="domain", name="instance-0000002a")
    o = run(args(lab, tmp_path, [NIC_ENTRY, T4_ENTRY]))
    assert o.kind == "exit"
    assert statuses(o.result) == {NIC: "blocked", T4: "todo"}
    assert any("instance-0000002a" in line for line in o.result["cards"][0]["in_use_by"])
    assert numvfs(lab) == 2 and o.result["verify"] == {T4: True}


def test_placement_evidence_blocks_and_cards_restricts(lab, tmp_path):
    a = args(lab, tmp_path, [NIC_ENTRY, T4_ENTRY],
             placement_in_use={NIC: ["placement provider h_%s has usages SRIOV_NET_VF=1" % NIC]})
    o = run(a)
    assert statuses(o.result) == {NIC: "blocked", T4: "todo"}
    assert o.result["cards"][0]["in_use_by"] == ["placement provider h_%s has usages SRIOV_NET_VF=1" % NIC]
    assert numvfs(lab) == 0
    only = run(args(lab, tmp_path, [NIC_ENTRY], cards=[]))
    assert only.result["applied"] == {} and numvfs(lab) == 0      # no card named: nothing changed


def test_a_plan_that_fails_changes_no_card(lab, tmp_path):
    gbs = accelsim.make_gbs(str(tmp_path / "b.gbs"), DFL_IFACE, AFU_B)
    fpga = {"name": "afu-b", "match": {"address": DFL},
            "fpga": {"bitstream": gbs, "sha256": "0" * 64, "function_id": AFU_B}}   # not the file's checksum
    w0 = len(lab.writes())
    o = run(args(lab, tmp_path, [NIC_ENTRY, fpga]))
    assert o.kind == "fail"
    assert o.result["msg"].startswith("nothing was changed: the plan failed for %s (" % DFL)
    assert "sha256" in o.result["msg"]
    assert statuses(o.result) == {NIC: "todo", DFL: "todo"}
    assert o.result["applied"] == {} and numvfs(lab) == 0 and len(lab.writes()) == w0


def test_allow_list_refuses_before_reading(lab, tmp_path):
    o = run(args(lab, tmp_path, [NIC_ENTRY, T4_ENTRY], allowed_functions=["x710-vf"]))
    assert o.kind == "fail" and "outside its allow-list" in o.result["msg"]
    assert "t4-4q: function name not in accelerator_host_allowed_functions" in o.result["msg"]
    assert o.result["cards"] == [] and o.result["discovery"] is None


def test_a_held_lock_names_its_holder_and_nothing_is_read(lab, tmp_path):
    lock_dir = tmp_path / "lock"
    lock_dir.mkdir()
    fd = os.open(str(lock_dir / "converge.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    (lock_dir / "converge.owner").write_text("pid=4242\ntoken=other-run\n")
    try:
        o = run(args(lab, tmp_path, [NIC_ENTRY], lock_wait=1))
    finally:
        os.close(fd)
    assert o.kind == "fail"
    assert "locked by another converge (pid=4242, token=other-run)" in o.result["msg"]
    assert "waited 1 s" in o.result["msg"] and o.result["discovery"] is None and numvfs(lab) == 0
    ok = run(args(lab, tmp_path, [NIC_ENTRY], lock_wait=1))            # released: the next run takes it
    assert ok.kind == "exit" and ok.result["lock"]["path"] == str(lock_dir / "converge.lock")
    assert not (lock_dir / "converge.owner").exists()                 # the run removed its owner record


@pytest.mark.parametrize("bad, option", [
    ({"functions": [{"name": "x", "match": {"address": NIC}, "vfs": {"count": -1}}]}, "functions[0]"),
    ({"lock_wait": -5}, "lock_wait"),
    ({"placement_in_use": {NIC: "not a list"}}, "placement_in_use"),
    ({"fpga_timeout": 0}, "fpga_timeout"),
])
def test_bad_input_names_the_option(lab, tmp_path, bad, option):
    a = args(lab, tmp_path, [NIC_ENTRY])
    a.update(bad)
    o = run(a)
    assert o.kind == "fail" and option in o.result["msg"], o.result["msg"]


def test_the_plan_reads_the_hosts_use_once(lab, tmp_path, monkeypatch):
    # was: each card's engine (HostOps) scanned libvirt and /proc again after the converge's discovery had
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _inuse  # pylint: disable=import-outside-toplevel
    scans = []
    collect = _inuse.collect

    def counted(*a, **kw):
        scans.append(a[1:2])
        return collect(*a, **kw)
    monkeypatch.setattr(_inuse, "collect", counted)
    o = run(args(lab, tmp_path, [NIC_ENTRY, T4_ENTRY]), check=True)
    assert o.kind == "exit" and statuses(o.result)[NIC] == "todo" and statuses(o.result)[T4] == "todo", o.result
    assert len(scans) == 1, scans


@pytest.mark.parametrize("option", ["lock_dir", "persist_root", "libvirt_run_dir"])
def test_a_relative_host_path_is_refused_and_nothing_is_made_in_the_working_directory(lab, tmp_path, monkeypatch,
                                                                                      option):
    # was: a relative lock_dir was made (with its converge.lock) under the module's working directory
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    o = run(args(lab, tmp_path, [NIC_ENTRY], **{option: "-254"}))
    assert o.kind == "fail" and o.result["msg"].startswith(option + " must be an absolute host path"), o.result
    assert os.listdir(str(cwd)) == [] and numvfs(lab) == 0


def test_a_mig_layout_converges_through_the_same_plan_and_verify(tmp_path):
    # the H100 lab: MIG on, 3g.40gb + 2 x 1g.10gb, nothing in use; the declaration wants 2 x 3g.40gb
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with accelsim.mount("gpu-mig-h100", str(mnt), state_dir=str(tmp_path / "state")) as h:
        entry = {"name": "h100-halves", "match": {"address": "0000:19:00.0"}, "mig": {"layout": "2 x 3g.40gb"}}
        a = args(h, tmp_path, [entry])
        w0 = len(h.writes())
        planned = run(a, check=True)
        assert planned.kind == "exit" and statuses(planned.result) == {"0000:19:00.0": "todo"}, planned.result
        assert planned.result["planned"]["0000:19:00.0"]["changed"] and len(h.writes()) == w0
        done = run(a)
        assert done.kind == "exit" and done.result["verify"] == {"0000:19:00.0": True}, done.result
        again = run(a, check=True)
        assert statuses(again.result) == {"0000:19:00.0": "ok"} and not again.result["changed"]


def test_a_bridge_named_by_address_is_reported_as_a_bridge(lab, tmp_path):
    o = run(args(lab, tmp_path, [{"name": "on-bridge", "match": {"address": "0000:3a:00.0"}, "passthrough": {}}]),
            check=True)
    assert o.kind in ("exit", "fail")
    assert "on-bridge: 0000:3a:00.0 is a PCI bridge (class 0604), not an accelerator" in o.result["problems"][0]
