# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan/journal engine: check mode runs nothing, failures roll back in reverse and say what is left."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan, PlanFailed, execute


def _recorder():
    state = {"log": []}

    def doer(name, fail=False):
        def run():
            if fail:
                raise OSError("Device or resource busy")
            state["log"].append(name)
        return run
    return state, doer


def test_empty_plan_is_no_change():
    assert execute(Plan())["changed"] is False


def test_check_mode_runs_nothing_and_lists_the_same_steps():
    state, doer = _recorder()
    plan = Plan()
    plan.add("a", doer("a"), doer("undo a"), target="x", before="0", after="4")
    checked = execute(plan, check_mode=True)
    assert state["log"] == [] and checked["changed"] is True and checked["applied"] == ["a"]
    real = execute(plan)
    assert state["log"] == ["a"] and real["steps"] == checked["steps"]


def test_failure_rolls_back_in_reverse_and_reports_unchanged():
    state, doer = _recorder()
    plan = Plan()
    plan.add("a", doer("a"), doer("undo a"))
    plan.add("b", doer("b"), doer("undo b"))
    plan.add("c", doer("c", fail=True), doer("undo c"))
    with pytest.raises(PlanFailed) as e:
        execute(plan)
    assert state["log"] == ["a", "b", "undo b", "undo a"]
    assert e.value.result["state"] == "unchanged" and e.value.result["rolled_back"] == ["b", "a"]
    assert "the host is as it was" in str(e.value)


def test_failed_undo_says_what_is_still_in_effect():
    state, doer = _recorder()
    plan = Plan()
    plan.add("a", doer("a"), doer("undo a", fail=True))
    plan.add("b", doer("b"), doer("undo b"))
    plan.add("c", doer("c", fail=True))
    with pytest.raises(PlanFailed) as e:
        execute(plan)
    result = e.value.result
    assert result["state"] == "partial" and result["still_applied"] == ["a"]
    assert result["rolled_back"] == ["b"] and "STILL IN EFFECT" in str(e.value)
    assert state["log"] == ["a", "b", "undo b"]


def test_diff_comes_from_the_plan():
    plan = Plan()
    plan.add("set numvfs", lambda: None, target="0000:d8:00.0 sriov_numvfs", before="0", after="4")
    assert plan.diff() == {"before": "0000:d8:00.0 sriov_numvfs: 0\n", "after": "0000:d8:00.0 sriov_numvfs: 4\n"}


def test_blocked_targets_are_recorded():
    plan = Plan()
    plan.block("0000:d8:02.0", "in use", [{"kind": "domain", "name": "instance-1"}])
    assert not plan and plan.blocked[0]["reason"] == "in use"
