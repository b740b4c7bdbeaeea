# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fork_shared (tests/unit/conftest.py): what one forked test built, a later fork gets without building it again."""

from __future__ import annotations

import os

import pytest


def _builder(calls, fail=False):
    def build(where):
        calls.append(where)
        assert os.listdir(where) == []  # an empty directory, even after a build that failed midway
        with open(os.path.join(where, "tree"), "w") as f:
            f.write("built")
        if fail:
            raise RuntimeError("the build failed midway")
        return {"where": where, "items": [1]}
    return build


def test_a_build_in_one_fork_is_loaded_by_the_next(fork_shared):
    key = "fork-shared-test-%d" % os.getpid()
    pid = os.fork()
    if not pid:  # the first test's fork: builds
        child_calls = []
        os._exit(0 if fork_shared(key, _builder(child_calls)) and len(child_calls) == 1 else 1)
    assert os.waitpid(pid, 0)[1] == 0
    calls = []
    first = fork_shared(key, _builder(calls))
    first["items"].append(2)  # a test may change its copy: the next one gets the value as built
    second = fork_shared(key, _builder(calls))
    assert calls == []
    assert second["items"] == [1]
    with open(os.path.join(second["where"], "tree")) as f:
        assert f.read() == "built"


def test_a_build_that_failed_is_done_again_from_nothing(fork_shared):
    key = "fork-shared-failed-%d" % os.getpid()
    calls = []
    with pytest.raises(RuntimeError):
        fork_shared(key, _builder(calls, fail=True))
    assert fork_shared(key, _builder(calls))["items"] == [1]
    assert len(calls) == 2
