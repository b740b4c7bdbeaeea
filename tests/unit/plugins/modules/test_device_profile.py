# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""device_profile and device_profile_info against an in-memory stand-in of Cyborg's and Placement's HTTP APIs
(the SDK connection is replaced; the modules' own code runs unchanged). The same flows against the real
services are in the integration targets device_profile and device_profile_info."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from modrunner import patch_exits, run_module

from ansible_collections.accelops.lifecycle.plugins.module_utils import _openstack
from ansible_collections.accelops.lifecycle.plugins.modules import device_profile, device_profile_info

FPGA_GZIP = [{"family": "fpga", "vendor": "intel", "function": "gzip"}]
FPGA_GZIP_RAW = {"resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required", "trait:CUSTOM_FUNCTION_GZIP": "required"}


class _Resp(object):
    def __init__(self, status, body=None):
        self.status_code = status
        self.text = "" if body is None else (body if isinstance(body, str) else json.dumps(body))
        self.content = self.text.encode()

    def json(self):
        return json.loads(self.text)


def _fault(text):
    return {"error_message": json.dumps({"faultcode": "Client", "faultstring": text, "debuginfo": None})}


class FakeCyborg(object):
    """Device profiles and ARQs, answering like Cyborg 17.0.0 does to what the modules send."""

    def __init__(self):
        self.profiles = {}
        self.arqs = []
        self.sent = []
        self.forbid_writes = False
        self.fail_create = False

    def request(self, path, method, microversion=None, raise_exc=True, headers=None, json=None, **kwargs):  # noqa: A002
        self.sent.append((method, path, json))
        if path.startswith("/device_profiles") and method == "GET":
            name = path.split("?name=")[1] if "?name=" in path else None
            return _Resp(200, {"device_profiles": [p for p in self.profiles.values()
                                                   if name is None or p["name"] == name]})
        if path == "/device_profiles" and method == "POST":
            if self.forbid_writes:
                return _Resp(403, _fault("Access was denied to the following resource: cyborg:device_profile:create"))
            if self.fail_create:
                return _Resp(500, _fault("boom"))
            body = json[0]
            assert "uuid" not in body
            if any(p["name"] == body["name"] for p in self.profiles.values()):
                return _Resp(409, _fault("A device_profile with name %s already exists." % body["name"]))
            p = dict(body, uuid=str(uuid.uuid4()), created_at="now", updated_at=None)
            p.setdefault("description", None)
            self.profiles[p["uuid"]] = p
            return _Resp(201, p)
        if path.startswith("/device_profiles/") and method == "DELETE":
            u = path.rsplit("/", 1)[1]
            if self.forbid_writes:
                return _Resp(403, _fault("Access was denied to the following resource: cyborg:device_profile:delete"))
            if u not in self.profiles:
                return _Resp(404, _fault("Device Profile not found with uuid=%s" % u))
            if any(a["device_profile_name"] == self.profiles[u]["name"] for a in self.arqs):
                return _Resp(500, _fault("(sqlite3.IntegrityError) FOREIGN KEY constraint failed"))
            del self.profiles[u]
            return _Resp(204)
        if path == "/accelerator_requests" and method == "GET":
            return _Resp(200, {"arqs": self.arqs})
        raise AssertionError("unexpected request %s %s" % (method, path))


class FakePlacement(object):
    def __init__(self):
        self.providers = [{"uuid": "r1", "name": "cn1"}, {"uuid": "c1", "name": "cn1_0000:3b:00.0"}]
        self.known_traits = {"CUSTOM_FUNCTION_GZIP", "CUSTOM_FPGA_INTEL"}
        self.sent = []

    def request(self, path, method, **kwargs):
        self.sent.append((method, path))
        assert method == "GET"
        if path == "/resource_providers":
            return _Resp(200, {"resource_providers": self.providers})
        if path.startswith("/allocation_candidates?"):
            unknown = [t for part in path.split("&") if part.startswith("required")
                       for t in part.split("=")[1].split(",") if t.lstrip("!") not in self.known_traits]
            if unknown:
                return _Resp(400, {"errors": [{"status": 400, "detail": "Bad.\n\n No such trait(s): %s." % unknown[0]}]})
            if "FPGA:1" in path and "!" not in path:
                return _Resp(200, {"allocation_requests": [{"allocations": {"c1": {"resources": {"FPGA": 1}}}}],
                                   "provider_summaries": {"c1": {"root_provider_uuid": "r1"}}})
            return _Resp(200, {"allocation_requests": [], "provider_summaries": {}})
        raise AssertionError(path)


class _Conn(object):
    def __init__(self, cyborg, placement):
        self.accelerator = cyborg
        self.placement = placement


@pytest.fixture
def cloud(monkeypatch):
    patch_exits(monkeypatch)
    fake = _Conn(FakeCyborg(), FakePlacement())
    monkeypatch.setattr(_openstack.OpenStackModule, "conn", property(lambda self: fake))
    return fake


def dp(args, **kw):
    return run_module(device_profile.main, dict(args, cloud="test"), **kw)


def info(args, **kw):
    return run_module(device_profile_info.main, dict(args, cloud="test"), **kw)


def writes(fake):
    return [s for s in fake.accelerator.sent if s[0] != "GET"]


def test_create_check_mode_then_real_then_noop(cloud):
    r = dp({"name": "gzip", "groups": FPGA_GZIP}, check=True, diff=True)
    assert r.kind == "exit" and r.result["changed"] and r.result["action"] == "created"
    assert r.result["diff"]["before"] == {} and r.result["diff"]["after"]["groups"] == [FPGA_GZIP_RAW]
    assert writes(cloud) == [] and cloud.accelerator.profiles == {}
    r = dp({"name": "gzip", "groups": FPGA_GZIP, "description": "d"})
    assert r.result["changed"] and r.result["profile"]["uuid"] in cloud.accelerator.profiles
    (post,) = writes(cloud)
    assert post[2] == [{"name": "gzip", "description": "d", "groups": [FPGA_GZIP_RAW]}]
    for check in (True, False):
        r = dp({"name": "gzip", "groups": [FPGA_GZIP_RAW], "description": "d"}, check=check, diff=True)
        assert not r.result["changed"] and r.result["action"] == "unchanged" and r.result["requests"] == 1
        assert r.result["diff"]["before"] == r.result["diff"]["after"]
    # no description given: the existing one is not compared
    assert dp({"name": "gzip", "groups": FPGA_GZIP}).result["action"] == "unchanged"
    assert len(writes(cloud)) == 1


def test_change_needs_replace_and_no_arq(cloud):
    dp({"name": "gzip", "groups": FPGA_GZIP})
    old = list(cloud.accelerator.profiles)[0]
    new = [{"family": "fpga", "function": "gzip", "count": 2}]
    r = dp({"name": "gzip", "groups": new})
    assert r.kind == "fail" and "replace: true" in r.result["msg"] and r.result["differences"] == ["groups"]
    cloud.accelerator.arqs = [{"uuid": "arq-1", "state": "Bound", "device_profile_name": "gzip",
                               "instance_uuid": "inst-1"}]
    for check in (True, False):
        r = dp({"name": "gzip", "groups": new, "replace": True}, check=check)
        assert r.kind == "fail" and "arq-1 (state Bound, instance inst-1)" in r.result["msg"]
        assert r.result["accelerator_requests"] == ["arq-1"]
    assert len(writes(cloud)) == 1
    cloud.accelerator.arqs = [{"uuid": "arq-2", "state": "Initial", "device_profile_name": "other"}]
    r = dp({"name": "gzip", "groups": new, "replace": True}, check=True, diff=True)
    assert r.result["changed"] and r.result["action"] == "replaced" and len(writes(cloud)) == 1
    assert r.result["diff"]["after"]["groups"] == [{"resources:FPGA": "2", "trait:CUSTOM_FUNCTION_GZIP": "required"}]
    r = dp({"name": "gzip", "groups": new, "replace": True})
    assert r.result["action"] == "replaced" and old not in cloud.accelerator.profiles
    assert [m for m, _p, _b in writes(cloud)] == ["POST", "DELETE", "POST"]
    assert dp({"name": "gzip", "groups": new, "replace": True}).result["action"] == "unchanged"


def test_replace_where_create_fails_says_the_profile_is_gone(cloud):
    dp({"name": "gzip", "groups": FPGA_GZIP})
    cloud.accelerator.fail_create = True
    r = dp({"name": "gzip", "groups": [{"family": "fpga"}], "replace": True, "request_retry_delay": 0})
    assert r.kind == "fail" and "it is now absent" in r.result["msg"] and "boom" in r.result["msg"]


def test_delete_missing_and_held(cloud):
    r = dp({"name": "gzip", "state": "absent"}, diff=True)
    assert r.result["action"] == "absent" and not r.result["changed"]
    dp({"name": "gzip", "groups": FPGA_GZIP})
    cloud.accelerator.arqs = [{"uuid": "arq-1", "state": "Initial", "device_profile_name": "gzip"}]
    r = dp({"name": "gzip", "state": "absent"})
    assert r.kind == "fail" and "cannot delete device profile gzip: 1 accelerator request(s) use it: arq-1" \
        in r.result["msg"]
    cloud.accelerator.arqs = []
    r = dp({"name": "gzip", "state": "absent"}, check=True)
    assert r.result["action"] == "deleted" and cloud.accelerator.profiles
    r = dp({"name": "gzip", "state": "absent"}, diff=True)
    assert r.result["changed"] and not cloud.accelerator.profiles and r.result["diff"]["after"] == {}


def test_bad_input_fails_before_any_request(cloud):
    r = dp({"name": "bad name", "groups": FPGA_GZIP})
    assert r.kind == "fail" and r.result["msg"].startswith("name:") and r.result["requests"] == 0
    r = dp({"name": "ok", "groups": [{"resources:DISK": "1"}]})
    assert r.kind == "fail" and r.result["msg"].startswith("groups[0]:") and "DISK" in r.result["msg"]
    r = dp({"name": "ok", "groups": []})
    assert r.kind == "fail" and "non-empty list" in r.result["msg"]
    r = dp({"name": "ok"})
    assert r.kind == "fail" and "groups" in r.result["msg"]
    assert cloud.accelerator.sent == []


def test_forbidden_is_explained(cloud):
    cloud.accelerator.forbid_writes = True
    r = dp({"name": "gzip", "groups": FPGA_GZIP})
    assert r.kind == "fail" and "HTTP 403" in r.result["msg"] and "admin role" in r.result["msg"]
    assert "cyborg:device_profile:create" in r.result["msg"]


def test_info_lists_gets_and_checks_candidates(cloud):
    dp({"name": "gzip", "groups": FPGA_GZIP})
    dp({"name": "zip2", "groups": [{"family": "fpga", "function": "gzip", "count": 2}]})
    dp({"name": "lz4", "groups": [{"family": "fpga", "function": "lz4"}]})
    r = info({})
    assert [p["name"] for p in r.result["profiles"]] == ["gzip", "lz4", "zip2"] and not r.result["changed"]
    assert "candidates" not in r.result["profiles"][0] and r.result["unsatisfiable"] == []
    r = info({"names": ["gzip", "nope"]}, check=True)
    assert [p["name"] for p in r.result["profiles"]] == ["gzip"] and r.result["missing"] == ["nope"]
    r = info({"check_candidates": True})
    by = dict((p["name"], p) for p in r.result["profiles"])
    assert by["gzip"]["satisfiable"] and by["gzip"]["candidates"]["count"] == 1
    assert by["gzip"]["candidates"]["hosts"] == ["cn1"] and by["gzip"]["candidates"]["providers"] == ["cn1_0000:3b:00.0"]
    assert not by["zip2"]["satisfiable"] and "reason" not in by["zip2"]["candidates"]
    assert not by["lz4"]["satisfiable"] and "No such trait(s): CUSTOM_FUNCTION_LZ4" in by["lz4"]["candidates"]["reason"]
    assert r.result["unsatisfiable"] == ["lz4", "zip2"]
    assert r.result["requests"] == 1 + 1 + 3


def test_info_reports_profiles_stored_with_bad_groups(cloud):
    cloud.accelerator.profiles["u"] = {"uuid": "u", "name": "junk", "description": None,
                                       "groups": [{"resources:FPGA": "0"}]}
    r = info({"check_candidates": True})
    (p,) = r.result["profiles"]
    assert not p["satisfiable"] and "cannot be scheduled as stored" in p["candidates"]["reason"]
    r = info({"check_candidates": True, "candidate_limit": 0})
    assert r.kind == "fail" and "candidate_limit" in r.result["msg"]


# The invalid forms, with what Cyborg 17.0.0 itself answers when sent as they are (400 it refuses, 500 it breaks
# on, 201 it stores though Placement or MySQL refuse them later: recorded against the real Cyborg by
# tests/harness/tests/test_cyborg_service.py::test_what_cyborg_does_with_invalid_profiles), and the message the
# module gives instead, before sending anything. The integration target device_profile keeps two of them
# (tasks/invalid.yml) against the real service; the whole matrix runs here, in-process.
INVALID = [
    # (name, groups, Cyborg's own answer, the module's message)
    ("bad name", [{"resources:FPGA": "1"}], 400, r"^name: 'bad name' is not a valid"),
    (None, [{"foo:FPGA": "1"}], 400, r"must start with resources:, trait: or accel:"),
    (None, [{"resources:FPGA": "1", "trait:FOO": "required"}], 400, r"must be a custom trait"),
    (None, [{"resources:FPGA": "1", "trait:CUSTOM_FOO": "maybe"}], 400, r"'required' or 'forbidden'"),
    (None, [{"resources:FPGA": "a"}], 400, r"whole number"),
    (None, [{"resources:FPGA": "1.5"}], 400, r"whole number"),
    (None, [{"resources:DISK": "1"}], 400, r"'DISK' is not one Cyborg supports"),
    ("", [{"resources:FPGA": "1"}], 500, r"needs a name"),
    (None, [], 500, r"non-empty list of groups"),
    (None, ["a"], 500, r"got str"),
    (None, [{"resources:FPGA": None}], 500, r"whole number"),
    (None, [{}], 201, r"the group is empty"),
    (None, [{"trait:CUSTOM_A": "required"}], 201, r"no resources:<CLASS> key"),
    (None, [{"resources:FPGA": "0"}], 201, r"at least 1"),
    (None, [{"resources:FPGA": "-1"}], 201, r"digits only"),
    (None, [{"resources:FPGA": "1", "trait:CUSTOM_foo": "required"}], 201, r"not a valid custom trait"),
    (None, [{"resources:CUSTOM_": "1"}], 201, r"not a valid custom resource class"),
    ("x" * 256, [{"resources:FPGA": "1"}], 201, r"holds 255"),
    (None, [{"family": "fpga", "colour": "red"}], None, r"unknown key\(s\) colour"),
]


@pytest.mark.parametrize("name, groups, cyborg_answer, message", INVALID,
                         ids=["%d-%s" % (i, c[3][:30]) for i, c in enumerate(INVALID)])
def test_invalid_forms_fail_naming_the_problem_and_send_nothing(cloud, name, groups, cyborg_answer, message):
    assert cyborg_answer in (400, 500, 201, None)   # what the module spares Cyborg (None: the friendly form)
    for check in (False, True):
        r = dp({"name": "it-invalid" if name is None else name, "groups": groups}, check=check)
        assert r.kind == "fail" and re.search(message, r.result["msg"]), r.result
        assert r.result["requests"] == 0
    assert cloud.accelerator.sent == [] and cloud.placement.sent == []
