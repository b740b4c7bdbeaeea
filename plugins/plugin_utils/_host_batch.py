# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The accelerator_host role's decisions for one serial batch of hosts, made on the controller.

The role records each host's settings (the accelerator_host_settings action) and what each of its tasks returned
(the host's plan and apply by accelerator_converge, the batch's Placement read, check, drain and report); the
accelerator_host_batch action hands them here as a :class:`Batch`. From them, :func:`host_state` decides one host's
state (the cards it may change, with the Placement evidence of use, its error, the drift, what to report) and the
batch's steps are the inputs of its one-per-batch calls.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate
from ansible_collections.accelops.lifecycle.plugins.module_utils._cardstate import with_placement
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import left_drain
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import (
    card_addresses, card_provider_pattern, placement_evidence, plan_failure)


def _ran(result):
    """The registered result of a task that ran (not skipped, not missing), or None."""
    if not isinstance(result, Mapping) or not result or result.get("skipped"):
        return None
    return result


def _failure(result):
    """The message of a task that failed without a converge's own record of why (a crash, bad arguments)."""
    if result is None or not result.get("failed"):
        return None
    return result.get("error") or result.get("msg") or "failed"


# The settings a host's record carries (the accelerator_host_settings action's result), by the form each must have.
SETTING_STRINGS = ("host", "root", "root_provider", "name_prefix", "refusal")  # placement_host: required, below
SETTING_BOOLS = ("plan_only", "placement", "safe_mode", "fail_on_drift")


def _expect(value, kinds, where, form, nullable=True):
    if (value is not None or not nullable) and not isinstance(value, kinds):
        raise ValueError("%s: expected %s, got %s" % (where, form, type(value).__name__))


def _check_settings(name, s):
    where = "settings.%s" % name
    # the settings action always gives the host's Placement name: the batch names its providers after it
    if not isinstance(s.get("placement_host"), str) or not s["placement_host"]:
        raise ValueError("%s.placement_host: expected the host's name in Placement (a string), got %r"
                         % (where, s.get("placement_host")))
    for key in SETTING_STRINGS:
        _expect(s.get(key), str, "%s.%s" % (where, key), "a string or null")
    for key in SETTING_BOOLS:
        _expect(s.get(key), bool, "%s.%s" % (where, key), "true or false")
    undrain = s.get("undrain")
    _expect(undrain, list, where + ".undrain", "a list of card addresses")
    for i, a in enumerate(undrain or []):
        _expect(a, str, "%s.undrain[%d]" % (where, i), "a card address", nullable=False)


def _check_converge_result(where, r):
    """accelerator_converge's registered result, as far as the batch reads it."""
    if not isinstance(r, Mapping) or r.get("skipped") or r.get("failed"):
        return
    cards = r.get("cards")
    _expect(cards, list, where + ".cards", "a list of cards")
    for i, c in enumerate(cards or []):
        _expect(c, Mapping, "%s.cards[%d]" % (where, i), "a card (address, status, ...)", nullable=False)
        for key in ("address", "status"):
            if not isinstance(c.get(key), str):
                raise ValueError("%s.cards[%d].%s: expected a string, got %s"
                                 % (where, i, key, type(c.get(key)).__name__))
    for key in ("planned", "applied", "verify", "overrides", "function_names", "discovery", "last_run"):
        _expect(r.get(key), Mapping, "%s.%s" % (where, key), "a mapping")
    for key in ("problems", "drift", "kept_drained"):
        _expect(r.get(key), list, "%s.%s" % (where, key), "a list")


def _check_placement_results(read, check, drain, report):
    """The batch's Placement results, as far as the batch reads them."""
    for option, value in (("placement_read", read), ("placement_check", check), ("placement_drain", drain),
                          ("placement_report", report)):
        _expect(value, Mapping, option, "the task's registered result (a dictionary)")
    for option, value, key in (("placement_read", read, "results"), ("placement_check", check, "providers")):
        items = (value or {}).get(key)
        _expect(items, list, "%s.%s" % (option, key), "a list")
        for i, item in enumerate(items or []):
            _expect(item, Mapping, "%s.%s[%d]" % (option, key, i), "a mapping", nullable=False)
    for i, r in enumerate((read or {}).get("results") or []):
        providers = r.get("providers")
        _expect(providers, list, "placement_read.results[%d].providers" % i, "a list of providers")
        for j, p in enumerate(providers or []):
            _expect(p, Mapping, "placement_read.results[%d].providers[%d]" % (i, j), "a provider (a mapping)",
                    nullable=False)
            _expect(p.get("name"), str, "placement_read.results[%d].providers[%d].name" % (i, j), "a string")
    for option, value in (("placement_drain", drain), ("placement_report", report)):
        by_host = (value or {}).get("by_host")
        _expect(by_host, Mapping, option + ".by_host", "a mapping of Placement host name to its result")
        for host, r in (by_host or {}).items():
            _expect(r, Mapping, "%s.by_host.%s" % (option, host), "a mapping", nullable=False)


class Batch(object):
    """What the role recorded for one batch: each host's settings, plan and apply (by inventory name), and the
    batch's registered Placement results (``read``, ``check``, ``drain``, ``report``; None when not run)."""

    def __init__(self, settings, plans=None, applied=None, read=None, check=None, drain=None, report=None):
        # a host whose settings are null or empty does not run the role in this batch (not included, or its part
        # ended by the summary of an earlier run of the role in the same play): left out
        self.items = []
        _check_placement_results(read, check, drain, report)
        for name, host_settings in settings.items():
            if not isinstance(host_settings, Mapping) or not host_settings:
                continue
            _check_settings(name, host_settings)
            for option, results in (("plans", plans), ("applied", applied)):
                _check_converge_result("%s.%s" % (option, name), (results or {}).get(name))
            item = dict(host_settings)
            item.setdefault("host", name)
            item.update(plan=(plans or {}).get(name), apply=(applied or {}).get(name), read=read, check=check,
                        drain=drain, report=report)
            self.items.append(item)
        self._states = None

    def states(self):
        """[(item, state)] of every host of the batch (ValueError naming the host when a recorded result does not
        have the shape the role's tasks give it)."""
        if self._states is None:
            self._states = [(item, _state(item)) for item in self.items]
        return self._states


def _state(item):
    try:
        return host_state(item)
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise ValueError("%s: a recorded result (plans, applied or a placement_* result) does not have the shape "
                         "accelerator_converge and the Placement modules return (%s: %s)"
                         % (item.get("host"), type(e).__name__, e))


def _prefix(item):
    return item.get("name_prefix") or item.get("placement_host")


def _providers(item):
    """This host's providers from the batch's Placement read."""
    read = _ran(item.get("read"))
    prefix = "%s_" % _prefix(item)
    out = []
    for r in (read or {}).get("results") or []:
        for p in r.get("providers") or []:
            if (p.get("name") or "").startswith(prefix):
                out.append(p)
    return out


def _placement_drift(item, providers):
    check = _ran(item.get("check"))
    if check is None:
        return []
    out = []
    host = item.get("placement_host")
    current = dict((p.get("name"), p) for p in providers)
    for p in check.get("providers") or []:
        if p.get("host") != host:
            continue
        # what Nova or Cyborg reports is read back: a function trait Nova's provider lacks, a provider not made yet
        if p.get("missing_traits"):
            out.append("placement %s (%s): lacks %s" % (p.get("name"), p.get("reporter"), ", ".join(p["missing_traits"])))
        if p.get("action") == "awaiting":
            out.append("placement %s: not reported by %s yet" % (p.get("name"), p.get("reporter")))
        if p.get("action") in ("unchanged", "foreign", "awaiting"):
            continue
        was = current.get(p.get("name")) or {"traits": [], "inventories": {}}
        pruned = p.get("action") == "pruned"
        add = sorted(set(p.get("traits") or []) - set(was.get("traits") or []))
        rem = [] if pruned else sorted(set(was.get("traits") or []) - set(p.get("traits") or []))
        inv_was, inv_now = was.get("inventories") or {}, p.get("inventories") or {}
        inv = ""
        if inv_now != inv_was and not pruned:
            def totals(invs):
                return ",".join("%s=%s" % (rc, v.get("total")) for rc, v in invs.items()) or "none"
            inv = " inventories %s -> %s" % (totals(inv_was), totals(inv_now))
        out.append("placement %s: would be %s%s%s%s" % (
            p.get("name"), p.get("action"), "".join(" +" + t for t in add), "".join(" -" + t for t in rem), inv))
    return out


def _in_batch(result, host):
    by_host = (result or {}).get("by_host")
    return isinstance(by_host, Mapping) and host in by_host


def host_state(item):
    """One host's state from its record (its settings with ``plan``, ``read``, ``check``, ``drain``, ``apply`` and
    ``report``, the registered results, each None or skipped when not run): the keys the report reads and
    ``apply`` (the cards to change now), ``placement_in_use``, ``changing`` (the cards to drain), ``report_item``."""
    plan_only = bool(item.get("plan_only"))
    placement = bool(item.get("placement"))
    plan = _ran(item.get("plan"))
    apply_ = _ran(item.get("apply"))
    error = item.get("refusal") or _failure(plan)
    state = {
        "host": item.get("host"), "root": item.get("root"), "plan_only": plan_only, "placement": placement,
        "placement_host": item.get("placement_host"), "fail_on_drift": bool(item.get("fail_on_drift")),
        "cards": [], "problems": [], "planned": {}, "applied": {}, "verify": {}, "drained": [], "kept_drained": [],
        "drift": [], "error": None, "reported": False, "placement_share": None, "apply": [],
        "placement_in_use": {}, "report_item": None, "changing": [], "last_run": None, "cut_run": None,
        "left_drains": [],
    }
    if error or plan is None:
        state["error"] = error
        return state
    providers = _providers(item)
    state["last_run"] = plan.get("last_run") or None
    if state["last_run"] and state["last_run"].get("phase") == "apply":
        state["cut_run"] = state["last_run"]
    safe = bool(item.get("safe_mode", True))
    cards = []
    for c in plan.get("cards") or []:
        if c.get("status") == "todo":
            # the host planned it; Placement's evidence of use (read after the plan) may block it: the card's state
            # is decided again by the one decision (_cardstate), not here
            evidence = placement_evidence(providers, _prefix(item), c["address"])
            if evidence:
                state["placement_in_use"][c["address"]] = evidence
                c = with_placement(c, evidence, safe)
        cards.append(c)
    planned = plan.get("planned") or {}
    state.update(cards=cards, problems=list(plan.get("problems") or []), planned=planned)
    apply_list = [c["address"] for c in cards if c["status"] == "todo"
                  and (planned.get(c["address"]) or {}).get("changed")
                  and not (planned.get(c["address"]) or {}).get("refused_in_use")]
    if plan_only:
        state["drift"] = list(plan.get("drift") or []) + _placement_drift(item, providers)
        return state
    if plan_failure(planned):
        state["error"] = plan_failure(planned)
        return state
    state["changing"] = apply_list
    drain = _ran(item.get("drain"))
    if apply_list and placement:
        if _failure(drain):
            state["error"] = "nothing was changed: the drain in Placement failed: %s" % _failure(drain)
            return state
        if drain is not None and _in_batch(drain, item.get("placement_host")):
            state["drained"] = list(apply_list)
    # a card is changed only once its provider is drained (or when the host is not reported to Placement)
    state["apply"] = apply_list if (not placement or state["drained"]) else []
    if apply_ is not None:
        state["error"] = apply_.get("error") or _failure(apply_) if "cards" not in apply_ else apply_.get("error")
        if "cards" in apply_:
            state.update(cards=list(apply_["cards"]), problems=list(apply_.get("problems") or []),
                         planned=apply_.get("planned") or {}, applied=apply_.get("applied") or {},
                         verify=apply_.get("verify") or {})
            state["kept_drained"] = [a for a in apply_.get("kept_drained") or [] if a in state["drained"]]
    if state["error"]:
        # stopped before changing anything (the lock, a plan that failed under it, a crash): left out of the
        # report, and what this run drained stays drained
        return state
    final = apply_ if apply_ is not None else plan
    lifted = []
    if placement and final.get("discovery") is not None:
        state["left_drains"] = _left_drains(item, state, providers, final["discovery"])
        lifted = [d["provider"] for d in state["left_drains"] if d["action"] == "lift"]
        state["report_item"] = {
            "host": item.get("placement_host"), "root_provider": item.get("root_provider"),
            "name_prefix": item.get("name_prefix"), "discovery": final["discovery"],
            "function_names": final.get("function_names") or {}, "overrides": final.get("overrides") or {},
            "reporters": final.get("reporters") or {}, "drain": state["kept_drained"],
            "undrain": list(item.get("undrain") or []) + [a for a in state["drained"] if a not in state["kept_drained"]]
            + lifted,
        }
    report = _ran(item.get("report"))
    if _failure(report):
        state["error"] = state["error"] or "the batch report to Placement failed: %s" % _failure(report)
        state["report_item"] = None
    elif report is not None and state["report_item"] is not None and _in_batch(report, item.get("placement_host")):
        state["reported"] = True
        state["placement_share"] = report["by_host"][item.get("placement_host")]
    return state


def _left_drains(item, state, providers, discovery):
    """The drains on this host's providers that this run did not make (a killed run's, an operator's): each
    ``{provider, card, action, why, run}``, ``action`` ``lift`` or ``left`` (model.left_drain decides)."""
    by_address = _cardstate.cards(_cardstate.records(discovery) if isinstance(discovery, Mapping) else None)[1]
    last = state["last_run"] or {}
    run = ("the run %s of %s" % (last.get("owner") or "?", last.get("started") or "?")) if last else None
    out = []
    for c in state["cards"]:
        address = c.get("address")
        pattern = card_provider_pattern(_prefix(item), card_addresses({"address": address}, by_address))
        # as declared now, and not one this run drains (its own drain is undrained with the report)
        as_declared = address not in state["drained"] and (
            c.get("status") == "ok" or (state["verify"].get(address) and address not in state["kept_drained"]))
        for p in providers:
            if not pattern.match(p.get("name") or ""):
                continue
            decided = left_drain(p, as_declared)
            if decided is not None and address not in state["drained"]:
                out.append({"provider": p.get("name"), "card": address, "action": decided[0], "why": decided[1],
                            "run": run if decided[0] == "lift" else None})
    return out


def reads(batch):
    """The placement_provider_info requests of the batch (a loop): only hosts with a card to change, or every host
    in plan mode, or one whose last run left a record (it may have left drains that this run's report lifts)."""
    names, roots = [], []
    for item, s in batch.states():
        if not s["placement"] or s["error"] or (not s["plan_only"] and not s["last_run"] and not any(
                c.get("status") == "todo" for c in s["cards"])):
            continue
        if item.get("root_provider"):
            if {"root_provider": item["root_provider"]} not in roots:
                roots.append({"root_provider": item["root_provider"]})
        elif item.get("placement_host") not in names:
            names.append(item.get("placement_host"))
    return ([{"hosts": names}] if names else []) + roots


def _from_plan(item):
    plan = _ran(item.get("plan")) or {}
    return {"host": item.get("placement_host"), "root_provider": item.get("root_provider"),
            "name_prefix": item.get("name_prefix"), "discovery": plan.get("discovery"),
            "function_names": plan.get("function_names") or {}, "overrides": plan.get("overrides") or {},
            "reporters": plan.get("reporters") or {}, "undrain": list(item.get("undrain") or [])}


def _placement_items(batch):
    for item, s in batch.states():
        if not s["placement"] or s["error"]:
            continue
        base = _from_plan(item)
        if base["discovery"] is not None:
            yield item, s, base


def check(batch):
    """Plan mode: the placement_provider_tree hosts to compare with Placement (each host as it is)."""
    return [base for _item, s, base in _placement_items(batch) if s["plan_only"]]


def drain(batch):
    """The placement_provider_tree hosts that drain the cards about to change."""
    return [dict(base, drain=list(s["changing"])) for _item, s, base in _placement_items(batch)
            if not s["plan_only"] and s["changing"]]


def apply(batch):
    """By host, the cards it changes now (after the drain) and their Placement evidence of use; only the hosts
    that change cards."""
    return dict((item.get("host"), {"cards": s["apply"], "placement_in_use": s["placement_in_use"]})
                for item, s in batch.states() if s["apply"])


def report(batch):
    """The placement_provider_tree hosts of the batch's report (each with its discovery after the change, the
    drains to keep and to release)."""
    return [s["report_item"] for _item, s, _base in _placement_items(batch)
            if not s["plan_only"] and s["report_item"] is not None]


def hosts(batch):
    """The inventory names of the batch's hosts that run the role."""
    return [item.get("host") for item in batch.items]
