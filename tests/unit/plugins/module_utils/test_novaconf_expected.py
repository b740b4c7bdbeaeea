# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nova_expected_providers: the providers Nova 34 makes for the rendered config (names, resource classes, totals,
traits), from the rules in Nova's pci_placement_translator and libvirt driver; and the API file's
pci_in_placement switch. tests/harness/tests/test_nova_oracle.py checks the same against Nova's own code."""

from __future__ import annotations

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc  # noqa: E402

NODE = "compute-01.example.org"
SHA = "ab" * 32
GZIP = "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"


# the programmed demo lab (the L40's VFs typed NVIDIA L40-8Q, 4 VFs on the first X710 port), as test_novaconf has it
from ansible_collections.accelops.lifecycle.tests.unit.plugins.module_utils.test_novaconf import lab  # noqa: E402,F401 pylint: disable=unused-import


FUNCTIONS = [
    {"name": "t4-2q", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "GRID T4-2Q", "count": 1}},
    {"name": "l40-8q", "match": {"address": "0000:3b:00.0"}, "vgpu": {"type": "NVIDIA L40-8Q", "count": 4}},
    {"name": "x710-vf", "match": {"address": "0000:d8:00.0"}, "vfs": {"count": 4},
     "placement": {"traits": ["CUSTOM_FAST_NET"]}},
    {"name": "qat", "match": {"family": "qat", "count": 2}, "passthrough": {},
     "placement": {"resource_class": "CUSTOM_QAT"}},
]


def by_name(providers):
    return dict((p["name"], p) for p in providers)


def test_names_classes_totals_and_traits_as_nova_makes_them(lab):
    got = nc.nova_expected_providers(FUNCTIONS, lab, None, NODE)
    assert [p["name"] for p in got] == sorted(p["name"] for p in got)
    p = by_name(got)
    qat = [a["address"] for a in nc.render(FUNCTIONS, lab)["device_specs"] if a.get("resource_class") == "CUSTOM_QAT"]
    assert sorted(p) == sorted([NODE + "_pci_0000_18_00_0", NODE + "_0000:3B:00.0", NODE + "_0000:D8:00.0"]
                               + [NODE + "_" + a.upper() for a in qat])
    # the X710's VFs: one provider named after their PF, upper-case hex, Nova's class from the VF's ids
    nic = p[NODE + "_0000:D8:00.0"]
    assert nic["kind"] == "pci" and nic["address"] == "0000:d8:00.0" and nic["total"] == 4 and len(nic["devices"]) == 4
    assert nic["resource_class"] == "CUSTOM_PCI_8086_154C"
    assert nic["traits"] == ["COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_FAST_NET", "CUSTOM_FUNCTION_X710_VF", "OWNER_NOVA"]
    assert nic["function_traits"] == ["CUSTOM_FAST_NET", "CUSTOM_FUNCTION_X710_VF"] and nic["functions"] == ["x710-vf"]
    # the L40's typed VFs under the PF's provider, with the function's class
    l40 = p[NODE + "_0000:3B:00.0"]
    assert (l40["resource_class"], l40["total"]) == ("CUSTOM_VGPU_L40_8Q", 4)
    assert l40["devices"] == ["0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6", "0000:3b:00.7"]
    # whole QAT endpoints (SR-IOV PFs): one provider each, the declared class
    for a in qat:
        q = p[NODE + "_" + a.upper()]
        assert (q["resource_class"], q["total"], q["devices"]) == ("CUSTOM_QAT", 1, [a])
        assert "CUSTOM_FUNCTION_QAT" in q["traits"]
    # the T4 (mdev parent): libvirt's node device name, VGPU = the mdevs there + those that can be made,
    # only OWNER_NOVA from Nova; the function trait is the collection's to add (Nova keeps it there)
    t4 = p[NODE + "_pci_0000_18_00_0"]
    card = [r for r in lab["accelerators"] if r["address"] == "0000:18:00.0"][0]
    t = [x for x in card["gpu"]["mdev_types"] if x["id"] == "nvidia-231"][0]
    made = len([m for m in card["gpu"]["mdevs"] if m["type"] == "nvidia-231"])
    assert (t4["kind"], t4["resource_class"], t4["total"]) == ("vgpu", "VGPU", made + t["available_instances"])
    assert t4["traits"] == ["OWNER_NOVA"] and t4["function_traits"] == ["CUSTOM_FUNCTION_T4_2Q"]


def test_nodename_defaults_to_the_discovered_host_and_is_required(lab):
    got = nc.nova_expected_providers(FUNCTIONS[2:3], lab)
    assert [p["name"] for p in got] == [lab["host"]["hostname"] + "_0000:D8:00.0"]
    with pytest.raises(nc.NovaConfigError, match="nodename"):
        nc.nova_expected_providers(FUNCTIONS[2:3], lab["accelerators"])


def test_neutron_ports_and_the_legacy_tracker_give_no_pci_provider(lab):
    # a device_spec with physical_network is Neutron's: Nova does not report it to Placement
    assert nc.nova_expected_providers(FUNCTIONS[2:3], lab, {"physical_networks": {"x710-vf": "physnet1"}}, NODE) == []
    # report_in_placement false: no PCI provider, the vGPU provider stays
    got = nc.nova_expected_providers(FUNCTIONS, lab, {"report_in_placement": False}, NODE)
    assert [p["name"] for p in got] == [NODE + "_pci_0000_18_00_0"]


def test_provider_name_forms():
    # upper-case hex; where the address has no hex letter the two spellings are one string (why the
    # collection's own providers must be named otherwise)
    assert nc.nova_pci_provider_name("cn1", "0000:d8:00.0") == "cn1_0000:D8:00.0"
    assert nc.nova_pci_provider_name("cn1", "0000:83:00.0") == "cn1_0000:83:00.0"
    # libvirt's node device name for an mdev parent, lower-case, as _allocate_mdevs expects it
    assert nc.nova_pgpu_provider_name("cn1", "0000:AF:00.1") == "cn1_pci_0000_af_00_1"


def test_nova_normalises_spec_values_like_os_traits():
    assert nc._nova_normalize("CUSTOM_FUNCTION_X") == "CUSTOM_FUNCTION_X"
    assert nc._nova_normalize("HW_GPU_API_VULKAN") == "HW_GPU_API_VULKAN"
    assert nc._nova_normalize("my-trait.1") == "CUSTOM_MY_TRAIT_1"


def test_the_api_file_switches_pci_in_placement_on(lab):
    r = nc.render(FUNCTIONS, lab)
    ini = r["alias_conf"]
    assert "\n[filter_scheduler]\npci_in_placement = True\n" in ini
    off = nc.render(FUNCTIONS, lab, {"report_in_placement": False})
    assert "filter_scheduler" not in off["alias_conf"] and "[pci]" in off["alias_conf"]
    assert "pci_in_placement" in nc.merge_aliases([r])["alias_conf"]
    assert "pci_in_placement" not in nc.merge_aliases([off])["alias_conf"]
    assert "pci_in_placement" not in nc.merge_aliases([r], pci_in_placement=False)["alias_conf"]
    # no alias: the header only, nothing to switch on
    assert nc.render(FUNCTIONS[:1], lab)["alias_conf"].count("[") == 0
