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
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import nvidia  # noqa: E402
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
        {"id": "1100", "name": "NVIDIA H100-1-10C", "profile": "1g.10gb", "free": 2},
        {"id": "1104", "name": "NVIDIA H100-3-40C", "profile": "3g.40gb", "free": 1}]
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
        (VF0, "NVIDIA H100-1-10C", "1g.10gb", 7), (VF1, "NVIDIA H100-3-40C", "3g.40gb", 2)]
    gis = dict((gi["id"], gi) for gi in mig["gpu_instances"])
    assert gis[7]["in_use"] and gis[7]["vgpu"] == {"address": VF0, "type": {"id": "1100", "name": "NVIDIA H100-1-10C"}}
    assert [(e["kind"], e["name"]) for e in gis[7]["in_use_by"]] == [("vgpu", VF0)]
    assert [(e["kind"], e["name"]) for e in gis[2]["in_use_by"]] == [("vgpu", VF1), ("domain", "vm-a")]
    assert not gis[8]["in_use"] and gis[8]["vgpu"] is None
    assert mig["creatable_vgpu_types"] == [{"id": "1100", "name": "NVIDIA H100-1-10C", "profile": "1g.10gb", "free": 1}]
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
    assert {"CUSTOM_FUNCTION_MIG_1_X_3G_40GB_2_X_1G_10GB", "CUSTOM_FUNCTION_NVIDIA_H100_1_10C"} <= set(p["traits"])
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
    assert rec["gpu"]["mig"]["vgpus"][0]["type"] == {"id": "1104", "name": "NVIDIA H100-3-40C"}


def test_parse_vgpu_query_and_profiles():
    text = ("GPU 00000000:1B:00.0\n    Active vGPUs                          : 2\n"
            "    vGPU ID                               : 3251634176\n"
            "        vGPU Name                         : NVIDIA H100-1-10C\n"
            "        vGPU Type                         : 1100\n"
            "        GPU Instance ID                   : 7\n"
            "        PCI\n            Bus Id                        : 00000000:1B:00.4\n"
            "    vGPU ID                               : 3251634177\n"
            "        vGPU Name                         : NVIDIA H100-8C\n"
            "        vGPU Type                         : 1112\n"
            "        GPU Instance ID                   : N/A\n")
    assert nvidia.parse_vgpu_query(text) == {PF: [
        {"type_id": "1100", "name": "NVIDIA H100-1-10C", "gpu_instance_id": 7, "address": VF0},
        {"type_id": "1112", "name": "NVIDIA H100-8C", "gpu_instance_id": None, "address": None}]}
    # the time-sliced vGPU holds no instance
    assert nvidia.vgpu_gi_evidence(nvidia.parse_vgpu_query(text)[PF]) == {7: [{
        "kind": "vgpu", "name": VF0, "pid": None,
        "evidence": "vGPU NVIDIA H100-1-10C on VF %s (nvidia-smi vgpu -q: GPU Instance ID 7)" % VF0}]}
    assert [nvidia.mig_vgpu_profile(n) for n in ("NVIDIA A100-1-5C", "NVIDIA H100-1-10CME", "NVIDIA H100-7-80C",
                                                 "NVIDIA H100-80C", None)] == ["1g.5gb", "1g.10gb+me", "7g.80gb", None, None]
