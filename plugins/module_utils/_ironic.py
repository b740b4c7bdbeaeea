# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ironic bare-metal nodes: the accelerator traits and ``properties.accelerators`` this collection sets.

A bare-metal node is the whole machine, so the cards' functions become traits of the node (a flavor with
``trait:CUSTOM_FUNCTION_GZIP=required`` lands on a node whose cards carry gzip) and the cards are listed in
``properties.accelerators`` in the form Ironic's own inspection hook (``accelerators``) writes:
``{vendor_id, device_id, type, pci_address, device_info}``.

Ownership: the traits in this collection's namespaces (those of ``_placement.MANAGED_TRAIT_PREFIXES``, plus
:data:`OWNER_TRAIT`, the marker of a prepared node) are this module's; every other trait on the node (an
operator's ``CUSTOM_GOLD``, a standard trait, traits set by inspection rules) is kept. Traits are added and
removed one by one (``PUT``/``DELETE /v1/nodes/{node}/traits/{trait}``), never replaced wholesale, so a trait
another writer adds meanwhile survives. Ironic allows 50 traits per node; a plan that would exceed that fails
before writing anything.

Requests go through the baremetal proxy's adapter with the SDK's own retries off (it retries HTTP 409 for
about 15 s and raises on a 404 from DELETE): a node locked by a conductor (HTTP 409 ``NodeLocked``) is retried
``lock_retries`` times, ``lock_delay`` seconds apart, then reported clearly.
"""

from __future__ import annotations

import json
import re
import time

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate, _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import MANAGED_TRAIT_PREFIXES
from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import DeclarationError, resolve
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record, ironic_default_families, ironic_types
from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    REQUEST_RETRIES, REQUEST_RETRY_DELAY, ServiceClient, permission_hint)
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

MICROVERSION = "1.37"          # node traits arrived in 1.37
MAX_TRAITS = 50                # ironic.db.sqlalchemy.api.MAX_TRAITS_PER_NODE
# The marker of a node this collection prepared. Not CUSTOM_OWNER_ACCELOPS: Nova copies a bare-metal node's
# traits onto the node's resource provider, and there CUSTOM_OWNER_ACCELOPS means "a provider
# accelops.lifecycle created" (placement_provider_info would list bare-metal nodes as its own providers).
OWNER_TRAIT = "CUSTOM_ACCELOPS_PREPARED"
OWNED_PREFIXES = tuple(MANAGED_TRAIT_PREFIXES) + (OWNER_TRAIT,)
# Ironic's inspection hook writes exactly these keys (known_accelerators.yaml entries plus pci_address).
ACCELERATOR_KEYS = ("vendor_id", "device_id", "type", "pci_address", "device_info")
# the entry's ``type`` per family, and the families listed unless the caller chooses: the families' own (ironic_type,
# ironic_default in their drivers)
ACCELERATOR_TYPES = ironic_types()
DEFAULT_FAMILIES = ironic_default_families()
FUNCTION_STATES = ("loaded", "declared")

_TRAIT = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
_HEX4 = re.compile(r"^(0x)?[0-9a-fA-F]{1,4}$")


class IronicInputError(ValueError):
    """Bad module input, or a plan Ironic would refuse: the message names the option and the accepted form."""


class IronicHTTPError(Exception):
    def __init__(self, method, path, status, fault, operation=None):
        self.method, self.path, self.status, self.fault = method, path, status, fault
        self.operation = operation
        hint = permission_hint("Ironic", status) if status in (401, 403) else ""
        prefix = "%s: " % operation if operation else ""
        suffix = " - %s" % hint if hint else ""
        Exception.__init__(self, "%s%s %s: HTTP %s: %s%s" % (prefix, method, path, status, fault, suffix))

    @property
    def locked(self):
        return self.status == 409 and "locked" in (self.fault or "").lower()


# -- ownership and validation ----------------------------------------------------------------------------
def is_owned(trait):
    """True for a trait in this collection's namespaces (it may add and remove those on any node)."""
    return any(trait == p or (p.endswith("_") and trait.startswith(p)) for p in OWNED_PREFIXES)


def check_traits(traits, option="traits"):
    """Sorted, de-duplicated valid traits of this collection's namespaces, or IronicInputError."""
    if traits is None:
        return []
    if not isinstance(traits, (list, tuple)):
        raise IronicInputError("%s: expected a list of trait names, got %s" % (option, type(traits).__name__))
    out = set()
    for i, t in enumerate(traits):
        where = "%s[%d]" % (option, i)
        if not isinstance(t, str) or not t:
            raise IronicInputError("%s: a trait must be a non-empty string, got %r" % (where, t))
        if len(t) > _naming.MAX_LENGTH or not _TRAIT.match(t):
            try:
                hint = " (for example %s)" % _naming.custom(t)
            except ValueError:
                hint = ""
            raise IronicInputError("%s: %r is not a valid Ironic trait: CUSTOM_ followed by upper-case letters, "
                                   "digits and underscores, at most %d characters%s"
                                   % (where, t, _naming.MAX_LENGTH, hint))
        if not is_owned(t):
            raise IronicInputError("%s: %s is outside the namespaces this module manages (%s); set other traits with "
                                   "openstack.cloud.baremetal_node or 'openstack baremetal node add trait'"
                                   % (where, t, ", ".join(p + ("*" if p.endswith("_") else "") for p in OWNED_PREFIXES)))
        out.add(t)
    return sorted(out)


def _hex4(value, where):
    if isinstance(value, int) and not isinstance(value, bool):
        raise IronicInputError("%s: give PCI ids as quoted strings of 4 hex digits (YAML reads 8086 as a number), "
                               "got %r" % (where, value))
    if not isinstance(value, str) or not _HEX4.match(value):
        raise IronicInputError("%s: expected 4 hex digits such as \"10de\", got %r" % (where, value))
    v = value.lower()
    return (v[2:] if v.startswith("0x") else v).zfill(4)


def normalize_pci_address(value, where):
    addr = pci_address(value)
    if addr is None:
        raise IronicInputError("%s: expected a PCI address such as \"0000:3b:00.0\" or \"3b:00.0\", got %r"
                               % (where, value))
    return addr


def check_accelerators(items, option="accelerators"):
    """Entries of ``properties.accelerators`` in Ironic's form, sorted by PCI address, or IronicInputError."""
    if not isinstance(items, (list, tuple)):
        raise IronicInputError("%s: expected a list of {vendor_id, device_id, type, pci_address, device_info}, "
                               "got %s" % (option, type(items).__name__))
    out, seen = [], set()
    for i, item in enumerate(items):
        where = "%s[%d]" % (option, i)
        if not isinstance(item, dict):
            raise IronicInputError("%s: expected a mapping with %s" % (where, ", ".join(ACCELERATOR_KEYS)))
        unknown = sorted(set(item) - set(ACCELERATOR_KEYS))
        if unknown:
            raise IronicInputError("%s: unknown key(s) %s; Ironic's form has %s"
                                   % (where, ", ".join(unknown), ", ".join(ACCELERATOR_KEYS)))
        for k in ("vendor_id", "device_id", "type", "pci_address"):
            if item.get(k) in (None, ""):
                raise IronicInputError("%s.%s: required" % (where, k))
        if not isinstance(item["type"], str):
            raise IronicInputError("%s.type: expected a string such as GPU or FPGA, got %r" % (where, item["type"]))
        info = item.get("device_info")
        if info is not None and not isinstance(info, str):
            raise IronicInputError("%s.device_info: expected a string, got %r" % (where, info))
        entry = {
            "vendor_id": _hex4(item["vendor_id"], where + ".vendor_id"),
            "device_id": _hex4(item["device_id"], where + ".device_id"),
            "type": item["type"],
            "pci_address": normalize_pci_address(item["pci_address"], where + ".pci_address"),
            "device_info": info or "",
        }
        if entry["pci_address"] in seen:
            raise IronicInputError("%s.pci_address: %s is listed twice" % (where, entry["pci_address"]))
        seen.add(entry["pci_address"])
        out.append(entry)
    return sorted(out, key=lambda e: e["pci_address"])


# -- from discovery and the declaration ------------------------------------------------------------------
def _records(discovery, option):
    recs = _cardstate.records(discovery)
    if recs is None or not all(isinstance(r, dict) and r.get("address") for r in recs):
        raise IronicInputError("%s: expected the result of accelops.lifecycle.accelerator_info (a mapping with an "
                               "'accelerators' list) or that list of records" % option)
    return recs


def _card_views(discovery, option):
    """The records with each card seen as one device: a card whose function sits on its VFs (an Intel FPGA whose
    port was given to its VF) shows what they carry (the family's ``card_view``)."""
    recs = _records(discovery, option)
    by_addr = _cardstate.cards(recs)[1]
    return [r if r.get("physfn") else for_record(r).card_view(r, by_addr) for r in recs]


def _cards(discovery, families, option):
    return [r for r in _card_views(discovery, option) if not r.get("physfn") and r.get("family") in families]


def check_families(families, option="families"):
    if families is None:
        return list(DEFAULT_FAMILIES)
    bad = [f for f in families if f not in ACCELERATOR_TYPES]
    if bad:
        raise IronicInputError("%s: unknown famil%s %s; choose from %s"
                               % (option, "y" if len(bad) == 1 else "ies", ", ".join(map(str, bad)),
                                  ", ".join(ACCELERATOR_TYPES)))
    return list(families)


def accelerators_from_discovery(discovery, families=DEFAULT_FAMILIES, option="discovery"):
    """One entry per card (PFs and whole devices, VFs left out) of the given families, as Ironic's inspection
    hook would list it: ``device_info`` is "<vendor name> <device name>" from pci.ids (ids when unnamed)."""
    out = []
    for r in _cards(discovery, families, option):
        vendor = r.get("vendor_name") or r.get("vendor_id") or ""
        device = r.get("device_name") or r.get("device_id") or ""
        out.append({"vendor_id": r.get("vendor_id"), "device_id": r.get("device_id"),
                    "type": ACCELERATOR_TYPES[r["family"]], "pci_address": r["address"],
                    "device_info": ("%s %s" % (vendor, device)).strip()})
    return check_accelerators(out, option)


def hardware_traits(discovery, families=DEFAULT_FAMILIES, option="discovery"):
    """``CUSTOM_ACCELERATOR_<FAMILY>``, ``CUSTOM_VENDOR_<VID>``, ``CUSTOM_PRODUCT_<VID>_<PID>`` of the cards."""
    out = set()
    for r in _cards(discovery, families, option):
        out.add(_naming.family_trait(r["family"]))
        vid, did = r.get("vendor_id"), r.get("device_id")
        if vid:
            out.add(_naming.trait("VENDOR", vid))
            if did:
                out.add(_naming.trait("PRODUCT", vid, did))
    return sorted(out)


def function_traits(discovery, functions, function_state="loaded", option="functions"):
    """The node's function traits from the declaration resolved on its cards.

    Returns ``(traits, functions, problems)``: ``CUSTOM_FUNCTION_<NAME>`` of every declared function that at
    least one card carries now (``loaded``) or is assigned (``declared``), the per-function detail (cards,
    carrying, pending) and the resolution's problems.
    """
    if function_state not in FUNCTION_STATES:
        raise IronicInputError("function_state: expected one of %s, got %r" % (", ".join(FUNCTION_STATES), function_state))
    if not functions:
        return [], {}, []
    recs = _cardstate.records(discovery)
    if isinstance(recs, list) and all(isinstance(r, dict) and isinstance(r.get("address"), str) for r in recs):
        views = _card_views(recs, "discovery")  # malformed input is left to resolve's own message
        discovery = dict(discovery, accelerators=views) if isinstance(discovery, dict) else views
    try:
        res = resolve(functions, discovery)
    except DeclarationError as e:
        raise IronicInputError("%s: %s" % (option, e))
    detail = {}
    for a in res["assignments"]:
        d = detail.setdefault(a["function"], {"trait": a["trait"], "cards": [], "carrying": [], "pending": []})
        d["cards"].append(a["address"])
        (d["pending"] if a["change_needed"] else d["carrying"]).append(a["address"])
    traits = sorted(d["trait"] for d in detail.values()
                    if d["carrying"] or (function_state == "declared" and d["cards"]))
    for name, d in detail.items():
        d["on_node"] = d["trait"] in traits
    return traits, detail, list(res["problems"])


def loaded_function_traits(discovery, families=DEFAULT_FAMILIES, option="discovery"):
    """The traits discovery gives the functions loaded now (Cyborg's CUSTOM_FPGA_FUNCTION_ID_*, a vGPU type's
    CUSTOM_FUNCTION_*), when they are in this collection's namespaces."""
    out = set()
    for r in _cards(discovery, families, option):
        t = (r.get("function") or {}).get("trait")
        if isinstance(t, str) and _naming.is_valid(t) and is_owned(t):
            out.add(t)
    return sorted(out)


# -- the plan ------------------------------------------------------------------------------------------
def plan(node_name, current_traits, current_properties, desired_traits, accelerators, state="present"):
    """What to change on one node.

    ``desired_traits``: the owned traits it must carry (the marker is added here when ``state`` is present);
    ``accelerators``: the list for ``properties.accelerators`` or None to leave it alone. With state absent
    every owned trait and ``properties.accelerators`` go. Raises IronicInputError when the result would exceed
    Ironic's 50 traits.
    """
    current = sorted(set(current_traits or []))
    owned_now = [t for t in current if is_owned(t)]
    foreign = [t for t in current if not is_owned(t)]
    want = [] if state == "absent" else sorted(set(desired_traits) | {OWNER_TRAIT})
    after = sorted(set(foreign) | set(want))
    if len(after) > MAX_TRAITS:
        raise IronicInputError(
            "node %s would carry %d traits; Ironic allows %d per node: %d it has that this module does not manage "
            "(%s) plus the %d it wants (%s). Drop some (hardware_traits=false leaves out the family, vendor and "
            "product traits) or remove foreign traits from the node"
            % (node_name, len(after), MAX_TRAITS, len(foreign), ", ".join(foreign) or "none", len(want),
               ", ".join(want)))
    props = current_properties or {}
    have_acc = props.get("accelerators") if "accelerators" in props else None
    acc_op = None
    if state == "absent":
        if "accelerators" in props:
            acc_op = {"op": "remove", "path": "/properties/accelerators"}
        acc_after = None
    elif accelerators is None:
        acc_after = have_acc
    else:
        acc_after = accelerators
        if have_acc != accelerators:
            acc_op = {"op": "add", "path": "/properties/accelerators", "value": accelerators}
    return {
        "add": [t for t in want if t not in current],
        "remove": [t for t in owned_now if t not in want],
        "traits_before": current,
        "traits_after": after,
        "foreign_traits": foreign,
        "owned_traits": want,
        "properties_patch": [acc_op] if acc_op else [],
        "accelerators_before": have_acc,
        "accelerators_after": acc_after,
    }


# -- talking to Ironic ---------------------------------------------------------------------------------
def _fault(text):
    """Ironic's error text: a JSON string inside ``error_message``, whose ``faultstring`` is the message."""
    try:
        body = json.loads(text)
    except ValueError:
        return (text or "").strip()[:500]
    msg = body.get("error_message") if isinstance(body, dict) else None
    if isinstance(msg, str):
        try:
            inner = json.loads(msg)
            if isinstance(inner, dict) and inner.get("faultstring"):
                return inner["faultstring"]
        except ValueError:
            return msg
    if isinstance(msg, dict) and msg.get("faultstring"):
        return msg["faultstring"]
    return (text or "").strip()[:500]


class Client(ServiceClient):
    """Plain requests over the baremetal proxy (its endpoint and auth), the SDK's retries off.

    Every request this module sends is safe to repeat (GET; PUT of one trait; DELETE of one trait, where 404
    is fine; a JSON patch that sets ``properties.accelerators`` to a whole value), so one that got no answer
    (connection refused or dropped, timeout, version discovery failed) or a 5xx is repeated up to
    ``retries`` times with growing pauses, then the run fails with :class:`ServiceUnavailable`. A node locked
    by a conductor (HTTP 409) is retried ``lock_retries`` times, ``lock_delay`` seconds apart.
    """

    service = "Ironic"
    microversion = MICROVERSION

    def __init__(self, adapter, lock_retries=3, lock_delay=2.0, sleep=time.sleep, retries=REQUEST_RETRIES,
                 retry_delay=REQUEST_RETRY_DELAY):
        ServiceClient.__init__(self, adapter, retries=retries, retry_delay=retry_delay, sleep=sleep)
        self.lock_retries = lock_retries
        self.lock_delay = lock_delay
        self.requests = {"reads": 0, "writes": 0, "lock_retries": 0, "retried": 0}

    def count(self, method):
        self.requests["reads" if method == "GET" else "writes"] += 1

    def fault(self, resp):
        return _fault(resp.text)

    def call(self, method, path, body=None, ok=(200,), operation=None):
        attempt = 0
        extra = {"retriable_status_codes": [], "status_code_retries": 0}
        while True:
            retried = self.retried
            status, resp = self.send(method, path, body, operation=operation, extra=extra)
            self.requests["retried"] += self.retried - retried
            if status in ok:
                text = resp.text
                return json.loads(text) if text and text.strip() else None
            err = IronicHTTPError(method, path, status, _fault(resp.text), operation)
            if err.locked and attempt < self.lock_retries:
                attempt += 1
                self.requests["lock_retries"] += 1
                self.sleep(self.lock_delay)
                continue
            raise err


def get_node(client, ident):
    path = "/nodes/%s" % ident
    try:
        return client.call("GET", path, operation="read node %s" % ident)
    except IronicHTTPError as e:
        if e.status == 404:
            raise IronicInputError("node: no Ironic node named or with uuid %r" % ident)
        raise


def converge(client, ident, desired_traits, accelerators, state="present", check_mode=False):
    """Read the node, plan, write (unless check mode) and return the result fields."""
    node = get_node(client, ident)
    uuid, name = node["uuid"], node.get("name")
    p = plan(name or uuid, node.get("traits") or [], node.get("properties") or {}, desired_traits, accelerators,
             state)
    changed = bool(p["add"] or p["remove"] or p["properties_patch"])
    if changed and not check_mode:
        try:
            # Removals first: the count never goes over Ironic's limit on the way.
            for t in p["remove"]:
                try:
                    client.call("DELETE", "/nodes/%s/traits/%s" % (uuid, t), ok=(204,),
                                operation="remove trait %s from node %s" % (t, name or uuid))
                except IronicHTTPError as e:
                    if e.status != 404:   # someone removed it meanwhile: the goal is reached
                        raise
            for t in p["add"]:
                client.call("PUT", "/nodes/%s/traits/%s" % (uuid, t), ok=(204,),
                            operation="add trait %s to node %s" % (t, name or uuid))
            if p["properties_patch"]:
                client.call("PATCH", "/nodes/%s" % uuid, p["properties_patch"],
                            operation="set properties.accelerators of node %s" % (name or uuid))
        except IronicHTTPError as e:
            if e.locked:
                raise IronicInputError(
                    "node %s is locked by a conductor (%s), still after %d retries %g s apart; it is busy with "
                    "another operation: run again when it is done (lock_retries and lock_delay wait longer)"
                    % (name or uuid, e.fault, client.lock_retries, client.lock_delay))
            raise
    return {
        "changed": changed,
        "node": {"uuid": uuid, "name": name, "provision_state": node.get("provision_state"),
                 "maintenance": node.get("maintenance")},
        "traits": p["traits_after"],
        "owned_traits": p["owned_traits"],
        "foreign_traits": p["foreign_traits"],
        "added": p["add"],
        "removed": p["remove"],
        "accelerators": p["accelerators_after"],
        "accelerators_changed": bool(p["properties_patch"]),
        "diff": {"before": {"traits": p["traits_before"], "accelerators": p["accelerators_before"]},
                 "after": {"traits": p["traits_after"], "accelerators": p["accelerators_after"]}},
        "requests": dict(client.requests),
    }
