# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nova with the real Cyborg: Nova's functional harness, whose own Cyborg client talks to a Cyborg over HTTP.

Run with .venv-nova's python: ``nova_cyborg.py PLACEMENT_ENDPOINT PLACEMENT_TOKEN NODENAME NOVA_TOKEN``. It
speaks JSON lines: on stdout (the process's original stdout; everything else goes to stderr) and stdin.

1. Nova starts: its functional harness (real API, conductor, scheduler, compute with the libvirt driver on fake
   libvirt, in-process message bus and database), with the harness's Placement (PLACEMENT_ENDPOINT, a real
   Placement service) in place of the in-process one, and its API also served on a local port so that Cyborg
   can send it the ``accelerator-request-bound`` event. It prints
   ``{"ready": {"nova_api", "compute_rp", "nodename"}}``: the caller then starts Cyborg's agent with the
   compute node provider as its root and Nova's API as its ``[nova]`` endpoint (token NOVA_TOKEN).
2. ``{"boot": PROFILE, "cyborg": CYBORG_ENDPOINT, "token": T, "service_token": S}``: Nova's Cyborg client is
   pointed at Cyborg (``[cyborg] endpoint_override``; the user's token T and Nova's service token S, as
   keystone would give them), and a flavor with ``accel:device_profile=PROFILE`` boots a server. The answer:
   ``{"server", "status", "fault", "hostdevs": [PCI addresses of the hostdevs in the guest XML Nova's libvirt
   driver defined], "events": [{"sent": what Cyborg posted to os-server-external-events, "answer": the events
   of Nova's reply}]}``. ``{"delete": SERVER}``: Nova deletes it (and its ARQs in Cyborg); ``{"deleted"}``.
3. ``{"stop": true}``: Nova stops.

What stands in, each at a boundary Nova's own functional tests use: fake libvirt (the guest XML is the one Nova's
libvirt driver writes), the in-process message bus and SQLite database, and Nova's keystone stub (identity from
headers). Nova's report client reaches Placement through the shortcut Nova's PlacementFixture installs (no
service catalog), pointed at the real Placement instead of an in-process one.
"""

import io
import json
import os
import sys
import unittest
import xml.etree.ElementTree as ET

# this directory holds the harness's fixtures.py, which would hide the ``fixtures`` package Nova imports
sys.path[:] = [x for x in sys.path if os.path.abspath(x or ".") != os.path.dirname(os.path.abspath(__file__))]

ARGS = {}
PROTO = {}
RESULT = {"error": None}


def _send(obj):
    PROTO["out"].write(json.dumps(obj, sort_keys=True) + "\n")
    PROTO["out"].flush()


def _receive():
    line = PROTO["in"].readline()
    return json.loads(line) if line.strip() else {"stop": True}


def _identity_middleware(app, token):
    """Keystone's part in front of Nova's API on the port Cyborg calls: Cyborg's token becomes its service
    user's identity in the headers Nova's keystone stub reads (nova.tests.fixtures.OSAPIFixture._stub_keystone);
    identity headers a client sends are dropped, an unknown token is a 401."""
    identity = ("HTTP_X_AUTH_USER", "HTTP_X_USER_ID", "HTTP_X_AUTH_PROJECT_ID", "HTTP_X_PROJECT_ID", "HTTP_X_ROLES")

    def wrapped(environ, start_response):
        for k in identity:
            environ.pop(k, None)
        if environ.get("HTTP_X_AUTH_TOKEN") != token:
            start_response("401 Unauthorized", [("Content-Type", "application/json")])
            return [b'{"error": "unknown token"}']
        # Cyborg's service user, with the service role the events API asks for and admin (Nova looks the
        # instances up across projects with it); the stub makes the user named "admin" an admin context
        environ.update(HTTP_X_AUTH_USER="admin", HTTP_X_USER_ID="admin", HTTP_X_AUTH_PROJECT_ID="service",
                       HTTP_X_ROLES="admin,service")
        return app(environ, start_response)
    return wrapped


def _test_case():
    import eventlet
    import eventlet.wsgi
    import fixtures
    from keystoneauth1 import loading as ks_loading

    from nova import conf as nova_conf
    from nova.tests.fixtures import libvirt as fakelibvirt
    from nova.tests.functional import fixtures as func_fixtures
    from nova.tests.functional.libvirt import base

    CONF = nova_conf.CONF

    def harness_placement():
        """Nova's PlacementFixture (its report client shortcut and API client) on the harness's Placement."""
        fixture = func_fixtures.PlacementFixture(token=ARGS["placement_token"], db=False, use_intercept=False)
        fixture.endpoint = ARGS["placement"]
        # its own (unused) configuration still wants a database URL; no database is made (db=False)
        fixture._configure_placement = lambda conf_fixture: conf_fixture.config(
            connection="sqlite://", group="placement_database")
        return fixture

    class FunctionalFixtures(object):
        """nova.tests.functional.fixtures as integrated_helpers sees it, with harness_placement."""
        PlacementFixture = staticmethod(harness_placement)

        def __getattr__(self, name):
            return getattr(func_fixtures, name)

    class NovaWithCyborg(base.ServersTestBase):
        ADMIN_API = True

        def setUp(self):
            self.useFixture(fixtures.MonkeyPatch("nova.tests.functional.integrated_helpers.func_fixtures",
                                                 FunctionalFixtures()))
            super().setUp()
            # Nova's WarningsFixture makes SQLAlchemy's deprecations errors; Nova 34 still calls noload(), which
            # SQLAlchemy 2.1 deprecates, when it reads an instance for an ARQ-bound build (the PCI boot does not)
            import warnings
            from sqlalchemy import exc as sqla_exc
            warnings.filterwarnings("ignore", message=r"The noload\(\) option is deprecated",
                                    category=sqla_exc.SADeprecationWarning)
            # Nova's service token beside the user's, as Nova sends it to bind and unbind ARQs
            opts = ks_loading.get_auth_plugin_conf_options("admin_token")
            CONF.register_opts(opts, group="service_user")
            self.flags(group="service_user", send_service_user_token=True, auth_type="admin_token")
            self.events = []

        def _serve_api(self):
            """Nova's API (the same paste app and configuration as the harness's) on a local port."""
            from nova.api import wsgi as nova_wsgi   # after Nova's fixtures (webob.dec is imported there)
            app = _identity_middleware(nova_wsgi.Loader().load_app("osapi_compute"), ARGS["nova_token"])

            def recording(environ, start_response):
                """Keeps what Cyborg told Nova's API and what Nova answered, for the caller to check."""
                if not environ.get("PATH_INFO", "").rstrip("/").endswith("/os-server-external-events"):
                    return app(environ, start_response)
                data = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
                environ["wsgi.input"] = io.BytesIO(data)
                answer = b"".join(app(environ, start_response))
                self.events.append({"sent": json.loads(data or b"{}").get("events"),
                                    "answer": json.loads(answer or b"{}").get("events")})
                return [answer]
            sock = eventlet.listen(("127.0.0.1", 0))
            thread = eventlet.spawn(eventlet.wsgi.server, sock, recording, log=sys.stderr, debug=False)
            self.addCleanup(thread.kill)
            return "http://127.0.0.1:%d/v2.1" % sock.getsockname()[1]

        def _boot(self, cmd):
            self.flags(group="cyborg", endpoint_override=cmd["cyborg"] + "/v2")
            self.flags(group="service_user", token=cmd["service_token"])
            self.events[:] = []
            # the user's token, which Nova passes on to Cyborg (keystone would have issued it)
            self.api.auth_token = cmd["token"]
            flavor = self._create_flavor(extra_spec={"accel:device_profile": cmd["boot"]})
            server = self.api.post_server({"server": self._build_server(flavor_id=flavor, networks="none")})
            for _i in range(600):
                server = self.api.get_server(server["id"])
                if server["status"] != "BUILD":
                    break
                eventlet.sleep(0.1)
            out = {"server": server["id"], "status": server["status"],
                   "fault": (server.get("fault") or {}).get("message"), "hostdevs": [],
                   "events": list(self.events)}
            if server["status"] == "ACTIVE":
                # the domain as Nova's libvirt driver defined it in (fake) libvirt
                conn = self.computes[ARGS["nodename"]].driver._host.get_connection()
                xml = conn.lookupByUUIDString(server["id"]).XMLDesc(0)
                for addr in ET.fromstring(xml).findall("./devices/hostdev/source/address"):
                    out["hostdevs"].append("%04x:%02x:%02x.%x" % tuple(
                        int(addr.get(k), 16) for k in ("domain", "bus", "slot", "function")))
            return out

        def test_serve(self):
            self.start_compute(hostname=ARGS["nodename"],
                               pci_info=fakelibvirt.HostPCIDevicesInfo(num_pci=0, num_pfs=0, num_vfs=0))
            self.api.microversion = "latest"       # networks "none" (2.37+)
            nova_api = self._serve_api()
            _send({"ready": {"nova_api": nova_api, "compute_rp": self.compute_rp_uuids[ARGS["nodename"]],
                             "nodename": ARGS["nodename"]}})
            while True:
                cmd = _receive()
                try:
                    if cmd.get("stop"):
                        return
                    if cmd.get("delete"):
                        self._delete_server({"id": cmd["delete"]})
                        _send({"deleted": cmd["delete"]})
                    else:
                        _send(self._boot(cmd))
                except Exception as e:  # pylint: disable=broad-except
                    sys.stderr.write(self.stdlog.logger.output)
                    _send({"status": None, "error": "%s: %s" % (type(e).__name__, e)})

    return NovaWithCyborg


def _patch_client_token():
    """Nova's functional API client sends no X-Auth-Token; send the one set as ``auth_token``."""
    from nova.tests.functional.api import client
    original = client.TestOpenStackClient.api_request

    def api_request(self, relative_uri, check_response_status=None, strip_version=False, **kwargs):
        token = getattr(self, "auth_token", None)
        if token:
            kwargs.setdefault("headers", {}).setdefault("X-Auth-Token", token)
        return original(self, relative_uri, check_response_status=check_response_status,
                        strip_version=strip_version, **kwargs)
    client.TestOpenStackClient.api_request = api_request


def main(argv):
    ARGS.update(zip(("placement", "placement_token", "nodename", "nova_token"), argv))
    # the protocol keeps the original stdout; anything else printed goes to stderr
    PROTO["out"] = os.fdopen(os.dup(1), "w")
    PROTO["in"] = sys.stdin
    os.dup2(2, 1)
    import nova.conf
    # Nova's harness finds api-paste.ini under $state_path/etc/nova: the wheel installs it in the venv's etc/
    nova.conf.CONF.set_default("state_path", sys.prefix)
    _patch_client_token()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_test_case())
    out = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
    if not out.wasSuccessful():
        _send({"error": "\n".join(t for _c, t in out.errors + out.failures)[-6000:]})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
