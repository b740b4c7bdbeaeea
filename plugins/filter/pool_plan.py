# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: pool_plan
short_description: Plan which cards to reprogram so that each function pool keeps its minimum of free units
version_added: 0.1.0
description:
  - The decision behind the C(accelops.lifecycle.function_pools) role and C(playbooks/keep_pools.yml)
    (docs/pools.md). A pool names a function of a declaration (the format of C(accelerator_host_functions)), the
    hosts it counts over (inventory hosts, or the compute nodes of a Placement aggregate), C(min_free) and optionally
    C(max_free) and C(margin).
  - Free units are read from Placement - C(total - reserved - used) of every provider of the pool's hosts that
    carries the function's C(CUSTOM_FUNCTION_<NAME>) trait, whoever reports it.
  - For each pool below its minimum, in order, cards are chosen until the minimum is met - a card that carries
    the function but is not counted (its providers lack the trait, a report is enough), then a free card with
    nothing loaded, then a free card loaded with a function no pool keeps, then a free card of another pool's
    function when every pool of that function that counts it keeps at least C(min_free + margin) free units
    without it (hysteresis; pools above their C(max_free) are asked first). Within each, cards on hosts the plan
    changes already come first (fewest hosts changed), then by host and address.
  - A card with a unit in use, a Placement usage or allocation, or a drained provider is never chosen; a card is
    only offered a function its declaration entry's C(match) selects and the host's allow-list
    (C(accelerator_host_allowed_functions)) allows.
  - A pool that cannot be brought to its minimum says so, by how much, and which cards were passed over and why.
  - The keeper's bookkeeping after the plan is done by P(accelops.lifecycle.pool_converge#filter) and
    P(accelops.lifecycle.pool_report#filter).
  - C(profiles) serves the device profiles no provider can satisfy through the same plan (the "spot instance"
    workflow) - each unsatisfiable profile (M(accelops.lifecycle.device_profile_info)'s C(profiles), read with
    C(check_candidates=true)) becomes a pool whose minimum is one request, after the declared pools - one pool per
    function its groups ask for (C(trait:CUSTOM_FUNCTION_<NAME>=required), a function of C(functions)), named
    C(profile:<name>) (C(profile:<name>:<function>) when it asks for several), with C(min_free) the units its groups
    ask for (C(resources:<CLASS>=<n>); the largest when a group names several classes, summed over the groups
    asking for the same function), C(margin) 0, over C(profile_hosts). Satisfiable profiles are left alone. A
    profile with a group that asks for no function, for two, or for one no entry of C(functions) provides gets no
    pool and is reported not servable, with the reason.
options:
  _input:
    description:
      - C(functions) (the declaration), C(pools) (list of C(name), C(function), C(hosts) (an inventory group, or a
        list of group and host names) or C(aggregate) (a Placement aggregate uuid), C(min_free), C(max_free),
        C(margin)), C(groups) (the inventory's groups), C(aggregates) (aggregate uuid to its members, as
        M(accelops.lifecycle.placement_aggregate_info) returns them),
        C(hosts) (inventory host to C(placement_host), C(name_prefix),
        C(discovery) (M(accelops.lifecycle.accelerator_info)'s result) and C(allowed_functions)), C(providers)
        (M(accelops.lifecycle.placement_provider_info)'s providers of those hosts, with allocations) and
        C(margin) (the default margin, 1); optionally C(profiles) (M(accelops.lifecycle.device_profile_info)'s
        C(profiles), with C(satisfiable)) and C(profile_hosts) (the hosts their pools count over - an inventory
        group, or a list of groups and hosts).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Plan
  ansible.builtin.set_fact:
    plan: >-
      {{ {'functions': function_pools_functions, 'pools': pools, 'hosts': hosts, 'providers': read.providers}
         | accelops.lifecycle.pool_plan }}

- name: Plan, also serving the device profiles no provider can satisfy (a pool each, minimum one request)
  ansible.builtin.set_fact:
    plan: >-
      {{ {'functions': function_pools_functions, 'pools': pools, 'hosts': hosts, 'providers': read.providers,
          'profiles': profiles_read.profiles, 'profile_hosts': 'fpga_hosts'} | accelops.lifecycle.pool_plan }}

- name: The plan, with the reason for every choice
  ansible.builtin.debug:
    msg: "{{ plan.lines }}"
'''

RETURN = r'''
_value:
  description:
    - C(pools) - per pool C(name), C(function), C(hosts), C(min_free), C(max_free), C(margin), C(total),
      C(reserved), C(used), C(free), C(deficit), C(surplus), C(planned_free), C(gain), C(shortfall), C(status)
      (ok, will-meet, cannot-meet) and C(message).
    - C(actions) - per card to change C(pool), C(function), C(kind), C(host), C(placement_host), C(address),
      C(change) (publish, load, reload, take), C(from), C(units), C(takes_from), C(providers) (uuid, name,
      generation as read) and C(reason).
    - C(considered) - cards passed over, with the pool and the reason.
    - C(declarations) - per host with an action, the declaration for the converge role.
    - C(carrying) - per such host, card address to the pool function it carries now.
    - C(profiles) - per profile given, C(name), C(status) (satisfiable, served, not-servable), C(pools) (the pools
      made for it) and C(reason) (what it asks for, or why no pool can serve it).
    - C(hosts), C(function_names), C(lines), C(summary).
  type: dict
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import not_allowed
from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy

_pools = lazy("_pools")


def _settings(data, name):
    if not isinstance(data, Mapping):
        raise AnsibleFilterError("%s expects a dictionary, got %s" % (name, type(data).__name__))
    return data


def pool_plan(data):
    data = _settings(data, "pool_plan")
    try:
        return _pools.plan(data.get("functions"), data.get("pools"), data.get("hosts"), data.get("providers"),
                           margin=data.get("margin", _pools.DEFAULT_MARGIN), not_allowed=not_allowed,
                           groups=data.get("groups"), aggregates=data.get("aggregates"),
                           profiles=data.get("profiles"), profile_hosts=data.get("profile_hosts"))
    except _pools.PoolError as e:
        raise AnsibleFilterError("pool_plan: %s" % e)


class FilterModule(object):
    def filters(self):
        return {"pool_plan": pool_plan}
