# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The accelerator_host role's first check (the refusal, plugin_utils/_host_settings.py) and its per-host summary
(plugin_utils/_host_report.py)."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_report import host_report
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_settings import SETTINGS_MSG, refusal

SHA_DMA = "a" * 64
SHA_NLB = "b" * 64


def settings(**over):
    base = {"host": "h1", "functions": [], "mode": "converge", "allowed_functions": None, "placement": True,
            "placement_endpoint": "http://127.0.0.1:8778", "placement_token": "t", "cloud": None, "auth": None}
    base.update(over)
    return base


# -- converge_refusal ---------------------------------------------------------------------------------------------

def test_valid_settings_without_allow_list_are_not_refused():
    assert refusal(settings(functions=[{"name": "x"}])) is None


@pytest.mark.parametrize("over", [
    {"functions": "x710-vf"},                       # a string, not a list
    {"mode": "apply"},
    {"allowed_functions": "dma"},
    {"placement_token": None},                      # placement on, endpoint without token, no cloud or auth
    {"placement_endpoint": "", "placement_token": ""},
])
def test_bad_settings_are_refused_naming_the_variables(over):
    msg = refusal(settings(**over))
    assert msg == SETTINGS_MSG
    assert "accelerator_host_functions must be a list" in msg and "accelerator_host_placement to false" in msg


@pytest.mark.parametrize("over", [{"placement": False, "placement_token": None},
                                  {"placement_endpoint": None, "placement_token": None, "cloud": "devstack"},
                                  {"placement_endpoint": None, "placement_token": None, "auth": {"auth_url": "u"}}])
def test_other_placement_forms_are_accepted(over):
    assert refusal(settings(**over)) is None


def test_allow_list_names_every_entry_outside_it():
    functions = [
        {"name": "DMA", "fpga": {"bitstream": "dma.gbs", "sha256": "sha256:" + SHA_DMA.upper()}},
        {"name": "nlb", "fpga": {"bitstream": "nlb.gbs", "sha256": SHA_NLB, "rollback_bitstream": "dma.gbs",
                                 "rollback_sha256": SHA_DMA}},
        {"name": "x710-vf", "sriov": {"num_vfs": 4}},
    ]
    msg = refusal(settings(functions=functions, allowed_functions=["dma", "NLB", "sha256:" + SHA_DMA]))
    assert msg.startswith("accelerator_host: the declaration for h1 is outside its allow-list, nothing was changed: ")
    outside = msg.split("nothing was changed: ", 1)[1].split("; ")
    assert outside == ["nlb: fpga.sha256 %s (nlb.gbs) not in accelerator_host_allowed_functions" % SHA_NLB,
                       "x710-vf: function name not in accelerator_host_allowed_functions"]


def test_allow_list_that_covers_the_declaration_is_not_a_refusal():
    functions = [{"name": "dma", "fpga": {"bitstream": "dma.gbs", "sha256": SHA_DMA}}]
    assert refusal(settings(functions=functions, allowed_functions=["DMA", SHA_DMA])) is None


# -- converge_report ----------------------------------------------------------------------------------------------

def card(address, status="todo", **over):
    c = {"address": address, "function": "f", "kind": "fpga", "status": status, "reason": "free card",
         "loaded": None, "module": "accelops.lifecycle.fpga_program", "in_use_by": []}
    c.update(over)
    return c


def recorded(**over):
    base = {"host": "h1", "root": "/", "plan_only": False, "placement": True, "placement_host": "cn1",
            "fail_on_drift": False, "cards": [], "problems": [], "planned": {}, "applied": {}, "verify": {},
            "drained": [], "kept_drained": [], "drift": [], "error": None, "reported": True,
            "placement_share": {"summary": {}, "drained": []}}
    base.update(over)
    return base


def statuses(report):
    return dict((c["address"], (c["status"], c["why"])) for c in report["cards"])


def test_every_card_status_and_its_reason():
    steps = ["s1", "s2", "s3", "s4", "s5"]
    cards = [
        card("a", "ok", reason="already loaded"),
        card("b", "blocked", in_use_by=["domain vm1", "placement usages"]),
        card("c", "unsupported", module=None),
        card("d"), card("e"), card("f"), card("g"), card("h"), card("i"), card("j", loaded="old"),
    ]
    planned = {"d": {"failed": True, "refused_in_use": True, "msg": "VF in use"},
               "e": {"failed": True, "msg": "bad bitstream"},
               "f": {"changed": False},
               "g": {"changed": True, "steps": steps}, "h": {"changed": True, "steps": steps},
               "i": {"changed": True, "steps": steps}, "j": {"changed": True, "steps": steps}}
    applied = {"h": {"failed": True, "msg": "write failed", "state": "rolled-back"},
               "i": {"failed": False, "applied": ["x"]},
               "j": {"failed": False, "applied": steps}}
    report = host_report(recorded(cards=cards, planned=planned, applied=applied, verify={"j": True}))
    got = statuses(report)
    assert got["a"] == ("ok", "carries it (already loaded)")
    assert got["b"] == ("blocked", "in use, not touched: domain vm1; placement usages")
    assert got["c"][0] == "unsupported"
    assert got["d"] == ("blocked", "the module refuses, in use: VF in use")
    assert got["e"] == ("plan-failed", "bad bitstream")
    assert got["f"] == ("ok", "accelops.lifecycle.fpga_program plans no change")
    assert got["g"] == ("not-applied", "planned, not applied (the run stopped before it)")
    assert got["h"] == ("failed", "write failed (state rolled-back)")
    assert got["i"] == ("failed", "applied (x) but discovery does not show it")
    assert got["j"] == ("changed", "free card; was old; did: s1; s2; s3 (+2 more steps)")
    assert report["changed"] == ["j"]
    assert report["blocked"] == ["b", "d"]
    assert report["failed"] == ["e", "g", "h", "i"]
    assert report["lines"][0] == "h1 [converge, root /]: 1 changed, 0 to change, 2 blocked, 4 failed, 2 as declared"
    assert report["lines"][1] == "  ok           a  f (fpga): carries it (already loaded)"
    assert report["failure"] == "accelerator_host on h1: cards not converged: e, g, h, i"


def test_plan_mode_lists_would_change_and_placement_drift_and_fails_on_drift_only_when_asked():
    cards = [card("a", loaded="nlb")]
    planned = {"a": {"changed": True, "steps": ["load dma"]}}
    drift = ["host a: nlb, declared dma", "placement cn1_a: would be created"]
    report = host_report(recorded(plan_only=True, cards=cards, planned=planned, drift=drift, reported=False))
    assert statuses(report)["a"] == ("would-change", "free card; was nlb; plan: load dma")
    assert report["mode"] == "plan"
    assert report["lines"][0].endswith(", 2 drift")
    assert report["lines"][-1] == "  drift        placement cn1_a: would be created"
    assert report["failure"] is None
    asked = host_report(recorded(plan_only=True, cards=cards, planned=planned, drift=drift, fail_on_drift=True))
    assert asked["failure"] == "accelerator_host on h1: 2 drift item(s) (listed in the summary)"


def test_placement_line_counts_undrains_and_keeps_others_drains():
    # the host's share of the batch report (placement_provider_tree's by_host): counts and drained providers
    share = {"summary": {"created": 0, "updated": 1, "unchanged": 3, "pruned": 0, "kept": 0, "foreign": 0},
             "drained": [{"name": "cn1_b_vf1", "address": "b_vf1"}, {"name": "cn1_c", "address": "c"}]}
    report = host_report(recorded(drained=["a", "b"], kept_drained=["b"], placement_share=share))
    assert report["placement"] == {"drained": ["a", "b"], "undrained": ["a"], "kept_drained": ["b"],
                                   "already_drained": ["cn1_c"],
                                   "summary": {"created": 0, "updated": 1, "unchanged": 3, "pruned": 0, "kept": 0,
                                               "foreign": 0}}
    assert report["lines"][-2] == ("  placement    drained a, b; reported: updated 1, unchanged 3; undrained a; "
                                   "already drained, left so: cn1_c")
    assert report["lines"][-1].startswith("  placement    STILL DRAINED: b (fix the card")


def test_a_host_left_out_of_the_report_says_not_reported_and_keeps_its_drains():
    report = host_report(recorded(drained=["a"], reported=False,
                                  error="the host is locked by another converge"))
    assert report["placement"]["summary"] is None
    assert report["placement"]["undrained"] == []
    assert report["lines"][-3] == "  placement    drained a; not reported"
    assert report["lines"][-2] == "  placement    STILL DRAINED: a (fix the card, converge again, then release with " \
                                  "accelerator_host_undrain)"
    assert report["lines"][-1] == "  ERROR        the host is locked by another converge"
    assert report["failure"] == "accelerator_host on h1: the host is locked by another converge"


def test_no_placement_no_placement_line():
    report = host_report(recorded(placement=False, reported=False, cards=[card("a", "ok", reason="")],
                                  problems=["no card for entry y"]))
    assert report["lines"] == ["h1 [converge, root /]: 0 changed, 0 to change, 0 blocked, 0 failed, 1 as declared",
                               "  ok           a  f (fpga): carries it", "  problem      no card for entry y"]
    assert report["failure"] is None


def test_report_input_must_be_a_dict():
    with pytest.raises(ValueError, match="^expected a dictionary of what the run recorded, got str"):
        host_report("h1")
