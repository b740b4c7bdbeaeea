# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Real Cyborg and Ironic for the reliability suite (test_cyborg_faults.py, test_ironic_faults.py,
test_permissions.py): started once per session through tests/harness (Cyborg against the session's Placement
from conftest.py), restartable (same database, a new port: a fault proxy in front hides the change), and
read back over plain HTTP, never through the code under test.

Import the fixtures into a test module with ``from svcfaults_helpers import cyborg, ironic  # noqa: F401``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request

import pytest

import servicelib

FULL = os.environ.get("RELIABILITY_FULL") == "1"
# The proxy's stall and the modules' api_timeout: a stalled request is given up by the module (and retried)
# and still reaches the service a little later, as a slow server would process it.
STALL_S = 1.0
API_TIMEOUT = 0.5
FAST_DELAY = 0.05
# Ironic (SQLite, API and conductor in one process) can take over a second per write on a loaded machine, and
# several seconds just after it started (a clean clone's CI run timed out a fault-free PATCH 5 times at 2 s).
IRONIC_API_TIMEOUT = 6.0
IRONIC_STALL_S = 8.0
# Retries that carry a run over a restart of the service (0.5 + 1 + 2 + 4 + 8 + 8 = 23.5 s of pauses).
RESTART_RETRIES = 6
RESTART_DELAY = 0.5


class Service(object):
    """One harness service started in its own state directory; ``restart`` keeps its database."""

    def __init__(self, name, state_dir, context):
        self.name = name
        self.state_dir = state_dir
        self.context = dict(context)
        self.vars = {}
        self.restarts = []

    def _start(self):
        svc = servicelib.SERVICES[self.name]()
        svc.context = dict(self.context)
        for attempt in range(3):
            try:
                self.vars = svc.start(self.state_dir)
                return
            except servicelib.HarnessError:
                svc.stop(self.state_dir)
                if attempt == 2:
                    raise

    def start(self):
        self._start()
        return self

    def stop(self):
        servicelib.SERVICES[self.name]().stop(self.state_dir)

    def restart(self):
        """Stop and start again (the fault proxy's ``restart`` callback): the new upstream URL."""
        t0 = time.time()
        self.stop()
        self._start()
        self.restarts.append(round(time.time() - t0, 1))
        return self.upstream

    @property
    def endpoint(self):
        return self.vars["%s_endpoint" % self.name]

    @property
    def upstream(self):
        """scheme://host:port of the service (the proxy forwards the request path as it is)."""
        parts = self.endpoint.split("/")
        return "/".join(parts[:3])


def _http(method, url, headers, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    h = dict(headers)
    if data is not None:
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, (json.loads(text) if text.strip() else None)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Cyborg(Service):
    TOKEN = "admin"

    def headers(self, token=None):
        return {"X-Auth-Token": token or self.TOKEN, "OpenStack-API-Version": "accelerator 2.0",
                "Accept": "application/json"}

    def cloud(self, base=None, token=None):
        """A ``cloud`` dict for the modules; ``base``: the proxy's URL instead of the service's."""
        e = (base + "/accelerator") if base else self.endpoint
        return {"auth_type": "admin_token", "auth": {"endpoint": e, "token": token or self.TOKEN},
                "accelerator_endpoint_override": e + "/v2", "api_timeout": API_TIMEOUT}

    def profiles(self):
        status, body = _http("GET", self.endpoint + "/v2/device_profiles", self.headers())
        assert status == 200, (status, body)
        return body["device_profiles"]

    def by_name(self, name):
        return [p for p in self.profiles() if p["name"] == name]

    def create(self, name, groups, description=None):
        body = {"name": name, "groups": groups}
        if description is not None:
            body["description"] = description
        status, out = _http("POST", self.endpoint + "/v2/device_profiles", self.headers(), [body])
        assert status == 201, (status, out)
        return out

    def delete(self, uuid):
        status, out = _http("DELETE", self.endpoint + "/v2/device_profiles/" + uuid, self.headers())
        assert status in (204, 404), (status, out)


class Ironic(Service):
    HEADERS = {"X-OpenStack-Ironic-API-Version": "1.37", "Accept": "application/json"}

    def cloud(self, base=None):
        return {"auth_type": "none", "baremetal_endpoint_override": base or self.endpoint,
                "baremetal_status_code_retries": 0, "api_timeout": IRONIC_API_TIMEOUT}

    def create_node(self, name, traits=(), properties=None):
        status, node = _http("POST", self.endpoint + "/v1/nodes", self.HEADERS,
                             {"name": name, "driver": "fake-hardware", "properties": properties or {}})
        assert status == 201, (status, node)
        if traits:
            status, out = _http("PUT", self.endpoint + "/v1/nodes/%s/traits" % node["uuid"], self.HEADERS,
                                {"traits": list(traits)})
            assert status == 204, (status, out)
        return node

    def node(self, ident):
        """``(sorted traits, properties)`` of the node, read over plain HTTP."""
        status, node = _http("GET", self.endpoint + "/v1/nodes/%s" % ident, self.HEADERS)
        assert status == 200, (status, node)
        return sorted(node.get("traits") or []), node.get("properties") or {}


@pytest.fixture(scope="session")
def service_state():
    state = tempfile.mkdtemp(prefix="accelops-svcfaults-")
    yield state
    for name in ("ironic", "cyborg"):
        servicelib.SERVICES[name]().stop(state)
    shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="session")
def cyborg(placement, service_state):
    try:
        svc = Cyborg("cyborg", service_state, {"placement_endpoint": placement.endpoint}).start()
    except servicelib.HarnessError as e:
        pytest.fail("could not start Cyborg: %s" % e, pytrace=False)
    yield svc
    svc.stop()


@pytest.fixture(scope="session")
def ironic(service_state):
    try:
        svc = Ironic("ironic", service_state, {}).start()
    except servicelib.HarnessError as e:
        pytest.fail("could not start Ironic: %s" % e, pytrace=False)
    yield svc
    svc.stop()


def record(figures, key, **counts):
    f = figures.setdefault(key, {})
    for k, v in counts.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            f[k] = f.get(k, 0) + v
        else:
            f[k] = v


def no_traceback(outcome):
    return outcome.kind in ("exit", "fail") and "Traceback" not in outcome.msg
