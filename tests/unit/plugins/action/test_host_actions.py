# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The accelerator_host role's controller actions run as a task runs them (ansible-core's Task, PlayContext, loader,
templar): arguments validated by ArgumentSpecValidator, a bad one failing the task with a message naming it, never
a traceback; the decisions returned as the task's result."""

from __future__ import annotations

import pytest

from actionrunner import run_cases
from recorded import batch_args, host_record

SETTINGS_MSG = (
    "accelerator_host: accelerator_host_functions must be a list, accelerator_host_mode converge or plan, "
    "accelerator_host_allowed_functions null or a list, and with accelerator_host_placement true either "
    "accelerator_host_placement_endpoint + accelerator_host_placement_token or openstack.cloud-style settings "
    "(accelerator_host_cloud, or accelerator_host_auth with accelerator_host_auth_type ...) are needed "
    "(set accelerator_host_placement to false to converge the host only)")
NIC = "0000:d8:00.0"
DISC = {"schema_version": 1, "host": {"hostname": "h1"}, "accelerators": [{"address": NIC}]}
SETTINGS = {"host": "h1", "root": "/", "plan_only": False, "placement": True, "placement_host": "cn-h1",
            "root_provider": None, "name_prefix": None, "undrain": [], "safe_mode": True, "fail_on_drift": False,
            "refusal": None}
CARD = {"address": NIC, "function": "f", "kind": "vfs", "status": "todo", "in_use_by": [], "reason": "named",
        "loaded": None, "module": "accelops.lifecycle.sriov_vfs"}
PLAN = {"changed": True, "cards": [CARD], "problems": [], "drift": [], "discovery": DISC, "function_names": {},
        "overrides": {}, "error": None,
        "planned": {NIC: {"failed": False, "changed": True, "refused_in_use": False, "msg": "", "steps": ["4 VFs"]}}}


def settings_args(**over):
    args = {"host": "h1", "placement_host": "cn-h1", "functions": [{"name": "x710-vf"}], "mode": "converge",
            "allowed_functions": None, "placement": True, "placement_endpoint": "http://placement:8778",
            "placement_token": "secret"}
    args.update(over)
    return args


READ = {"results": [{"providers": [{"name": "cn-h1_" + NIC, "in_use": False, "usages": {}}]}]}
DRAINED = {"changed": True, "by_host": {"cn-h1": {"summary": {"updated": 1}, "drained": []}}}
BAD_SETTINGS = [
    (dict((k, v) for k, v in settings_args().items() if k != "host"), "host"),
    (settings_args(plan_only="sometimes"), "plan_only"),
    (settings_args(undrain={"a": 1}), "undrain"),
    (dict(settings_args(), colour="red"), "colour"),
]
BAD_BATCH = [
    ({"settings": {}}, "step"),
    ({"step": "plan"}, "settings"),
    ({"step": "undo", "settings": {}}, "step"),
    ({"step": "plan", "settings": [1]}, "settings"),
    ({"step": "plan", "settings": {"h1": SETTINGS}, "plans": {"h1": "planned"}}, "plans.h1"),
    ({"step": "drain", "settings": {"h1": SETTINGS}, "placement_read": [1, 2]}, "placement_read"),
    ({"step": "summary", "settings": {"h1": SETTINGS}, "applied": {"h1": 3}}, "applied.h1"),
    # a registered result of another shape (a variable of the same name set by something else): named by the option
    # and the path in it (found by the hostile-input sweep over the actions: named by host alone, or a TypeError's
    # words from a name_prefix that was a list)
    ({"step": "plan", "settings": {"h1": SETTINGS}, "plans": {"h1": dict(PLAN, cards=[1])}},
     "plans.h1.cards[0]: expected a card (address, status, ...), got int"),
    ({"step": "plan", "settings": {"h1": dict(SETTINGS, name_prefix=["a"])}, "plans": {"h1": PLAN}},
     "settings.h1.name_prefix: expected a string or null, got list"),
    ({"step": "plan", "settings": {"h1": dict((k, v) for k, v in SETTINGS.items() if k != "placement_host")},
      "plans": {"h1": PLAN}}, "settings.h1.placement_host: expected the host's name in Placement (a string), got None"),
    ({"step": "apply", "settings": {"h1": SETTINGS}, "plans": {"h1": PLAN}, "placement_read": {"results": [None]}},
     "placement_read.results[0]: expected a mapping, got NoneType"),
    ({"step": "report", "settings": {"h1": SETTINGS}, "plans": {"h1": dict(PLAN, cards=[None])}},
     "plans.h1.cards[0]: expected a card (address, status, ...), got NoneType"),
    ({"step": "drain", "settings": {"h1": SETTINGS}, "plans": {"h1": PLAN}, "placement_read": {"results": ["x"]}},
     "placement_read.results[0]: expected a mapping, got str"),
    ({"step": "drain", "settings": {"h1": SETTINGS}, "plans": {"h1": PLAN},
      "placement_read": {"results": [{"providers": [{"name": 7}]}]}},
     "placement_read.results[0].providers[0].name: expected a string, got int"),
]
# every action run of this file, by name (run once for the file by the fixture)
CASES = {
    "settings": ("accelerator_host_settings", settings_args()),
    "refused functions": ("accelerator_host_settings", settings_args(functions={"name": "x"})),
    "refused mode": ("accelerator_host_settings", settings_args(mode="apply")),
    "refused credentials": ("accelerator_host_settings", settings_args(placement_token="")),
    "refused allow-list": ("accelerator_host_settings", settings_args(allowed_functions=["dma"])),
    "plan": ("accelerator_host_batch", dict(batch_args([host_record("h1", SETTINGS, plan=PLAN)]), step="plan")),
    "drain": ("accelerator_host_batch",
              dict(batch_args([host_record("h1", SETTINGS, plan=PLAN, read=READ)]), step="drain")),
    "apply": ("accelerator_host_batch",
              dict(batch_args([host_record("h1", SETTINGS, plan=PLAN, read=READ, drain=DRAINED)]), step="apply")),
    "summary": ("accelerator_host_batch",
                dict(batch_args([host_record("h1", SETTINGS, plan=PLAN, read=READ, drain=DRAINED),
                                 host_record("h2", {})]), step="summary")),
}
CASES.update(("bad settings %d" % i, ("accelerator_host_settings", args)) for i, (args, _o) in enumerate(BAD_SETTINGS))
CASES.update(("bad batch %d" % i, ("accelerator_host_batch", args)) for i, (args, _m) in enumerate(BAD_BATCH))


@pytest.fixture(scope="module")
def results():
    names = sorted(CASES)
    out = dict(zip(names, run_cases([CASES[n] for n in names])))
    for name, result in out.items():
        assert "exception" not in result, (name, result)
    return out


def test_settings_are_recorded_with_no_refusal_and_no_secret(results):
    result = results["settings"]
    assert not result.get("failed") and result["changed"] is False
    assert dict((k, result[k]) for k in SETTINGS) == dict(SETTINGS)
    assert "secret" not in repr(result)


def test_settings_of_the_wrong_form_are_refused_with_the_roles_message_not_failed(results):
    for name in ("refused functions", "refused mode", "refused credentials"):
        assert not results[name].get("failed") and results[name]["refusal"] == SETTINGS_MSG, name
    assert "x710-vf" in results["refused allow-list"]["refusal"] and not results["refused allow-list"].get("failed")


@pytest.mark.parametrize("index", range(len(BAD_SETTINGS)), ids=[o for _a, o in BAD_SETTINGS])
def test_a_bad_settings_argument_fails_naming_it(results, index):
    result, option = results["bad settings %d" % index], BAD_SETTINGS[index][1]
    assert result["failed"] and option in result["msg"] and "Traceback" not in result["msg"], result


def test_the_batch_steps_as_a_task_returns_them(results):
    planned = results["plan"]
    assert planned["reads"] == [{"hosts": ["cn-h1"]}] and planned["check"] == [] and planned["changing"] == ["h1"]
    [drain] = results["drain"]["drain"]
    assert drain["host"] == "cn-h1" and drain["drain"] == [NIC]
    assert results["apply"]["apply"] == {"h1": {"cards": [NIC], "placement_in_use": {}}}
    summary = results["summary"]
    assert summary["hosts"] == ["h1"] and summary["reports"]["h1"]["host"] == "h1"
    assert summary["reports"]["h1"]["cards"][0]["status"] == "not-applied"


@pytest.mark.parametrize("index", range(len(BAD_BATCH)), ids=[m for _a, m in BAD_BATCH])
def test_a_bad_batch_argument_fails_naming_it(results, index):
    result, message = results["bad batch %d" % index], BAD_BATCH[index][1]
    assert result["failed"] and message in result["msg"] and "Traceback" not in result["msg"], result
