# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shared vocabulary: PCI addresses, mdev UUIDs, function ids, a record's units and the in-use rule."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _vocab


@pytest.mark.parametrize("raw, expected", [
    ("0000:3b:00.4", "0000:3b:00.4"),
    (" 3B:00.7 ", "0000:3b:00.7"),
    ("10000:3b:00.0", "10000:3b:00.0"),
    ("00000000:3b:00.0", "0000:3b:00.0"),
    ("3b:0.1", "0000:3b:00.1"),
    ("0000:3b:20.0", None),  # slot above 0x1f
    ("0000:3b:00.8", None),  # function above 7
    ("3b:00", None),
    ("", None),
    (None, None),
    (42, None),
])
def test_pci_address(raw, expected):
    assert _vocab.pci_address(raw) == expected


@pytest.mark.parametrize("raw, message", [
    ("0000:3b:20.0", "has slot 0x20, above 0x1f"),
    ("0000:3b:00.9", "has function 9, above 7"),
    ("nope", "'nope' is not a PCI address"),
    (3, "expected a string, got int 3"),
])
def test_parse_pci_address_says_what_is_wrong(raw, message):
    with pytest.raises(ValueError, match=message):
        _vocab.parse_pci_address(raw)


def test_mdev_uuid_and_function_id():
    assert _vocab.mdev_uuid(" 4B20D080-1B54-4048-85B3-A6A62D165C01") == "4b20d080-1b54-4048-85b3-a6a62d165c01"
    assert _vocab.mdev_uuid("4b20d0801b54404885b3a6a62d165c01") is None
    assert _vocab.mdev_uuid(None) is None
    assert _vocab.function_id("AAAA-bbbb") == "aaaabbbb"
    assert _vocab.function_id(7) is None


def test_record_units_include_folded_vfs():
    rec = {"units": [{"kind": "device", "id": "0000:d8:00.0"}],
           "sriov": {"vf_units": [{"kind": "vf", "id": "0000:d8:02.0"}]}}
    assert [u["id"] for u in _vocab.record_units(rec)] == ["0000:d8:00.0", "0000:d8:02.0"]
    assert _vocab.record_units({"units": None, "sriov": None}) == []


def test_record_units_give_compact_folded_vf_units_back_whole():
    # accelerator_info's compact folded unit leaves out id, a null type, an empty in_use_by and the vf_index that
    # sriov.vfs gives; record_units fills them in, in the full unit's key order
    rec = {"units": [], "sriov": {"vfs": ["0000:d8:02.0", "0000:d8:02.1", "0000:d8:02.2"], "vf_units": [
        {"kind": "vf", "address": "0000:d8:02.1", "iommu_group": 41, "in_use": False, "driver": "iavf",
         "mac": "52:54:00:00:00:01", "netdev": "ens1v1"},
        {"kind": "vf", "address": "0000:d8:02.2", "type": "nvidia-231", "iommu_group": 42, "in_use": True,
         "in_use_by": [{"kind": "domain", "name": "inst-1"}], "driver": "nvidia", "mac": None, "netdev": None},
        {"kind": "vf", "address": "0000:d8:03.0", "iommu_group": 43, "in_use": False, "vf_index": None,
         "driver": None, "mac": None, "netdev": None},
        {"kind": "mdev", "id": "u-1", "address": "0000:d8:02.2", "type": "t", "iommu_group": 9, "in_use": False,
         "in_use_by": [], "vf_index": 2, "driver": "nvidia", "mac": None, "netdev": None}]}}
    got = _vocab.record_units(rec)
    assert got[0] == {"kind": "vf", "id": "0000:d8:02.1", "address": "0000:d8:02.1", "type": None, "iommu_group": 41,
                      "in_use": False, "in_use_by": [], "vf_index": 1, "driver": "iavf", "mac": "52:54:00:00:00:01",
                      "netdev": "ens1v1"}
    assert list(got[0]) == ["kind", "id", "address", "type", "iommu_group", "in_use", "in_use_by", "vf_index", "driver",
                            "mac", "netdev"]
    assert got[1]["type"] == "nvidia-231" and got[1]["vf_index"] == 2 and got[1]["in_use_by"][0]["name"] == "inst-1"
    assert got[2]["vf_index"] is None and got[2]["id"] == "0000:d8:03.0"  # an index given (null) is kept
    assert got[3] is rec["sriov"]["vf_units"][3]  # a unit that is whole (an mdev) is the same object
    assert rec["sriov"]["vf_units"][0].get("id") is None  # the record is not changed
    # without sriov.vfs (or with garbage) the index is unknown, never an error
    assert _vocab.full_unit({"kind": "vf", "address": "0000:d8:02.1"})["vf_index"] is None
    assert _vocab.full_unit({"kind": "vf", "address": ["x"]}, {"0000:d8:02.1": 0})["vf_index"] is None
    assert _vocab.full_unit("x") == "x"
