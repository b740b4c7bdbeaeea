# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""MIG-backed vGPU in discovery and in the Placement report, on the gpu-mig-vgpu lab (an H100 80GB in MIG mode
with vendor-specific VFIO VFs) programmed through the simulated kernel and nvidia-smi."""

from __future__ import annotations

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import nvidia, nvidia_smi  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.desired import desired_providers  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

PF = "0000:1b:00.0"
VF0, VF1 = "0000:1b:00.4", "0000:1b:00.5"


@pytest.fixture
def h100(tmp_path):
    """The lab (layout 3g.40gb + 2 x 1g.10gb: GIs 2, 7 and 8) with its VFs on."""
    sim = accelsim.render_tree("gpu-mig-vgpu", str(tmp_path / "h"))
    assert sim.tool("sriov-manage", "-e", PF)[0] == 0
    return sim


def _pf(sim):
    res = discover(Sysfs(sim.root))
    assert res["warnings"] == []
    return res, [r for r in res["accelerators"] if r["address"] == PF][0]


def test_creatable_mig_backed_types_before_any_vgpu(h100):
    _res, rec = _pf(h100)
    mig = rec["gpu"]["mig"]
    assert mig["vgpus"] == []
    assert mig["creatable_vgpu_types"] == [
        {"id": "1100", "name": "NVIDIA H100XM-1-10C", "profile": "1g.10gb", "free": 2},
        {"id": "1104", "name": "NVIDIA H100XM-3-40C", "profile": "3g.40gb", "free": 1}]
    assert all(gi["vgpu"] is None and not gi["in_use"] for gi in mig["gpu_instances"])
    assert rec["function"] is None, "no vGPU yet: the card carries no function for the vGPU path"


def test_vgpus_the_gpu_instances_they_hold_and_in_use_evidence(h100):
    with h100.transaction() as host:
        host.set_vgpu_type(VF0, "1100")
        host.set_vgpu_type(VF1, "1104")
        host.add_domain("vm-a", accelsim.kernel.domain_xml("vm-a", [{"pci": VF1}]))
    _res, rec = _pf(h100)
    mig = rec["gpu"]["mig"]
    assert [(v["address"], v["type"]["name"], v["profile"], v["gpu_instance_id"]) for v in mig["vgpus"]] == [
        (VF0, "NVIDIA H100XM-1-10C", "1g.10gb", 7), (VF1, "NVIDIA H100XM-3-40C", "3g.40gb", 2)]
    gis = dict((gi["id"], gi) for gi in mig["gpu_instances"])
    assert gis[7]["in_use"] and gis[7]["vgpu"] == {"address": VF0, "vfs": [VF0],
                                                   "type": {"id": "1100", "name": "NVIDIA H100XM-1-10C"}}
    assert [(e["kind"], e["name"]) for e in gis[7]["in_use_by"]] == [("vgpu", VF0)]
    assert [(e["kind"], e["name"]) for e in gis[2]["in_use_by"]] == [("vgpu", VF1), ("domain", "vm-a")]
    assert not gis[8]["in_use"] and gis[8]["vgpu"] is None
    assert mig["creatable_vgpu_types"] == [{"id": "1100", "name": "NVIDIA H100XM-1-10C", "profile": "1g.10gb", "free": 1}]
    assert rec["function"] == {"id": "1 x 3g.40gb + 2 x 1g.10gb", "name": "MIG 1 x 3g.40gb + 2 x 1g.10gb",
                               "trait": "CUSTOM_FUNCTION_MIG_1_X_3G_40GB_2_X_1G_10GB"}


def test_placement_vgpu_inventory_is_one_unit_per_instance_of_the_profile(h100):
    with h100.transaction() as host:
        host.set_vgpu_type(VF0, "1100")
    res, _rec = _pf(h100)
    (p,) = [p for p in desired_providers("cmp1", res) if p["device"] == PF]
    # one vGPU exists, a second 1g.10gb instance is free: 2 units, as Nova counts a MIG-backed type whose
    # max_instances is the number of instances
    assert p["resource_class"] == "VGPU" and p["inventories"]["VGPU"]["total"] == 2
    assert {"CUSTOM_FUNCTION_MIG_1_X_3G_40GB_2_X_1G_10GB", "CUSTOM_FUNCTION_NVIDIA_H100XM_1_10C"} <= set(p["traits"])
    assert p["note"] is None
    with h100.transaction() as host:
        host.set_vgpu_type(VF1, "1104")
    res, _rec = _pf(h100)
    (p,) = [p for p in desired_providers("cmp1", res) if p["device"] == PF]
    assert p["inventories"]["VGPU"]["total"] == 2 and "several MIG-backed types" in p["note"]


def test_names_of_types_no_vf_lists_any_more_come_from_nvidia_smi(h100):
    with h100.transaction() as host:
        host.set_vgpu_type(VF0, "1104")  # the one 3g.40gb instance: no VF lists H100-3-40C now
    _res, rec = _pf(h100)
    assert rec["gpu"]["mig"]["vgpus"][0]["type"] == {"id": "1104", "name": "NVIDIA H100XM-3-40C"}


def test_parse_vgpu_query_and_guest_bus_ids():
    """``Bus Id`` under a vGPU is its address inside the guest (driver 580.x: 00000000:00:00.0 before the guest
    driver loads, then the guest's slot), never the host VF: the VF comes from the VFs' current_vgpu_type, and the
    domain (VM Name) where several VFs hold the type."""
    text = ("GPU 00000000:1B:00.0\n    Active vGPUs                          : 3\n"
            "    vGPU ID                               : 3251634176\n"
            "        VM Name                           : N/A\n"
            "        vGPU Name                         : NVIDIA H100XM-1-10C\n"
            "        vGPU Type                         : 1100\n"
            "        GPU Instance ID                   : 7\n"
            "        PCI\n            Bus Id                        : 00000000:00:00.0\n"
            "    vGPU ID                               : 3251634177\n"
            "        VM Name                           : vm-b\n"
            "        vGPU Name                         : NVIDIA H100XM-1-10C\n"
            "        vGPU Type                         : 1100\n"
            "        GPU Instance ID                   : 8\n"
            "        PCI\n            Bus Id                        : 00000000:00:05.0\n"
            "    vGPU ID                               : 3251634178\n"
            "        vGPU Name                         : NVIDIA H100XM-8C\n"
            "        vGPU Type                         : 1112\n"
            "        GPU Instance ID                   : N/A\n")
    vgpus = nvidia_smi.parse_vgpu_query(text)[PF]
    assert [(v["type_id"], v["gpu_instance_id"], v["vm_name"], v["guest_address"]) for v in vgpus] == [
        ("1100", 7, None, "0000:00:00.0"), ("1100", 8, "vm-b", "0000:00:05.0"), ("1112", None, None, None)]
    assert "address" not in vgpus[0], "the guest's bus id is not a host address"
    # two VFs hold type 1100: vm-b has VF1, so its vGPU (GI 8) is VF1's and the other one VF0's
    nvidia.assign_vgpu_vfs(vgpus, {VF0: "1100", VF1: "1100", "0000:1b:00.6": "1112"},
                           lambda a: ["vm-b"] if a == VF1 else [])
    assert [(v["address"], v["vfs"]) for v in vgpus] == [(VF0, [VF0]), (VF1, [VF1]), ("0000:1b:00.6", ["0000:1b:00.6"])]
    # the time-sliced vGPU holds no instance; the evidence names the host VF
    assert nvidia.vgpu_gi_evidence(vgpus) == {
        7: [{"kind": "vgpu", "name": VF0, "pid": None,
             "evidence": "vGPU NVIDIA H100XM-1-10C on VF %s (nvidia-smi vgpu -q: GPU Instance ID 7)" % VF0}],
        8: [{"kind": "vgpu", "name": VF1, "pid": None,
             "evidence": "vGPU NVIDIA H100XM-1-10C on VF %s, domain vm-b (nvidia-smi vgpu -q: GPU Instance ID 8)" % VF1}]}
    # without a domain to tell them apart, both VFs are named
    vgpus = nvidia.assign_vgpu_vfs(nvidia_smi.parse_vgpu_query(text)[PF][:1] + [dict(vgpus[1], vm_name=None)],
                                   {VF0: "1100", VF1: "1100"})
    assert [v["address"] for v in vgpus] == [None, None]
    assert nvidia.vgpu_gi_evidence(vgpus)[7][0]["name"] == "%s, %s" % (VF0, VF1)


def test_in_use_evidence_names_the_host_vf_not_the_guest_address(h100):
    """Discovery on the simulator, whose vgpu -q prints guest addresses as the real tool does: each GI backing a vGPU
    names the VF that holds it, with the domain that has the VF."""
    with h100.transaction() as host:
        host.set_vgpu_type(VF0, "1100")
        host.set_vgpu_type(VF1, "1100")
        host.add_domain("vm-b", accelsim.kernel.domain_xml("vm-b", [{"pci": VF1}]))
    _res, rec = _pf(h100)
    mig = rec["gpu"]["mig"]
    held = dict((gi["id"], gi["vgpu"]["address"]) for gi in mig["gpu_instances"] if gi["vgpu"])
    sim = dict((gi["id"], gi.get("vgpu_vf")) for gi in h100.state()["mig"][PF]["gpu_instances"] if gi.get("vgpu_vf"))
    assert held == sim and sorted(held.values()) == [VF0, VF1]
    by_vf = dict((v["address"], v["gpu_instance_id"]) for v in mig["vgpus"])
    assert by_vf == dict((vf, gi) for gi, vf in sim.items())
    names = [e["name"] for gi in mig["gpu_instances"] for e in gi["in_use_by"]]
    assert "0000:00:00.0" not in names and "0000:00:05.0" not in names


def test_mig_backed_is_what_nvidia_smi_says_not_the_name(tmp_path):
    """A MIG-backed type whose name has no "-<slices>-<GB>C" (Blackwell's DC-1-2Q) is MIG-backed because nvidia-smi
    vgpu -s -v gives it a GPU Instance Profile ID; a "-1-10C"-looking name without one is not."""
    lab = accelsim.load_lab("gpu-mig-vgpu")
    gpu = [f for f in lab["functions"] if f.get("vgpu")][0]
    for t in gpu["vgpu"]["types"]:
        if t["id"] == 1100:
            t["name"] = "NVIDIA DC-1-2Q"
        if t["id"] == 1104:
            t.pop("gi_profile")  # time-sliced now, though its name looks MIG-backed
    sim = accelsim.render_tree(lab, str(tmp_path / "h"))
    assert sim.tool("sriov-manage", "-e", PF)[0] == 0
    _res, rec = _pf(sim)
    mig = rec["gpu"]["mig"]
    assert [(t["name"], t["profile"]) for t in mig["creatable_vgpu_types"]] == [("NVIDIA DC-1-2Q", "1g.10gb")]
    assert {gi["name"]: [t["name"] for t in gi["vgpu_types"]] for gi in mig["gpu_instances"]} == {
        "3g.40gb": [], "1g.10gb": ["NVIDIA DC-1-2Q"]}
    with sim.transaction() as host:
        host.set_vgpu_type(VF0, "1100")
    _res, rec = _pf(sim)
    assert [(v["type"]["name"], v["profile"]) for v in rec["gpu"]["mig"]["vgpus"]] == [("NVIDIA DC-1-2Q", "1g.10gb")]
