#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Documentation only: the action plugin of the same name (plugins/action/resolve_functions.py) runs it on the
# controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: resolve_functions
short_description: Map a function declaration onto one host's discovered cards
version_added: 0.1.0
description:
  - Validates a function declaration (C(accelerator_host_functions), see the collection's C(docs/declaration.md))
    and maps it onto the cards of one host, as discovered by M(accelops.lifecycle.accelerator_info). Runs on the
    controller, from its arguments alone.
  - Cards named by C(match.address) are taken as named. Selectors take every matching card, or with C(match.count)
    N of them chosen like Placement's preferred traits would; cards that already carry the function first, then
    free cards, by address; a card in use is never chosen to be changed. A card serves one function.
  - The converge, the Nova config, the libvirt and the Ironic roles resolve the declaration with the same code
    (C(plugins/module_utils/_declaration.py)), so host state, Placement, Nova and Ironic cannot drift apart.
  - Replaces the filter C(accelops.lifecycle.resolve_functions), now removed (same resolution, same messages).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
options:
  discovery:
    description: The discovery result of M(accelops.lifecycle.accelerator_info) (or its C(accelerators) list).
    type: raw
    required: true
  functions:
    description: The declaration, a list of function entries.
    type: list
    elements: dict
    required: true
seealso:
  - module: accelops.lifecycle.accelerator_info
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Which card gets which function on this host
  accelops.lifecycle.resolve_functions:
    discovery: "{{ discovery }}"
    functions: "{{ accelerator_host_functions }}"
  register: resolved

- name: Program the FPGA cards that need it
  accelops.lifecycle.fpga_program: "{{ item.module_args }}"
  loop: "{{ resolved.resolution.assignments | selectattr('kind', 'eq', 'fpga') | selectattr('change_needed') }}"
'''

RETURN = r'''
resolution:
  description: The resolution.
  returned: always
  type: dict
  contains:
    assignments:
      description:
        - One per card. Keys C(function), C(kind) (fpga, vgpu, vfs, mig, passthrough), C(trait), C(address), C(family),
          C(vendor_id), C(device_id), C(numa_node), C(programming_model), C(loaded) (the function id loaded now),
          C(change_needed), C(in_use), C(in_use_by) (evidence lines), C(blocked) (in use and needing a change),
          C(reason) (why this card), C(module) and C(module_args) (the programming module and its arguments),
          C(placement), C(nova).
      type: list
      elements: dict
    problems:
      description: Declared functions that cannot be met as asked, one sentence each.
      type: list
      elements: str
    function_names:
      description: Function id or vGPU type to declared name, for M(accelops.lifecycle.placement_provider_tree).
      type: dict
    summary:
      description: Per function, its kind, cards, number of changes and blocked cards.
      type: dict
'''
