# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Faults between the Placement modules and a real Placement (docs/reliability.md, "Faults").

A fault-injecting proxy (faultproxy.py) sits between the modules and the real service. At a request
position of a run (the gate: the first request of each kind and the last; RELIABILITY_FULL=1: every position
and every fault kind), one run gets one fault: it must either succeed with the exact
fault-free result (retried within bounds) or fail with a message that names Placement and the cause (no
traceback); then a rerun without faults must converge to the same tree as a fault-free run, read back
independently over plain HTTP (nothing lost, nothing duplicated).
"""

from __future__ import annotations

import re
import time

import pytest

from faultproxy import FaultProxy
from helpers import (AFU_AES, fpga_record, gpu_record, nic_record, qat_record, discovery, gate_positions, patch_exits,
                     run_module, steady_log, tree_snapshot)

from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_info as info_mod
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_tree as tree_mod

import os
import uuid as uuidlib

from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P

STALL_S = 1.0
API_TIMEOUT = 0.5
FAST_DELAY = 0.05
FULL = os.environ.get("RELIABILITY_FULL") == "1"

SCENARIOS = {
    # from nothing: providers created (POST, traits, inventories) and a custom trait created (PUT /traits)
    "create": (None, [fpga_record(), nic_record()]),
    # an existing tree changed: a new function (traits), more VFs (inventory), a card gone (prune), a new
    # card (create, a new custom resource class); an operator's trait and a hand-made provider must survive
    "update": ([fpga_record(), gpu_record(), nic_record()],
               [fpga_record(afu=AFU_AES), nic_record(numvfs=16), qat_record()]),
}
# The fault matrix of a scenario: (retries, fault kind, request position). With the default bounded retries
# (4) the run should survive the fault; with request_retries=0 it should fail clearly. The gate faults the first
# request of each kind (helpers.request_kind: method and path with uuids and names made generic; another
# provider's PUT of its inventories takes the same path through the code) and the run's last request, one fault
# each, taking in turn drop_after (the change landed, the module never heard), drop, 503 and stall with
# retries, and drop_after without retries (at writes; at least one per run): every kind, every kind of
# request, in a minute or two on a shared machine. RELIABILITY_FULL=1 runs every kind at every position in
# both modes (the figures in docs/reliability.md say which run they come from).
RETRY_KINDS = ("drop", "503", "stall", "500", "502", "504")
GATE_MODES = ((4, "drop_after"), (4, "drop"), (4, "503"), (4, "stall"), (0, "drop_after"))
NO_RETRY_KINDS = ("drop", "drop_after", "500", "stall")


def fault_matrix(log):
    """``log``: the (method, path) of each request of a fault-free run."""
    cases = []
    if FULL:
        for n in range(1, len(log) + 1):
            cases += [(4, k, n) for k in ("drop_after",) + RETRY_KINDS]
            cases += [(0, k, n) for k in NO_RETRY_KINDS]
        return cases
    for j, n in enumerate(gate_positions(log)):
        retries, kind = GATE_MODES[(j + 1) % len(GATE_MODES)]
        if retries == 0 and log[n - 1][0] == "GET":
            retries, kind = GATE_MODES[0]
        cases.append((retries, kind, n))
    if not any(c[0] == 0 for c in cases):   # a failure without retries at a write: the last one
        j = max(j for j, c in enumerate(cases) if log[c[2] - 1][0] != "GET")
        cases[j] = (0, "drop_after", cases[j][2])
    return cases


@pytest.fixture(scope="module")
def proxy(placement):
    p = FaultProxy(placement.endpoint, restart=placement.restart, stall_s=STALL_S)
    p.start()
    yield p
    p.stop()


@pytest.fixture
def lab(clean_placement, proxy, monkeypatch, tmp_path):
    patch_exits(monkeypatch)
    placement = clean_placement

    class Lab(object):
        """Each case gets a host of its own (cn<k>), so cases need no wipe between them."""
        cases = 0

        def prepare(self, name):
            """Placement as the scenario starts: the compute node, and for "update" the first tree, an
            operator's trait on one provider and a hand-made child provider."""
            Lab.cases += 1
            self.host = "cn%d" % Lab.cases
            self.extra = ["CUSTOM_RUN_%d" % Lab.cases]   # a new custom trait: one PUT /traits per case
            self.total_before = len(placement.providers())
            self.root = placement.create_provider(self.host + ".example.org", uuid=str(uuidlib.uuid4()))["uuid"]
            self.cache = os.path.join(str(tmp_path), "gen-%d.json" % Lab.cases)
            start = SCENARIOS[name][0]
            if start is not None:
                out = self.tree(discovery(self.host, start), via_proxy=False, extra_traits=[])
                assert out.kind == "exit", out
                # children are named after the root found (HOST.example.org), not the spelling that found it
                nic = placement.provider_by_name("%s.example.org_accelops_%s" % (self.host, nic_record()["address"]))
                placement.set_traits(nic["uuid"], placement.traits(nic["uuid"]) + ["CUSTOM_GOLD"])
                placement.create_provider(self.host + "_manual", parent=self.root)
            return discovery(self.host, SCENARIOS[name][1])

        def cloud(self, via_proxy=True):
            c = placement.cloud(endpoint=proxy.url if via_proxy else placement.endpoint)
            c["api_timeout"] = API_TIMEOUT
            return c

        def tree(self, disc, via_proxy=True, **extra):
            args = {"cloud": self.cloud(via_proxy), "discovery": disc, "generation_cache": self.cache,
                    "request_retry_delay": FAST_DELAY, "extra_traits": self.extra}
            args.update(extra)
            return run_module(tree_mod.main, args)

        def info(self, via_proxy=True, **extra):
            args = {"cloud": self.cloud(via_proxy), "hosts": [self.host], "request_retry_delay": FAST_DELAY,
                    "include_allocations": False}
            args.update(extra)
            return run_module(info_mod.main, args)

        def snapshot(self):
            """The host's tree read back over plain HTTP, made comparable between cases (host name and
            uuids replaced by what they must be), and whether no provider appeared outside it."""
            proxy.wait_idle()
            tree, total = tree_snapshot(placement, self.root)
            out = {}
            for name, p in tree.items():
                key = name.replace(self.host, "HOST", 1)
                if p["uuid"] == self.root:
                    uid = "ROOT"
                elif p["uuid"] == P.provider_uuid(name):
                    uid = "uuid3(name)"
                else:
                    uid = "other"
                out[key] = dict(p, uuid=uid, parent="ROOT" if p["parent"] == self.root else p["parent"],
                                traits=[t.replace(self.extra[0], "CUSTOM_RUN") for t in p["traits"]])
            return out, total - self.total_before - len(tree)
    return Lab()


def clear_failure(outcome):
    """A failure that names the service, the request and what went wrong, and says what to do, without a
    traceback (the shared wording of _openstack.ServiceUnavailable, as for Cyborg and Ironic)."""
    m = outcome.msg
    return (outcome.kind == "fail" and m.startswith("Placement: ") and "Traceback" not in m
            and bool(re.search(r" failed: (GET|PUT|POST|DELETE) /", m))
            and ("no answer" in m or "HTTP 5" in m) and "run again" in m)


def _record(figures, key, **counts):
    f = figures.setdefault(key, {})
    for k, v in counts.items():
        f[k] = f.get(k, 0) + v


def _case(lab, proxy, target, expected, retries, kind, n, stats, problems, label):
    """One run with one fault at request ``n``, then a rerun without faults; checks and counts both."""
    proxy.set_plan({n: kind})
    out = lab.tree(target, request_retries=retries)
    injected = proxy.injected()
    where = "%s: fault %s at request %s (retries %d)" % (
        label, kind, " ".join(str(x) for x in injected[0][:3]) if injected else "%d (not reached)" % n, retries)
    stats["faults_injected"] += len(injected)
    if out.kind == "traceback":
        stats["tracebacks"] += 1
        problems.append("%s: traceback\n%s" % (where, out.tb))
        return
    if out.kind == "exit":
        stats["survived_in_run"] += len(injected)
        stats["retried_requests"] += out.result["requests"].get("retried", 0)
        if injected and not retries:
            problems.append("%s: succeeded without retries?" % where)
    elif clear_failure(out):
        stats["failed_clearly"] += len(injected)
        if retries:
            problems.append("%s: failed although it may retry: %s" % (where, out.msg))
    else:
        problems.append("%s: unclear failure: %s" % (where, out.msg))
    # the rerun, without faults, converges to the fault-free result; after a run that succeeded it has
    # nothing left to do
    proxy.wait_idle()
    proxy.set_plan(None)
    again = lab.tree(target)
    stats["reruns"] += 1
    if again.kind != "exit" or lab.snapshot() != expected:
        problems.append("%s: the rerun did not converge (%r)" % (where, again))
    else:
        stats["reruns_converged"] += 1
        if out.kind == "exit" and again.result["changed"]:
            problems.append("%s: the run succeeded but left work for the rerun: %s" % (where, again.result["summary"]))


def _reference(lab, proxy, target):
    proxy.set_plan(None)
    ref = lab.tree(target)
    assert ref.kind == "exit" and ref.result["changed"], ref
    log = steady_log(proxy.log)
    expected = lab.snapshot()
    assert len(log) >= 10 and expected[1] == 0, (log, expected)
    return log, expected


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_provider_tree_fault_at_every_request(lab, proxy, figures, scenario):
    """"create": a fresh host per case. "update": one host flipped between the two trees, each case in
    the other direction (A to B: a function changed, more VFs, a card pruned, one created; B to A the
    reverse), so every case starts from a converged tree with an operator's trait and a hand-made
    provider in it."""
    stats = {"faults_injected": 0, "survived_in_run": 0, "failed_clearly": 0, "tracebacks": 0,
             "reruns": 0, "reruns_converged": 0, "retried_requests": 0}
    problems = []
    # a first run creates the custom traits and resource classes every later case finds
    assert lab.tree(lab.prepare(scenario)).kind == "exit"
    started = time.time()
    if scenario == "create":
        log, expected = _reference(lab, proxy, lab.prepare(scenario))
        cases = fault_matrix(log)
        for retries, kind, n in cases:
            _case(lab, proxy, lab.prepare(scenario), expected, retries, kind, n, stats, problems, scenario)
        positions = {"create": len(log)}
    else:
        start = lab.prepare(scenario)
        there = start
        back = discovery(lab.host, SCENARIOS[scenario][0])
        for target in (there, back):   # one flip each way first: the generation cache in its steady state
            assert lab.tree(target).kind == "exit"
        log_there, exp_there = _reference(lab, proxy, there)
        log_back, exp_back = _reference(lab, proxy, back)
        m_there, m_back = fault_matrix(log_there), fault_matrix(log_back)
        cases = m_there + m_back
        for i in range(max(len(m_there), len(m_back))):
            for target, expected, matrix, label in ((there, exp_there, m_there, "update A to B"),
                                                    (back, exp_back, m_back, "update B to A")):
                if i < len(matrix):
                    retries, kind, n = matrix[i]
                    _case(lab, proxy, target, expected, retries, kind, n, stats, problems, label)
                else:  # keep the flips alternating
                    proxy.set_plan(None)
                    assert lab.tree(target).kind == "exit"
        positions = {"A_to_B": len(log_there), "B_to_A": len(log_back)}
    # the gate's sample still has every mode: each retried kind, and a failure without retries
    assert FULL or set(GATE_MODES) <= set(c[:2] for c in cases), cases
    stats["seconds"] = round(time.time() - started, 1)
    stats["positions"] = positions
    stats["cases"] = len(cases)
    figures["placement_faults_%s" % scenario] = stats
    _record(figures, "placement_faults_total", faults_injected=stats["faults_injected"],
            survived_in_run=stats["survived_in_run"], failed_clearly=stats["failed_clearly"],
            reruns=stats["reruns"], reruns_converged=stats["reruns_converged"], tracebacks=stats["tracebacks"])
    assert not problems, "\n".join(problems[:20])
    # nearly every planned fault was reached (a rerun may need a request or two less than the reference)
    assert stats["faults_injected"] >= 0.9 * len(cases), stats


def test_restart_of_placement_mid_run(lab, proxy, figures):
    """Placement stopped and started again (same database, new port behind the proxy) at several points of a
    run: retries whose pauses add up to more than the restart takes carry the run over it. A restart takes
    3 s here on a quiet machine and over 8 s on a loaded one, more than the default 4 retries (7.5 s), so
    this run allows 6 (0.5 + 1 + 2 + 4 + 8 + 8 = 23.5 s); the time each restart took is reported."""
    assert lab.tree(lab.prepare("create")).kind == "exit"   # custom traits created once
    target = lab.prepare("create")
    proxy.set_plan(None)
    assert lab.tree(target).kind == "exit"
    positions = len(proxy.log)
    expected = lab.snapshot()
    points = [1, positions // 2]
    survived = 0
    took = []
    for n in points:
        target = lab.prepare("create")
        proxy.set_plan({n: "restart"})
        t0 = time.time()
        out = lab.tree(target, request_retry_delay=0.5, request_retries=6)
        took.append(round(time.time() - t0, 1))
        proxy.wait_idle(60)
        assert out.kind == "exit", "restart at request %d: %r" % (n, out)
        assert len(proxy.injected()) == 1 and proxy.restarts >= 1
        assert lab.snapshot() == expected, "restart at request %d: Placement differs from a fault-free run" % n
        survived += 1
    figures["placement_restarts"] = {"restarts": len(points), "survived_in_run": survived,
                                     "run_seconds_with_restart": took}
    _record(figures, "placement_faults_total", faults_injected=len(points), survived_in_run=survived)


def test_placement_down_fails_clearly_within_bounds(lab, proxy, figures):
    """Nothing answers at all: the run gives up after its bounded retries with a clear message."""
    target = lab.prepare("create")
    results = {}
    for kind in ("drop", "503"):
        for module in ("tree", "info"):
            proxy.set_plan(lambda n, m, p, k=kind: k)
            t0 = time.time()
            out = lab.tree(target, request_retries=3) if module == "tree" else lab.info(request_retries=3)
            took = time.time() - t0
            assert clear_failure(out), out
            # 3 retries with pauses 0.05, 0.1, 0.2: about 0.35 s plus the requests, never unbounded
            assert took < 10, took
            assert len(proxy.log) == 4, proxy.log   # 1 attempt + 3 retries, then it stops
            if kind == "drop":
                assert "no answer" in out.msg and "4 attempts" in out.msg, out.msg
            results["%s_%s" % (module, kind)] = round(took, 2)
    proxy.set_plan(None)
    assert lab.snapshot() == ({"HOST.example.org": {"uuid": "ROOT", "parent": None, "traits": [],
                                                    "inventories": {}}}, 0)   # nothing was written
    figures["placement_down_give_up_seconds"] = results


def test_provider_info_fault_at_every_request(lab, proxy, figures):
    lab.prepare("update")
    proxy.set_plan(None)
    assert lab.info().kind == "exit"
    proxy.set_plan(None)   # the requests of a run in the steady state (a first run may make one more)
    ref = lab.info()
    assert ref.kind == "exit", ref
    positions = len(proxy.log)
    stats = {"faults_injected": 0, "survived_in_run": 0, "failed_clearly": 0}
    # the gate: the first request of each kind and the last one (helpers.gate_positions), the modes in turn;
    # RELIABILITY_FULL=1: every mode at every position
    modes = ((4, "drop"), (4, "503"), (4, "stall"), (0, "drop"))
    cases = [(r, k, n) for n in range(1, positions + 1) for r, k in modes] if FULL else \
        [modes[j % len(modes)] + (n,) for j, n in enumerate(gate_positions(steady_log(proxy.log)))]
    assert FULL or set(c[:2] for c in cases) == set(modes), cases
    for retries, kind, n in cases:
        proxy.set_plan({n: kind})
        out = lab.info(request_retries=retries)
        stats["faults_injected"] += len(proxy.injected())
        where = "info fault %s at request %d (retries %d)" % (kind, n, retries)
        assert out.kind != "traceback", "%s\n%s" % (where, out.tb)
        if retries:
            assert out.kind == "exit" and out.result["providers"] == ref.result["providers"], where
            stats["survived_in_run"] += 1
        else:
            assert clear_failure(out), "%s: %s" % (where, out.msg)
            stats["failed_clearly"] += 1
        proxy.wait_idle()
    figures["placement_info_faults"] = stats
    _record(figures, "placement_faults_total", faults_injected=stats["faults_injected"],
            survived_in_run=stats["survived_in_run"], failed_clearly=stats["failed_clearly"])
    assert stats["faults_injected"] == len(cases)
