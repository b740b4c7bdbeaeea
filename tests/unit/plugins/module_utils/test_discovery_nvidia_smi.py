# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Discovery with the simulator's nvidia-smi (real output layouts): MIG state and instances, and vGPU type
names that no VF lists any more."""

from __future__ import annotations

import copy

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import nvidia, nvidia_smi  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

L40 = "0000:3b:00.0"
A100 = "0000:af:00.0"
MIG = {"mode": "Enabled", "pending": "Enabled", "gpu_instances": [
    {"id": 1, "profile_id": 9, "name": "3g.40gb", "placement": "0:4",
     "compute_instances": [{"id": 0, "profile_id": 2, "name": "3g.40gb", "placement": "0:3"},
                           {"id": 1, "profile_id": 0, "name": "1c.3g.40gb", "placement": "3:1"}]},
    {"id": 9, "profile_id": 19, "name": "1g.10gb", "placement": "4:1"}]}


# What an A100 80GB (10de:20b5) with MIG above (3g.40gb at 0:4, 1g.10gb at 4:1) offers: memory slices 5-7 and three
# compute slices are free, so two more 1g.10gb fit (at 5 and 6), the one 1g.10gb+me, one 1g.20gb (at 6) and
# nothing larger. Profile ids, placements and sizes: NVIDIA's MIG user guide (A100 table, 80GB names).
def _p(pid, name, free, total, mem, compute, size, starts):
    return {"id": pid, "name": name, "instances_free": free, "instances_total": total, "memory_gib": mem,
            "compute_slices": compute, "memory_slices": size, "placements": starts}


A100_80GB_PROFILES = [
    _p(19, "1g.10gb", 2, 7, 9.5, 1, 1, [0, 1, 2, 3, 4, 5, 6]),
    _p(20, "1g.10gb+me", 1, 1, 9.5, 1, 1, [0, 1, 2, 3, 4, 5, 6]),
    _p(15, "1g.20gb", 1, 4, 19.5, 1, 2, [0, 2, 4, 6]),
    _p(14, "2g.20gb", 0, 3, 19.5, 2, 2, [0, 2, 4]),
    _p(9, "3g.40gb", 0, 2, 39.25, 3, 4, [0, 4]),
    _p(5, "4g.40gb", 0, 1, 39.25, 4, 4, [0]),
    _p(0, "7g.80gb", 0, 1, 79.0, 7, 8, [0]),
]


def _lab(mig=None, second_l40=False):
    """gpu-vendor-vfio (an L40 in vendor-specific VFIO mode) plus an A100 with ``mig`` (lab key gpu.mig)."""
    lab = copy.deepcopy(accelsim.load_lab("gpu-vendor-vfio"))
    l40 = [f for f in lab["functions"] if f["bdf"] == L40][0]
    if second_l40:
        twin = copy.deepcopy(l40)
        twin.update(bdf="0000:5e:00.0", iommu_group=80, parent=None)
        twin["gpu"] = dict(twin["gpu"], uuid="GPU-11111111-2222-3333-4444-555555555555")
        lab["functions"].append(twin)
    gpu = {"name": "NVIDIA A100 80GB PCIe", "uuid": "GPU-00000000-1111-2222-3333-444444444444", "memory_mib": 81920}
    if mig is not None:
        gpu["mig"] = mig
    lab["functions"].append({
        "bdf": A100, "vendor": 0x10de, "device": 0x20b5, "subsystem_vendor": 0x10de, "subsystem_device": 0x1533,
        "class": 0x030200, "revision": 0xa1, "driver": "nvidia", "numa_node": 1, "iommu_group": 90, "gpu": gpu})
    lab["name"] = "gpu-mig"
    return lab


def _recs(res):
    return dict((r["address"], r) for r in res["accelerators"])


def test_mig_state_from_the_simulated_nvidia_smi(tmp_path):
    root = str(tmp_path / "h")
    accelsim.render_tree(_lab(MIG), root)
    res = discover(Sysfs(root))
    assert res["host"]["nvidia_smi"] and res["host"]["nvidia_smi"].startswith(root)
    assert res["warnings"] == []
    recs = _recs(res)
    mig = recs[A100]["gpu"]["mig"]
    assert mig == {
        "index": 1, "mode_current": "Enabled", "mode_pending": "Enabled",
        "gpu_instances": [{"id": 1, "name": "3g.40gb", "profile_id": 9, "placement": "0:4", "in_use": False, "in_use_by": [],
                           "vgpu_types": []},
                          {"id": 9, "name": "1g.10gb", "profile_id": 19, "placement": "4:1", "in_use": False, "in_use_by": [],
                           "vgpu_types": []}],
        "compute_instances": [
            {"gpu_instance_id": 1, "id": 0, "name": "3g.40gb", "profile_id": 2, "placement": "0:3"},
            {"gpu_instance_id": 1, "id": 1, "name": "1c.3g.40gb", "profile_id": 0, "placement": "3:1"}],
        "profiles": A100_80GB_PROFILES,
        "gpu_in_use_by": [],
    }
    assert recs[A100]["programming_model"] == "dynamic"
    assert recs[L40]["gpu"]["mig"] is None  # [N/A]: not MIG capable


def test_mig_instance_in_use_by_a_process_holding_its_caps_node(tmp_path):
    # gpu-mig-a100: a python3 process holds /dev/nvidia0 and the caps nodes of GI 2 and its CI 0 (minors 21, 22 in
    # the rendered /proc/driver/nvidia-caps/mig-minors)
    root = str(tmp_path / "a100")
    sim = accelsim.render_tree("gpu-mig-a100", root)
    pid = int(next(iter(sim.state()["processes"])))
    res = discover(Sysfs(root))
    mig = _recs(res)["0000:17:00.0"]["gpu"]["mig"]
    used = {gi["id"]: gi["in_use"] for gi in mig["gpu_instances"]}
    assert used == {2: True, 4: False, 7: False, 8: False}
    gi2 = [gi for gi in mig["gpu_instances"] if gi["id"] == 2][0]
    assert [(e["kind"], e["pid"], e["evidence"].split(" -> ")[1]) for e in gi2["in_use_by"]] == [
        ("process", pid, "/dev/nvidia-caps/nvidia-cap21"), ("process", pid, "/dev/nvidia-caps/nvidia-cap22")]
    assert [e["pid"] for e in mig["gpu_in_use_by"]] == [pid]
    sim.release(str(pid))
    mig = _recs(discover(Sysfs(root)))["0000:17:00.0"]["gpu"]["mig"]
    assert not any(gi["in_use"] for gi in mig["gpu_instances"]) and mig["gpu_in_use_by"] == []


def test_mig_backed_vgpu_types_per_instance(tmp_path):
    # an A100 80GB with the vGPU host driver (vendor-specific VFIO: 4 VFs at boot) in MIG mode: its VFs list the
    # MIG-backed types whose profile has a free instance (the lab's gi_profile, which nvidia-smi vgpu -s -v prints as
    # GPU Instance Profile ID); each instance gets the ones it backs
    lab = _lab(MIG)
    a100 = lab["functions"][-1]
    a100["sriov"] = {"totalvfs": 20, "vf_device": 0x20b5, "offset": 4, "stride": 1, "vf_driver": "nvidia", "boot_numvfs": 4}
    a100["vgpu"] = {"single_type": False, "types": [
        {"id": 700, "name": "NVIDIA A100D-1-10C", "max_instances": 7, "gi_profile": "1g.10gb"},
        {"id": 701, "name": "NVIDIA A100D-1-10CME", "max_instances": 1, "gi_profile": "1g.10gb+me"},
        {"id": 702, "name": "NVIDIA A100D-3-40C", "max_instances": 2, "gi_profile": "3g.40gb"},
        {"id": 703, "name": "NVIDIA A100D-80C", "max_instances": 1}]}
    root = str(tmp_path / "h")
    accelsim.render_tree(lab, root)
    mig = _recs(discover(Sysfs(root)))[A100]["gpu"]["mig"]
    by_gi = {gi["id"]: [t["name"] for t in gi["vgpu_types"]] for gi in mig["gpu_instances"]}
    assert by_gi == {1: ["NVIDIA A100D-3-40C"], 9: ["NVIDIA A100D-1-10C"]}
    # the profile each type runs on is nvidia-smi vgpu -s -v's GPU Instance Profile ID, looked up in -lgip's profiles
    supported = {"701": {"name": "NVIDIA A100D-1-10CME", "gi_profile_id": 20}, "703": {"name": "NVIDIA A100D-80C",
                                                                                       "gi_profile_id": None}}
    assert nvidia.mig_backed_types(supported, [{"id": 20, "name": "1g.10gb+me"}, {"id": 19, "name": "1g.10gb"}]) == {
        "701": "1g.10gb+me"}


def test_parse_mig_minors_and_evidence():
    minors = nvidia.parse_mig_minors("config 1\nmonitor 2\ngpu0/gi2/access 21\ngpu0/gi2/ci0/access 22\n"
                                     "gpu1/gi2/access 156\n")
    assert minors == {(0, 2, None): 21, (0, 2, 0): 22, (1, 2, None): 156}
    ev = {"kind": "process", "name": "x", "pid": 5, "evidence": "/proc/5/fd/3 -> /dev/nvidia-caps/nvidia-cap156"}
    by_path = {"/dev/nvidia-caps/nvidia-cap156": [ev]}
    assert nvidia.mig_evidence(by_path, minors, 1, 2, []) == [ev]
    assert nvidia.mig_evidence(by_path, minors, 0, 2, [0]) == []


@pytest.mark.parametrize("mig,expected", [
    ({"mode": "Disabled", "pending": "Enabled"}, ("Disabled", "Enabled")),
    ({"mode": "Enabled", "pending": "Enabled", "gpu_instances": []}, ("Enabled", "Enabled")),
])
def test_mig_disabled_or_without_instances(tmp_path, mig, expected):
    root = str(tmp_path / "h")
    accelsim.render_tree(_lab(mig), root)
    res = discover(Sysfs(root))
    m = _recs(res)[A100]["gpu"]["mig"]
    assert (m["mode_current"], m["mode_pending"]) == expected
    assert m["gpu_instances"] == [] and m["compute_instances"] == []
    if expected[0] == "Enabled":  # an empty GPU offers every profile, all instances free
        assert [(p["id"], p["instances_free"], p["instances_total"]) for p in m["profiles"]] == [
            (p["id"], p["instances_total"], p["instances_total"]) for p in A100_80GB_PROFILES]
    else:  # profiles are read only when MIG is enabled
        assert m["profiles"] == []
    assert _recs(res)[A100]["programming_model"] == ("dynamic" if expected[0] == "Enabled" else "fixed")
    assert res["warnings"] == []  # nvidia-smi's "No ... found" (exit 6) is an answer, not a failure


def test_nvidia_smi_never_runs_nothing(tmp_path):
    root = str(tmp_path / "h")
    accelsim.render_tree(_lab(MIG), root)
    res = discover(Sysfs(root), nvidia_smi="never")
    assert res["host"]["nvidia_smi"] is None and _recs(res)[A100]["gpu"]["mig"] is None


def _fill_card(sim, pf, type_id):
    """Enable the card's VFs and give the first one a type that takes the whole card: no VF offers any
    type afterwards (creatable_vgpu_types lists nothing)."""
    with sim.transaction() as h:
        h.set_numvfs(pf, "32")
        vf = h.vfs(pf)[0]
        h.set_vgpu_type(vf, str(type_id))
    return vf


def test_full_card_type_named_by_nvidia_smi(tmp_path):
    root = str(tmp_path / "h")
    sim = accelsim.render_tree(_lab(), root)
    vf = _fill_card(sim, L40, 1149)
    res = discover(Sysfs(root))
    recs = _recs(res)
    assert recs[vf]["gpu"]["vgpu"]["creatable_types"] == []
    assert recs[vf]["gpu"]["vgpu"]["current_type"] == {"id": "1149", "name": "NVIDIA L40-48Q"}
    assert recs[vf]["function"] == {"id": "1149", "name": "NVIDIA L40-48Q", "trait": "CUSTOM_FUNCTION_NVIDIA_L40_48Q"}
    assert recs[L40]["function"]["name"] == "NVIDIA L40-48Q"
    assert recs[L40]["gpu"]["vgpu_vfs"][0]["current_type"]["name"] == "NVIDIA L40-48Q"
    assert res["warnings"] == []
    # without nvidia-smi nothing on this host knows the name: null, and the trait falls back to the id
    off = _recs(discover(Sysfs(root), nvidia_smi="never"))
    assert off[vf]["gpu"]["vgpu"]["current_type"] == {"id": "1149", "name": None}
    assert off[vf]["function"]["trait"] == "CUSTOM_FUNCTION_NVIDIA_VGPU_1149"


def test_full_card_type_named_by_a_card_of_the_same_model(tmp_path):
    root = str(tmp_path / "h")
    sim = accelsim.render_tree(_lab(second_l40=True), root)
    vf = _fill_card(sim, L40, 1149)
    with sim.transaction() as h:
        h.set_numvfs("0000:5e:00.0", "4")  # the twin's VFs still offer every type
    res = discover(Sysfs(root), nvidia_smi="never")
    assert _recs(res)[vf]["gpu"]["vgpu"]["current_type"] == {"id": "1149", "name": "NVIDIA L40-48Q"}


def test_parse_vgpu_supported_verbose_layout():
    text = ("GPU 00000000:3B:00.0\n"
            "    vGPU Type ID                          : 0x474\n"
            "        Name                              : NVIDIA L40-1Q\n"
            "        Class                             : Quadro\n"
            "        Max Instances                     : 32\n"
            "    vGPU Type ID                          : 0x47d\n"
            "        Name                              : NVIDIA L40-48Q\n"
            "GPU 00000000:5E:00.0\n"
            "    vGPU Type ID                      : 0x5ee\n"
            "        Name                          : NVIDIA RTX Pro 6000 Blackwell DC-2B\n")
    assert nvidia_smi.parse_vgpu_supported(text) == {
        "0000:3b:00.0": {"1140": "NVIDIA L40-1Q", "1149": "NVIDIA L40-48Q"},
        "0000:5e:00.0": {"1518": "NVIDIA RTX Pro 6000 Blackwell DC-2B"}}
    assert nvidia_smi.parse_vgpu_supported("") == {}


def test_parse_mig_ci_without_placement_column():
    # drivers before R470 print no Placement column
    text = ("+-------------------------------------------------------+\n"
            "| Compute instances:                                    |\n"
            "| GPU     GPU       Name             Profile   Instance |\n"
            "|       Instance                       ID        ID     |\n"
            "|         ID                                            |\n"
            "|=======================================================|\n"
            "|   0      1       MIG 1c.3g.20gb       0         2     |\n"
            "+-------------------------------------------------------+\n")
    assert nvidia_smi.parse_mig_ci(text) == {0: [{"gpu_instance_id": 1, "id": 2, "name": "1c.3g.20gb", "profile_id": 0,
                                                  "placement": None}]}
    assert nvidia_smi.parse_mig_gi("No MIG-enabled devices found.\n") == {}


def test_parse_mig_gip_and_gipp():
    # rows as the real tool prints them; some drivers print no CE/JPEG/OFA continuation row
    text = ("+-------------------------------------------------------------------------------+\n"
            "| GPU instance profiles:                                                        |\n"
            "| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |\n"
            "|                                Free/Total   GiB              CE    JPEG  OFA  |\n"
            "|===============================================================================|\n"
            "|   0  MIG 1g.10gb+me      20     0/1        9.75       No     16     1     0   |\n"
            "|                                                               1     1     1   |\n"
            "+-------------------------------------------------------------------------------+\n"
            "|   1  MIG 7g.80gb          0     1/1        79.25      No     132    7     0   |\n"
            "+-------------------------------------------------------------------------------+\n")
    assert nvidia_smi.parse_mig_gip(text) == {
        0: [{"id": 20, "name": "1g.10gb+me", "instances_free": 0, "instances_total": 1, "memory_gib": 9.75,
             "compute_slices": 1}],
        1: [{"id": 0, "name": "7g.80gb", "instances_free": 1, "instances_total": 1, "memory_gib": 79.25,
             "compute_slices": 7}]}
    gipp = ("GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1\n"
            "GPU  0 Profile ID  9 Placements: {0,4}:4\n"
            "GPU  1 Profile ID  0 Placement : {0}:8\n")
    assert nvidia_smi.parse_mig_gipp(gipp) == {0: {19: ([0, 1, 2, 3, 4, 5, 6], 1), 9: ([0, 4], 4)}, 1: {0: ([0], 8)}}
    assert nvidia_smi.parse_mig_gip("No MIG-enabled devices found.\n") == {}
    assert nvidia_smi.parse_mig_gipp("") == {}
