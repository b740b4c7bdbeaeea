#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: accelerator_host_settings
short_description: Record a host's accelerator_host settings, with why the host must be refused
version_added: 0.5.0
description:
  - The first task of the C(accelops.lifecycle.accelerator_host) role. Records one host's settings (registered,
    they are what M(accelops.lifecycle.accelerator_host_batch) reads for the host) and decides whether the host
    must be refused before anything is read or changed.
  - Two checks, in order. B(Settings.) O(functions) must be a list, O(mode) V(converge) or V(plan),
    O(allowed_functions) null or a list, and with O(placement) true either O(placement_endpoint) and
    O(placement_token), or O(cloud), or O(auth). B(Allow-list.) With O(allowed_functions) set, every declared
    entry's name must be listed (case-insensitive) and an FPGA entry's C(fpga.sha256) and C(fpga.rollback_sha256)
    too (items of 64 hex digits, optionally C(sha256:), are checksums; the rest are names). Every entry outside
    the list is named in RV(refusal).
  - A refused host is not failed here; its refusal is recorded and the role fails it on its summary.
  - Runs on the controller; reads nothing but its options.
version_added_collection: accelops.lifecycle
options:
  host:
    description: The inventory name of the host.
    type: str
    required: true
  root:
    description: The host's sysfs root (for the summary).
    type: str
    default: /
  plan_only:
    description: Plan mode (nothing is changed, drift is reported).
    type: bool
    default: false
  placement:
    description: Whether the host is reported to Placement.
    type: bool
    default: true
  placement_host:
    description: The host's compute node name in Placement (default O(host)).
    type: str
  root_provider:
    description: The root resource provider the host's providers hang under, when not its compute node.
    type: str
  name_prefix:
    description: The prefix of the host's provider names (default O(placement_host)).
    type: str
  undrain:
    description: Providers (or card addresses) whose drain the report releases.
    type: list
    elements: str
    default: []
  safe_mode:
    description: Never change a card in use.
    type: bool
    default: true
  fail_on_drift:
    description: In plan mode, fail the host on drift.
    type: bool
    default: false
  functions:
    description: The host's declaration (checked to be a list, and against O(allowed_functions)).
    type: raw
  mode:
    description: The role's mode, V(converge) or V(plan) (a value outside them is refused).
    type: raw
    default: converge
  allowed_functions:
    description: The allow-list, null or a list of function names and bitstream checksums.
    type: raw
  placement_endpoint:
    description: The Placement endpoint of the token form of the connection settings.
    type: raw
  placement_token:
    description: The token of the token form of the connection settings.
    type: raw
  cloud:
    description: The openstack.cloud C(cloud) setting.
    type: raw
  auth:
    description: The openstack.cloud C(auth) setting.
    type: raw
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - accelops.lifecycle._controller_action
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Record the host's settings (with the refusal of bad settings or a declaration outside the allow-list)
  accelops.lifecycle.accelerator_host_settings:
    host: "{{ inventory_hostname }}"
    functions: "{{ accelerator_host_functions }}"
    allowed_functions: "{{ accelerator_host_allowed_functions }}"
    placement: false
  register: settings
'''

RETURN = r'''
host:
  description: O(host).
  returned: success
  type: str
root:
  description: O(root).
  returned: success
  type: str
plan_only:
  description: O(plan_only).
  returned: success
  type: bool
placement:
  description: O(placement).
  returned: success
  type: bool
placement_host:
  description: O(placement_host), or O(host) when not set.
  returned: success
  type: str
root_provider:
  description: O(root_provider).
  returned: success
  type: str
name_prefix:
  description: O(name_prefix).
  returned: success
  type: str
undrain:
  description: O(undrain).
  returned: success
  type: list
  elements: str
safe_mode:
  description: O(safe_mode).
  returned: success
  type: bool
fail_on_drift:
  description: O(fail_on_drift).
  returned: success
  type: bool
refusal:
  description: Why the host is refused (the settings, or the entries outside the allow-list), or V(null).
  returned: success
  type: str
'''
