# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nvidia_mig action: a mig-parted config file named by its path (on the managed host, where mig-parted keeps it)
is read there and parsed here, on the controller, with a real YAML loader; the module gets the parsed mapping.
Everything else goes to the module as given."""

from __future__ import annotations

import base64

import yaml

from ansible.plugins.action import ActionBase

MODULE = "accelops.lifecycle.nvidia_mig"
MAX_BYTES = 1 << 20  # a mig-parted config is a few KiB; a larger file is not one


def parse_config(data, path):
    """The mapping a mig-parted config file's bytes ``data`` hold (YAML, or JSON, which YAML reads); ValueError naming
    the option and the file when they are not a YAML mapping. (The module checks the mapping's shape.)"""
    if len(data) > MAX_BYTES:
        raise ValueError("mig_parted_config: %s is larger than %d bytes, not a mig-parted config file" % (path, MAX_BYTES))
    try:
        config = yaml.safe_load(data.decode("utf-8", "replace"))
    except yaml.YAMLError as e:
        raise ValueError("mig_parted_config: %s is not a mig-parted config file (%s)" % (path, str(e)[:200]))
    if not isinstance(config, dict):
        raise ValueError("mig_parted_config: %s is not a mig-parted config file (a YAML mapping with 'version: v1' and "
                         "'mig-configs')" % path)
    return config


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        path = args.get("mig_parted_config")
        if isinstance(path, str):
            read = self._execute_module(module_name="ansible.builtin.slurp", module_args={"src": path},
                                        task_vars=task_vars)
            if read.get("failed"):
                result.update(failed=True, msg="mig_parted_config: cannot read %s: %s" % (path, read.get("msg")))
                return result
            try:
                args["mig_parted_config"] = parse_config(base64.b64decode(read["content"]), path)
            except ValueError as e:
                result.update(failed=True, msg=str(e))
                return result
        result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
        return result
