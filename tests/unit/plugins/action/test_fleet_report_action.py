# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet_report action run as a task runs it: its arguments validated by ArgumentSpecValidator, the same model as
the filter returned under ``report``, wrong input failing the task with a message naming the path, no traceback."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.action.fleet_report import ActionModule
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import build as fleet_report

from ansible_collections.accelops.lifecycle.tests.unit.plugins.action.controller_run import run_action

CARD = {"address": "0000:3b:00.0", "family": "fpga", "physfn": None, "function": None,
        "units": [{"kind": "device", "id": "0000:3b:00.0", "in_use": True,
                   "in_use_by": [{"kind": "domain", "name": "instance-1"}]}]}
PROVIDER = {"name": "cn1_accelops_0000:3b:00.0", "uuid": "u-1", "root_provider_uuid": "root", "host": "cn1",
            "traits": ["CUSTOM_OWNER_ACCELOPS"], "inventories": {"FPGA": {"total": 1, "reserved": 0}},
            "usages": {"FPGA": 0}, "allocations": {}, "in_use": False, "drained": False, "held": None}


def run(args):
    return run_action(ActionModule, args)


def test_the_action_returns_the_filters_model():
    args = {"hosts": [{"name": "cn1", "discovery": {"accelerators": [CARD]}, "functions": []}, None],
            "names": ["cn1", "cn2"], "providers": [PROVIDER], "generated": "now"}
    result = run(args)
    assert not result.get("failed") and result["changed"] is False
    assert result["report"] == fleet_report(dict(args, title="Accelerator fleet"))
    (card,) = result["report"]["hosts"][0]["cards"]
    assert card["in_use"] and card["evidence"] == ["device 0000:3b:00.0: domain instance-1"]
    assert result["report"]["hosts"][1]["error"].startswith("not reached")


def test_an_argument_of_the_wrong_type_fails_naming_it():
    result = run({"hosts": "cn1"})
    assert result["failed"] and "hosts" in result["msg"]
    result = run({"hosts": [], "placement_errors": ["cn1"]})
    assert result["failed"] and "placement_errors" in result["msg"]


def test_input_of_the_wrong_shape_fails_naming_the_path():
    result = run({"hosts": [{"name": "cn1", "discovery": {"accelerators": [{"address": 5}]}}]})
    assert result["failed"]
    assert result["msg"] == ("fleet_report: hosts[0].discovery.accelerators[0].address: expected a PCI address "
                             "string, got int")
