# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""MIG-backed vGPU through the vgpu module on the FUSE-mounted gpu-mig-vgpu lab (H100 80GB in MIG mode, vendor-specific
VFIO): the layout with nvidia_mig, then check -> apply -> read back -> rerun, refusals naming the option, rollback
after a kernel refusal, and the boot units (MIG layout, then vGPUs) after a reboot."""

from __future__ import annotations

import pytest

from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")
from accelsim.testing import mounts  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.modules import nvidia_mig, vgpu  # noqa: E402

PF = "0000:1b:00.0"
UNITS = "persist/etc/systemd/system/"


@pytest.fixture
def h100(tmp_path, monkeypatch):
    """The lab on a FUSE mount (skipped without FUSE, failed in CI), its layout's boot unit written."""
    patch_exits(monkeypatch)
    with mounts(tmp_path) as make:
        h = make("gpu-mig-vgpu")
        e = run_module(nvidia_mig.main, {"root": h.root, "address": PF, "layout": "3g.40gb + 2 x 1g.10gb",
                                         "persist_root": str(tmp_path / "persist")})
        assert e.kind == "exit", e.result
        yield h


def _vgpu(h, tmp_path, check=False, **kw):
    a = {"root": h.root, "addresses": [PF], "persist_root": str(tmp_path / "persist")}
    a.update(kw)
    return run_module(vgpu.main, a, check, False)


def _backing(h):
    """{GI id: VF whose vGPU it backs} as the simulated driver holds it."""
    return dict((gi["id"], gi.get("vgpu_vf")) for gi in h.state()["mig"][PF]["gpu_instances"])


def _held(h):
    """[(GI profile, VF whose vGPU it backs)], ids left out (the driver chooses them anew at each boot)."""
    return sorted((gi["name"], gi.get("vgpu_vf") or "") for gi in h.state()["mig"][PF]["gpu_instances"])


def test_check_apply_readback_rerun(h100, tmp_path):
    e = _vgpu(h100, tmp_path, check=True, type="NVIDIA H100XM-1-10C", count=2)
    assert e.kind == "exit" and e.result["changed"], e.result
    plan = [s["description"] for s in e.result["plan"]]
    assert plan[:3] == ["enable the VFs of %s (sriov-manage -e)" % PF, "set vGPU type 1100 on VF 0000:1b:00.4",
                        "set vGPU type 1100 on VF 0000:1b:00.5"]
    assert e.result["gpus"][0]["mig_profile"] == "1g.10gb"
    assert h100.state()["vgpu"] == {} and h100.state()["functions"][PF]["numvfs"] == 0, "check mode changes nothing"
    e = _vgpu(h100, tmp_path, type="NVIDIA H100XM-1-10C", count=2)
    assert e.kind == "exit" and e.result["changed"], e.result
    assert [s["description"] for s in e.result["plan"]] == plan, "the run is the plan check mode showed, boot unit included"
    assert any("accelops-vgpu-0000_1b_00_0.service" in d for d in plan), "the type id came from nvidia-smi in check mode"
    assert _backing(h100) == {2: None, 7: "0000:1b:00.4", 8: "0000:1b:00.5"}
    assert e.result["gpus"][0]["vgpus"] == ["0000:1b:00.4", "0000:1b:00.5"] and e.result["gpus"][0]["type"] == "1100"
    again = _vgpu(h100, tmp_path, type="NVIDIA H100XM-1-10C", count=2)
    assert again.kind == "exit" and again.result["changed"] is False, again.result["plan"]
    unit = (tmp_path / UNITS / "accelops-vgpu-0000_1b_00_0.service").read_text()
    assert "After=systemd-udev-settle.service systemd-modules-load.service accelops-mig-0000_1b_00_0.service" in unit
    # another MIG-backed type replaces them: each vGPU holds its own instance, so no whole-card change
    e = _vgpu(h100, tmp_path, type="NVIDIA H100XM-3-40C", count=1)
    assert e.kind == "exit" and not e.result["gpus"][0]["whole_card_change"], e.result
    assert _backing(h100) == {2: "0000:1b:00.4", 7: None, 8: None}
    e = _vgpu(h100, tmp_path, state="absent")
    assert e.kind == "exit" and _backing(h100) == {2: None, 7: None, 8: None} and h100.state()["vgpu"] == {}


@pytest.mark.parametrize("kw,needle", [
    ({"type": "NVIDIA H100XM-1-10C", "count": 3},
     "count: %s has 2 GPU instance(s) of profile 1g.10gb (GI 7, GI 8) for vGPU type NVIDIA H100XM-1-10C; 3 asked" % PF),
    ({"type": "NVIDIA H100XM-2-20C", "count": 1}, "count: %s has 0 GPU instance(s) of profile 2g.20gb (none)" % PF),
    ({"type": "NVIDIA H100XM-10C", "count": 1}, "type: NVIDIA H100XM-10C is not a MIG-backed vGPU type"),
    # an id no VF lists (the VFs are off): nvidia-smi vgpu -s names it H100-7-80C, whose 7g.80gb has no instance
    ({"type": "1106", "count": 1}, "count: %s has 0 GPU instance(s) of profile 7g.80gb (none) for vGPU type NVIDIA H100XM-7-80C" % PF),
    ({"type": "9999", "count": 1}, "type: %s is in MIG mode and neither its VFs nor nvidia-smi (vgpu -s -v) list vGPU type "
                                   "9999" % PF),
])
def test_refused_before_anything_changes(h100, tmp_path, kw, needle):
    e = _vgpu(h100, tmp_path, **kw)
    assert e.kind == "fail" and needle in e.result["msg"], e.result
    assert h100.state()["vgpu"] == {} and h100.state()["functions"][PF]["numvfs"] == 0


def test_no_free_instance_once_a_vgpu_holds_it(h100, tmp_path):
    assert _vgpu(h100, tmp_path, type="NVIDIA H100XM-3-40C", count=1).kind == "exit"
    e = _vgpu(h100, tmp_path, type="NVIDIA H100XM-3-40C", count=2)
    assert e.kind == "fail" and "has 1 GPU instance(s) of profile 3g.40gb (GI 2)" in e.result["msg"]
    assert _backing(h100)[2] == "0000:1b:00.4", "the vGPU that was there stays"


def test_mig_backed_type_on_a_gpu_not_in_mig_mode(h100, tmp_path):
    assert run_module(nvidia_mig.main, {"root": h100.root, "address": PF, "mode": "disabled"}).kind == "exit"
    e = _vgpu(h100, tmp_path, type="NVIDIA H100XM-1-10C", count=1)
    assert e.kind == "fail" and "is not in MIG mode (mig.mode.current Disabled)" in e.result["msg"], e.result
    assert e.result["msg"].startswith("type: ")


def test_kernel_refusal_rolls_back_and_frees_the_instances(h100, tmp_path):
    h100.fail_write("EINVAL", path="*/0000:1b:00.5/nvidia/current_vgpu_type")
    e = _vgpu(h100, tmp_path, type="NVIDIA H100XM-1-10C", count=2)
    assert e.kind == "fail" and e.result["state"] == "unchanged", e.result
    assert h100.state()["vgpu"] == {} and _backing(h100) == {2: None, 7: None, 8: None}
    assert h100.state()["functions"][PF]["numvfs"] == 0


def test_reboot_brings_back_the_layout_then_the_vgpus(h100, tmp_path):
    # boot files on the host's own disk (under the mount), where the simulated boot runs the enabled units
    assert run_module(nvidia_mig.main, {"root": h100.root, "address": PF, "layout": "3g.40gb + 2 x 1g.10gb"}).kind == "exit"
    assert run_module(vgpu.main, {"root": h100.root, "addresses": [PF], "type": "NVIDIA H100XM-1-10C", "count": 2}).kind == "exit"
    before = _held(h100)
    ran = h100.reboot()
    assert [(u["unit"], u["rc"]) for u in ran] == [
        ("accelops-mig-0000_1b_00_0.service", 0), ("accelops-vgpu-0000_1b_00_0.service", 0)], ran
    assert _held(h100) == before  # the driver chose the GI ids again: the same profiles back the same VFs
    again = run_module(vgpu.main, {"root": h100.root, "addresses": [PF], "type": "NVIDIA H100XM-1-10C", "count": 2})
    assert again.result["changed"] is False, again.result["plan"]


def test_a_layout_change_is_refused_while_a_vgpu_holds_an_instance(h100, tmp_path):
    # 7 x 1g.10gb keeps GIs 7 and 8 and must destroy GI 2, which backs the H100-3-40C vGPU: nvidia_mig's plan reads
    # the vGPUs (nvidia-smi vgpu -q) and refuses before any change, with force too (the driver would refuse as well)
    assert _vgpu(h100, tmp_path, type="NVIDIA H100XM-3-40C", count=1).kind == "exit"
    before = h100.state()["mig"][PF]["gpu_instances"]
    for force in (False, True):
        e = run_module(nvidia_mig.main, {"root": h100.root, "address": PF, "layout": "7 x 1g.10gb", "force": force})
        assert e.kind == "fail", e.result
        assert "MIG GPU instance 2 (3g.40gb" in e.result["msg"] and "would be destroyed and is in use" in e.result["msg"]
        assert "vGPU NVIDIA H100XM-3-40C on VF 0000:1b:00.4 (nvidia-smi vgpu -q: GPU Instance ID 2)" in e.result["msg"]
        assert "pid None" not in e.result["msg"]
        assert not any("-dci" in r["argv"] or "-dgi" in r["argv"] for r in (e.result.get("tool") or {}).get("runs", [])), \
            "refused before the tool destroys anything"
        assert h100.state()["mig"][PF]["gpu_instances"] == before
    assert _backing(h100) == {2: "0000:1b:00.4", 7: None, 8: None}
    # disabling MIG would destroy every GPU instance: refused the same way
    e = run_module(nvidia_mig.main, {"root": h100.root, "address": PF, "mode": "disabled"})
    assert e.kind == "fail" and "GPU Instance ID 2" in e.result["msg"], e.result
    assert h100.state()["mig"][PF]["mode"] == "Enabled"
