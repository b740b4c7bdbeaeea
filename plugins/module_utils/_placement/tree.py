# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The provider tree converger: plan each host's providers against what Placement has (create, update, prune,
leave foreign ones alone), then write only the difference, with ownership, drains kept, and generation
conflicts resolved by re-reading and re-applying only this collection's change. See docs/placement.md."""

from __future__ import annotations

import random
import time

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import REQUEST_RETRIES, REQUEST_RETRY_DELAY
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.client import Client, PlacementHTTPError
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import (
    DRAIN_TRAIT, HOLD_CONSUMER_TYPE, HOLD_PROJECT, PlacementInputError, hold_consumer, is_drained, is_function_trait,
    is_managed_trait, keep_drain, legacy_provider_name, owner_of, provider_name, provider_uuid, same_inventories)
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.read import (
    GenerationCache, TreeState, find_root)

# The pause before the re-read after a generation conflict: random up to CONFLICT_PAUSE, doubling per conflict.
CONFLICT_PAUSE = 0.01
CONFLICT_PAUSE_CAP = 0.2


# -- the plan --------------------------------------------------------------------------------------------------
def merge_traits(current, desired, managed_extra=(), function_only=False):
    """The traits to write: the current ones, less the managed ones not desired, plus the desired ones.
    With ``function_only`` only function traits are added or removed (providers someone else owns)."""
    cur = set(current)
    if function_only:
        keep = set(t for t in cur if not is_function_trait(t))
        want = set(t for t in desired if is_function_trait(t))
    else:
        keep = set(t for t in cur if not is_managed_trait(t, managed_extra))
        want = set(desired)
    return sorted(keep | want)


def named_after_root(host_spec, root):
    """The host's desired providers named after the root provider found (as Nova names the children of a compute
    node) whatever spelling of the host found it: reported once as ``cn1`` and once as ``cn1.example.org``,
    a host keeps the same children, instead of a second set beside (or in place of) the first. An explicit
    ``name_prefix`` is kept."""
    desired = host_spec["providers"]
    if host_spec.get("name_prefix") or root["name"] == host_spec["host"]:
        return desired
    out = []
    for d in desired:
        rep = d.get("reporter", "accelops")
        if rep == "cyborg":  # named after Cyborg's host name, not the root's
            out.append(d)
            continue
        name = provider_name(root["name"], d.get("named", d["address"]), rep, mdev=d.get("mdev", False))
        legacy = legacy_provider_name(root["name"], d["address"]) if d.get("legacy_name") else None
        out.append(dict(d, name=name, uuid=provider_uuid(name), legacy_name=legacy))
    return out


class _Children(object):
    """The root's children by name, case ignored (Placement's name column compares so on MySQL)."""

    def __init__(self, state, root):
        self.state = state
        self.by_lower = {}
        for p in state.children_of(root["uuid"]):
            self.by_lower.setdefault(p["name"].lower(), p)

    def find(self, name):
        return self.by_lower.get(name.lower())

    def owned(self, name, owner):
        p = self.find(name)
        if p is None:
            return None
        traits, _invs = self.state.details(p)
        return p if reported_by(p, traits, owner) else None


def reported_by(provider, traits, reporter):
    """Whether ``reporter`` made ``provider``. Nova marks its providers ``OWNER_NOVA``. Cyborg 17's conductor adds
    only its drivers' traits (no ``OWNER_CYBORG``, measured with its agent): its provider is the one with its name,
    the uuid ``uuid3(NAMESPACE_DNS, name)`` and no owner trait of another."""
    owner = owner_of(traits)
    if owner == reporter:
        return True
    return reporter == "cyborg" and owner is None and provider["uuid"] == provider_uuid(provider["name"])


def other_reporters(children, d, prefix, root_name):
    """The providers Nova or Cyborg already have for the device of the accelops-reported unit ``d``: [(reporter,
    name)]. Two reporters for one device offer it twice; the caller refuses."""
    found = []
    # Cyborg names its provider after its host name (discovery's), or after the compute node where the two agree
    for name in sorted(set(n for n in (d.get("cyborg_name"), provider_name(prefix, d["address"], "cyborg")) if n)):
        cyb = children.owned(name, "cyborg")
        if cyb is not None:
            found.append(("cyborg", cyb["name"]))
    dev = d.get("device") or d["address"]
    for mdev in ((False, True) if d.get("mdev_capable") else (False,)):
        nova = children.owned(provider_name(root_name, dev, "nova", mdev=mdev), "nova")
        if nova is not None:
            found.append(("nova", nova["name"]))
    return found


def _plan_reported(state, children, d, act, warnings):
    """The plan for a unit Nova or Cyborg reports: add the function traits where that reporter keeps them
    (Cyborg's providers, Nova's vGPU providers), read Nova's PCI providers back (their traits come from the
    device_spec ``traits`` tag), or wait for the reporter to make its provider."""
    rep = d["reporter"]
    cur = children.find(d["name"])
    if cur is not None:
        traits, invs = state.details(cur)
        if reported_by(cur, traits, rep):
            act.update(uuid=cur["uuid"], name=cur["name"], listed=cur, owner=rep,
                       before={"traits": traits, "inventories": invs, "generation": cur["generation"]})
            want = [t for t in d["traits"] if is_function_trait(t)]
            if d.get("hold") or d.get("release"):
                act["hold"] = "hold" if d.get("hold") else "release"
            if rep == "cyborg" or d.get("mdev"):
                new_traits = merge_traits(traits, d["traits"], function_only=True)
                changed = new_traits != sorted(traits)
                act.update(kind="update" if changed else "unchanged", traits=new_traits if changed else None,
                           inventories=None, function_only=True)
            else:
                missing = sorted(set(want) - set(traits))
                act.update(kind="foreign", missing_traits=missing)
                if missing:
                    warnings.append("Nova's provider %s lacks %s: Nova writes its traits from the device_spec "
                                    "'traits' tag (nova_compute_config renders it from the same declaration)"
                                    % (cur["name"], ", ".join(missing)))
            return act
    act.update(kind="awaiting", owner=rep, before=None)
    warnings.append("%s has not reported %s yet (expected provider %s): its function traits follow once it does"
                    % (rep.capitalize(), d["address"], d["name"]))
    return act


def plan_host(state, host_spec, options):
    """Compare one host's desired providers with ``state``; returns (actions, warnings, root)."""
    warnings = []
    root, err = find_root(state.all, host_spec["host"], host_spec.get("root_provider"))
    if root is None:
        raise PlacementInputError(err)
    actions = []
    desired = named_after_root(host_spec, root)
    prefix = host_spec.get("name_prefix") or root["name"]
    children = _Children(state, root)
    handled = set()
    clashes = []
    extra = set(options.get("extra_traits") or ())
    for d in desired:
        act = {"name": d["name"], "uuid": d["uuid"], "host": host_spec["host"], "address": d["address"],
               "root_uuid": root["uuid"], "desired": d, "note": d.get("note"), "reporter": d.get("reporter", "accelops")}
        if act["reporter"] != "accelops":
            actions.append(_plan_reported(state, children, d, act, warnings))
            if act.get("listed"):
                handled.add(act["uuid"])
            continue
        for rep, name in other_reporters(children, d, prefix, root["name"]):
            clashes.append("%s is reported by %s as %s, and this collection would report it as %s"
                           % (d["address"], rep, name, d["name"]))
        cur = state.by_name.get(d["name"]) or state.by_uuid.get(d["uuid"])
        legacy = state.by_name.get(d.get("legacy_name") or "") if cur is None else None
        if legacy is not None and legacy.get("parent_provider_uuid") == root["uuid"] and \
                owner_of(state.details(legacy)[0]) == "accelops":
            cur = legacy  # this collection's provider under its old name: renamed in place, allocations kept
            act["rename_from"] = legacy["name"]
        if cur is None:
            act.update(kind="create", before=None, traits=d["traits"], inventories=d["inventories"])
            actions.append(act)
            continue
        handled.add(cur["uuid"])
        act["uuid"] = cur["uuid"]
        traits, invs = state.details(cur)
        act["before"] = {"traits": traits, "inventories": invs, "generation": cur["generation"]}
        if act.get("rename_from"):
            act["before"]["name"] = act["rename_from"]
        act["listed"] = cur
        if cur.get("root_provider_uuid") != root["uuid"]:
            act.update(kind="foreign", owner=owner_of(traits))
            warnings.append("provider %s exists in another tree (root %s): left alone"
                            % (d["name"], cur.get("root_provider_uuid")))
            actions.append(act)
            continue
        owner = owner_of(traits)
        if owner is None and not traits and not invs and cur["uuid"] == d["uuid"] and \
                cur.get("parent_provider_uuid") == root["uuid"]:
            # exactly what a create cut off after its POST leaves: this module's name and uuid, under the
            # root, no trait, no inventory. Finish it.
            act["note"] = ((act.get("note") or "") + " resumed an interrupted create").strip()
            owner = "accelops"
        if owner == "accelops" or (owner is None and options.get("adopt")):
            new_traits = merge_traits(traits, d["traits"], extra)
            if d.get("unmark"):
                new_traits = [t for t in new_traits if t != DRAIN_TRAIT]
            want_invs = keep_drain(invs, d["inventories"]) if d.get("keep_drained") else d["inventories"]
            act.update(kind="update", owner="accelops",
                       traits=new_traits if new_traits != sorted(traits) else None,
                       inventories=None if same_inventories(invs, want_invs) else want_invs)
            if act["traits"] is None and act["inventories"] is None and not act.get("rename_from"):
                act["kind"] = "unchanged"
        elif owner in ("cyborg", "nova") and options.get("foreign_providers") == "function_traits":
            new_traits = merge_traits(traits, d["traits"], function_only=True)
            act.update(kind="update" if new_traits != sorted(traits) else "unchanged", owner=owner,
                       traits=new_traits if new_traits != sorted(traits) else None, inventories=None,
                       function_only=True)
        else:
            act.update(kind="foreign", owner=owner)
            if owner is None:
                warnings.append("provider %s exists without an owner trait: left alone (set adopt=true to manage it)"
                                % d["name"])
        actions.append(act)
    if clashes:
        raise PlacementInputError(
            "reporters: one reporter per device, on host %s: %s. Declare the reporter that already reports the "
            "device (reporter: nova or cyborg), or stop it reporting the device (Nova's [pci] device_spec, "
            "Cyborg's enabled drivers)" % (host_spec["host"], "; ".join(clashes)))
    if options.get("prune", True):
        for p in state.children_of(root["uuid"]):
            if p["uuid"] in handled:
                continue
            traits, invs = state.details(p)
            if owner_of(traits) != "accelops":
                continue
            act = {"kind": "prune", "name": p["name"], "uuid": p["uuid"], "host": host_spec["host"],
                   "address": None, "root_uuid": root["uuid"], "listed": p,
                   "before": {"traits": traits, "inventories": invs, "generation": p["generation"]}}
            allocs = state.client.get("/resource_providers/%s/allocations" % p["uuid"])["allocations"]
            if allocs:
                act["kind"] = "kept"
                warnings.append("provider %s is gone from host %s but still has allocations (consumers %s): kept; "
                                "it is pruned on a later run once they are gone"
                                % (p["name"], host_spec["host"], ", ".join(sorted(allocs))))
            actions.append(act)
    return actions, warnings, root


def required_custom_names(actions):
    traits, rcs = set(), set()
    for a in actions:
        if a["kind"] in ("create", "update"):
            for t in a.get("traits") or []:
                if t.startswith("CUSTOM_"):
                    traits.add(t)
            for rc in a.get("inventories") or {}:
                if rc.startswith("CUSTOM_"):
                    rcs.add(rc)
    return traits, rcs


# -- drain holds (units Nova or Cyborg reports) -------------------------------------------------------------------
def is_reported_elsewhere(client, uuid):
    """Whether Nova or Cyborg reports the provider (it is drained by a hold, not by ``reserved``)."""
    listed = client.get("/resource_providers/" + uuid)
    traits = client.get("/resource_providers/%s/traits" % uuid)["traits"]
    return any(reported_by(listed, traits, rep) for rep in ("nova", "cyborg"))


def read_hold(client, uuid):
    """``{resources, consumer_generation}`` of the provider's hold (empty resources when there is none)."""
    cur = client.get("/allocations/" + hold_consumer(uuid))
    return {"resources": ((cur.get("allocations") or {}).get(uuid) or {}).get("resources") or {},
            "consumer_generation": cur.get("consumer_generation")}


def put_hold(client, uuid, resources, consumer_generation=None):
    """Allocate ``resources`` of the provider to its hold consumer (Placement refuses what does not fit: 409)."""
    body = {"allocations": {uuid: {"resources": resources}}, "project_id": HOLD_PROJECT, "user_id": HOLD_PROJECT,
            "consumer_generation": consumer_generation, "consumer_type": HOLD_CONSUMER_TYPE}
    client.call("PUT", "/allocations/" + hold_consumer(uuid), body, ok=(204,))


def release_hold(client, uuid):
    client.call("DELETE", "/allocations/" + hold_consumer(uuid), ok=(204, 404))


# -- applying ----------------------------------------------------------------------------------------------
class Converger(object):
    """Applies a plan. ``before_write`` (tests) is called with (action, what) right before each provider
    write, so a test can play a concurrent writer between this module's read and its write."""

    def __init__(self, client, state, cache=None, retries=5, before_write=None, sleep=time.sleep):
        self.client = client
        self.state = state
        self.cache = cache
        self.retries = retries
        self.before_write = before_write
        self.sleep = sleep
        self.warnings = []
        self.conflicts = 0

    def _after_conflict(self, attempt):
        """A random pause (at most 10 ms, doubling per conflict, at most 0.2 s) before the re-read: a writer that
        lost a generation race and retried at once would meet the same busy writer in step again and again."""
        self.conflicts += 1
        self.sleep(random.uniform(0, min(CONFLICT_PAUSE_CAP, CONFLICT_PAUSE * 2 ** attempt)))

    def ensure_names(self, traits, rcs):
        if traits:
            names = sorted(traits)
            existing = set()
            for i in range(0, len(names), 100):
                chunk = names[i:i + 100]
                existing.update(self.client.get("/traits?name=in:" + ",".join(chunk))["traits"])
            for t in names:
                if t not in existing:
                    self.client.call("PUT", "/traits/" + t, ok=(201, 204))
        if rcs:
            existing = set(r["name"] for r in self.client.get("/resource_classes")["resource_classes"])
            for rc in sorted(rcs):
                if rc not in existing:
                    self.client.call("PUT", "/resource_classes/" + rc, ok=(201, 204))

    def _hook(self, action, what):
        if self.before_write:
            self.before_write(action, what)

    def _put_inventories(self, action, gen, invs, reread=False):
        """PUT the inventories with ``gen``; on a generation conflict read them again and retry. With
        ``keep_drained`` the inventories to write are worked out again from each read (a drain made by
        someone else since this run's read stays: read-modify-write under the provider generation), and
        ``reread`` reads them first (what was read before is stale). Returns (generation, inventories,
        whether a conflict was met)."""
        u = action["uuid"]
        keep = (action.get("desired") or {}).get("keep_drained")
        base = (action.get("desired") or {}).get("inventories", invs) if keep else invs
        conflicted = False
        cur = None
        if reread:
            cur = self.client.get("/resource_providers/%s/inventories" % u)
        for attempt in range(self.retries + 1):
            if cur is not None:
                gen = cur["resource_provider_generation"]
                if keep:
                    invs = keep_drain(cur["inventories"], base)
                if same_inventories(cur["inventories"], invs):
                    return gen, cur["inventories"], conflicted
            self._hook(action, "inventories")
            try:
                r = self.client.call("PUT", "/resource_providers/%s/inventories" % u,
                                     {"inventories": invs, "resource_provider_generation": gen})
                return r["resource_provider_generation"], r["inventories"], conflicted
            except PlacementHTTPError as e:
                if e.status != 409 or e.code != "placement.concurrent_update" or attempt == self.retries:
                    raise
                self._after_conflict(attempt)
                conflicted = True
                cur = self.client.get("/resource_providers/%s/inventories" % u)
        raise AssertionError("unreachable")

    def _put_traits(self, action, gen, traits, desired, function_only=False, extra=()):
        """PUT the traits with ``gen``; on a generation conflict read them again and redo only this module's
        change on top of what is there now. Returns (generation, traits, whether a conflict was met)."""
        u = action["uuid"]
        conflicted = False
        for attempt in range(self.retries + 1):
            self._hook(action, "traits")
            try:
                r = self.client.call("PUT", "/resource_providers/%s/traits" % u,
                                     {"traits": traits, "resource_provider_generation": gen})
                return r["resource_provider_generation"], sorted(r["traits"]), conflicted
            except PlacementHTTPError as e:
                if e.status != 409 or e.code != "placement.concurrent_update" or attempt == self.retries:
                    raise
                # someone else wrote in between: re-read, re-apply only this module's change on top of theirs
                self._after_conflict(attempt)
                conflicted = True
                cur = self.client.get("/resource_providers/%s/traits" % u)
                gen = cur["resource_provider_generation"]
                traits = merge_traits(cur["traits"], desired, extra, function_only=function_only)
                if traits == sorted(cur["traits"]):
                    return gen, traits, conflicted
        raise AssertionError("unreachable")

    def _remember(self, listed, gen, traits, invs, conflicted):
        """Cache what was written; after a conflict one of the two may be older than ``gen``: forget the
        provider instead, so the next run reads it."""
        if not self.cache:
            return
        if conflicted:
            self.cache.drop(listed["uuid"])
        else:
            self.cache.store(listed, gen, traits, invs)

    def _ours(self, action):
        """The provider with the planned uuid when it is the one this run means to create (same name and
        parent), else None."""
        found = self.client.call("GET", "/resource_providers/" + action["uuid"], ok=(200, 404))
        if isinstance(found, dict) and found.get("name") == action["name"] and \
                found.get("parent_provider_uuid") == action["root_uuid"]:
            return found
        return None

    def create(self, action):
        """POST the provider. POST is the one request that is not idempotent, so after no answer or a 5xx
        the provider is looked up by its (deterministic) uuid before the POST is repeated: a create whose
        answer was lost is found and used, never duplicated. Once the retries are spent the run fails like
        any other request (ServiceUnavailable)."""
        c = self.client
        path = "/resource_providers"
        body = {"name": action["name"], "uuid": action["uuid"], "parent_provider_uuid": action["root_uuid"]}
        c.check_write("POST", path)
        waited = 0.0
        for attempt in range(len(c.pauses) + 1):
            status, resp = c.send_once("POST", path, body)
            if status is not None and not c.is_transient(status, resp):
                if attempt > 0 and status == 409:  # an earlier attempt created it after all
                    found = self._ours(action)
                    if found is not None:
                        return found
                return c.result("POST", path, status, resp)
            if attempt == len(c.pauses):
                raise c.unavailable("create provider %s" % action["name"], "POST", path, status, resp, attempt + 1,
                                    waited)
            c.retried += 1
            c.sleep(c.pauses[attempt])
            waited += c.pauses[attempt]
            found = self._ours(action)
            if found is not None:
                return found
        raise AssertionError("unreachable")

    def hold(self, action, check_mode=False):
        """Drain (``action["hold"] == "hold"``) a provider Nova or Cyborg reports by allocating its free units to
        its hold consumer, or release that allocation. Returns the units held after the run, by resource class
        (empty when none), and sets ``hold_changed``."""
        u = action["uuid"]
        cur = read_hold(self.client, u)
        mine = cur["resources"]
        if action["hold"] == "release":
            action["hold_changed"] = bool(mine)
            if mine and not check_mode:
                release_hold(self.client, u)
            return {}
        invs = self.client.get("/resource_providers/%s/inventories" % u)["inventories"]
        used = self.client.get("/resource_providers/%s/usages" % u)["usages"]
        want = {}
        for rc, inv in invs.items():
            others = int(used.get(rc, 0)) - int(mine.get(rc, 0))
            free = int((inv["total"] - inv.get("reserved", 0)) * inv.get("allocation_ratio", 1.0)) - others
            if free > 0:
                want[rc] = free
        action["hold_changed"] = want != mine
        if not action["hold_changed"] or check_mode:
            return want
        if not want:
            release_hold(self.client, u)
            return {}
        put_hold(self.client, u, want, cur["consumer_generation"])
        return want

    def apply(self, action, extra_traits=()):
        kind = action["kind"]
        if kind == "create":
            self._hook(action, "create")
            p = self.create(action)
            gen = p["generation"]
            invs = {}
            # traits first: the owner trait marks the provider as this module's at once, so a run cut off
            # before the inventory still leaves a provider the next run recognises and completes
            gen, traits, c1 = self._put_traits(action, gen, action["traits"], action["desired"]["traits"],
                                               extra=extra_traits)
            c2 = False
            if action["inventories"]:
                gen, invs, c2 = self._put_inventories(action, gen, action["inventories"])
            self._remember(p, gen, traits, invs, c1 or c2)
            action["after"] = {"traits": traits, "inventories": invs}
        elif kind == "update":
            listed = action["listed"]
            gen = listed["generation"]
            if action.get("rename_from"):
                self._hook(action, "rename")
                gen = self.client.call("PUT", "/resource_providers/" + action["uuid"],
                                       {"name": action["name"], "parent_provider_uuid": action["root_uuid"]})["generation"]
                listed = dict(listed, name=action["name"], generation=gen)
            traits, invs = action["before"]["traits"], action["before"]["inventories"]
            function_only = action.get("function_only", False)
            desired = action["desired"]["traits"]
            # what was read is only good at the generation it was read at: after a conflict (or when the
            # provider changed between the two reads) the traits are read again before this module's change
            # is applied on top of them, or another writer's trait change would be overwritten
            stale = gen < 0
            keep = action["desired"].get("keep_drained")
            if stale and not (keep and action.get("inventories") is not None):
                gen = self.client.get("/resource_providers/%s" % action["uuid"])["generation"]
            if action.get("inventories") is not None:
                # with keep_drained and a stale read, the inventories are read again (with the generation)
                gen, invs, c = self._put_inventories(action, gen, action["inventories"], reread=stale and keep)
                stale = stale or c
            want = action.get("traits")
            if stale:
                cur = self.client.get("/resource_providers/%s/traits" % action["uuid"])
                gen, traits = cur["resource_provider_generation"], sorted(cur["traits"])
                want = merge_traits(traits, desired, extra_traits, function_only=function_only)
                if want == traits:
                    want = None
            if want is not None:
                gen, traits, c = self._put_traits(action, gen, want, desired, function_only=function_only,
                                                  extra=extra_traits)
                stale = stale or c
            self._remember(listed, gen, traits, invs, stale)
            action["after"] = {"traits": traits, "inventories": invs}
        elif kind == "prune":
            try:
                self.client.call("DELETE", "/resource_providers/" + action["uuid"], ok=(204, 404))
            except PlacementHTTPError as e:
                if e.status != 409:
                    raise
                action["kind"] = "kept"
                action["after"] = action["before"]
                self.warnings.append("provider %s could not be deleted (%s): kept" % (action["name"], e))
                return
            if self.cache:
                self.cache.drop(action["uuid"])
            action["after"] = None


# -- one run -------------------------------------------------------------------------------------------------
_PAST = {"create": "created", "update": "updated", "unchanged": "unchanged", "prune": "pruned", "kept": "kept",
         "foreign": "foreign", "awaiting": "awaiting"}


def converge(adapter, hosts, options, check_mode=False, cache_path=None, endpoint=None, before_write=None):
    """Converge Placement to the providers of ``hosts`` (``[{host, root_provider, providers}]``, the
    providers from :func:`desired_providers`). Returns a result dict (see the module's RETURN)."""
    client = Client(adapter, read_only=check_mode, retries=options.get("request_retries", REQUEST_RETRIES),
                    retry_delay=options.get("request_retry_delay", REQUEST_RETRY_DELAY))
    cache = GenerationCache(cache_path, endpoint) if cache_path else None
    state = TreeState(client, cache)
    actions, warnings = [], []
    seen_roots = {}
    for h in hosts:
        acts, warns, root = plan_host(state, h, options)
        if root["uuid"] in seen_roots:
            raise PlacementInputError("hosts: %r and %r resolve to the same compute node provider %s; list each host "
                                      "once" % (seen_roots[root["uuid"]], h["host"], root["name"]))
        seen_roots[root["uuid"]] = h["host"]
        actions.extend(acts)
        warnings.extend(warns)
    extra = tuple(options.get("extra_traits") or ())
    conv = Converger(client, state, cache, retries=options.get("conflict_retries", 5), before_write=before_write)
    writes = [a for a in actions if a["kind"] in ("create", "update", "prune")]
    holds = [a for a in actions if a.get("hold")]
    if not check_mode and writes:
        traits, rcs = required_custom_names(writes)
        conv.ensure_names(traits, rcs)
        for a in writes:
            conv.apply(a, extra)
    else:
        for a in writes:  # what the real run would write
            if a["kind"] == "prune":
                a["after"] = None
            else:
                b = a.get("before") or {"traits": [], "inventories": {}}
                a["after"] = {"traits": a["traits"] if a.get("traits") is not None else b["traits"],
                              "inventories": a["inventories"] if a.get("inventories") is not None
                              else b["inventories"]}
    for a in holds:
        a["held"] = conv.hold(a, check_mode)
    warnings.extend(conv.warnings)
    if cache is not None and not check_mode:
        try:
            cache.save()
        except OSError as e:
            warnings.append("generation_cache: could not write %s: %s" % (cache_path, e))
    providers, before, after = [], {}, {}
    for a in actions:
        kind = a["kind"]
        b = a.get("before")
        aft = a.get("after", b)
        d = a.get("desired") or {}
        shown = aft if aft is not None else b
        providers.append({
            "name": a["name"], "uuid": a["uuid"], "host": a["host"], "address": a.get("address"),
            "root_provider_uuid": a["root_uuid"], "action": _PAST[kind], "owner": a.get("owner", "accelops"),
            "reporter": a.get("reporter", "accelops"), "resource_class": d.get("resource_class"),
            "renamed_from": a.get("rename_from"),
            "traits": (shown or {}).get("traits", []), "inventories": (shown or {}).get("inventories", {}),
            "drained": is_drained((shown or {}).get("inventories", {})) or bool(a.get("held")),
            "held": a.get("held"), "missing_traits": a.get("missing_traits") or [], "note": a.get("note"),
        })
        if kind in ("create", "update", "prune"):
            before[a["name"]] = None if b is None else {"traits": b["traits"], "inventories": b["inventories"]}
            after[a["name"]] = aft
    changed = any(a["kind"] in ("create", "prune") or (a["kind"] == "update") or a.get("hold_changed")
                  for a in actions)
    return {
        "changed": changed,
        "providers": providers,
        "warnings": warnings,
        "diff": {"before": before, "after": after},
        "requests": {"total": client.requests, "writes": client.writes, "conflicts_resolved": conv.conflicts,
                     "retried": client.retried},
        "summary": _counts(providers),
        "by_host": by_host(providers),
    }


ACTIONS = ("created", "updated", "unchanged", "pruned", "kept", "foreign", "awaiting")


def _counts(providers):
    return dict((k, sum(1 for p in providers if p["action"] == k)) for k in ACTIONS)


def by_host(providers):
    """Per host: its providers' action counts and its drained providers (name, address). A caller that reports
    many hosts in one run (the converge role's batch report) reads one host's share without the whole list."""
    grouped = {}
    for p in providers:
        grouped.setdefault(p["host"], []).append(p)
    return dict((host, {"summary": _counts(provs),
                        "drained": [{"name": p["name"], "address": p["address"]} for p in provs if p["drained"]]})
                for host, provs in grouped.items())
