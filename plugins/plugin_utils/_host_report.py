# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The per-host report of an accelerator_host converge or plan (the role's ``accelerator_host_report``), decided on
the controller from the host's state: each card's one status with its reason, the Placement line, the summary
lines and the failure the host fails with (None when it does not fail)."""

from __future__ import annotations

from collections.abc import Mapping


REPORT_ACTIONS = ("created", "updated", "unchanged", "pruned", "kept", "foreign")
FAILED = ("failed", "plan-failed", "not-applied")


def _unique_minus(items, remove):
    """items without remove, in order, each once (Ansible's difference filter)."""
    out = []
    for item in items:
        if item not in remove and item not in out:
            out.append(item)
    return out


def _steps(steps):
    steps = list(steps or [])
    more = " (+%d more steps)" % (len(steps) - 3) if len(steps) > 3 else ""
    return "; ".join(str(s) for s in steps[:3]) + more


def _was(card):
    return "; was %s" % card["loaded"] if card.get("loaded") else ""


def card_status(card, plan, result, verified, plan_only):
    """(status, why) of one card."""
    status = card.get("status")
    reason = card.get("reason") or ""
    if status == "ok":
        return "ok", "carries it" + (" (%s)" % reason if reason.startswith("already") else "")
    if status == "blocked":
        return "blocked", "in use, not touched: " + "; ".join(card.get("in_use_by") or [])
    if status == "unsupported":
        return "unsupported", "not as declared, and no module programs it (driver binding of a whole device)"
    if plan.get("refused_in_use"):
        return "blocked", "the module refuses, in use: %s" % plan.get("msg")
    if plan.get("failed"):
        return "plan-failed", plan.get("msg")
    if not plan.get("changed"):
        return "ok", "%s plans no change" % card.get("module")
    if plan_only:
        return "would-change", reason + _was(card) + "; plan: " + _steps(plan.get("steps"))
    if result is None:
        return "not-applied", "planned, not applied (the run stopped before it)"
    if result.get("failed"):
        return "failed", "%s%s" % (result.get("msg"), " (state %s)" % result["state"] if result.get("state") else "")
    if not verified:
        return "failed", "applied (%s) but discovery does not show it" % "; ".join(result.get("applied") or [])
    return "changed", reason + _was(card) + "; did: " + _steps(result.get("applied"))


def _placement_line(drained, undrained, pre_drained, counts):
    line = "  placement    "
    if drained:
        line += "drained %s; " % ", ".join(drained)
    if counts is not None:
        line += "reported: " + ", ".join("%s %s" % (k, v) for k, v in counts.items() if v)
    else:
        line += "not reported"
    if undrained:
        line += "; undrained " + ", ".join(undrained)
    if pre_drained:
        line += "; already drained, left so: " + ", ".join(pre_drained)
    return line


def _expect(ok, where, form, value):
    if not ok:
        raise ValueError("%s: expected %s, got %s" % (where, form, type(value).__name__))


def _strings(value, where, what):
    """A list of strings (or null); ``what`` says what they are."""
    _expect(not value or isinstance(value, (list, tuple)), where, "a list of strings (%s) or null" % what, value)
    for i, item in enumerate(value or []):
        _expect(isinstance(item, str), "%s[%d]" % (where, i), "a string (%s)" % what, item)


def _by_address(value, where, form, entry=None):
    """A mapping of card address to an entry (a mapping, or null, when ``entry`` names its form)."""
    _expect(not value or isinstance(value, Mapping), where, "a mapping of card address to %s, or null" % form,
            value)
    for address, item in (value or {}).items() if entry else ():
        _expect(item is None or isinstance(item, Mapping), "%s.%s" % (where, address), entry + ", or null", item)


def check_recorded(data):
    """ValueError, naming the key and the accepted form, when what the run recorded does not have the shape
    the report reads (the role's variables: see the option's description). Only the keys read are checked."""
    if not isinstance(data, Mapping):
        raise ValueError("expected a dictionary of what the run recorded, got %s" % type(data).__name__)
    _by_address(data.get("planned"), "planned", "the programming module's plan (check-mode result)",
                "a module result (a mapping with changed, failed, msg, steps)")
    for address, plan in (data.get("planned") or {}).items():
        _expect((plan or {}).get("steps") is None or isinstance(plan["steps"], (list, tuple)),
                "planned.%s.steps" % address, "a list of steps or null", (plan or {}).get("steps"))
    _by_address(data.get("applied"), "applied", "the programming module's result",
                "a module result (a mapping with failed, msg, state, applied)")
    for address, result in (data.get("applied") or {}).items():
        _strings((result or {}).get("applied"), "applied.%s.applied" % address, "the steps done")
        _expect(not (result or {}).get("state") or isinstance(result["state"], str), "applied.%s.state" % address,
                "a string (where the host is after a failure) or null", (result or {}).get("state"))
    _by_address(data.get("verify"), "verify", "whether discovery shows the change")
    for key in ("drained", "kept_drained"):
        _strings(data.get(key), key, "card addresses")
    _strings(data.get("drift"), "drift", "drift items")
    _strings(data.get("problems"), "problems", "the declaration's problems")
    _expect(not data.get("error") or isinstance(data["error"], str), "error", "a string (why the run failed) or null",
            data.get("error"))
    cards = data.get("cards")
    _expect(not cards or isinstance(cards, (list, tuple)), "cards", "a list of the role's card records or null",
            cards)
    for i, c in enumerate(cards or []):
        where = "cards[%d]" % i
        _expect(isinstance(c, Mapping), where, "a card record (a mapping with address, function, kind, status, "
                                               "reason, loaded, module, in_use_by)", c)
        _expect(isinstance(c.get("address"), str), where + ".address", "a PCI address string", c.get("address"))
        for key, form in (("reason", "a string or null"), ("module", "a module name (a string) or null"),
                          ("loaded", "the loaded function's id (a string or a number) or null")):
            _expect(not c.get(key) or isinstance(c[key], str) or (key == "loaded" and isinstance(c[key], (int, float))),
                    "%s.%s" % (where, key), form, c.get(key))
        _strings(c.get("in_use_by"), where + ".in_use_by", "in-use evidence")
    left = data.get("left_drains")
    _expect(not left or isinstance(left, (list, tuple)), "left_drains",
            "a list of drains (mappings with provider, card, action, why, run) or null", left)
    for i, d in enumerate(left or []):
        _expect(isinstance(d, Mapping), "left_drains[%d]" % i,
                "a drain (a mapping with provider, card, action, why, run)", d)
        for key in ("provider", "card", "action", "why", "run"):
            _expect(not d.get(key) or isinstance(d[key], str), "left_drains[%d].%s" % (i, key), "a string or null",
                    d.get(key))
    cut = data.get("cut_run")
    _expect(not cut or isinstance(cut, Mapping), "cut_run",
            "a run record (a mapping with owner, started, cards, applied) or null", cut)
    for key in ("owner", "started"):
        _expect(not (cut or {}).get(key) or isinstance(cut[key], str), "cut_run." + key, "a string or null",
                (cut or {}).get(key))
    for key in ("cards", "applied"):
        _strings((cut or {}).get(key), "cut_run." + key, "card addresses" if key == "cards" else "what was done")
    share = data.get("placement_share")
    if data.get("reported") and isinstance(share, Mapping):
        _expect(not share.get("summary") or isinstance(share["summary"], Mapping), "placement_share.summary",
                "a mapping of report action to count, or null", share.get("summary"))
        drained = share.get("drained")
        _expect(not drained or isinstance(drained, (list, tuple)), "placement_share.drained",
                "a list of drained providers (mappings with name and address) or null", drained)
        for i, p in enumerate(drained or []):
            where = "placement_share.drained[%d]" % i
            _expect(isinstance(p, Mapping), where, "a provider (a mapping with name and address)", p)
            _expect(isinstance(p.get("name"), str), where + ".name", "the provider's name (a string)", p.get("name"))
            _expect(not p.get("address") or isinstance(p["address"], str), where + ".address",
                    "a string or null", p.get("address"))


def host_report(data):
    """The host's report (accelerator_host_report) from its state (:func:`_host_batch.host_state`)."""
    check_recorded(data)
    plan_only = bool(data.get("plan_only"))
    planned = data.get("planned") or {}
    applied = data.get("applied") or {}
    verify = data.get("verify") or {}
    drained = list(data.get("drained") or [])
    kept = list(data.get("kept_drained") or [])
    drift = list(data.get("drift") or [])
    error = data.get("error") or None
    problems = list(data.get("problems") or [])
    host = data.get("host")

    share = data.get("placement_share")
    reported = bool(data.get("reported")) and isinstance(share, Mapping)
    counts = None
    if reported:
        summary = share.get("summary") or {}
        counts = dict((k, summary.get(k, 0)) for k in REPORT_ACTIONS)
    undrained = _unique_minus(drained, kept) if reported else []
    # drained in Placement after the report, not by this run: someone else's drain, left so (keep_drained)
    pre_drained = []
    for p in (share.get("drained") or []) if reported else []:
        address = p.get("address") or ""
        if not [k for k in kept if k in (address, address.split("_")[0])]:
            pre_drained.append(p.get("name"))

    left_drains = list(data.get("left_drains") or [])
    told = set(d.get("provider") for d in left_drains)
    pre_drained = [n for n in pre_drained if n not in told]
    cut = data.get("cut_run") or None

    cards = []
    for c in data.get("cards") or []:
        plan = planned.get(c["address"]) or {}
        result = applied.get(c["address"])
        status, why = card_status(c, plan, result, verify.get(c["address"]), plan_only)
        steps = (result or {}).get("applied") if result else plan.get("steps")
        cards.append({"address": c["address"], "function": c.get("function"), "kind": c.get("kind"), "status": status,
                      "why": why, "in_use_by": c.get("in_use_by"), "steps": list(steps or [])})

    def having(*statuses):
        return [c["address"] for c in cards if c["status"] in statuses]

    lines = ["%s [%s, root %s]: %d changed, %d to change, %d blocked, %d failed, %d as declared%s" % (
        host, "plan" if plan_only else "converge", data.get("root"), len(having("changed")),
        len(having("would-change")), len(having("blocked")), len(having(*FAILED)), len(having("ok")),
        ", %d drift" % len(drift) if plan_only else "")]
    for c in cards:
        lines.append("  %-12s %s  %s (%s): %s" % (c["status"], c["address"], c["function"], c["kind"], c["why"]))
    for p in problems:
        lines.append("  problem      %s" % p)
    if cut is not None:
        lines.append("  last run     the run %s of %s was cut during apply (cards %s): %s" % (
            cut.get("owner") or "?", cut.get("started") or "?", ", ".join(cut.get("cards") or []) or "none",
            "; ".join(cut.get("applied") or []) or "no card finished"))
    for d in left_drains:
        if d.get("action") == "lift":
            lines.append("  placement    %s the drain of %s (card %s) left by %s" % (
                "lifted" if reported else "not reported, so not lifted:", d.get("provider"), d.get("card"),
                d.get("run") or "an earlier run"))
        else:
            lines.append("  placement    %s (card %s): %s" % (d.get("provider"), d.get("card"), d.get("why")))
    if plan_only:
        lines.extend("  drift        %s" % d for d in drift if str(d).startswith("placement "))
    elif data.get("placement"):
        lines.append(_placement_line(drained, undrained, pre_drained, counts))
        still = _unique_minus(drained, undrained)
        if still:
            lines.append("  placement    STILL DRAINED: %s (fix the card, converge again, then release with "
                         "accelerator_host_undrain)" % ", ".join(still))
    if error:
        lines.append("  ERROR        %s" % error)

    failed = having(*FAILED)
    why = ([error] if error else []) + (["cards not converged: " + ", ".join(failed)] if failed and not plan_only
                                        else [])
    if plan_only and drift:
        why.append("%d drift item(s) (listed in the summary)" % len(drift))
    fails = bool(error) or (bool(failed) and not plan_only) or (plan_only and bool(data.get("fail_on_drift"))
                                                                and bool(drift))
    return {
        "host": host, "mode": "plan" if plan_only else "converge", "root": data.get("root"), "cards": cards,
        "changed": having("changed"), "blocked": having("blocked"), "failed": failed,
        "problems": problems, "drift": drift, "error": error,
        "placement": {"drained": drained, "undrained": undrained, "kept_drained": _unique_minus(drained, undrained),
                      "already_drained": pre_drained, "summary": counts},
        "lifted_drains": [d.get("provider") for d in left_drains if d.get("action") == "lift" and reported],
        "left_drained": [d.get("provider") for d in left_drains if d.get("action") != "lift"],
        "cut_run": cut,
        "lines": lines,
        "failure": ("accelerator_host on %s: %s" % (host, " / ".join(why))) if fails else None,
    }
