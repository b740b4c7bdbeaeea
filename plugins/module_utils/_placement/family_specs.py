# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What Placement providers (resource class, total, traits) one discovery record becomes. The traits every
provider carries and the function traits are the same for every family and are made here; what differs between
families (resource class, inventory, extra traits, the name of a discovered function) is the family's, in its
driver file (``_drivers/``: ``host_provider_specs``/``provider_specs``, ``discovered_function_trait``,
``vfs_pooled_in_pf``)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record
from ansible_collections.accelops.lifecycle.plugins.module_utils._naming import safe_trait
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import OWNER_TRAIT


def _function_traits(rec, fn, function_names):
    """The traits of a loaded function: the discovery's own trait (made valid; named by the family when
    discovery gave none), and the friendly ``CUSTOM_FUNCTION_<NAME>`` when the declaration names the function."""
    if not fn:
        return []
    out = []
    fid = fn.get("id")
    if fn.get("trait"):
        out.append(safe_trait(fn["trait"]))
    else:
        own = for_record(rec).discovered_function_trait(rec, fn)
        if own:
            out.append(own)
    friendly = None
    if function_names:
        for key in (fid, fn.get("name")):
            if key is not None and str(key) in function_names:
                friendly = function_names[str(key)]
                break
    if friendly:
        out.append(_naming.function_trait(friendly))
    return out


def _common_traits(rec):
    t = [OWNER_TRAIT]
    fam = rec.get("family")
    if fam:
        t.append(_naming.family_trait(fam))
    vid, did = rec.get("vendor_id"), rec.get("device_id")
    if vid:
        t.append(_naming.trait("VENDOR", vid))
        if did:
            t.append(_naming.trait("PRODUCT", vid, did))
    if rec.get("programming_model"):
        t.append(_naming.programming_model_trait(rec["programming_model"]))
    numa = rec.get("numa_node")
    if isinstance(numa, int) and numa >= 0:
        t.append(_naming.trait("NUMA_NODE", str(numa)))
    return t


def _device_specs(rec, by_addr, function_names):
    """[(address, resource_class or None, total, traits, note)] for one discovery record; ``by_addr``: the host's
    records by address (a family whose card is a PF and its VFs reads the others there)."""
    family = for_record(rec)
    physfn = rec.get("physfn")
    if family.vfs_pooled_in_pf and physfn and physfn in by_addr:
        return []  # a VF of a PF that is itself reported: the PF's provider is the pool
    return family.host_provider_specs(rec, by_addr, _common_traits(rec),
                                      lambda fn: _function_traits(rec, fn, function_names))
