# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure logic of the Placement modules: names, validation, discovery records to providers, trait merging,
root look-up. The behaviour against a real Placement is in tests/harness/tests/test_placement_modules.py."""

from __future__ import annotations

import uuid

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P

AFU = "d8424dc4-a4a1-c3d4-3213-4b09c1d7f2a2"


def test_each_reporter_names_a_device_its_own_way():
    assert P.provider_name("cn1", "0000:3b:00.0") == "cn1_accelops_0000:3b:00.0"
    assert P.provider_name("cn1", "0000:3b:00.0", "cyborg") == "cn1_0000:3b:00.0"
    assert P.provider_name("cn1", "0000:3b:00.0", "nova") == "cn1_0000:3B:00.0"
    assert P.provider_name("cn1", "0000:84:00.0", "nova", mdev=True) == "cn1_pci_0000_84_00_0"
    assert P.provider_uuid("cn1_0000:3b:00.0") == str(uuid.uuid3(uuid.NAMESPACE_DNS, "cn1_0000:3b:00.0"))
    with pytest.raises(ValueError, match="reporter: expected one of nova, cyborg, accelops"):
        P.provider_name("cn1", "0000:3b:00.0", "neutron")


def test_own_names_never_equal_nova_or_cyborg_ignoring_case():
    # an address with no hex letter is where Nova's upper-case name and a lower-case one are the same string
    for addr in ("0000:3b:00.0", "0000:00:05.0", "0000:af:1f.7"):
        own = P.provider_name("cn1", addr).lower()
        others = [P.provider_name("cn1", addr, "cyborg"), P.provider_name("cn1", addr, "nova"),
                  P.provider_name("cn1", addr, "nova", mdev=True)]
        assert own not in [o.lower() for o in others]


def test_trait_validation_like_os_traits():
    assert P.check_trait("CUSTOM_GOLD", "x") == "CUSTOM_GOLD"
    assert P.check_trait("HW_CPU_X86_AVX", "x") == "HW_CPU_X86_AVX"
    with pytest.raises(P.PlacementInputError, match=r"extra_traits: 'gold-tier'.*CUSTOM_GOLD_TIER"):
        P.check_trait("gold-tier", "extra_traits")
    with pytest.raises(P.PlacementInputError, match="at most 255"):
        P.check_trait("CUSTOM_" + "A" * 300, "extra_traits")
    with pytest.raises(P.PlacementInputError):
        P.check_trait("NOT_A_STANDARD_TRAIT_XYZ", "extra_traits")


def test_resource_class_validation():
    for rc in ("FPGA", "PGPU", "VGPU", "SRIOV_NET_VF", "CUSTOM_QAT"):
        assert P.check_resource_class(rc, "o") == rc
    with pytest.raises(P.PlacementInputError, match="overrides.*CUSTOM_MY_FPGA"):
        P.check_resource_class("my-fpga", "overrides")


def test_uuid_function_id_becomes_a_valid_trait():
    rec = {"address": "0000:5e:00.0", "family": "fpga", "vendor_id": "8086", "device_id": "09c4",
           "programming_model": "dynamic", "function": {"id": AFU}, "fpga": {"vendor": "intel", "regions": []}}
    (p,) = P.desired_providers("cn1", [rec])
    t = "CUSTOM_FPGA_FUNCTION_ID_INTEL_" + AFU.replace("-", "").upper()
    assert t in p["traits"] and p["inventories"]["FPGA"]["total"] == 1
    assert all(P._naming.is_valid(x) for x in p["traits"])


def test_single_program_card_without_function_has_no_inventory():
    rec = {"address": "0000:d8:00.1", "family": "fpga", "vendor_id": "10ee", "device_id": "5001",
           "programming_model": "single", "function": None, "fpga": {"vendor": "xilinx", "regions": []}}
    (p,) = P.desired_providers("cn1", [rec])
    assert p["inventories"] == {} and p["note"]
    rec["function"] = {"id": AFU}
    (p,) = P.desired_providers("cn1", [rec])
    assert p["inventories"]["FPGA"]["total"] == 1
    assert any(t.startswith("CUSTOM_FPGA_FUNCTION_ID_XILINX_") for t in p["traits"])


def test_dynamic_regions_get_a_provider_each_with_their_own_function():
    rec = {"address": "0000:5e:00.0", "family": "fpga", "vendor_id": "8086", "device_id": "0b30",
           "programming_model": "dynamic", "function": None,
           "fpga": {"vendor": "intel", "regions": [{"id": "region0", "trait": "CUSTOM_FPGA_REGION_INTEL_A"},
                                                   {"id": "region1", "trait": "CUSTOM_FPGA_REGION_INTEL_B"}],
                    "ports": [{"id": "p0", "afu_id": AFU}, {"id": "p1", "afu_id": None}]}}
    a, b = P.desired_providers("cn1", [rec])
    assert a["name"] == "cn1_accelops_0000:5e:00.0_region0" and b["name"] == "cn1_accelops_0000:5e:00.0_region1"
    assert a["inventories"]["FPGA"]["total"] == 1 and b["inventories"]["FPGA"]["total"] == 1
    assert any(t.startswith("CUSTOM_FPGA_FUNCTION_ID_") for t in a["traits"])
    assert not any(t.startswith("CUSTOM_FPGA_FUNCTION_ID_") for t in b["traits"])


def test_vgpu_total_counts_created_and_available_instances():
    rec = {"address": "0000:3b:00.0", "family": "gpu", "vendor_id": "10de", "device_id": "1eb8",
           "programming_model": "single", "function": {"id": "nvidia-223", "name": "GRID T4-2B",
                                                       "trait": "CUSTOM_FUNCTION_GRID_T4_2B"},
           "gpu": {"mdev_types": [{"id": "nvidia-223", "available_instances": 6},
                                  {"id": "nvidia-224", "available_instances": 4}]},
           "units": [{"kind": "device"}, {"kind": "mdev", "type": "nvidia-223"}, {"kind": "mdev", "type": "nvidia-223"}]}
    (p,) = P.desired_providers("cn1", [rec], function_names={"nvidia-223": "t4 2b"})
    assert p["inventories"]["VGPU"]["total"] == 8
    assert "CUSTOM_FUNCTION_GRID_T4_2B" in p["traits"] and "CUSTOM_FUNCTION_T4_2B" in p["traits"]


def test_vfs_of_a_reported_pf_are_pooled_and_drain_reserves_all():
    pf = {"address": "0000:af:00.0", "family": "nic", "vendor_id": "8086", "device_id": "1572", "numa_node": 1,
          "sriov": {"numvfs": 4}}
    vf = {"address": "0000:af:02.0", "family": "nic", "vendor_id": "8086", "device_id": "154c",
          "physfn": "0000:af:00.0"}
    (p,) = P.desired_providers("cn1", [pf, vf], drain=["0000:af:00.0"])
    assert p["inventories"]["SRIOV_NET_VF"]["reserved"] == 4 == p["inventories"]["SRIOV_NET_VF"]["total"]
    assert "CUSTOM_NUMA_NODE_1" in p["traits"]


def test_overrides_and_bad_records():
    rec = {"address": "0000:01:00.0", "family": "pci", "vendor_id": "1af4", "device_id": "1041"}
    (p,) = P.desired_providers("cn1", [rec], overrides={"0000:01:00.0": {"reserved": 0, "allocation_ratio": 2.0}})
    assert p["resource_class"] == "CUSTOM_PCI_1AF4_1041" and p["inventories"][p["resource_class"]]["allocation_ratio"] == 2.0
    with pytest.raises(P.PlacementInputError, match="no 'address'"):
        P.desired_providers("cn1", [{"family": "gpu"}])
    with pytest.raises(P.PlacementInputError, match="accelerators"):
        P.desired_providers("cn1", {"foo": 1})


def test_merge_traits_keeps_what_others_set():
    cur = ["CUSTOM_OWNER_ACCELOPS", "CUSTOM_FUNCTION_OLD", "CUSTOM_GOLD", "HW_GPU_API_VULKAN"]
    assert P.merge_traits(cur, ["CUSTOM_OWNER_ACCELOPS", "CUSTOM_FUNCTION_NEW"]) == sorted(
        ["CUSTOM_OWNER_ACCELOPS", "CUSTOM_FUNCTION_NEW", "CUSTOM_GOLD", "HW_GPU_API_VULKAN"])
    foreign = ["OWNER_CYBORG", "CUSTOM_FPGA_FUNCTION_ID_INTEL_OLD", "CUSTOM_FPGA_INTEL"]
    assert P.merge_traits(foreign, ["CUSTOM_OWNER_ACCELOPS", "CUSTOM_FPGA_FUNCTION_ID_INTEL_NEW", "CUSTOM_VENDOR_8086"],
                          function_only=True) == ["CUSTOM_FPGA_FUNCTION_ID_INTEL_NEW", "CUSTOM_FPGA_INTEL", "OWNER_CYBORG"]


def test_root_lookup_handles_fqdn_and_short_names():
    provs = [{"name": "cn1.example.org", "uuid": "u1", "parent_provider_uuid": None},
             {"name": "cn2", "uuid": "u2", "parent_provider_uuid": None},
             {"name": "cn1.example.org_0000:3b:00.0", "uuid": "c1", "parent_provider_uuid": "u1"}]
    assert P.find_root(provs, "cn1")[0]["uuid"] == "u1"
    assert P.find_root(provs, "cn2.example.org")[0]["uuid"] == "u2"
    assert P.find_root(provs, "cn1.example.org")[0]["uuid"] == "u1"
    root, msg = P.find_root(provs, "cn3")
    assert root is None and "cn3" in msg and "root_provider" in msg
    root, msg = P.find_root(provs, "cn1", explicit="nope")
    assert root is None and msg.startswith("root_provider")


def test_same_inventories_tolerates_float_noise():
    a = {"FPGA": P.inventory(2)}
    b = {"FPGA": dict(P.inventory(2), allocation_ratio=1.0000001)}
    assert P.same_inventories(a, b)
    assert not P.same_inventories(a, {"FPGA": P.inventory(3)})
