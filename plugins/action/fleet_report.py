# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fleet_report: the fleet report's model (plugin_utils/_fleet_report.py), from its options, on the controller."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import build


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        # items of the hosts' own shape (a null item: a host that was not reached), checked by the model with
        # messages naming the path and the accepted form
        hosts=dict(type="list", elements="raw", default=[]),
        names=dict(type="list", elements="str", default=[]),
        placement=dict(type="list", elements="raw", default=[]),
        providers=dict(type="list", elements="raw", default=[]),
        placement_errors=dict(type="dict", default={}),
        profiles=dict(type="list", elements="raw", default=[]),
        generated=dict(type="str"),
        title=dict(type="str", default="Accelerator fleet"),
    )

    def decide(self, args):
        return {"report": build(args)}
