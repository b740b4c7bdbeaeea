# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: provision
short_description: Choose cards to converge so that unsatisfiable device profiles get candidates
version_added: 0.1.0
description:
  - The choice behind C(playbooks/provision_profiles.yml). For each device profile with no allocation candidate,
    finds the function it asks for (its C(CUSTOM_FUNCTION_<NAME>) trait) in O(functions) and picks free cards that
    can carry it, in this order, as Placement's preferred traits would
    - a card that already carries the function (only its Placement traits are missing), then a free card with
    nothing loaded, then a free card loaded with something else on the host with the fewest changes planned.
  - A card is free when discovery shows none of its units in use and Placement shows no allocation on its
    providers. Every card considered is listed with the reason it was or was not chosen.
options:
  _input:
    description: The unsatisfiable profiles (C(device_profile_info)'s C(profiles) entries, at least C(name) and
      C(groups)).
    type: list
    elements: dict
    required: true
  functions:
    description: Function name to how it is loaded, C({bitstream, sha256, function_id}) for an FPGA or
      C({vgpu_type}) for a GPU.
    type: dict
    required: true
  hosts:
    description: Host name (as its Placement providers are named) to its discovery result
      (M(accelops.lifecycle.accelerator_info)).
    type: dict
    required: true
  providers:
    description: The hosts' providers from M(accelops.lifecycle.placement_provider_info) (C(name), C(in_use)).
    type: list
    elements: dict
    default: []
'''

EXAMPLES = r'''
- name: Choose
  ansible.builtin.set_fact:
    choice: "{{ checked.profiles | rejectattr('satisfiable') | accelops.lifecycle.provision(functions, discovered, placement.providers) }}"
'''

RETURN = r'''
_value:
  description: C(actions) (profile, function, kind, host, address, change publish/load/reload, how to load, reason),
    C(unplaceable) (profile, reason), C(considered) (every card looked at, chosen or not, and why),
    C(function_names) (for M(accelops.lifecycle.placement_provider_tree)) and C(hosts) (the hosts with actions).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy

_provision = lazy("_provision")


def provision(profiles, functions, hosts, providers=None):
    try:
        return _provision.plan(profiles, functions, hosts or {}, providers or [])
    except _provision.ProvisionInputError as e:
        raise AnsibleFilterError("provision: %s" % e)


class FilterModule(object):
    def filters(self):
        return {"provision": provision}
