# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Placement's vocabulary as this collection uses it: provider names and uuids, the traits it owns, trait and
resource class validation, inventories and drains. No HTTP here."""

from __future__ import annotations

import copy
import re
import uuid as uuidlib

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import REPORTERS, reporter_provider_name  # noqa: F401 pylint: disable=unused-import

OWNER_TRAIT = "CUSTOM_OWNER_ACCELOPS"
FOREIGN_OWNER_TRAITS = ("OWNER_CYBORG", "OWNER_NOVA")
# The mark of a drain this collection made (reserved = total on its own provider): set with the drain, taken away
# with the undrain, so that a drain a killed run left can be told from an operator's (which has no mark). It is not
# a managed trait: a write that does not drain or undrain leaves it as it is. Which run made it is in the host's run
# record (accelerator_converge's journal; docs/reliability.md, "Killed runs").
DRAIN_TRAIT = "CUSTOM_ACCELOPS_DRAINED"
# Traits this module manages on providers it owns: what it sets now, and what it set before and must be
# able to take away (a function that changed, a NUMA node that moved). Everything else on its providers
# (an operator's CUSTOM_GOLD, a standard trait added by hand) is left as it is.
MANAGED_TRAIT_PREFIXES = (OWNER_TRAIT, "CUSTOM_ACCELERATOR_", "CUSTOM_VENDOR_", "CUSTOM_PRODUCT_",
                          "CUSTOM_PROGRAMMING_", "CUSTOM_NUMA_NODE_", "CUSTOM_FPGA_", "CUSTOM_FUNCTION_")
# The function traits: what the programming side may add or remove on a provider Cyborg or Nova owns.
FUNCTION_TRAIT_PREFIXES = ("CUSTOM_FUNCTION_", "CUSTOM_FPGA_FUNCTION_ID_")

STANDARD_RESOURCE_CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB", "PCI_DEVICE", "SRIOV_NET_VF", "NUMA_SOCKET",
                             "NUMA_CORE", "NUMA_THREAD", "NUMA_MEMORY_MB", "IPV4_ADDRESS", "VGPU",
                             "VGPU_DISPLAY_HEAD", "NET_BW_EGR_KILOBIT_PER_SEC", "NET_BW_IGR_KILOBIT_PER_SEC",
                             "PCPU", "MEM_ENCRYPTION_CONTEXT", "FPGA", "PGPU", "NET_PACKET_RATE_KILOPACKET_PER_SEC",
                             "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC", "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC")
try:  # the authoritative lists when the controller has them (requirements.txt lists both)
    import os_resource_classes as _orc
    STANDARD_RESOURCE_CLASSES = tuple(_orc.STANDARDS)
except ImportError:  # pragma: no cover
    pass
try:
    import os_traits as _os_traits
    STANDARD_TRAITS = frozenset(_os_traits.get_traits())
except ImportError:  # pragma: no cover
    STANDARD_TRAITS = None

INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
_STANDARD_TRAIT_FORM = re.compile(r"^[A-Z][A-Z0-9_]*$")


class PlacementInputError(ValueError):
    """Bad module input: the message names the option and the accepted form."""


# -- names -------------------------------------------------------------------------------------------------
def provider_name(host, address, reporter="accelops", mdev=False):
    """The name ``reporter`` gives the provider of ``address`` under ``host`` (_vocab.reporter_provider_name)."""
    return reporter_provider_name(host, address, reporter, mdev=mdev)


def legacy_provider_name(host, address):
    """What this collection named its own providers before reporters (Cyborg's form): renamed in place."""
    return "%s_%s" % (host, address)


def provider_uuid(name):
    """``uuid3(NAMESPACE_DNS, name)``: Cyborg's provider uuid, and this collection's for its own providers."""
    return str(uuidlib.uuid3(uuidlib.NAMESPACE_DNS, name))


# -- traits and resource classes ----------------------------------------------------------------------------
def check_trait(name, option):
    """A trait name Placement accepts: a standard trait (os-traits) or ``CUSTOM_[A-Z0-9_]+`` (255 max)."""
    if not isinstance(name, str) or not name:
        raise PlacementInputError("%s: a trait must be a non-empty string, got %r" % (option, name))
    if _naming.is_valid(name):
        return name
    if not name.startswith(_naming.PREFIX) and _STANDARD_TRAIT_FORM.match(name) and \
            (STANDARD_TRAITS is None or name in STANDARD_TRAITS):
        return name
    try:
        suggestion = _naming.custom(name)
    except ValueError:
        suggestion = None
    raise PlacementInputError(
        "%s: %r is not a valid trait: use a standard trait (os-traits) or CUSTOM_ followed by upper-case "
        "letters, digits and underscores, at most %d characters%s"
        % (option, name, _naming.MAX_LENGTH, " (for example %s)" % suggestion if suggestion else ""))


def check_resource_class(name, option):
    """A standard resource class (os-resource-classes) or ``CUSTOM_[A-Z0-9_]+``."""
    if isinstance(name, str) and (name in STANDARD_RESOURCE_CLASSES or _naming.is_valid(name)):
        return name
    try:
        suggestion = _naming.custom(name) if isinstance(name, str) else None
    except ValueError:
        suggestion = None
    raise PlacementInputError(
        "%s: %r is not a resource class Placement knows: use a standard class (FPGA, PGPU, VGPU, SRIOV_NET_VF, "
        "PCI_DEVICE, ...) or CUSTOM_ followed by upper-case letters, digits and underscores%s"
        % (option, name, " (for example %s)" % suggestion if suggestion else ""))


def is_managed_trait(trait, extra=()):
    return trait in extra or any(trait == p or (p.endswith("_") and trait.startswith(p))
                                 for p in MANAGED_TRAIT_PREFIXES)


def is_function_trait(trait):
    return any(trait.startswith(p) for p in FUNCTION_TRAIT_PREFIXES)


def owner_of(traits):
    if OWNER_TRAIT in traits:
        return "accelops"
    if "OWNER_CYBORG" in traits:
        return "cyborg"
    if "OWNER_NOVA" in traits:
        return "nova"
    return None


# -- inventories and drains ---------------------------------------------------------------------------------
# The consumer whose allocation drains a unit that Nova or Cyborg reports: one per provider, so a hold is found,
# grown and released by the provider's uuid alone. Nova rewrites its providers' inventories, reserved included, on
# every periodic update, but never another consumer's allocation; Placement refuses an inventory below what is
# allocated, so the units stay held until the hold is released (docs/placement.md, "Drain").
HOLD_NAMESPACE = uuidlib.UUID("6f1d3c1e-4a0b-5c8e-9d2f-acce1005d4a1")
HOLD_PROJECT = "accelops-drain"
HOLD_CONSUMER_TYPE = "ACCELOPS_DRAIN"


def hold_consumer(provider_uuid):
    return str(uuidlib.uuid5(HOLD_NAMESPACE, provider_uuid))


def inventory(total, reserved=0, min_unit=1, max_unit=None, step_size=1, allocation_ratio=1.0):
    total = int(total)
    return {"total": total, "reserved": int(reserved), "min_unit": int(min_unit),
            "max_unit": int(max_unit if max_unit is not None else max(total, 1)), "step_size": int(step_size),
            "allocation_ratio": float(allocation_ratio)}


def same_inventories(a, b):
    if set(a) != set(b):
        return False
    for rc in a:
        for f in INVENTORY_FIELDS:
            x, y = a[rc].get(f), b[rc].get(f)
            if f == "allocation_ratio":
                if abs(float(x if x is not None else 1.0) - float(y if y is not None else 1.0)) > 1e-6:
                    return False
            elif x != y:
                return False
    return True


def is_drained(invs):
    """Drained: it has inventory and every class has ``reserved >= total`` (nothing can be scheduled)."""
    return bool(invs) and all(i.get("reserved", 0) >= i.get("total", 0) for i in invs.values())


def keep_drain(current, wanted):
    """``wanted`` with ``reserved = total`` on every class when ``current`` (what Placement has now) is
    drained: someone drained the provider (an operator, another run) and the write must not undo it."""
    if not wanted or not is_drained(current):
        return wanted
    out = copy.deepcopy(wanted)
    for inv in out.values():
        inv["reserved"] = inv["total"]
    return out


def left_drain(provider, as_declared):
    """What a run does with a drain it finds on one of its host's providers and did not make itself
    (``provider``: placement_provider_info's record; ``as_declared``: the provider's card carries its declared
    function in this run and is not being changed). ``("lift", why)`` for the collection's own drain (the mark, or
    the hold) on a card as declared with nothing else allocated: a run killed between its drain and its undrain
    left it. ``("left", why)`` otherwise: an operator's drain (no mark) is never lifted. None when not drained."""
    if not provider.get("drained"):
        return None
    if not (DRAIN_TRAIT in (provider.get("traits") or []) or provider.get("held")):
        return ("left", "drained without the collection's mark (an operator's drain): left so")
    if not as_declared:
        return ("left", "the collection's drain, on a card not as declared: left so")
    if provider.get("in_use"):
        return ("left", "the collection's drain, with allocations on it: left so")
    return ("lift", "the collection's drain, left by an earlier run that did not end: lifted")
