#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Documentation only: the action plugin of the same name (plugins/action/pool_converge.py) runs it on the controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: pool_converge
short_description: What the function pool keeper converges once the chosen cards are drained
version_added: 0.1.0
description:
  - Takes the keeper's plan (M(accelops.lifecycle.pool_plan)) and the result of draining the chosen cards'
    providers (M(accelops.lifecycle.placement_provider_drain)) and returns the actions still to carry out, the
    declaration of each host to hand to the C(accelops.lifecycle.accelerator_host) role, and the actions skipped
    because the drain refused a provider of their card (an allocation made since the plan's read, or a drain by
    someone else), each with the reason. Runs on the controller.
  - Replaces the filter C(accelops.lifecycle.pool_converge), now removed (same decision, same messages).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
options:
  plan:
    description: RV(accelops.lifecycle.pool_plan#module:plan).
    type: dict
    required: true
  functions:
    description: The declaration the plan was made from.
    type: list
    elements: dict
    required: true
  drain:
    description:
      - M(accelops.lifecycle.placement_provider_drain)'s result (a mapping with C(providers)), or null (or an empty
        list) when nothing was drained.
    type: raw
seealso:
  - module: accelops.lifecycle.pool_plan
  - module: accelops.lifecycle.pool_report
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: What to converge
  accelops.lifecycle.pool_converge:
    plan: "{{ planned.plan }}"
    functions: "{{ function_pools_functions }}"
    drain: "{{ drained }}"
  run_once: true
  register: todo
'''

RETURN = r'''
converge:
  description: What to converge.
  returned: always
  type: dict
  contains:
    actions:
      description: The plan's actions kept (their card was drained, or has nothing to drain).
      type: list
      elements: dict
    skipped:
      description: The plan's actions the drain refused, each with C(outcome) (skipped) and C(why).
      type: list
      elements: dict
    declarations:
      description: Inventory host to the declaration to converge it with.
      type: dict
    hosts:
      description: The hosts to converge.
      type: list
      elements: str
'''
