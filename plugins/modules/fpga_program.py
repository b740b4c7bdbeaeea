#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fpga_program
short_description: Load a verified bitstream onto an FPGA region or card with the vendor tool
version_added: 0.1.0
description:
  - Loads an Intel FPGA accelerator function (a GBS file, with OPAE C(fpgaconf), legacy OPAE and upstream DFL driver
    layouts) onto one port's partial-reconfiguration region, or a Xilinx Alveo xclbin (with C(xbmgmt program --user))
    onto the whole card.
  - Nothing is loaded unless the file's sha256 equals O(sha256), and, where the format carries it, the interface id
    the bitstream was built for is the region's (Intel PR interface id, Alveo shell interface UUID).
  - Idempotent. When the function the bitstream carries is already loaded, the tool is not run.
  - Refuses while the port or card is in use (a running libvirt domain or a process holds the PF, a VF or the port
    device), with the evidence in the message. O(force) never overrides that.
  - After loading, the function id is read back from sysfs. If it is not the requested one, the previous bitstream
    is loaded again when O(rollback_bitstream) is given; otherwise the module fails and says exactly what state the
    device is in.
  - Every change writes an audit line (what, which device, old and new function, who) to the system log.
  - See C(docs/fpga.md) in the collection for the safety choices.
author:
  - accelops.lifecycle contributors (@accelops)
extends_documentation_fragment:
  - accelops.lifecycle._host
  - accelops.lifecycle._plan
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Check mode reports the plan (the same plan a real run executes) after all checks; nothing is loaded.
  diff_mode:
    support: full
    details: The function before and after, and the boot unit files with O(persistent).
  platform:
    platforms: posix
options:
  address:
    description:
      - PCI address of the FPGA card (V(0000:5e:00.0), or V(5e:00.0) for domain 0).
      - For an Intel card, its PF (the FME's function). For a Xilinx Alveo card, either PF; the card is programmed
        through its management PF and read back on its user PF.
    type: str
    required: true
  bitstream:
    description:
      - Absolute path on the managed host of the bitstream to load (an Intel C(.gbs) or a Xilinx C(.xclbin)).
      - Must be a regular file; symlinks are resolved and the resolved path is reported. The file is copied into a
        private temporary directory while its sha256 is computed, and the vendor tool is given that copy.
    type: path
    required: true
  sha256:
    description:
      - The sha256 of the bitstream file (64 hex digits, optionally prefixed V(sha256:)). Required; a mismatch fails
        before anything is loaded.
    type: str
    required: true
  function_id:
    description:
      - The function (Intel AFU id / accelerator-type-uuid, Xilinx xclbin UUID) the bitstream is expected to carry,
        with or without dashes. When given, a bitstream that carries another one is refused.
    type: str
  port:
    description:
      - Intel cards with several ports (PR regions) only; the port's sysfs name (V(dfl-port.0),
        V(intel-fpga-port.0)) or its number (V(0)). Defaults to the only port.
      - Must not be given for a Xilinx Alveo card, which is programmed as a whole.
    type: str
    aliases: [region]
  rollback_bitstream:
    description:
      - Absolute path of the bitstream loaded now (the function currently loaded must be the one it carries).
        When the function read back after loading is wrong, this one is loaded again.
      - Verified like O(bitstream) (regular file, O(rollback_sha256), interface id) before anything runs.
    type: path
  rollback_sha256:
    description:
      - The sha256 of O(rollback_bitstream).
    type: str
  timeout:
    description:
      - Seconds the vendor tool may run for one load; a tool that hangs is stopped and the module fails saying so.
      - From V(1) to V(86400).
    type: int
    default: 300
  force:
    description:
      - Load even when the requested function already reads back as loaded (to recover a region whose function
        misbehaves although its id is right).
      - Never overrides the checksum, the interface id check, the in-use refusal, the read-back, or the vendor
        tool's own checks (C(fpgaconf --force) is never passed).
    type: bool
    default: false
  persistent:
    description:
      - A loaded function is lost at power-off. With V(true) a systemd unit under C(/etc/systemd/system) (below
        O(root)), the same kind of boot unit as M(accelops.lifecycle.sriov_vfs) and M(accelops.lifecycle.vgpu)
        write, re-runs the same load at boot, before C(libvirtd.service), C(virtqemud.service) and
        C(nova-compute.service); its script (under C(/etc/accelops/boot)) checks the sha256 of a copy of the
        bitstream kept under C(/var/lib/accelops/fpga), runs the vendor tool with the timeout, reads the
        function back and retries a few times.
      - With V(false), such a unit written earlier for this port or card is removed.
      - A unit that an older release wrote under its former name (C(accelops-fpga-0000-5e-00-0-dfl-port-0.service))
        is removed in either case.
      - Under a O(root) or O(persist_root) other than C(/), the unit names the paths through them;
        C(systemctl daemon-reload) is only run when the files are written under C(/).
    type: bool
    default: false
  persist_root:
    description:
      - Directory under which the boot files (unit, loader script, bitstream copy) are written, as with
        M(accelops.lifecycle.sriov_vfs) and M(accelops.lifecycle.vgpu). Defaults to O(root).
    type: path
notes:
  - Run as root. The vendor tool is looked up in C(PATH) and the usual directories, or only under O(root)
    (C(<root>/usr/bin) etc.) when O(root) is not C(/).
  - Needs coreutils C(timeout) on the managed host.
seealso:
  - module: accelops.lifecycle.accelerator_info
  - name: FPGA programming
    description: Safety choices and failure states, in the collection's docs/fpga.md.
    link: https://example.invalid/accelops/lifecycle/docs/fpga.md
'''

EXAMPLES = r'''
- name: Load the NLB AFU onto the PAC's only port, verified and kept across reboots
  accelops.lifecycle.fpga_program:
    address: "0000:5e:00.0"
    bitstream: /opt/fpga/nlb_mode_0.gbs
    sha256: 6c1bc7a2d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f8091a2b3c4d5e6f70
    function_id: d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7
    persistent: true

- name: Load an xclbin onto an Alveo card, going back to the current one if the read-back is wrong
  accelops.lifecycle.fpga_program:
    address: "0000:af:00.1"
    bitstream: /opt/xilinx/vadd.xclbin
    sha256: "{{ vadd_sha256 }}"
    rollback_bitstream: /opt/xilinx/previous.xclbin
    rollback_sha256: "{{ previous_sha256 }}"
    timeout: 120
'''

RETURN = r'''
target:
  description: What was programmed.
  returned: when the card was found
  type: dict
  contains:
    address:
      description: The card's address (Alveo, its user PF).
      type: str
    vendor:
      description: V(intel) or V(xilinx).
      type: str
    programming_model:
      description: V(dynamic) (one Intel port) or V(single) (the whole Alveo card).
      type: str
    layout:
      description: V(opae), V(dfl) or V(xrt).
      type: str
    port:
      description: The Intel port programmed, or null.
      type: str
    management_address:
      description: The Alveo management PF, or null.
      type: str
    interface_ids:
      description: Interface ids the region or shell accepts (32 hex digits).
      type: list
      elements: str
    slots:
      description: The units that get the function (all of them on a single-program card).
      type: list
      elements: str
    function_path:
      description: The sysfs attribute the function is read back from.
      type: str
  sample: {address: "0000:5e:00.0", vendor: intel, programming_model: dynamic, layout: opae, port: intel-fpga-port.0}
before:
  description: The function loaded before the run (C(function) as a dashed UUID, or null).
  returned: when the card was found
  type: dict
  sample: {function: d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7}
after:
  description: The function loaded after the run, read back from sysfs (in check mode, the function that would be).
  returned: success
  type: dict
bitstream:
  description: The verified bitstream.
  returned: when it was verified
  type: dict
  contains:
    path:
      description: The path as given.
      type: str
    resolved:
      description: The path after resolving symlinks.
      type: str
    symlink:
      description: Whether the given path went through a symlink.
      type: bool
    sha256:
      description: The sha256 of the bytes handed to the tool.
      type: str
    size:
      description: Size in bytes.
      type: int
    format:
      description: V(gbs) or V(xclbin).
      type: str
    interface_id:
      description: The interface id the bitstream was built for.
      type: str
    function_id:
      description: The function it carries (AFU id / xclbin UUID).
      type: str
    name:
      description: The accelerator's name from GBS metadata, or null.
      type: str
    platform:
      description: Platform named by the metadata, or null.
      type: str
tool:
  description: The vendor tool and each run of it (argv, rc, stdout, stderr).
  returned: when the card was found
  type: dict
  contains:
    path:
      description: The tool's path, or null when not found.
      type: str
    runs:
      description: One dict per run.
      type: list
      elements: dict
plan:
  description: The steps planned (description, target, before, after, reversible); empty when nothing changes.
  returned: success
  type: list
  elements: dict
applied:
  description: The steps carried out (in check mode, the steps that would be).
  returned: success
  type: list
  elements: str
rolled_back:
  description: Steps undone after a later step failed (as M(accelops.lifecycle.sriov_vfs) and M(accelops.lifecycle.vgpu)).
  returned: always
  type: list
  elements: str
rollback_failed:
  description: Steps whose undo failed (step and error); they are still in effect.
  returned: always
  type: list
  elements: dict
audit:
  description: The audit lines written to the system log.
  returned: always
  type: list
  elements: str
persistent:
  description: The boot unit (name and its files, host paths) when O(persistent) is true.
  returned: when persistent is true
  type: dict
in_use_by:
  description: On an in-use refusal, who uses the port or card (domain or process, with the evidence).
  returned: on failure
  type: list
  elements: dict
state:
  description:
    - On a failed load, the state left. V(unchanged) (nothing done or everything rolled back) or V(partial) (see
      C(still_applied)); C(observed_function) is what sysfs shows now (or the reason it cannot be read).
  returned: on failure
  type: str
'''

from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.fpga import PROGRAM
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import run_program


def main():
    run_program(PROGRAM)


if __name__ == "__main__":
    main()
