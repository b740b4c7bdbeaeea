#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: placement_one_time_use
short_description: List Nova's one-time-use devices waiting for a reset in Placement, and release reset ones
version_added: 0.1.0
description:
  - The controller half of Nova's one-time-use PCI devices (C(device_spec) tag C(one_time_use), Nova 34). Nova gives
    such a device's provider the trait C(HW_PCI_ONE_TIME_USE), and once an instance had the device it sets the
    provider's C(reserved) to its C(total) and never sets it back, so that the next tenant cannot get the device
    before someone has reset it.
  - Lists the one-time-use providers of one compute node (O(host)) with their state; RV(to_reset) are the devices
    reserved in full with nothing allocated, the ones to reset with M(accelops.lifecycle.one_time_use_reset).
  - Releases (C(reserved) back to 0) the devices of O(release), which must be only those the host half reset and
    verified. Each release is a read-modify-write under the provider generation; a device that is not waiting for a
    reset (allocated, or not reserved) is left as it is and listed in RV(kept) with the reason.
  - The playbook C(accelops.lifecycle.reset_one_time_use) runs the list, the reset and the release for every host.
extends_documentation_fragment:
  - accelops.lifecycle._openstack
  - accelops.lifecycle._retries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads Placement and reports what it would release, writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: all
    details: Runs on the controller (or wherever C(delegate_to) points); needs openstacksdk.
options:
  host:
    description: The compute node whose providers are read, found as M(accelops.lifecycle.placement_provider_tree)
      finds it (its name, its short name, or an FQDN whose short name matches).
    type: str
    required: true
  root_provider:
    description: The compute node provider's name or uuid, when it is not found from O(host).
    type: str
  release:
    description: PCI addresses of the devices to release (V(0000:83:00.0)), those that
      M(accelops.lifecycle.one_time_use_reset) lists in its C(reset).
    type: list
    elements: str
    default: []
  conflict_retries:
    description: How many times a generation conflict is resolved by reading again.
    type: int
    default: 5
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: The one-time-use devices of compute1 waiting for a reset
  accelops.lifecycle.placement_one_time_use:
    cloud: mycloud
    host: compute1
  register: otu

- name: Release those the host reset and verified
  accelops.lifecycle.placement_one_time_use:
    cloud: mycloud
    host: compute1
    release: "{{ reset.reset }}"
'''

RETURN = r'''
providers:
  description: The host's one-time-use providers.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The provider's name (Nova's C(<root>_<ADDRESS>)).
      type: str
    uuid:
      description: Its uuid.
      type: str
    address:
      description: The device's PCI address.
      type: str
    state:
      description: V(to_reset) (reserved in full, nothing allocated), V(in_use), V(free), V(released) (by this run),
        or V(kept) (in O(release) but not released, see C(reason)).
      type: str
    reason:
      description: Why it was kept, or null.
      type: str
    generation:
      description: The provider generation last read or written.
      type: int
    inventories:
      description: Its inventories as read.
      type: dict
to_reset:
  description: Addresses of the devices waiting for a reset (after this run's releases).
  returned: always
  type: list
  elements: str
released:
  description: Addresses released by this run (in check mode, those it would release).
  returned: always
  type: list
  elements: str
kept:
  description: The devices of O(release) not released, each with its C(address), C(name) and C(reason).
  returned: always
  type: list
  elements: dict
requests:
  description: HTTP requests sent to Placement.
  returned: always
  type: int
'''

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _one_time_use as O
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address


class PlacementOneTimeUseModule(OpenStackModule):
    argument_spec = dict(
        host=dict(type="str", required=True),
        root_provider=dict(type="str"),
        release=dict(type="list", elements="str", default=[]),
        conflict_retries=dict(type="int", default=5),
        **RETRY_ARGUMENT_SPEC
    )
    module_kwargs = dict(supports_check_mode=True, ranges={"conflict_retries": (0, 100)})

    def run(self):
        p = self.params
        addresses = []
        for a in p["release"]:
            addr = pci_address(a)
            if addr is None:
                self.ansible.fail_json(msg="release: %r is not a PCI address (accepted: 0000:83:00.0, or 83:00.0 for "
                                           "domain 0)" % (a,))
            addresses.append(addr)
        try:
            adapter = P.discover(self.conn, p["request_retries"], p["request_retry_delay"])[0]
            client = P.Client(adapter, read_only=self.ansible.check_mode, retries=p["request_retries"],
                              retry_delay=p["request_retry_delay"])
            out = O.run(client, p["host"], addresses, p["root_provider"], p["conflict_retries"],
                        self.ansible.check_mode)
        except (P.PlacementInputError, P.PlacementHTTPError, ServiceUnavailable) as e:
            self.ansible.fail_json(msg=str(e))
        self.ansible.exit_json(changed=bool(out["released"]), requests=client.requests, **out)


def main():
    PlacementOneTimeUseModule()()


if __name__ == "__main__":
    main()
