#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: nvidia_mig
short_description: Set the MIG mode and the MIG layout of an NVIDIA GPU
version_added: 0.1.0
description:
  - Makes one NVIDIA GPU (A100, A30, H100, H200) run MIG mode as declared and, with MIG mode in effect, carry
    exactly the declared GPU instances, each with its default compute instance, through C(nvidia-smi).
  - "The plan: destroy the compute instances of the GPU instances that go (C(nvidia-smi mig -dci)), then those GPU
    instances (C(mig -dgi)), then create the missing ones with their default compute instances (C(mig -cgi ... -C),
    largest first). GPU instances the new layout also has are kept when the rest fits beside them."
  - Refuses, before anything changes, while a GPU instance that would be destroyed is in use; the message names the
    instance and the evidence (a process holding its C(/dev/nvidia-caps) node, or a running domain that has the GPU,
    one of its VFs or vGPUs).
  - Enabling or disabling MIG mode takes effect at once when nothing holds the GPU; otherwise it stays pending until
    a GPU reset or a reboot, which this module never does. The result says so (RV(reset_required), RV(pending)) and
    the layout is made by a later run, or at boot by the boot unit.
  - Computes one plan; check mode reports it without running it. A failed step rolls back the steps already done
    (the previous GPU instances are created again; the driver picks their ids and placements) and the result says
    what was rolled back.
  - MIG layouts do not survive a reboot. With O(persistent), a boot script and systemd unit
    (C(accelops-mig-ADDRESS.service) under O(persist_root)), ordered before the vGPU unit of the same GPU, libvirtd,
    virtqemud and nova-compute, create the layout again once MIG mode is in effect and the GPU has no GPU instance.
  - Every change writes an audit line to the system log, also returned in RV(audit).
  - Standard library only on the managed host (Python 3.9 or later).
author:
  - accelops.lifecycle contributors (@accelops)
extends_documentation_fragment:
  - accelops.lifecycle._host
  - accelops.lifecycle._plan
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
    details: a mig-parted config file named by O(mig_parted_config) is read on the host and parsed on the controller.
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
options:
  address:
    description:
      - The GPU's PCI address, V(0000:17:00.0) or V(17:00.0). One of O(address) and O(gpu) is required.
    type: str
  gpu:
    description:
      - The GPU's C(nvidia-smi) index (V(0) to V(63)), as mig-parted's C(devices) lists count them.
    type: int
  mode:
    description:
      - MIG mode. Defaults to V(enabled) when a layout is given; V(disabled) destroys every GPU instance first.
    type: str
    choices: [enabled, disabled]
  layout:
    description:
      - "The GPU instances, as a list of V({profile: 1g.10gb, count: 7}) (or of profile names), as a mapping of
        profile name to count (mig-parted's C(mig-devices)), or as a string such as V(7 x 1g.10gb) or
        V(3g.40gb + 2g.20gb + 2 x 1g.10gb). V(none), in lower case, declares no GPU instance (every one is
        destroyed); a blank string (empty, a newline, or a list of one such), an empty list, an empty mapping and
        V(None) in any other case (what a template renders for a missing value) are refused, never read as
        V(none). (A mig-parted entry's C(mig-devices: {}) does mean no GPU instance, as in mig-parted.)"
      - Profile names are those C(nvidia-smi mig -lgip) lists, with their media-engine suffixes (V(1g.10gb),
        V(1g.10gb+me), V(1g.24gb+me.all), V(1g.24gb-me), V(1g.24gb+gfx), V(3g.40gb)); a layout that does not fit
        (the card's compute slices, its memory slices at the listed placements, each profile's limit) is refused.
    type: raw
  mig_parted_config:
    description:
      - "Instead of O(layout), a mig-parted configuration (C(version: v1), C(mig-configs)), as a mapping or the
        path of its YAML (or JSON) file on the host; O(config_name) picks the entry. As mig-parted does, every
        entry whose C(devices) (V(all) or a list of indexes) and C(device-filter) (when present: V(0x233510DE), or
        V(0x233010DE:0x16C010DE) to match the board's subsystem too) match the GPU applies, in order, so the last
        of them gives C(mig-enabled) and C(mig-devices). A path is read as given (not under O(root))."
      - A file is read on the host (with C(ansible.builtin.slurp), at most 1 MiB) and parsed on the controller by the
        module's action plugin, with PyYAML's safe loader; the module itself takes the mapping."
    type: raw
  config_name:
    description:
      - The C(mig-configs) entry of O(mig_parted_config) to apply (V(all-1g.10gb), V(all-balanced), ...).
    type: str
  force:
    description:
      - Go ahead when the only evidence that a GPU instance is in use is a process holding its capability node
        (C(nvidia-smi) itself still refuses while the node is held). A running domain, or a MIG-backed vGPU on the
        GPU instance (C(nvidia-smi vgpu -q)), always refuses.
    type: bool
    default: false
  persistent:
    description:
      - Recreate the layout at boot (the boot unit C(accelops-mig-ADDRESS.service) under O(persist_root)). V(false)
        removes a unit written before.
    type: bool
    default: true
  persist_root:
    description:
      - Directory under which the boot files are written. Defaults to O(root).
    type: path
  tool_timeout:
    description:
      - Seconds one C(nvidia-smi) call may run before it is stopped and the change fails (and is rolled back).
      - From V(0) (no limit) to V(86400).
    type: int
    default: 60
notes:
  - C(nvidia-smi) is looked up under O(root).
  - The GPU instances the previous layout had are created again on rollback with the same profiles; their ids and
    placements are the driver's choice.
seealso:
  - module: accelops.lifecycle.accelerator_info
  - module: accelops.lifecycle.vgpu
'''

EXAMPLES = r'''
- name: Seven 1g.10gb instances on an H100 80GB
  accelops.lifecycle.nvidia_mig:
    address: "0000:19:00.0"
    layout: 7 x 1g.10gb

- name: A mixed layout, as a list
  accelops.lifecycle.nvidia_mig:
    gpu: 0
    layout:
      - {profile: 3g.40gb, count: 1}
      - {profile: 2g.20gb, count: 1}
      - {profile: 1g.10gb, count: 2}

- name: Apply a mig-parted configuration
  accelops.lifecycle.nvidia_mig:
    address: "0000:19:00.0"
    mig_parted_config: /etc/nvidia-mig-manager/config.yaml
    config_name: all-balanced

- name: MIG off (destroys every instance first)
  accelops.lifecycle.nvidia_mig:
    address: "0000:19:00.0"
    mode: disabled
'''

RETURN = r'''
gpu:
  description: The GPU and what the run made of it.
  returned: when the GPU was found
  type: dict
  contains:
    address:
      description: The GPU's PCI address.
      type: str
    index:
      description: Its C(nvidia-smi) index.
      type: int
    mode:
      description: The declared MIG mode.
      type: str
    mode_current:
      description: MIG mode in effect after the run (before it, in check mode).
      type: str
    mode_pending:
      description: MIG mode that takes effect at the next GPU reset.
      type: str
    layout_before:
      description: The layout before the run (V(none) for no instances).
      type: str
    layout:
      description: The declared layout, largest profiles first (V(2 x 3g.40gb + 1 x 1g.10gb)).
      type: str
    kept:
      description: Ids of the GPU instances the run kept.
      type: list
      elements: int
    gpu_instances:
      description: The GPU instances read back after the run (id, profile, profile_id, placement, compute_instances).
      type: list
      elements: dict
    reset_required:
      description: Whether a MIG mode change is pending a GPU reset or a reboot.
      type: bool
    pending:
      description: What waits, and for what (null when nothing does).
      type: str
reset_required:
  description: Whether a MIG mode change is pending a GPU reset or a reboot (not done by this module).
  returned: success
  type: bool
pending:
  description: What waits, and for what (null when nothing does).
  returned: success
  type: str
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
  description: The GPU instances in use that would have been destroyed (target, reason, evidence).
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
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.nvidia_mig import PROGRAM


def main():
    run_program(PROGRAM)


if __name__ == "__main__":
    main()
