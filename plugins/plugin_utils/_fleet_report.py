# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet report's model: what ``playbooks/report.yml`` renders as one static HTML page, worked out from the hosts'
discovery results and declarations, Placement's providers of their trees and Cyborg's device profiles with their
allocation candidates (the ``fleet_report`` action and filter call :func:`build`; the page's template only prints
it). What each card is comes from the one decision, :func:`_cardstate.card_state`.

Capacity counts every provider with an inventory in the hosts' trees, whoever reports it. For each inventory,
``used`` is Placement's usage, ``free`` is ``total - reserved - used`` (never below 0), ``drained`` the units held
back on a drained inventory that are not used, ``reserved`` the units held back by a reservation that is not a drain,
``not_loaded`` the unused units of a provider whose card is declared for the provider's function but does not carry
it yet (drift): they are not free capacity of that function.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate, _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import DeclarationError, resolve
from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

P = lazy("_placement")


class FleetReportError(ValueError):
    """Input the report cannot use; the message names the path and the accepted form."""


FUNCTION_PREFIXES = ("CUSTOM_FUNCTION_", "CUSTOM_FPGA_FUNCTION_ID_")
SEGMENTS = ("used", "drained", "reserved", "not_loaded", "free")
# a PCI address in a provider's name: this collection's and Cyborg's lower case, Nova's upper case
_ADDRESS = re.compile(r"_([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])(?=_|$)", re.IGNORECASE)


def _int(value):
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def units(inventory, used, loaded=True):
    """total, used, free, drained, reserved, not_loaded and whether it is drained, for one inventory record.
    ``loaded`` false: the provider's card does not carry the provider's function yet (drift), so its unused units
    are not free capacity of that function: they count as not_loaded."""
    total = _int(inventory.get("total"))
    reserved = _int(inventory.get("reserved"))
    used = _int(used)
    drained = total > 0 and reserved >= total
    free = max(0, total - reserved - used)
    return {
        "total": total, "used": used, "free": free if loaded else 0, "not_loaded": 0 if loaded else free,
        "drained": max(0, total - used) if drained else 0,
        "reserved": 0 if drained else max(0, min(reserved, total - used)),
        "is_drained": drained,
    }


def _zero():
    return dict((k, 0) for k in ("total", "used", "free", "drained", "reserved", "not_loaded"))


def _add(into, u):
    for k in ("total", "used", "free", "drained", "reserved", "not_loaded"):
        into[k] += u[k]


def bar_segments(counts):
    """Chart segments of a total: used, drained, reserved, not_loaded, free, each with its share in percent (one
    decimal)."""
    whole = sum(counts.get(k, 0) for k in SEGMENTS)
    out = []
    for k in SEGMENTS:
        if counts.get(k):
            out.append({"kind": k, "units": counts[k], "pct": round(100.0 * counts[k] / whole, 1)})
    return out


def _function_labels(hosts):
    """(trait -> declared name, trait -> name from discovery) over the whole fleet."""
    declared, discovered = {}, {}
    for h in hosts:
        for entry in h.get("functions") or []:
            if isinstance(entry, Mapping) and entry.get("name"):
                try:
                    declared.setdefault(_naming.function_trait(entry["name"]), str(entry["name"]))
                except ValueError:
                    pass
        for rec in _records(h.get("discovery")):
            fn = rec.get("function")
            if isinstance(fn, Mapping) and fn:
                try:
                    traits = P._function_traits(rec, fn, None)
                except ValueError:
                    continue
                for t in traits:
                    discovered.setdefault(t, str(fn.get("name") or fn.get("id")))
    return declared, discovered


def provider_function(traits, declared, discovered):
    """(function name or None, its trait or None, declared?) of a provider from its traits."""
    fts = sorted(t for t in traits or [] if t.startswith(FUNCTION_PREFIXES))
    for t in fts:
        if t in declared:
            return declared[t], t, True
    for t in fts:
        if t in discovered:
            return discovered[t], t, False
    plain = [t for t in fts if t.startswith("CUSTOM_FUNCTION_")]
    if plain or fts:
        t = (plain or fts)[0]
        return t, t, False
    return None, None, False


def _records(discovery):
    # a result (not its bare list: a host item always carries accelerator_info's result), records that are not
    # mappings skipped
    recs = _cardstate.records(discovery) if isinstance(discovery, Mapping) else None
    return [r for r in recs or [] if isinstance(r, Mapping)]


def _carries(rec, names=None):
    """What the card carries: the declared name of its function when the declaration names it, else discovery's
    name or id."""
    fn = rec.get("function")
    if isinstance(fn, Mapping) and fn:
        for key in (fn.get("id"), fn.get("name")):
            if key is not None and names and str(key) in names:
                return str(names[str(key)])
        return str(fn.get("name") or fn.get("id"))
    return None


def _function_id(rec):
    fn = rec.get("function")
    return str(fn.get("id")) if isinstance(fn, Mapping) and fn.get("id") is not None else None


def _model(rec):
    if rec.get("device_name"):
        return str(rec["device_name"])
    return " ".join(str(n) for n in (rec.get("vendor_id"), rec.get("device_id")) if n)


def _group_text(group):
    return ", ".join("%s=%s" % (k, group[k]) for k in sorted(group))


def _profile(p, providers, declared, discovered):
    """A profile with, per group, what it asks for and the free units of the providers that have the group's
    resource class and required traits and none of its forbidden ones (Placement's candidates also weigh
    min_unit, max_unit and step size)."""
    cand = p.get("candidates") if isinstance(p.get("candidates"), Mapping) else None
    asks = []
    for g in p.get("groups") or []:
        if not isinstance(g, Mapping):
            continue
        required = [k.split(":", 1)[1] for k, v in g.items() if k.startswith("trait:") and v == "required"]
        forbidden = [k.split(":", 1)[1] for k, v in g.items() if k.startswith("trait:") and v == "forbidden"]
        fts = sorted(t for t in required if t.startswith(FUNCTION_PREFIXES))
        name = provider_function(fts, declared, discovered)[0]
        for k, v in sorted(g.items()):
            if not k.startswith("resources:"):
                continue
            rc = k.split(":", 1)[1]
            free = 0
            for pr in providers:
                traits = set(pr.get("traits") or [])
                inv = (pr.get("inventories") or {}).get(rc)
                if inv and traits.issuperset(required) and not traits.intersection(forbidden):
                    free += units(inv, (pr.get("usages") or {}).get(rc))["free"]
            asks.append({"function": name, "resource_class": rc, "count": _int(v), "free_in_fleet": free})
    return {
        "name": p.get("name"), "description": p.get("description"),
        "groups": [_group_text(g) for g in p.get("groups") or [] if isinstance(g, Mapping)],
        "asks": asks,
        "satisfiable": p.get("satisfiable") if cand is not None else None,
        "candidates": _int(cand.get("count")) if cand else None,
        "hosts": sorted(set(cand.get("hosts") or [])) if cand else [],
        "reason": cand.get("reason") if cand else None,
    }


def _host_cards(h, providers, declared, discovered):
    """The host's cards, its providers without a card, the drift, and the names of the providers whose card does not
    carry their function yet (a card declared for a function, to change or blocked, whose provider has that
    function's trait already: its units are not free capacity of the function)."""
    cards, by_addr = _cardstate.cards(_records(h.get("discovery")))
    card_of = dict((c.get("address"), c.get("address")) for c in cards)
    for r in by_addr.values():
        if r.get("physfn") in card_of:
            card_of[r.get("address")] = r["physfn"]
    # a family may name a card's provider after another of its functions (an Alveo's management PF)
    for c in cards:
        try:
            specs = P._device_specs(c, by_addr, {})  # pylint: disable=protected-access
        except (AttributeError, KeyError, TypeError, ValueError):
            specs = []
        for spec in specs:
            card_of.setdefault(spec[0], card_of.get(c.get("address")))
    drift, problems, assigned, names = [], [], {}, {}
    if h.get("functions"):
        try:
            resolved = resolve(h["functions"], h.get("discovery") or {"accelerators": []})
        except DeclarationError as e:
            problems.append("declaration refused: %s" % e)
        else:
            assigned = dict((a["address"], a) for a in resolved["assignments"])
            names = resolved.get("function_names") or {}
            problems.extend(resolved["problems"])
    by_card, others = {}, []
    for p in providers:
        found = _ADDRESS.findall(p.get("name") or "")
        owner = found and card_of.get(pci_address(found[-1]))
        if owner:
            by_card.setdefault(owner, []).append(p)
        else:
            others.append(p)
    out, not_loaded = [], set()
    for c in cards:
        addr = c.get("address")
        a = assigned.get(addr)
        provs = []
        for p in by_card.get(addr, []):
            fn, trait, _d = provider_function(p.get("traits"), declared, discovered)
            loaded = not (a is not None and a.get("change_needed") and fn is not None and fn == a.get("function"))
            if not loaded:
                not_loaded.add(p.get("name"))
            invs = []
            for rc in sorted(p.get("inventories") or {}):
                u = units(p["inventories"][rc], (p.get("usages") or {}).get(rc), loaded)
                u["resource_class"] = rc
                invs.append(u)
            provs.append({"name": p.get("name"), "owner": p.get("owner"), "function": fn, "trait": trait,
                          "inventories": invs, "drained": any(i["is_drained"] for i in invs),
                          "traits": list(p.get("traits") or [])})
        st = _cardstate.card_state(c, by_addr, by_card.get(addr, []), declared=a["function"] if a else None,
                                   carries=bool(a) and not a.get("change_needed"))
        evidence = list(st["host_evidence"])
        in_use = dict((name, used) for name, used, _consumers in st["used"])
        for p in by_card.get(addr, []):
            if p.get("name") not in in_use:
                continue        # a drain hold of this collection's is not use
            for rc, n in sorted(in_use[p.get("name")].items()):
                evidence.append("placement %s: %s %s used" % (p.get("name"), n, rc))
            for consumer, alloc in sorted((p.get("allocations") or {}).items()):
                res = (alloc or {}).get("resources") or {}
                evidence.append("placement consumer %s holds %s" % (consumer, ", ".join(
                    "%s %s" % (rc, res[rc]) for rc in sorted(res))))
        if a is None:
            status = "not declared"
        elif st["blocked"]:
            status = "blocked"
            drift.append("%s: declared %s (%s), carries %s; in use, not changed: %s" % (
                addr, a["function"], a["kind"], _carries(c) or "nothing", "; ".join(evidence)))
        elif a.get("change_needed"):
            status = "to change"
            drift.append("%s: declared %s (%s), carries %s" % (addr, a["function"], a["kind"], _carries(c) or "nothing"))
        else:
            status = "as declared"
        if a is not None and not a.get("change_needed") and h.get("in_placement"):
            if not provs:
                drift.append("%s: carries %s, no provider in Placement" % (addr, a["function"]))
            elif a.get("trait") and not [p for p in provs if a["trait"] in p["traits"]]:
                drift.append("%s: carries %s, Placement lacks %s on %s" % (
                    addr, a["function"], a["trait"], ", ".join(p["name"] for p in provs)))
        out.append({
            "address": addr, "family": c.get("family"), "model": _model(c), "carries": _carries(c, names),
            "function_id": _function_id(c),
            "declared": a["function"] if a else None, "status": status, "in_use": st["in_use"],
            "evidence": evidence, "drained": bool(st["drained"]), "providers": provs,
        })
    other = []
    for p in others:
        if p.get("uuid") and p.get("uuid") == p.get("root_provider_uuid"):
            continue
        if p.get("owner") == "accelops" and h.get("discovery") is not None:
            drift.append("%s: provider of this collection without a card on the host" % p.get("name"))
        fn = provider_function(p.get("traits"), declared, discovered)[0]
        invs = []
        for rc in sorted(p.get("inventories") or {}):
            u = units(p["inventories"][rc], (p.get("usages") or {}).get(rc))
            u["resource_class"] = rc
            invs.append(u)
        other.append({"name": p.get("name"), "owner": p.get("owner"), "function": fn, "inventories": invs})
    drift.extend("declaration: %s" % x for x in problems)
    return out, other, drift, not_loaded


def _hosts(hosts, names):
    """The host items; an item missing (None) where ``names`` has a name is a host that was not reached."""
    if hosts is None:
        hosts = []
    if not isinstance(hosts, list):
        raise FleetReportError("fleet_report: hosts must be a list, got %s" % type(hosts).__name__)
    names = list(names or [])
    out = []
    for i, h in enumerate(hosts):
        if h is None and i < len(names):
            h = {"name": names[i], "error": "not reached: no discovery result (unreachable, or the play failed "
                                            "before it)"}
        if not isinstance(h, Mapping) or not h.get("name"):
            raise FleetReportError("fleet_report: hosts[%d] must be a dictionary with a name" % i)
        out.append(h)
    return out


def _placement(data):
    """(providers, host -> why its providers could not be read) from C(providers) and/or C(placement), the
    registered results of placement_provider_info (a loop's results name their host in ``item``)."""
    providers = list(data.get("providers") or [])
    errors = dict(data.get("placement_errors") or {})
    for r in data.get("placement") or []:
        if not isinstance(r, Mapping) or r.get("skipped"):
            continue
        if isinstance(r.get("providers"), list):
            providers.extend(r["providers"])
            continue
        item = r.get("item")
        hosts = [item] if isinstance(item, str) else list((r.get("invocation") or {}).get("module_args", {})
                                                          .get("hosts") or [])
        for h in hosts or ["?"]:
            errors[h] = str(r.get("msg") or "no answer")
    if not all(isinstance(p, Mapping) for p in providers):
        raise FleetReportError("fleet_report: providers must be the providers list of placement_provider_info")
    return providers, errors


# -- the input's shape, checked once (FleetReportError naming the path and the accepted form) -------------------
def _expect(ok, where, form, value):
    if not ok:
        raise FleetReportError("fleet_report: %s: expected %s, got %s" % (where, form, type(value).__name__))


def _list(value, where, what):
    """A list (or null: empty); ``what`` names its items."""
    _expect(not value or isinstance(value, (list, tuple)), where, "a list of %s, or null" % what, value)
    return value or []


def _map(value, where, form):
    """A mapping (or null: empty)."""
    _expect(not value or isinstance(value, Mapping), where, "%s, or null" % form, value)
    return value or {}


def _strings(value, where, what):
    """A list of strings (or null); ``what`` says what they are."""
    _expect(not value or isinstance(value, (list, tuple)), where, "a list of strings (%s) or null" % what, value)
    for i, item in enumerate(value or []):
        _expect(isinstance(item, str), "%s[%d]" % (where, i), "a string (%s)" % what, item)


def _string(value, where, form="a string"):
    _expect(value is None or isinstance(value, str), where, form + " or null", value)


def _check_units(units, where):
    for i, u in enumerate(_list(units, where, "units (mappings with kind, id, in_use, in_use_by)")):
        at = "%s[%d]" % (where, i)
        _expect(isinstance(u, Mapping), at, "a unit (a mapping with kind, id, in_use, in_use_by)", u)
        for j, who in enumerate(_list(u.get("in_use_by"), at + ".in_use_by", "in-use evidence (mappings)")):
            _expect(isinstance(who, Mapping), "%s.in_use_by[%d]" % (at, j), "a mapping with kind and name", who)


def _check_discovery(discovery, where):
    """The records of a discovery result the report reads (records that are not mappings are skipped, as before)."""
    if not isinstance(discovery, Mapping) or not isinstance(discovery.get("accelerators"), list):
        return
    for i, rec in enumerate(discovery["accelerators"]):
        if not isinstance(rec, Mapping):
            continue
        at = "%s.discovery.accelerators[%d]" % (where, i)
        _expect(isinstance(rec.get("address"), str), at + ".address", "a PCI address string", rec.get("address"))
        _string(rec.get("physfn"), at + ".physfn", "its PF's PCI address (a string)")
        fn = _map(rec.get("function"), at + ".function", "a mapping with id, name, trait (the loaded function)")
        _string(fn.get("trait"), at + ".function.trait")
        _map(rec.get("fpga"), at + ".fpga", "a mapping with vendor")
        _check_units(rec.get("units"), at + ".units")
        sriov = _map(rec.get("sriov"), at + ".sriov", "a mapping with vfs and vf_units")
        _strings(sriov.get("vfs"), at + ".sriov.vfs", "its VFs' PCI addresses")
        _check_units(sriov.get("vf_units"), at + ".sriov.vf_units")


def _check_providers(providers, where):
    for i, p in enumerate(_list(providers, where, "providers")):
        if isinstance(p, Mapping):      # (one that is not is refused by _placement)
            _check_provider(p, "%s[%d]" % (where, i))


def _check_provider(p, where):
    _string(p.get("name"), where + ".name")
    _string(p.get("host"), where + ".host", "the compute node's name (a string)")
    _strings(p.get("traits"), where + ".traits", "trait names")
    for key, form in (("inventories", "a mapping of resource class to inventory (a mapping with total, reserved)"),
                      ("usages", "a mapping of resource class to units used"),
                      ("allocations", "a mapping of consumer to allocation (a mapping with resources)")):
        for k, v in _map(p.get(key), "%s.%s" % (where, key), form).items():
            _expect(isinstance(k, str), "%s.%s key %r" % (where, key, k), "a string", k)
            if key == "inventories":
                _expect(isinstance(v, Mapping), "%s.%s.%s" % (where, key, k),
                        "an inventory (a mapping with total, reserved)", v)
            elif key == "allocations":
                res = _map(v, "%s.%s.%s" % (where, key, k), "an allocation (a mapping with resources)").get("resources")
                for rc in _map(res, "%s.%s.%s.resources" % (where, key, k), "a mapping of resource class to units"):
                    _expect(isinstance(rc, str), "%s.%s.%s.resources key %r" % (where, key, k, rc), "a string", rc)


def _check_input(data, hosts):
    """The keys fleet_report reads, beyond what _hosts and _placement check: see the option's description."""
    _check_providers(data.get("providers"), "providers")
    for h in _map(data.get("placement_errors"), "placement_errors",
                  "a mapping of host to why its providers could not be read"):
        _expect(isinstance(h, str), "placement_errors key %r" % (h,), "a host name (a string)", h)
    for i, r in enumerate(_list(data.get("placement"), "placement", "placement_provider_info results")):
        where = "placement[%d]" % i
        if not isinstance(r, Mapping) or r.get("skipped"):
            continue
        if isinstance(r.get("providers"), list):
            _check_providers(r["providers"], where + ".providers")
            continue
        if not isinstance(r.get("item"), str):
            args = _map(_map(r.get("invocation"), where + ".invocation", "a mapping with module_args")
                        .get("module_args"), where + ".invocation.module_args", "a mapping with hosts")
            _strings(args.get("hosts"), where + ".invocation.module_args.hosts", "host names")
    for i, h in enumerate(hosts):
        where = "hosts[%d]" % i
        _expect(isinstance(h["name"], str), where + ".name", "a host name (a string)", h["name"])
        _string(h.get("placement_host"), where + ".placement_host", "its compute node provider's name (a string)")
        _list(h.get("functions"), where + ".functions", "declared functions")
        _check_discovery(h.get("discovery"), where)
    for i, p in enumerate(_list(data.get("profiles"), "profiles", "device profiles")):
        if not isinstance(p, Mapping):
            continue
        where = "profiles[%d]" % i
        if isinstance(p.get("candidates"), Mapping):
            _strings(p["candidates"].get("hosts"), where + ".candidates.hosts", "host names")
        for j, g in enumerate(_list(p.get("groups"), where + ".groups", "request groups")):
            for k in g if isinstance(g, Mapping) else ():
                _expect(isinstance(k, str), "%s.groups[%d] key %r" % (where, j, k),
                        "a string (resources:<CLASS> or trait:<TRAIT>)", k)


def build(data):
    if not isinstance(data, Mapping):
        raise FleetReportError("fleet_report expects a dictionary (hosts, providers, profiles), got %s"
                               % type(data).__name__)
    _list(data.get("names"), "names", "host names (one per item of hosts)")
    hosts_in = _hosts(data.get("hosts"), data.get("names"))
    _check_input(data, hosts_in)
    providers, placement_errors = _placement(data)
    declared, discovered = _function_labels(hosts_in)

    # each host's cards first: which providers' cards do not carry their function yet (not free capacity)
    host_parts, not_loaded = [], set()
    for h in sorted(hosts_in, key=lambda x: str(x["name"])):
        ph = h.get("placement_host") or h["name"]
        mine = [p for p in providers if p.get("host") == ph]
        item = dict(h, in_placement=bool(mine))
        error = h.get("error") or None
        found = h.get("discovery")
        if not error and isinstance(found, Mapping) and (found.get("failed") or found.get("unreachable")
                                                         or not isinstance(found.get("accelerators"), list)):
            error = "discovery failed: %s" % (found.get("msg") or "no accelerators list")
        if error:
            item["discovery"] = None
        cards, other, drift, host_not_loaded = _host_cards(item, mine, declared, discovered)
        not_loaded.update((ph, name) for name in host_not_loaded)
        if ph in placement_errors:
            drift.append("Placement: %s" % placement_errors[ph])
        host_parts.append((h, ph, error, mine, cards, other, drift))

    # capacity per function and resource class, over every non-root provider of the hosts' trees
    rows = {}
    host_caps = {}
    drained_providers = 0
    for p in providers:
        if p.get("uuid") and p.get("uuid") == p.get("root_provider_uuid"):
            continue
        invs = p.get("inventories") or {}
        if not invs:
            continue
        fn, trait, is_declared = provider_function(p.get("traits"), declared, discovered)
        host = p.get("host")
        any_drained = False
        for rc in sorted(invs):
            u = units(invs[rc], (p.get("usages") or {}).get(rc), (host, p.get("name")) not in not_loaded)
            any_drained = any_drained or u["is_drained"]
            row = rows.setdefault((trait, rc), dict(_zero(), function=fn, trait=trait, resource_class=rc,
                                                    declared=is_declared, providers=0, _hosts={}))
            _add(row, u)
            row["providers"] += 1
            ph = row["_hosts"].setdefault(host, {"host": host, "total": 0, "free": 0})
            ph["total"] += u["total"]
            ph["free"] += u["free"]
            _add(host_caps.setdefault(host, _zero()), u)
        drained_providers += 1 if any_drained else 0
    functions = []
    for key in sorted(rows, key=lambda k: (rows[k]["function"] is None, str(rows[k]["function"]).lower(), k[1])):
        row = rows[key]
        hs = sorted(row.pop("_hosts").values(), key=lambda x: str(x["host"]))
        row["hosts"] = hs
        row["where"] = sorted((x for x in hs if x["free"] > 0), key=lambda x: (-x["free"], str(x["host"])))
        row["bar"] = bar_segments(row)
        functions.append(row)

    hosts = []
    for h, ph, error, mine, cards, other, drift in host_parts:
        cap = host_caps.get(ph, _zero())
        hosts.append({"name": h["name"], "placement_host": ph, "error": error, "in_placement": bool(mine),
                      "cards": cards, "other_providers": other, "drift": drift, "capacity": cap, "bar": bar_segments(cap)})

    profiles_in = sorted((p for p in data.get("profiles") or [] if isinstance(p, Mapping)),
                         key=lambda x: str(x.get("name")))
    counted = [p for p in providers if p.get("inventories") and not (p.get("uuid") and p.get("uuid") == p.get(
        "root_provider_uuid"))]
    profiles = [_profile(p, counted, declared, discovered) for p in profiles_in]
    unsatisfiable = [p["name"] for p in profiles if p["satisfiable"] is False]

    classes = {}
    for row in functions:
        _add(classes.setdefault(row["resource_class"], _zero()), row)
    summary = {
        "hosts": len(hosts), "cards": sum(len(h["cards"]) for h in hosts),
        "providers": sum(r["providers"] for r in functions), "drained_providers": drained_providers,
        "drift": sum(len(h["drift"]) for h in hosts), "hosts_with_drift": len([h for h in hosts if h["drift"]]),
        "hosts_failed": len([h for h in hosts if h["error"]]),
        "profiles": len(profiles), "unsatisfiable": len(unsatisfiable),
        "classes": [dict(v, resource_class=k) for k, v in sorted(classes.items())],
    }
    return {"title": data.get("title") or "Accelerator fleet", "generated": data.get("generated"),
            "summary": summary, "functions": functions, "hosts": hosts, "profiles": profiles,
            "unsatisfiable": unsatisfiable}
