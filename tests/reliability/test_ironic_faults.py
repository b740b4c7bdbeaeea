# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Faults between baremetal_node_accelerators and a real standalone Ironic 39 (docs/reliability.md, "Faults").

One node carries an operator's traits (a custom one, a standard one) and properties. Runs take it in turn
through four states: A (a function and accelerators), B (other functions and accelerators), absent (nothing
of this module's, no ``properties.accelerators``) and A again, so every request kind of the module is on
the way (GET, trait PUT and DELETE, the properties PATCH). A fault-free run of each step gives its request
positions; then at a position one run gets one fault: with bounded retries it must succeed with the
fault-free result, without retries fail with a message that names Ironic, the operation, the cause and that
a rerun is safe; never a traceback.

What the gate faults: in each step, the first request of each kind (helpers.request_kind: GET /, GET node,
trait PUT, trait DELETE, PATCH; another trait's PUT takes the same path through the code) and the step's last
request, with retries and without in turn, the kinds in turn: every fault kind of GATE_RETRY with retries and
of GATE_NO_RETRY without, ``stall`` once in each mode (on a write: a stall costs IRONIC_STALL_S). 13 cases.
RELIABILITY_FULL=1: every kind at every position of every step, in both modes. A rerun without faults must leave the node exactly as a fault-free run:
the traits exactly the declared set plus the operator's, CUSTOM_ACCELOPS_PREPARED present exactly when
state is present, properties exactly the declared accelerators plus the operator's (read over plain HTTP).
"""

from __future__ import annotations

import itertools
import re
import time

import pytest

from faultproxy import FaultProxy
from helpers import gate_positions, patch_exits, run_module, steady_log
from svcfaults_helpers import (FAST_DELAY, FULL, IRONIC_STALL_S, RESTART_DELAY, RESTART_RETRIES, no_traceback, record)
from svcfaults_helpers import ironic, service_state  # noqa: F401  pylint: disable=unused-import

from ansible_collections.accelops.lifecycle.plugins.modules import baremetal_node_accelerators as bna

FOREIGN = ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"]
PROPS = {"cpus": 32, "memory_mb": 262144}
ACC_A = [{"vendor_id": "8086", "device_id": "0b30", "type": "FPGA", "pci_address": "0000:5e:00.0",
          "device_info": "Intel PAC A10"}]
# in the module's order (by PCI address)
ACC_B = [{"vendor_id": "10de", "device_id": "1eb8", "type": "GPU", "pci_address": "0000:3b:00.0",
          "device_info": "NVIDIA T4"}] + ACC_A
# state name: (module arguments, owned traits after, accelerators after or None)
STATES = {
    "A": ({"traits": ["CUSTOM_FUNCTION_GZIP", "CUSTOM_ACCELERATOR_FPGA"], "accelerators": ACC_A},
          ["CUSTOM_ACCELERATOR_FPGA", "CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP"], ACC_A),
    "B": ({"traits": ["CUSTOM_FUNCTION_LZ4", "CUSTOM_FUNCTION_AES", "CUSTOM_ACCELERATOR_GPU"], "accelerators": ACC_B},
          ["CUSTOM_ACCELERATOR_GPU", "CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_AES", "CUSTOM_FUNCTION_LZ4"], ACC_B),
    "absent": ({"state": "absent"}, [], None),
}
CYCLE = ("A", "B", "absent")
KINDS = ("drop", "drop_after", "500", "502", "503", "504", "stall")
GATE_RETRY = ("drop_after", "503", "stall", "drop", "500")
GATE_NO_RETRY = ("drop", "drop_after", "503", "stall")
OPERATIONS = re.compile(r"(version discovery|read node|add trait \S+ to node|remove trait \S+ from node|"
                        r"set properties\.accelerators of node)")
_nodes = itertools.count(1)


@pytest.fixture(scope="module")
def proxy(ironic):  # noqa: F811
    p = FaultProxy(ironic.upstream, restart=ironic.restart, stall_s=IRONIC_STALL_S)
    p.start()
    yield p
    p.stop()


@pytest.fixture
def lab(ironic, proxy, monkeypatch):  # noqa: F811
    patch_exits(monkeypatch)

    class Lab(object):
        def __init__(self):
            self.node = "rel-bm-%d" % next(_nodes)
            ironic.create_node(self.node, FOREIGN, PROPS)

        def run(self, state, via_proxy=True, **extra):
            args = dict(STATES[state][0], node=self.node, request_retry_delay=FAST_DELAY,
                        cloud=ironic.cloud(proxy.url if via_proxy else None))
            args.update(extra)
            return run_module(bna.main, args)

        def expected(self, state):
            owned, acc = STATES[state][1], STATES[state][2]
            props = dict(PROPS)
            if acc is not None:
                props["accelerators"] = acc
            return sorted(FOREIGN + owned), props

        def actual(self):
            proxy.wait_idle()
            return ironic.node(self.node)
    return Lab()


def _gate_cases(logs):
    """The gate's cases {step: [(retries, kind, position)]}: the first request of each kind and the last of
    every step (helpers.gate_positions), with retries and without in turn; the fault kinds in turn over the
    cases of each mode, ``stall`` only on the first write of each mode (its cost is the stall itself). Every
    kind of GATE_RETRY and of GATE_NO_RETRY is used (checked)."""
    per_step, by_mode = {}, {4: [], 0: []}
    for i, state in enumerate(CYCLE[1:] + CYCLE[:1]):
        per_step[state] = []
        for j, n in enumerate(gate_positions(logs[state])):
            case = [4 if (j + i) % 2 == 0 else 0, None, n]
            per_step[state].append(case)
            by_mode[case[0]].append((case, logs[state][n - 1][0] != "GET"))
    for retries, kinds in ((4, GATE_RETRY), (0, GATE_NO_RETRY)):
        writes = [c for c, is_write in by_mode[retries] if is_write]
        assert writes, "no write to stall in mode %d" % retries
        writes[0][1] = "stall"
        others = [k for k in kinds if k != "stall"]
        for j, case in enumerate(c for c, dummy in by_mode[retries] if c[1] is None):
            case[1] = others[j % len(others)]
        used = set(c[1] for c, dummy in by_mode[retries])
        assert used == set(kinds), "the gate leaves out %s in mode %d" % (set(kinds) - used, retries)
    return dict((state, [tuple(c) for c in cases]) for state, cases in per_step.items())


def clear_failure(outcome):
    m = outcome.msg
    return (outcome.kind == "fail" and "Ironic" in m and "Traceback" not in m and bool(OPERATIONS.search(m))
            and ("no answer" in m or "HTTP 5" in m) and "run again" in m)


def test_node_accelerators_fault_at_every_request(lab, proxy, figures):
    # the requests of each step, fault-free: A -> B -> absent -> A
    positions, logs = {}, {}
    proxy.set_plan(None)
    first = lab.run("A")
    assert first.kind == "exit", first
    for state in CYCLE[1:] + CYCLE[:1]:
        proxy.set_plan(None)
        out = lab.run(state)
        assert out.kind == "exit" and out.result["changed"], out
        assert lab.actual() == lab.expected(state)
        logs[state] = steady_log(proxy.log)
        positions[state] = len(logs[state])
    # Round robin over the steps B, absent, A, B, ...: each case starts where the previous one's rerun left the
    # node, so a case costs two runs. RELIABILITY_FULL=1: every kind at every position, in both modes.
    per_step = _gate_cases(logs) if not FULL else dict(
        (state, [(r, k, n) for n in range(1, positions[state] + 1) for r in (4, 0) for k in KINDS])
        for state in logs)
    cases = []
    for k in range(max(len(v) for v in per_step.values())):
        for state in CYCLE[1:] + CYCLE[:1]:
            cases.append((state,) + (per_step[state][k] if k < len(per_step[state]) else (None, None, None)))
    stats = dict(faults_injected=0, survived_in_run=0, failed_clearly=0, tracebacks=0, reruns=0, reruns_converged=0)
    problems = []
    started = time.time()
    current = "A"
    for state, retries, kind, n in cases:
        before = CYCLE[(CYCLE.index(state) - 1) % len(CYCLE)]
        if current != before:   # only after a rerun that did not converge
            proxy.set_plan(None)
            reset = lab.run(before)
            assert reset.kind == "exit", reset
        if kind is None:   # this step has no position left: keep the cycle going
            proxy.set_plan(None)
            step = lab.run(state)
            assert step.kind == "exit", step
            current = state
            continue
        proxy.set_plan({n: kind})
        out = lab.run(state, request_retries=retries)
        injected = proxy.injected()
        where = "to %s: %s at request %s (retries %d)" % (
            state, kind, " ".join(str(x) for x in injected[0][:3]) if injected else "%d (not reached)" % n, retries)
        stats["faults_injected"] += len(injected)
        current = None
        if not no_traceback(out):
            stats["tracebacks"] += 1
            problems.append("%s: traceback\n%s" % (where, out.tb or out.msg))
            continue
        if out.kind == "exit":
            stats["survived_in_run"] += len(injected)
            if injected and not retries:
                problems.append("%s: succeeded without retries?" % where)
        elif clear_failure(out):
            stats["failed_clearly"] += len(injected)
            if retries:
                problems.append("%s: failed although it may retry: %s" % (where, out.msg))
        else:
            problems.append("%s: unclear failure: %s" % (where, out.msg))
        if out.kind == "exit" and lab.actual() != lab.expected(state):
            problems.append("%s: the run succeeded but the node is %r" % (where, lab.actual()))
        proxy.wait_idle()
        proxy.set_plan(None)
        again = lab.run(state)
        stats["reruns"] += 1
        got = lab.actual()
        if again.kind != "exit" or got != lab.expected(state):
            problems.append("%s: the rerun did not converge (%r; node %r)" % (where, again, got))
            continue
        current = state
        stats["reruns_converged"] += 1
        if out.kind == "exit" and again.result["changed"]:
            problems.append("%s: the run succeeded but left work for the rerun" % where)
    stats["positions"] = positions
    stats["cases"] = sum(len(v) for v in per_step.values())
    stats["seconds"] = round(time.time() - started, 1)
    figures["ironic_faults"] = stats
    record(figures, "ironic_faults_total",
           **dict((k, v) for k, v in stats.items() if k not in ("positions", "seconds", "cases")))
    assert not problems, "\n".join(problems[:20])
    assert stats["faults_injected"] == stats["cases"], stats


def test_restart_of_ironic_mid_run(lab, proxy, ironic, figures):  # noqa: F811
    """Ironic (API and conductor) stopped and started again, same database, at a trait write: the retries
    carry the run over it and the node ends exactly as declared."""
    proxy.set_plan(None)
    first = lab.run("A")
    assert first.kind == "exit", first
    proxy.set_plan({3: "restart"})   # GET /, GET node, then the first trait write
    t0 = time.time()
    out = lab.run("B", request_retries=RESTART_RETRIES, request_retry_delay=RESTART_DELAY)
    took = round(time.time() - t0, 1)
    assert proxy.wait_idle(120)
    assert out.kind == "exit", out
    assert len(proxy.injected()) == 1 and ironic.restarts
    assert lab.actual() == lab.expected("B")
    proxy.set_plan(None)
    assert not lab.run("B").result["changed"]
    figures["ironic_restarts"] = {"restarts": 1, "survived_in_run": 1, "run_seconds_with_restart": [took],
                                  "restart_seconds": ironic.restarts[-1]}
    record(figures, "ironic_faults_total", faults_injected=1, survived_in_run=1, reruns=1, reruns_converged=1)


def test_ironic_down_fails_clearly_within_bounds(lab, proxy, figures):
    took = {}
    before = lab.actual()
    for kind in ("drop", "503"):
        proxy.set_plan(lambda n, m, p, k=kind: k)
        t0 = time.time()
        out = lab.run("A", request_retries=2)
        took[kind] = round(time.time() - t0, 2)
        assert clear_failure(out), out
        assert "3 attempts" in out.msg and len(proxy.log) == 3, (out.msg, proxy.log)
        assert time.time() - t0 < 10
    proxy.set_plan(None)
    assert lab.actual() == before   # nothing written
    figures["ironic_down_give_up_seconds"] = took
