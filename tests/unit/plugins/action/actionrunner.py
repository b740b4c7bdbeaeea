# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the collection's controller actions as a task runs them: ansible-core's Task, PlayContext, loader, templar
and the local connection the task executor hands an action (never opened: these actions run on the controller).

(ansible-core's controller side, once imported, changes how module arguments decode in the process: ansible-test
units runs each test in a fork of its own, so the module tests never see it; a plain pytest run of these tests
together with tests/unit/plugins/modules does, as it does with the filter tests.)"""

from __future__ import annotations

import importlib

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.plugins.connection.local import Connection as LocalConnection
from ansible.template import Templar


def run_cases(cases):
    """The results of ``cases`` (``[(action name, args)]``): each action's result, or ``{"exception": ...}`` when it
    raised (what a task must never show)."""
    results = []
    for name, args in cases:
        try:
            results.append(dict(_run(name, args)))
        except Exception as e:  # reported to the test, not raised: the test says which case
            results.append({"exception": "%s: %s" % (type(e).__name__, e)})
    return results


def _run(name, args):
    action_class = importlib.import_module("ansible_collections.accelops.lifecycle.plugins.action." + name).ActionModule
    task = Task()
    task.action = "accelops.lifecycle." + name
    task.args = args
    loader = DataLoader()
    action = action_class(task, connection=LocalConnection(PlayContext(), None), play_context=PlayContext(),
                          loader=loader, templar=Templar(loader=loader), shared_loader_obj=None)
    action._load_name = task.action  # what ansible-core's plugin loader sets on the actions it loads
    return action.run(task_vars={})
