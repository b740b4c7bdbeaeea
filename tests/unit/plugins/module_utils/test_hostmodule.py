# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host-module base (_hostmodule): one run shape for every programming module: refusals, check mode from the
same plan, diff, rollback, the follow-up plan, the result keys, daemon-reload, the private work directory."""

from __future__ import annotations

import os

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _hostmodule
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import Host, Job, run
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan, Refusal
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import SysfsError
from ansible_collections.accelops.lifecycle.plugins.module_utils._tools import ToolError

BASE_KEYS = {"changed", "plan", "applied", "rolled_back", "rollback_failed", "audit"}


class FakeModule(object):
    def __init__(self, root, check_mode=False, diff=False, params=None, tmpdir=None):
        self.params = dict({"root": root}, **(params or {}))
        self.check_mode = check_mode
        self._diff = diff
        self._name = "accelops.lifecycle.test"
        self.tmpdir = tmpdir or root
        self.commands = []
        self.warnings = []

    def run_command(self, argv, environ_update=None):
        self.commands.append((argv, environ_update))
        return 0, "", ""

    def get_bin_path(self, name):
        return "/usr/bin/" + name

    def warn(self, msg):
        self.warnings.append(msg)

    def fail_json(self, msg, **kw):
        raise AssertionError(msg)


@pytest.fixture(autouse=True)
def _no_syslog(monkeypatch):
    monkeypatch.setenv("ACCELOPS_AUDIT_SYSLOG", "0")


def _host(tmp_path, **kw):
    return Host(FakeModule(str(tmp_path), **kw), "test")


def _plan(host, state, fail_at=None):
    plan = Plan()
    for i in range(3):
        def do(i=i):
            if i == fail_at:
                raise OSError("no %d" % i)
            state.append(i)
            host.auditor.record("step", "dev%d" % i, None, i)

        def undo(i=i):
            state.remove(i)
        plan.add("step %d" % i, do, undo, target="dev%d" % i, before="absent", after="present")
    return plan


def test_success_check_mode_and_diff(tmp_path):
    state = []
    host = _host(tmp_path, check_mode=True, diff=True)
    assert run(host, lambda h: Job(_plan(h, state))) is None
    r = host.result
    assert set(r) == BASE_KEYS | {"diff"} and r["changed"] and state == [], "check mode runs nothing"
    assert r["applied"] == ["step 0", "step 1", "step 2"] and [s["target"] for s in r["plan"]] == ["dev0", "dev1", "dev2"]
    assert r["diff"]["after"] == "dev0: present\ndev1: present\ndev2: present\n" and r["audit"] == []
    real = _host(tmp_path)
    assert run(real, lambda h: Job(_plan(h, state))) is None
    assert state == [0, 1, 2] and real.result["plan"] == r["plan"] and len(real.result["audit"]) == 3
    assert "diff" not in real.result
    empty = _host(tmp_path, diff=True)
    assert run(empty, lambda h: Job(Plan())) is None
    assert not empty.result["changed"] and "diff" not in empty.result, "nothing planned: no diff"


@pytest.mark.parametrize("error", [Refusal("address: bad", blocked=[1]), SysfsError("read", "/sys/x", OSError(5, "Input/output error")),
                                   ToolError("t is not installed (looked in /usr/bin)")])
def test_refusals_fail_with_the_message_and_the_keys_so_far(tmp_path, error):
    host = _host(tmp_path)

    def hook(h):
        h.result["address"] = "0000:01:00.0"
        raise error
    assert run(host, hook) == str(error)
    assert host.result["address"] == "0000:01:00.0" and not host.result["changed"] and BASE_KEYS <= set(host.result)
    if isinstance(error, Refusal):
        assert host.result["blocked"] == [1]


def test_failed_step_rolls_back_and_changed_means_still_in_effect(tmp_path):
    state = []
    host = _host(tmp_path)
    msg = run(host, lambda h: Job(_plan(h, state, fail_at=2), failed=lambda h, e: "dev: %s" % e))
    assert msg.startswith("dev: step 2 failed: no 2; rolled back: step 1; step 0") and state == []
    r = host.result
    assert r["state"] == "unchanged" and not r["changed"] and r["still_applied"] == [] and r["failed_step"] == "step 2"
    assert len(r["audit"]) == 2, "the changes that ran (and were undone) stay audited"


def test_follow_up_plan_runs_after_and_its_failure_undoes_the_first(tmp_path):
    state, more = [], []
    host = _host(tmp_path)

    def finish(h):
        p = Plan()
        p.add("late", lambda: more.append("x"), more.clear, target="late")
        return p
    assert run(host, lambda h: Job(_plan(h, state), finish=finish)) is None
    assert state == [0, 1, 2] and more == ["x"] and host.result["applied"][-1] == "late"
    assert [s["description"] for s in host.result["plan"]][-1] == "late" and host.result["changed"]

    state2 = []
    host = _host(tmp_path)

    def bad_finish(h):
        p = Plan()
        p.add("late", lambda: 1 / 0, target="late")
        return p
    msg = run(host, lambda h: Job(_plan(h, state2), finish=bad_finish))
    assert "late failed" in msg and state2 == [] and host.result["state"] == "unchanged" and not host.result["changed"]

    host = _host(tmp_path, check_mode=True)
    assert run(host, lambda h: Job(_plan(h, []), finish=finish)) is None and host.result["applied"][-1] == "step 2"


def test_refusal_after_the_run_keeps_what_ran(tmp_path):
    state = []
    host = _host(tmp_path)

    def finish(h):
        raise Refusal("read back failed", observed="x")
    assert run(host, lambda h: Job(_plan(h, state), finish=finish)) == "read back failed"
    assert host.result["changed"] and host.result["applied"] == ["step 0", "step 1", "step 2"]
    assert host.result["observed"] == "x" and state == [0, 1, 2]


def test_daemon_reload_only_for_units_under_the_real_root(tmp_path, monkeypatch):
    for persist_root, reloads in ((str(tmp_path / "p"), False), ("/", True)):
        host = _host(tmp_path, params={"persist_root": persist_root})
        plan = Plan()
        plan.add("unit", lambda: None, target="/etc/systemd/system/accelops-x.service")
        assert host.files.root == os.path.abspath(persist_root)
        assert run(host, lambda h: Job(plan)) is None
        assert [c[0] for c in host.module.commands] == ([["/usr/bin/systemctl", "daemon-reload"]] if reloads else [])
    # no unit changed, or check mode: no reload
    host = _host(tmp_path, params={"persist_root": "/"})
    host.files  # pylint: disable=pointless-statement
    assert run(host, lambda h: Job(Plan())) is None and host.module.commands == []


def test_workdir_is_private_and_removed(tmp_path):
    host = _host(tmp_path)
    seen = {}

    def hook(h):
        seen["dir"] = h.workdir()
        assert oct(os.stat(seen["dir"]).st_mode & 0o777) == "0o700" and h.workdir() == seen["dir"]
        return Job(Plan())
    assert run(host, hook) is None
    host.cleanup()
    assert not os.path.exists(seen["dir"])


def test_tools_run_in_the_c_locale_with_the_limit(tmp_path):
    host = _host(tmp_path)
    t = tmp_path / "usr/bin/t"
    t.parent.mkdir(parents=True)
    t.write_text("#!/bin/sh\n")
    t.chmod(0o755)
    runner = host.tools(9)
    runner.run("t", ["a"])
    argv, env = host.module.commands[0]
    assert argv == ["/usr/bin/timeout", "--kill-after=10", "9s", str(t), "a"] and env == {"LC_ALL": "C"}
    assert _hostmodule.REFUSALS == (Refusal, SysfsError, ToolError)
