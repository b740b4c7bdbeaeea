# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""accelerator_host_batch: the accelerator_host role's decisions for one serial batch, on the controller."""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.accelops.lifecycle.plugins.plugin_utils import _host_batch
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_report import host_report

STEPS = ("plan", "drain", "apply", "report", "summary")
RESULTS = ("placement_read", "placement_check", "placement_drain", "placement_report")


def _by_host(args, option):
    """The option's mapping of inventory name to a registered result, each a mapping or null (not run)."""
    value = args[option] or {}
    for name, result in value.items():
        if result is not None and not isinstance(result, Mapping):
            raise ValueError("%s.%s: expected the host's registered result (a dictionary) or null, got %s"
                             % (option, name, type(result).__name__))
    return value


def _changing(batch):
    # before the Placement read: the hosts whose plan changes a card (the read may still find some in use)
    return [item.get("host") for item, s in batch.states() if s["changing"]]


def _summary(batch):
    reports = {}
    for item, s in batch.states():
        try:
            reports[item.get("host")] = host_report(s)
        except ValueError as e:
            raise ValueError("%s: a recorded result (plans or applied) does not have the shape accelerator_converge "
                             "returns (%s)" % (item.get("host"), e))
    return {"hosts": _host_batch.hosts(batch), "reports": reports}


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        step=dict(type="str", required=True, choices=list(STEPS)),
        settings=dict(type="dict", required=True),
        plans=dict(type="dict", default={}),
        applied=dict(type="dict", default={}),
        placement_read=dict(type="dict"),
        placement_check=dict(type="dict"),
        placement_drain=dict(type="dict"),
        placement_report=dict(type="dict"),
    )

    def decide(self, args):
        batch = _host_batch.Batch(
            _by_host(args, "settings"), plans=_by_host(args, "plans"), applied=_by_host(args, "applied"),
            read=args["placement_read"], check=args["placement_check"], drain=args["placement_drain"],
            report=args["placement_report"])
        step = args["step"]
        if step == "plan":
            return {"reads": _host_batch.reads(batch), "check": _host_batch.check(batch),
                    "changing": _changing(batch)}
        if step == "drain":
            return {"drain": _host_batch.drain(batch)}
        if step == "apply":
            return {"apply": _host_batch.apply(batch)}
        if step == "report":
            return {"report": _host_batch.report(batch)}
        return _summary(batch)
