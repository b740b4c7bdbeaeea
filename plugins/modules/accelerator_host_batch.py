#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: accelerator_host_batch
short_description: The accelerator_host role's decisions for one serial batch of hosts
version_added: 0.5.0
description:
  - The C(accelops.lifecycle.accelerator_host) role records each host's settings
    (M(accelops.lifecycle.accelerator_host_settings)), its plan and apply (M(accelops.lifecycle.accelerator_converge))
    and the batch's Placement read, check, drain and report; this action, run once per batch on the controller,
    decides from them what each next step of the batch does, and in the end each host's report.
  - A host's state is decided once from its record, at each step from what has run so far - the cards it may
    change (a card with Placement evidence of use is blocked in safe mode), its error, the drift, what it reports.
  - Reads nothing but its options (no host or role variables); a host of O(settings) whose settings are null or
    empty does not run the role in this batch and is left out.
options:
  step:
    description:
      - Which decision to make.
      - V(plan), after the hosts' plans - RV(reads) and RV(check) and RV(changing).
      - V(drain), after the Placement read - RV(drain).
      - V(apply), after the drain - RV(apply).
      - V(report), after the hosts' apply - RV(report).
      - V(summary), at the end - RV(hosts) and RV(reports).
    type: str
    required: true
    choices: [plan, drain, apply, report, summary]
  settings:
    description: By inventory name, each host's registered M(accelops.lifecycle.accelerator_host_settings) result.
    type: dict
    required: true
  plans:
    description: By inventory name, each host's registered plan (M(accelops.lifecycle.accelerator_converge) in check
      mode; skipped or null when it did not run).
    type: dict
    default: {}
  applied:
    description: By inventory name, each host's registered apply (M(accelops.lifecycle.accelerator_converge)).
    type: dict
    default: {}
  placement_read:
    description: The batch's registered M(accelops.lifecycle.placement_provider_info) loop (null when not run).
    type: dict
  placement_check:
    description: The batch's registered M(accelops.lifecycle.placement_provider_tree) plan-mode check.
    type: dict
  placement_drain:
    description: The batch's registered M(accelops.lifecycle.placement_provider_tree) drain.
    type: dict
  placement_report:
    description: The batch's registered M(accelops.lifecycle.placement_provider_tree) report.
    type: dict
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
attributes:
  platform:
    platforms: all
    details: Runs on the controller; the role runs it with C(run_once), once per batch.
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Which hosts of the batch need a Placement read (once per batch)
  accelops.lifecycle.accelerator_host_batch:
    step: plan
    settings: "{{ dict(ansible_play_batch | zip(ansible_play_batch | map('extract', hostvars)
                  | map(attribute='my_settings', default={}))) }}"
    plans: "{{ dict(ansible_play_batch | zip(ansible_play_batch | map('extract', hostvars)
               | map(attribute='my_plan', default={}))) }}"
  run_once: true
  register: batch_plan
'''

RETURN = r'''
reads:
  description: V(plan) - the M(accelops.lifecycle.placement_provider_info) requests (C(hosts) or C(root_provider)),
    a loop; only hosts with a card to change (or a record of their last run), every host in plan mode.
  returned: step plan
  type: list
  elements: dict
check:
  description: V(plan) - plan mode, the O(accelops.lifecycle.placement_provider_tree#module:hosts) to compare with
    Placement.
  returned: step plan
  type: list
  elements: dict
changing:
  description: V(plan) - the inventory names of the hosts whose plan changes a card (before the Placement read).
  returned: step plan
  type: list
  elements: str
drain:
  description: V(drain) - the O(accelops.lifecycle.placement_provider_tree#module:hosts) whose cards about to change
    are drained.
  returned: step drain
  type: list
  elements: dict
apply:
  description: V(apply) - by inventory name, C(cards) (the addresses the host changes now) and C(placement_in_use);
    only the hosts that change cards.
  returned: step apply
  type: dict
report:
  description: V(report) - the O(accelops.lifecycle.placement_provider_tree#module:hosts) of the batch's report,
    each with its discovery after the change, the drains to keep and those to release.
  returned: step report
  type: list
  elements: dict
hosts:
  description: V(summary) - the inventory names of the batch's hosts that run the role.
  returned: step summary
  type: list
  elements: str
reports:
  description: V(summary) - by inventory name, the host's report (the role's C(accelerator_host_report), described
    in its README - C(cards), C(changed), C(blocked), C(failed), C(placement), C(lines), C(failure), ...).
  returned: step summary
  type: dict
'''
