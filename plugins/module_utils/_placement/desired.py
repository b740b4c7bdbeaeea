# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""From one host's discovery records to the providers it should have: names, uuids, inventories with the
caller's overrides and drains, traits. The per-family part is in family_specs.py."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.family_specs import _device_specs
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import (
    PlacementInputError, inventory, provider_name, provider_uuid)


def _records(discovery, option):
    if isinstance(discovery, list):
        return discovery
    if isinstance(discovery, dict):
        recs = discovery.get("accelerators")
        if isinstance(recs, list):
            return recs
    raise PlacementInputError("%s: expected the result of accelerator_info (a dict with an 'accelerators' list) "
                              "or a list of discovery records" % option)


def discovery_hostname(discovery):
    if isinstance(discovery, dict):
        host = discovery.get("host")
        if isinstance(host, dict):
            return host.get("hostname")
    return None


def _listed_in(names, unit_addr, card_addr, provider):
    return unit_addr in names or card_addr in names or provider in names or "all" in names


def desired_providers(host, discovery, option="discovery", prefix=None, function_names=None, overrides=None,
                      drain=None, extra_traits=(), keep_drained=False, undrain=None):
    """The providers one host should have: a list of dicts ``{name, uuid, address, resource_class,
    inventories, traits, note, keep_drained}`` (``inventories`` empty when the unit cannot be scheduled;
    ``keep_drained``: a provider Placement has drained at write time stays drained, see :func:`keep_drain`)."""
    recs = _records(discovery, option)
    prefix = prefix or host
    by_addr = dict((r.get("address"), r) for r in recs if isinstance(r, dict))
    overrides = overrides or {}
    drain = set(drain or ())
    undrain = set(undrain or ())
    out = []
    specs = []
    for i, rec in enumerate(recs):
        if not isinstance(rec, dict) or not rec.get("address"):
            raise PlacementInputError("%s: record %d has no 'address'; expected discovery records as "
                                      "accelerator_info returns them" % (option, i))
        specs.append((rec, _device_specs(rec, by_addr, function_names or {})))
    # a function another record's card names its provider after (an Alveo's management PF, reported with
    # include_all) is part of that card: it gets no provider of its own
    claimed = set(spec[0] for rec, ss in specs for spec in ss if spec[0] != rec["address"])
    for rec, ss in specs:
        if rec["address"] in claimed and all(spec[0] == rec["address"] for spec in ss):
            continue
        for unit_addr, rc, total, traits, note in ss:
            name = provider_name(prefix, unit_addr)
            ov = overrides.get(unit_addr) or overrides.get(rec["address"]) or {}
            if ov.get("resource_class"):
                rc = ov["resource_class"]
            traits = list(traits) + list(extra_traits) + list(ov.get("traits") or [])
            invs = {}
            if rc and total > 0:
                inv = inventory(total, reserved=ov.get("reserved", 0), min_unit=ov.get("min_unit", 1),
                                max_unit=ov.get("max_unit"), step_size=ov.get("step_size", 1),
                                allocation_ratio=ov.get("allocation_ratio", 1.0))
                if inv["reserved"] > inv["total"]:
                    raise PlacementInputError("overrides: reserved (%d) of %s is more than its total (%d)"
                                              % (inv["reserved"], unit_addr, inv["total"]))
                if _listed_in(drain, unit_addr, rec["address"], name):
                    inv["reserved"] = inv["total"]
                invs[rc] = inv
            keep = bool(keep_drained) and not _listed_in(undrain, unit_addr, rec["address"], name)
            out.append({"name": name, "uuid": provider_uuid(name), "address": unit_addr, "resource_class": rc,
                        "inventories": invs, "traits": sorted(set(traits)), "note": note, "host": host,
                        "keep_drained": keep})
    names = [p["name"] for p in out]
    dup = sorted(set(n for n in names if names.count(n) > 1))
    if dup:
        raise PlacementInputError("%s: the same unit is reported twice (%s)" % (option, ", ".join(dup)))
    return out
