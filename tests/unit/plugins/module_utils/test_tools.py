# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one tool finder and runner of the host modules (_tools)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _tools
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs


def _tool(path, body="#!/bin/sh\necho hi\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(body)
    os.chmod(path, 0o755)
    return path


def test_tool_dirs_include_nvidia():
    assert "/usr/lib/nvidia" in _tools.TOOL_DIRS and _tools.TOOL_DIRS[0] == "/usr/bin"


def test_find_under_a_simulated_root_only_looks_there(tmp_path, monkeypatch):
    root = str(tmp_path / "root")
    os.makedirs(root)
    sysfs = Sysfs(root=root)
    mine = _tool(str(tmp_path / "bin" / "sriov-manage"))
    monkeypatch.setenv("PATH", os.path.dirname(mine))
    assert _tools.find_tool(sysfs, "sriov-manage") is None, "this machine's PATH is not the simulated host's"
    theirs = _tool(os.path.join(root, "usr/lib/nvidia/sriov-manage"))
    assert _tools.find_tool(sysfs, "sriov-manage") == theirs
    os.makedirs(os.path.join(root, "usr/bin/adir"))
    assert _tools.find_tool(sysfs, "adir") is None, "a directory is not a tool"
    assert str(_tools.not_installed(sysfs, "x")) == "x is not installed (looked in %s under %s)" % (
        ", ".join(_tools.TOOL_DIRS), root)


def test_find_on_the_real_root_uses_path_first(tmp_path, monkeypatch):
    mine = _tool(str(tmp_path / "bin" / "accelops-test-tool"))
    monkeypatch.setenv("PATH", os.path.dirname(mine))
    assert _tools.find_tool(Sysfs(root="/"), "accelops-test-tool") == mine
    assert _tools.find_tool(Sysfs(root="/"), "accelops-no-such-tool") is None


def test_runner_wording_and_calls(tmp_path):
    root = str(tmp_path)
    sysfs = Sysfs(root=root)
    t = _tool(os.path.join(root, "usr/bin/t"))
    results = iter([(0, "ok", ""), (3, "", "boom\n"), (3, "", ""), (124, "", ""), OSError("exec format error")])
    seen = []

    def run(argv):
        seen.append(argv)
        r = next(results)
        if isinstance(r, Exception):
            raise r
        return r
    runner = _tools.ToolRunner(sysfs, run=run, timeout=5, timeout_bin="/usr/bin/timeout")
    assert runner.run("t", ["a"]) == (0, "ok", "")
    assert seen[0] == ["/usr/bin/timeout", "--kill-after=10", "5s", t, "a"]
    with pytest.raises(_tools.ToolError, match="%s failed \\(exit 3\\): boom$" % t):
        runner.run("t", [])
    assert runner.run("t", [], check=False)[0] == 3
    with pytest.raises(_tools.ToolError, match="did not finish within 7 s and was stopped \\(timeout\\)") as e:
        runner.run("t", [], timeout=7)
    assert e.value.timed_out
    with pytest.raises(_tools.ToolError, match="failed to start: exec format error"):
        runner.run("t", [])
    with pytest.raises(_tools.ToolError, match="nosuch is not installed"):
        runner.run("nosuch", [])
    assert [c["argv"] for c in runner.calls] == [[t, "a"], [t], [t], [t]], "runs are kept without the timeout prefix"
    assert runner.calls[1] == {"argv": [t], "rc": 3, "stdout": "", "stderr": "boom\n"}


def test_runner_without_limit_and_required_limit(tmp_path):
    sysfs = Sysfs(root=str(tmp_path))
    t = _tool(os.path.join(str(tmp_path), "usr/bin/t"))
    seen = []
    runner = _tools.ToolRunner(sysfs, run=lambda argv: seen.append(argv) or (124, "", ""), timeout=0)
    assert runner.run("t", [], check=False) == (124, "", ""), "no limit: 124 is the tool's own exit status"
    assert seen == [[t]]
    strict = _tools.ToolRunner(sysfs, run=lambda argv: (0, "", ""), timeout=5, timeout_bin="", require_limit=True)
    with pytest.raises(_tools.ToolError, match="coreutils timeout is not installed"):
        strict.run("t", [])


def test_run_captured(tmp_path):
    t = _tool(str(tmp_path / "t"), "#!/bin/sh\necho \"$LC_ALL\"; echo err >&2; exit 2\n")
    assert _tools.run_captured([t]) == (2, "C\n", "err\n")
    slow = _tool(str(tmp_path / "slow"), "#!/bin/sh\nexec sleep 30\n")
    with pytest.raises(_tools.ToolError, match="did not finish within 1 s") as e:
        _tools.run_captured([slow], timeout=1)
    assert e.value.timed_out
    with pytest.raises(_tools.ToolError, match="failed to start"):
        _tools.run_captured([str(tmp_path / "missing")])
    # the real runner (no run callable) goes through run_captured
    runner = _tools.ToolRunner(Sysfs(root="/"), timeout=5)
    assert runner.run(t, [], check=False)[0] == 2
