# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nvidia_mig module against the simulated A100 40GB and H100 80GB labs (plain trees: every change goes through
the fake nvidia-smi, which keeps the MIG state): check -> apply -> read back -> rerun, in-use refusal, pending MIG
mode, mig-parted configs, rollback after a failing nvidia-smi, the boot unit after a reboot."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import exec_start  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.modules import nvidia_mig  # noqa: E402

A100 = "0000:17:00.0"
H100 = "0000:19:00.0"
UNIT = "etc/systemd/system/accelops-mig-0000_19_00_0.service"


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    patch_exits(monkeypatch)


@pytest.fixture
def h100(tmp_path):
    return accelsim.render_tree("gpu-mig-h100", str(tmp_path / "h100"))


@pytest.fixture
def a100(tmp_path):
    return accelsim.render_tree("gpu-mig-a100", str(tmp_path / "a100"))


def run(args, check=False, diff=False):
    return run_module(nvidia_mig.main, args, check, diff)


def args(h, tmp_path, addr=H100, **kw):
    a = {"root": h.root, "address": addr, "persist_root": str(tmp_path / "persist")}
    a.update(kw)
    return a


def layout(h, bdf=H100):
    """The GPU's GIs as the simulator holds them: sorted [(profile name, placement, compute instances)]."""
    m = h.state()["mig"][bdf]
    return sorted((g["name"], g["placement"], len(g["compute_instances"])) for g in m["gpu_instances"])


def names(h, bdf=H100):
    return sorted(n for n, _p, _c in layout(h, bdf))


def test_check_apply_readback_rerun(h100, tmp_path):
    want = "3g.40gb + 2g.20gb + 2 x 1g.10gb"
    before = layout(h100)
    r = run(args(h100, tmp_path, layout=want), check=True, diff=True)
    assert r.kind == "exit" and r.result["changed"]
    assert layout(h100) == before and not (tmp_path / "persist" / UNIT).exists()  # check mode changes nothing
    check_plan = [s["description"] for s in r.result["plan"]]
    assert check_plan[0] == "create MIG GPU instances 1 x 2g.20gb with default compute instances on GPU 0"
    assert "1 x 2g.20gb" in r.result["diff"]["after"]
    r = run(args(h100, tmp_path, layout=want))
    assert r.kind == "exit" and r.result["changed"]
    assert [s["description"] for s in r.result["plan"]] == check_plan  # the same plan ran
    assert r.result["gpu"]["kept"] == [2, 7, 8]  # nothing destroyed: the new instance fits beside them
    assert layout(h100) == [("1g.10gb", "0:1", 1), ("1g.10gb", "1:1", 1), ("2g.20gb", "2:2", 1), ("3g.40gb", "4:4", 1)]
    assert sorted(g["profile"] for g in r.result["gpu"]["gpu_instances"]) == ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]
    assert r.result["reset_required"] is False and r.result["pending"] is None
    unit = (tmp_path / "persist" / UNIT).read_text()
    assert "Before=libvirtd.service virtqemud.service nova-compute.service accelops-vgpu-0000_19_00_0.service" in unit
    r2 = run(args(h100, tmp_path, layout=[{"profile": "3g.40gb"}, {"profile": "2g.20gb", "count": 1},
                                          {"profile": "1g.10gb", "count": 2}]))
    assert r2.kind == "exit" and not r2.result["changed"] and r2.result["plan"] == []


def test_rebuild_destroys_compute_then_gpu_instances(h100, tmp_path):
    r = run(args(h100, tmp_path, layout="7 x 1g.10gb"))
    assert r.kind == "exit", r.result
    plan = [s["description"] for s in r.result["plan"]]
    assert plan[:3] == ["destroy the compute instances of MIG GPU instances 2 (3g.40gb) on GPU 0",
                        "destroy MIG GPU instances 2 (3g.40gb) on GPU 0",
                        "create MIG GPU instances 5 x 1g.10gb with default compute instances on GPU 0"]
    assert names(h100) == ["1g.10gb"] * 7 and all(c == 1 for _n, _p, c in layout(h100))
    assert any("destroy MIG GPU instances" in line for line in r.result["audit"])


def test_in_use_instance_refuses_and_names_the_evidence(a100, tmp_path):
    before = layout(a100, A100)
    r = run(args(a100, tmp_path, A100, layout="7 x 1g.5gb"))
    assert r.kind == "fail"
    msg = r.result["msg"]
    assert "refusing to change the MIG layout of GPU 0" in msg
    assert "0000:17:00.0/gi2" in msg and "/dev/nvidia-caps/nvidia-cap21" in msg and "python3" in msg
    assert [b["target"] for b in r.result["blocked"]] == ["0000:17:00.0/gi2"]
    assert layout(a100, A100) == before  # refused before anything changed
    # a layout that keeps the in-use 3g.20gb is fine: only the others go
    r = run(args(a100, tmp_path, A100, layout="3g.20gb + 4 x 1g.5gb"))
    assert r.kind == "exit", r.result.get("msg")
    assert names(a100, A100) == ["1g.5gb"] * 4 + ["3g.20gb"]
    assert ("3g.20gb", "4:4", 1) in layout(a100, A100)


def test_domain_holding_a_vgpu_of_the_gpu_blocks_every_instance(h100, tmp_path):
    h100.mark_in_use(H100, by="domain", name="instance-0000002a")
    r = run(args(h100, tmp_path, layout="7 x 1g.10gb"))
    assert r.kind == "fail" and "running domain instance-0000002a" in r.result["msg"]
    r = run(args(h100, tmp_path, layout="7 x 1g.10gb", force=True))
    assert r.kind == "fail"  # force never overrides a running domain


def test_enable_pending_while_the_gpu_is_held_then_layout_at_boot(h100, tmp_path):
    assert run(args(h100, tmp_path, mode="disabled")).kind == "exit"
    assert h100.state()["mig"][H100]["mode"] == "Disabled"
    assert not (tmp_path / "persist" / UNIT).exists()
    pid = h100.mark_in_use("/dev/nvidia0", by="process", name="nv-hostengine")
    r = run(args(h100, tmp_path, layout="4 x 1g.20gb"))
    assert r.kind == "exit", r.result.get("msg")
    assert r.result["reset_required"] is True and "pending" in r.result["pending"]
    assert r.result["gpu"]["mode_current"] == "Disabled" and r.result["gpu"]["mode_pending"] == "Enabled"
    assert (tmp_path / "persist" / UNIT).exists() is False  # the layout's ids are read once MIG is in effect
    h100.release(pid)
    h100.reboot()  # the pending mode takes effect; no instance exists
    assert h100.state()["mig"][H100]["mode"] == "Enabled" and layout(h100) == []
    r = run(args(h100, tmp_path, layout="4 x 1g.20gb"))
    assert r.kind == "exit" and r.result["changed"] and names(h100) == ["1g.20gb"] * 4
    assert run(args(h100, tmp_path, layout="4 x 1g.20gb")).result["changed"] is False


def test_enable_in_effect_at_once_creates_the_layout_in_the_same_run(h100, tmp_path):
    assert run(args(h100, tmp_path, mode="disabled")).kind == "exit"
    r = run(args(h100, tmp_path, layout="7g.80gb"), check=True)
    assert r.kind == "exit" and "created once MIG mode is in effect" in r.result["pending"]
    r = run(args(h100, tmp_path, layout="7g.80gb"))
    assert r.kind == "exit", r.result.get("msg")
    assert r.result["reset_required"] is False and names(h100) == ["7g.80gb"]
    assert r.result["plan"][0]["description"] == "enable MIG mode on GPU 0 (0000:19:00.0)"
    assert (tmp_path / "persist" / UNIT).exists()


def test_reboot_loses_the_layout_and_the_boot_unit_recreates_it(h100, tmp_path):
    assert run(args(h100, tmp_path, layout="2 x 2g.20gb + 3 x 1g.10gb")).kind == "exit"
    want = names(h100)
    h100.reboot()
    assert layout(h100) == []
    cmd = exec_start((tmp_path / "persist" / UNIT).read_text())
    p = subprocess.run(["/bin/sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert p.returncode == 0, p.stdout
    assert names(h100) == want and all(c == 1 for _n, _p, c in layout(h100))
    p = subprocess.run(["/bin/sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert p.returncode == 0 and b"left as they are" in p.stdout  # rerun at the same boot: nothing
    assert run(args(h100, tmp_path, layout="2 x 2g.20gb + 3 x 1g.10gb")).result["changed"] is False


def test_failed_create_rolls_back_to_the_old_layout(h100, tmp_path):
    before = names(h100)
    h100.fail_tool("nvidia-smi", rc=255, args="mig -cgi 19,19,19,19,19 *", stderr="",
                   stdout="Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Resources\n"
                          "Failed to create GPU instances: Insufficient Resources\n")
    r = run(args(h100, tmp_path, layout="7 x 1g.10gb", persistent=False))
    assert r.kind == "fail" and r.result["state"] == "unchanged", r.result
    assert "Insufficient Resources" in r.result["msg"]
    assert r.result["rolled_back"] == ["destroy MIG GPU instances 2 (3g.40gb) on GPU 0",
                                       "destroy the compute instances of MIG GPU instances 2 (3g.40gb) on GPU 0"]
    assert names(h100) == before and all(c == 1 for _n, _p, c in layout(h100))


def test_mig_parted_config_mapping(h100, tmp_path):
    # the module takes the parsed mapping (a file is read and parsed by the action: tests/unit/plugins/action)
    cfg = yaml.safe_load("""version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false

  # the H100 80GB balanced layout of mig-parted's default config
  all-balanced:
    - device-filter: ["0x233010DE", "0x233110DE"]
      devices: all
      mig-enabled: true
      mig-devices:
        "1g.10gb": 2
        "2g.20gb": 1
        "3g.40gb": 1

  custom:
    - devices: [1, 2]
      mig-enabled: false
""")
    r = run(args(h100, tmp_path, mig_parted_config=cfg, config_name="all-balanced"))
    assert r.kind == "exit", r.result.get("msg")
    assert names(h100) == ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]
    r = run(args(h100, tmp_path, mig_parted_config=cfg, config_name="custom"))
    assert r.kind == "fail" and "mig-configs.custom has no entry for GPU 0" in r.result["msg"]
    r = run(args(h100, tmp_path, mig_parted_config=cfg, config_name="nope"))
    assert r.kind == "fail" and r.result["msg"].startswith("config_name: 'nope' is not in the mig-parted config")
    d = {"version": "v1", "mig-configs": {"all-1g": [{"devices": [0], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]}}
    r = run(args(h100, tmp_path, mig_parted_config=d, config_name="all-1g"))
    assert r.kind == "exit" and names(h100) == ["1g.10gb"] * 7
    r = run(args(h100, tmp_path, mig_parted_config=str(tmp_path / "config.yaml"), config_name="all-1g"))
    assert r.kind == "fail" and r.result["msg"].startswith("mig_parted_config: the module takes the parsed mapping")


@pytest.mark.parametrize("extra,needle", [
    ({"layout": "7 x 1g.11gb"}, "layout: this GPU offers no MIG profile 1g.11gb"),
    ({"layout": "seven 1g"}, "layout: 'seven 1g' is not a MIG profile name"),
    ({"layout": [{"profile": "1g.10gb", "count": 9}]}, "layout[0].count: 9 is out of range"),
    ({"layout": [{"profil": "1g.10gb"}]}, "layout[0]: expected {profile: NAME, count: N}"),
    ({"layout": "2 x 3g.40gb + 1 x 1g.10gb"}, "does not fit on GPU 0"),
    ({"layout": "1g.10gb", "mode": "disabled"}, "layout: a layout needs mode: enabled"),
    ({"address": "0000:99:00.0", "layout": "1g.10gb"}, "address: nvidia-smi does not list a GPU at 0000:99:00.0"),
    ({"address": "zz", "layout": "1g.10gb"}, "address: 'zz' is not a PCI address"),
    # found by the hostile-input sweep: an empty address was a traceback
    ({"address": "", "layout": "1g.10gb"}, "address: '' is not a PCI address"),
    ({}, "one of layout, mig_parted_config or mode is needed"),
])
def test_bad_input_names_the_option(h100, tmp_path, extra, needle):
    before = layout(h100)
    r = run(args(h100, tmp_path, **extra))
    assert r.kind == "fail" and needle in r.result["msg"], r.result["msg"]
    assert layout(h100) == before


def test_gpu_index_and_not_mig_capable(tmp_path):
    h = accelsim.render_tree("gpu-vendor-vfio", str(tmp_path / "l40"))
    r = run({"root": h.root, "gpu": 0, "layout": "1g.10gb", "persist_root": str(tmp_path / "p")})
    assert r.kind == "fail" and "is not MIG capable" in r.result["msg"]
    r = run({"root": h.root, "gpu": 0, "address": "3b:00.0", "layout": "1g.10gb"})
    assert r.kind == "fail" and "mutually exclusive" in r.result["msg"]


def test_disable_destroys_everything_first(h100, tmp_path):
    r = run(args(h100, tmp_path, mode="disabled"), check=True)
    plan = [s["description"] for s in r.result["plan"]]
    assert plan[-1] == "disable MIG mode on GPU 0 (0000:19:00.0)" and plan[0].startswith("destroy the compute instances")
    r = run(args(h100, tmp_path, mode="disabled"))
    assert r.kind == "exit" and h100.state()["mig"][H100]["mode"] == "Disabled"
    assert run(args(h100, tmp_path, mode="disabled")).result["changed"] is False
    assert os.path.exists(h100.path("/proc/driver/nvidia-caps/mig-minors"))


def test_pending_disable_is_reported_and_not_asked_again(h100, tmp_path):
    pid = h100.mark_in_use("/dev/nvidia0", by="process", name="dcgm")
    r = run(args(h100, tmp_path, mode="disabled"))
    assert r.kind == "exit" and r.result["changed"] and r.result["reset_required"] is True
    assert layout(h100) == [] and h100.state()["mig"][H100]["pending"] == "Disabled"
    r = run(args(h100, tmp_path, mode="disabled"))
    assert r.kind == "exit" and not r.result["changed"] and r.result["reset_required"] is True
    assert "MIG mode Disabled is pending" in r.result["pending"]
    h100.release(pid)


@pytest.mark.parametrize("blank,refusal", [
    ("", "an empty layout is refused; write none for no GPU instance"),
    ("\n", "an empty layout is refused; write none for no GPU instance"),
    ("  ", "an empty layout is refused; write none for no GPU instance"),
    ([""], "an empty layout is refused; write none for no GPU instance"),
    (["\n"], "an empty layout is refused; write none for no GPU instance"),
    # found by the hostile-input sweep at 3x (these destroyed GPU instances 2, 7 and 8)
    ({}, "an empty mapping is refused; write none for no GPU instance"),
    ([], "an empty list is refused; write none for no GPU instance"),
    ("None", "'None' is refused (a template renders a missing value as None); write none, in lower case"),
])
def test_a_blank_layout_is_refused_never_destroys(h100, tmp_path, blank, refusal):
    """Issue 34 #8: a blank layout once planned "destroy MIG GPU instances 2, 7, 8"; destroying them all must be asked
    for in words (layout: none)."""
    before = h100.state()["mig"][H100]
    r = run(args(h100, tmp_path, layout=blank))
    assert r.kind == "fail" and refusal in r.result["msg"], r.result
    assert r.result["msg"].startswith("layout")
    assert h100.state()["mig"][H100] == before and not r.result.get("plan")
    r = run(args(h100, tmp_path, layout="none"), check=True)
    assert r.kind == "exit" and r.result["changed"], r.result
    assert any(s["description"].startswith("destroy MIG GPU instances") for s in r.result["plan"])


def test_mig_parted_subsystem_filter_and_the_ids_read_back(h100, tmp_path):
    """A subsystem-qualified device filter picks this board (10de:2330, subsystem 10de:16c1), the last matching entry
    applies, and the result's GPU instances are the ids and placements the driver chose (read back with -lgi)."""
    config = {"version": "v1", "mig-configs": {"mixed": [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"7g.80gb": 1}},
        {"devices": "all", "device-filter": ["0x233010DE:0x17A610DE"], "mig-enabled": False},
        {"devices": "all", "device-filter": ["0x233010DE:0x16C110DE"], "mig-enabled": True,
         "mig-devices": {"3g.40gb": 1, "1g.10gb": 2, "1g.10gb+me": 1}}]}}
    r = run(args(h100, tmp_path, mig_parted_config=config, config_name="mixed"))
    assert r.kind == "exit", r.result.get("msg")
    assert names(h100) == ["1g.10gb", "1g.10gb", "1g.10gb+me", "3g.40gb"]
    got = sorted((g["id"], g["profile"], g["placement"]) for g in r.result["gpu"]["gpu_instances"])
    assert got == sorted((g["id"], g["name"], g["placement"]) for g in h100.state()["mig"][H100]["gpu_instances"])
