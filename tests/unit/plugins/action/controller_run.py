# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a controller action plugin in-process, as the task executor does: a task with its arguments, the local
connection the executor hands an action (never opened: these actions run on the controller), ``run()``; the result is
what a play would register. The unit tests and the reliability suite's hostile-input sweep share it.

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

PACKAGE = "ansible_collections.accelops.lifecycle.plugins.action."


def action_class(name):
    """The ActionModule of the collection's action ``name``."""
    return importlib.import_module(PACKAGE + name).ActionModule


def run_action(action, args, check_mode=False):
    """The result of running ``action`` (an ActionModule class, or the action's short name) with the task arguments
    ``args``."""
    if isinstance(action, str):
        action = action_class(action)
    task = Task()
    task.action = "accelops.lifecycle." + action.__module__.rsplit(".", 1)[-1]
    task.args = args
    task.check_mode = check_mode
    loader = DataLoader()
    instance = action(task, connection=LocalConnection(PlayContext(), None), play_context=PlayContext(),
                      loader=loader, templar=Templar(loader=loader), shared_loader_obj=None)
    instance._load_name = task.action  # what ansible-core's plugin loader sets on the actions it loads
    return instance.run(task_vars={})


def refused_type(option, type_name, target=None, elements=False):
    """The argument spec's message for an option (or its elements) of the wrong type; ansible-core before 2.19
    writes the type as <class 'str'>."""
    what = "Elements value for option" if elements else "argument"
    msg = r"%s '%s' is of type (<class '%s'>|%s)" % (what, option, type_name, type_name)
    return msg + (r" and we were unable to convert to " + target if target else "")
