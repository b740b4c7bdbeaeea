# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading Placement: a host's compute node provider (the root), the providers read once per run with the
generation cache that lets a rerun skip unchanged ones, and the reader behind placement_provider_info."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import tempfile

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import REQUEST_RETRIES, REQUEST_RETRY_DELAY
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.client import Client
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import (
    OWNER_TRAIT, PlacementInputError, hold_consumer, is_drained, owner_of)


# -- the generation cache ----------------------------------------------------------------------------------
class GenerationCache(object):
    """What this controller last read or wrote per provider, valid while the provider's generation (and
    name, parent, root) is unchanged: Placement bumps a provider's generation on every change to its
    inventories, traits, aggregates or allocations, so an unchanged generation proves unchanged content."""

    def __init__(self, path, endpoint):
        self.path = path
        self.key = hashlib.sha256((endpoint or "").encode()).hexdigest()[:16]
        self.entries = {}
        self.dirty = False
        if path:
            try:
                with open(path) as f:
                    data = json.load(f)
                if isinstance(data, dict) and data.get("endpoint_key") == self.key:
                    self.entries = data.get("providers") or {}
            except (OSError, ValueError):
                self.entries = {}

    @staticmethod
    def _ident(p):
        return [p["generation"], p["name"], p.get("parent_provider_uuid"), p.get("root_provider_uuid")]

    def lookup(self, listed):
        e = self.entries.get(listed["uuid"])
        if e and e.get("ident") == self._ident(listed):
            return copy.deepcopy(e["traits"]), copy.deepcopy(e["inventories"])
        return None

    def store(self, listed, generation, traits, inventories):
        p = dict(listed, generation=generation)
        self.entries[listed["uuid"]] = {"ident": self._ident(p), "traits": sorted(traits),
                                        "inventories": inventories}
        self.dirty = True

    def drop(self, uuid):
        if self.entries.pop(uuid, None) is not None:
            self.dirty = True

    def save(self):
        if not self.path or not self.dirty:
            return
        d = os.path.dirname(self.path)
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".gen-")
        with os.fdopen(fd, "w") as f:
            json.dump({"endpoint_key": self.key, "providers": self.entries}, f)
        os.replace(tmp, self.path)


def default_cache_path(endpoint):
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "accelops.lifecycle", "placement-%s.json"
                        % hashlib.sha256((endpoint or "").encode()).hexdigest()[:16])


# -- roots and the tree read once per run ------------------------------------------------------------
def short_name(host):
    return host.split(".", 1)[0] if host and not _looks_like_ip(host) else host


def _looks_like_ip(s):
    return bool(re.match(r"^[0-9.]+$", s or "")) or ":" in (s or "")


def find_root(all_providers, host, explicit=None):
    """The compute node provider of ``host`` among ``all_providers`` (from GET /resource_providers): by
    ``explicit`` (name or uuid) when given, else by the host name, its short name, or a FQDN whose short
    name matches. Returns (provider, None) or (None, message)."""
    roots = [p for p in all_providers if not p.get("parent_provider_uuid")]
    if explicit:
        for p in roots:
            if explicit in (p["name"], p["uuid"]):
                return p, None
        return None, ("root_provider: no root resource provider named (or with uuid) %r; the compute node's "
                      "provider is named after the hypervisor host name (see `openstack resource provider list`)"
                      % explicit)
    tried = [host]
    by_name = dict((p["name"], p) for p in roots)
    if host in by_name:
        return by_name[host], None
    short = short_name(host)
    if short != host:
        tried.append(short)
        if short in by_name:
            return by_name[short], None
    matches = [p for p in roots if short_name(p["name"]) == short and p["name"] not in tried]
    if len(matches) == 1:
        return matches[0], None
    if len(matches) > 1:
        return None, ("host %r: several root providers match its short name (%s); set root_provider to the one "
                      "to use" % (host, ", ".join(sorted(p["name"] for p in matches))))
    return None, ("host %r: no compute node resource provider found (tried %s and any FQDN of %r); is nova-compute "
                  "running there, or is the provider named differently? Set root_provider to its name"
                  % (host, ", ".join(repr(t) for t in tried), short))


class TreeState(object):
    """The providers Placement has, read once per run."""

    def __init__(self, client, cache):
        self.client = client
        self.cache = cache
        self.all = client.get("/resource_providers")["resource_providers"]
        self.by_uuid = dict((p["uuid"], p) for p in self.all)
        self.by_name = dict((p["name"], p) for p in self.all)
        self._details = {}

    def details(self, p):
        """(traits, inventories) of a listed provider: from the cache when its generation proves them
        current, else two GETs."""
        u = p["uuid"]
        if u in self._details:
            return self._details[u]
        hit = self.cache.lookup(p) if self.cache else None
        if hit is None:
            t = self.client.get("/resource_providers/%s/traits" % u)
            i = self.client.get("/resource_providers/%s/inventories" % u)
            traits, invs = sorted(t["traits"]), i["inventories"]
            gen = i["resource_provider_generation"]
            if gen != t["resource_provider_generation"]:  # changed between the two reads: read again later
                p["generation"] = -1
            else:
                p["generation"] = gen
                if self.cache:
                    self.cache.store(p, gen, traits, invs)
            hit = (traits, invs)
        self._details[u] = hit
        return hit

    def children_of(self, root_uuid):
        return [p for p in self.all if p.get("root_provider_uuid") == root_uuid and p["uuid"] != root_uuid]


# -- the info side -----------------------------------------------------------------------------------------
def read_providers(adapter, hosts=None, root_provider=None, owned_only=False, include_allocations=True,
                   retries=REQUEST_RETRIES, retry_delay=REQUEST_RETRY_DELAY):
    """Providers with traits, inventories, usages (and allocations): of the trees of ``hosts`` or
    ``root_provider``, or every provider this collection owns when neither is given."""
    client = Client(adapter, read_only=True, retries=retries, retry_delay=retry_delay)
    if hosts or root_provider:
        listed = client.get("/resource_providers")["resource_providers"]
        chosen = []
        for h in (hosts or [None]):
            root, err = find_root(listed, h, root_provider if h is None else None)
            if root is None:
                raise PlacementInputError(("hosts: " if h is not None else "") + err)
            chosen.extend((h, p) for p in listed if p.get("root_provider_uuid") == root["uuid"])
    else:
        owned_only = True
        listed = client.get("/resource_providers?required=" + OWNER_TRAIT)["resource_providers"]
        chosen = [(None, p) for p in listed]
    out = []
    for host, p in chosen:
        u = p["uuid"]
        traits = sorted(client.get("/resource_providers/%s/traits" % u)["traits"])
        if owned_only and OWNER_TRAIT not in traits:
            continue
        invs = client.get("/resource_providers/%s/inventories" % u)["inventories"]
        usages = client.get("/resource_providers/%s/usages" % u)["usages"]
        allocs = client.get("/resource_providers/%s/allocations" % u)["allocations"] if include_allocations else {}
        # a drain hold (this collection's allocation on a unit Nova or Cyborg reports) is not use
        held = ((allocs.get(hold_consumer(u)) or {}).get("resources") or None) if allocs else None
        out.append({
            "name": p["name"], "uuid": u, "generation": p["generation"],
            "parent_provider_uuid": p.get("parent_provider_uuid"), "root_provider_uuid": p.get("root_provider_uuid"),
            "host": host, "owner": owner_of(traits), "traits": traits, "inventories": invs, "usages": usages,
            "allocations": allocs, "in_use": any(v - (held or {}).get(rc, 0) > 0 for rc, v in usages.items()),
            "drained": is_drained(invs) or bool(held), "held": held,
        })
    return {"providers": out, "requests": client.requests}
