# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: nova_device_config
short_description: Render the Nova and Cyborg configuration for one host's declared devices
version_added: 0.1.0
description:
  - Resolves a function declaration (C(accelerator_host_functions)) against one host's discovery result, the same
    way as M(accelops.lifecycle.resolve_functions), and renders what nova-compute needs to offer the
    assigned cards to guests, and the Cyborg agent drivers for the families left to Cyborg.
  - "vGPUs on mdev GPUs: C([devices] enabled_mdev_types) and C([mdev_<type>]) with C(device_addresses),
    C(mdev_class) (C(VGPU) unless the function declares a C(CUSTOM_*) resource class) and, for VF mdev parents,
    C(max_instances)."
  - "vGPUs on NVIDIA vendor-specific VFIO GPUs: one C([pci] device_spec) per VF that carries the type,
    with C(managed: no), a resource class (C(CUSTOM_VGPU_<NAME>) unless declared) and the function trait."
  - "VF functions: one C(device_spec) per PF (Nova matches VFs by their parent's address) with the VF product
    id. Whole devices (passthrough, FPGA without Cyborg): one C(device_spec) per card."
  - "C([pci] alias) for every PCI function: type-VF for VFs, type-PF for SR-IOV capable cards handed over whole,
    type-PCI otherwise; C(numa_policy) from the declaration; C(traits) and C(resource_class) with
    PCI-in-Placement."
  - The collection's C(docs/nova-config.md) explains each choice.
options:
  _input:
    description: The discovery result of M(accelops.lifecycle.accelerator_info) (or its C(accelerators) list).
    type: raw
    required: true
  functions:
    description: The declaration, a list of function entries (C(docs/declaration.md)).
    type: list
    elements: dict
    required: true
  report_in_placement:
    description:
      - Render C([pci] report_in_placement = True) and put C(traits) and C(resource_class) in the aliases
        (Nova's PCI-in-Placement). Once enabled on a compute node, Nova cannot turn it off there.
    type: bool
    default: true
  cyborg_families:
    description: Families (C(fpga), C(qat), C(gpu), C(nic)) whose functions are left to Cyborg instead of Nova.
    type: list
    elements: str
    default: []
  physical_networks:
    description:
      - Function name to Neutron physical network, for VF functions consumed as Neutron SR-IOV ports. Their
        C(device_spec) carries C(physical_network) and gets no alias.
    type: dict
    default: {}
  one_time_use:
    description:
      - Declared functions whose devices are one-time-use (Nova 34's C(device_spec) tag C(one_time_use)). After an
        instance had one, Nova keeps its provider reserved until it is reset and released (playbook
        C(accelops.lifecycle.reset_one_time_use)). Whole devices only; needs O(report_in_placement).
    type: list
    elements: str
    default: []
  host:
    description: Host name written in the files' header (default the discovered host name).
    type: str
  notifications:
    description:
      - Topics of Nova's versioned notifications to switch on in C(nova_conf) (C([notifications]
        notification_format = versioned), C(versioned_notifications_topics), C([oslo_messaging_notifications]
        driver = messagingv2)), for an event consumer such as the rulebook C(accelops.lifecycle.pools)
        (C(docs/events.md)). Empty leaves notifications as the deployment has them.
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: Render the Nova configuration for this host's declared devices
  ansible.builtin.set_fact:
    nova_devices: "{{ discovery | accelops.lifecycle.nova_device_config(accelerator_host_functions) }}"

- name: Write it where nova-compute reads it
  ansible.builtin.copy:
    content: "{{ nova_devices.nova_conf }}"
    dest: /etc/nova/nova.conf.d/50-accelops-devices.conf
    mode: "0640"
'''

RETURN = r'''
_value:
  description: The rendered configuration.
  type: dict
  contains:
    nova_conf:
      description: The nova-compute INI text (a marker comment, then the sections).
      type: str
    alias_conf:
      description:
        - The file for nova-api, nova-scheduler and nova-conductor nodes, the C([pci] alias) lines and, when
          O(report_in_placement) is true, C([filter_scheduler] pci_in_placement = True) (without it the scheduler
          does not ask Placement for the PCI devices and their function traits).
      type: str
    cyborg_conf:
      description: The cyborg.conf INI text (C([agent] enabled_drivers)); empty when nothing is left to Cyborg.
      type: str
    nova_sections:
      description: The sections as a list of C([name, [[key, value], ...]]); a repeated key is a multi-valued option.
      type: list
      elements: list
    mdev_types:
      description: One per mdev type, with C(type), C(device_addresses), C(mdev_class), C(max_instances), C(functions).
      type: list
      elements: dict
    device_specs:
      description: The C([pci] device_spec) entries as dicts.
      type: list
      elements: dict
    aliases:
      description: The C([pci] alias) entries as dicts.
      type: list
      elements: dict
    cyborg_drivers:
      description: Cyborg agent drivers for the families left to Cyborg.
      type: list
      elements: str
    functions:
      description: Per declared function, how it is offered (C(handled_by) nova-mdev, nova-pci or cyborg), its cards,
        alias, resource class, mdev type and the addresses in the config.
      type: dict
    problems:
      description: Declared functions that cannot be configured as asked, one sentence each (resolution included).
      type: list
      elements: str
    resolution:
      description: The resolution the configuration was rendered from (see M(accelops.lifecycle.resolve_functions)).
      type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import DeclarationError
from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy

_novaconf = lazy("_novaconf")


def nova_device_config(discovery, functions, report_in_placement=True, cyborg_families=None,
                       physical_networks=None, host=None, one_time_use=None, notifications=None):
    options = {"report_in_placement": report_in_placement, "cyborg_families": cyborg_families or [],
               "physical_networks": physical_networks or {}, "host": host, "one_time_use": one_time_use or []}
    try:
        return _novaconf.with_notifications(_novaconf.render(functions, discovery, options), notifications)
    except (DeclarationError, _novaconf.NovaConfigError) as e:
        raise AnsibleFilterError("nova_device_config: %s" % e)


class FilterModule(object):
    def filters(self):
        return {"nova_device_config": nova_device_config}
