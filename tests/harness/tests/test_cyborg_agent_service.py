# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""svc_cyborg_agent.py: the real Cyborg agent (Intel FPGA driver) on a simulated host reports through the real
conductor into the real Placement, and nothing outside its namespaces changes.

Needs root (unshare --mount --uts; CI runs as root), .venv-cyborg and .venv-services. The simulated host is a
plain tree here (no FUSE needed); the integration target cyborg_end_to_end runs the same on a FUSE mount, with
the collection's part (programming, function traits, device profile, ARQ bind, hostdev_xml)."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import pytest

import servicelib
import svc_cyborg_agent

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "simulator"))
import accelsim  # noqa: E402  pylint: disable=wrong-import-position

PF, VF = "0000:5e:00.0", "0000:5e:00.1"
REGION = "CUSTOM_FPGA_REGION_INTEL_38558F8B33385E6BA9A5C6AC75F8E59F"
FUNCTION = "CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A93C849C1AD7C6D7B3C2A7"


def _placement(endpoint, method, path, body=None):
    req = urllib.request.Request(endpoint + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
    return json.loads(text) if text else None


@pytest.fixture(scope="module")
def agent_on_pac():
    """Placement, the PAC lab with its VF enabled (port on the VF), a compute node, and Cyborg with its agent."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.fail("needs root and unshare (CI runs as root)", pytrace=False)
    state = tempfile.mkdtemp(prefix="accelops-cyborg-agent-")
    try:
        h = accelsim.render_tree("fpga-opae-vf", os.path.join(state, "host"))
        with h.transaction() as k:
            k.set_numvfs(PF, "1")
        v = servicelib.start(state, ["placement"])
    except (servicelib.HarnessError, OSError) as e:
        shutil.rmtree(state, ignore_errors=True)
        pytest.fail("could not set up: %s" % e, pytrace=False)
    short = "cyagent%d" % (os.getpid() % 100000)
    root = _placement(v["placement_endpoint"], "POST", "/resource_providers", {"name": short + ".example.org"})
    try:
        cy = svc_cyborg_agent.start(state, v["placement_endpoint"], os.path.join(state, "host", "sys"), short,
                                    short + ".example.org")
        yield {"state": state, "placement": v["placement_endpoint"], "root": root, "short": short, "cyborg": cy}
    finally:
        svc_cyborg_agent.stop(state)
        servicelib.stop(state)
        shutil.rmtree(state, ignore_errors=True)


def test_the_agent_reports_the_card_through_the_conductor_into_placement(agent_on_pac):
    ep, root = agent_on_pac["placement"], agent_on_pac["root"]
    tree = _placement(ep, "GET", "/resource_providers?in_tree=" + root["uuid"])["resource_providers"]
    children = [p for p in tree if p["uuid"] != root["uuid"]]
    name = agent_on_pac["short"] + "_" + VF
    # one deployable for the card, on the VF carrying the port, named after the host name in the namespace
    assert [(p["name"], p["parent_provider_uuid"]) for p in children] == [(name, root["uuid"])]
    assert children[0]["uuid"] == str(uuid.uuid3(uuid.NAMESPACE_DNS, name))
    traits = _placement(ep, "GET", "/resource_providers/%s/traits" % children[0]["uuid"])["traits"]
    assert sorted(traits) == sorted(["CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_PAC_ARRIA10", REGION, FUNCTION])
    assert "OWNER_CYBORG" not in traits   # Cyborg 17 writes no owner trait (docs/device_profiles.md)
    inv = _placement(ep, "GET", "/resource_providers/%s/inventories" % children[0]["uuid"])["inventories"]
    assert list(inv) == ["FPGA"] and inv["FPGA"]["total"] == 1


def test_reports_keep_coming_without_errors(agent_on_pac):
    rep = svc_cyborg_agent.wait_for_report(agent_on_pac["state"], time.time(), timeout=20)
    assert rep["error"] is None
    assert all(r["error"] is None for r in svc_cyborg_agent.reports(agent_on_pac["state"]))


def test_cyborg_knows_the_attach_handle(agent_on_pac):
    cy = agent_on_pac["cyborg"]
    req = urllib.request.Request(cy["cyborg_agent_endpoint"] + "/v2/deployables",
                                 headers={"X-Auth-Token": "admin", "OpenStack-API-Version": "accelerator 2.2"})
    with urllib.request.urlopen(req, timeout=30) as r:
        deps = json.loads(r.read().decode())["deployables"]
    assert [(d["name"], d["num_accelerators"]) for d in deps] == [(agent_on_pac["short"] + "_" + VF, 1)]


def test_nothing_outside_the_namespaces_changed(agent_on_pac):
    assert socket.gethostname() != agent_on_pac["short"]
    with open("/proc/self/mountinfo") as f:
        assert agent_on_pac["state"] not in f.read()
    # the server itself runs with the simulated /sys and the simulated host name
    pid = int(open(os.path.join(agent_on_pac["state"], "cyborg-agent", "cyborg-agent.pid")).read())
    with open("/proc/%d/mountinfo" % pid) as f:
        mounts = [line.split() for line in f]
    assert [m[3] for m in mounts if m[4] == "/sys"][-1].endswith("/host/sys"), [m[3:5] for m in mounts if m[4] == "/sys"]
    out = subprocess.run(["nsenter", "-t", str(pid), "-u", "hostname"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == agent_on_pac["short"], out


def test_refuses_a_directory_that_is_not_a_simulated_sys(tmp_path):
    with pytest.raises(servicelib.HarnessError, match="not a simulated /sys"):
        svc_cyborg_agent.start(str(tmp_path), "http://127.0.0.1:1", str(tmp_path), "x", "x")
