# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""From one host's discovery records to the providers it should have: names, uuids, inventories with the
caller's overrides and drains, traits. The per-family part is in family_specs.py."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.family_specs import _device_specs
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import (
    DRAIN_TRAIT, REPORTERS, PlacementInputError, inventory, legacy_provider_name, provider_name, provider_uuid)


def _records(discovery, option):
    recs = _cardstate.records(discovery)
    if recs is not None:
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


def _reporter_of(reporters, default, unit_addr, card_addr):
    rep = reporters.get(unit_addr) or reporters.get(card_addr) or default
    if rep not in REPORTERS:
        raise PlacementInputError("reporters: the reporter of %s must be one of %s, got %r"
                                  % (unit_addr, ", ".join(REPORTERS), rep))
    return rep


def desired_providers(host, discovery, option="discovery", prefix=None, function_names=None, overrides=None,
                      drain=None, extra_traits=(), keep_drained=False, undrain=None, reporter="accelops",
                      reporters=None):
    """The providers one host should have: a list of dicts ``{name, uuid, address, resource_class,
    inventories, traits, note, keep_drained, reporter, mdev, named, hold, release, device, mdev_capable, legacy_name,
    cyborg_name}`` (``inventories`` empty when the unit
    cannot be scheduled; ``keep_drained``: a provider Placement has drained at write time stays drained, see
    :func:`keep_drain`). ``reporter``/``reporters`` (by unit or card address) say who reports each unit: this
    collection (``accelops``: its own providers) or Nova or Cyborg (their providers, named their way: the
    collection only adds the function traits where that reporter keeps them, and reads the rest back)."""
    recs = _records(discovery, option)
    reporters = reporters or {}
    # Cyborg's agent names its providers after socket.gethostname(), which discovery reports, not after the
    # compute node provider Nova named (often the FQDN)
    cyborg_prefix = prefix or discovery_hostname(discovery) or host
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
            rep = _reporter_of(reporters, reporter, unit_addr, rec["address"])
            mdev_capable = bool((rec.get("gpu") or {}).get("mdev_types"))
            mdev = rep == "nova" and rc == "VGPU" and mdev_capable
            # Nova reports a PCI device on the provider of its PF (or of itself when it has none)
            named = unit_addr if rep != "nova" or mdev else (rec.get("physfn") or rec["address"])
            name = provider_name(cyborg_prefix if rep == "cyborg" else prefix, named, rep, mdev=mdev)
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
                    if rep == "accelops":  # the collection's mark (a hold is marked by its consumer)
                        traits.append(DRAIN_TRAIT)
                invs[rc] = inv
            keep = bool(keep_drained) and not _listed_in(undrain, unit_addr, rec["address"], name)
            same = next((p for p in out if p["name"] == name), None) if rep != "accelops" else None
            if same is not None:  # Nova's one provider per PF: the units it pools are one provider
                same["traits"] = sorted(set(same["traits"]) | set(traits))
                continue
            out.append({"name": name, "uuid": provider_uuid(name), "address": unit_addr, "resource_class": rc,
                        "inventories": invs, "traits": sorted(set(traits)), "note": note, "host": host,
                        "keep_drained": keep, "reporter": rep, "mdev": mdev, "named": named,
                        # a unit Nova or Cyborg reports is drained by an allocation that holds its free units
                        # (they rewrite their inventories, reserved included); see model.hold_consumer
                        "hold": rep != "accelops" and _listed_in(drain, unit_addr, rec["address"], name),
                        "release": rep != "accelops" and _listed_in(undrain, unit_addr, rec["address"], name),
                        # the undrain takes the collection's mark away with the drain (drain wins over undrain)
                        "unmark": (rep == "accelops" and _listed_in(undrain, unit_addr, rec["address"], name)
                                   and not _listed_in(drain, unit_addr, rec["address"], name)),
                        "device": rec.get("physfn") or rec["address"],
                        "mdev_capable": mdev_capable,
                        "legacy_name": legacy_provider_name(prefix, unit_addr) if rep == "accelops" else None,
                        "cyborg_name": provider_name(cyborg_prefix, unit_addr, "cyborg")})
    names = [p["name"] for p in out]
    dup = sorted(set(n for n in names if names.count(n) > 1))
    if dup:
        raise PlacementInputError("%s: the same unit is reported twice (%s)" % (option, ", ".join(dup)))
    return out
