# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nova with the real Cyborg: Nova's functional harness, whose own Cyborg client talks to a Cyborg over HTTP.

Any Python starts and drives it (standard library only at import); the Nova process runs with .venv-nova's::

    nova_cyborg.py start STATE_DIR --placement URL --placement-token T --nodename NAME [--nodename NAME2 ...] \
        --nova-token T2 [--python P]
    nova_cyborg.py boot STATE_DIR --profile NAME --cyborg URL --token T --service-token S
    nova_cyborg.py delete STATE_DIR SERVER
    nova_cyborg.py stop STATE_DIR

1. ``start``: Nova starts: its functional harness (real API, conductor, scheduler, compute with the libvirt driver
   on fake libvirt, in-process message bus and database), with the harness's Placement (a real Placement service)
   in place of the in-process one, and its API also served on a local port so that Cyborg can send it the
   ``accelerator-request-bound`` event. It prints ``{"nova_api", "compute_rps": {nodename: provider uuid}}`` once a compute
   per NAME has made its compute node provider: the caller then starts Cyborg's agent with one as its root and
   Nova's API as its ``[nova]`` endpoint (token T2; svc_cyborg_agent.py ``--nova``).
2. ``boot``: Nova's Cyborg client is pointed at Cyborg (``[cyborg] endpoint_override``; the user's token T and
   Nova's service token S, as keystone would give them), and a flavor with ``accel:device_profile=NAME`` boots a
   server. It prints ``{"server", "status", "fault", "hostdevs": [PCI addresses of the hostdevs in the guest
   XML Nova's libvirt driver defined], "events": [{"sent": what Cyborg posted to os-server-external-events,
   "answer": the events of Nova's reply}]}``.
3. ``delete``: Nova deletes the server (and its ARQs in Cyborg). ``stop``: Nova stops.

Each command after ``start`` is one JSON line over a Unix socket (its path in the temporary directory, named
after STATE_DIR); Nova's output is in ``STATE_DIR/nova-cyborg/nova.log``.

What stands in, each at a boundary Nova's own functional tests use: fake libvirt (the guest XML is the one Nova's
libvirt driver writes), the in-process message bus and SQLite database, and Nova's keystone stub (identity from
headers). Nova's report client reaches Placement through the shortcut Nova's PlacementFixture installs (no
service catalog), pointed at the real Placement instead of an in-process one.
"""

import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "nova-cyborg"
ARGS = {}


def _paths(state_dir):
    d = os.path.join(os.path.abspath(state_dir), NAME)
    # a Unix socket's path has room for about 100 bytes: a short one in the temporary directory
    sock = os.path.join(tempfile.gettempdir(), "accelops-nova-%s.sock" % hashlib.sha1(d.encode()).hexdigest()[:12])
    return {"dir": d, "sock": sock, "ready": os.path.join(d, "ready.json"),
            "pid": os.path.join(d, NAME + ".pid"), "log": os.path.join(d, "nova.log"),
            "args": os.path.join(d, "args.json")}


def launch(state_dir, placement, placement_token, nodenames, nova_token, python=None):
    """Start the Nova process and return at once (``wait_ready`` waits for it): the caller can work meanwhile."""
    sys.path.insert(0, HERE)
    import servicelib  # pylint: disable=import-outside-toplevel
    p = _paths(state_dir)
    os.makedirs(p["dir"], exist_ok=True)
    for f in (p["ready"], p["sock"]):
        if os.path.exists(f):
            os.unlink(f)
    with open(p["args"], "w") as f:
        json.dump({"placement": placement, "placement_token": placement_token, "nodenames": list(nodenames),
                   "nova_token": nova_token, "sock": p["sock"], "ready": p["ready"]}, f)
    python = python or servicelib.service_bin("nova", "python")
    with open(p["log"], "ab") as out:
        proc = subprocess.Popen([python, os.path.abspath(__file__), "serve", p["args"]], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=p["dir"])
    with open(p["pid"], "w") as f:
        f.write("%d\n" % proc.pid)
    return proc.pid


def wait_ready(state_dir, timeout=240.0):
    """Nova's answer to ``start`` once it is ready (or an error naming its log)."""
    sys.path.insert(0, HERE)
    import servicelib  # pylint: disable=import-outside-toplevel
    p = _paths(state_dir)
    with open(p["pid"]) as f:
        pid = int(f.read())
    servicelib.wait_until(lambda: os.path.exists(p["ready"]), timeout, NAME, p["log"], pid)
    with open(p["ready"]) as f:
        ready = json.load(f)
    if ready.get("error"):
        raise servicelib.HarnessError("Nova's harness failed (log %s): %s" % (p["log"], ready["error"]))
    return ready


def request(state_dir, msg, timeout=240.0):
    """Send one command to the running Nova; return its answer."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(_paths(state_dir)["sock"])
        s.sendall((json.dumps(msg) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    if not data.strip():
        return {"error": "Nova closed the connection (log %s)" % _paths(state_dir)["log"]}
    return json.loads(data)


def stop(state_dir):
    sys.path.insert(0, HERE)
    import servicelib  # pylint: disable=import-outside-toplevel
    p = _paths(state_dir)
    try:
        request(state_dir, {"stop": True}, timeout=60)
    except OSError:
        pass
    if os.path.exists(p["pid"]):
        with open(p["pid"]) as f:
            pid = int(f.read())
        deadline = time.time() + 20       # Nova's services stop gracefully
        while time.time() < deadline and servicelib._pid_alive(pid):  # pylint: disable=protected-access
            servicelib._reap(pid)  # pylint: disable=protected-access
            time.sleep(0.1)
    stopped = servicelib.stop_pid_file(p["pid"])
    if os.path.exists(p["sock"]):
        os.unlink(p["sock"])
    return stopped


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
                host = server["OS-EXT-SRV-ATTR:host"]
                out["host"] = host
                conn = self.computes[host].driver._host.get_connection()
                xml = conn.lookupByUUIDString(server["id"]).XMLDesc(0)
                for addr in ET.fromstring(xml).findall("./devices/hostdev/source/address"):
                    out["hostdevs"].append("%04x:%02x:%02x.%x" % tuple(
                        int(addr.get(k), 16) for k in ("domain", "bus", "slot", "function")))
            return out

        def test_serve(self):
            for nodename in ARGS["nodenames"]:
                self.start_compute(hostname=nodename,
                                   pci_info=fakelibvirt.HostPCIDevicesInfo(num_pci=0, num_pfs=0, num_vfs=0))
            self.api.microversion = "latest"       # networks "none" (2.37+)
            nova_api = self._serve_api()
            ready = {"nova_api": nova_api,
                     "compute_rps": dict((n, self.compute_rp_uuids[n]) for n in ARGS["nodenames"])}
            listener = eventlet.listen(ARGS["sock"], family=socket.AF_UNIX)
            self.addCleanup(listener.close)
            with open(ARGS["ready"] + ".tmp", "w") as f:
                json.dump(ready, f)
            os.rename(ARGS["ready"] + ".tmp", ARGS["ready"])
            while True:
                conn, _addr = listener.accept()
                with conn:
                    line = conn.makefile("rb").readline()
                    cmd = json.loads(line) if line.strip() else {}
                    try:
                        if cmd.get("stop"):
                            conn.sendall(b'{"stopping": true}\n')
                            return
                        if cmd.get("delete"):
                            self._delete_server({"id": cmd["delete"]})
                            answer = {"deleted": cmd["delete"]}
                        else:
                            answer = self._boot(cmd)
                    except Exception as e:  # pylint: disable=broad-except
                        sys.stderr.write(self.stdlog.logger.output)
                        answer = {"status": None, "error": "%s: %s" % (type(e).__name__, e)}
                    conn.sendall((json.dumps(answer, sort_keys=True) + "\n").encode())

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


def serve(args_file):
    # this directory holds the harness's fixtures.py, which would hide the ``fixtures`` package Nova imports
    sys.path[:] = [x for x in sys.path if os.path.abspath(x or ".") != HERE]
    with open(args_file) as f:
        ARGS.update(json.load(f))
    import nova.conf
    # Nova's harness finds api-paste.ini under $state_path/etc/nova: the wheel installs it in the venv's etc/
    nova.conf.CONF.set_default("state_path", sys.prefix)
    _patch_client_token()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_test_case())
    out = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
    if not out.wasSuccessful() and not os.path.exists(ARGS["ready"]):
        with open(ARGS["ready"], "w") as f:
            json.dump({"error": "\n".join(t for _c, t in out.errors + out.failures)[-6000:]}, f)
    return 0 if out.wasSuccessful() else 1


def main(argv):
    if argv[:1] == ["serve"] and len(argv) == 2:
        return serve(argv[1])
    import argparse
    ap = argparse.ArgumentParser(prog="nova_cyborg.py", description=__doc__.split("\n", maxsplit=1)[0])
    sub = ap.add_subparsers(dest="action", required=True)
    s = sub.add_parser("start")
    s.add_argument("state_dir")
    s.add_argument("--placement", required=True)
    s.add_argument("--placement-token", default="admin")
    s.add_argument("--nodename", required=True, action="append",
                   help="a compute host and node of Nova's (its provider's name); one compute each")
    s.add_argument("--nova-token", required=True, help="the token Cyborg sends to Nova's API")
    s.add_argument("--python", help="the Python of .venv-nova")
    b = sub.add_parser("boot")
    b.add_argument("state_dir")
    b.add_argument("--profile", required=True)
    b.add_argument("--cyborg", required=True, help="Cyborg's endpoint (without /v2)")
    b.add_argument("--token", required=True, help="the user's token, as Cyborg knows it")
    b.add_argument("--service-token", required=True, help="Nova's service token, as Cyborg knows it")
    d = sub.add_parser("delete")
    d.add_argument("state_dir")
    d.add_argument("server")
    p = sub.add_parser("stop")
    p.add_argument("state_dir")
    a = ap.parse_args(argv)
    sys.path.insert(0, HERE)
    import servicelib  # pylint: disable=import-outside-toplevel
    try:
        if a.action == "start":
            launch(a.state_dir, a.placement, a.placement_token, a.nodename, a.nova_token, python=a.python)
            out = wait_ready(a.state_dir)
        elif a.action == "boot":
            out = request(a.state_dir, {"boot": a.profile, "cyborg": a.cyborg, "token": a.token,
                                        "service_token": a.service_token})
        elif a.action == "delete":
            out = request(a.state_dir, {"delete": a.server})
        else:
            out = {"stopped": stop(a.state_dir)}
    except (servicelib.HarnessError, OSError) as e:
        print("nova-cyborg: %s" % e, file=sys.stderr)
        return 1
    print(json.dumps(out, sort_keys=True))
    return 1 if out.get("error") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
