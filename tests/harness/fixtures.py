# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pytest fixtures for tests against real services (a plugin: ``-p tests.harness.fixtures`` or a
conftest's ``pytest_plugins``).

- ``placement`` (session): a running Placement. Reuses the one described by the services.yml named in
  ``$ACCELOPS_SERVICES_YML`` (as the gate runner writes it), else starts a fresh one in a temporary
  directory and stops it at the end of the session.
- ``clean_placement`` (function): the same, wiped first (allocations, providers, custom traits and
  resource classes), so each test starts from an empty Placement.

The :class:`PlacementService` object talks plain HTTP (urllib) so tests can arrange state and read it back
without going through the code under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servicelib  # noqa: E402  pylint: disable=wrong-import-position

MICROVERSION = "1.39"


def collection_import_root():
    """A directory to put on sys.path so that ``ansible_collections.accelops.lifecycle`` imports this
    work tree (a symlink farm, so tests run from a plain checkout without staging)."""
    top = servicelib.TOP
    parts = top.rstrip(os.sep).split(os.sep)
    if len(parts) >= 3 and parts[-3] == "ansible_collections":
        return os.sep.join(parts[:-3])
    root = os.path.join(tempfile.gettempdir(), "accelops-collections-%d" % os.getuid(),
                        hashlib.sha1(top.encode()).hexdigest()[:12])
    link = os.path.join(root, "ansible_collections", "accelops", "lifecycle")
    if os.path.realpath(link) != os.path.realpath(top):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        try:
            os.unlink(link)
        except OSError:
            pass
        os.symlink(top, link)
    return root


def put_collection_on_path():
    root = collection_import_root()
    if root not in sys.path:
        sys.path.insert(0, root)
    return root


class PlacementError(Exception):
    def __init__(self, status, body):
        Exception.__init__(self, "HTTP %s: %s" % (status, body))
        self.status = status
        self.body = body


class PlacementService(object):
    """A running Placement and a few plain-HTTP helpers for arranging and checking state."""

    def __init__(self, variables):
        self.vars = variables
        self.endpoint = variables["placement_endpoint"]
        self.token = variables.get("placement_token", "admin")
        self.cli = variables.get("osc_placement_cli")
        self.access_log = variables.get("placement_access_log")

    # -- connection settings, as the modules take them ------------------------------------------------
    def cloud(self, token=None, endpoint=None):
        """A ``cloud`` dict for the modules (admin_token against this endpoint)."""
        e = endpoint or self.endpoint
        return {"auth_type": "admin_token", "auth": {"endpoint": e, "token": token or self.token},
                "placement_endpoint_override": e, "placement_api_version": MICROVERSION}

    def sdk(self):
        import openstack
        return openstack.connect(app_name="accelops-tests", **self.cloud())

    # -- plain HTTP -------------------------------------------------------------------------------------
    def request(self, method, path, body=None, microversion=MICROVERSION, expect=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.endpoint + path, data=data, method=method, headers={
            "X-Auth-Token": self.token, "OpenStack-API-Version": "placement %s" % microversion,
            "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        result = json.loads(text) if text.strip().startswith(("{", "[")) else text
        if expect is not None and status not in (expect if isinstance(expect, (list, tuple)) else (expect,)):
            raise PlacementError(status, text)
        return result if expect is not None else (status, result)

    def get(self, path):
        return self.request("GET", path, expect=200)

    def providers(self, query=""):
        return self.get("/resource_providers" + query)["resource_providers"]

    def provider_by_name(self, name):
        found = self.providers("?name=" + urllib.request.quote(name))
        return found[0] if found else None

    def create_provider(self, name, uuid=None, parent=None):
        body = {"name": name}
        if uuid:
            body["uuid"] = uuid
        if parent:
            body["parent_provider_uuid"] = parent
        return self.request("POST", "/resource_providers", body, expect=200)

    def traits(self, uuid):
        return sorted(self.get("/resource_providers/%s/traits" % uuid)["traits"])

    def set_traits(self, uuid, traits):
        gen = self.get("/resource_providers/%s/traits" % uuid)["resource_provider_generation"]
        for t in traits:
            if t.startswith("CUSTOM_"):
                self.request("PUT", "/traits/" + t, expect=(201, 204))
        return self.request("PUT", "/resource_providers/%s/traits" % uuid,
                            {"traits": list(traits), "resource_provider_generation": gen}, expect=200)

    def inventories(self, uuid):
        return self.get("/resource_providers/%s/inventories" % uuid)["inventories"]

    def set_inventories(self, uuid, inventories):
        gen = self.get("/resource_providers/%s/inventories" % uuid)["resource_provider_generation"]
        for rc in inventories:
            if rc.startswith("CUSTOM_"):
                self.request("PUT", "/resource_classes/" + rc, expect=(201, 204))
        return self.request("PUT", "/resource_providers/%s/inventories" % uuid,
                            {"inventories": inventories, "resource_provider_generation": gen}, expect=200)

    def allocate(self, consumer, allocations, project="p" * 32, user="u" * 32):
        """Allocate for a consumer: ``{rp_uuid: {RC: n}}``."""
        body = {"allocations": dict((rp, {"resources": res}) for rp, res in allocations.items()),
                "project_id": project, "user_id": user, "consumer_generation": None, "consumer_type": "INSTANCE"}
        return self.request("PUT", "/allocations/" + consumer, body, expect=204)

    # -- request counting (the server's access log) ---------------------------------------------------
    def log_mark(self):
        time.sleep(0.3)  # let the server log the requests sent so far
        if not self.access_log or not os.path.exists(self.access_log):
            return 0
        with open(self.access_log) as f:
            return sum(1 for dummy in f)

    def requests_since(self, mark):
        """Requests the server logged since ``mark`` (``log_mark()``), as "METHOD PATH STATUS" lines."""
        if not self.access_log:
            raise RuntimeError("this Placement has no access log to count requests with")
        # the server logs a request after it has sent the response: give it a moment to do so
        time.sleep(0.3)
        with open(self.access_log) as f:
            return [line.strip().replace(" HTTP/1.1", "") for line in f.readlines()[mark:]]

    # -- independent read-back -----------------------------------------------------------------------
    def cli_json(self, *args):
        """Run the osc-placement CLI (a separate client, a separate venv) and parse its JSON output."""
        if not self.cli:
            raise RuntimeError("no osc_placement_cli in the services variables")
        cmd = [self.cli, "--os-auth-type", "admin_token", "--os-endpoint", self.endpoint, "--os-token", self.token,
               "--os-placement-api-version", MICROVERSION] + list(args) + ["-f", "json"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120).stdout
        return json.loads(out)

    # -- reset ------------------------------------------------------------------------------------------
    def wipe(self):
        """Remove every allocation, provider, custom trait and custom resource class."""
        providers = self.providers()
        consumers = set()
        for p in providers:
            allocs = self.get("/resource_providers/%s/allocations" % p["uuid"])["allocations"]
            consumers.update(allocs)
        for c in consumers:
            self.request("DELETE", "/allocations/" + c, expect=(204, 404))
        by_uuid = dict((p["uuid"], p) for p in providers)

        def depth(p):
            d = 0
            while p.get("parent_provider_uuid") and p["parent_provider_uuid"] in by_uuid and d < 50:
                p = by_uuid[p["parent_provider_uuid"]]
                d += 1
            return d
        for p in sorted(providers, key=depth, reverse=True):
            self.request("DELETE", "/resource_providers/" + p["uuid"], expect=(204, 404))
        for t in self.get("/traits?name=startswith:CUSTOM_")["traits"]:
            self.request("DELETE", "/traits/" + t, expect=(204, 404, 409))
        for rc in self.get("/resource_classes")["resource_classes"]:
            if rc["name"].startswith("CUSTOM_"):
                self.request("DELETE", "/resource_classes/" + rc["name"], expect=(204, 404, 409))


@pytest.fixture(scope="session")
def placement():
    yml = os.environ.get("ACCELOPS_SERVICES_YML")
    if yml:
        yield PlacementService(servicelib.read_vars(yml))
        return
    state = tempfile.mkdtemp(prefix="accelops-services-")
    try:
        variables = servicelib.start(state, ["placement"])
    except servicelib.HarnessError as e:
        shutil.rmtree(state, ignore_errors=True)
        pytest.fail("could not start Placement: %s" % e, pytrace=False)
    try:
        yield PlacementService(variables)
    finally:
        servicelib.stop(state)
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture
def clean_placement(placement):
    placement.wipe()
    return placement
