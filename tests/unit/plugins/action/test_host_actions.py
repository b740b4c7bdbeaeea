# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The accelerator_host role's controller actions run as a task runs them (ansible-core's Task, PlayContext, loader,
templar): arguments validated by ArgumentSpecValidator, a bad one failing the task with a message naming it, never
a traceback; the decisions returned as the task's result."""

from __future__ import annotations

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.plugins.connection.local import Connection as LocalConnection
from ansible.template import Templar
from ansible_collections.accelops.lifecycle.plugins.action.accelerator_host_batch import ActionModule as BatchAction
from ansible_collections.accelops.lifecycle.plugins.action.accelerator_host_settings import (
    ActionModule as SettingsAction)
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_settings import SETTINGS_MSG
from recorded import batch_args, host_record

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


def run(action_class, args):
    task = Task()
    task.action = "accelops.lifecycle." + action_class.__module__.rsplit(".", 1)[-1]
    task.args = args
    loader = DataLoader()
    # the connection the task executor hands an action (never opened: these actions run on the controller)
    connection = LocalConnection(PlayContext(), None)
    action = action_class(task, connection=connection, play_context=PlayContext(), loader=loader,
                          templar=Templar(loader=loader), shared_loader_obj=None)
    action._load_name = task.action  # what ansible-core's plugin loader sets on the actions it loads
    return action.run(task_vars={})


def settings_args(**over):
    args = {"host": "h1", "placement_host": "cn-h1", "functions": [{"name": "x710-vf"}], "mode": "converge",
            "allowed_functions": None, "placement": True, "placement_endpoint": "http://placement:8778",
            "placement_token": "secret"}
    args.update(over)
    return args


def test_settings_are_recorded_with_no_refusal_and_no_secret():
    result = run(SettingsAction, settings_args())
    assert not result.get("failed") and result["changed"] is False
    assert dict((k, result[k]) for k in SETTINGS) == dict(SETTINGS)
    assert "secret" not in repr(result)


def test_settings_of_the_wrong_form_are_refused_with_the_roles_message_not_failed():
    for over in ({"functions": {"name": "x"}}, {"mode": "apply"}, {"placement_token": ""}):
        result = run(SettingsAction, settings_args(**over))
        assert not result.get("failed") and result["refusal"] == SETTINGS_MSG, over
    result = run(SettingsAction, settings_args(allowed_functions=["dma"]))
    assert "x710-vf" in result["refusal"] and not result.get("failed")


@pytest.mark.parametrize("args,option", [
    (dict((k, v) for k, v in settings_args().items() if k != "host"), "host"),
    (settings_args(plan_only="sometimes"), "plan_only"),
    (settings_args(undrain={"a": 1}), "undrain"),
    (dict(settings_args(), colour="red"), "colour"),
])
def test_a_bad_settings_argument_fails_naming_it(args, option):
    result = run(SettingsAction, args)
    assert result["failed"] and option in result["msg"] and "Traceback" not in result["msg"], result


def test_the_batch_steps_as_a_task_returns_them():
    h = host_record("h1", SETTINGS, plan=PLAN)
    planned = run(BatchAction, dict(batch_args([h]), step="plan"))
    assert planned["reads"] == [{"hosts": ["cn-h1"]}] and planned["check"] == [] and planned["changing"] == ["h1"]
    read = {"results": [{"providers": [{"name": "cn-h1_" + NIC, "in_use": False, "usages": {}}]}]}
    h = host_record("h1", SETTINGS, plan=PLAN, read=read)
    [drain] = run(BatchAction, dict(batch_args([h]), step="drain"))["drain"]
    assert drain["host"] == "cn-h1" and drain["drain"] == [NIC]
    h["drain"] = {"changed": True, "by_host": {"cn-h1": {"summary": {"updated": 1}, "drained": []}}}
    assert run(BatchAction, dict(batch_args([h]), step="apply"))["apply"] == {
        "h1": {"cards": [NIC], "placement_in_use": {}}}
    summary = run(BatchAction, dict(batch_args([h, host_record("h2", {})]), step="summary"))
    assert summary["hosts"] == ["h1"] and summary["reports"]["h1"]["host"] == "h1"
    assert summary["reports"]["h1"]["cards"][0]["status"] == "not-applied"


@pytest.mark.parametrize("args,message", [
    ({"settings": {}}, "step"),
    ({"step": "plan"}, "settings"),
    ({"step": "undo", "settings": {}}, "step"),
    ({"step": "plan", "settings": [1]}, "settings"),
    ({"step": "plan", "settings": {"h1": SETTINGS}, "plans": {"h1": "planned"}}, "plans.h1"),
    ({"step": "drain", "settings": {"h1": SETTINGS}, "placement_read": [1, 2]}, "placement_read"),
    ({"step": "summary", "settings": {"h1": SETTINGS}, "applied": {"h1": 3}}, "applied.h1"),
    # a registered result of another shape (a variable of the same name set by something else): named by host
    ({"step": "plan", "settings": {"h1": SETTINGS}, "plans": {"h1": dict(PLAN, cards=[1])}}, "h1: a recorded"),
])
def test_a_bad_batch_argument_fails_naming_it(args, message):
    result = run(BatchAction, args)
    assert result["failed"] and message in result["msg"] and "Traceback" not in result["msg"], result
