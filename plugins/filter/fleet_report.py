# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: fleet_report
short_description: The fleet's accelerator capacity, hosts, drift and device profiles, ready to render
version_added: 0.1.0
description:
  - Assembles what C(playbooks/report.yml) renders as one static HTML page, from the hosts' discovery results and
    declarations, Placement's providers of their trees and Cyborg's device profiles with their allocation
    candidates. The same model as the M(accelops.lifecycle.fleet_report) action (which C(playbooks/report.yml)
    runs), for a template or a C(set_fact); the page's template only prints it.
  - Capacity counts every provider with an inventory in the hosts' trees, whoever reports it (this collection,
    Cyborg, Nova). For each inventory, C(used) is Placement's usage, C(free) is C(total - reserved - used) (never
    below 0), C(drained) are the units held back on a drained inventory (C(reserved >= total)) that are not used,
    C(reserved) the units held back by a reservation that is not a drain. C(not_loaded) are the unused units of a
    provider whose card is declared for the provider's function but does not carry it yet (drift); they are not
    free capacity of that function, and C(free) leaves them out.
  - A provider's function is its C(CUSTOM_FUNCTION_<NAME>) or Cyborg's C(CUSTOM_FPGA_FUNCTION_ID_<VENDOR>_<ID>)
    trait, named by the declaration that publishes it (C(gzip)), else by the discovery record that carries it
    (C(GRID T4-2Q)), else the trait itself. A provider whose traits name a declared function is counted under that
    function only; one without any function trait is counted under V(null) (no function) with its resource class.
  - Per host, every card discovery reports (VFs folded into their PF), the function it carries, the declared one,
    in-use evidence from the host (libvirt domains, processes) and from Placement (usages, consumers), and the
    drift, the declaration against the host (a card to change, a blocked card, a declared function that cannot be
    met) and the host against Placement (a card without a provider, a provider missing the declared function's
    trait, a provider of this collection without a card).
options:
  _input:
    description:
      - A dictionary. C(hosts) is a list, one item per host with C(name), C(placement_host) (its compute node
        provider's name, default C(name)), C(discovery) (the result of M(accelops.lifecycle.accelerator_info)),
        C(functions) (its declaration, C(accelerator_host_functions), may be empty) and C(error) (why it could not
        be read, or null); an item may be null for a host that was not reached, named by the same position in
        C(names).
      - C(placement) is a list of registered results of M(accelops.lifecycle.placement_provider_info) for the hosts'
        trees (one for all hosts, or one per host in a loop; a failed one, with the host in C(item), puts its
        message in the host's drift). C(providers) may give the providers list directly instead.
      - C(profiles) is RV(accelops.lifecycle.device_profile_info#module:profiles), read with C(check_candidates).
      - C(generated) (when the data was read, a string) and C(title) are printed as given.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Assemble the report
  ansible.builtin.set_fact:
    fleet: >-
      {{ {'hosts': report_hosts, 'providers': placement.providers, 'profiles': profiles.profiles,
          'generated': now(utc=true).isoformat(), 'title': 'Accelerators'} | accelops.lifecycle.fleet_report }}

- name: Where can a gzip FPGA land?
  ansible.builtin.debug:
    msg: "{{ (fleet.functions | selectattr('function', 'eq', 'gzip') | first).where }}"
'''

RETURN = r'''
_value:
  description: The report.
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
          C(hosts_with_drift), C(profiles), C(unsatisfiable), and C(classes), per resource class C(total),
          C(used), C(free), C(drained), C(reserved) and C(not_loaded).
      type: dict
    functions:
      description:
        - One row per function and resource class, sorted by function (no function last).
        - C(function) (the name, or V(null)), C(trait), C(resource_class), C(declared) (a declaration names it),
          C(total), C(used), C(free), C(drained), C(reserved), C(not_loaded), C(providers), C(hosts) (per host its C(total) and
          C(free)), C(where) (the hosts with free units, most first), C(bar) (chart segments, C(kind), C(units),
          C(pct)).
      type: list
      elements: dict
    hosts:
      description:
        - One per host, sorted by name. C(name), C(placement_host), C(error), C(in_placement), C(cards) (each with
          C(address), C(family), C(model), C(carries) (the declared name of the function it carries, else
          discovery's name or id), C(function_id), C(declared), C(status) (V(as declared), V(to change),
          V(blocked), V(not declared)), C(in_use), C(evidence), C(drained) and C(providers)), C(other_providers)
          (providers of the host's tree with no card, such as Cyborg's, with their function and inventories), C(drift), C(capacity) (C(total), C(used), C(free),
          C(drained), C(reserved), C(not_loaded)) and C(bar).
      type: list
      elements: dict
    profiles:
      description:
        - One per device profile, sorted by name. C(name), C(description), C(groups) (one readable string each),
          C(asks) (per group the function, resource class, count, and C(free_in_fleet), the free units of the
          providers with the group's resource class and required traits and none of its forbidden ones),
          C(satisfiable) (V(null) when not checked), C(candidates), C(hosts) and C(reason).
      type: list
      elements: dict
    unsatisfiable:
      description: Names of the profiles without a candidate.
      type: list
      elements: str
'''

from ansible.errors import AnsibleFilterError

# the model is worked out in plugin_utils (the fleet_report action calls the same); these names stay importable here
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import (  # noqa: F401 pylint: disable=unused-import
    FleetReportError, bar_segments, build, provider_function, units)


def fleet_report(data):
    try:
        return build(data)
    except FleetReportError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):
    def filters(self):
        return {"fleet_report": fleet_report}
