#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Documentation only: the action plugin of the same name (plugins/action/provision_plan.py) runs it on the controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: provision_plan
short_description: Choose cards to converge so that unsatisfiable device profiles get candidates
version_added: 0.1.0
description:
  - The choice behind C(playbooks/provision_profiles.yml), made on the controller. For each device profile with no
    allocation candidate, finds the function it asks for (its C(CUSTOM_FUNCTION_<NAME>) trait) in O(functions) and
    picks free cards that can carry it, in this order, as Placement's preferred traits would - a card that already
    carries the function (only its Placement traits are missing), then a free card with nothing loaded, then a free
    card loaded with something else on the host with the fewest changes planned.
  - A card is free when discovery shows none of its units in use and Placement shows no allocation on its
    providers. Every card considered is listed with the reason it was or was not chosen.
  - Replaces the filter C(accelops.lifecycle.provision), now removed (same decision, same messages).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
options:
  profiles:
    description: The unsatisfiable profiles (M(accelops.lifecycle.device_profile_info)'s C(profiles) entries, at
      least C(name) and C(groups)).
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
seealso:
  - module: accelops.lifecycle.pool_plan
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Choose
  accelops.lifecycle.provision_plan:
    profiles: "{{ checked.profiles | rejectattr('satisfiable') }}"
    functions: "{{ functions }}"
    hosts: "{{ discovered }}"
    providers: "{{ placement.providers }}"
  register: choice
'''

RETURN = r'''
plan:
  description: The choice.
  returned: always
  type: dict
  contains:
    actions:
      description: Per card, C(profile), C(function), C(kind), C(host), C(address), C(change) (publish, load, reload),
        how to load it and C(reason).
      type: list
      elements: dict
    unplaceable:
      description: Per profile that gets nothing, C(profile) and C(reason).
      type: list
      elements: dict
    considered:
      description: Every card looked at, chosen or not, and why.
      type: list
      elements: dict
    function_names:
      description: Function id or vGPU type to name, for M(accelops.lifecycle.placement_provider_tree).
      type: dict
    hosts:
      description: The hosts with actions.
      type: list
      elements: str
'''
