# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the unit tests build once and share: fork_shared.

ansible-test units runs every test in a child process of its own (its ansible_forked plugin), forked from the
pytest-xdist worker: a module-scoped fixture is set up again in each child, and what it built (a simulated lab tree,
a discovery of it) dies with the child. A fixture that builds through fork_shared keeps what it builds in a
directory of the worker, so the worker's first test builds it and the others load it: module scope, as the fixture
says, under ansible-test too. Run by plain pytest (no forks) it works the same.

The simulator (tests/simulator) goes on sys.path here, for every unit test that renders a lab.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import tempfile

import pytest

SIMULATOR = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "simulator"))
if os.path.isdir(SIMULATOR) and SIMULATOR not in sys.path:
    sys.path.insert(0, SIMULATOR)

# The directory of this process (an xdist worker, or pytest itself), made before any test forks: every child of
# the process finds it. A child never removes it (it leaves by os._exit); the process that made it does, at the end.
_SHARED = {}


def pytest_configure(config):
    _SHARED["dir"] = tempfile.mkdtemp(prefix="accelops-units-")
    _SHARED["pid"] = os.getpid()


def pytest_unconfigure(config):
    if _SHARED.get("pid") == os.getpid():
        shutil.rmtree(_SHARED.pop("dir"), ignore_errors=True)


def _build_once(key, build):
    """build(DIR) -> a picklable value, called once per process for KEY: later calls (in later forks) load it."""
    where = os.path.join(_SHARED["dir"], key)
    value_file = os.path.join(where, "value.pickle")
    if os.path.exists(value_file):
        with open(value_file, "rb") as f:
            return pickle.load(f)
    # a build that failed in an earlier test left part of a tree: start again from nothing, as a fresh fixture would
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    value = build(where)
    with open(value_file + ".part", "wb") as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.rename(value_file + ".part", value_file)
    return value


@pytest.fixture(scope="session")
def fork_shared():
    """fork_shared(KEY, BUILD): BUILD(DIR) builds in the empty directory DIR (kept until the run ends) and returns a
    picklable value; the first call for KEY builds, each later one (in this test's fork or a later one) gets a copy of
    that value. KEY names what is built (a module and its parameter): two fixtures never share a KEY. What BUILD
    leaves on disk is shared as it is: a test must not change it (the same rule as for a module-scoped fixture)."""
    return _build_once
