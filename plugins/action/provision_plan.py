# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of accelops.lifecycle.provision_plan (its documentation is plugins/modules/provision_plan.py): the
cards to converge so that unsatisfiable device profiles get candidates (module_utils/_provision.py decides)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _provision
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        profiles=dict(type="list", elements="dict", required=True),
        functions=dict(type="dict", required=True),
        hosts=dict(type="dict", required=True),
        providers=dict(type="list", elements="dict", default=[]),
    )

    def decide(self, args):
        return {"plan": _provision.plan(args["profiles"], args["functions"], args["hosts"], args["providers"])}
