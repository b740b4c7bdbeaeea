# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Function pools: keep a minimum of free units of each function across a set of hosts (docs/pools.md).

A pool names a function of a declaration (the same format as ``accelerator_host_functions``, validated and
matched by :mod:`_declaration`), the hosts it counts over, ``min_free`` and optionally ``max_free``. Free units
are read from Placement: ``total - reserved - used`` of every provider of the pool's hosts that carries the
function's ``CUSTOM_FUNCTION_<NAME>`` trait, whoever reports it. :func:`plan` works out each pool's deficit and
surplus and which cards to reprogram, and why:

1. a card that carries the function already but whose providers lack its trait (a report is enough);
2. a free card with nothing loaded;
3. a free card loaded with a function no pool keeps;
4. a free card of another pool's function, only when every pool of that function that counts the card stays at
   or above ``min_free + margin`` after losing the card's free units (hysteresis: a pool that gave a card can
   never drop into a deficit because of it, so two pools cannot take a card back and forth); pools above their
   ``max_free`` are asked first.

Within each step, cards on hosts already changed by the plan come first (fewest hosts changed), then by host
and address. A card with a unit in use (host evidence), a Placement usage or allocation, or a drained provider
is never chosen. A pool's deficit is filled until ``free >= min_free`` and no further. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from collections.abc import Mapping

from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration as D
from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate

PUBLISH, LOAD, FOREIGN, TAKE = 0, 1, 2, 3
CHANGES = ("publish", "load", "reload", "take")
DEFAULT_MARGIN = 1


class PoolError(ValueError):
    """Pool settings that cannot be used; the message names the pool and the key."""


def _int(value, where, minimum=0, required=False):
    if value is None and not required:
        return None
    if isinstance(value, str) and _DIGITS.match(value):
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PoolError("%s: must be an integer >= %d, got %r" % (where, minimum, value))
    return value


# ---------------------------------------------------------------------------------------------------------------
# Shape checks at the boundary: the filters' inputs come from the role's variables and module results; anything of
# another shape is refused here, once, naming the path and the accepted form (never a traceback further down).

_SEQ = (list, tuple)
_DIGITS = re.compile(r"\A\s*[0-9]{1,18}\s*\Z")


def _bad(where, form, value):
    raise PoolError("%s: must be %s, got %s" % (where, form, type(value).__name__))


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _mapping(value, where, form="a mapping", optional=True):
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        _bad(where, form, value)
    return value


def _seq(value, where, form="a list", optional=True):
    if value is None and optional:
        return ()
    if not isinstance(value, _SEQ):
        _bad(where, form, value)
    return value


def _strs(value, where, form="a list of strings", optional=True):
    for i, x in enumerate(_seq(value, where, form, optional)):
        if not isinstance(x, str):
            _bad("%s[%d]" % (where, i), "a string (%s)" % form, x)
    return value


def _keys(mapping, where, keys, check):
    """check(value, where) for each of ``keys`` present in ``mapping``."""
    for key in keys:
        if key in mapping:
            check(mapping[key], "%s.%s" % (where, key))


def _opt_str(value, where):
    if value is not None and not isinstance(value, str):
        _bad(where, "a string or null", value)


def _int_map(value, where, form):
    for k, v in _mapping(value, where, form).items():
        if not isinstance(k, str):
            _bad(where, form + " (string keys)", k)
        if not _is_int(v):
            _bad("%s.%s" % (where, k), "an integer", v)


def _check_record(rec, where):
    """The keys of an accelerator_info record that the planner reads (_declaration's card checks among them)."""
    _mapping(rec, where, "an accelerator_info record (a mapping)", optional=False)
    if not isinstance(rec.get("address"), str):
        _bad(where + ".address", "a PCI address string", rec.get("address"))
    fn = _mapping(rec.get("function"), where + ".function", "null or a mapping with id and name")
    _keys(fn, where + ".function", ("id", "name"), _opt_str)
    for i, unit in enumerate(_seq(rec.get("units"), where + ".units", "a list of units")):
        w = "%s.units[%d]" % (where, i)
        _mapping(unit, w, "a unit (a mapping)", optional=False)
        for j, who in enumerate(_seq(unit.get("in_use_by"), w + ".in_use_by", "a list of evidence mappings")):
            _mapping(who, "%s.in_use_by[%d]" % (w, j), "an evidence mapping", optional=False)
    sriov = _mapping(rec.get("sriov"), where + ".sriov", "null or the SR-IOV mapping")
    _strs(sriov.get("vfs"), where + ".sriov.vfs", "a list of VF addresses")
    for i, unit in enumerate(_seq(sriov.get("vf_units"), where + ".sriov.vf_units", "a list of units")):
        w = "%s.sriov.vf_units[%d]" % (where, i)
        _mapping(unit, w, "a unit (a mapping)", optional=False)
        _keys(unit, w, ("address",), _opt_str)
        for j, who in enumerate(_seq(unit.get("in_use_by"), w + ".in_use_by", "a list of evidence mappings")):
            _mapping(who, "%s.in_use_by[%d]" % (w, j), "an evidence mapping", optional=False)
    if sriov.get("totalvfs") is not None and not _is_int(sriov["totalvfs"]):
        _bad(where + ".sriov.totalvfs", "an integer", sriov["totalvfs"])
    gpu = _mapping(rec.get("gpu"), where + ".gpu", "null or the GPU mapping")
    for key in ("mdev_types", "vgpu_types", "vgpu_vfs"):
        for i, t in enumerate(_seq(gpu.get(key), "%s.gpu.%s" % (where, key), "a list of mappings")):
            w = "%s.gpu.%s[%d]" % (where, key, i)
            _mapping(t, w, "a mapping", optional=False)
            _keys(t, w, ("id", "name"), _opt_str)
            _seq(t.get("mdevs"), w + ".mdevs")
            cur = _mapping(t.get("current_type"), w + ".current_type", "null or a mapping with id and name")
            _keys(cur, w + ".current_type", ("id", "name"), _opt_str)
    fpga = _mapping(rec.get("fpga"), where + ".fpga", "null or the FPGA mapping")
    for i, port in enumerate(_seq(fpga.get("ports"), where + ".fpga.ports", "a list of ports")):
        w = "%s.fpga.ports[%d]" % (where, i)
        _mapping(port, w, "a port (a mapping)", optional=False)
        _keys(port, w, ("id",), lambda v, w2: isinstance(v, str) or _bad(w2, "a string", v))


def _check_hosts(hosts, where="hosts", discovery=True):
    """Inventory host to {placement_host, name_prefix, allowed_functions, discovery}."""
    form = "a mapping of inventory host to {placement_host, name_prefix, discovery, allowed_functions}"
    for host, spec in _mapping(hosts, where, form, optional=False).items():
        if not isinstance(host, str):
            _bad(where, form + " (host names are strings)", host)
        w = "%s.%s" % (where, host)
        spec = _mapping(spec, w, "a mapping with placement_host, name_prefix, discovery, allowed_functions")
        _keys(spec, w, ("placement_host", "name_prefix"), _opt_str)
        _seq(spec.get("allowed_functions"), w + ".allowed_functions", "a list of function names and sha256s, or null")
        if not discovery:
            continue
        disc = spec.get("discovery") or None
        if isinstance(disc, Mapping) and "accelerators" in disc:
            disc = disc["accelerators"]
        elif disc is not None and not isinstance(disc, _SEQ):
            _bad(w + ".discovery", "accelops.lifecycle.accelerator_info's result (a mapping with accelerators)", disc)
        for i, rec in enumerate(_seq(disc, w + ".discovery.accelerators", "a list of accelerator_info records")):
            _check_record(rec, "%s.discovery.accelerators[%d]" % (w, i))


def _check_providers(providers, where="providers"):
    """placement_provider_info's providers (null: none)."""
    form = "placement_provider_info's providers (a list of mappings)"
    for i, p in enumerate(_seq(providers, where, form)):
        w = "%s[%d]" % (where, i)
        _mapping(p, w, "a provider of placement_provider_info (a mapping)", optional=False)
        _keys(p, w, ("name", "uuid", "host"), _opt_str)
        _strs(p.get("traits"), w + ".traits", "a list of trait names")
        invs = _mapping(p.get("inventories"), w + ".inventories", "a mapping of resource class to inventory")
        for rc, inv in invs.items():
            if not isinstance(rc, str):
                _bad(w + ".inventories", "a mapping of resource class (a string) to inventory", rc)
            _int_map(dict((k, v) for k, v in _mapping(inv, "%s.inventories.%s" % (w, rc), "an inventory (a mapping)",
                                                      optional=False).items()
                          if k in ("total", "reserved")), "%s.inventories.%s" % (w, rc), "an inventory")
        _int_map(p.get("usages"), w + ".usages", "a mapping of resource class to units used")
        allocs = p.get("allocations")
        if allocs is not None and not isinstance(allocs, (Mapping,) + _SEQ):
            _bad(w + ".allocations", "a mapping of consumer uuid to its allocation", allocs)
        if allocs and not all(isinstance(c, str) for c in allocs):
            _bad(w + ".allocations", "a mapping of consumer uuid (a string) to its allocation", allocs)
    return list(providers or [])


def _check_groups(groups, where="groups"):
    for name, members in _mapping(groups, where, "the inventory's groups (group name to host names)").items():
        _strs(members, "%s.%s" % (where, name), "a list of host names", optional=False)


def _check_aggregates(aggregates, where="aggregates"):
    form = "placement_aggregate_info's aggregates (uuid to a list of members)"
    for uuid, members in _mapping(aggregates, where, form).items():
        w = "%s.%s" % (where, uuid)
        for i, m in enumerate(_seq(members, w, "a list of members ({name, uuid} or names)", optional=False)):
            name = m.get("name") if isinstance(m, Mapping) else m
            if not isinstance(name, str):
                _bad("%s[%d]" % (w, i), "a member {name, uuid} or a name (a string)", m)


def _check_plan(plan_result, where="plan", pools=False):
    """pool_plan's result: the keys after_drain and report read."""
    form = "pool_plan's result"
    _mapping(plan_result, where, form, optional=False)
    for key in ("actions",) + (("pools",) if pools else ()):
        if key not in plan_result:
            raise PoolError("%s: expected pool_plan's result (no %s)" % (where, key))
    for i, a in enumerate(_seq(plan_result["actions"], where + ".actions", "a list of actions", optional=False)):
        w = "%s.actions[%d]" % (where, i)
        _mapping(a, w, "an action of pool_plan (a mapping)", optional=False)
        for key in ("host", "address", "function"):
            if not isinstance(a.get(key), str):
                _bad("%s.%s" % (w, key), "a string", a.get(key))
    for host, cards in _mapping(plan_result.get("carrying"), where + ".carrying",
                                "a mapping of host to {address: function}").items():
        for addr, fn in _mapping(cards, "%s.carrying.%s" % (where, host), "a mapping of address to function").items():
            if not isinstance(fn, str):
                _bad("%s.carrying.%s.%s" % (where, host, addr), "a function name", fn)
    if not pools:
        return
    for i, p in enumerate(_seq(plan_result.get("profiles"), where + ".profiles", "a list of profiles")):
        w = "%s.profiles[%d]" % (where, i)
        _mapping(p, w, "a profile of pool_plan's result (a mapping)", optional=False)
        for key in ("name", "status"):
            if not isinstance(p.get(key), str):
                _bad("%s.%s" % (w, key), "a string", p.get(key))
    for i, p in enumerate(_seq(plan_result["pools"], where + ".pools", "a list of pools", optional=False)):
        w = "%s.pools[%d]" % (where, i)
        _mapping(p, w, "a pool of pool_plan's result (a mapping)", optional=False)
        for key in ("name", "function", "trait"):
            if not isinstance(p.get(key), str):
                _bad("%s.%s" % (w, key), "a string", p.get(key))
        _strs(p.get("hosts"), w + ".hosts", "a list of host names", optional=False)
        for key in ("min_free", "margin", "free", "planned_free"):
            if not _is_int(p.get(key)):
                _bad("%s.%s" % (w, key), "an integer", p.get(key))
        if p.get("max_free") is not None and not _is_int(p["max_free"]):
            _bad(w + ".max_free", "an integer or null", p["max_free"])


def _check_drain(drain, where="drain"):
    """placement_provider_drain's result (null or an empty list: nothing drained); its providers."""
    if drain is None or (isinstance(drain, _SEQ) and not drain):
        return []
    form = "placement_provider_drain's result (a mapping with providers) or null"
    provs = _seq(_mapping(drain, where, form, optional=False).get("providers"), where + ".providers",
                 "a list of providers")
    for i, p in enumerate(provs):
        w = "%s.providers[%d]" % (where, i)
        _mapping(p, w, "a provider of placement_provider_drain's result (a mapping)", optional=False)
        _keys(p, w, ("action", "card", "name", "uuid"), _opt_str)
        if p.get("action") == "drained":
            for key in ("uuid", "name"):
                if not isinstance(p.get(key), str):
                    _bad("%s.%s" % (w, key), "a string", p.get(key))
    return provs


def _check_converge(converge, where="converge"):
    """Inventory host to its accelerator_host_report (null: not converged)."""
    form = "a mapping of inventory host to its accelerator_host_report or null"
    for host, rep in _mapping(converge, where, form).items():
        w = "%s.%s" % (where, host)
        rep = _mapping(rep, w, "accelerator_host_report (a mapping) or null")
        for key in ("changed", "failed"):
            _seq(rep.get(key), "%s.%s" % (w, key), "a list of card addresses")
        pl = _mapping(rep.get("placement"), w + ".placement", "a mapping with undrained and kept_drained")
        for key in ("undrained", "kept_drained"):
            _seq(pl.get(key), "%s.placement.%s" % (w, key), "a list of card addresses")
    return converge or {}


def _check_functions(functions, where="functions"):
    """The declaration as after_drain copies it (pool_plan has validated it)."""
    for i, raw in enumerate(_seq(functions, where, "the declaration (a list of function entries)")):
        _mapping(raw, "%s[%d]" % (where, i), "a function entry (a mapping)", optional=False)
    return functions or []


def validate_pools(pools, entries, margin=DEFAULT_MARGIN, groups=None, aggregates=None, hosts=None):
    """Check the pools against the validated declaration ``entries``; returns normalised pools. A pool's
    ``hosts`` is an inventory group name, or a list of group and host names (``groups``: the inventory's groups); or
    its ``aggregate`` is a Placement aggregate uuid (``aggregates``: uuid to its member providers' names, matched
    with the ``placement_host`` of ``hosts``)."""
    by_name = dict((e["name"].lower(), e) for e in entries)
    margin = _int(margin, "function_pools_margin", required=True)
    _check_groups(groups)
    _check_aggregates(aggregates)
    if not isinstance(pools, list):
        raise PoolError("function_pools_pools: must be a list of pools, got %s" % type(pools).__name__)
    out, names = [], set()
    for i, raw in enumerate(pools):
        where = "function_pools_pools[%d]" % i
        if not isinstance(raw, dict):
            raise PoolError("%s: must be a mapping" % where)
        unknown = sorted(str(k) for k in raw if k not in ("name", "function", "hosts", "aggregate", "min_free",
                                                          "max_free", "margin"))
        if unknown:
            raise PoolError("%s: unknown key(s) %s; accepted: name, function, hosts, aggregate, min_free, max_free, "
                            "margin" % (where, ", ".join(unknown)))
        fn = raw.get("function")
        if not isinstance(fn, str) or fn.lower() not in by_name:
            raise PoolError("%s.function: %r is not a function of function_pools_functions (%s)"
                            % (where, fn, ", ".join(e["name"] for e in entries) or "none declared"))
        entry = by_name[fn.lower()]
        name = raw.get("name") or entry["name"]
        if not isinstance(name, str) or name in names:
            raise PoolError("%s.name: %r must be a unique string" % (where, name))
        names.add(name)
        where = "%s (%s)" % (where, name)
        if ("hosts" in raw) == ("aggregate" in raw):
            raise PoolError("%s: needs one of hosts (an inventory group or a list of groups and hosts) or aggregate "
                            "(a Placement aggregate uuid)" % where)
        if "aggregate" in raw:
            if not isinstance(raw["aggregate"], str):
                _bad(where + ".aggregate", "a Placement aggregate uuid (a string)", raw["aggregate"])
            members = (aggregates or {}).get(raw["aggregate"])
            if members is None:
                raise PoolError("%s.aggregate: %r was not read from Placement" % (where, raw["aggregate"]))
            members = [m.get("name") if isinstance(m, dict) else m for m in members]
            by_placement = dict(((spec or {}).get("placement_host") or h, h) for h, spec in (hosts or {}).items())
            outside = sorted(m for m in members if m not in by_placement)
            if outside:
                raise PoolError("%s.aggregate: member(s) %s of aggregate %s are not hosts of the play (every host of a "
                                "pool must be in the play)" % (where, ", ".join(outside), raw["aggregate"]))
            raw = dict(raw, hosts=[by_placement[m] for m in members])
        hosts_of = raw.get("hosts")
        if isinstance(hosts_of, str):
            hosts_of = [hosts_of]
        if not isinstance(hosts_of, list) or not all(isinstance(h, str) and h for h in hosts_of):
            raise PoolError("%s.hosts: must be an inventory group name or a list of group and host names" % where)
        hosts_of = [m for h in hosts_of for m in ((groups or {}).get(h) or [h])]
        lo = _int(raw.get("min_free"), where + ".min_free", required=True)
        hi = _int(raw.get("max_free"), where + ".max_free")
        if hi is not None and hi < lo:
            raise PoolError("%s.max_free: %d is below min_free %d" % (where, hi, lo))
        m = _int(raw.get("margin"), where + ".margin")
        out.append({"name": name, "function": entry["name"], "trait": entry["trait"], "hosts": sorted(set(hosts_of)),
                    "aggregate": raw.get("aggregate"),
                    "min_free": lo, "max_free": hi, "margin": margin if m is None else m})
    return out


# ---------------------------------------------------------------------------------------------------------------
# Unsatisfiable device profiles as pools (the "spot instance" workflow through the keeper)

PROFILE_POOL_PREFIX = "profile:"
FUNCTION_TRAIT_PREFIX = "CUSTOM_FUNCTION_"


def _check_profiles(profiles, where):
    form = "device_profile_info's profiles (a list of {name, groups, satisfiable})"
    seen = set()
    for i, prof in enumerate(_seq(profiles, where, form)):
        w = "%s[%d]" % (where, i)
        _mapping(prof, w, "a profile of device_profile_info (a mapping with name, groups, satisfiable)",
                 optional=False)
        if not isinstance(prof.get("name"), str) or not prof["name"]:
            _bad(w + ".name", "the profile's name (a non-empty string)", prof.get("name"))
        if prof["name"] in seen:
            raise PoolError("%s.name: profile %r is given twice" % (w, prof["name"]))
        seen.add(prof["name"])
        w = "%s (%s)" % (w, prof["name"])
        if not isinstance(prof.get("satisfiable"), bool):
            raise PoolError("%s.satisfiable: must be true or false, got %s: read the profiles with "
                            "accelops.lifecycle.device_profile_info and check_candidates: true"
                            % (w, type(prof.get("satisfiable")).__name__))
        for j, group in enumerate(_seq(prof.get("groups"), w + ".groups", "a list of request groups", optional=False)):
            g = "%s.groups[%d]" % (w, j)
            form = "a request group in Cyborg's form (resources:<CLASS> and trait:<TRAIT> keys to strings)"
            for key, value in _mapping(group, g, form, optional=False).items():
                if not isinstance(key, str) or not isinstance(value, (str, int)) or isinstance(value, bool):
                    _bad("%s.%r" % (g, key), form, value)
                if key.startswith("resources:") and not _DIGITS.match(str(value)):
                    _bad("%s.%s" % (g, key), "a whole number of units (Cyborg's form: \"1\")", value)


def _profile_group(group, by_trait):
    """(function entry or None, units asked, why not servable or None) for one request group."""
    units = max([int(str(v)) for k, v in group.items() if k.startswith("resources:")] or [1])
    asked = sorted(k[len("trait:"):] for k, v in group.items()
                   if k.startswith("trait:" + FUNCTION_TRAIT_PREFIX) and str(v).lower() == "required")
    if not asked:
        return None, units, "asks for no function (no trait:%s<NAME>: required): a pool keeps functions" \
            % FUNCTION_TRAIT_PREFIX
    if len(asked) > 1:
        return None, units, "asks for %s together: a card carries one function" % ", ".join(asked)
    entry = by_trait.get(asked[0])
    if entry is None:
        return None, units, ("asks for %s, which no entry of function_pools_functions provides (declared: %s)"
                             % (asked[0], ", ".join(sorted(by_trait)) or "none"))
    return entry, units, None


def pools_from_profiles(profiles, entries, hosts, where="function_pools_profiles"):
    """Device profiles no provider can satisfy as pools, one request each: per unsatisfiable profile (``profiles``:
    device_profile_info's, read with ``check_candidates``), one pool per function its groups ask for
    (``trait:CUSTOM_FUNCTION_<NAME>: required``, a function of the validated declaration ``entries``) with
    ``min_free`` the units its groups ask for (``resources:<CLASS>``; the largest count when a group names several
    classes, summed over the profile's groups asking for the same function) and ``margin`` 0, over ``hosts`` (an
    inventory group or a list of groups and hosts, as a pool's). Satisfiable profiles are left alone. A profile
    with a group that asks for no function, for two, or for one no entry provides is not servable (its other groups
    alone would not make it satisfiable): it gets no pool, and the reason.

    Returns ``pools`` (pool settings for :func:`validate_pools`, named ``profile:<name>``, or
    ``profile:<name>:<function>`` when the profile asks for several functions) and ``profiles`` (per profile
    ``name``, ``status``: satisfiable, served or not-servable, ``pools`` and ``reason``)."""
    _check_profiles(profiles, where)
    if hosts is None:
        raise PoolError("%s: needs the hosts its pools count over (function_pools_profile_hosts: an inventory "
                        "group or a list of groups and hosts)" % where)
    by_trait = dict((e["trait"], e) for e in entries)
    pools, out = [], []
    for prof in profiles or []:
        name = prof["name"]
        if prof["satisfiable"]:
            out.append({"name": name, "status": "satisfiable", "pools": [], "reason": None})
            continue
        wanted, problems = {}, []
        for j, group in enumerate(prof["groups"]):
            entry, units, why = _profile_group(group, by_trait)
            if why:
                problems.append("group %d %s" % (j, why))
            else:
                wanted[entry["name"]] = wanted.get(entry["name"], 0) + units
        if not prof["groups"]:
            problems.append("it has no request group")
        if problems:
            out.append({"name": name, "status": "not-servable", "pools": [], "reason": "; ".join(problems)})
            continue
        names = []
        for fn in sorted(wanted):
            pname = PROFILE_POOL_PREFIX + name + (":" + fn if len(wanted) > 1 else "")
            names.append(pname)
            pools.append({"name": pname, "function": fn, "hosts": hosts, "min_free": wanted[fn], "margin": 0})
        out.append({"name": name, "status": "served", "pools": names,
                    "reason": "unsatisfiable: %s" % ", ".join("%d unit(s) of %s" % (wanted[fn], fn)
                                                              for fn in sorted(wanted))})
    return {"pools": pools, "profiles": out}


def _profile_lines(profiles):
    lines = []
    for p in profiles:
        if p["status"] == "served":
            lines.append("profile %s: %s: kept by pool(s) %s" % (p["name"], p["reason"], ", ".join(p["pools"])))
        elif p["status"] == "not-servable":
            lines.append("profile %s: unsatisfiable and not servable by a pool: %s" % (p["name"], p["reason"]))
    return lines


def _provider_free(p):
    invs = p.get("inventories") or {}
    usages = p.get("usages") or {}
    total = sum(int(i.get("total", 0)) for i in invs.values())
    reserved = sum(min(int(i.get("reserved", 0)), int(i.get("total", 0))) for i in invs.values())
    used = sum(int(usages.get(rc, 0)) for rc in invs)
    return total, reserved, used, max(0, total - reserved - used)


def _on_host(p, placement_host, prefix):
    """Whether provider ``p`` is in the tree of ``placement_host``: by the host placement_provider_info read it for
    when it says (exact), else by its name's prefix (the converge role's rule)."""
    if p.get("host"):
        return p["host"] == placement_host
    return (p.get("name") or "").startswith(prefix + "_")


class _Card(object):
    __slots__ = ("host", "placement_host", "address", "record", "by_addr", "providers", "carries", "loaded",
                 "busy", "host_busy", "drained", "free", "counted", "traits")


def _cards(hosts, providers, entries):
    """Every card of every host, with what it carries, whether it is in use or drained, and its free units."""
    out = []
    for host in sorted(hosts):
        spec = hosts[host] or {}
        prefix = spec.get("name_prefix") or spec.get("placement_host") or host
        cards, by_addr = D._cards(spec.get("discovery") or {"accelerators": []})  # pylint: disable=protected-access
        host_provs = [p for p in providers if _on_host(p, spec.get("placement_host") or host, prefix)]
        for rec in sorted(cards, key=lambda r: r["address"]):
            c = _Card()
            c.host, c.placement_host, c.address, c.record, c.by_addr = host, prefix, rec["address"], rec, by_addr
            c.carries = next((e["name"] for e in entries if D._compatible(e, rec) is None  # pylint: disable=protected-access
                              and D.carries(e, rec, by_addr)), None)
            st = _cardstate.card_state(rec, by_addr, host_provs, prefix)
            c.providers = st["providers"]
            c.loaded = (rec.get("function") or {}).get("name") or (rec.get("function") or {}).get("id")
            c.host_busy = list(st["host_evidence"])
            evidence = list(st["host_evidence"])
            for name, used, consumers in st["used"]:
                evidence.append("Placement provider %s has %s" % (
                    name, "usages " + ", ".join("%s=%s" % kv for kv in sorted(used.items())) if used
                    else "allocations of %s" % ", ".join(consumers)))
            c.busy = evidence
            c.drained = st["drained"]
            c.traits = set(t for p in c.providers for t in p.get("traits") or [])
            c.free = sum(_provider_free(p)[3] for p in c.providers)
            trait = next((e["trait"] for e in entries if e["name"] == c.carries), None)
            # what the pools of the function it carries count of it now (providers with the function's trait)
            c.counted = sum(_provider_free(p)[3] for p in c.providers if trait in (p.get("traits") or []))
            out.append(c)
    return out


def left_drains(cards, pools, entries):
    """The drained providers of the pools' cards, each ``{uuid, name, card, as_declared}`` for
    placement_provider_drain ``state: lifted`` (which lifts only the collection's marked drains, and only when
    nothing else is allocated). ``as_declared``: the card carries, on the discovery of this run, a pool's function
    whose trait its provider has, and its host shows no use of it; a card a killed run left half programmed does
    not carry its function, so its drain is left."""
    traits = dict((e["name"], e["trait"]) for e in entries)
    pooled = set(pool["function"] for pool in pools)
    out = []
    for c in cards:
        for p in c.providers:
            if p.get("name") not in c.drained:
                continue
            as_declared = bool(c.carries in pooled and traits.get(c.carries) in (p.get("traits") or [])
                               and not c.host_busy)
            out.append({"uuid": p.get("uuid"), "name": p.get("name"), "card": _card_key(c.host, c.address),
                        "as_declared": as_declared})
    return out


def _pool_state(pool, providers, places):
    """total, reserved, used, free units and providers of the function's trait on the pool's hosts (``places``:
    their (placement host, name prefix) pairs)."""
    st = {"total": 0, "reserved": 0, "used": 0, "free": 0, "providers": 0}
    for p in providers:
        if pool["trait"] not in (p.get("traits") or []):
            continue
        if not any(_on_host(p, host, prefix) for host, prefix in places):
            continue
        total, reserved, used, free = _provider_free(p)
        st["total"] += total
        st["reserved"] += reserved
        st["used"] += used
        st["free"] += free
        st["providers"] += 1
    return st


def pool_states(pools, hosts, providers):
    """Each pool's Placement counts (``before`` of :func:`plan`, and the read after a keeper run)."""
    out = []
    for pool in pools:
        places = []
        for h in pool["hosts"]:
            spec = hosts.get(h) or {}
            places.append((spec.get("placement_host") or h, spec.get("name_prefix") or spec.get("placement_host") or h))
        st = _pool_state(pool, providers, places)
        st.update(name=pool["name"], function=pool["function"], trait=pool["trait"], min_free=pool["min_free"],
                  max_free=pool["max_free"], margin=pool["margin"], hosts=pool["hosts"],
                  deficit=max(0, pool["min_free"] - st["free"]),
                  surplus=max(0, st["free"] - pool["max_free"]) if pool["max_free"] is not None else 0)
        out.append(st)
    return out


def _allowed(not_allowed, spec, raw_entry):
    allowed = (spec or {}).get("allowed_functions")
    if allowed is None or not_allowed is None:
        return None
    outside = not_allowed([raw_entry], allowed)
    return "; ".join(outside) if outside else None


def plan(functions, pools, hosts, providers, margin=DEFAULT_MARGIN, not_allowed=None, groups=None, aggregates=None,
         profiles=None, profile_hosts=None):
    """The keeper's plan. ``functions``: the declaration; ``pools``: the pool settings; ``hosts``: inventory name
    to ``{placement_host, name_prefix, discovery, allowed_functions}``; ``providers``: placement_provider_info's
    providers of those hosts (with usages and allocations); ``not_allowed``: the allow-list check
    (_declaration.not_allowed), called with ``([entry], allowed)``.

    Returns ``pools`` (each pool before and planned after, deficit, surplus, shortfall, status and message),
    ``actions`` (one per card to change, with the reason and the providers to drain with their generations),
    ``considered`` (cards looked at and not chosen, and why), ``declarations`` (per host with an action: the
    declaration for the converge role, naming by address every card that carries or gets a pool function),
    ``hosts``, ``function_names``, ``lines`` and ``summary``.

    ``profiles`` (device_profile_info's, with ``check_candidates``): each unsatisfiable profile becomes a pool after
    the declared ones (:func:`pools_from_profiles`, over ``profile_hosts``); the result's ``profiles`` says which
    were served by a pool and which cannot be, and why."""
    if not isinstance(hosts, Mapping):
        raise PoolError("hosts: expected a mapping of inventory host to {placement_host, discovery}")
    _check_hosts(hosts)
    providers = _check_providers(providers)
    try:
        entries = D.validate(functions, where="function_pools_functions")
    except D.DeclarationError as e:
        raise PoolError(str(e))
    raws = dict((r["name"].lower(), r) for r in functions or [])
    by_name = dict((e["name"], e) for e in entries)
    from_profiles = {"pools": [], "profiles": []}
    if profiles is not None:
        from_profiles = pools_from_profiles(profiles, entries, profile_hosts)
        if not isinstance(pools, list):
            raise PoolError("function_pools_pools: must be a list of pools, got %s" % type(pools).__name__)
        pools = list(pools) + from_profiles["pools"]
    pools = validate_pools(pools, entries, margin, groups, aggregates, hosts)
    for pool in pools:
        missing = [h for h in pool["hosts"] if h not in hosts]
        if missing:
            raise PoolError("pool %s: no discovery in hosts for host(s) %s (every host of a pool must be in the play)"
                            % (pool["name"], ", ".join(missing)))
    states = pool_states(pools, hosts, providers)
    free = dict((s["name"], s["free"]) for s in states)
    cards = _cards(dict((h, hosts[h]) for h in set(h for p in pools for h in p["hosts"])), providers, entries)
    pools_of = {}  # (function, host) -> pools of that function that count the host
    for pool in pools:
        for h in pool["hosts"]:
            pools_of.setdefault((pool["function"], h), []).append(pool)
    changed_hosts, taken, allowed_cache = set(), set(), {}
    actions, considered, gained = [], [], dict((p["name"], 0) for p in pools)
    for pool in pools:
        entry = by_name[pool["function"]]
        # what does not change while this pool is served: whether a card may get the function at all
        static = []
        for c in cards:
            if c.host not in pool["hosts"]:
                continue
            if c.carries == entry["name"] and entry["trait"] in c.traits:
                continue  # carries it and is counted already
            static.append((c, _why_not(c, entry, hosts, raws, not_allowed, allowed_cache)))
        while free[pool["name"]] < pool["min_free"]:
            ranked, seen = [], []
            for c, why_not in static:
                if (c.host, c.address) in taken:
                    continue
                cat, donors = _category(c, entry, pool, pools_of, free)
                if why_not is None and cat is None:
                    why_not = donors
                if why_not is not None:
                    seen.append((c, why_not))
                    continue
                above_max = any(d["max_free"] is not None and free[d["name"]] > d["max_free"] for d in donors)
                ranked.append(((cat, 0 if above_max else 1, 0 if c.host in changed_hosts else 1, c.host, c.address),
                               c, cat, donors))
            if not ranked:
                for c, why in seen:
                    considered.append({"pool": pool["name"], "host": c.host, "address": c.address, "reason": why})
                break
            _key, c, cat, donors = min(ranked, key=lambda t: t[0])
            units = c.free if cat == PUBLISH and c.providers else D.kind_of(entry).units(entry, c.record)
            reason = _reason(c, entry, cat, donors, free, c.host in changed_hosts)
            for d in donors:
                free[d["name"]] -= c.counted
            for p in pools_of.get((entry["name"], c.host), []):
                free[p["name"]] += units
                gained[p["name"]] += units
            taken.add((c.host, c.address))
            changed_hosts.add(c.host)
            actions.append({
                "pool": pool["name"], "function": entry["name"], "kind": entry["kind"], "host": c.host,
                "placement_host": c.placement_host, "address": c.address, "change": CHANGES[cat],
                "from": c.carries or c.loaded, "units": units,
                "takes_from": [d["name"] for d in donors],
                "providers": [{"uuid": p.get("uuid"), "name": p.get("name"), "generation": p.get("generation")}
                              for p in c.providers],
                "reason": "%s %s -> %s: %s" % (c.host, c.address, entry["name"], reason)})
    results = []
    for st in states:
        pool = next(p for p in pools if p["name"] == st["name"])
        planned = free[pool["name"]]
        short = max(0, pool["min_free"] - planned)
        r = dict(st, planned_free=planned, gain=gained[pool["name"]], shortfall=short)
        if st["deficit"] == 0:
            r["status"] = "ok"
            r["message"] = "%s: %d free of %s (min %d%s): nothing to do" % (
                pool["name"], st["free"], pool["function"], pool["min_free"], _max_text(pool, st))
        elif short == 0:
            r["status"] = "will-meet"
            r["message"] = "%s: %d free of %s, min %d: %d card(s) to change for +%d unit(s)" % (
                pool["name"], st["free"], pool["function"], pool["min_free"],
                sum(1 for a in actions if a["pool"] == pool["name"]), gained[pool["name"]])
        else:
            why = [x["reason"] for x in considered if x["pool"] == pool["name"]]
            r["status"] = "cannot-meet"
            r["message"] = ("%s: cannot meet the minimum: %d free of %s, min %d, %d after this run: short by %d "
                            "unit(s)%s" % (pool["name"], st["free"], pool["function"], pool["min_free"], planned,
                                           short, ("; passed over: " + "; ".join(why)) if why else
                                           "; no other card on its hosts can carry it"))
        results.append(r)
    carrying = dict((h, dict((c.address, c.carries) for c in cards if c.host == h and c.carries))
                    for h in set(a["host"] for a in actions))
    decls = declarations(actions, carrying, functions)
    fnames = {}
    for e in entries:
        fnames.update(D.entry_function_names(e))
    lines = [r["message"] for r in results] + ["  " + a["reason"] for a in actions] + _profile_lines(
        from_profiles["profiles"])
    summary = "%d pool(s): %d ok, %d to fill, %d cannot be met; %d card(s) on %d host(s) to change" % (
        len(results), sum(1 for r in results if r["status"] == "ok"),
        sum(1 for r in results if r["status"] == "will-meet"), sum(1 for r in results if r["status"] == "cannot-meet"),
        len(actions), len(set(a["host"] for a in actions)))
    unsat = [p for p in from_profiles["profiles"] if p["status"] != "satisfiable"]
    if unsat:
        summary += "; %d unsatisfiable profile(s): %d kept by a pool, %d not servable" % (
            len(unsat), sum(1 for p in unsat if p["status"] == "served"),
            sum(1 for p in unsat if p["status"] == "not-servable"))
    drain = [dict(p, card=_card_key(a["host"], a["address"])) for a in actions for p in a["providers"]]
    return {"pools": results, "actions": actions, "considered": considered, "declarations": decls, "carrying": carrying,
            "drain": drain, "left_drains": left_drains(cards, pools, entries),
            "hosts": sorted(decls), "function_names": fnames, "lines": lines, "summary": summary,
            "profiles": from_profiles["profiles"]}


def _max_text(pool, st):
    if pool["max_free"] is None:
        return ""
    return ", max %d%s" % (pool["max_free"], (": %d above it" % st["surplus"]) if st["surplus"] else "")


def _why_not(c, entry, hosts, raws, not_allowed, allowed_cache):
    """None when the card may be given the pool's function, else why not."""
    if c.busy:
        return "%s %s: in use, never touched: %s" % (c.host, c.address, "; ".join(c.busy))
    if c.drained:
        return "%s %s: drained (%s): left alone" % (c.host, c.address, ", ".join(c.drained))
    if not D._matches(entry["match"], c.record):  # pylint: disable=protected-access
        return "%s %s: does not match %s's match keys" % (c.host, c.address, entry["name"])
    incompatible = D._compatible(entry, c.record)  # pylint: disable=protected-access
    if incompatible:
        return "%s %s: cannot carry %s: %s" % (c.host, c.address, entry["name"], incompatible)
    key = (c.host, entry["name"])
    if key not in allowed_cache:
        allowed_cache[key] = _allowed(not_allowed, hosts.get(c.host), raws[entry["name"].lower()])
    refused = allowed_cache[key]
    if refused:
        return "%s %s: outside the host's allow-list: %s" % (c.host, c.address, refused)
    return None


def _category(c, entry, pool, pools_of, free):
    """(category, donor pools) for a card that may carry the function, or (None, why not)."""
    if c.carries == entry["name"]:
        return PUBLISH, []
    if c.carries is None:
        return (LOAD if not c.loaded else FOREIGN), []
    donors = pools_of.get((c.carries, c.host), [])
    if not donors:
        return FOREIGN, []
    for d in donors:
        if free[d["name"]] - c.counted < d["min_free"] + d["margin"]:
            return None, ("%s %s: carries %s, whose pool %s would have %d free, below its min %d + margin %d"
                          % (c.host, c.address, c.carries, d["name"], free[d["name"]] - c.counted, d["min_free"],
                             d["margin"]))
    return TAKE, donors


def _reason(c, entry, cat, donors, free, same_host):
    if cat == PUBLISH:
        why = "carries %s already; its Placement providers lack %s: a report is enough" % (entry["name"], entry["trait"])
    elif cat == LOAD:
        why = "free, nothing loaded"
    elif cat == FOREIGN:
        why = "free, loaded with %s, which no pool keeps" % (c.carries or c.loaded)
    else:
        why = "free, carries %s; %s keep(s) %s free after it (min + margin: %s)" % (
            c.carries, ", ".join(d["name"] for d in donors), ", ".join(str(free[d["name"]] - c.counted) for d in donors),
            ", ".join("%d" % (d["min_free"] + d["margin"]) for d in donors))
        above = [d["name"] for d in donors if d["max_free"] is not None and free[d["name"]] > d["max_free"]]
        if above:
            why += "; %s above its max" % ", ".join(above)
    if same_host:
        why += "; on a host this run changes already"
    return why


def declarations(actions, carrying, functions):
    """Per host with an action: a declaration naming by address every card that carries a pool function
    (``carrying``: host -> address -> function) or gets one now, so the converge changes the chosen cards and keeps
    the others' function traits. Entries keep every key of the declaration's entry but ``match``."""
    out = {}
    for host in sorted(set(a["host"] for a in actions)):
        assign = dict((carrying or {}).get(host) or {})
        for a in actions:
            if a["host"] == host:
                assign[a["address"]] = a["function"]
        decl = []
        for raw in functions or []:
            addrs = sorted(addr for addr, fn in assign.items() if fn.lower() == str(raw.get("name")).lower())
            if addrs:
                entry = dict(copy.deepcopy(raw))
                entry["match"] = {"address": addrs}
                decl.append(entry)
        out[host] = decl
    return out


def _card_key(host, address):
    return "%s %s" % (host, address)


def after_drain(plan_result, functions, drain):
    """What to converge once the chosen cards' providers were drained (placement_provider_drain's result): the
    actions whose card was drained (or has nothing to drain), their hosts' declarations, and the actions skipped
    because the drain refused a provider of their card (an allocation made since the plan's read, or a drain by
    someone else), each with the drain's reason."""
    _check_plan(plan_result)
    functions = _check_functions(functions)
    refused = {}
    for p in _check_drain(drain):
        if p.get("action") in ("refused", "undone") and p.get("reason"):
            refused.setdefault(p.get("card"), []).append("%s %s" % (p.get("name"), p.get("reason")))
    keep, skipped = [], []
    for a in plan_result["actions"]:
        why = refused.get(_card_key(a["host"], a["address"]))
        if why:
            skipped.append(dict(a, outcome="skipped", why="the drain refused it: %s" % "; ".join(why)))
        else:
            keep.append(a)
    decls = declarations(keep, plan_result.get("carrying"), functions)
    return {"declarations": decls, "hosts": sorted(decls), "actions": keep, "skipped": skipped}


def report(plan_result, providers, hosts, drain, converge, applied=True, fail_on_shortfall=False):
    """Each pool before and after (``providers``: a Placement read after the run, or None), the outcome of each
    planned card (``drain``: placement_provider_drain's result, ``converge``: inventory host -> its
    accelerator_host_report), the drains of this run to release (cards the converge did not take over: its host
    failed before draining, or it was not converged), and the failure when ``fail_on_shortfall`` and a pool stays
    short or an unsatisfiable profile of the plan cannot be served by a pool."""
    _check_plan(plan_result, pools=True)
    converge = _check_converge(converge)
    if providers is not None:
        providers = _check_providers(providers)
    _check_hosts(hosts or {}, discovery=False)
    drained_by_card = {}
    refused = {}
    for p in _check_drain(drain):
        if p.get("action") == "drained":
            drained_by_card.setdefault(p.get("card"), []).append(p)
        elif p.get("action") in ("refused", "undone") and p.get("reason"):
            refused.setdefault(p.get("card"), []).append("%s %s" % (p.get("name"), p.get("reason")))
    outcomes, release, lines = [], [], []
    for a in plan_result["actions"]:
        key = _card_key(a["host"], a["address"])
        rep = converge.get(a["host"])
        if not applied:
            outcome, why = "planned", "dry run"
        elif key in refused:
            outcome, why = "skipped", "the drain refused it: " + "; ".join(refused[key])
        elif not isinstance(rep, dict):
            outcome, why = "not-converged", "its host was not converged"
        elif a["address"] in (rep.get("changed") or []):
            outcome, why = "changed", "reprogrammed and reported"
        elif a["address"] in (rep.get("failed") or []):
            outcome, why = "failed", (rep.get("failure") or "the converge failed")
        elif rep.get("error"):
            outcome, why = "failed", rep["error"]
        else:
            outcome, why = "reported", "carried it already; reported"
        outcomes.append(dict(a, outcome=outcome, why=why))
        if applied and key in drained_by_card:
            pl = (rep or {}).get("placement") or {}
            taken_over = a["address"] in list(pl.get("undrained") or []) + list(pl.get("kept_drained") or [])
            if isinstance(rep, dict) and not taken_over:
                release.extend({"uuid": p["uuid"], "name": p["name"], "card": key} for p in drained_by_card[key])
    pools = []
    after = None
    if providers is not None:
        after = dict((s["name"], s) for s in pool_states(
            [dict(p, hosts=p["hosts"]) for p in plan_result["pools"]], hosts or {}, providers))
    for p in plan_result["pools"]:
        now = after[p["name"]] if after else None
        free_now = now["free"] if now else p["planned_free"]
        short = max(0, p["min_free"] - free_now)
        state = ("met" if short == 0 else "short by %d unit(s)" % short)
        if now is not None:
            lines.append("%s (%s): free %d -> %d, min %d%s: %s" % (
                p["name"], p["function"], p["free"], now["free"], p["min_free"],
                ", max %d" % p["max_free"] if p["max_free"] is not None else "", state))
        else:
            lines.append("%s (%s): free %d, min %d; planned %d: %s" % (
                p["name"], p["function"], p["free"], p["min_free"], p["planned_free"],
                "met" if short == 0 else "cannot meet the minimum, short by %d unit(s)" % short))
        pools.append({"name": p["name"], "function": p["function"], "min_free": p["min_free"],
                      "max_free": p["max_free"], "before": p["free"], "after": now["free"] if now else None,
                      "planned": p["planned_free"], "shortfall": short,
                      "used_after": now["used"] if now else None})
    for o in outcomes:
        lines.append("  %-13s %s %s -> %s: %s" % (o["outcome"], o["host"], o["address"], o["function"], o["why"]))
    for r in release:
        lines.append("  released     %s (drained by this run, not reprogrammed)" % r["name"])
    unservable = [p for p in plan_result.get("profiles") or [] if p["status"] == "not-servable"]
    lines.extend("profile %s: unsatisfiable and not servable by a pool: %s" % (p["name"], p["reason"])
                 for p in unservable)
    short = [p for p in pools if p["shortfall"]]
    failure = None
    if fail_on_shortfall and (short or unservable):
        failure = "function_pools: %s" % "; ".join(
            ["%s short by %d unit(s)" % (p["name"], p["shortfall"]) for p in short]
            + ["profile %s not servable" % p["name"] for p in unservable])
    return {"pools": pools, "actions": outcomes, "release": release, "lines": lines, "failure": failure}
