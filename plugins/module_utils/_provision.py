# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The choice behind the "spot instance" workflow (playbooks/provision_profiles.yml): for device profiles that
no provider can satisfy, which card on which host to converge to the function they ask for, and why.

Pure data in, data out (discovery results, Placement's view, the profiles, how each function is loaded), so
the same choice can be shown in a dry run and carried out. Order, as Placement's "preferred traits" would
choose: a card that already carries the function (only its traits are missing: no reprogramming), then a free
card with nothing loaded, then a free card loaded with something else on the host with the fewest changes.
A card is free when the one decision (:func:`_cardstate.card_state`) finds no unit of it or of its VFs in use on the
host, no use the family keeps in its own section (a MIG instance), and no allocation or drain on its providers.
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate, _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import kind as kind_named, kinds

PUBLISH, LOAD, RELOAD = 0, 1, 2
_WHY = {
    PUBLISH: "already carries %(fn)s: no reprogramming, only its Placement traits are missing",
    LOAD: "free, with nothing loaded: %(fn)s is loaded into an empty card",
    RELOAD: "free, but loaded with %(other)s: reprogrammed to %(fn)s",
}


class ProvisionInputError(ValueError):
    pass


def _norm_id(value):
    return ("%s" % (value,)).replace("-", "").lower() if value is not None else None


def function_kinds(functions):
    """``{name: {"kind": "fpga"|"vgpu", "id": function id or vGPU type, "trait": CUSTOM_FUNCTION_<NAME>, ...}}``
    from the playbook's input: each name maps to how a kind that can be provisioned loads it (the kind's
    ``provision_keys``: ``{bitstream, sha256, function_id}`` or ``{vgpu_type}``)."""
    provisioned = [k for k in kinds() if k.provision_keys]
    if not isinstance(functions, dict) or not functions:
        raise ProvisionInputError("functions: expected a mapping of function name to how to load it (%s)"
                                  % " or ".join("{%s}" % ", ".join(k.provision_keys) for k in provisioned))
    out = {}
    for name, how in functions.items():
        if not isinstance(how, dict):
            raise ProvisionInputError("functions.%s: expected a mapping, got %s" % (name, type(how).__name__))
        kind = next((k for k in provisioned if how.get(k.provision_keys[0])), None)
        if kind is None:
            raise ProvisionInputError("functions.%s: give %s" % (name, " or ".join(
                "%s (%s)" % (" + ".join(k.provision_keys), k.provision_label) for k in provisioned)))
        missing = [k for k in kind.provision_keys[1:] if not how.get(k)]
        if missing:
            raise ProvisionInputError("functions.%s: a %s needs %s too" % (name, kind.provision_keys[0], " and ".join(missing)))
        try:
            trait = _naming.function_trait(str(name))
        except ValueError:
            raise ProvisionInputError("functions.%s: the name gives no trait name (need an ASCII letter or digit)"
                                      % name)
        out[str(name)] = dict(how, kind=kind.name, id=str(how[kind.provision_id_key]), trait=trait)
    return out


# -- the input's shape, checked once before the choice (a wrong shape is a ProvisionInputError naming the path) --
PROFILE_FORM = "a device profile (a mapping with name and groups, as device_profile_info returns it)"
RECORD_FORM = "an accelerator_info record (a mapping with address, family, function, units)"


def _type(value):
    return type(value).__name__


def _expect(ok, where, form, value):
    if not ok:
        raise ProvisionInputError("%s: expected %s, got %s" % (where, form, _type(value)))


def _mapping(value, where, form, optional=True):
    _expect(isinstance(value, dict) or (optional and value is None), where, form + (" or null" if optional else ""),
            value)
    return value or {}


def _list(value, where, form):
    _expect(isinstance(value, (list, tuple)) or value is None, where, "a list of %s (or null)" % form, value)
    return value or []


def _check_units(units, where):
    for i, u in enumerate(_list(units, where, "units (mappings with kind, id, in_use, in_use_by)")):
        at = "%s[%d]" % (where, i)
        _mapping(u, at, "a unit (a mapping with kind, id, in_use, in_use_by)", optional=False)
        for j, b in enumerate(_list(u.get("in_use_by"), at + ".in_use_by", "mappings with kind and name")):
            _mapping(b, "%s.in_use_by[%d]" % (at, j), "a mapping with kind and name", optional=False)


def _check_record(rec, where):
    _mapping(rec, where, RECORD_FORM, optional=False)
    _expect(isinstance(rec.get("address"), str), where + ".address", "a PCI address string", rec.get("address"))
    _mapping(rec.get("function"), where + ".function", "a mapping with id and name")
    _check_units(rec.get("units"), where + ".units")
    sriov = _mapping(rec.get("sriov"), where + ".sriov", "a mapping with vf_units")
    _check_units(sriov.get("vf_units"), where + ".sriov.vf_units")
    gpu = _mapping(rec.get("gpu"), where + ".gpu", "a mapping with mdev_types and vgpu_vfs")
    for i, t in enumerate(_list(gpu.get("mdev_types"), where + ".gpu.mdev_types", "mappings with id")):
        _mapping(t, "%s.gpu.mdev_types[%d]" % (where, i), "a mapping with id", optional=False)
    for i, vf in enumerate(_list(gpu.get("vgpu_vfs"), where + ".gpu.vgpu_vfs", "mappings with creatable_types")):
        at = "%s.gpu.vgpu_vfs[%d]" % (where, i)
        _mapping(vf, at, "a mapping with creatable_types and current_type", optional=False)
        for j, t in enumerate(_list(vf.get("creatable_types"), at + ".creatable_types", "mappings with id")):
            _mapping(t, "%s.creatable_types[%d]" % (at, j), "a mapping with id", optional=False)
        _mapping(vf.get("current_type"), at + ".current_type", "a mapping with id")


def check_input(profiles, hosts, providers):
    """Raise ProvisionInputError, naming the path and the accepted form, on input whose shape the choice cannot
    read: profiles (device_profile_info's entries), hosts (name -> accelerator_info result or its records) and
    providers (placement_provider_info's). Only the keys the choice reads are checked."""
    for i, prof in enumerate(_list(profiles, "profiles", "device profiles")):
        where = "profiles[%d]" % i
        _mapping(prof, where, PROFILE_FORM, optional=False)
        _expect(prof.get("name") is None or isinstance(prof.get("name"), str), where + ".name", "a string",
                prof.get("name"))
        for j, g in enumerate(_list(prof.get("groups"), where + ".groups", "request groups")):
            at = "%s.groups[%d]" % (where, j)
            _mapping(g, at, "a request group (a mapping of resources:<CLASS> and trait:<TRAIT> to strings)",
                     optional=False)
            for k, v in g.items():
                _expect(isinstance(k, str), "%s key %r" % (at, k), "a string (resources:<CLASS> or trait:<TRAIT>)",
                        k)
                if k.startswith("resources:"):
                    _expect(isinstance(v, (str, int)) and not isinstance(v, bool), "%s.%s" % (at, k),
                            "a count (a string or a whole number)", v)
    _expect(isinstance(hosts, dict), "hosts", "a mapping of host name to its accelerator_info result", hosts)
    for host, discovery in hosts.items():
        _expect(isinstance(host, str), "hosts key %r" % (host,), "a host name (a string)", host)
        where = "hosts.%s" % host
        if isinstance(discovery, dict):
            where += ".accelerators"
            discovery = discovery.get("accelerators")
        for i, rec in enumerate(_list(discovery, where, "accelerator_info records")):
            _check_record(rec, "%s[%d]" % (where, i))
    for i, p in enumerate(_list(providers, "providers", "Placement providers")):
        where = "providers[%d]" % i
        _mapping(p, where, "a provider (a mapping with name, in_use, allocations), as placement_provider_info "
                           "returns it", optional=False)
        _expect(not p.get("name") or isinstance(p.get("name"), str), where + ".name", "a string", p.get("name"))
        # what the one reading of a provider (_vocab.provider_use) takes: consumers by uuid, counts by class
        allocations = _mapping(p.get("allocations"), where + ".allocations", "a mapping of consumer uuid to its allocation")
        for consumer in allocations:
            _expect(isinstance(consumer, str), "%s.allocations key %r" % (where, consumer), "a consumer uuid (a string)",
                    consumer)
        _mapping(p.get("usages"), where + ".usages", "a mapping of resource class to a count")
        _mapping(p.get("inventories"), where + ".inventories", "a mapping of resource class to its inventory")


def _refusal(host, rec, by_addr, providers):
    """Why a card is not free to provision (:func:`_cardstate.card_state`), or None: a unit of it or of its VFs in
    use on the host, the family's own evidence (a MIG instance), allocations in Placement (a hold included) or a
    drain (an operator's: the pool keeper leaves such a card alone too)."""
    st = _cardstate.card_state(rec, by_addr, providers, host)
    for kind, uid, holders in st["units"]:
        by = ", ".join("%s %s" % (b.get("kind"), b.get("name")) for b in holders if b) or "in use"
        return "%s %s is in use (%s)" % (kind, uid, by)
    for line in st["family"]:
        return "in use: %s" % line
    for name in [u[0] for u in st["used"]] + st["held"]:
        return "Placement has allocations on %s" % name
    for name in st["drained"]:
        return "drained in Placement (%s): left alone" % name
    return None


def _fits(rec, fn):
    """Can this card carry the function at all?"""
    if rec.get("physfn"):
        return False
    kind = kind_named(fn["kind"])
    if kind.families and rec.get("family") not in kind.families:
        return False
    return kind.provision_fits(rec, fn["id"])


def _loaded(rec):
    f = rec.get("function") or {}
    return f.get("id"), (f.get("name") or f.get("id"))


def cards(hosts, fn, providers):
    """Every card of every host that could carry ``fn``: (category, host, record, other, refusal)."""
    out = []
    for host in sorted(hosts):
        recs, by_addr = _cardstate.cards(_cardstate.records(hosts[host]) or [])
        for rec in recs:
            if not _fits(rec, fn):
                continue
            loaded_id, loaded_name = _loaded(rec)
            refusal = _refusal(host, rec, by_addr, providers)
            if loaded_id is not None and _norm_id(loaded_id) == _norm_id(fn["id"]):
                cat = PUBLISH
            elif loaded_id is None:
                cat = LOAD
            else:
                cat = RELOAD
            out.append((cat, host, rec, loaded_name, refusal))
    return out


def needed_functions(profile, functions):
    """The functions a profile asks for: [(group index, function name, count)], and reasons for groups that ask
    for none this playbook knows how to load."""
    by_trait = dict((f["trait"], name) for name, f in functions.items())
    wanted, problems = [], []
    for i, g in enumerate(profile.get("groups") or []):
        traits = [k[len("trait:"):] for k, v in g.items() if k.startswith("trait:") and v == "required"]
        names = [by_trait[t] for t in traits if t in by_trait]
        count = 1
        for k, v in g.items():
            if k.startswith("resources:"):
                try:
                    count = max(count, int(v))
                except ValueError:
                    pass
        if not names:
            asked = [t for t in traits if t.startswith("CUSTOM_FUNCTION_")]
            problems.append("group %d asks for %s, which the functions mapping does not say how to load"
                            % (i, ", ".join(asked)) if asked else
                            "group %d asks for no function (no CUSTOM_FUNCTION_* trait): nothing to program" % i)
            continue
        wanted.append((i, names[0], count))
    return wanted, problems


def plan(profiles, functions, hosts, providers=None):
    """The choices for the unsatisfiable ``profiles`` (device_profile_info's entries).

    Returns ``{"actions", "unplaceable", "considered", "function_names", "hosts"}``: each action names the profile,
    function, host, card address, ``change`` (publish, load, reload), how to load it and why it was chosen;
    ``unplaceable`` says why a profile gets nothing; ``considered`` lists the cards looked at and why those not
    chosen were not."""
    fns = function_kinds(functions)
    check_input(profiles, hosts, providers)
    providers = providers or []
    taken = set()
    changes = dict((h, 0) for h in hosts)
    actions, unplaceable, considered = [], [], []
    for prof in sorted(profiles or [], key=lambda p: p.get("name") or ""):
        wanted, problems = needed_functions(prof, fns)
        for problem in problems:
            unplaceable.append({"profile": prof.get("name"), "reason": problem})
        for gi, name, count in wanted:
            fn = fns[name]
            kind = kind_named(fn["kind"])
            n = kind.provision_cards(count)
            pool = []
            for cat, host, rec, other, refusal in cards(hosts, fn, providers):
                key = (host, rec.get("address"))
                seen = {"profile": prof.get("name"), "function": name, "host": host, "address": rec.get("address")}
                if refusal:
                    considered.append(dict(seen, chosen=False, reason="not free: %s" % refusal))
                elif key in taken:
                    considered.append(dict(seen, chosen=False, reason="already chosen for another profile"))
                else:
                    pool.append((cat, host, rec, other))
            chosen = []
            while pool and len(chosen) < n:
                pool.sort(key=lambda c: (c[0], changes[c[1]] + (0 if c[0] == PUBLISH else 1), c[1], c[2].get("address")))
                cat, host, rec, other = pool.pop(0)
                why = _WHY[cat] % {"fn": name, "other": other}
                if cat == RELOAD:
                    why += "; no card carries %s or is empty, and %s has the fewest changes planned (%d)" % (
                        name, host, changes[host])
                elif cat == LOAD:
                    why += "; no free card carries %s already" % name
                changes[host] += 0 if cat == PUBLISH else 1
                taken.add((host, rec.get("address")))
                act = {"profile": prof.get("name"), "group": gi, "function": name, "kind": fn["kind"], "host": host,
                       "address": rec.get("address"), "change": ("publish", "load", "reload")[cat],
                       "function_id": fn["id"], "reason": "%s %s: %s" % (host, rec.get("address"), why)}
                act.update(kind.provision_action(fn, count))
                actions.append(act)
                chosen.append(act)
                considered.append({"profile": prof.get("name"), "function": name, "host": host,
                                   "address": rec.get("address"), "chosen": True, "reason": why})
            for cat, host, rec, other in pool:
                considered.append({"profile": prof.get("name"), "function": name, "host": host,
                                   "address": rec.get("address"), "chosen": False,
                                   "reason": "a better card was chosen (%s)" % ("carries %s already" % name
                                                                                if cat == PUBLISH else
                                                                                "empty" if cat == LOAD else
                                                                                "loaded with %s" % other)})
            if len(chosen) < n:
                unplaceable.append({"profile": prof.get("name"),
                                    "reason": "group %d needs %d card(s) for %s; %d free card(s) can carry it"
                                              % (gi, n, name, len(chosen))})
    return {"actions": actions, "unplaceable": unplaceable, "considered": considered,
            "function_names": function_names(actions),
            "hosts": sorted(set(a["host"] for a in actions))}


def _spellings(fid):
    """A function id as discovery may spell it: as given, without dashes, and as a dashed UUID."""
    fid = str(fid)
    bare = fid.replace("-", "").lower()
    out = [fid, bare]
    if len(bare) == 32 and all(c in "0123456789abcdef" for c in bare):
        out.append("%s-%s-%s-%s-%s" % (bare[:8], bare[8:12], bare[12:16], bare[16:20], bare[20:]))
    return out


def function_names(actions):
    """placement_provider_tree's ``function_names`` for the chosen functions: {function id: name}, with the id in
    every spelling discovery may report (it is matched as a string)."""
    out = {}
    for a in actions:
        for fid in _spellings(a["function_id"]):
            out[fid] = a["function"]
    return out
