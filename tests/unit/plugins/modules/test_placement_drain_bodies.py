# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""placement_provider_drain against an endpoint that answers 200 with bodies that are not Placement's (a proxy's
page, another service): a failure that names the request, never a KeyError traceback. A real HTTP server on
loopback stands at the boundary (the module's requests go through openstacksdk and keystoneauth unchanged)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from modrunner import patch_module_args  # pylint: disable=wrong-import-order
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_drain

pytest.importorskip("openstack")
UUID = "7d9cf1a6-4a1b-4b8c-9d2e-0a1b2c3d4e5f"


def _server(bodies):
    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            if self.path.rstrip("/") == "":
                body = {"versions": [{"id": "v1.0", "min_version": "1.0", "max_version": "1.39", "status": "CURRENT",
                                      "links": [{"rel": "self", "href": "/"}]}]}
            else:
                body = bodies.get(self.path.split("?")[0].rsplit("/", 1)[-1], {"unexpected": True})
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        do_GET = do_PUT = do_POST = _answer

        def log_message(self, *_args):
            pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("bodies", [
    {},                                                                            # no generation, no allocations
    {"allocations": {"resource_provider_generation": 1, "allocations": []}},      # allocations of the wrong type
    {"allocations": {"resource_provider_generation": 1, "allocations": {}},       # an inventory without total
     "inventories": {"resource_provider_generation": 1, "inventories": {"FPGA": {"reserved": 0}}}},
], ids=["empty-object", "list-allocations", "inventory-without-total"])
def test_an_unexpected_200_body_fails_with_a_message(capsys, bodies):
    server = _server(bodies)
    url = "http://127.0.0.1:%d" % server.server_address[1]
    args = {"cloud": {"auth_type": "admin_token", "auth": {"endpoint": url, "token": "a-secret-token"},
                      "placement_endpoint_override": url, "api_timeout": 5},
            "providers": [{"uuid": UUID, "name": "card-0"}], "request_retries": 0}
    try:
        with patch_module_args(args):
            with pytest.raises(SystemExit):
                placement_provider_drain.main()
    finally:
        server.shutdown()
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] is True and "Traceback" not in result["msg"], result
    assert "HTTP 200 but the body is not Placement's answer" in result["msg"], result["msg"]
    assert UUID in result["msg"]
