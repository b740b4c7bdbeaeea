# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Faults between device_profile / device_profile_info and a real Cyborg (docs/reliability.md, "Faults").

The fault proxy (faultproxy.py) sits between the module and the real Cyborg 17 the harness starts. For each
scenario (create, replace, delete) a fault-free run gives the requests of a run; then at every request
position one run gets one fault: with bounded retries it must succeed with the fault-free result, without
retries it must fail with a message that names Cyborg, the operation, the cause and that a rerun is safe.
Never a traceback. Then a rerun without faults must leave Cyborg exactly as a fault-free run does, read back
over plain HTTP: exactly one profile of that name with the declared groups (or none), and no other profile
appeared (nothing duplicated, nothing lost).
"""

from __future__ import annotations

import itertools
import re
import time

import pytest

from faultproxy import FaultProxy
from helpers import patch_exits, run_module
from svcfaults_helpers import (FAST_DELAY, FULL, RESTART_DELAY, RESTART_RETRIES, STALL_S, no_traceback, record)
from svcfaults_helpers import cyborg, service_state  # noqa: F401  pylint: disable=unused-import

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cyborg as C
from ansible_collections.accelops.lifecycle.plugins.modules import device_profile as dp_mod
from ansible_collections.accelops.lifecycle.plugins.modules import device_profile_info as info_mod

GROUPS_A = [{"family": "fpga", "vendor": "intel", "function": "gzip"}]
GROUPS_B = [{"family": "fpga", "vendor": "intel", "function": "gzip", "count": 2}, {"resource_class": "CUSTOM_QAT"}]
RAW_A = C.normalize_groups(GROUPS_A)
RAW_B = C.normalize_groups(GROUPS_B)

# scenario: (groups Cyborg has before the run or None, module arguments, groups after or None, action)
SCENARIOS = {
    "create": (None, {"groups": GROUPS_A, "description": "gzip"}, RAW_A, "created"),
    "replace": (RAW_A, {"groups": GROUPS_B, "replace": True}, RAW_B, "replaced"),
    "delete": (RAW_A, {"state": "absent"}, None, "deleted"),
}
KINDS = ("drop", "drop_after", "500", "502", "503", "504", "stall")
GATE_RETRY = ("drop_after", "503", "stall", "drop", "502")
GATE_NO_RETRY = ("drop", "503", "drop_after", "stall")
OPERATIONS = re.compile(r"(version discovery|read device profile|create device profile|delete device profile|"
                        r"list accelerator requests|list device profiles)")
_names = itertools.count(1)


@pytest.fixture(scope="module")
def proxy(cyborg):  # noqa: F811
    p = FaultProxy(cyborg.upstream, restart=cyborg.restart, stall_s=STALL_S)
    p.start()
    yield p
    p.stop()


@pytest.fixture
def lab(cyborg, proxy, monkeypatch):  # noqa: F811
    patch_exits(monkeypatch)

    class Lab(object):
        def cloud(self):
            return cyborg.cloud(proxy.url)

        def profiles(self):
            return cyborg.profiles()

        def state(self):
            """The profiles of this case's name, as Cyborg has them."""
            return [C.canonical(p) for p in cyborg.by_name(self.name)]

        def prepare(self, scenario):
            """A fresh profile name and Cyborg as the scenario starts (made over plain HTTP)."""
            self.name = "rel-%s-%d" % (scenario, next(_names))
            before = SCENARIOS[scenario][0]
            if before is not None:
                cyborg.create(self.name, before)
            self.total = len(cyborg.profiles())
            return self.name

        def run(self, scenario, via_proxy=True, **extra):
            args = dict(SCENARIOS[scenario][1], name=self.name,
                        cloud=cyborg.cloud(proxy.url if via_proxy else None), request_retry_delay=FAST_DELAY)
            args.update(extra)
            return run_module(dp_mod.main, args)

        def converged(self, scenario):
            """Cyborg holds exactly what a fault-free run leaves: one profile of the name with the scenario's
            groups (none for delete), and no other profile came or went."""
            proxy.wait_idle()
            after = SCENARIOS[scenario][2]
            found = cyborg.by_name(self.name)
            total = len(cyborg.profiles())
            want_total = self.total + (1 if scenario == "create" else -1 if scenario == "delete" else 0)
            if after is None:
                return not found and total == want_total
            return (len(found) == 1 and C.canonical(found[0])["groups"] == after and total == want_total)
    return Lab()


def clear_failure(outcome):
    m = outcome.msg
    return (outcome.kind == "fail" and "Cyborg" in m and "Traceback" not in m and bool(OPERATIONS.search(m))
            and ("no answer" in m or "HTTP 5" in m) and "run again" in m)


def matrix(positions):
    cases = []
    for n in range(1, positions + 1):
        if FULL:
            cases += [(4, k, n) for k in KINDS] + [(0, k, n) for k in KINDS]
        else:
            cases.append((4, GATE_RETRY[n % len(GATE_RETRY)], n))
            cases.append((0, GATE_NO_RETRY[n % len(GATE_NO_RETRY)], n))
    return cases


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_device_profile_fault_at_every_request(lab, proxy, figures, scenario):
    action = SCENARIOS[scenario][3]
    lab.prepare(scenario)
    proxy.set_plan(None)
    ref = lab.run(scenario)
    assert ref.kind == "exit" and ref.result["action"] == action, ref
    assert lab.converged(scenario)
    positions = len(proxy.log)
    assert positions >= 3, proxy.log
    stats = dict(faults_injected=0, survived_in_run=0, failed_clearly=0, tracebacks=0, reruns=0,
                 reruns_converged=0)
    problems = []
    started = time.time()
    cases = matrix(positions)
    for retries, kind, n in cases:
        lab.prepare(scenario)
        proxy.set_plan({n: kind})
        out = lab.run(scenario, request_retries=retries)
        injected = proxy.injected()
        where = "%s: %s at request %s (retries %d)" % (
            scenario, kind, " ".join(str(x) for x in injected[0][:3]) if injected else "%d (not reached)" % n,
            retries)
        stats["faults_injected"] += len(injected)
        if not no_traceback(out):
            stats["tracebacks"] += 1
            problems.append("%s: traceback\n%s" % (where, out.tb or out.msg))
            continue
        if out.kind == "exit":
            stats["survived_in_run"] += len(injected)
            if injected and not retries:
                problems.append("%s: succeeded without retries?" % where)
            if out.result["action"] != action:
                problems.append("%s: action %s, not %s" % (where, out.result["action"], action))
        elif clear_failure(out):
            stats["failed_clearly"] += len(injected)
            if retries:
                problems.append("%s: failed although it may retry: %s" % (where, out.msg))
        else:
            problems.append("%s: unclear failure: %s" % (where, out.msg))
        proxy.wait_idle()
        proxy.set_plan(None)
        again = lab.run(scenario)
        stats["reruns"] += 1
        if again.kind != "exit" or not lab.converged(scenario):
            problems.append("%s: the rerun did not converge (%r; Cyborg has %r)"
                            % (where, again, lab.state()))
            continue
        stats["reruns_converged"] += 1
        if out.kind == "exit" and again.result["changed"]:
            problems.append("%s: the run succeeded but left work for the rerun (%s)" % (where, again.result["action"]))
    stats["positions"] = positions
    stats["cases"] = len(cases)
    stats["seconds"] = round(time.time() - started, 1)
    figures["cyborg_faults_%s" % scenario] = stats
    record(figures, "cyborg_faults_total",
           **dict((k, v) for k, v in stats.items() if k not in ("positions", "seconds", "cases")))
    assert not problems, "\n".join(problems[:20])
    assert stats["faults_injected"] == len(cases), stats


def test_restart_of_cyborg_mid_run(lab, proxy, figures):
    """Cyborg (API and conductor) stopped and started again, same database, at the create (and, with
    RELIABILITY_FULL=1, at the version discovery too): retries whose pauses add up to more than a restart takes carry the run over it."""
    took = []
    points = (1, 3) if FULL else (3,)
    for n in points:
        lab.prepare("create")
        proxy.set_plan({n: "restart"})
        t0 = time.time()
        out = lab.run("create", request_retries=RESTART_RETRIES, request_retry_delay=RESTART_DELAY)
        took.append(round(time.time() - t0, 1))
        assert proxy.wait_idle(120)
        assert out.kind == "exit" and out.result["action"] == "created", "restart at request %d: %r" % (n, out)
        assert len(proxy.injected()) == 1
        assert lab.converged("create"), "restart at request %d" % n
        proxy.set_plan(None)
        assert not lab.run("create").result["changed"]
    k = len(points)
    figures["cyborg_restarts"] = {"restarts": k, "survived_in_run": k, "run_seconds_with_restart": took}
    record(figures, "cyborg_faults_total", faults_injected=k, survived_in_run=k, reruns=k, reruns_converged=k)


def test_cyborg_down_fails_clearly_within_bounds(lab, proxy, figures):
    """Nothing answers: device_profile and device_profile_info give up after their bounded retries with a
    clear message, and nothing is written."""
    lab.prepare("create")
    took = {}
    for kind in ("drop", "503"):
        for module in ("device_profile", "device_profile_info"):
            proxy.set_plan(lambda n, m, p, k=kind: k)
            t0 = time.time()
            if module == "device_profile":
                out = lab.run("create", request_retries=2)
            else:
                out = run_module(info_mod.main, {"cloud": lab.cloud(), "names": [lab.name], "request_retries": 2,
                                                 "request_retry_delay": FAST_DELAY})
            took["%s_%s" % (module, kind)] = round(time.time() - t0, 2)
            assert clear_failure(out), out
            assert "3 attempts" in out.msg, out.msg
            assert len(proxy.log) == 3, proxy.log   # 1 attempt + 2 retries, then it stops
            assert time.time() - t0 < 10
    proxy.set_plan(None)
    assert not lab.state() and len(lab.profiles()) == lab.total   # nothing written
    figures["cyborg_down_give_up_seconds"] = took


def test_device_profile_info_fault_at_every_request(lab, proxy, figures):
    lab.prepare("replace")   # one profile with RAW_A
    args = {"names": [lab.name], "request_retry_delay": FAST_DELAY}
    proxy.set_plan(None)
    ref = run_module(info_mod.main, dict(args, cloud=lab.cloud()))
    assert ref.kind == "exit" and [p["name"] for p in ref.result["profiles"]] == [lab.name], ref
    positions = len(proxy.log)
    stats = dict(faults_injected=0, survived_in_run=0, failed_clearly=0)
    for retries, kind, n in matrix(positions):
        proxy.set_plan({n: kind})
        out = run_module(info_mod.main, dict(args, cloud=lab.cloud(), request_retries=retries))
        stats["faults_injected"] += len(proxy.injected())
        where = "info: %s at request %d (retries %d)" % (kind, n, retries)
        assert no_traceback(out), "%s: %r" % (where, out)
        if retries:
            assert out.kind == "exit" and out.result["profiles"] == ref.result["profiles"], "%s: %r" % (where, out)
            stats["survived_in_run"] += 1
        else:
            assert clear_failure(out), "%s: %s" % (where, out.msg)
            stats["failed_clearly"] += 1
        proxy.wait_idle()
    figures["cyborg_info_faults"] = stats
    record(figures, "cyborg_faults_total", **stats)
