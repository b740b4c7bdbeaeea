# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The accelerator_host role's decisions (plugin_utils/_host_batch.py, through the accelerator_host_batch action)
from what its tasks returned."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_report import host_report
from recorded import host_record, step
from recorded import state as host_state

NIC, FPGA = "0000:d8:00.0", "0000:86:00.0"
DISC = {"schema_version": 1, "host": {"hostname": "h1"}, "accelerators": [{"address": NIC}, {"address": FPGA}]}


def card(address, status, function="f", kind="vfs"):
    return {"address": address, "function": function, "kind": kind, "status": status, "in_use_by": [],
            "reason": "named by address", "loaded": None, "module": "accelops.lifecycle.sriov_vfs"}


def plan(cards, planned=None, **extra):
    out = {"changed": bool(planned), "cards": cards, "planned": planned or {}, "problems": [], "drift": [],
           "discovery": DISC, "function_names": {}, "overrides": {NIC: {"traits": ["CUSTOM_FUNCTION_F"]}},
           "error": None}
    out.update(extra)
    return out


def host(name="h1", plan_only=False, placement=True, safe_mode=True, refusal=None, **results):
    return host_record(name, {
        "host": name, "root": "/", "plan_only": plan_only, "placement": placement, "placement_host": "cn-" + name,
        "root_provider": None, "name_prefix": None, "undrain": [], "safe_mode": safe_mode, "fail_on_drift": False,
        "refusal": refusal}, **results)


TODO = {NIC: {"failed": False, "changed": True, "refused_in_use": False, "msg": "", "steps": ["create 4 VFs"]}}


def test_noop_host_reads_nothing_and_is_reported():
    h = host(plan=plan([card(NIC, "ok")]))
    assert step([h], "reads") == []
    assert step([h], "drain") == []
    [item] = step([h], "report")
    assert item["host"] == "cn-h1" and item["discovery"] == DISC and item["drain"] == [] and item["undrain"] == []
    assert item["overrides"] == {NIC: {"traits": ["CUSTOM_FUNCTION_F"]}}
    assert host_state(h)["apply"] == []


def test_card_to_change_is_read_drained_applied_and_undrained():
    p = plan([card(NIC, "todo")], TODO)
    assert step([host(plan=p)], "reads") == [{"hosts": ["cn-h1"]}]
    read = {"results": [{"providers": [{"name": "cn-h1_" + NIC, "in_use": False, "usages": {}}]}]}
    [drain] = step([host(plan=p, read=read)], "drain")
    assert drain["drain"] == [NIC]
    drained = {"changed": True, "by_host": {"cn-h1": {"summary": {"updated": 1}, "drained": []}}}
    state = host_state(host(plan=p, read=read, drain=drained))
    assert state["apply"] == [NIC] and state["drained"] == [NIC]
    applied = plan([card(NIC, "ok")], {}, applied={NIC: {"failed": False, "applied": ["create 4 VFs"], "state": None}},
                   verify={NIC: True}, kept_drained=[])
    applied["planned"] = TODO
    [item] = step([host(plan=p, read=read, drain=drained, apply=applied)], "report")
    assert item["undrain"] == [NIC] and item["drain"] == []


def test_placement_usages_block_a_card_in_safe_mode_and_are_passed_to_the_host_otherwise():
    p = plan([card(NIC, "todo")], TODO)
    read = {"results": [{"providers": [{"name": "cn-h1_" + NIC, "in_use": True, "usages": {"SRIOV_NET_VF": 1}}]}]}
    safe = host_state(host(plan=p, read=read))
    assert safe["apply"] == [] and safe["cards"][0]["status"] == "blocked"
    assert safe["cards"][0]["in_use_by"] == ["placement provider cn-h1_%s has usages SRIOV_NET_VF=1" % NIC]
    assert step([host(plan=p, read=read)], "drain") == []
    unsafe = host_state(host(plan=p, read=read, safe_mode=False))
    assert unsafe["changing"] == [NIC] and unsafe["placement_in_use"] == {NIC: safe["cards"][0]["in_use_by"]}


def test_a_card_that_cannot_be_planned_stops_the_host_before_any_drain():
    p = plan([card(NIC, "todo")], {NIC: {"failed": True, "changed": False, "refused_in_use": False,
                                         "msg": "num_vfs: more than sriov_totalvfs"}})
    state = host_state(host(plan=p))
    assert state["error"] == "nothing was changed: the plan failed for %s (num_vfs: more than sriov_totalvfs)" % NIC
    assert step([host(plan=p)], "drain") == [] and step([host(plan=p)], "report") == []


def test_a_failed_drain_is_the_hosts_error_and_nothing_is_applied():
    p = plan([card(NIC, "todo")], TODO)
    state = host_state(host(plan=p, drain={"failed": True, "msg": "Placement answered 503"}))
    assert state["error"] == "nothing was changed: the drain in Placement failed: Placement answered 503"
    assert state["apply"] == []


def test_a_card_that_does_not_verify_stays_drained():
    p = plan([card(NIC, "todo")], TODO)
    drained = {"by_host": {"cn-h1": {"summary": {}, "drained": []}}}
    applied = plan([card(NIC, "todo")], TODO, applied={NIC: {"failed": True, "msg": "EIO", "state": "partial",
                                                             "applied": ["create 4 VFs"]}},
                   verify={NIC: False}, kept_drained=[NIC])
    report = {"by_host": {"cn-h1": {"summary": {"updated": 1}, "drained": [{"name": "cn-h1_" + NIC, "address": NIC}]}}}
    h = host(plan=p, drain=drained, apply=applied, report=report)
    [item] = step([h], "report")
    assert item["drain"] == [NIC] and item["undrain"] == []
    summary = host_report(host_state(h))
    assert summary["failed"] == [NIC] and "STILL DRAINED: %s" % NIC in "\n".join(summary["lines"])


def test_a_lock_held_at_apply_leaves_the_host_out_of_the_report():
    p = plan([card(NIC, "todo")], TODO)
    drained = {"by_host": {"cn-h1": {}}}
    locked = {"failed": True, "msg": "the host is locked by another converge (pid=1, token=x)",
              "error": "the host is locked by another converge (pid=1, token=x)", "cards": [], "applied": {}}
    h = host(plan=p, drain=drained, apply=locked)
    assert host_state(h)["error"].startswith("the host is locked")
    assert step([h], "report") == []


def test_plan_mode_drift_has_the_host_and_placement_lines():
    p = plan([card(NIC, "todo")], TODO, drift=["host %s: f (vfs) not as declared; plan: create 4 VFs" % NIC])
    read = {"results": [{"providers": [{"name": "cn-h1_" + NIC, "traits": ["A"], "inventories": {}}]}]}
    check = {"providers": [{"name": "cn-h1_" + NIC, "host": "cn-h1", "action": "updated", "traits": ["A", "B"],
                            "inventories": {"SRIOV_NET_VF": {"total": 4}}}]}
    h = host(plan_only=True, plan=p, read=read, check=check)
    assert step([h], "reads") == [{"hosts": ["cn-h1"]}]
    assert step([h], "check")[0]["host"] == "cn-h1"
    assert host_state(h)["drift"] == [
        "host %s: f (vfs) not as declared; plan: create 4 VFs" % NIC,
        "placement cn-h1_%s: would be updated +B inventories none -> SRIOV_NET_VF=4" % NIC]
    assert host_state(h)["apply"] == [] and step([h], "drain") == []


def test_plan_mode_drift_reads_novas_and_cyborgs_providers_back():
    p = plan([card(NIC, "ok"), card(FPGA, "ok", kind="fpga")])
    check = {"providers": [
        {"name": "cn-h1_" + NIC.upper(), "host": "cn-h1", "action": "foreign", "reporter": "nova",
         "missing_traits": ["CUSTOM_FUNCTION_F"], "traits": ["OWNER_NOVA"], "inventories": {}},
        {"name": "h1_" + FPGA, "host": "cn-h1", "action": "awaiting", "reporter": "cyborg", "missing_traits": []}]}
    h = host(plan_only=True, plan=p, read={"results": [{"providers": []}]}, check=check)
    assert host_state(h)["drift"] == [
        "placement cn-h1_%s (nova): lacks CUSTOM_FUNCTION_F" % NIC.upper(),
        "placement h1_%s: not reported by cyborg yet" % FPGA]


def test_a_refused_host_reads_nothing_and_fails_with_the_reason():
    h = host(refusal="accelerator_host: the declaration for h1 is outside its allow-list", plan={"skipped": True})
    assert step([h], "reads") == [] and step([h], "report") == []
    assert host_report(host_state(h))["failure"].endswith("outside its allow-list")


def test_hosts_that_do_not_run_the_role_are_left_out():
    # no settings (not included, {} from the role's default) or null settings (its part ended by an earlier summary)
    for other in (host_record("other", {}), host_record("other", None)):
        assert [item["host"] for item in step([host(plan=plan([card(NIC, "ok")])), other], "report")] == ["cn-h1"]
        assert step([other], "hosts") == []


def test_the_apply_runs_for_the_batch_only_where_a_host_changes_cards():
    # the hosts whose apply would run (the role runs it once, and skips, when there is none)
    p = plan([card(NIC, "todo")], TODO)
    read = {"results": [{"providers": [{"name": "cn-h2_" + NIC, "in_use": False, "usages": {}}]}]}
    drained = {"changed": True, "by_host": {"cn-h2": {"summary": {"updated": 1}, "drained": []}}}
    noop = host("h1", plan=plan([card(NIC, "ok")]), read=read, drain=drained)
    changing = host("h2", plan=p, read=read, drain=drained)
    assert step([noop, changing], "apply") == {"h2": {"cards": [NIC], "placement_in_use": {}}}
    assert [h["name"] for h in (noop, changing) if host_state(h)["apply"]] == ["h2"]
    assert step([noop], "apply") == {}
    # not drained (the drain failed or was not made), plan mode, a card that cannot be planned, Placement off
    assert step([host("h2", plan=p, read=read)], "apply") == {}
    assert step([host("h2", plan=p, plan_only=True)], "apply") == {}
    bad = plan([card(NIC, "todo")], {NIC: dict(TODO[NIC], failed=True, msg="no such bitstream")})
    assert step([host("h2", plan=bad, read=read, drain=drained)], "apply") == {}
    assert step([host("h2", plan=p, placement=False)], "apply") == {"h2": {"cards": [NIC], "placement_in_use": {}}}
    # a former run's apply result (the role in the same play again) does not hide this run's
    former = {"failed": True, "msg": "lock held", "error": "the host is locked"}
    assert step([host("h2", plan=p, read=read, drain=drained, apply=former)], "apply") == {"h2": {"cards": [NIC], "placement_in_use": {}}}


def test_the_summary_loop_names_every_host_that_runs_the_role_and_no_other():
    # a refused host and a failed plan are summarised too; a host of the batch without the role's settings is not
    hosts = [host("h1", plan=plan([card(NIC, "ok")])), host_record("other", {}),
             host("h2", refusal="not allowed"), host("h3", plan={"failed": True, "msg": "crashed"})]
    assert step(hosts, "hosts") == ["h1", "h2", "h3"]
    assert step([], "hosts") == []


def test_each_call_carries_the_hosts_reporters():
    p = plan([card(NIC, "todo"), card(FPGA, "ok", kind="fpga")], TODO, reporters={NIC: "nova", FPGA: "cyborg"})
    read = {"results": [{"providers": []}]}
    [drain] = step([host(plan=p, read=read)], "drain")
    assert drain["reporters"] == {NIC: "nova", FPGA: "cyborg"} and drain["drain"] == [NIC]
    applied = plan([card(NIC, "ok"), card(FPGA, "ok", kind="fpga")], {}, reporters={NIC: "nova", FPGA: "cyborg"},
                   applied={NIC: {"failed": False, "applied": ["create 4 VFs"], "state": None}}, verify={NIC: True},
                   kept_drained=[])
    drained = {"changed": True, "by_host": {"cn-h1": {"summary": {"updated": 0}, "drained": []}}}
    [item] = step([host(plan=p, read=read, drain=drained, apply=applied)], "report")
    assert item["reporters"] == {NIC: "nova", FPGA: "cyborg"}


def test_placement_usages_of_a_card_count_under_any_reporters_name():
    p = plan([card(NIC, "todo")], TODO)
    for name in ("cn-h1_" + NIC.upper(), "cn-h1_accelops_" + NIC, "cn-h1_" + NIC):
        read = {"results": [{"providers": [{"name": name, "in_use": True, "usages": {"SRIOV_NET_VF": 1}}]}]}
        state = host_state(host(plan=p, read=read))
        assert state["placement_in_use"][NIC] == ["placement provider %s has usages SRIOV_NET_VF=1" % name], name
