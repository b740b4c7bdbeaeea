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


def test_card_in_use_reads_the_card_its_vf_records_and_its_folded_vfs():
    vf_rec = {"address": "0000:d8:02.1", "units": [
        {"kind": "vf", "id": "0000:d8:02.1", "in_use": True, "in_use_by": [{"kind": "domain", "name": "inst-1"}]}]}
    card = {"address": "0000:d8:00.0", "units": [{"kind": "device", "id": "0000:d8:00.0", "in_use": False}],
            "sriov": {"vfs": ["0000:d8:02.0", "0000:d8:02.1"], "vf_units": [
                {"kind": "vf", "id": "0000:d8:02.0", "in_use": True,
                 "in_use_by": [{"kind": "process", "evidence": "/proc/7/fd/3 -> /dev/vfio/20"}]}]}}
    busy, evidence = _vocab.card_in_use(card, {"0000:d8:02.1": vf_rec})
    assert busy
    assert evidence == ["vf 0000:d8:02.0: process /proc/7/fd/3 -> /dev/vfio/20", "vf 0000:d8:02.1: domain inst-1"]
    assert _vocab.card_in_use({"address": "0000:3b:00.0", "units": []}, {}) == (False, [])
