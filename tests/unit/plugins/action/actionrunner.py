# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs a list of controller action cases, each result kept (an exception is reported to the test, not raised)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.tests.unit.plugins.action.controller_run import run_action


def run_cases(cases):
    """The results of ``cases`` (``[(action name, args)]``): each action's result, or ``{"exception": ...}`` when it
    raised (what a task must never show)."""
    results = []
    for name, args in cases:
        try:
            results.append(dict(run_action(name, args)))
        except Exception as e:  # reported to the test, not raised: the test says which case
            results.append({"exception": "%s: %s" % (type(e).__name__, e)})
    return results
