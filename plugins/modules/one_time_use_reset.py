#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: one_time_use_reset
short_description: Reset one-time-use devices for their next tenant, and verify them
version_added: 0.1.0
description:
  - The host half of Nova's one-time-use PCI devices (C(device_spec) tag C(one_time_use), Nova 34). After an
    instance had such a device, Nova leaves its provider reserved and never releases it. This module resets each
    device given, as its family resets a device for the next tenant, and verifies it; the controller module
    M(accelops.lifecycle.placement_one_time_use) then releases only the devices listed in RV(reset). The playbook
    C(accelops.lifecycle.reset_one_time_use) runs both.
  - What a reset is belongs to the device's family. GPUs, NIC and QAT devices get the kernel's reset of the function
    (sysfs C(reset), a function-level reset or the method the kernel chose), then the ids and the driver are read
    back. An FPGA gets its declared function loaded again (M(accelops.lifecycle.fpga_program) with C(force)) and
    read back. A device whose family or kernel offers no reset is refused, saying so.
  - Each device is decided on its own. One that is not on the host, is in use (a running libvirt domain or a process
    holding its VFIO group), or cannot be reset is listed in RV(kept) with the reason, before anything runs; one whose
    reset or verification fails is listed there too, after. The others are reset. A reset cannot be undone.
  - Check mode reports the plan (one step per device) without resetting anything.
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
  devices:
    description:
      - PCI addresses of the devices to reset (V(0000:83:00.0), or V(83:00.0) for domain 0), as
        M(accelops.lifecycle.placement_one_time_use) lists them in its C(to_reset).
    type: list
    elements: str
    required: true
  functions:
    description:
      - The host's declaration (C(accelerator_host_functions)); an FPGA is reset by loading the function declared
        for it again, so FPGAs need it.
    type: list
    elements: dict
    default: []
  tool_timeout:
    description:
      - Seconds a vendor tool (an FPGA's loader) may run, from V(1) to V(86400).
    type: int
    default: 600
seealso:
  - module: accelops.lifecycle.placement_one_time_use
  - module: accelops.lifecycle.fpga_program
'''

EXAMPLES = r'''
- name: Reset the one-time-use devices Placement holds reserved for this host
  accelops.lifecycle.one_time_use_reset:
    devices: "{{ otu.to_reset }}"
    functions: "{{ accelerator_host_functions }}"
  become: true
  register: reset
'''

RETURN = r'''
reset:
  description: The devices reset and verified (in check mode, those that would be reset).
  returned: always
  type: list
  elements: str
kept:
  description: The devices not reset, each with its C(address) and the C(reason) (refused, or the reset or its
    verification failed).
  returned: always
  type: list
  elements: dict
devices:
  description: The devices planned for a reset, each with its C(address), C(family) and C(reset) (what the reset does).
  returned: always
  type: list
  elements: dict
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
  description: Steps undone after a later step failed (a reset is never undone, so always empty).
  returned: always
  type: list
  elements: str
rollback_failed:
  description: Steps whose undo failed.
  returned: always
  type: list
  elements: dict
audit:
  description: The audit lines written to the system log, one per device reset or failed.
  returned: always
  type: list
  elements: str
'''


# an FPGA is reset by loading its declared function again with fpga_program's engine, imported by name (kind.program()),
# which the payload builder does not follow: imported here so that it is shipped
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import fpga  # noqa: F401 pylint: disable=unused-import
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import run_program
from ansible_collections.accelops.lifecycle.plugins.module_utils._reuse_reset import PROGRAM


def main():
    run_program(PROGRAM)


if __name__ == "__main__":
    main()
