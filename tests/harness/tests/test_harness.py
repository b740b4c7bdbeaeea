# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The services harness: the command-line contract the gate runner relies on, and the fixtures."""
import os
import subprocess
import time

import servicelib

SERVICES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "services")


def _run(*args):
    return subprocess.run([SERVICES] + list(args), capture_output=True, text=True, timeout=60, check=False)


def test_start_writes_variables_serves_and_stop_is_idempotent(tmp_path):
    state = str(tmp_path / "state")
    t0 = time.time()
    r = _run("start", state, "--services", "placement")
    assert r.returncode == 0, r.stderr
    assert time.time() - t0 < 15
    v = servicelib.read_vars(os.path.join(state, "services.yml"))
    try:
        assert v["placement_endpoint"].startswith("http://127.0.0.1:")
        assert v["placement_token"] == "admin"
        assert os.access(v["osc_placement_cli"], os.X_OK)
        # noauth2: the token admin is an admin, no token is refused
        assert servicelib.http_status(v["placement_endpoint"] + "/resource_providers", {"X-Auth-Token": "admin"}) == 200
        assert servicelib.http_status(v["placement_endpoint"] + "/resource_providers") == 401
        assert os.path.exists(os.path.join(state, "placement", "placement.sqlite"))
        # a second start on the same state dir is refused while the first runs
        r2 = _run("start", state)
        assert r2.returncode == 1 and "already runs" in r2.stderr
    finally:
        r = _run("stop", state)
    assert r.returncode == 0 and "stopped placement" in r.stdout
    assert servicelib.http_status(v["placement_endpoint"] + "/resource_providers", {"X-Auth-Token": "admin"}) is None
    assert not os.path.exists(os.path.join(state, "services.yml"))
    r = _run("stop", state)
    assert r.returncode == 0 and "nothing" in r.stdout


def test_bad_usage_and_unknown_service(tmp_path):
    r = _run("start")
    assert r.returncode == 2 and "usage" in r.stderr
    r = _run("start", str(tmp_path), "--services", "nova")
    assert r.returncode == 1 and "unknown service" in r.stderr and "placement" in r.stderr


def test_fixture_wipe_and_cli_read_back(clean_placement):
    p = clean_placement
    root = p.create_provider("cn1")
    p.set_traits(root["uuid"], ["CUSTOM_HARNESS_TEST"])
    p.set_inventories(root["uuid"], {"VCPU": {"total": 4}})
    p.allocate("cccccccc-0000-0000-0000-000000000000", {root["uuid"]: {"VCPU": 1}})
    listed = p.cli_json("resource", "provider", "list")
    assert [x["name"] for x in listed] == ["cn1"]
    p.wipe()
    assert p.providers() == []
    assert "CUSTOM_HARNESS_TEST" not in p.get("/traits?name=startswith:CUSTOM_")["traits"]


def test_access_log_counts_requests(placement):
    mark = placement.log_mark()
    placement.get("/resource_providers")
    placement.get("/traits?name=startswith:CUSTOM_")
    lines = placement.requests_since(mark)
    assert len(lines) == 2 and lines[0].startswith("GET /resource_providers ")
