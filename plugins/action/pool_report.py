# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of accelops.lifecycle.pool_report (its documentation is plugins/modules/pool_report.py): each pool
before and after a keeper run and what became of each planned card (module_utils/_pools.py decides)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _pools
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        plan=dict(type="dict", required=True),
        hosts=dict(type="dict", required=True),
        providers=dict(type="list", elements="dict"),
        drain=dict(type="raw"),
        converge=dict(type="dict"),
        apply=dict(type="bool", default=False),
        fail_on_shortfall=dict(type="bool", default=False),
    )

    def decide(self, args):
        return {"report": _pools.report(args["plan"], args["providers"], args["hosts"], args["drain"],
                                        args["converge"], applied=args["apply"],
                                        fail_on_shortfall=args["fail_on_shortfall"])}
