# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""accelerator_host_settings: the accelerator_host role's record of one host's settings, with its refusal."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_settings import refusal

# What the role's batch decisions read from a host's settings (the options of the same names).
RECORDED = ("host", "root", "plan_only", "placement", "placement_host", "root_provider", "name_prefix", "undrain",
            "safe_mode", "fail_on_drift")


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        host=dict(type="str", required=True),
        root=dict(type="str", default="/"),
        plan_only=dict(type="bool", default=False),
        placement=dict(type="bool", default=True),
        placement_host=dict(type="str"),
        root_provider=dict(type="str"),
        name_prefix=dict(type="str"),
        undrain=dict(type="list", elements="str", default=[]),
        safe_mode=dict(type="bool", default=True),
        fail_on_drift=dict(type="bool", default=False),
        # the settings the refusal checks: of any type here, since a value of the wrong form is refused with the
        # role's own message (naming the role variables), not failed
        functions=dict(type="raw"),
        mode=dict(type="raw", default="converge"),
        allowed_functions=dict(type="raw"),
        placement_endpoint=dict(type="raw"),
        placement_token=dict(type="raw", no_log=True),
        cloud=dict(type="raw"),
        auth=dict(type="raw", no_log=True),
    )

    def decide(self, args):
        out = dict((key, args[key]) for key in RECORDED)
        out["placement_host"] = args["placement_host"] or args["host"]
        out["refusal"] = refusal(args)
        return out
