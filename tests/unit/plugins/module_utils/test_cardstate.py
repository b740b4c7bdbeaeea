# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one decision of a card's state (_cardstate): the host's evidence, Placement's, and the walker."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate


def test_card_in_use_reads_the_card_its_vf_records_and_its_folded_vfs():
    vf_rec = {"address": "0000:d8:02.1", "units": [
        {"kind": "vf", "id": "0000:d8:02.1", "in_use": True, "in_use_by": [{"kind": "domain", "name": "inst-1"}]}]}
    card = {"address": "0000:d8:00.0", "units": [{"kind": "device", "id": "0000:d8:00.0", "in_use": False}],
            "sriov": {"vfs": ["0000:d8:02.0", "0000:d8:02.1"], "vf_units": [
                {"kind": "vf", "id": "0000:d8:02.0", "in_use": True,
                 "in_use_by": [{"kind": "process", "evidence": "/proc/7/fd/3 -> /dev/vfio/20"}]}]}}
    busy, evidence = _cardstate.card_in_use(card, {"0000:d8:02.1": vf_rec})
    assert busy
    assert evidence == ["vf 0000:d8:02.0: process /proc/7/fd/3 -> /dev/vfio/20", "vf 0000:d8:02.1: domain inst-1"]
    assert _cardstate.card_in_use({"address": "0000:3b:00.0", "units": []}, {}) == (False, [])


def test_records_and_cards_walk_a_result_or_its_list():
    recs = [{"address": "0000:d8:00.0"}, {"address": "0000:d8:02.0", "physfn": "0000:d8:00.0"}, "junk"]
    assert _cardstate.records({"accelerators": recs}) is recs
    assert _cardstate.records(recs) is recs
    assert _cardstate.records({"accelerators": None}) is None and _cardstate.records("x") is None
    cards, by_addr = _cardstate.cards(recs)
    assert [c["address"] for c in cards] == ["0000:d8:00.0"]
    assert sorted(by_addr) == ["0000:d8:00.0", "0000:d8:02.0"]


def test_a_vf_record_naming_its_pf_counts_without_the_pfs_vf_list():
    vf = {"address": "0000:d8:02.0", "physfn": "0000:d8:00.0", "units": [
        {"kind": "vf", "id": "0000:d8:02.0", "in_use": True, "in_use_by": [{"kind": "domain", "name": "i-1"}]}]}
    card = {"address": "0000:d8:00.0", "units": []}
    assert _cardstate.card_in_use(card, {"0000:d8:02.0": vf}) == (True, ["vf 0000:d8:02.0: domain i-1"])


def test_units_of_a_wrong_shape_are_not_units():
    # was: AttributeError ('list' object has no attribute 'get') from the hostile-input sweep at 3x, through the
    # nova_device_config filter and resolve_functions
    card = {"address": "0000:3b:00.0", "family": "nic",
            "units": [["in_use"], "vf0", 7, {"kind": "pf", "id": "0000:3b:00.0", "in_use": True, "in_use_by": "vm"},
                      {"kind": "vf", "id": "0000:3b:02.0", "in_use": True, "in_use_by": [["x"], {"kind": "vm", "name": "i-1"}]}]}
    busy, evidence = _cardstate.card_in_use(card, {})
    assert busy
    assert evidence == ["pf 0000:3b:00.0: ? ", "vf 0000:3b:02.0: vm i-1"]
