# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The base of the collection's controller actions: logic that runs on the controller, takes its inputs as task
arguments and returns its decisions as the task's result.

Each action declares ``ARGUMENT_SPEC`` (the same options as its module file's DOCUMENTATION, which holds no code)
and implements :meth:`ControllerAction.decide`. The arguments are validated by ansible-core's public
``ActionBase.validate_argument_spec`` (``ArgumentSpecValidator``), so a bad argument fails the task with a message
naming the option before any decision is made; :meth:`decide` raises ``ValueError`` for a value the spec cannot
express (its message names the option) and the task fails with it, never with a traceback. A controller action
reads nothing but its arguments: no host variables, no role variables.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


class ControllerAction(ActionBase):
    """A task run on the controller alone: validate the arguments, decide, return the result."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    ARGUMENT_SPEC = {}
    MUTUALLY_EXCLUSIVE = None
    REQUIRED_TOGETHER = None
    REQUIRED_ONE_OF = None
    REQUIRED_IF = None
    REQUIRED_BY = None

    def decide(self, args):
        """The task's result (a dict, without ``changed``/``failed`` unless they differ from the defaults) from the
        validated ``args``; ValueError when a value is refused."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerAction, self).run(tmp, task_vars)
        del tmp
        try:
            _validation, args = self.validate_argument_spec(
                argument_spec=self.ARGUMENT_SPEC, mutually_exclusive=self.MUTUALLY_EXCLUSIVE,
                required_together=self.REQUIRED_TOGETHER, required_one_of=self.REQUIRED_ONE_OF,
                required_if=self.REQUIRED_IF, required_by=self.REQUIRED_BY)
        except AnsibleActionFail as exc:
            result.update(failed=True, msg=getattr(exc, "message", None) or str(exc))
            return result
        try:
            out = self.decide(args)
        except ValueError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        result.setdefault("changed", False)
        result.update(out)
        return result
