# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A card's state, decided once.

Every reader asks :func:`card_state` what a card is: the converge (through the declaration's resolution and
:func:`converge_status`), the pool keeper, the provisioner and the fleet report. The host's evidence is the units of
the card's record and of its VFs' records (folded VFs included) and what the card's family keeps in its own section
(an NVIDIA GPU's MIG instances, :func:`card_in_use`); Placement's is :func:`_vocab.provider_use` of the card's
providers (:func:`_vocab.card_providers`); the declaration's is what the card carries and what it is declared for.
Each reader words its refusal its own way from the same facts.

The discovery records are walked by :func:`records` and :func:`cards` (a card: a PF or a whole device; a VF belongs to
its PF).

Standard library only, Python 3.9+ (the converge runs it on managed hosts).
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import (
    card_addresses,
    card_providers,
    provider_use,
    record_units,
)

# A card's state, one word: the first that holds, in this order.
STATES = ("blocked", "to change", "in use", "allocated", "held", "drained", "reserved", "as declared", "free")


def records(discovery):
    """The records of a discovery result (accelerator_info's result, or its ``accelerators`` list), or None when it is
    neither (each reader refuses that in its own words). Items that are not mappings are left in: a reader that
    checks shapes says what is wrong with them."""
    recs = discovery.get("accelerators") if isinstance(discovery, Mapping) else discovery
    return recs if isinstance(recs, list) else None


def cards(recs):
    """``(cards, by_address)``: the records a function is declared on (PFs and whole devices, not VFs) and every
    mapping record by its address."""
    by_addr = dict((r.get("address"), r) for r in recs or [] if isinstance(r, Mapping))
    return [r for r in recs or [] if isinstance(r, Mapping) and not r.get("physfn")], by_addr


def _family_evidence(card):
    # the registry is imported on first use: the filters import this file in every Ansible worker, and the
    # registry imports the vocabulary this file builds on
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record  # pylint: disable=import-outside-toplevel
    return for_record(card).in_use_evidence(card)


def host_use(card, by_address):
    """The host's evidence that a card is in use: ``(units, family)``. ``units``: ``(unit kind, unit id, holders)``
    of each unit in use of the card's record and of its VFs' records (``by_address``: the discovery's records by
    address), folded VFs included; ``family``: the lines the card's family driver finds in its own section
    (``in_use_evidence``)."""
    sriov = card.get("sriov") or {}
    vfs = sriov.get("vfs") if isinstance(sriov, dict) else None
    recs = [card] + [by_address[a] for a in vfs or [] if isinstance(a, str) and a in by_address]
    # a VF record that names the card as its PF, when the card's own VF list is left out (vf_detail)
    listed = set(a for a in vfs or [] if isinstance(a, str))
    recs += [r for a, r in sorted((by_address or {}).items(), key=lambda kv: str(kv[0]))
             if isinstance(r, Mapping) and r.get("physfn") == card.get("address") and a not in listed]
    units = []
    for rec in recs:
        for unit in record_units(rec):
            # a record from a hostile or hand-made discovery may hold anything: only mappings are units
            if isinstance(unit, Mapping) and unit.get("in_use"):
                holders = unit.get("in_use_by")
                holders = [w for w in holders if isinstance(w, Mapping)] if isinstance(holders, list) else []
                units.append((unit.get("kind"), unit.get("id"), holders or [{}]))
    return units, _family_evidence(card)


def unit_lines(units):
    """Evidence lines ``<unit kind> <unit id>: <holder kind> <holder name or evidence>`` of :func:`host_use`'s
    units."""
    return ["%s %s: %s %s" % (kind, uid, who.get("kind", "?"), who.get("name") or who.get("evidence") or "")
            for kind, uid, holders in units for who in holders]


def card_in_use(card, by_address):
    """The in-use rule for a card on its host: ``(in use?, evidence lines)`` (:func:`host_use`)."""
    units, family = host_use(card, by_address)
    evidence = unit_lines(units) + list(family)
    return bool(evidence), evidence


def card_state(card, by_address, providers=None, prefix=None, declared=None, carries=None, safe_mode=True):
    """What a card is, decided once. ``card``: its discovery record; ``by_address``: the host's records by address;
    ``providers``: Placement's providers (placement_provider_info's records) and ``prefix`` the names' host part
    (the card's are found by :func:`_vocab.card_providers`; with ``prefix`` None, ``providers`` are the card's); ``declared``: the
    function the declaration gives the card (None: not declared); ``carries``: whether it carries it now.

    Returns ``{address, state, in_use, units, family, host_evidence, providers, used, held, drained, reserved,
    declared, carries, change_needed, blocked}``: ``in_use`` the host's or Placement's use (a drain hold of this
    collection's is ``held``, not use), ``used`` per provider in use ``(name, {class: units}, [consumers])``,
    ``blocked`` a card to change that is in use while ``safe_mode`` is on; ``state`` one word of :data:`STATES`."""
    units, family = host_use(card, by_address)
    if prefix is None:
        mine = [p for p in providers or [] if isinstance(p, Mapping)]
    else:
        mine = card_providers(providers, prefix, card_addresses(card, by_address))
    used, held, drained, reserved = [], [], [], []
    for p in mine:
        use = provider_use(p)
        if use["in_use"]:
            used.append((p.get("name"), use["used"], use["consumers"]))
        if use["held"]:
            held.append(p.get("name"))
        if use["drained"]:
            drained.append(p.get("name"))
        elif use["reserved"]:
            reserved.append(p.get("name"))
    host_evidence = unit_lines(units) + list(family)
    in_use = bool(host_evidence or used)
    change_needed = declared is not None and not carries
    blocked = bool(change_needed and in_use and safe_mode)
    if blocked:
        state = "blocked"
    elif change_needed:
        state = "to change"
    elif host_evidence:
        state = "in use"
    elif used:
        state = "allocated"
    elif held:
        state = "held"
    elif drained:
        state = "drained"
    elif reserved:
        state = "reserved"
    else:
        state = "as declared" if declared is not None else "free"
    return {"address": card.get("address"), "state": state, "in_use": in_use, "units": units, "family": family,
            "host_evidence": host_evidence, "providers": mine, "used": used, "held": held, "drained": drained,
            "reserved": reserved, "declared": declared, "carries": bool(carries), "change_needed": change_needed,
            "blocked": blocked}


def converge_status(change_needed, supported, evidence, safe_mode):
    """A declared card's converge status: ``ok`` (carries its function), ``unsupported`` (nothing programs it),
    ``blocked`` (to change, in use by ``evidence`` (host and Placement lines), safe mode on) or ``todo``."""
    if not change_needed:
        return "ok"
    if not supported:
        return "unsupported"
    return "blocked" if evidence and safe_mode else "todo"


def with_placement(card, evidence, safe_mode):
    """A converge card record (``_converge.card_records``') with Placement's ``evidence`` lines added and its status
    decided again by :func:`converge_status` (the batch reads Placement after the host's plan)."""
    if not evidence or card.get("status") != "todo":
        return card
    lines = list(card.get("in_use_by") or []) + list(evidence)
    status = converge_status(True, True, lines, safe_mode)
    return dict(card, in_use=True, in_use_by=lines, blocked=status == "blocked", status=status)
