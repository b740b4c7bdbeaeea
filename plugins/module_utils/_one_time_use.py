# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller half of one-time-use devices (the ``placement_one_time_use`` module): Nova's one-time-use
providers of one compute node in Placement, and their release once the host half reset them.

Nova 34 (``nova/compute/pci_placement_translator.py``) gives the provider of a device whose ``device_spec`` has
``one_time_use`` the trait ``HW_PCI_ONE_TIME_USE``, and when an instance is given the device it sets the
provider's ``reserved`` to its ``total``; it never sets it back ("they may be unreserved by an external entity, but
never nova"). So a provider with that trait, reserved in full and with nothing allocated, is a device waiting for
its reset. Releasing one is a read-modify-write under the provider generation: the inventories read with the
generation, written back with ``reserved`` 0 and that generation, read again when Placement answers that the
generation moved. Controller side.
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

ONE_TIME_USE_TRAIT = "HW_PCI_ONE_TIME_USE"


def address_of(name, root_name):
    """The device address in the name Nova gives a PCI provider (``<root>_<ADDRESS>``, upper-case hex), or None."""
    prefix = root_name + "_"
    if not name.startswith(prefix):
        return None
    return pci_address(name[len(prefix):].lower())


def _state(invs, usages):
    """``to_reset`` (reserved in full, nothing allocated), ``in_use`` (allocated) or ``free``."""
    if any(usages.get(rc, 0) for rc in invs):
        return "in_use"
    if invs and all(inv["total"] > 0 and inv.get("reserved", 0) >= inv["total"] for inv in invs.values()):
        return "to_reset"
    return "free"


def read(client, host, root_provider=None):
    """(root provider, [one-time-use provider: name, uuid, address, generation, state, inventories]) of ``host``.
    Raises P.PlacementInputError when its compute node provider is not found."""
    listed = client.get("/resource_providers")["resource_providers"]
    root, why = P.find_root(listed, host, root_provider)
    if root is None:
        raise P.PlacementInputError(why)
    out = []
    tree = client.get("/resource_providers?in_tree=%s" % root["uuid"])["resource_providers"]
    for rp in sorted(tree, key=lambda x: x["name"]):
        if rp["uuid"] == root["uuid"]:
            continue
        traits = client.get("/resource_providers/%s/traits" % rp["uuid"])["traits"]
        if ONE_TIME_USE_TRAIT not in traits:
            continue
        invs = client.get("/resource_providers/%s/inventories" % rp["uuid"])
        usages = client.get("/resource_providers/%s/usages" % rp["uuid"])["usages"]
        out.append({"name": rp["name"], "uuid": rp["uuid"], "address": address_of(rp["name"], root["name"]),
                    "generation": invs["resource_provider_generation"], "inventories": invs["inventories"],
                    "state": _state(invs["inventories"], usages), "reason": None})
    return root, out


def release(client, provider, retries, check_mode):
    """``reserved`` back to 0 on a provider read as ``to_reset``, under its generation; ``provider`` is updated
    with the outcome (``state``: ``released``, or ``kept`` with the ``reason``)."""
    u = provider["uuid"]
    for _attempt in range(retries + 1):
        cur = client.get("/resource_providers/%s/inventories" % u)
        usages = client.get("/resource_providers/%s/usages" % u)["usages"]
        state = _state(cur["inventories"], usages)
        if state != "to_reset":
            provider.update(state="kept" if state == "in_use" else state,
                            reason="allocated since it was read" if state == "in_use" else "not reserved any more")
            return provider
        if check_mode:
            provider["state"] = "released"
            return provider
        new = dict((rc, dict(inv, reserved=0)) for rc, inv in cur["inventories"].items())
        try:
            r = client.call("PUT", "/resource_providers/%s/inventories" % u,
                            {"inventories": new, "resource_provider_generation": cur["resource_provider_generation"]})
        except P.PlacementHTTPError as e:
            if e.status == 409 and e.code == "placement.concurrent_update":
                continue  # written in between (an allocation, Nova's periodic update): read and decide again
            raise
        provider.update(state="released", generation=r["resource_provider_generation"])
        return provider
    provider.update(state="kept", reason="its generation kept moving (%d conflicts): left reserved" % (retries + 1))
    return provider


def run(client, host, release_addresses, root_provider=None, retries=5, check_mode=False):
    """The module's run: every one-time-use provider of the host, and those of ``release_addresses`` (the devices
    the host half reset and verified) released. An address given that is not waiting for a reset is ``kept``
    with the reason."""
    _root, providers = read(client, host, root_provider)
    by_addr = dict((p["address"], p) for p in providers if p["address"])
    unknown = []
    for addr in release_addresses:
        p = by_addr.get(addr)
        if p is None:
            unknown.append({"address": addr, "reason": "no one-time-use provider of this host has this device"})
        elif p["state"] != "to_reset":
            p.update(state="kept", reason="not waiting for a reset (%s): left as it is" % p["state"])
        else:
            release(client, p, retries, check_mode)
    return {
        "providers": providers,
        "to_reset": [p["address"] for p in providers if p["state"] == "to_reset" and p["address"]],
        "released": [p["address"] for p in providers if p["state"] == "released"],
        "kept": [{"address": p["address"], "name": p["name"], "reason": p["reason"]}
                 for p in providers if p["state"] == "kept"] + unknown,
    }
