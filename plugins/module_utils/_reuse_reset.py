# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host half of one-time-use devices (the ``one_time_use_reset`` module): reset each device given, as its
family resets one for the next tenant (``Driver.reuse_reset``), and verify it.

Nova 34 leaves a one-time-use device's provider reserved after its instance is gone and never releases it
(``nova/compute/pci_placement_translator.py``); the controller half (``placement_one_time_use``) lists those
providers and releases, under the provider generation, only the devices this module reset and verified.

Each device is planned on its own: one that cannot be reset (not on the host, in use, no reset for its family or
device) is listed in ``kept`` with the reason before anything runs, and one whose reset or verification fails is
listed there after; the others are reset. A reset cannot be undone, and one device's failure does not stop or
undo another's. Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record
from ansible_collections.accelops.lifecycle.plugins.module_utils._host import LIBVIRT_RUN_DIR_OPTION
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import REFUSALS, Job, Program
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan, Refusal
from ansible_collections.accelops.lifecycle.plugins.module_utils._cardstate import card_in_use
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address


def _address(value):
    addr = pci_address(value)
    if addr is None:
        raise Refusal("devices: %r is not a PCI address (accepted: 0000:3b:00.0, or 3b:00.0 for domain 0)" % (value,))
    return addr


def _run_program(host, address, program_ref):
    """The family's programming module on one device (FPGA: load the declared function again); its read-back is the
    verification. Returns what it read back; raises Refusal with the module's message when it failed."""
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _converge, _hostmodule  # pylint: disable=import-outside-toplevel
    kind, args = program_ref
    program, params = _converge.card_params({"kind": kind, "module_args": args},
                                            {"root": host.params["root"], "fpga_timeout": host.params["tool_timeout"]})
    card_host = _hostmodule.Host(host.module, program.name, params=params, sysfs=host.sysfs)
    try:
        msg = _hostmodule.run(card_host, program.plan)
    finally:
        card_host.cleanup()
    host.auditor.lines.extend(x for x in card_host.auditor.lines if x not in host.auditor.lines)
    if msg is not None:
        raise Refusal("%s: %s" % (address, msg))
    after = card_host.result.get("after") or {}
    return "%s loaded it again, read back function %s" % (program.name, after.get("function"))


def plan_reset(host):
    """The plan: one step per device that can be reset; the others in ``kept`` with why."""
    p, sysfs, out = host.params, host.sysfs, host.result
    addresses = []
    for a in p["devices"]:
        addr = _address(a)
        if addr not in addresses:
            addresses.append(addr)
    out.update(reset=[], kept=[], devices=[])
    try:  # before anything is read: a declaration that does not validate fails the run naming the option
        functions = _declaration.validate(p["functions"], where="functions")
    except _declaration.DeclarationError as e:
        raise Refusal(str(e))
    disc = discover(sysfs, root=p["root"], libvirt_run_dir=p["libvirt_run_dir"])
    by_addr = dict((r["address"], r) for r in disc["accelerators"])
    assigned = {}
    if functions:
        for a in _declaration.resolve(functions, disc, validated=True)["assignments"]:
            assigned[a["address"]] = a
    plan = Plan()

    def keep(addr, why):
        out["kept"].append({"address": addr, "reason": why})

    for addr in addresses:
        rec = by_addr.get(addr)
        if rec is None:
            keep(addr, "not found among this host's accelerators")
            continue
        busy, evidence = card_in_use(rec, by_addr)
        if busy:
            keep(addr, "in use, not reset: %s" % "; ".join(evidence))
            continue
        try:
            how = for_record(rec).reuse_reset(sysfs, rec, assigned.get(addr))
        except REFUSALS as e:
            keep(addr, str(e))
            continue
        out["devices"].append({"address": addr, "family": rec.get("family"), "reset": how.description})
        plan.add("reset %s for its next tenant: %s" % (addr, how.description), _step(host, addr, how), target=addr,
                 before="used by a former tenant", after="reset and verified")

    def finish(host):
        if host.check_mode:
            out["reset"] = [d["address"] for d in out["devices"]]
    return Job(plan, finish=finish)


def _step(host, addr, how):
    def action():
        # a device's failed reset is reported and kept out; it neither stops nor undoes the others' (see the top)
        try:
            seen = _run_program(host, addr, how.program) if how.program else how.run()
        except REFUSALS as e:
            host.result["kept"].append({"address": addr, "reason": "reset or verification failed: %s" % e})
            host.auditor.record("reset for the next tenant failed", addr, new=str(e))
            return
        host.result["reset"].append(addr)
        host.auditor.record("reset for the next tenant", addr, new=seen)
    return action


PROGRAM = Program(
    "one_time_use_reset",
    dict(devices=dict(type="list", elements="str", required=True),
         functions=dict(type="list", elements="dict", default=[]),
         tool_timeout=dict(type="int", default=600),
         libvirt_run_dir=LIBVIRT_RUN_DIR_OPTION),
    plan_reset,
    ranges={"tool_timeout": (1, 86400, "seconds")},
    paths=("libvirt_run_dir",))
