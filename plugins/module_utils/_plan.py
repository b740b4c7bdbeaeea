# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plans and their journalled execution, shared by every programming module.

A plan is an ordered list of steps computed once from (current, desired). ``changed = bool(plan)``; check mode
returns the plan without running it; diff mode shows the plan's before/after. Running a plan keeps a journal:
when a step fails, the steps already done are undone in reverse order, and the result says exactly what was
rolled back and, if an undo failed too, which steps are still in effect.

Standard library only, Python 3.9+ (runs on managed hosts).
"""

from __future__ import annotations


class Step(object):
    """One change on the host.

    ``action`` and ``undo`` are callables without arguments; ``undo`` is None for a step that cannot be
    reversed (it should then come last in its plan). ``before``/``after`` feed diff mode; ``target`` names what
    the step changes (a PCI address, an mdev uuid, ...).
    """

    __slots__ = ("description", "action", "undo", "target", "before", "after")

    def __init__(self, description, action, undo=None, target=None, before=None, after=None):
        self.description = description
        self.action = action
        self.undo = undo
        self.target = target
        self.before = before
        self.after = after

    def as_dict(self):
        return {"description": self.description, "target": self.target, "before": self.before,
                "after": self.after, "reversible": self.undo is not None}


class Plan(object):
    """An ordered list of :class:`Step`, plus the reasons why nothing else is planned (blocked units)."""

    def __init__(self, steps=None):
        self.steps = list(steps or [])
        self.blocked = []

    def add(self, description, action, undo=None, target=None, before=None, after=None):
        step = Step(description, action, undo, target, before, after)
        self.steps.append(step)
        return step

    def block(self, target, reason, evidence=None):
        """Record that ``target`` needs a change that must not happen now (for example: in use)."""
        self.blocked.append({"target": target, "reason": reason, "evidence": evidence or []})

    def __bool__(self):
        return bool(self.steps)

    __nonzero__ = __bool__

    def __len__(self):
        return len(self.steps)

    def describe(self):
        return [s.as_dict() for s in self.steps]

    def diff(self):
        """Diff-mode dicts built from the steps (one ``before``/``after`` text each, in plan order)."""
        before = ["%s: %s" % (s.target, s.before) for s in self.steps if s.target is not None]
        after = ["%s: %s" % (s.target, s.after) for s in self.steps if s.target is not None]
        return {"before": "\n".join(before) + ("\n" if before else ""),
                "after": "\n".join(after) + ("\n" if after else "")}


class Refusal(Exception):
    """A request that is refused or cannot be carried out, with an operator-readable message that names the
    option or the device; ``extra`` goes into the module's result (the engines' errors derive from it)."""

    def __init__(self, message, **extra):
        super(Refusal, self).__init__(message)
        self.extra = extra


class ProgrammingError(Refusal):
    """A request that cannot be carried out; the message names the device and the cause. ``extra`` goes into
    the module result."""


class PlanFailed(Exception):
    """A step failed; ``result`` says what ran, what was rolled back and what state the host is in."""

    def __init__(self, message, result):
        super(PlanFailed, self).__init__(message)
        self.result = result


def execute(plan, check_mode=False):
    """Run ``plan``. Returns ``{"changed", "steps", "applied", "rolled_back", "rollback_failed"}``.

    In check mode nothing runs and ``applied`` lists what would run. On failure raises :class:`PlanFailed` whose
    ``result`` adds ``failed_step``, ``error`` and ``state`` (``unchanged``: everything rolled back;
    ``partial``: the listed ``still_applied`` steps remain in effect).
    """
    result = {"changed": bool(plan), "steps": plan.describe(), "applied": [], "rolled_back": [],
              "rollback_failed": []}
    if check_mode:
        result["applied"] = [s.description for s in plan.steps]
        return result
    done = []
    for step in plan.steps:
        try:
            step.action()
        except Exception as e:  # pylint: disable=broad-except
            result["failed_step"] = step.description
            result["error"] = str(e)
            roll_back(done, result)
            still = [s.description for s in done if s.description not in result["rolled_back"]]
            result["still_applied"] = still
            result["state"] = "partial" if still else "unchanged"
            raise PlanFailed(_failure_message(result), result)
        done.append(step)
        result["applied"].append(step.description)
    return result


def _failure_message(result):
    msg = "%s failed: %s" % (result["failed_step"], result["error"])
    if result["rolled_back"]:
        msg += "; rolled back: %s" % "; ".join(result["rolled_back"])
    if result["still_applied"]:
        msg += "; STILL IN EFFECT (roll back by hand or rerun): %s" % "; ".join(result["still_applied"])
    else:
        msg += "; the host is as it was before this run"
    return msg


def execute_more(first, more):
    """Run ``more``, a plan computed only after ``first`` ran (a vendor vGPU type id learnt while running). When it
    fails (it has rolled back its own steps), ``first``'s steps are undone too, in reverse order, so that the
    :class:`PlanFailed` describes the whole run."""
    try:
        return execute(more)
    except PlanFailed as failed:
        r = failed.result
        r["steps"] = first.describe() + r["steps"]
        r["applied"] = [s.description for s in first.steps] + r["applied"]
        roll_back(first.steps, r)
        still = [s.description for s in first.steps if s.description not in r["rolled_back"]] + r.get("still_applied", [])
        r["still_applied"] = still
        r["state"] = "partial" if still else "unchanged"
        raise PlanFailed(_failure_message(r), r)


def roll_back(done, result):
    """Undo ``done`` in reverse order, noting each step in ``result``'s ``rolled_back`` or ``rollback_failed``."""
    for step in reversed(done):
        if step.undo is None:
            result["rollback_failed"].append({"step": step.description, "error": "irreversible step"})
            continue
        try:
            step.undo()
        except Exception as e:  # pylint: disable=broad-except
            result["rollback_failed"].append({"step": step.description, "error": str(e)})
            continue
        result["rolled_back"].append(step.description)
