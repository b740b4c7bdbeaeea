#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: baremetal_node_accelerators
short_description: Set an Ironic bare-metal node's accelerator traits and properties.accelerators
version_added: 0.1.0
description:
  - Prepares one Ironic node (by name or uuid) so that Nova flavors with C(trait:CUSTOM_FUNCTION_<NAME>=required)
    land on nodes whose cards carry that function.
  - Sets the traits this collection owns on the node and merges them with the traits it does not own, which are
    kept as they are. Owned are the namespaces of M(accelops.lifecycle.placement_provider_tree)
    (C(CUSTOM_OWNER_ACCELOPS), C(CUSTOM_ACCELERATOR_*), C(CUSTOM_VENDOR_*), C(CUSTOM_PRODUCT_*),
    C(CUSTOM_PROGRAMMING_*), C(CUSTOM_NUMA_NODE_*), C(CUSTOM_FPGA_*), C(CUSTOM_FUNCTION_*)) and the marker
    C(CUSTOM_ACCELOPS_PREPARED), which every node this module prepared carries. Owned traits the node should no
    longer carry are removed.
  - Traits are added and removed one at a time, never replaced wholesale, so traits another writer adds meanwhile
    survive. Ironic allows 50 traits per node; a change that would exceed that fails before anything is written,
    naming the traits on each side.
  - Sets C(properties.accelerators) in the form Ironic's own inspection hook writes (a list of C(vendor_id),
    C(device_id), C(type), C(pci_address), C(device_info)); the node's other properties are kept.
  - The traits and accelerators are given as they are (O(traits), O(accelerators)) or computed from the node's
    discovery result (O(discovery)) and the function declaration (O(functions), see C(docs/declaration.md)).
  - See C(docs/ironic.md) in the collection.
extends_documentation_fragment:
  - accelops.lifecycle._openstack
  - accelops.lifecycle._retries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the node and reports the plan; sends no request that writes.
  diff_mode:
    support: full
    details: The node's traits and C(properties.accelerators) before and after.
  platform:
    platforms: all
    details: Runs on the controller (or wherever C(delegate_to) points); needs openstacksdk.
options:
  node:
    description:
      - Name or uuid of the Ironic node.
    type: str
    required: true
  state:
    description:
      - V(present) sets the owned traits (with the marker C(CUSTOM_ACCELOPS_PREPARED)) and
        C(properties.accelerators); V(absent) removes every owned trait and C(properties.accelerators).
    type: str
    choices: [present, absent]
    default: present
  traits:
    description:
      - Owned traits the node must carry, besides those computed from O(discovery) and O(functions).
      - Each must be C(CUSTOM_) followed by upper-case letters, digits and underscores and be in one of the
        owned namespaces; other traits are not this module's to set.
    type: list
    elements: str
    default: []
  accelerators:
    description:
      - The list for C(properties.accelerators), each with C(vendor_id) and C(device_id) (4 hex digits, quoted),
        C(type) (for example C(GPU)), C(pci_address) and optionally C(device_info).
      - Defaults to what O(discovery) reports for the O(families); without either, C(properties.accelerators)
        is left as it is.
    type: list
    elements: dict
  discovery:
    description:
      - The node's discovery result (what M(accelops.lifecycle.accelerator_info) returned on the machine, or its
        C(accelerators) list), for O(accelerators), the hardware traits and, with O(functions), the function
        traits.
    type: raw
  functions:
    description:
      - The function declaration (C(accelerator_host_functions)). Each declared function that at least one card
        carries (see O(function_state)) gives the node the trait C(CUSTOM_FUNCTION_<NAME>). Needs O(discovery).
    type: list
    elements: dict
  function_state:
    description:
      - V(loaded) gives a function's trait only when a card carries the function now (it is programmed);
        V(declared) as soon as a card is assigned to it (when programming happens later, for example in a
        deploy step).
    type: str
    choices: [loaded, declared]
    default: loaded
  families:
    description:
      - Which families of cards O(discovery) contributes to C(properties.accelerators) and the hardware traits.
    type: list
    elements: str
    choices: [gpu, fpga, qat, nic, pci]
    default: [gpu, fpga, qat]
  hardware_traits:
    description:
      - Also set C(CUSTOM_ACCELERATOR_<FAMILY>), C(CUSTOM_VENDOR_<VID>) and C(CUSTOM_PRODUCT_<VID>_<PID>) for
        the cards in O(discovery), and the traits discovery gives their loaded functions
        (C(CUSTOM_FPGA_FUNCTION_ID_*), a vGPU type's C(CUSTOM_FUNCTION_*)).
    type: bool
    default: true
  lock_retries:
    description:
      - How many times a write refused because a conductor holds the node (HTTP 409 C(NodeLocked)) is retried
        (V(0) to V(100)).
    type: int
    default: 3
  lock_delay:
    description:
      - Seconds between those retries (V(0) to V(600)).
    type: float
    default: 2.0
notes:
  - "Retries (O(request_retries)): every request of this module is safe to repeat (a trait is added or removed by
    name, a removal repeated after a lost answer accepts HTTP 404, C(properties.accelerators) is set to a whole
    value)."
  - Needs Ironic API 1.37 or later (node traits); the module sends 1.37.
  - Nova copies a node's traits onto its resource provider; a changed trait reaches the scheduler at
    nova-compute's next update of that node.
author:
  - accelops.lifecycle contributors (@accelops)
seealso:
  - module: accelops.lifecycle.accelerator_info
  - module: accelops.lifecycle.placement_provider_tree
'''

EXAMPLES = r'''
- name: Discover the machine while it runs an operating system we can reach
  accelops.lifecycle.accelerator_info:
  register: found

- name: Prepare its Ironic node from the declaration
  accelops.lifecycle.baremetal_node_accelerators:
    cloud: mycloud
    node: "{{ inventory_hostname }}"
    discovery: "{{ found }}"
    functions: "{{ accelerator_host_functions }}"
  delegate_to: localhost

- name: Set explicit traits and accelerators
  accelops.lifecycle.baremetal_node_accelerators:
    cloud: mycloud
    node: 5f3c9c1e-1d7b-4a34-9f7a-3c1f0d3a2b10
    traits: [CUSTOM_FUNCTION_GZIP]
    accelerators:
      - {vendor_id: "8086", device_id: "0b30", type: FPGA, pci_address: "0000:86:00.0", device_info: "Intel PAC N3000"}
  delegate_to: localhost

- name: Take this collection's traits and properties.accelerators off a node
  accelops.lifecycle.baremetal_node_accelerators:
    cloud: mycloud
    node: bm-07
    state: absent
  delegate_to: localhost
'''

RETURN = r'''
node:
  description: The node.
  returned: always
  type: dict
  contains:
    uuid:
      description: Its uuid.
      type: str
    name:
      description: Its name (null when it has none).
      type: str
    provision_state:
      description: Its provision state.
      type: str
    maintenance:
      description: Whether it is in maintenance.
      type: bool
  sample: {uuid: 5f3c9c1e-1d7b-4a34-9f7a-3c1f0d3a2b10, name: bm-07, provision_state: available, maintenance: false}
traits:
  description: The node's traits after the run (what they would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [CUSTOM_ACCELOPS_PREPARED, CUSTOM_FUNCTION_GZIP, CUSTOM_GOLD]
owned_traits:
  description: The traits of this collection's namespaces the node carries after the run.
  returned: always
  type: list
  elements: str
foreign_traits:
  description: The node's traits this module does not manage (kept as they are).
  returned: always
  type: list
  elements: str
added:
  description: Traits added.
  returned: always
  type: list
  elements: str
removed:
  description: Traits removed.
  returned: always
  type: list
  elements: str
accelerators:
  description: C(properties.accelerators) after the run (null when the node has none).
  returned: always
  type: list
  elements: dict
  sample:
    - {vendor_id: "10de", device_id: "1eb8", type: GPU, pci_address: "0000:3b:00.0",
       device_info: "NVIDIA Corporation TU104GL [Tesla T4]"}
accelerators_changed:
  description: Whether C(properties.accelerators) was (or would be) changed.
  returned: always
  type: bool
functions:
  description:
    - Per declared function (with O(functions)), its trait, the cards assigned, those that carry it now and those
      still to be programmed, and whether the node gets the trait.
  returned: always
  type: dict
  sample: {gzip: {trait: CUSTOM_FUNCTION_GZIP, cards: ["0000:5e:00.0"], carrying: ["0000:5e:00.0"], pending: [],
                  on_node: true}}
problems:
  description: Declared functions that cannot be met as asked on this node (also given as warnings).
  returned: always
  type: list
  elements: str
requests:
  description: Requests sent to Ironic (C(reads), C(writes)), retries of locked-node writes (C(lock_retries)) and
    of requests that got no answer or an HTTP 5xx (C(retried)).
  returned: always
  type: dict
'''

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable, check_retry_options, service_proxy)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _ironic as I


class BaremetalNodeAcceleratorsModule(OpenStackModule):
    argument_spec = dict(
        node=dict(type="str", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        traits=dict(type="list", elements="str", default=[]),
        accelerators=dict(type="list", elements="dict"),
        discovery=dict(type="raw"),
        functions=dict(type="list", elements="dict"),
        function_state=dict(type="str", default="loaded", choices=list(I.FUNCTION_STATES)),
        families=dict(type="list", elements="str", default=list(I.DEFAULT_FAMILIES),
                      choices=list(I.ACCELERATOR_TYPES)),
        hardware_traits=dict(type="bool", default=True),
        lock_retries=dict(type="int", default=3),
        lock_delay=dict(type="float", default=2.0),
        **RETRY_ARGUMENT_SPEC
    )
    # the lower bounds (0) are checked in run(), naming both options
    module_kwargs = dict(supports_check_mode=True, ranges={"lock_retries": (None, 100), "lock_delay": (None, 600, "seconds")})

    def desired(self):
        """(owned traits, accelerators or None, functions detail, problems) from the options."""
        p = self.params
        traits = set(I.check_traits(p["traits"], "traits"))
        accelerators = None
        detail, problems = {}, []
        if p["functions"] and p["discovery"] is None:
            raise I.IronicInputError("functions: needs discovery (the node's accelerator_info result) to know which "
                                     "cards carry which function")
        if p["discovery"] is not None:
            families = I.check_families(p["families"])
            accelerators = I.accelerators_from_discovery(p["discovery"], families)
            if p["hardware_traits"]:
                traits.update(I.hardware_traits(p["discovery"], families))
                traits.update(I.loaded_function_traits(p["discovery"], families))
            fn_traits, detail, problems = I.function_traits(p["discovery"], p["functions"], p["function_state"])
            traits.update(fn_traits)
        if p["accelerators"] is not None:
            accelerators = I.check_accelerators(p["accelerators"])
        return sorted(traits), accelerators, detail, problems

    def run(self):
        p = self.params
        if p["lock_retries"] < 0 or p["lock_delay"] < 0:
            self.ansible.fail_json(msg="lock_retries and lock_delay: must be 0 or more, got %s and %s"
                                       % (p["lock_retries"], p["lock_delay"]))
        try:
            check_retry_options(p["request_retries"], p["request_retry_delay"])
        except ValueError as e:
            self.ansible.fail_json(msg=str(e))
        try:
            if p["state"] == "present":
                traits, accelerators, detail, problems = self.desired()
            else:
                traits, accelerators, detail, problems = [], None, {}, []
            adapter = service_proxy(lambda: self.conn.baremetal, "Ironic", p["request_retries"], p["request_retry_delay"])
            client = I.Client(adapter, lock_retries=p["lock_retries"], lock_delay=p["lock_delay"],
                              retries=p["request_retries"], retry_delay=p["request_retry_delay"])
            result = I.converge(client, p["node"], traits, accelerators, state=p["state"],
                                check_mode=self.ansible.check_mode)
        except I.IronicInputError as e:
            self.ansible.fail_json(msg=str(e))
        except I.IronicHTTPError as e:
            self.ansible.fail_json(msg="Ironic refused a request for node %s: %s" % (p["node"], e))
        except ServiceUnavailable as e:
            self.ansible.fail_json(msg="%s (node %s)" % (e, p["node"]))
        for problem in problems:
            self.ansible.warn(problem)
        diff = result.pop("diff")
        if self.ansible._diff:
            result["diff"] = diff
        self.ansible.exit_json(functions=detail, problems=problems, **result)


def main():
    BaremetalNodeAcceleratorsModule()()


if __name__ == "__main__":
    main()
