# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reliability suite (docs/reliability.md): faults, concurrency, hostile input, secrets.

Self-contained: starts its own real Placement through tests/harness (servicelib) for the session, renders
its own simulator labs, puts this checkout on sys.path as ``ansible_collections.accelops.lifecycle``.
Run: .venv/bin/python -m pytest -q tests/reliability

Figures: every test that measures something adds it to ``figures`` (session); at the end they are
printed and written to ``$RELIABILITY_FIGURES`` (JSON) when that is set.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
for _p in (HERE, os.path.join(TOP, "tests", "harness"), os.path.join(TOP, "tests", "simulator"),
           os.path.join(TOP, "tests", "unit", "plugins", "modules")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import servicelib  # noqa: E402  pylint: disable=wrong-import-position
from fixtures import PlacementService, put_collection_on_path  # noqa: E402  pylint: disable=wrong-import-position

put_collection_on_path()
# The harness gives a service 15 s to start; on a loaded shared machine Placement (and a restart of it in
# the fault tests) can take longer. This suite allows 60 s.
servicelib.STARTUP_TIMEOUT = max(servicelib.STARTUP_TIMEOUT, 60.0)

FIGURES = {}


class RestartablePlacement(PlacementService):
    """A Placement this session started (its own state directory), which tests may restart: same database,
    a new port (the fault proxy in front of it hides the change)."""

    def __init__(self, state_dir, variables):
        PlacementService.__init__(self, variables)
        self.state_dir = state_dir

    def restart(self):
        svc = servicelib.SERVICES["placement"]()
        svc.stop(self.state_dir)
        for attempt in range(3):
            try:
                variables = svc.start(self.state_dir)
                break
            except servicelib.HarnessError:
                svc.stop(self.state_dir)
                if attempt == 2:
                    raise
        self.vars.update(variables)
        self.endpoint = variables["placement_endpoint"]
        return self.endpoint


@pytest.fixture(scope="session")
def placement():
    state = tempfile.mkdtemp(prefix="accelops-reliability-")
    variables = None
    for attempt in range(3):
        try:
            variables = servicelib.start(state, ["placement"])
            break
        except servicelib.HarnessError as e:
            servicelib.stop(state)
            if attempt == 2:
                shutil.rmtree(state, ignore_errors=True)
                pytest.fail("could not start Placement: %s" % e, pytrace=False)
    try:
        yield RestartablePlacement(state, variables)
    finally:
        servicelib.stop(state)
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture
def clean_placement(placement):
    placement.wipe()
    return placement


@pytest.fixture(scope="session")
def figures():
    return FIGURES


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    terminalreporter.write_sep("-", "reliability figures")
    for k in sorted(FIGURES):
        terminalreporter.write_line("%s: %s" % (k, json.dumps(FIGURES[k], sort_keys=True)))
    out = os.environ.get("RELIABILITY_FIGURES")
    if out:
        with open(out, "w") as f:
            json.dump(FIGURES, f, indent=1, sort_keys=True)
