# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Placement client's bounded retries, with a scripted adapter (the real service behind a fault proxy
is exercised in tests/reliability)."""

from __future__ import annotations

import json

import pytest

from keystoneauth1 import exceptions as ksa_exc

from ansible_collections.accelops.lifecycle.plugins.module_utils import _openstack
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P


class Resp(object):
    def __init__(self, status, body=None):
        self.status_code = status
        self.text = json.dumps(body) if body is not None else ""
        self.content = self.text.encode()

    def json(self):
        return json.loads(self.text)


class Adapter(object):
    """Answers from a script: each item a Resp or an exception to raise."""

    def __init__(self, script):
        self.script = list(script)
        self.sent = []

    def request(self, path, method, **kwargs):
        self.sent.append((method, path, kwargs))
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def client(script, **kw):
    pauses = []
    c = P.Client(Adapter(script), sleep=pauses.append, **kw)
    return c, pauses


def test_get_is_retried_after_no_answer_and_5xx():
    c, pauses = client([ksa_exc.ConnectFailure("refused"), Resp(503, {}), Resp(200, {"x": 1})])
    assert c.get("/resource_providers") == {"x": 1}
    assert c.retried == 2 and pauses == [0.5, 1.0] and c.requests == 3
    assert c.adapter.sent[0][2]["connect_retries"] == 0 and c.adapter.sent[0][2]["timeout"] == P.REQUEST_TIMEOUT


def test_gives_up_with_a_clear_message():
    c, pauses = client([ksa_exc.ConnectTimeout("timed out")] * 3, retries=2, retry_delay=0.1)
    with pytest.raises(P.PlacementConnectionError) as e:
        c.get("/resource_providers")
    msg = str(e.value)
    # the shared wording (_openstack.ServiceUnavailable), as Cyborg and Ironic fail
    assert msg.startswith("Placement: GET /resource_providers failed: GET /resource_providers: no answer: "
                          "ConnectTimeout")
    assert "3 attempts" in msg and "run again" in msg and pauses == [0.1, 0.2]
    assert e.value.service == "Placement" and e.value.attempts == 3


def test_5xx_after_the_retries_is_the_shared_unavailable_error():
    # was a PlacementHTTPError; now as for Cyborg and Ironic: a 5xx that outlasts the retries means the service
    # is not working, and the message says so (with the status and Placement's detail)
    c, dummy = client([Resp(500, {"errors": [{"detail": "database gone"}]})] * 2, retries=1)
    with pytest.raises(P.ServiceUnavailable) as e:
        c.get("/traits")
    assert e.value.attempts == 2 and "HTTP 500: database gone" in str(e.value) and c.retried == 1


def test_a_5xx_of_a_create_outlasting_the_retries_is_the_shared_error_and_never_a_duplicate():
    action = {"name": "n", "uuid": P.provider_uuid("n"), "root_uuid": "r"}
    c, pauses = client([Resp(503, {}), Resp(404, {}), Resp(503, {})], retries=1)
    with pytest.raises(P.ServiceUnavailable) as e:
        P.Converger(c, None).create(action)
    assert "create provider n failed: POST /resource_providers: HTTP 503" in str(e.value)
    assert [m for m, p, k in c.adapter.sent] == ["POST", "GET", "POST"] and pauses == [0.5]


def test_placement_errors_name_the_request_and_what_401_and_403_mean():
    c, dummy = client([Resp(403, {"errors": [{"code": "placement.forbidden", "detail": "not allowed"}]})])
    with pytest.raises(P.PlacementHTTPError) as e:
        c.get("/resource_providers")
    msg = str(e.value)
    assert msg.startswith("Placement GET /resource_providers: HTTP 403 placement.forbidden: not allowed")
    assert "permission denied" in msg and "admin role" in msg and e.value.code == "placement.forbidden"


def test_writes_are_refused_in_check_mode():
    c, dummy = client([], read_only=True)
    with pytest.raises(RuntimeError):
        c.call("PUT", "/traits/CUSTOM_X", ok=(201, 204))
    with pytest.raises(RuntimeError):
        P.Converger(c, None).create({"name": "n", "uuid": P.provider_uuid("n"), "root_uuid": "r"})
    assert c.adapter.sent == []


def test_post_is_not_retried_by_the_client_and_4xx_never():
    c, dummy = client([ksa_exc.ConnectFailure("x")])
    with pytest.raises(P.PlacementConnectionError):
        c.call("POST", "/resource_providers", {})
    c, dummy = client([Resp(400, {"errors": [{"detail": "bad"}]})])
    with pytest.raises(P.PlacementHTTPError):
        c.get("/x")
    assert c.retried == 0


def test_ssl_errors_are_not_retried():
    c, dummy = client([ksa_exc.SSLError("bad cert")])
    with pytest.raises(ksa_exc.SSLError):
        c.get("/x")


def test_create_whose_answer_was_lost_is_found_not_duplicated():
    action = {"name": "cn1_0000:3b:00.0", "uuid": P.provider_uuid("cn1_0000:3b:00.0"), "root_uuid": "r"}
    found = {"name": action["name"], "uuid": action["uuid"], "parent_provider_uuid": "r", "generation": 0}
    c, dummy = client([ksa_exc.ConnectFailure("dropped"), Resp(200, found)])
    conv = P.Converger(c, None)
    assert conv.create(action) == found
    assert [m for m, p, k in c.adapter.sent] == ["POST", "GET"]


def test_create_retried_when_the_first_post_did_not_land():
    action = {"name": "n", "uuid": P.provider_uuid("n"), "root_uuid": "r"}
    made = {"name": "n", "uuid": action["uuid"], "parent_provider_uuid": "r", "generation": 0}
    c, dummy = client([Resp(503, {}), Resp(404, {}), Resp(200, made)])
    assert P.Converger(c, None).create(action) == made
    assert [m for m, p, k in c.adapter.sent] == ["POST", "GET", "POST"]


@pytest.mark.parametrize("retries,delay", [(-1, 0.5), (21, 0.5), (3, -0.1), (3, float("nan")), (3, 61),
                                           (True, 0.5), (3, False), ("3", 0.5)])
def test_retry_options_are_bounded(retries, delay):
    # the shared check (Placement's copy had no bool check)
    assert P.check_retry_options is _openstack.check_retry_options
    with pytest.raises(ValueError) as e:
        P.check_retry_options(retries, delay)
    assert str(e.value).startswith("request_retries: " if retries != 3 else "request_retry_delay: ")


def test_version_discovery_is_retried_and_fails_with_the_shared_error():
    class Conn(object):
        tries = 0

        @property
        def placement(self):
            Conn.tries += 1
            raise ksa_exc.ConnectFailure("refused")
    pauses = []
    with pytest.raises(P.PlacementConnectionError) as e:
        P.discover(Conn(), retries=2, delay=0.1, sleep=pauses.append)
    assert Conn.tries == 3 and pauses == [0.1, 0.2]
    assert str(e.value).startswith("Placement: version discovery failed: GET /: no answer: ConnectFailure")
