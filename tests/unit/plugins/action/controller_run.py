# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a controller action plugin in-process, as the task executor does: a task with its arguments, a local
connection (the actions never use it), ``run()``; the result is what a play would register."""

from __future__ import annotations

import os

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.plugins.loader import connection_loader
from ansible.template import Templar


def run_action(action_class, args, check_mode=False):
    """The result of running ``action_class`` with the task arguments ``args``."""
    task = Task()
    task.args = dict(args)
    task.check_mode = check_mode
    play_context = PlayContext()
    loader = DataLoader()
    connection = connection_loader.get("local", play_context, os.devnull)
    action = action_class(task, connection, play_context, loader, Templar(loader=loader), None)
    # the plugin loader names a loaded plugin; ansible-core quotes the name in its "Unsupported parameters" message
    action._load_name = action_class.__module__.rsplit(".", 1)[-1]
    return action.run(task_vars={})


def refused_type(option, type_name, target=None, elements=False):
    """The argument spec's message for an option (or its elements) of the wrong type; ansible-core before 2.19
    writes the type as <class 'str'>."""
    what = "Elements value for option" if elements else "argument"
    msg = r"%s '%s' is of type (<class '%s'>|%s)" % (what, option, type_name, type_name)
    return msg + (r" and we were unable to convert to " + target if target else "")
