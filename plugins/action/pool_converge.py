# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of accelops.lifecycle.pool_converge (its documentation is plugins/modules/pool_converge.py): what
the pool keeper converges once the chosen cards are drained (module_utils/_pools.py decides)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _pools
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        plan=dict(type="dict", required=True),
        functions=dict(type="list", elements="dict", required=True),
        drain=dict(type="raw"),
    )

    def decide(self, args):
        return {"converge": _pools.after_drain(args["plan"], args["functions"], args["drain"])}
