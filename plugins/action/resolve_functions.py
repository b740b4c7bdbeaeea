# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of accelops.lifecycle.resolve_functions (its documentation is plugins/modules/resolve_functions.py):
a declaration mapped onto one host's discovered cards, on the controller (module_utils/_declaration.py decides)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import resolve
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = dict(
        discovery=dict(type="raw", required=True),
        functions=dict(type="list", elements="dict", required=True),
    )

    def decide(self, args):
        # DeclarationError is a ValueError naming the entry and key (accelerator_host_functions[0] (vf).vfs.count)
        return {"resolution": resolve(args["functions"], args["discovery"])}
