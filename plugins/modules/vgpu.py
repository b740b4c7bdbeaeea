#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: vgpu
short_description: Create and remove vGPUs of one type on GPUs
version_added: 0.1.0
description:
  - Makes each GPU in O(addresses) carry exactly O(count) vGPUs of O(type), removing the vGPUs the declaration
    does not name (orphans).
  - "Two backends, chosen per GPU from what it shows (O(backend=auto)): C(mdev) (the GPU has C(mdev_supported_types):
    a vGPU is an mdev created by writing its UUID to the type's C(create)) and C(vendor_vfio) (NVIDIA
    vendor-specific VFIO on SR-IOV cards: the VFs are enabled with C(sriov-manage -e) and a vGPU is a VF whose
    C(nvidia/current_vgpu_type) holds the type id, resolved from the type name per card)."
  - mdev UUIDs are derived from the host name, the GPU's address, the type and the index (UUID version 5), so
    reruns and reboots keep identities.
  - Time-sliced GPUs run one vGPU type per physical GPU. Changing the type of a GPU removes all of its vGPUs
    first (a whole-card change); it is refused, before anything changes, while any of them is in use.
  - "MIG-backed vGPU (C(vendor_vfio) on a GPU in MIG mode: A100, A30, H100, H200, RTX PRO 6000): a type that
    C(nvidia-smi vgpu -s -v) gives a C(GPU Instance Profile ID) runs on a GPU instance of that profile
    (V(NVIDIA H100XM-1-10C) on 1g.10gb; the name does not tell, Blackwell's V(DC-1-2Q) is MIG-backed too), and each
    vGPU holds one such instance. The plan reads the GPU's types and instances with C(nvidia-smi) and refuses
    O(count) above the instances of that profile, a MIG-backed type on a GPU not in MIG mode and a time-sliced type
    on one in MIG mode. Make the layout first with M(accelops.lifecycle.nvidia_mig); the boot unit
    is ordered after the layout's (C(accelops-mig-ADDRESS.service))."
  - Computes one plan; check mode reports it without running it. A failed step rolls back the steps already
    done, and the result says what was rolled back and what, if anything, is still in effect.
  - With O(persistent), mdevs are defined in mdevctl (C(mdevctl define --auto)) where mdevctl is installed,
    otherwise a boot script and systemd unit (ordered before libvirtd, virtqemud and nova-compute) recreate them; vendor
    VFIO types are always restored by the boot unit.
  - Every change writes an audit line to the system log, also returned in RV(audit).
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
  addresses:
    description:
      - PCI addresses of the GPUs (physical functions), V(0000:3b:00.0) or V(3b:00.0).
    type: list
    elements: str
    required: true
  type:
    description:
      - The vGPU type, by name (V(GRID T4-2Q), V(NVIDIA L40-8Q)) or id (V(nvidia-231) for mdev, V(1145) for vendor
        VFIO; vendor ids differ between card models and driver releases, names do not).
      - Required unless O(count=0) or O(state=absent).
    type: str
  count:
    description:
      - vGPUs per GPU (V(0) to V(4096)).
    type: int
    default: 1
  state:
    description:
      - V(absent) removes every vGPU of the GPUs (as O(count=0)).
    type: str
    choices: [present, absent]
    default: present
  backend:
    description:
      - V(auto) picks C(mdev) for a GPU with mdev types, else C(vendor_vfio) for an SR-IOV NVIDIA GPU.
    type: str
    choices: [auto, mdev, vendor_vfio]
    default: auto
  hostname:
    description:
      - The host name the mdev UUIDs are derived from. Defaults to the host's own name; set it to keep UUIDs when
        a host is renamed.
    type: str
  force:
    description:
      - Go ahead when the only evidence that a vGPU is in use is a process holding its VFIO group. A vGPU that a
        running libvirt domain has is never removed.
    type: bool
    default: false
  persistent:
    description:
      - Bring the vGPUs back at boot (mdevctl definitions, or the boot unit
        C(accelops-vgpu-ADDRESS.service) under O(persist_root)).
    type: bool
    default: true
  persist_root:
    description:
      - Directory under which boot files and the vendor type-name cache are written. Defaults to O(root).
    type: path
  tool_timeout:
    description:
      - Seconds C(mdevctl) or C(sriov-manage) may run before it is stopped and the change fails (and is rolled
        back).
      - From V(0) (no limit) to V(86400).
    type: int
    default: 60
notes:
  - A full vendor-VFIO card lists no creatable types, so the name of its type cannot be read back from sysfs;
    the module remembers the names it has seen per card model in C(/var/lib/accelops/vgpu-types.json) under
    O(persist_root).
  - Tools (C(mdevctl), C(sriov-manage) in C(/usr/lib/nvidia), C(nvidia-smi)) are looked up under O(root).
seealso:
  - module: accelops.lifecycle.accelerator_info
  - module: accelops.lifecycle.sriov_vfs
'''

EXAMPLES = r'''
- name: Four 2Q vGPUs on a Tesla T4 (mdev)
  accelops.lifecycle.vgpu:
    addresses: ["0000:18:00.0"]
    type: GRID T4-2Q
    count: 4

- name: Six 8Q vGPUs on each L40 (vendor-specific VFIO)
  accelops.lifecycle.vgpu:
    addresses: ["0000:3b:00.0", "0000:5e:00.0"]
    type: NVIDIA L40-8Q
    count: 6

- name: Two MIG-backed vGPUs on the 1g.10gb instances of an H100 in MIG mode (layout made by nvidia_mig)
  accelops.lifecycle.vgpu:
    addresses: ["0000:1b:00.0"]
    type: NVIDIA H100-1-10C
    count: 2

- name: Remove every vGPU of a GPU
  accelops.lifecycle.vgpu:
    addresses: ["0000:18:00.0"]
    state: absent
'''

RETURN = r'''
gpus:
  description: Per GPU, what the run made of it.
  returned: when the addresses were valid
  type: list
  elements: dict
  contains:
    address:
      description: The GPU's address.
      type: str
    backend:
      description: V(mdev) or V(vendor_vfio).
      type: str
    type:
      description: The type id (null when it could not be resolved in check mode).
      type: str
    type_name:
      description: The type's name.
      type: str
    vgpus:
      description: The vGPUs after the run (mdev UUIDs, or VF addresses for vendor VFIO).
      type: list
      elements: str
    removed:
      description: vGPUs removed (orphans, or all of them for a whole-card type change).
      type: list
      elements: str
    whole_card_change:
      description: Whether the GPU's type changed (all its vGPUs were removed first).
      type: bool
    mig_profile:
      description: For a MIG-backed type, the GPU instance profile each of its vGPUs holds one instance of.
      type: str
      returned: for a MIG-backed type
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
  description: The vGPUs in use that would have been removed (target, reason, evidence).
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
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.vgpu import PROGRAM
# the families' vendor_vfio backends, which the engine asks for by name: imported here so that this module ships them
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import nvidia_vgpu  # noqa: F401  pylint: disable=unused-import


def main():
    run_program(PROGRAM)


if __name__ == "__main__":
    main()
