# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Drains a killed run left (issue 34, item 5): the collection's mark, the lift decision, the run record of a run
cut during its apply, and what the report says of each."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._converge import (
    JOURNAL_FILE, read_journal, write_journal)
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.desired import desired_providers
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import DRAIN_TRAIT, left_drain
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_report import host_report
from recorded import host_record, step
from recorded import state as host_state

NIC = "0000:d8:00.0"
PROV = "cn-h1_" + NIC
DISC = {"schema_version": 1, "host": {"hostname": "h1"}, "accelerators": [{"address": NIC}]}
DONE = {"owner": "play=converge user=ops", "started": "2026-11-27T05:00:00Z", "phase": "done", "cards": [NIC],
        "applied": [NIC + ": create 4 VFs"]}


def drained(marked=True, in_use=False):
    return {"name": PROV, "drained": True, "in_use": in_use, "held": None, "usages": {},
            "traits": ["CUSTOM_OWNER_ACCELOPS"] + ([DRAIN_TRAIT] if marked else [])}


def test_left_drain_lifts_only_the_collections_own_drain_on_a_free_card_as_declared():
    assert left_drain(drained(), True)[0] == "lift"
    assert left_drain(drained(marked=False), True) == (
        "left", "drained without the collection's mark (an operator's drain): left so")
    assert left_drain(drained(in_use=True), True)[0] == "left"
    assert left_drain(drained(), False)[0] == "left"
    assert left_drain(dict(drained(marked=False), held={"VGPU": 4}), True)[0] == "lift"  # a hold is the mark
    assert left_drain(dict(drained(), drained=False), True) is None


def test_a_drain_carries_the_mark_and_the_undrain_takes_it_away():
    nic = [{"address": NIC, "family": "nic", "vendor_id": "8086", "device_id": "1572",
            "programming_model": "fixed", "sriov": {"numvfs": 4}}]
    [d] = desired_providers("cn-h1", nic, drain=[NIC])
    [u] = desired_providers("cn-h1", nic, undrain=[NIC], keep_drained=True)
    [k] = desired_providers("cn-h1", nic, keep_drained=True)
    assert d["inventories"]["SRIOV_NET_VF"]["reserved"] == 4
    assert DRAIN_TRAIT in d["traits"] and not d["unmark"]
    assert u["unmark"] and DRAIN_TRAIT not in u["traits"]
    assert not k["unmark"] and DRAIN_TRAIT not in k["traits"]


def card(status):
    return {"address": NIC, "function": "f", "kind": "vfs", "status": status, "in_use_by": [],
            "reason": "named by address", "loaded": None, "module": "accelops.lifecycle.sriov_vfs"}


def host(provider, last_run=None, reported=True):
    plan = {"changed": False, "cards": [card("ok")], "planned": {}, "problems": [], "drift": [], "discovery": DISC,
            "function_names": {}, "overrides": {}, "error": None, "last_run": last_run or dict(DONE)}
    v = host_record("h1", {
        "host": "h1", "root": "/", "plan_only": False, "placement": True, "placement_host": "cn-h1",
        "root_provider": None, "name_prefix": None, "undrain": [], "safe_mode": True, "fail_on_drift": False,
        "refusal": None},
        plan=plan, read={"results": [{"providers": [provider]}]})
    if reported:
        v["report"] = {"by_host": {"cn-h1": {"summary": {"updated": 1}, "drained": []}}}
    return v


def test_a_rerun_reads_and_lifts_the_drain_its_killed_run_left_and_says_which_run():
    h = host(drained())
    assert step([h], "reads") == [{"hosts": ["cn-h1"]}]  # a no-op host with a run record reads
    [item] = step([h], "report")
    assert item["undrain"] == [PROV]
    report = host_report(host_state(h))
    assert report["lifted_drains"] == [PROV]
    assert "  placement    lifted the drain of %s (card %s) left by the run play=converge user=ops of " \
           "2026-11-27T05:00:00Z" % (PROV, NIC) in report["lines"]


def test_an_operators_drain_and_a_drain_with_allocations_are_left_and_reported():
    for provider, why in ((drained(marked=False), "an operator's drain"), (drained(in_use=True), "allocations")):
        h = host(provider)
        [item] = step([h], "report")
        assert item["undrain"] == []
        report = host_report(host_state(h))
        assert report["lifted_drains"] == [] and report["left_drained"] == [PROV]
        assert any(line.startswith("  placement    %s (card %s): " % (PROV, NIC)) and why in line
                   for line in report["lines"])


def test_a_run_cut_during_apply_is_reported_as_such():
    cut = dict(DONE, phase="apply", cards=[NIC, "0000:86:00.0"])
    report = host_report(host_state(host(drained(), last_run=cut)))
    assert report["cut_run"] == cut
    assert ("  last run     the run play=converge user=ops of 2026-11-27T05:00:00Z was cut during apply (cards "
            "%s, 0000:86:00.0): %s: create 4 VFs" % (NIC, NIC)) in report["lines"]
    assert host_report(host_state(host(drained())))["cut_run"] is None  # a run that ended is not cut


def test_the_run_record_reads_back_what_was_written_and_ignores_other_files(tmp_path):
    write_journal(str(tmp_path), DONE)
    assert read_journal(str(tmp_path)) == DONE
    (tmp_path / JOURNAL_FILE).write_text("secret=1\n")
    assert read_journal(str(tmp_path)) is None
    assert read_journal(str(tmp_path / "missing")) is None
