#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: fleet_report
short_description: The fleet's accelerator capacity, hosts, drift and device profiles, ready to render
version_added: 0.5.0
description:
  - Works out what C(playbooks/report.yml) renders as one static HTML page, from the hosts' discovery results and
    declarations, Placement's providers of their trees and Cyborg's device profiles with their allocation
    candidates; the page's template only prints RV(report). It replaces the filter of the same name, now removed
    (the same model).
  - What each card is (in use, allocated, held, drained, as declared, to change, blocked) is decided by the same
    rule the converge, the pool keeper and the provisioner use. A drain hold of this collection's is not use.
  - Capacity counts every provider with an inventory in the hosts' trees, whoever reports it (this collection,
    Cyborg, Nova). For each inventory, C(used) is Placement's usage, C(free) is C(total - reserved - used) (never
    below 0), C(drained) are the units held back on a drained inventory (C(reserved >= total)) that are not used,
    C(reserved) the units held back by a reservation that is not a drain. C(not_loaded) are the unused units of a
    provider whose card is declared for the provider's function but does not carry it yet (drift); they are not
    free capacity of that function, and C(free) leaves them out.
  - Runs on the controller; reads nothing but its options.
options:
  hosts:
    description:
      - One item per host with C(name), C(placement_host) (its compute node provider's name, default C(name)),
        C(discovery) (the result of M(accelops.lifecycle.accelerator_info)), C(functions) (its declaration,
        C(accelerator_host_functions), may be empty) and C(error) (why it could not be read, or null).
      - An item may be null for a host that was not reached, named by the same position in O(names).
    type: list
    elements: raw
    default: []
  names:
    description: The hosts' names, in the order of O(hosts).
    type: list
    elements: str
    default: []
  placement:
    description:
      - Registered results of M(accelops.lifecycle.placement_provider_info) for the hosts' trees (one for all hosts,
        or one per host in a loop; a failed one, with the host in C(item), puts its message in the host's drift).
    type: list
    elements: raw
    default: []
  providers:
    description: The providers list of M(accelops.lifecycle.placement_provider_info), instead of (or besides) O(placement).
    type: list
    elements: raw
    default: []
  placement_errors:
    description: Per host, why its providers could not be read.
    type: dict
    default: {}
  profiles:
    description: RV(accelops.lifecycle.device_profile_info#module:profiles), read with C(check_candidates).
    type: list
    elements: raw
    default: []
  generated:
    description: When the data was read, printed as given.
    type: str
  title:
    description: The page title.
    type: str
    default: Accelerator fleet
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Work out the report
  accelops.lifecycle.fleet_report:
    hosts: "{{ report_hosts }}"
    providers: "{{ placement.providers }}"
    profiles: "{{ profiles.profiles }}"
    generated: "{{ now(utc=true).isoformat() }}"
  register: fleet

- name: Where can a gzip FPGA land?
  ansible.builtin.debug:
    msg: "{{ (fleet.report.functions | selectattr('function', 'eq', 'gzip') | first).where }}"
'''

RETURN = r'''
report:
  description: The report.
  returned: success
  type: dict
  contains:
    title:
      description: The page title.
      type: str
    generated:
      description: When the data was read, as given.
      type: str
    summary:
      description:
        - C(hosts), C(cards), C(providers) (with an inventory), C(drained_providers), C(drift) (items),
          C(hosts_with_drift), C(hosts_failed), C(profiles), C(unsatisfiable), and C(classes), per resource class
          C(total), C(used), C(free), C(drained), C(reserved) and C(not_loaded).
      type: dict
    functions:
      description:
        - One row per function and resource class, sorted by function (no function last).
        - C(function) (the name, or V(null)), C(trait), C(resource_class), C(declared) (a declaration names it),
          C(total), C(used), C(free), C(drained), C(reserved), C(not_loaded), C(providers), C(hosts) (per host its
          C(total) and C(free)), C(where) (the hosts with free units, most first), C(bar) (chart segments, C(kind),
          C(units), C(pct)).
      type: list
      elements: dict
    hosts:
      description:
        - One per host, sorted by name. C(name), C(placement_host), C(error), C(in_placement), C(cards) (each with
          C(address), C(family), C(model), C(carries), C(function_id), C(declared), C(status) (V(as declared),
          V(to change), V(blocked), V(not declared)), C(in_use), C(evidence), C(drained) and C(providers)),
          C(other_providers), C(drift), C(capacity) and C(bar).
      type: list
      elements: dict
    profiles:
      description:
        - One per device profile, sorted by name. C(name), C(description), C(groups), C(asks) (per group the
          function, resource class, count and C(free_in_fleet)), C(satisfiable) (V(null) when not checked),
          C(candidates), C(hosts) and C(reason).
      type: list
      elements: dict
    unsatisfiable:
      description: Names of the profiles without a candidate.
      type: list
      elements: str
'''
