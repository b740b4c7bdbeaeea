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
        O(root)) re-runs the same load at boot, before C(libvirtd.service) and C(nova-compute.service); it
        checks the sha256 of a copy of the bitstream kept under C(/var/lib/accelops/fpga), runs the vendor tool
        with the timeout, reads the function back and retries a few times.
      - With V(false), such a unit written earlier for this port or card is removed.
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

import os
import shutil
import tempfile


from ansible_collections.accelops.lifecycle.plugins.module_utils._module import AccelopsModule
from ansible_collections.accelops.lifecycle.plugins.module_utils import _fpga, _inuse, _tools
from ansible_collections.accelops.lifecycle.plugins.module_utils._audit import Auditor
from ansible_collections.accelops.lifecycle.plugins.module_utils._host import host_argument_spec, host_sysfs
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import Files
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import PlanFailed, execute


def _function(value):
    return {"function": _fpga.dashed(value) if value else None}


def run(module, sysfs, workdir, auditor, out):
    p = module.params
    if p["timeout"] is None or p["timeout"] < 1:
        raise _fpga.FpgaError("timeout must be a positive number of seconds; got %r" % (p["timeout"],))
    target = _fpga.locate(sysfs, p["address"], p["port"])
    out["target"] = target.describe()
    tool_path = _tools.find_tool(sysfs, target.tool)
    out["tool"] = {"path": tool_path, "runs": []}
    current = _fpga.read_function(sysfs, target)
    out["before"] = _function(current)

    bitstream = _fpga.stage_bitstream(p["bitstream"], p["sha256"], workdir)
    out["bitstream"] = _fpga._public(bitstream)  # pylint: disable=protected-access
    _check_fits(target, bitstream, "bitstream")
    want = bitstream["function_id"]
    if p["function_id"] and _fpga.normalize_id(p["function_id"]) != want:
        raise _fpga.FpgaError("bitstream %s carries function %s, not function_id %s; nothing was loaded"
                              % (p["bitstream"], _fpga.dashed(want), p["function_id"]))
    rollback = None
    if p["rollback_bitstream"]:
        rollback = _fpga.stage_bitstream(p["rollback_bitstream"], p["rollback_sha256"], workdir, label="rollback_bitstream")
        _check_fits(target, rollback, "rollback_bitstream")
        if current != want and rollback["function_id"] != current:
            raise _fpga.FpgaError("rollback_bitstream %s carries function %s, but %s has %s loaded now; it would not "
                                  "restore the current state, so nothing was loaded"
                                  % (p["rollback_bitstream"], _fpga.dashed(rollback["function_id"]), target.name,
                                     _fpga.dashed(current) if current else "nothing"))

    loading = current != want or p["force"]
    if loading or p["persistent"]:
        if tool_path is None:
            raise _fpga.FpgaError("%s: %s" % (target.name, _tools.not_installed(sysfs, target.tool)))
    if loading:
        evidence = _fpga.in_use(sysfs, target)
        if evidence:
            what = "card" if target.model == "single" else "port"
            raise _fpga.FpgaError("%s is in use, refusing to load %s onto this %s (force does not change this): %s"
                                  % (target.name, _fpga.dashed(want), what, _inuse.evidence_text(evidence)),
                                  in_use_by=evidence)
    try:
        files = Files(sysfs, p["persist_root"])
    except ValueError as e:
        raise _fpga.FpgaError(str(e))
    persist = _fpga.BootUnit(files, sysfs, target, tool_path, bitstream, p["timeout"], present=p["persistent"],
                             wrap=auditor.wrap)
    if p["persistent"]:
        out["persistent"] = {"unit": persist.name, "files": dict(persist.host_paths)}
    runner = _tools.ToolRunner(sysfs, run=module.run_command, timeout=p["timeout"], timeout_bin=_timeout_bin(module),
                               require_limit=True)
    out["tool"]["runs"] = runner.calls
    plan = _fpga.build_plan(sysfs, runner, target, tool_path, bitstream, current, p["timeout"], force=p["force"],
                            rollback=rollback, auditor=auditor, persist=persist)
    out["plan"] = plan.describe()
    if module._diff:  # pylint: disable=protected-access
        out["diff"] = plan.diff()
    try:
        res = execute(plan, module.check_mode)
    except PlanFailed as e:
        observed = _observe(sysfs, target)
        msg = "%s; %s now shows function %s" % (e, target.name, observed)
        raise _fpga.FpgaError(msg, state=e.result.get("state"), still_applied=e.result.get("still_applied", []),
                              rolled_back=e.result.get("rolled_back", []), rollback_failed=e.result.get("rollback_failed", []),
                              failed_step=e.result.get("failed_step"), observed_function=observed)
    out["changed"] = res["changed"]
    out["applied"] = res["applied"]
    if module.check_mode:
        out["after"] = _function(want)
    else:
        out["after"] = _function(_fpga.read_function(sysfs, target))
        if persist.root == "/" and any(s.target and s.target.startswith(_fpga.UNIT_DIR) for s in plan.steps):
            systemctl = module.get_bin_path("systemctl")
            if systemctl:
                rc, _o, err = module.run_command([systemctl, "daemon-reload"])
                if rc != 0:
                    module.warn("systemctl daemon-reload failed: %s" % err.strip())


def _check_fits(target, bitstream, label):
    fmt = "gbs" if target.vendor == "intel" else "xclbin"
    if bitstream["format"] != fmt:
        raise _fpga.FpgaError("%s %s is a %s file; %s takes %s files" % (
            label, bitstream["path"], bitstream["format"], target.name, fmt))
    if not target.interface_ids:
        raise _fpga.FpgaError("%s: the region's interface id cannot be read from sysfs, so %s cannot be checked "
                              "against it; nothing was loaded" % (target.name, label))
    if bitstream["interface_id"] not in target.interface_ids:
        raise _fpga.FpgaError("%s %s was built for interface %s, but %s has interface %s; nothing was loaded" % (
            label, bitstream["path"], _fpga.dashed(bitstream["interface_id"]), target.name,
            ", ".join(_fpga.dashed(i) for i in target.interface_ids)))


def _observe(sysfs, target):
    try:
        v = _fpga.read_function(sysfs, target)
        return _fpga.dashed(v) if v else "none"
    except _fpga.FpgaError as e:
        return "unknown (%s)" % e


def _timeout_bin(module):
    path = module.get_bin_path("timeout")
    if not path:
        raise _fpga.FpgaError("coreutils timeout is not installed; it is needed to stop a vendor tool that hangs")
    return path


def main():
    module = AccelopsModule(
        argument_spec=host_argument_spec(
            address=dict(type="str", required=True),
            bitstream=dict(type="path", required=True),
            sha256=dict(type="str", required=True),
            function_id=dict(type="str"),
            port=dict(type="str", aliases=["region"]),
            rollback_bitstream=dict(type="path"),
            rollback_sha256=dict(type="str"),
            timeout=dict(type="int", default=300),
            force=dict(type="bool", default=False),
            persistent=dict(type="bool", default=False),
            persist_root=dict(type="path"),
        ),
        ranges={"timeout": (1, 86400, "seconds")},
        required_together=[("rollback_bitstream", "rollback_sha256")],
        supports_check_mode=True,
    )
    sysfs = host_sysfs(module)
    auditor = Auditor(module, "fpga_program")
    out = {"changed": False, "audit": auditor.lines}
    workdir = tempfile.mkdtemp(prefix="fpga_program-", dir=module.tmpdir)
    os.chmod(workdir, 0o700)
    try:
        run(module, sysfs, workdir, auditor, out)
    except _fpga.FpgaError as e:
        out.update(e.details)
        out["changed"] = bool(auditor.lines)
        shutil.rmtree(workdir, ignore_errors=True)
        module.fail_json(msg=str(e), **out)
    shutil.rmtree(workdir, ignore_errors=True)
    module.exit_json(**out)


if __name__ == "__main__":
    main()
