# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: converge_batch
short_description: The accelerator_host role's decisions for one host, or for one serial batch of hosts
version_added: 0.4.0
description:
  - The C(accelops.lifecycle.accelerator_host) role records what each of its tasks returned (the host's plan by
    M(accelops.lifecycle.accelerator_converge) in check mode, the batch's Placement read, drain and report, the
    host's apply) and decides everything else here, in Python, once.
  - C(converge_host) turns one host's record into its state; the cards it may change (C(apply)) with the Placement
    evidence of use (C(placement_in_use)), its error, the drift, and the keys the
    P(accelops.lifecycle.converge_report#filter) filter reads.
  - C(converge_batch) turns the batch's records into the input of one controller call; V(reads) (the
    M(accelops.lifecycle.placement_provider_info) requests; only hosts with a card to change, or every host in plan
    mode), V(check) (plan mode; the O(accelops.lifecycle.placement_provider_tree#module:hosts) to compare with
    Placement), V(drain) (the hosts with cards to change, each card drained) and V(report) (every host that got to
    the report, with its discovery after the change, the drains to keep and the drains to release), or V(hosts) (the
    inventory names of the batch's hosts that run the role, the loop of the role's summary) or V(apply) (the inventory
    names of those that change cards in this run, after the drain; when there is none, the role's apply runs once for
    the batch, and skips, instead of once per host).
options:
  _input:
    description:
      - For C(converge_host), one host's variables (C(hostvars[inventory_hostname])); for C(converge_batch), the
        list of the batch's (C(ansible_play_batch | map('extract', hostvars) | list)).
      - Read from them; the role's settings fact C(__accelerator_host_settings) (C(host), C(root), C(plan_only),
        C(placement), C(placement_host), C(root_provider), C(name_prefix), C(undrain), C(safe_mode),
        C(fail_on_drift), C(refusal)) and the results the role registers (C(__accelerator_host_plan),
        C(__accelerator_host_placement_read), C(__accelerator_host_placement_check), C(__accelerator_host_drain),
        C(__accelerator_host_apply), C(__accelerator_host_report_batch); a skipped or missing one counts as not
        run).
    type: raw
    required: true
  step:
    description: For C(converge_batch), which call to prepare.
    type: str
    choices: [reads, check, drain, report, hosts, apply]
'''

EXAMPLES = r'''
- name: What the host may change, and what it must report
  ansible.builtin.debug:
    msg: "{{ hostvars[inventory_hostname] | accelops.lifecycle.converge_host }}"

- name: The batch's Placement reads
  ansible.builtin.debug:
    msg: "{{ ansible_play_batch | map('extract', hostvars) | list | accelops.lifecycle.converge_batch('reads') }}"
'''

RETURN = r'''
_value:
  description:
    - C(converge_host); a dictionary with the keys the converge_report filter reads (C(host), C(root), C(plan_only),
      C(placement), C(placement_host), C(fail_on_drift), C(cards), C(problems), C(planned), C(applied), C(verify),
      C(drained), C(kept_drained), C(drift), C(error), C(reported), C(placement_share), C(left_drains),
      C(cut_run)) and C(apply),
      C(placement_in_use), C(changing) (the cards to drain and change), C(report_item).
    - C(converge_batch); a list, the loop of the read or the O(accelops.lifecycle.placement_provider_tree#module:hosts)
      of the check, drain or report call, or the host names (V(hosts)).
  type: raw
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import left_drain
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import (
    card_addresses, card_provider_pattern, placement_evidence, plan_failure)

STEPS = ("reads", "check", "drain", "report", "hosts", "apply")
# The role's variables a host's record is read from: its settings (one set_fact) and what each task returned.
SETTINGS = "__accelerator_host_settings"
RESULTS = (("plan", "__accelerator_host_plan"), ("read", "__accelerator_host_placement_read"),
           ("check", "__accelerator_host_placement_check"), ("drain", "__accelerator_host_drain"),
           ("apply", "__accelerator_host_apply"), ("report", "__accelerator_host_report_batch"))


def _get(variables, key):
    try:
        return variables[key]
    except (KeyError, AttributeError, TypeError):
        return None


def record(variables, name="converge_host"):
    """One host's record from its variables (``hostvars[host]``, or the host's own)."""
    if not isinstance(variables, Mapping):
        raise AnsibleFilterError("%s expects a host's variables (hostvars[host]), got %s"
                                 % (name, type(variables).__name__))
    settings = _get(variables, SETTINGS)
    if not isinstance(settings, Mapping):
        raise AnsibleFilterError("%s: %s: no %s (the accelerator_host role sets it first)"
                                 % (name, _get(variables, "inventory_hostname"), SETTINGS))
    item = dict(settings)
    for key, name in RESULTS:
        item[key] = _get(variables, name)
    return item


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


def _state(item, name="converge_host"):
    """host_state, or AnsibleFilterError naming the host when a recorded result does not have the shape the role's
    tasks give it (such as a variable of the same name set by something else)."""
    try:
        return host_state(item)
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise AnsibleFilterError("%s: %s: a recorded result does not have the shape accelerator_converge "
                                 "and the Placement modules return (%s: %s)" % (name, item.get("host"), type(e).__name__, e))


def converge_host(variables):
    return _state(record(variables))


def host_state(item):
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
            evidence = placement_evidence(providers, _prefix(item), c["address"])
            if evidence:
                state["placement_in_use"][c["address"]] = evidence
                c = dict(c, in_use=True, in_use_by=list(c.get("in_use_by") or []) + evidence,
                         blocked=safe, status="blocked" if safe else "todo")
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
    records = discovery.get("accelerators") if isinstance(discovery, Mapping) else None
    by_address = dict((r.get("address"), r) for r in records or [] if isinstance(r, Mapping))
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


def converge_batch(items, step):
    if step not in STEPS:
        raise AnsibleFilterError("converge_batch: step must be one of %s, got %r" % (", ".join(STEPS), step))
    if not isinstance(items, (list, tuple)):
        raise AnsibleFilterError("converge_batch expects the list of the batch's host variables, got %s"
                                 % type(items).__name__)
    # hosts of the batch that do not run the role (include_role with a when) have no settings: left out
    items = [record(v, "converge_batch") for v in items
             if not isinstance(v, Mapping) or isinstance(_get(v, SETTINGS), Mapping)]
    if step == "hosts":
        return [item.get("host") for item in items]
    states = [(item, _state(item, "converge_batch")) for item in items]
    if step == "apply":
        # the same condition as the role's apply on each host (the cards it changes: none in plan mode, none after an
        # error before the change), read before the apply's own result, which may still be a former run's
        return [item.get("host") for item, s in states if s["apply"]]
    if step == "reads":
        names, roots = [], []
        for item, s in states:
            # a host with a run record reads too: its last run may have left drains (lifted by this run's report)
            if not s["placement"] or s["error"] or (not s["plan_only"] and not s["last_run"] and not any(
                    c.get("status") == "todo" for c in s["cards"])):
                continue
            if item.get("root_provider"):
                if {"root_provider": item["root_provider"]} not in roots:
                    roots.append({"root_provider": item["root_provider"]})
            elif item.get("placement_host") not in names:
                names.append(item.get("placement_host"))
        return ([{"hosts": names}] if names else []) + roots
    out = []
    for item, s in states:
        if not s["placement"] or s["error"]:
            continue
        plan = _ran(item.get("plan")) or {}
        base = {"host": item.get("placement_host"), "root_provider": item.get("root_provider"),
                "name_prefix": item.get("name_prefix"), "discovery": plan.get("discovery"),
                "function_names": plan.get("function_names") or {}, "overrides": plan.get("overrides") or {},
                "reporters": plan.get("reporters") or {}, "undrain": list(item.get("undrain") or [])}
        if base["discovery"] is None:
            continue
        if step == "check" and s["plan_only"]:
            out.append(base)
        elif step == "drain" and not s["plan_only"] and s["changing"]:
            out.append(dict(base, drain=list(s["changing"])))
        elif step == "report" and not s["plan_only"] and s["report_item"] is not None:
            out.append(s["report_item"])
    return out


class FilterModule(object):
    def filters(self):
        return {"converge_host": converge_host, "converge_batch": converge_batch}
