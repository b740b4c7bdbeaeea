# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The OpenStack base: option mapping, contradictions, SDK error messages, and a real connection attempt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import socket

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.accelops.lifecycle.plugins.module_utils import _openstack
from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    OPENSTACK_ARGUMENT_SPEC, OpenStackModule, connection_kwargs, sdk_error_message)

openstack = pytest.importorskip("openstack")  # listed in requirements.txt; the gates install it


def _defaults(**params):
    base = dict((k, v.get("default")) for k, v in OPENSTACK_ARGUMENT_SPEC.items())
    base.update(params)
    return base


def test_option_names_match_openstack_cloud():
    assert set(OPENSTACK_ARGUMENT_SPEC) == {
        "cloud", "auth", "auth_type", "region_name", "validate_certs", "ca_cert", "client_cert", "client_key",
        "api_timeout", "interface", "wait", "timeout"}
    assert OPENSTACK_ARGUMENT_SPEC["auth"]["no_log"] is True
    assert OPENSTACK_ARGUMENT_SPEC["client_key"]["no_log"] is True
    assert OPENSTACK_ARGUMENT_SPEC["validate_certs"]["aliases"] == ["verify"]


def test_named_cloud_and_options_become_sdk_keywords():
    kw = connection_kwargs(_defaults(cloud="lab", region_name="RegionOne", validate_certs=False, ca_cert="/ca.pem",
                                     client_cert="/c.pem", client_key="/k.pem", api_timeout=30,
                                     interface="internal"))
    assert kw == {"cloud": "lab", "region_name": "RegionOne", "verify": False, "cacert": "/ca.pem",
                  "cert": "/c.pem", "key": "/k.pem", "api_timeout": 30, "interface": "internal",
                  "app_name": "accelops.lifecycle"}


def test_cloud_dict_is_passed_whole():
    cloud = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:1", "token": "admin"}}
    kw = connection_kwargs(_defaults(cloud=cloud))
    assert kw["auth_type"] == "admin_token" and kw["auth"] == cloud["auth"] and kw["interface"] == "public"


def test_cloud_dict_with_separate_auth_is_refused_naming_the_options():
    with pytest.raises(ValueError, match="remove auth, region_name"):
        connection_kwargs(_defaults(cloud={"auth_type": "password"}, auth={"username": "u"}, region_name="R"))


def test_cloud_of_wrong_type_is_refused():
    with pytest.raises(ValueError, match="cloud must be the name of a cloud"):
        connection_kwargs(_defaults(cloud=["x"]))


def test_sdk_error_message_carries_status_and_request_id():
    err = openstack.exceptions.HttpException(message="Conflict", details="generation mismatch", http_status=409,
                                             request_id="req-123")
    msg = sdk_error_message(err)
    assert "HTTP 409" in msg and "generation mismatch" in msg and "req-123" in msg


class _ListProviders(OpenStackModule):
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        providers = list(self.conn.placement.resource_providers())
        self.ansible.exit_json(changed=False, providers=len(providers))


def _closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _run(module_cls, args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            module_cls()()
    return json.loads(capsys.readouterr().out)


def test_unreachable_endpoint_fails_with_a_message_not_a_traceback(capsys):
    endpoint = "http://127.0.0.1:%d" % _closed_port()
    result = _run(_ListProviders, {
        "cloud": {"auth_type": "admin_token", "auth": {"endpoint": endpoint, "token": "secret-token"},
                  "placement_endpoint_override": endpoint, "api_timeout": 2}}, capsys)
    assert result["failed"] is True
    assert "exception" not in result or "Traceback" not in result.get("msg", "")
    assert "127.0.0.1" in result["msg"] or "connect" in result["msg"].lower()
    assert "secret-token" not in json.dumps(result)


def test_contradicting_options_fail_naming_them(capsys):
    result = _run(_ListProviders, {"cloud": {"auth_type": "admin_token"}, "auth": {"token": "a-long-secret-token"}}, capsys)
    assert result["failed"] is True
    assert "remove auth" in result["msg"]
    assert "a-long-secret-token" not in json.dumps(result)


def test_missing_sdk_fails_with_missing_required_lib(capsys, monkeypatch):
    monkeypatch.setattr(_openstack, "HAS_SDK", False)
    monkeypatch.setattr(_openstack, "SDK_IMPORT_ERROR", "ImportError: no openstack")
    result = _run(_ListProviders, {"cloud": "lab"}, capsys)
    assert result["failed"] is True and "openstacksdk" in result["msg"]


def test_the_sdk_is_imported_on_first_use_only():
    """The filters reach _openstack through _placement; every forked ansible worker that templates one of the
    collection's filters imports them, so openstacksdk must not come with the import."""
    code = ("import sys; import ansible_collections.accelops.lifecycle.plugins.module_utils._placement; "
            "import ansible_collections.accelops.lifecycle.plugins.module_utils._openstack as o; "
            "print('openstack' in sys.modules, 'keystoneauth1' in sys.modules); "
            "o._sdk_exceptions(); print('openstack' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    out = out.stdout.split("\n")
    assert out[:2] == ["False False", "True"]


class _ListThroughClient(OpenStackModule):
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        adapter = _openstack.service_proxy(lambda: self.conn.placement, "Placement", 0, 0)
        client = _openstack.ServiceClient(adapter, retries=1, retry_delay=0)
        status, _resp = client.send("GET", "/resource_providers")
        self.ansible.exit_json(changed=False, status=status)


def test_a_401_on_auth_url_ends_within_the_api_timeout(capsys):
    """Password auth against an auth_url that answers 401 to everything: keystoneauth goes through discovery
    again and again (the run hung past 60 s with api_timeout 2); one deadline per request path ends it."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Refuse(BaseHTTPRequestHandler):
        def _any(self):
            body = b'{"error": {"code": 401, "message": "The request you have made requires authentication."}}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST = do_HEAD = _any

        def log_message(self, *_args):
            pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % server.server_address[1]
    started = time.monotonic()
    try:
        result = _run(_ListThroughClient, {
            "auth_type": "password", "api_timeout": 2,
            "auth": {"auth_url": url + "/v3", "username": "demo-user", "password": "hunter2-secret", "project_name": "demo-project",
                     "user_domain_name": "Default", "project_domain_name": "Default"},
            "cloud": None}, capsys)
    finally:
        server.shutdown()
    took = time.monotonic() - started
    assert took < 30, took
    assert result["failed"] is True and "hunter2-secret" not in json.dumps(result)
    assert "no answer within 13.0 s (4 x api_timeout + 5.0 s)" in result["msg"], result["msg"]


@pytest.mark.parametrize("extra, option", [
    ({"region_name": "{}"}, "region_name: '{}' is not a region name"),
    ({"region_name": "{0}"}, "region_name: '{0}' is not a region name"),
    ({"region_name": ""}, "region_name: '' is not a region name"),
    ({"auth_type": "no-such-plugin"}, "auth_type: could not build an OpenStack connection"),
    ({"cloud": "no-such-cloud", "auth": None, "auth_type": None}, "cloud: could not build an OpenStack connection"),
], ids=["braces", "format-field", "empty", "auth-type", "cloud"])
def test_connection_refusals_name_the_option(capsys, extra, option):
    args = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:%d" % _closed_port(),
                                                 "token": "a-long-secret-token"}, "api_timeout": 2}
    args.update(extra)
    result = _run(_ListProviders, args, capsys)
    assert result["failed"] is True and result["msg"].startswith(option), result["msg"]
    assert "a-long-secret-token" not in json.dumps(result)
