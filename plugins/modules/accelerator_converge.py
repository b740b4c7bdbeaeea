#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: accelerator_converge
short_description: Converge one host's accelerators to a declared function inventory
version_added: 0.4.0
description:
  - Discovers the host, maps the declaration (C(docs/declaration.md)) onto its cards, and gives each assigned card
    one status; V(ok) (it carries its function), V(todo) (to program), V(blocked) (in use, with O(safe_mode)) or
    V(unsupported) (nothing programs it, such as the driver binding of a whole device).
  - Plans every card to change with the programming module that owns its kind (M(accelops.lifecycle.fpga_program),
    M(accelops.lifecycle.vgpu), M(accelops.lifecycle.sriov_vfs)), through the same plan code those modules run.
    Check mode returns that plan and the drift and changes nothing.
  - When any card cannot be planned, nothing is changed. Otherwise each card's plan runs; a step that fails rolls
    that card's steps back (the card's result says what is still in effect). Then the host is discovered again and
    each changed card is checked against the declaration.
  - The run holds the host lock (flock on O(lock_dir)C(/converge.lock), with an owner record in
    C(converge.owner)) for its whole length, check mode included; a second converge waits O(lock_wait) seconds,
    then fails naming the holder and how long it has held the lock, having read and changed nothing.
  - Returns the per-card report and what the controller reports to Placement for the host (the discovery, the
    declared names and the function traits of the cards that carry their function).
    The C(accelops.lifecycle.accelerator_host) role is built around this module.
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
    support: none
  idempotent:
    support: full
    description: A second run with the same declaration on an unchanged host plans and changes nothing.
  platform:
    platforms: posix
options:
  functions:
    description:
      - The declaration, a list of function entries (C(docs/declaration.md)), as in C(accelerator_host_functions).
    type: list
    elements: raw
    required: true
  allowed_functions:
    description:
      - An allow-list; every declared entry's name must be in it (case-insensitive), and an FPGA entry's
        C(fpga.sha256) and C(fpga.rollback_sha256) too (items of 64 hex digits, optionally prefixed C(sha256:)).
        A declaration outside it is refused before anything is read.
      - Not set, no allow-list.
    type: list
    elements: str
  safe_mode:
    description:
      - A card in use (a running domain or a process holds one of its units, or O(placement_in_use) names it) that
        needs a change is not touched and is reported V(blocked).
      - V(false) leaves the decision to the programming module, which still refuses what it would break.
    type: bool
    default: true
  cards:
    description:
      - Change only these cards (PCI addresses); the others are reported as they are.
      - The role passes the cards the controller drained in Placement. Not set, every card that needs a change.
    type: list
    elements: str
  placement_in_use:
    description:
      - In-use evidence from outside the host, by card address (a list of lines each), such as the Placement
        usages of the card's provider. A card named here counts as in use.
    type: dict
    default: {}
  host:
    description: The host's name in messages (the inventory name). Not set, the host's own name.
    type: str
  persistent:
    description: Make the VF counts and vGPUs come back after a reboot (boot units, mdevctl definitions).
    type: bool
    default: true
  fpga_persistent:
    description: Make the loaded FPGA functions come back after a reboot. Not set, O(persistent).
    type: bool
  persist_root:
    description: Where the boot files are written (default O(root)).
    type: path
  fpga_timeout:
    description: Seconds an FPGA load may take.
    type: int
    default: 300
  tool_timeout:
    description: Seconds a vendor tool (mdevctl, sriov-manage, ip) may take.
    type: int
    default: 60
  lock:
    description: Hold the host lock for the run.
    type: bool
    default: true
  lock_dir:
    description: The directory of the host lock (a host path). Not set, O(root)C(/run/accelops).
    type: path
  lock_wait:
    description: Seconds to wait for another converge's lock before failing.
    type: int
    default: 300
  lock_owner:
    description: Who holds the lock, written to the owner record for a waiter to name (for example the play).
    type: str
    default: ''
  reporting:
    description:
      - Who reports the host's devices to Placement (one reporter per device; C(docs/placement.md), "Reporters"),
        as the deployment has it. Keys C(reporter) (V(auto), V(nova), V(cyborg) or V(accelops); any but V(auto) is every
        card's reporter), C(nova) (V(true) when Nova's configuration for the host comes from this declaration,
        the C(accelops.lifecycle.nova_compute_config) role, with PCI in Placement) and C(cyborg_families) (the device
        families Cyborg's agent reports on the host).
      - A declaration entry's own C(reporter) wins. With V(auto), a declared card is Cyborg's when its family is in
        C(cyborg_families), else Nova's when C(nova) is true, else this collection's. The result's RV(reporters)
        feeds M(accelops.lifecycle.placement_provider_tree)'s O(accelops.lifecycle.placement_provider_tree#module:reporters).
    type: dict
    default: {}
notes:
  - The lock is held by the module's process and ends with it, so a run that dies never leaves it behind.
seealso:
  - module: accelops.lifecycle.accelerator_info
  - module: accelops.lifecycle.placement_provider_tree
'''

EXAMPLES = r'''
- name: What would change on this host (no change; the drift is in the result)
  accelops.lifecycle.accelerator_converge:
    functions: "{{ accelerator_host_functions }}"
  check_mode: true
  register: plan

- name: Converge the host
  accelops.lifecycle.accelerator_converge:
    functions:
      - name: x710-vf
        match: {family: nic, device_id: "1572"}
        vfs: {count: 4, driver: vfio-pci}
      - name: t4-4q
        match: {family: gpu}
        vgpu: {type: GRID T4-4Q, count: 4}
    allowed_functions: [x710-vf, t4-4q]
  register: converged
'''

RETURN = r'''
cards:
  description:
    - One record per card the declaration assigns, the resolution's assignment (C(function), C(kind), C(trait),
      C(address), C(family), C(loaded), C(change_needed), C(reason), C(module), C(module_args), C(placement),
      C(nova)) with C(status) (V(ok), V(todo), V(blocked), V(unsupported)), C(in_use), C(in_use_by) (host and
      Placement evidence) and C(blocked).
  returned: always
  type: list
  elements: dict
planned:
  description:
    - By card address, the plan of each card to change (C(failed), C(changed), C(refused_in_use), C(msg), C(state),
      C(steps), C(applied), C(audit), C(blocked)); in check mode, as the programming module's check mode returns it.
  returned: always
  type: dict
applied:
  description: By card address, what each card's run did (the same keys as RV(planned)).
  returned: always
  type: dict
verify:
  description: By card address, whether discovery after the change shows the card carrying its function.
  returned: always
  type: dict
kept_drained:
  description: Cards whose run left them partly changed or not as declared; their providers should stay drained.
  returned: always
  type: list
  elements: str
problems:
  description: Declared functions that cannot be met as asked, one sentence each.
  returned: always
  type: list
  elements: str
drift:
  description: In check mode, how the host differs from the declaration, one line each.
  returned: always
  type: list
  elements: str
discovery:
  description:
    - The host's discovery (as M(accelops.lifecycle.accelerator_info) with C(vf_detail=full) returns it), after
      the change when there was one. Null when the run stopped before discovery.
  returned: always
  type: dict
function_names:
  description: Function id or vGPU type to declared name, for M(accelops.lifecycle.placement_provider_tree).
  returned: always
  type: dict
overrides:
  description: Placement overrides (traits, resource class) of the cards that carry their function.
  returned: always
  type: dict
reporters:
  description: Who reports each card to Placement (nova, cyborg or accelops), by card address (O(reporting)).
  returned: always
  type: dict
  sample: {"0000:5e:00.0": cyborg, "0000:d8:00.0": nova}
error:
  description: Why the run stopped before changing anything (refused, locked, a card that cannot be planned), or null.
  returned: always
  type: str
lock:
  description: The lock this run held (C(path), C(waited) seconds, C(token)), or null.
  returned: always
  type: dict
last_run:
  description:
    - The run record the last apply under the lock left in O(lock_dir) (C(owner), C(started), C(phase), C(cards),
      C(applied)), or null. C(phase=apply) is a run cut during its apply; a plan under the lock (check mode) returns
      it once and clears it.
  returned: always
  type: dict
'''

import os

from ansible_collections.accelops.lifecycle.plugins.module_utils._converge import Converge
from ansible_collections.accelops.lifecycle.plugins.module_utils._host import (
    LIBVIRT_RUN_DIR_OPTION,
    host_argument_spec,
    host_sysfs,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._module import AccelopsModule


def main():
    module = AccelopsModule(
        argument_spec=host_argument_spec(
            functions=dict(type="list", elements="raw", required=True),
            allowed_functions=dict(type="list", elements="str"),
            safe_mode=dict(type="bool", default=True),
            cards=dict(type="list", elements="str"),
            placement_in_use=dict(type="dict", default={}),
            host=dict(type="str"),
            persistent=dict(type="bool", default=True),
            fpga_persistent=dict(type="bool"),
            persist_root=dict(type="path"),
            fpga_timeout=dict(type="int", default=300),
            tool_timeout=dict(type="int", default=60),
            lock=dict(type="bool", default=True),
            lock_dir=dict(type="path"),
            lock_wait=dict(type="int", default=300),
            lock_owner=dict(type="str", default=""),
            reporting=dict(type="dict", default={}),
            libvirt_run_dir=LIBVIRT_RUN_DIR_OPTION,
        ),
        ranges={"fpga_timeout": (1, 86400, "seconds"), "tool_timeout": (0, 86400, "seconds"),
                "lock_wait": (0, 86400, "seconds")},
        paths=("libvirt_run_dir",),
        supports_check_mode=True,
    )
    p = module.params
    sysfs = host_sysfs(module)
    if p["fpga_persistent"] is None:
        p["fpga_persistent"] = p["persistent"]
    if not p["lock_dir"]:
        p["lock_dir"] = os.path.join(p["root"], "run", "accelops")
    if not p["host"]:
        p["host"] = os.uname()[1]
    for address, lines in p["placement_in_use"].items():
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            module.fail_json(msg="placement_in_use: expected a mapping of card address to a list of evidence lines; "
                                 "%s has %r" % (address, lines))
    converge = Converge(module, sysfs)
    msg = converge.run()
    if msg is not None:
        module.fail_json(msg=msg, **converge.result)
    module.exit_json(**converge.result)


if __name__ == "__main__":
    main()
