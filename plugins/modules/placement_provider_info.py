#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: placement_provider_info
short_description: Read accelerator resource providers from OpenStack Placement
version_added: 0.1.0
description:
  - Returns the resource providers of one or more hosts (the compute node provider and its children), or
    every provider this collection owns (trait C(CUSTOM_OWNER_ACCELOPS)), with inventories, usages, traits and
    allocations, so in-use checks and reports can use Placement's view as well as the host's.
  - Read-only.
extends_documentation_fragment:
  - accelops.lifecycle._openstack
  - accelops.lifecycle._retries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Read-only; runs the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: all
    details: Runs on the controller (or wherever C(delegate_to) points); needs openstacksdk.
options:
  hosts:
    description:
      - Host names whose compute node provider trees are returned. Each is matched like
        M(accelops.lifecycle.placement_provider_tree) does (the name, its short name, or a FQDN with the same short
        name).
      - Without O(hosts) and O(root_provider), every provider this collection owns is returned.
    type: list
    elements: str
  root_provider:
    description:
      - Name or uuid of one compute node provider whose tree is returned.
    type: str
  owned_only:
    description:
      - Return only providers carrying C(CUSTOM_OWNER_ACCELOPS) (the roots of the trees are left out too).
    type: bool
    default: false
  include_allocations:
    description:
      - Also read each provider's allocations (one more request per provider).
    type: bool
    default: true
notes:
  - "Retries (O(request_retries)): every request of this module is a read, safe to repeat."
author:
  - accelops.lifecycle contributors (@accelops)
seealso:
  - module: accelops.lifecycle.placement_provider_tree
'''

EXAMPLES = r'''
- name: What Placement knows about two hosts' accelerators
  accelops.lifecycle.placement_provider_info:
    cloud: mycloud
    hosts: [compute1, compute2]
  register: placement_view
  delegate_to: localhost

- name: Which of this collection's providers are in use
  ansible.builtin.debug:
    msg: "{{ placement_view.providers | selectattr('in_use') | map(attribute='name') | list }}"
'''

RETURN = r'''
providers:
  description: The providers, each with its state in Placement.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Provider name.
      type: str
    uuid:
      description: Provider uuid.
      type: str
    generation:
      description: Provider generation.
      type: int
    parent_provider_uuid:
      description: Parent provider (null for a root).
      type: str
    root_provider_uuid:
      description: Root provider.
      type: str
    host:
      description: The host (as asked for in O(hosts)) whose tree it is in, when O(hosts) was given.
      type: str
    owner:
      description: accelops, cyborg, nova or null, from the owner traits.
      type: str
    traits:
      description: Its traits.
      type: list
      elements: str
    inventories:
      description: Its inventories by resource class.
      type: dict
    usages:
      description: What is used of each resource class.
      type: dict
    allocations:
      description:
        - Consumers and what they hold here, keyed by consumer uuid, each with C(resources) by resource class.
        - Empty when O(include_allocations=false).
      type: dict
    in_use:
      description: Whether any of its resources are used (a drain hold of this collection's is not use).
      type: bool
    drained:
      description: Whether every inventory has C(reserved) equal to C(total) (no new allocations fit), or this
        collection holds its free units (a unit Nova or Cyborg reports, drained by a hold).
      type: bool
    held:
      description: The units this collection's drain hold allocates, by resource class; null when there is none
        (or with O(include_allocations=false)).
      type: dict
  sample:
    - name: compute1_accelops_0000:3b:00.0
      uuid: 6a4c2e8d-0a53-3b1c-9c55-1b0f3c7c9d11
      generation: 3
      parent_provider_uuid: 4e8e5957-649f-477b-9e5b-f1f75b21c03c
      root_provider_uuid: 4e8e5957-649f-477b-9e5b-f1f75b21c03c
      host: compute1
      owner: accelops
      traits: [CUSTOM_ACCELERATOR_FPGA, CUSTOM_OWNER_ACCELOPS]
      inventories: {FPGA: {total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0}}
      usages: {FPGA: 1}
      allocations: {"0a1b2c3d-0000-4000-8000-000000000001": {resources: {FPGA: 1}}}
      in_use: true
      drained: false
      held: null
requests:
  description: HTTP requests sent to Placement.
  returned: always
  type: int
'''

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P


class PlacementProviderInfoModule(OpenStackModule):
    argument_spec = dict(
        hosts=dict(type="list", elements="str"),
        root_provider=dict(type="str"),
        owned_only=dict(type="bool", default=False),
        include_allocations=dict(type="bool", default=True),
        **RETRY_ARGUMENT_SPEC
    )
    module_kwargs = dict(supports_check_mode=True, mutually_exclusive=[("hosts", "root_provider")])

    def run(self):
        try:
            adapter = P.discover(self.conn, self.params["request_retries"], self.params["request_retry_delay"])[0]
            result = P.read_providers(adapter, hosts=self.params["hosts"],
                                      root_provider=self.params["root_provider"],
                                      owned_only=self.params["owned_only"],
                                      include_allocations=self.params["include_allocations"],
                                      retries=self.params["request_retries"],
                                      retry_delay=self.params["request_retry_delay"])
        except (P.PlacementInputError, P.PlacementHTTPError, ServiceUnavailable) as e:
            self.ansible.fail_json(msg=str(e))
        self.ansible.exit_json(changed=False, **result)


def main():
    PlacementProviderInfoModule()()


if __name__ == "__main__":
    main()
