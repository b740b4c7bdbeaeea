#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Documentation only: the action plugin of the same name (plugins/action/pool_report.py) runs it on the controller.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: pool_report
short_description: Each function pool before and after a keeper run, and what became of each planned card
version_added: 0.1.0
description:
  - The function pool keeper's report, made on the controller. From the plan (M(accelops.lifecycle.pool_plan)),
    the drain's result (M(accelops.lifecycle.placement_provider_drain)), each converged host's
    C(accelerator_host_report) and a Placement read after the run, it says for each pool its free units before and
    after against its minimum (and by how much it is short), and for each planned card whether it was changed,
    reported, skipped (with the drain's reason), failed or not converged.
  - C(release) lists the providers this run drained whose card the converge did not take over (its host failed
    before draining it) - the keeper releases them. A card the converge left drained (it did not verify) stays so.
  - A pool that stays short does not fail this task; with O(fail_on_shortfall) the report's C(failure) says why the
    run fails, for the caller to fail on.
  - Replaces the filter C(accelops.lifecycle.pool_report), now removed (same decision, same messages).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
options:
  plan:
    description: RV(accelops.lifecycle.pool_plan#module:plan).
    type: dict
    required: true
  hosts:
    description: The hosts, as for M(accelops.lifecycle.pool_plan)'s O(accelops.lifecycle.pool_plan#module:hosts).
    type: dict
    required: true
  providers:
    description: A Placement read after the run (M(accelops.lifecycle.placement_provider_info)'s providers), or
      null before it.
    type: list
    elements: dict
  drain:
    description: M(accelops.lifecycle.placement_provider_drain)'s result, or null.
    type: raw
  converge:
    description: Inventory host to its C(accelerator_host_report) (null for a host not converged).
    type: dict
  apply:
    description: Whether anything was carried out.
    type: bool
    default: false
  fail_on_shortfall:
    description: Set C(failure) when a pool stays short or a profile of the plan cannot be served by a pool.
    type: bool
    default: false
seealso:
  - module: accelops.lifecycle.pool_plan
  - module: accelops.lifecycle.pool_converge
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Report
  accelops.lifecycle.pool_report:
    plan: "{{ planned.plan }}"
    providers: "{{ after.providers }}"
    hosts: "{{ hosts }}"
    drain: "{{ drained }}"
    converge: "{{ reports }}"
    apply: true
  run_once: true
  register: reported
'''

RETURN = r'''
report:
  description: The report.
  returned: always
  type: dict
  contains:
    pools:
      description: Per pool C(name), C(function), C(min_free), C(max_free), C(before), C(after), C(planned),
        C(shortfall), C(used_after).
      type: list
      elements: dict
    actions:
      description: The plan's actions, each with C(outcome) and C(why).
      type: list
      elements: dict
    release:
      description: The providers this run drained that the converge did not take over, to release.
      type: list
      elements: dict
    lines:
      description: The report in lines (with the plan's unsatisfiable profiles that no pool can serve).
      type: list
      elements: str
    failure:
      description: Null, or why the run fails (with O(fail_on_shortfall), a pool that stays short or such a profile).
      type: str
'''
