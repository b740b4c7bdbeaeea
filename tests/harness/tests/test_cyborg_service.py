# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The harness's real Cyborg (svc_cyborg.py): start/stop contract, the token middleware, the conductor
reached over the in-process transport, and the behaviour the device profile modules rely on."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

import servicelib

SERVICES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "services")


def _call(endpoint, method, path, token="admin", body=None, microversion="2.2"):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "OpenStack-API-Version": "accelerator %s" % microversion}
    if token is not None:
        headers["X-Auth-Token"] = token
    req = urllib.request.Request(endpoint + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    return status, (json.loads(text) if text.strip().startswith(("{", "[")) else text)


def _fpga_profile(endpoint, name):
    """Create a device profile asking for one FPGA; fails the test unless Cyborg answers 201."""
    status, dp = _call(endpoint, "POST", "/v2/device_profiles", body=[{"name": name, "groups": [{"resources:FPGA": "1"}]}])
    assert status == 201, dp
    return dp


def _fault(body):
    """Cyborg's error body: a JSON string inside the error_message of a JSON object."""
    return json.loads(body["error_message"])["faultstring"]


@pytest.fixture(scope="module")
def services():
    """Placement + Cyborg: the ones in $ACCELOPS_SERVICES_YML when they include Cyborg, else fresh ones."""
    yml = os.environ.get("ACCELOPS_SERVICES_YML")
    if yml:
        v = servicelib.read_vars(yml)
        if v.get("cyborg_endpoint"):
            yield v
            return
    state = tempfile.mkdtemp(prefix="accelops-cyborg-")
    try:
        v = servicelib.start(state, ["placement", "cyborg"])
    except servicelib.HarnessError as e:
        shutil.rmtree(state, ignore_errors=True)
        pytest.fail("could not start Placement and Cyborg: %s" % e, pytrace=False)
    try:
        yield v
    finally:
        servicelib.stop(state)
        shutil.rmtree(state, ignore_errors=True)


def test_start_is_fast_stays_in_state_dir_and_stop_is_clean(tmp_path):
    home_before = set(os.listdir(os.path.expanduser("~")))
    state = str(tmp_path / "state")
    t0 = time.time()
    r = subprocess.run([SERVICES, "start", state, "--services", "placement,cyborg"], capture_output=True,
                       text=True, timeout=90, check=False)
    took = time.time() - t0
    assert r.returncode == 0, r.stderr
    v = servicelib.read_vars(os.path.join(state, "services.yml"))
    try:
        assert took < 20, "placement + cyborg took %.1f s to start" % took
        assert v["services_started"] == "placement,cyborg"
        assert v["cyborg_endpoint"].startswith("http://127.0.0.1:") and v["cyborg_endpoint"].endswith("/accelerator")
        assert v["cyborg_token"] == "admin" and v["cyborg_member_token"] == "member"
        assert _call(v["cyborg_endpoint"], "GET", "/v2/device_profiles")[0] == 200
        # everything it wrote is under its state folder
        assert os.path.exists(os.path.join(state, "cyborg", "cyborg.sqlite"))
        assert os.path.exists(os.path.join(state, "cyborg", "cyborg.log"))
        pid = int(open(os.path.join(state, "cyborg", "cyborg.pid")).read())
    finally:
        r = subprocess.run([SERVICES, "stop", state], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and "cyborg" in r.stdout
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    port = int(v["cyborg_endpoint"].split(":")[2].split("/")[0])
    s = socket.socket()
    try:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "cyborg's port still answers after stop"
    finally:
        s.close()
    assert "cyborg: stopped" in open(os.path.join(state, "cyborg", "cyborg.log")).read()
    assert set(os.listdir(os.path.expanduser("~"))) <= home_before | {".cache"}


def test_cyborg_needs_placement(tmp_path):
    r = subprocess.run([SERVICES, "start", str(tmp_path), "--services", "cyborg"], capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 1 and "needs placement" in r.stderr


def test_served_under_accelerator_with_versions(services):
    ep = services["cyborg_endpoint"]
    status, body = _call(ep, "GET", "/", token=None)
    assert status == 200
    hrefs = [link["href"] for version in body["versions"] for link in version["links"]]
    assert any(h.startswith(ep + "/v2") for h in hrefs), hrefs
    root = ep[:-len("/accelerator")]
    assert _call(root, "GET", "/v2/device_profiles")[0] == 404


def test_tokens_map_to_identities(services):
    ep = services["cyborg_endpoint"]
    assert _call(ep, "GET", "/v2/device_profiles", token="nonsense")[0] == 401
    status, body = _call(ep, "POST", "/v2/device_profiles", token="member",
                         body=[{"name": "harness-member", "groups": [{"resources:FPGA": "1"}]}])
    assert status == 403 and "cyborg:device_profile:create" in _fault(body)
    # identity headers from the client are ignored (the token decides)
    req = urllib.request.Request(ep + "/v2/device_profiles", method="POST", headers={
        "X-Auth-Token": "member", "X-Roles": "admin", "Content-Type": "application/json",
        "OpenStack-API-Version": "accelerator 2.2"},
        data=json.dumps([{"name": "harness-spoof", "groups": [{"resources:FPGA": "1"}]}]).encode())
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 403


def test_conductor_creates_and_refuses_to_delete_a_profile_an_arq_uses(services):
    ep = services["cyborg_endpoint"]
    dp = _fpga_profile(ep, "harness-arq")
    try:
        status, arqs = _call(ep, "POST", "/v2/accelerator_requests", body={"device_profile_name": "harness-arq"})
        assert status == 201, arqs
        arq = arqs["arqs"][0]["uuid"]
        # as on MySQL (foreign keys), the delete fails while the ARQ exists
        status, body = _call(ep, "DELETE", "/v2/device_profiles/" + dp["uuid"])
        assert status == 500 and "FOREIGN KEY" in _fault(body)
        assert _call(ep, "DELETE", "/v2/accelerator_requests?arqs=" + arq)[0] == 204
    finally:
        status, body = _call(ep, "DELETE", "/v2/device_profiles/" + dp["uuid"])
    assert status == 204, body
    assert _call(ep, "GET", "/v2/device_profiles?name=harness-arq")[1]["device_profiles"] == []


def test_openstacksdk_talks_to_it(services):
    import openstack
    ep = services["cyborg_endpoint"]
    conn = openstack.connect(auth_type="admin_token", auth={"endpoint": ep, "token": "admin"},
                             accelerator_endpoint_override=ep + "/v2", accelerator_api_version="2.2",
                             app_name="accelops-tests")
    dp = conn.accelerator.create_device_profile(name="harness-sdk", groups=[{"resources:GPU": "1"}])
    try:
        assert [p.name for p in conn.accelerator.device_profiles(name="harness-sdk")] == ["harness-sdk"]
    finally:
        conn.accelerator.delete_device_profile(dp.id)


# What Cyborg 17.0.0 answers to invalid profiles sent as they are: 400 (refused), 500 (it breaks), 201 (stored,
# though Placement or MySQL refuse it later). accelops.lifecycle.device_profile refuses every one of them itself
# (tests/unit/plugins/module_utils/test_cyborg.py, the device_profile integration target).
INVALID = [
    ("bad name", [{"resources:FPGA": "1"}], 400, "Device profile name must be of the form"),
    (None, [{"foo:FPGA": "1"}], 400, "group keys must be of the form"),
    (None, [{"resources:FPGA": "1", "trait:FOO": "required"}], 400, "should start with CUSTOM_"),
    (None, [{"resources:FPGA": "1", "trait:CUSTOM_FOO": "maybe"}], 400, "Unsupported trait value"),
    (None, [{"resources:FPGA": "a"}], 400, "Resources number a is invalid"),
    (None, [{"resources:FPGA": "1.5"}], 400, "is invalid"),
    (None, [{"resources:DISK": "1"}], 400, "Unsupported resource class DISK"),
    ("", [{"resources:FPGA": "1"}], 500, "DeviceProfile name needed"),
    (None, [], 500, "needs groups field"),
    (None, ["a"], 500, "has no attribute 'items'"),
    (None, [{"resources:FPGA": None}], 500, "int() argument"),
    (None, [{}], 201, None),
    (None, [{"trait:CUSTOM_A": "required"}], 201, None),
    (None, [{"resources:FPGA": "0"}], 201, None),
    (None, [{"resources:FPGA": "-1"}], 201, None),
    (None, [{"resources:FPGA": "1", "trait:CUSTOM_foo": "required"}], 201, None),
    (None, [{"resources:CUSTOM_": "1"}], 201, None),
    ("x" * 256, [{"resources:FPGA": "1"}], 201, None),
]


def test_what_cyborg_does_with_invalid_profiles(services):
    ep = services["cyborg_endpoint"]
    got = []
    for i, (name, groups, dummy_status, dummy_text) in enumerate(INVALID):
        status, body = _call(ep, "POST", "/v2/device_profiles",
                             body=[{"name": "harness-invalid-%d" % i if name is None else name, "groups": groups}])
        got.append((status, _fault(body) if status >= 400 else None))
        if status == 201:
            assert _call(ep, "DELETE", "/v2/device_profiles/" + body["uuid"])[0] == 204
    assert [s for s, dummy in got] == [s for dummy_n, dummy_g, s, dummy_t in INVALID]
    for (status, fault), (dummy_n, dummy_g, dummy_s, text) in zip(got, INVALID):
        assert text is None or text in fault, (status, fault, text)
    status, body = _call(ep, "POST", "/v2/device_profiles",
                         body=[{"name": "harness-dup", "groups": [{"resources:FPGA": "1"}]}])
    assert status == 201
    try:
        status, dup = _call(ep, "POST", "/v2/device_profiles",
                            body=[{"name": "harness-dup", "groups": [{"resources:FPGA": "1"}]}])
        assert status == 409 and "already exists" in _fault(dup)
    finally:
        _call(ep, "DELETE", "/v2/device_profiles/" + body["uuid"])


def test_service_token_lets_nova_bind(services):
    """Binding needs Nova's service token (X-Service-Token); the middleware gives it the service role."""
    ep = services["cyborg_endpoint"]
    dp = _fpga_profile(ep, "harness-bind")
    try:
        status, arqs = _call(ep, "POST", "/v2/accelerator_requests", body={"device_profile_name": "harness-bind"})
        arq = arqs["arqs"][0]["uuid"]
        patch = {arq: [{"path": "/hostname", "op": "add", "value": "cn1"},
                       {"path": "/device_rp_uuid", "op": "add", "value": "00000000-0000-0000-0000-000000000001"},
                       {"path": "/instance_uuid", "op": "add", "value": "00000000-0000-0000-0000-000000000002"}]}
        status, body = _call(ep, "PATCH", "/v2/accelerator_requests", body=patch)
        assert status == 403 and "requires a service token" in _fault(body)
        req = urllib.request.Request(ep + "/v2/accelerator_requests", method="PATCH", data=json.dumps(patch).encode(),
                                     headers={"X-Auth-Token": "admin", "Content-Type": "application/json",
                                              "X-Service-Token": "nonsense", "OpenStack-API-Version": "accelerator 2.2"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=30)
        assert e.value.code == 401
        # with the service token the bind reaches the conductor, which finds no deployable for that provider
        req = urllib.request.Request(ep + "/v2/accelerator_requests", method="PATCH", data=json.dumps(patch).encode(),
                                     headers={"X-Auth-Token": "admin", "Content-Type": "application/json",
                                              "X-Service-Token": services.get("cyborg_service_token", "service"),
                                              "OpenStack-API-Version": "accelerator 2.2"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=30)
        assert e.value.code == 404 and "Deployable" in e.value.read().decode()
    finally:
        # the ARQ names an instance now: deleting it takes the service token too
        req = urllib.request.Request(ep + "/v2/accelerator_requests?arqs=" + arq, method="DELETE",
                                     headers={"X-Auth-Token": "admin", "X-Service-Token": "service",
                                              "OpenStack-API-Version": "accelerator 2.2"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 204
        assert _call(ep, "DELETE", "/v2/device_profiles/" + dp["uuid"])[0] == 204
