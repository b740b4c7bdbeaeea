# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's shared vocabulary: family names, PCI addresses, mdev UUIDs, function ids, the units of a
discovery record and what Placement says of one provider. Host code and controller code (modules, filters) both use
it, so it is standard library only (Python 3.9+), has no state and imports nothing of the collection (the card
in-use rule, which asks the family drivers, is :mod:`_cardstate`'s).
"""

from __future__ import annotations

import re

__metaclass__ = type

# Discovery's families: what a record's ``family`` is, and what a ``families`` option may name.
FAMILIES = ("gpu", "fpga", "nic", "qat", "pci")

PCI_FORM = ("a PCI address DDDD:BB:SS.F or BB:SS.F in hex (e.g. 0000:3b:00.4; domain up to 8 hex digits, "
            "slot 00-1f, function 0-7)")
UUID_FORM = "an mdev UUID (8-4-4-4-12 hex digits, e.g. 4b20d080-1b54-4048-85b3-a6a62d165c01)"

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# a sha256 checksum as a declaration pins a file and an allow-list names it (any case)
SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")
# the shape of a PCI address, before the range checks of parse_pci_address
PCI_SHAPE_RE = re.compile(r"^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-9a-f])$")
# the form pci_address returns, which the kernel's own names and link targets already have
_CANONICAL_PCI = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]\Z").match


def parse_pci_address(text):
    """``(domain, bus, slot, function)`` from ``DDDD:BB:SS.F`` or ``BB:SS.F`` (any case, surrounding blanks
    ignored). ValueError saying what is wrong (without the accepted form: callers add their own context)."""
    if not isinstance(text, str):
        raise ValueError("expected a string, got %s %r" % (type(text).__name__, text))
    m = PCI_SHAPE_RE.match(text.strip().lower())
    if not m:
        raise ValueError("%r is not a PCI address" % (text,))
    domain = int(m.group(1) or "0", 16)
    bus, slot, function = int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)
    if slot > 0x1F:
        raise ValueError("%r has slot 0x%02x, above 0x1f" % (text, slot))
    if function > 7:
        raise ValueError("%r has function %x, above 7" % (text, function))
    return domain, bus, slot, function


def format_pci_address(parts):
    return "%04x:%02x:%02x.%x" % tuple(parts)


def pci_address(text):
    """The ``0000:3b:00.4`` form (lower case, a domain of at least 4 digits) of a PCI address; None when
    ``text`` is not one."""
    if isinstance(text, str) and _CANONICAL_PCI(text):
        return text
    try:
        return format_pci_address(parse_pci_address(text))
    except ValueError:
        return None


def mdev_uuid(text):
    """The lower-case 8-4-4-4-12 form of an mdev UUID; None when ``text`` is not one."""
    if not isinstance(text, str):
        return None
    t = text.strip().lower()
    return t if UUID_RE.match(t) else None


def function_id(value):
    """A function id (an AFU id, an xclbin UUID) as ids compare: no dashes, lower case; None for a non-string."""
    return value.replace("-", "").lower() if isinstance(value, str) else None


def full_unit(unit, vfs=None):
    """A unit with every key of the unit schema. A VF's own unit in ``sriov.vf_units`` leaves out ``id`` (its
    address), ``type`` when null, ``in_use_by`` when empty and ``vf_index`` when it is the VF's place in its PF's
    ``sriov.vfs`` (``vfs``; docs/discovery.md, "VF detail"): this gives a new mapping with them, in the key order
    of the full form. Any other unit, or anything that is not a mapping, is returned as it is."""
    if not isinstance(unit, dict) or unit.get("kind") != "vf" or (
            "id" in unit and "type" in unit and "in_use_by" in unit and "vf_index" in unit):
        return unit
    address = unit.get("address")
    ev = unit["in_use_by"] if "in_use_by" in unit else []
    full = {"kind": "vf", "id": unit.get("id", address), "address": address, "type": unit.get("type"),
            "iommu_group": unit.get("iommu_group"), "in_use": unit.get("in_use", bool(ev)), "in_use_by": ev}
    if "vf_index" in unit:
        full["vf_index"] = unit["vf_index"]
    else:
        full["vf_index"] = _position(vfs, address)
    for k, v in unit.items():
        if k not in full:
            full[k] = v
    return full


def _position(vfs, address):
    """The first place of ``address`` in ``vfs`` (a PF's ``sriov.vfs``, in virtfnN order, or a mapping of address
    to place made from it), or None."""
    if isinstance(vfs, dict):
        return vfs.get(address) if isinstance(address, str) else None
    if isinstance(vfs, list):
        for i, a in enumerate(vfs):
            if a == address:
                return i
    return None


def record_units(record):
    """Every unit of a discovery record: its own ``units``, then those of VFs folded into it
    (``sriov.vf_units``, accelerator_info's ``vf_detail: summary``), each with every key of the unit schema
    (:func:`full_unit`). A new list; the record is not checked."""
    sriov = record.get("sriov") or {}
    folded = (sriov.get("vf_units") if isinstance(sriov, dict) else None) or []
    places = None
    if folded and isinstance(sriov.get("vfs"), list):
        places = {}
        for i, a in enumerate(sriov["vfs"]):
            if isinstance(a, str):
                places.setdefault(a, i)
    return list(record.get("units") or []) + [full_unit(u, places) for u in folded]


def _usage_text(usages):
    return ",".join("%s=%s" % (rc, n) for rc, n in sorted((usages or {}).items()) if n)


# Who reports a device to Placement (docs/placement.md, "Reporters"): Nova (its PCI or vGPU providers), Cyborg
# (its agent's deployables) or this collection. Each names the provider its own way; the collection's own
# names never equal Nova's or Cyborg's, even ignoring case (MySQL's default collation does).
REPORTERS = ("nova", "cyborg", "accelops")


def reporter_provider_name(prefix, address, reporter, mdev=False):
    """The provider name ``reporter`` gives the unit at ``address`` (a PCI address, or one with a region suffix)
    under the root ``prefix``: accelops ``<prefix>_accelops_<address>``; Cyborg ``<prefix>_<address>`` (its
    deployable name, ``prefix`` being the host name its agent uses); Nova ``<prefix>_<ADDRESS>`` for PCI devices
    (upper-case hex, one provider per PF or whole device) or, for an mdev parent (``mdev``), libvirt's node device
    name ``<prefix>_pci_0000_84_00_0``."""
    if reporter == "accelops":
        return "%s_accelops_%s" % (prefix, address)
    if reporter == "cyborg":
        return "%s_%s" % (prefix, address)
    if reporter == "nova":
        if mdev:
            return "%s_pci_%s" % (prefix, re.sub(r"[:.]", "_", address.lower()))
        return "%s_%s" % (prefix, address.upper())
    raise ValueError("reporter: expected one of %s, got %r" % (", ".join(REPORTERS), reporter))


def card_provider_pattern(prefix, addresses):
    """A regex matching the names any reporter gives the providers of a card whose functions are ``addresses``
    (the card's and its VFs': an Intel PAC's port may sit on a VF): accelops', Cyborg's and Nova's forms, a
    region suffix included, case ignored."""
    addrs = sorted(set(a for a in addresses if a))
    alts = "|".join(re.escape(a) for a in addrs) or "(?!)"
    nodes = "|".join(re.escape(re.sub(r"[:.]", "_", a)) for a in addrs) or "(?!)"
    return re.compile(r"^%s_(?:(?:accelops_)?(?:%s)(?:_.*)?|pci_(?:%s))$" % (re.escape(prefix), alts, nodes),
                      re.IGNORECASE)


def card_addresses(card, by_address=None):
    """The PCI addresses of a card's functions: its own and its VFs' (records or folded units)."""
    out = [card.get("address")]
    sriov = card.get("sriov") or {}
    for vf in sriov.get("vfs") or []:
        out.append(vf.get("address") if isinstance(vf, dict) else vf)
    for u in sriov.get("vf_units") or []:
        out.append(u.get("id") or u.get("address"))
    for addr, rec in (by_address or {}).items():
        if isinstance(rec, dict) and rec.get("physfn") == card.get("address"):
            out.append(addr)
    return [a for a in out if isinstance(a, str) and a]


def card_providers(providers, prefix, addresses):
    """The providers (placement_provider_info's records) of a card whose functions are ``addresses``, under any
    reporter's name (:func:`card_provider_pattern`)."""
    pat = card_provider_pattern(prefix, addresses)
    return [p for p in providers or [] if isinstance(p, dict) and pat.match(p.get("name") or "")]


def _count(value):
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def provider_use(provider):
    """What Placement says of one provider, read once: ``{in_use, used, consumers, held, drained, reserved}``.
    ``in_use`` is placement_provider_info's own (usages beyond this collection's drain hold) or a consumer besides
    the hold, or, for a record without it, any usage or allocation; ``used`` the classes with usages; ``held`` this collection's drain hold;
    ``drained`` placement_provider_info's, or every inventory reserved whole; ``reserved`` some units held back."""
    usages = provider.get("usages") or {}
    allocations = provider.get("allocations") or {}
    used = dict((rc, n) for rc, n in usages.items() if _count(n) > 0)
    invs = [i for i in (provider.get("inventories") or {}).values() if isinstance(i, dict)]
    held = bool(provider.get("held"))
    if "in_use" in provider:
        # a consumer besides the hold is use even before Placement counts its usage
        in_use = bool(provider.get("in_use")) or len(allocations) > (1 if held else 0)
    else:
        in_use = bool(used or allocations)
    if "drained" in provider:
        drained = bool(provider.get("drained"))
    else:
        drained = bool(invs) and all(_count(i.get("total")) > 0 and _count(i.get("reserved")) >= _count(i.get("total"))
                                     for i in invs)
    return {"in_use": in_use, "used": used, "consumers": sorted(allocations), "held": held,
            "drained": drained, "reserved": any(_count(i.get("reserved")) > 0 for i in invs)}


def placement_evidence(providers, prefix, address, addresses=()):
    """In-use evidence lines from Placement for one card: the providers of the card at ``address`` (and its VFs'
    ``addresses``, :func:`card_providers`) in use (:func:`provider_use`)."""
    return ["placement provider %s has usages %s" % (p.get("name"), _usage_text(p.get("usages")))
            for p in card_providers(providers, prefix, [address] + list(addresses)) if provider_use(p)["in_use"]]


def plan_failure(planned):
    """The message of a converge that stops before any change because a card's plan failed for a reason other
    than use (``planned``: the cards' plan outcomes by address), or None."""
    failed = [(a, o) for a, o in sorted(planned.items()) if o.get("failed") and not o.get("refused_in_use")]
    if not failed:
        return None
    return "nothing was changed: the plan failed for %s" % "; ".join("%s (%s)" % (a, o.get("msg")) for a, o in failed)
