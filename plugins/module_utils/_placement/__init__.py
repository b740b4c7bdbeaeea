# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Placement for accelerators: from discovery records to a desired provider tree, and a converger that
writes only the difference, with ownership, drain, pruning and generation-conflict handling.

Controller side. One file per concern:

- ``model``: names, uuids, owned traits, trait and resource class checks, inventories and drains;
- ``family_specs``: the per-family provider mapping (resource class, total and traits of each family's record);
- ``desired``: one host's discovery to its desired providers (overrides, drain, keep_drained);
- ``client``: HTTP, on the shared ``_openstack.ServiceClient`` (one retry, timeout and error path with the
  Cyborg and Ironic clients);
- ``read``: the root look-up, the tree read once per run, the generation cache, the info reader;
- ``tree``: planning and the converger.

The names below are what callers use (``from ..module_utils import _placement as P``). See docs/placement.md
for the model and the request budget.
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming  # noqa: F401 (P._naming)
from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (  # noqa: F401
    REQUEST_RETRIES, REQUEST_RETRY_DELAY, REQUEST_TIMEOUT, RETRY_DELAY_CAP, TRANSIENT_STATUS, ServiceUnavailable,
    check_retry_options)
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.client import (  # noqa: F401
    MICROVERSION, MIN_MICROVERSION, Client, PlacementBodyError, PlacementConnectionError, PlacementHTTPError, discover,
    shaped)
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.desired import (  # noqa: F401
    _records, desired_providers, discovery_hostname)
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.family_specs import (  # noqa: F401
    _device_specs, _function_traits)
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import (  # noqa: F401
    DRAIN_TRAIT, HOLD_CONSUMER_TYPE, REPORTERS, FOREIGN_OWNER_TRAITS, FUNCTION_TRAIT_PREFIXES, INVENTORY_FIELDS, MANAGED_TRAIT_PREFIXES, OWNER_TRAIT,
    STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS, PlacementInputError, check_resource_class, check_trait, inventory,
    is_drained, is_function_trait, is_managed_trait, hold_consumer, keep_drain, left_drain, legacy_provider_name, owner_of,
    provider_name,
    provider_uuid,
    same_inventories)
from ansible_collections.accelops.lifecycle.plugins.module_utils._naming import safe_trait  # noqa: F401
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.read import (  # noqa: F401
    GenerationCache, TreeState, default_cache_path, find_root, read_providers, short_name)
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.tree import (  # noqa: F401
    ACTIONS, Converger, by_host, converge, is_reported_elsewhere, merge_traits, named_after_root, plan_host, put_hold,
    read_hold, release_hold, required_custom_names)
