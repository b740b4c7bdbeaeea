# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of accelops.lifecycle.pool_plan (its documentation is plugins/modules/pool_plan.py): the pool
keeper's plan, made on the controller from the arguments alone (module_utils/_pools.py decides)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _pools
from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import not_allowed
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        functions=dict(type="list", elements="dict", required=True),
        pools=dict(type="list", elements="dict", required=True),
        hosts=dict(type="dict", required=True),
        providers=dict(type="list", elements="dict", required=True),
        groups=dict(type="dict"),
        aggregates=dict(type="dict"),
        margin=dict(type="int", default=_pools.DEFAULT_MARGIN),
        profiles=dict(type="list", elements="dict"),
        profile_hosts=dict(type="raw"),
    )

    def decide(self, args):
        if args["margin"] < 0:
            raise ValueError("margin: must be an integer >= 0, got %d" % args["margin"])
        plan = _pools.plan(args["functions"], args["pools"], args["hosts"], args["providers"],
                           margin=args["margin"], not_allowed=not_allowed, groups=args["groups"],
                           aggregates=args["aggregates"], profiles=args["profiles"],
                           profile_hosts=args["profile_hosts"])
        return {"plan": plan}
