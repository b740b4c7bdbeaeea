# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The function declaration: validation, and resolution against a host's discovery record.

One declaration (``accelerator_host_functions``, docs/declaration.md) drives the converge role, the Placement
traits, the Nova/Cyborg config, the libvirt snippets and the Ironic traits. This module is the one place that
reads it: :func:`validate` normalises it (or raises :class:`DeclarationError` naming the entry, the key and the
accepted form) and :func:`resolve` maps it onto the cards of one host's discovery result, card by card, with
the arguments of the programming module each card needs. What differs between the kinds of function (``fpga``,
``vgpu``, ...) is asked of the kind's object (:class:`_drivers._base.Kind`, in its family's file, listed in the
drivers' registry). Standard library only (host and controller use it).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections.abc import Mapping

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import FAMILIES, REPORTERS, SHA256_RE
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
HEX4_RE = re.compile(r"^(0x)?[0-9a-fA-F]{4}$")

# an entry's keys besides its kind's section (one of the registry's KIND_NAMES)
ENTRY_KEYS = ("name", "match", "placement", "nova", "description", "reporter")
MATCH_KEYS = ("address", "family", "vendor_id", "device_id", "handler", "count", "numa_node")
PLACEMENT_KEYS = ("traits", "resource_class")
NOVA_KEYS = ("alias", "numa_policy", "device_type", "managed", "physical_network")


class DeclarationError(ValueError):
    """A declaration that cannot be used; the message names the entry, the key and the accepted form."""


def _registry():
    # the drivers' registry holds the kinds; imported on first use, so that loading the declaration's filters does
    # not load the drivers
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers  # pylint: disable=import-outside-toplevel
    return _drivers


def kind_names():
    """The declaration's kinds, the keys an entry names one of (``fpga``, ``vgpu``, ...)."""
    return _registry().KIND_NAMES


def kind_of(entry):
    """The kind object (:class:`_drivers._base.Kind`) of a validated entry."""
    return _registry().kind(entry["kind"])


def _hex4(value):
    return value.lower()[2:] if value.lower().startswith("0x") else value.lower()


# No count in a declaration is larger: a PCI card has at most 65,535 VFs (TotalVFs is 16 bits), and each kind's
# plan then checks the count against what the card itself says it holds.
INT_CEILING = 0xFFFF
# Linux numbers NUMA nodes below MAX_NUMNODES, at most 1 << CONFIG_NODES_SHIFT (10 at most).
NUMA_CEILING = 1023
DECIMAL_RE = re.compile(r"[0-9]{1,9}\Z")


def _short(value):
    """A value for a message: long ones cut (an integer of thousands of digits is not even repr()-able)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "an integer of about %d digits" % int(value.bit_length() * 0.30103)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Checker:
    def __init__(self, where):
        self.where = where

    def fail(self, key, msg):
        raise DeclarationError("%s.%s: %s" % (self.where, key, msg) if key else "%s: %s" % (self.where, msg))

    def mapping(self, value, key, allowed):
        if not isinstance(value, dict):
            self.fail(key, "must be a mapping, got %s" % type(value).__name__)
        unknown = sorted(str(k) for k in value if k not in allowed)
        if unknown:
            self.fail(key, "unknown key(s) %s; accepted: %s" % (", ".join(unknown), ", ".join(allowed)))
        return value

    def string(self, value, key, pattern=None, form=None, required=False):
        if value is None:
            if required:
                self.fail(key, "is required%s" % (" (%s)" % form if form else ""))
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.fail(key, "%r was read as a number: quote it%s" % (value, " (%s)" % form if form else ""))
        if not isinstance(value, str) or not value:
            self.fail(key, "must be a non-empty string%s" % (" (%s)" % form if form else ""))
        if pattern is not None and not pattern.match(value):
            self.fail(key, "%r is not valid; accepted form: %s" % (value, form))
        return value

    def integer(self, value, key, minimum=0, maximum=None, required=False):
        if value is None:
            if required:
                self.fail(key, "is required (an integer >= %d)" % minimum)
            return None
        maximum = INT_CEILING if maximum is None else maximum
        if isinstance(value, bool) or not isinstance(value, int):
            # a quoted integer in ASCII digits only: "²", "٣" or "1_0" are digits to str.isdigit() or int(), not
            # to an operator; the length bound keeps int() away from thousands of digits
            text = value.strip() if isinstance(value, str) else None
            if text is not None and DECIMAL_RE.match(text):
                value = int(text)
            else:
                self.fail(key, "must be an integer from %d to %d, got %s" % (minimum, maximum, _short(value)))
        if value < minimum or value > maximum:
            self.fail(key, "must be an integer from %d to %d, got %s" % (minimum, maximum, _short(value)))
        return value

    def boolean(self, value, key, default):
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(key, "must be true or false, got %r" % (value,))
        return value

    def str_list(self, value, key):
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail(key, "must be a string or a list of strings")
        return list(value)


def _validate_match(c, raw):
    m = c.mapping(raw if raw is not None else {}, "match", MATCH_KEYS)
    out = {"address": [], "family": None, "vendor_id": None, "device_id": None, "handler": None,
           "count": None, "numa_node": None}
    for text in c.str_list(m.get("address"), "match.address"):
        addr = pci_address(text)
        if addr is None:
            c.fail("match.address", "%r is not a PCI address; accepted form: 0000:3b:00.0 or 3b:00.0" % text)
        if addr in out["address"]:
            c.fail("match.address", "%s is listed twice" % addr)
        out["address"].append(addr)
    fam = c.string(m.get("family"), "match.family")
    if fam is not None and fam not in FAMILIES:
        c.fail("match.family", "%r is not a family; accepted: %s" % (fam, ", ".join(FAMILIES)))
    out["family"] = fam
    for key in ("vendor_id", "device_id"):
        val = m.get(key)
        if isinstance(val, int) and not isinstance(val, bool):
            c.fail("match." + key, "%r must be quoted: 4 hex digits as a string, e.g. \"8086\" or \"0x8086\"" % val)
        val = c.string(val, "match." + key, HEX4_RE, "4 hex digits, e.g. \"8086\" or \"0x8086\"")
        out[key] = _hex4(val) if val else None
    out["handler"] = c.string(m.get("handler"), "match.handler")
    count = c.integer(m.get("count"), "match.count", minimum=1)
    out["count"] = count
    out["numa_node"] = c.integer(m.get("numa_node"), "match.numa_node", minimum=0, maximum=NUMA_CEILING)
    if count is not None and out["address"] and count > len(out["address"]):
        c.fail("match.count", "%s is more than the %d address(es) listed" % (count, len(out["address"])))
    if not (out["address"] or out["family"] or out["vendor_id"] or out["device_id"] or out["handler"]):
        c.fail("match", "needs at least one of address, family, vendor_id, device_id, handler "
                        "(a declaration never matches every device of a host by accident)")
    return out


def validate(functions, where="accelerator_host_functions"):
    """Check and normalise a declaration (a list of function entries); returns a new list."""
    if functions is None:
        return []
    if not isinstance(functions, list):
        raise DeclarationError("%s: must be a list of function entries, got %s" % (where, type(functions).__name__))
    out, names, addresses, traits_of = [], {}, {}, {}
    names_of_kinds = kind_names()
    for i, raw in enumerate(functions):
        c = _Checker("%s[%d]" % (where, i))
        c.mapping(raw, "", ENTRY_KEYS + names_of_kinds)
        name = c.string(raw.get("name"), "name", NAME_RE, "letters, digits, '_', '.', '-' (1-63 characters)",
                        required=True)
        c.where = "%s[%d] (%s)" % (where, i, name)
        try:
            trait = _naming.function_trait(name)
        except ValueError as e:
            c.fail("name", "%s" % e)
        if name.lower() in names:
            c.fail("name", "%r is declared twice (also entry %d)" % (name, names[name.lower()]))
        if trait in traits_of:
            # fast-net, fast_net and fast.net are one trait to Placement: two functions would be one
            c.fail("name", "%r and %r (entry %d) both become the trait %s; name them apart"
                   % (name, functions[traits_of[trait]].get("name"), traits_of[trait], trait))
        names[name.lower()] = i
        traits_of[trait] = i
        kinds = [k for k in names_of_kinds if k in raw]
        if len(kinds) != 1:
            c.fail("", "needs exactly one of %s (what to load), found %s" % (", ".join(names_of_kinds), ", ".join(kinds) or "none"))
        kind = _registry().kind(kinds[0])
        match = _validate_match(c, raw.get("match"))
        fams = kind.families
        if fams and match["family"] and match["family"] not in fams:
            c.fail("match.family", "%s functions need family %s, not %s" % (kind.name, "/".join(fams), match["family"]))
        for addr in match["address"]:
            if addr in addresses:
                c.fail("match.address", "%s is already given to function %r: a card carries one function"
                       % (addr, addresses[addr]))
            addresses[addr] = name
        pl = c.mapping(raw.get("placement") or {}, "placement", PLACEMENT_KEYS)
        traits = c.str_list(pl.get("traits"), "placement.traits")
        for t in traits:
            if not _naming.is_valid(t):
                c.fail("placement.traits", "%r is not a valid custom trait; accepted form: CUSTOM_[A-Z0-9_]+" % t)
        rc = c.string(pl.get("resource_class"), "placement.resource_class")
        if rc is not None and not (rc in ("FPGA", "PGPU", "VGPU", "SRIOV_NET_VF") or _naming.is_valid(rc)):
            c.fail("placement.resource_class", "%r is not valid; accepted: FPGA, PGPU, VGPU, SRIOV_NET_VF or "
                                               "CUSTOM_[A-Z0-9_]+" % rc)
        nv = c.mapping(raw.get("nova") or {}, "nova", NOVA_KEYS)
        nova = {
            "alias": c.string(nv.get("alias"), "nova.alias", NAME_RE, "letters, digits, '_', '.', '-'") or name,
            "numa_policy": c.string(nv.get("numa_policy"), "nova.numa_policy"),
            "device_type": c.string(nv.get("device_type"), "nova.device_type"),
            "managed": c.boolean(nv.get("managed"), "nova.managed", None),
            "physical_network": c.string(nv.get("physical_network"), "nova.physical_network"),
        }
        if nova["numa_policy"] not in (None, "required", "legacy", "preferred", "socket"):
            c.fail("nova.numa_policy", "accepted: required, legacy, preferred, socket")
        if nova["device_type"] not in (None, "type-PCI", "type-PF", "type-VF"):
            c.fail("nova.device_type", "accepted: type-PCI, type-PF, type-VF")
        reporter = c.string(raw.get("reporter"), "reporter")
        if reporter is not None and reporter not in REPORTERS:
            c.fail("reporter", "%r is not a reporter; accepted: %s" % (reporter, ", ".join(REPORTERS)))
        out.append({
            "name": name,
            "reporter": reporter,
            "description": raw.get("description") if isinstance(raw.get("description"), str) else None,
            "kind": kind.name,
            "trait": trait,
            "match": match,
            kind.name: kind.validate(c, raw.get(kind.name)),
            "placement": {"traits": traits, "resource_class": rc},
            "nova": nova,
        })
    return out


# ---------------------------------------------------------------------------------------------------------------
# Resolution against one host's discovery result


def _cards(discovery):
    """Records a function can be declared on: PFs and whole devices (VFs belong to their PF)."""
    if isinstance(discovery, dict) and discovery.get("accelerators") is None:
        raise DeclarationError("discovery: expected the result of accelops.lifecycle.accelerator_info "
                               "(a mapping with 'accelerators') or its list of records")
    records = _cardstate.records(discovery)
    # the address keys the records and a VF's physfn names its PF's (a dict or list there is unhashable): PCI address
    # strings are required
    if records is None or not all(isinstance(r, dict) and isinstance(r.get("address"), str)
                                  and isinstance(r.get("physfn") or "", str) for r in records):
        raise DeclarationError("discovery: expected a list of accelerator_info records (mappings with 'address', "
                               "a PCI address string, and 'physfn', null or the PF's PCI address string)")
    return _cardstate.cards(records)


def carries(entry, card, by_addr):
    """Whether ``card`` already offers the declared function exactly (nothing to program)."""
    return kind_of(entry).carries(entry, card, by_addr)


def _compatible(entry, card):
    """None when the function can live on the card, else why not."""
    kind = kind_of(entry)
    if kind.families and card.get("family") not in kind.families:
        return "a %s function needs a %s device, this is %s" % (kind.name, "/".join(kind.families), card.get("family"))
    return kind.refusal(entry, card)


def _matches(match, card):
    if match["address"] and card["address"] not in match["address"]:
        return False
    for key in ("family", "vendor_id", "device_id", "handler", "numa_node"):
        if match[key] is not None and card.get(key) != match[key]:
            return False
    return True


def module_args(entry, address):
    """Arguments of the programming module for one card (None when nothing programs it)."""
    return kind_of(entry).module_args(entry, address)


def resolve(functions, discovery, validated=False):
    """Map the declaration onto one host's cards.

    Cards named by address are taken as named. Selectors take every matching card, or with ``count`` N of them,
    chosen like Placement's preferred traits would: cards that already carry the function first (nothing to
    program), then free cards, in address order; busy cards are never chosen to be changed. A card serves one
    function: the first entry that gets it keeps it. Returns ``assignments`` (one per card, with the
    programming module and its arguments, whether a change is needed, in-use evidence and why it was chosen),
    ``problems`` (declared functions that cannot be met as asked, each a sentence), ``function_names`` for
    accelops.lifecycle.placement_provider_tree and per-function ``summary``.
    """
    entries = functions if validated else validate(functions)
    cards, by_addr = _cards(discovery)
    taken = {}
    assignments, problems, summary = [], [], {}
    function_names = {}
    for entry in entries:
        match = entry["match"]
        if match["address"]:
            pool = []
            for addr in match["address"]:
                card = by_addr.get(addr)
                if card is None:
                    problems.append("%s: no device at %s on this host" % (entry["name"], addr))
                elif card.get("physfn"):
                    problems.append("%s: %s is a VF; declare functions on its PF %s"
                                    % (entry["name"], addr, card["physfn"]))
                elif _compatible(entry, card) or not _matches(match, card):
                    problems.append("%s: %s cannot carry it: %s" % (
                        entry["name"], addr, _compatible(entry, card) or "it does not match the other match keys"))
                elif addr in taken:
                    problems.append("%s: %s is already given to %s" % (entry["name"], addr, taken[addr]))
                else:
                    pool.append(card)
        else:
            pool = [c for c in cards if _matches(match, c) and c["address"] not in taken
                    and _compatible(entry, c) is None]
            if not pool:
                problems.append("%s: no free device on this host matches %s" % (entry["name"], _describe_match(match)))
        ranked = []
        for card in pool:
            busy = _cardstate.card_in_use(card, by_addr)[0]
            rank = 0 if carries(entry, card, by_addr) else (1 if not busy else 2)
            ranked.append((rank, card["address"], card))
        want = match["count"]
        if want is None:
            # Every named or matching card: a busy one that needs a change is reported as blocked.
            chosen = [(card, "named by address" if match["address"] else "matches the selector")
                      for _rank, _addr, card in sorted(ranked, key=lambda t: t[1])]
        else:
            chosen = [(card, "already carries %s" % entry["name"] if rank == 0 else "free card, lowest address")
                      for rank, _addr, card in sorted(ranked, key=lambda t: (t[0], t[1])) if rank < 2][:want]
            if len(chosen) < want:
                busy = [a for r, a, _c in sorted(ranked, key=lambda t: t[1]) if r == 2]
                problems.append("%s: wants %d card(s), %d available%s" % (
                    entry["name"], want, len(chosen),
                    ("; in use and not carrying it: %s" % ", ".join(busy)) if busy else ""))
        for card, why in chosen:
            taken[card["address"]] = entry["name"]
            has = carries(entry, card, by_addr)
            st = _cardstate.card_state(card, by_addr, declared=entry["name"], carries=has)
            busy, evidence = st["in_use"], st["host_evidence"]
            assignments.append({
                "function": entry["name"],
                "kind": entry["kind"],
                "trait": entry["trait"],
                "address": card["address"],
                "family": card.get("family"),
                "vendor_id": card.get("vendor_id"),
                "device_id": card.get("device_id"),
                "numa_node": card.get("numa_node"),
                "programming_model": card.get("programming_model"),
                "loaded": (card.get("function") or {}).get("id"),
                "change_needed": not has,
                "in_use": busy,
                "in_use_by": evidence,
                "blocked": st["blocked"],
                "reason": why,
                "module": kind_of(entry).module,
                "module_args": module_args(entry, card["address"]),
                "placement": entry["placement"],
                "nova": entry["nova"],
                "reporter": entry.get("reporter"),
            })
        function_names.update(entry_function_names(entry))
        summary[entry["name"]] = {
            "kind": entry["kind"],
            "cards": [c["address"] for c, _w in chosen],
            "changes": sum(1 for a in assignments if a["function"] == entry["name"] and a["change_needed"]),
            "blocked": [a["address"] for a in assignments if a["function"] == entry["name"] and a["blocked"]],
        }
    return {"assignments": assignments, "problems": problems, "function_names": function_names, "summary": summary}


REPORTING_FORM = ("a dict with reporter (auto, nova, cyborg or accelops), nova (whether Nova's config for the host "
                  "comes from this declaration with PCI in Placement) and cyborg_families (the families Cyborg's agent "
                  "reports)")


def check_reporting(reporting, option="reporting"):
    """The deployment's reporting settings, normalised: ``{reporter, nova, cyborg_families}``."""
    if reporting is None:
        reporting = {}
    if not isinstance(reporting, dict):
        raise DeclarationError("%s: expected %s, got %r" % (option, REPORTING_FORM, reporting))
    bad = sorted(str(k) for k in reporting if k not in ("reporter", "nova", "cyborg_families"))
    if bad:
        raise DeclarationError("%s: unknown key(s) %s; expected %s" % (option, ", ".join(bad), REPORTING_FORM))
    rep = reporting.get("reporter") or "auto"
    if rep not in ("auto",) + REPORTERS:
        raise DeclarationError("%s.reporter: expected auto, %s, got %r" % (option, ", ".join(REPORTERS), rep))
    nova = reporting.get("nova", False)
    if not isinstance(nova, bool):
        raise DeclarationError("%s.nova: expected true or false, got %r" % (option, nova))
    fams = reporting.get("cyborg_families") or []
    if not isinstance(fams, list) or any(f not in FAMILIES for f in fams):
        raise DeclarationError("%s.cyborg_families: expected a list of %s, got %r" % (option, ", ".join(FAMILIES), fams))
    return {"reporter": rep, "nova": nova, "cyborg_families": list(fams)}


def reporter_of(explicit, family, reporting):
    """Who reports a card: the declaration's ``reporter``; else the deployment's (``reporting.reporter`` unless
    auto); else Cyborg for the families its agent reports, Nova when Nova's config comes from this declaration,
    and this collection otherwise."""
    if explicit:
        return explicit
    if reporting["reporter"] != "auto":
        return reporting["reporter"]
    if family in reporting["cyborg_families"]:
        return "cyborg"
    return "nova" if reporting["nova"] else "accelops"


def reporters(resolution, discovery, reporting):
    """``{card address: reporter}`` for one host: each declared card's (:func:`reporter_of`), and every other card's
    when the deployment names one reporter for all."""
    out = {}
    if reporting["reporter"] != "auto":
        for card in _cards(discovery)[0]:
            out[card["address"]] = reporting["reporter"]
    for a in resolution["assignments"]:
        out[a["address"]] = reporter_of(a.get("reporter"), a.get("family"), reporting)
    return out


def entry_function_names(entry):
    """``{function id or vGPU type: entry name}`` for a validated entry, every spelling of the id a card or
    Placement may show (Placement's function_names)."""
    return kind_of(entry).function_names(entry)


def _describe_match(match):
    parts = ["%s=%s" % (k, match[k]) for k in ("family", "vendor_id", "device_id", "handler", "numa_node")
             if match[k] is not None]
    if match["address"]:
        parts.insert(0, "address=%s" % ",".join(match["address"]))
    return " ".join(parts)


# -- the allow-list (accelerator_converge, and the role's check before any host is read) --
def _sum(value):
    text = str(value).strip().lower()
    return text[len("sha256:"):] if text.startswith("sha256:") else text


# the keys of a kind's section that pin a file by its checksum (the fpga kind's), each with the key of that file;
# read from the raw entry by name, so that the allow-list check loads no kind
PINNED_CHECKSUMS = (("sha256", "bitstream"), ("rollback_sha256", "rollback_bitstream"))


def not_allowed(functions, allowed, option="accelerator_host_allowed_functions"):
    """The entries of ``functions`` outside the allow-list ``allowed``, one line each: the entry's name must be
    listed (case-insensitive), and every checksum the entry pins (an FPGA entry's ``sha256`` and
    ``rollback_sha256``) too (items of 64 hex digits, optionally ``sha256:``, are checksums; the rest are names)."""
    names = set(str(a).lower() for a in allowed if not SHA256_RE.match(_sum(a)))
    sums = set(_sum(a) for a in allowed if SHA256_RE.match(_sum(a)))
    out = []
    for entry in functions:
        entry = entry if isinstance(entry, Mapping) else {}
        name = str(entry.get("name", "") if entry.get("name") is not None else "None")
        if name.lower() not in names:
            out.append("%s: function name not in %s" % (name, option))
        for section_name, section in entry.items():
            if section_name in ENTRY_KEYS or not isinstance(section, Mapping):
                continue
            for key, source in PINNED_CHECKSUMS:
                if section.get(key) and _sum(section[key]) not in sums:
                    out.append("%s: %s.%s %s (%s) not in %s"
                               % (name, section_name, key, _sum(section[key]), section.get(source, "?"), option))
    return out


def allow_list_refusal(host, functions, allowed, option="accelerator_host_allowed_functions"):
    """None, or the message a host whose declaration is outside its allow-list is refused with."""
    if allowed is None:
        return None
    outside = not_allowed(functions, allowed, option)
    if not outside:
        return None
    return ("accelerator_host: the declaration for %s is outside its allow-list, nothing was changed: %s"
            % (host, "; ".join(outside)))
