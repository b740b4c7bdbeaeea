#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Documentation only: the action plugin of the same name (plugins/action/pool_plan.py) runs it on the controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: pool_plan
short_description: Plan which cards to reprogram so that each function pool keeps its minimum of free units
version_added: 0.1.0
description:
  - The decision behind the C(accelops.lifecycle.function_pools) role and C(playbooks/keep_pools.yml)
    (docs/pools.md), made on the controller. A pool names a function of a declaration (the format of
    C(accelerator_host_functions)), the hosts it counts over (inventory hosts, or the compute nodes of a Placement
    aggregate), C(min_free) and optionally C(max_free) and C(margin).
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
    (C(allowed_functions) of O(hosts)) allows.
  - A pool that cannot be brought to its minimum says so, by how much, and which cards were passed over and why.
  - The keeper's bookkeeping after the plan is done by M(accelops.lifecycle.pool_converge) and
    M(accelops.lifecycle.pool_report).
  - O(profiles) serves the device profiles no provider can satisfy through the same plan (the "spot instance"
    workflow) - each unsatisfiable profile becomes a pool whose minimum is one request, after the declared pools -
    one pool per function its groups ask for (C(trait:CUSTOM_FUNCTION_<NAME>=required), a function of
    O(functions)), named C(profile:<name>) (C(profile:<name>:<function>) when it asks for several), with C(min_free)
    the units its groups ask for (C(resources:<CLASS>=<n>); the largest when a group names several classes, summed
    over the groups asking for the same function), C(margin) 0, over O(profile_hosts). Satisfiable profiles are left
    alone. A profile with a group that asks for no function, for two, or for one no entry of O(functions) provides
    gets no pool and is reported not servable, with the reason.
  - Replaces the filter C(accelops.lifecycle.pool_plan), now removed (same decision, same messages).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
options:
  functions:
    description: The declaration (a list of function entries, the format of C(accelerator_host_functions)).
    type: list
    elements: dict
    required: true
  pools:
    description:
      - The pools, each with C(name), C(function), C(hosts) (an inventory group, or a list of group and host names)
        or C(aggregate) (a Placement aggregate uuid), C(min_free), and optionally C(max_free) and C(margin).
    type: list
    elements: dict
    required: true
  hosts:
    description:
      - Inventory host to C(placement_host), C(name_prefix), C(discovery) (M(accelops.lifecycle.accelerator_info)'s
        result) and C(allowed_functions) (null for no allow-list). Every host a pool counts must be here.
    type: dict
    required: true
  providers:
    description: M(accelops.lifecycle.placement_provider_info)'s providers of those hosts, with allocations.
    type: list
    elements: dict
    required: true
  groups:
    description: The inventory's groups (group name to host names), to read a pool's C(hosts) group names.
    type: dict
  aggregates:
    description: Aggregate uuid to its members, as M(accelops.lifecycle.placement_aggregate_info) returns them.
    type: dict
  margin:
    description: The default margin of the pools (hysteresis), an integer >= 0.
    type: int
    default: 1
  profiles:
    description:
      - M(accelops.lifecycle.device_profile_info)'s C(profiles), read with C(check_candidates=true) (each with
        C(satisfiable)). Omitted, no profile is served.
    type: list
    elements: dict
  profile_hosts:
    description: The hosts the profiles' pools count over - an inventory group, or a list of groups and hosts.
    type: raw
seealso:
  - module: accelops.lifecycle.pool_converge
  - module: accelops.lifecycle.pool_report
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Plan
  accelops.lifecycle.pool_plan:
    functions: "{{ function_pools_functions }}"
    pools: "{{ pools }}"
    hosts: "{{ hosts }}"
    providers: "{{ read.providers }}"
    groups: "{{ groups }}"
  run_once: true
  register: planned

- name: The plan, with the reason for every choice
  ansible.builtin.debug:
    msg: "{{ planned.plan.lines }}"

- name: Plan, also serving the device profiles no provider can satisfy (a pool each, minimum one request)
  accelops.lifecycle.pool_plan:
    functions: "{{ function_pools_functions }}"
    pools: "{{ pools }}"
    hosts: "{{ hosts }}"
    providers: "{{ read.providers }}"
    groups: "{{ groups }}"
    profiles: "{{ profiles_read.profiles }}"
    profile_hosts: fpga_hosts
  run_once: true
  register: planned
'''

RETURN = r'''
plan:
  description: The plan.
  returned: always
  type: dict
  contains:
    pools:
      description:
        - Per pool C(name), C(function), C(hosts), C(min_free), C(max_free), C(margin), C(total), C(reserved),
          C(used), C(free), C(deficit), C(surplus), C(planned_free), C(gain), C(shortfall), C(status) (ok,
          will-meet, cannot-meet) and C(message).
      type: list
      elements: dict
    actions:
      description:
        - Per card to change C(pool), C(function), C(kind), C(host), C(placement_host), C(address), C(change)
          (publish, load, reload, take), C(from), C(units), C(takes_from), C(providers) (uuid, name, generation as
          read) and C(reason).
      type: list
      elements: dict
    considered:
      description: Cards passed over, with the pool and the reason.
      type: list
      elements: dict
    declarations:
      description: Per host with an action, the declaration for the converge role.
      type: dict
    carrying:
      description: Per such host, card address to the pool function it carries now.
      type: dict
    drain:
      description: The providers to drain before the converge (for M(accelops.lifecycle.placement_provider_drain)).
      type: list
      elements: dict
    left_drains:
      description:
        - Every drained provider of the pools' cards, C(uuid), C(name), C(card) (host and address) and C(as_declared)
          (on this discovery the card carries a pool's function whose trait the provider has, and its host shows no
          use), for M(accelops.lifecycle.placement_provider_drain) O(accelops.lifecycle.placement_provider_drain#module:state=lifted),
          which lifts only the collection's own marked drains.
      type: list
      elements: dict
    profiles:
      description:
        - Per profile given, C(name), C(status) (satisfiable, served, not-servable), C(pools) (the pools made for it)
          and C(reason) (what it asks for, or why no pool can serve it).
      type: list
      elements: dict
    hosts:
      description: The hosts with an action.
      type: list
      elements: str
    function_names:
      description: Function id to declared name, for M(accelops.lifecycle.placement_provider_tree).
      type: dict
    lines:
      description: The plan in lines, with the reason for every choice.
      type: list
      elements: str
    summary:
      description: One line.
      type: str
'''
