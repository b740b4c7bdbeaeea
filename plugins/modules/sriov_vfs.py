#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sriov_vfs
short_description: Set the SR-IOV virtual functions of a PCI physical function
version_added: 0.1.0
description:
  - Sets the number of VFs of an SR-IOV PF (the kernel needs 0 before another non-zero count, so a change goes
    through 0), optionally binds every VF to one driver (for example V(vfio-pci), through C(driver_override),
    C(unbind) and C(drivers_probe)), and sets a NIC VF's MAC address, VLAN and trust with C(ip link set DEV vf N).
  - Refuses, before changing anything, when a VF that would be removed, rebound or reconfigured is in use (a
    running libvirt domain or a process holding its VFIO group), and says which and why.
  - Computes one plan; check mode reports that plan without running it. When a step fails, the steps already
    done are undone in reverse order and the result says what was rolled back and, if an undo failed, what is
    still in effect.
  - With O(persistent), a boot script and a systemd unit (ordered before libvirtd, virtqemud and nova-compute) bring
    the VFs back after a reboot.
  - Every change is written to the system log (an audit line with the device, old and new value and the user)
    and returned in RV(audit).
  - Standard library only on the managed host (Python 3.9 or later).
author:
  - accelops.lifecycle contributors (@accelops)
extends_documentation_fragment:
  - accelops.lifecycle._host
  - accelops.lifecycle._plan
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
options:
  address:
    description:
      - PCI address of the PF (V(0000:d8:00.0), or V(d8:00.0) for domain 0).
    type: str
    required: true
  num_vfs:
    description:
      - How many VFs the PF should have; V(0) removes them all.
      - At most the PF's C(sriov_totalvfs).
    type: int
    required: true
  vf_driver:
    description:
      - Bind every VF to this driver (for example V(vfio-pci) for PCI passthrough). The driver must be loaded.
      - Not set, the VFs keep the driver the kernel gives them.
    type: str
  vfs:
    description:
      - Settings of single VFs of a network PF, applied with C(ip link set DEV vf INDEX ...) on the PF's
        interface. Current values are read with C(ip -d -j link show dev DEV), so only differences are applied.
    type: list
    elements: dict
    default: []
    suboptions:
      index:
        description: The VF index (0 to O(num_vfs) - 1).
        type: int
        required: true
      mac:
        description: Unicast MAC address of the VF.
        type: str
      vlan:
        description: Port VLAN id (V(0) for none, at most 4094).
        type: int
      trust:
        description: Whether the VF is trusted (may change its MAC, enter promiscuous mode).
        type: bool
  force:
    description:
      - Go ahead when the only evidence that a VF is in use is a process holding its VFIO group (for example a
        stale test program). A VF that a running libvirt domain has is never removed or changed.
    type: bool
    default: false
  persistent:
    description:
      - Restore the VFs at boot. Writes C(/etc/accelops/boot/accelops-sriov-ADDRESS.sh) and the systemd unit
        C(accelops-sriov-ADDRESS.service) (enabled for C(multi-user.target)) under O(persist_root).
      - V(false) leaves existing boot files alone, except that O(num_vfs=0) without O(vf_driver) removes them.
    type: bool
    default: true
  persist_root:
    description:
      - Directory under which the boot files are written. Defaults to O(root).
    type: path
  tool_timeout:
    description:
      - Seconds a tool (C(ip)) may run before it is stopped and the change fails (and is rolled back).
      - From V(0) (no limit) to V(86400).
    type: int
    default: 60
notes:
  - The C(ip) tool is looked up under O(root) (C(/usr/sbin), C(/usr/bin), ...), as discovery finds its tools.
seealso:
  - module: accelops.lifecycle.accelerator_info
  - module: accelops.lifecycle.vgpu
'''

EXAMPLES = r'''
- name: Eight VFs for PCI passthrough
  accelops.lifecycle.sriov_vfs:
    address: "0000:d8:00.0"
    num_vfs: 8
    vf_driver: vfio-pci

- name: Four VFs with fixed MACs, the first one on VLAN 100 and trusted
  accelops.lifecycle.sriov_vfs:
    address: "0000:d8:00.1"
    num_vfs: 4
    vfs:
      - {index: 0, mac: "52:54:00:00:01:00", vlan: 100, trust: true}
      - {index: 1, mac: "52:54:00:00:01:01"}

- name: Remove every VF (and the boot unit)
  accelops.lifecycle.sriov_vfs:
    address: "0000:d8:00.0"
    num_vfs: 0
'''

RETURN = r'''
address:
  description: The PF's normalised address.
  returned: when the address was valid
  type: str
  sample: "0000:d8:00.0"
totalvfs:
  description: The PF's C(sriov_totalvfs).
  returned: when the address was valid
  type: int
num_vfs_before:
  description: The VF count before the run.
  returned: when the address was valid
  type: int
num_vfs:
  description: The VF count asked for.
  returned: when the address was valid
  type: int
vfs:
  description: The VFs' addresses after the run (computed from the PF's offset and stride in check mode).
  returned: when the address was valid
  type: list
  elements: str
plan:
  description: The steps of the plan (description, target, before, after, reversible), in order.
  returned: always
  type: list
  elements: dict
applied:
  description: The steps that ran (in check mode, that would run).
  returned: always
  type: list
  elements: str
rolled_back:
  description: Steps undone after a later step failed.
  returned: always
  type: list
  elements: str
rollback_failed:
  description: Steps whose undo failed (step and error); they are still in effect.
  returned: always
  type: list
  elements: dict
state:
  description: After a failure, V(unchanged) (everything rolled back) or V(partial) (see RV(still_applied)).
  returned: on failure
  type: str
still_applied:
  description: After a failure, the steps still in effect.
  returned: on failure
  type: list
  elements: str
blocked:
  description: The VFs that are in use and would have changed (target, reason, evidence).
  returned: when refused because of use
  type: list
  elements: dict
audit:
  description: The audit lines written to the system log, one per change.
  returned: always
  type: list
  elements: str
'''


from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import run_program
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import PROGRAM


def main():
    run_program(PROGRAM)


if __name__ == "__main__":
    main()
