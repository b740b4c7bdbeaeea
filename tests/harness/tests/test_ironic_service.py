# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The harness's real standalone Ironic (svc_ironic.py): start/stop contract, where it writes, and the Ironic
behaviour the bare-metal module relies on (traits, the 50-trait limit, properties, node locks)."""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

import servicelib

SERVICES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "services")
MICROVERSION = "1.37"


def _call(endpoint, method, path, body=None, microversion=MICROVERSION):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "X-OpenStack-Ironic-API-Version": microversion}
    req = urllib.request.Request(endpoint + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    return status, (json.loads(text) if text.strip().startswith(("{", "[")) else text)


def _fault(body):
    """Ironic's error body: a JSON string inside the error_message of a JSON object."""
    return json.loads(body["error_message"])["faultstring"]


@pytest.fixture(scope="module")
def ironic():
    """A fresh Ironic of our own (these tests stop and restart it, so never the gate's shared one)."""
    state = tempfile.mkdtemp(prefix="accelops-ironic-")
    # A HOME and TMPDIR of our own while it starts: the test below checks Ironic left them empty.
    outside = tempfile.mkdtemp(prefix="accelops-ironic-outside-")
    saved = {k: os.environ.get(k) for k in ("HOME", "TMPDIR")}
    os.environ.update(HOME=outside, TMPDIR=outside)
    t0 = time.time()
    try:
        v = servicelib.start(state, ["ironic"])
    except servicelib.HarnessError as e:
        shutil.rmtree(state, ignore_errors=True)
        pytest.fail("could not start Ironic: %s" % e, pytrace=False)
    finally:
        for k, val in saved.items():
            if val is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = val
    v["startup_s"] = time.time() - t0
    v["outside"] = outside
    try:
        yield v
    finally:
        servicelib.stop(state)
        shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(outside, ignore_errors=True)


def _node(endpoint, name):
    status, body = _call(endpoint, "POST", "/v1/nodes", {"name": name, "driver": "fake-hardware"},
                         microversion="latest")
    assert status == 201, body
    return body


def test_starts_quickly_with_fake_hardware_and_noauth(ironic):
    e = ironic["ironic_endpoint"]
    assert e.startswith("http://127.0.0.1:")
    assert ironic["startup_s"] < 30
    status, body = _call(e, "GET", "/v1/drivers")
    assert status == 200 and [d["name"] for d in body["drivers"]] == ["fake-hardware"]
    # noauth: no token needed, and we are allowed to write
    node = _node(e, "h-noauth")
    assert node["driver"] == "fake-hardware" and node["provision_state"] == "enroll"
    for iface in ("bios", "boot", "console", "deploy", "firmware", "inspect", "management", "network", "power",
                  "raid", "rescue", "storage", "vendor"):
        assert node[iface + "_interface"] in ("fake", "noop", "no-" + iface), (iface, node[iface + "_interface"])


def test_everything_it_writes_is_in_its_state_dir(ironic):
    d = os.path.join(ironic["services_state_dir"], "ironic")
    with open(os.path.join(d, "ironic.conf")) as f:
        conf = f.read()
    paths = [line.split("=", 1)[1].strip() for line in conf.splitlines()
             if "=" in line and line.split("=", 1)[1].strip().startswith(("/", "sqlite:"))]
    assert paths, conf
    for p in paths:
        p = p.replace("sqlite:///", "")
        assert p.startswith(d + os.sep), p
    assert os.path.exists(os.path.join(d, "ironic.sqlite"))
    assert ironic["ironic_log"] == os.path.join(d, "ironic.log")
    # the HOME and TMPDIR it was started with stay empty (it has its own in the state dir)
    _node(ironic["ironic_endpoint"], "h-writes")
    assert os.listdir(ironic["outside"]) == []


def test_traits_limit_names_and_properties(ironic):
    """What baremetal_node_accelerators relies on, checked against the real service."""
    e = ironic["ironic_endpoint"]
    uuid = _node(e, "h-traits")["uuid"]
    status, body = _call(e, "PUT", "/v1/nodes/%s/traits" % uuid, {"traits": ["CUSTOM_T%02d" % i for i in range(50)]})
    assert status == 204, body
    status, body = _call(e, "PUT", "/v1/nodes/%s/traits/CUSTOM_ONE_MORE" % uuid)
    assert status == 400 and "exceed the maximum number of traits per node (51 vs. 50)" in _fault(body)
    status, body = _call(e, "PUT", "/v1/nodes/%s/traits" % uuid, {"traits": ["custom_lower"]})
    assert status == 400 and "CUSTOM_[A-Z0-9_]+" in _fault(body)
    status, body = _call(e, "PATCH", "/v1/nodes/%s" % uuid,
                         [{"op": "add", "path": "/properties/accelerators",
                           "value": [{"vendor_id": "10de", "device_id": "1eb8", "type": "GPU",
                                      "pci_address": "0000:3b:00.0", "device_info": "NVIDIA Corporation Tesla T4"}]}])
    assert status == 200, body
    status, body = _call(e, "GET", "/v1/nodes/%s" % uuid)
    assert body["properties"]["accelerators"][0]["pci_address"] == "0000:3b:00.0"
    # traits need API 1.37
    status, body = _call(e, "GET", "/v1/nodes/%s/traits" % uuid, microversion="1.36")
    assert status == 406


def test_a_reserved_node_is_locked(ironic):
    """A node a conductor holds (reservation set) answers writes with 409 NodeLocked: how tests lock one."""
    e = ironic["ironic_endpoint"]
    uuid = _node(e, "h-locked")["uuid"]
    db = os.path.join(ironic["services_state_dir"], "ironic", "ironic.sqlite")
    with sqlite3.connect(db, timeout=10) as c:
        c.execute("UPDATE nodes SET reservation = ? WHERE uuid = ?", ("other-conductor", uuid))
    try:
        status, body = _call(e, "PUT", "/v1/nodes/%s/traits/CUSTOM_X" % uuid)
        assert status == 409 and "locked by host other-conductor" in _fault(body)
    finally:
        with sqlite3.connect(db, timeout=10) as c:
            c.execute("UPDATE nodes SET reservation = NULL WHERE uuid = ?", (uuid,))
    status, body = _call(e, "PUT", "/v1/nodes/%s/traits/CUSTOM_X" % uuid)
    assert status == 204, body


def test_stop_restart_keeps_nodes_and_stop_is_idempotent(ironic):
    state = ironic["services_state_dir"]
    e = ironic["ironic_endpoint"]
    _node(e, "h-kept")
    r = subprocess.run([SERVICES, "stop", state], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and "stopped ironic" in r.stdout
    assert servicelib.http_status(e + "/v1/nodes") is None
    assert not os.path.exists(os.path.join(state, "ironic", "ironic.pid"))
    r = subprocess.run([SERVICES, "stop", state], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and "nothing" in r.stdout
    v = servicelib.start(state, ["ironic"])
    ironic.update(v)
    status, body = _call(v["ironic_endpoint"], "GET", "/v1/nodes/h-kept")
    assert status == 200 and body["name"] == "h-kept"
    r = subprocess.run([SERVICES, "start", state, "--services", "ironic"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 1 and "already runs" in r.stderr


def test_missing_venv_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCELOPS_IRONIC_VENV", str(tmp_path / "no-venv"))
    with pytest.raises(servicelib.HarnessError) as e:
        servicelib.start(str(tmp_path / "state"), ["ironic"])
    assert "setup-venv.sh ironic" in str(e.value)
