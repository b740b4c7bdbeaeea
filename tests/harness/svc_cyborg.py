# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenStack Cyborg (PyPI openstack-cyborg) for the harness: the API and the conductor in one process.

Loaded by ``servicelib`` (standard library only at import time). ``start`` writes a config, creates the
schema on SQLite and runs this same file with ``.venv-cyborg/bin/python`` (``serve`` below), which:

- reads the config the way ``cyborg-api`` does and initialises oslo.messaging with ``fake://``, the
  in-process transport: the conductor's RPC server runs in a thread of the same process as the API, so the
  API's RPC casts and calls (device profile create/delete, ARQ create/delete) reach it without a broker;
- serves the API with waitress (threads, one process) under ``/accelerator``, where Cyborg's links point;
- puts a small token middleware in front, in place of keystonemiddleware (the paste pipeline has no
  ``authtoken``): ``X-Auth-Token: admin`` becomes ``X-Roles: admin`` with an admin project and user,
  ``member`` becomes ``X-Roles: member`` with another project (for 403 tests), an unknown token is a 401, and
  identity headers sent by the client are dropped (as keystonemiddleware does). ``X-Service-Token: service``
  adds a service identity (``X-Service-Roles: service,admin``), as Nova's service token does when it binds ARQs. openstacksdk therefore talks
  to it like to Placement's noauth2: ``auth_type: admin_token`` with the token and an endpoint override.

The conductor reaches Placement (``svc.context["placement_endpoint"]``, token ``admin``), so Placement starts
first (``order = 10``). Everything is written under ``STATE_DIR/cyborg``.
"""

from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import servicelib  # noqa: E402  pylint: disable=wrong-import-position

ADMIN_PROJECT = "a0" * 16
ADMIN_USER = "a1" * 16
MEMBER_PROJECT = "b0" * 16
MEMBER_USER = "b1" * 16
# token -> identity headers the middleware sets
TOKENS = {
    "admin": {"X-Roles": "admin,member,reader", "X-Project-Id": ADMIN_PROJECT, "X-User-Id": ADMIN_USER},
    "member": {"X-Roles": "member,reader", "X-Project-Id": MEMBER_PROJECT, "X-User-Id": MEMBER_USER},
}
# X-Service-Token -> the service identity keystonemiddleware adds beside the user's (Nova sends one with the
# user's token to bind and unbind ARQs; Cyborg requires its role, [keystone_authtoken] service_token_roles).
SERVICE_TOKENS = {
    "service": {"X-Service-Roles": "service,admin", "X-Service-Project-Id": "c0" * 16, "X-Service-User-Id": "c1" * 16},
}
PREFIX = "/accelerator"
MICROVERSION = "2.2"


def cyborg_bin(name):
    return servicelib.service_bin("cyborg", name)


PASTE = """[pipeline:main]
pipeline = request_id api_v2

[app:api_v2]
paste.app_factory = cyborg.api.app:app_factory

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory
"""


def write_config(d, port, placement_endpoint):
    db = os.path.join(d, "cyborg.sqlite")
    conf = os.path.join(d, "cyborg.conf")
    with open(os.path.join(d, "api-paste.ini"), "w") as f:
        f.write(PASTE)
    with open(os.path.join(d, "policy.yaml"), "w") as f:
        f.write("# Cyborg's defaults\n{}\n")
    with open(conf, "w") as f:
        f.write("""[DEFAULT]
transport_url = fake://
host = accelops-harness
use_stderr = True
debug = False
state_path = {d}

[api]
host_ip = 127.0.0.1
port = {port}
api_paste_config = {d}/api-paste.ini

[database]
connection = sqlite:///{db}

[oslo_concurrency]
lock_path = {d}/locks

[oslo_policy]
policy_file = {d}/policy.yaml
enforce_scope = False
enforce_new_defaults = False

[placement]
auth_type = admin_token
endpoint = {placement}
token = admin

[oslo_messaging_notifications]
driver = noop
""".format(d=d, port=port, db=db, placement=placement_endpoint))
    return conf


class Cyborg(object):
    """Cyborg API + conductor (one process, fake:// transport), SQLite, token middleware."""

    name = "cyborg"
    order = 10
    context = {}

    def start(self, state_dir):
        placement_endpoint = self.context.get("placement_endpoint")
        if not placement_endpoint:
            raise servicelib.HarnessError("cyborg needs placement: start it with --services placement,cyborg")
        d = os.path.join(state_dir, self.name)
        os.makedirs(os.path.join(d, "locks"), exist_ok=True)
        python = cyborg_bin("python")
        nova_python = os.path.join(servicelib.service_venv("nova"), "bin", "python")
        port = servicelib.free_port()
        conf = write_config(d, port, placement_endpoint)
        log = os.path.join(d, "cyborg.log")
        env = dict(os.environ, HOME=d, PYTHONDONTWRITEBYTECODE="1", PYTHONWARNINGS="ignore::UserWarning")
        env.pop("OS_CLOUD", None)
        endpoint = "http://127.0.0.1:%d%s" % (port, PREFIX)
        # About 3 s on an idle machine (imports dominate).
        servicelib.spawn(self.name, state_dir, [python, os.path.abspath(__file__), "serve", conf],
                         lambda: servicelib.http_status(endpoint + "/v2/device_profiles",
                                                        {"X-Auth-Token": "admin"}) == 200,
                         log, env=env, cwd=d)
        return {
            "cyborg_endpoint": endpoint,
            "cyborg_token": "admin",
            "cyborg_member_token": "member",
            "cyborg_service_token": "service",
            "cyborg_microversion": MICROVERSION,
            "cyborg_log": log,
            # what svc_cyborg_agent.py (a Cyborg with its agent, on a simulated host) runs under
            "cyborg_python": python,
            # what nova_cyborg.py (Nova's functional harness, which that Cyborg serves) runs under, if built
            "nova_python": nova_python if os.access(nova_python, os.X_OK) else None,
        }

    def stop(self, state_dir):
        return servicelib.stop_service(self.name, state_dir)


SERVICE = Cyborg


# ---------------------------------------------------------------------------------------------------------
# The server process (runs in .venv-cyborg)
# ---------------------------------------------------------------------------------------------------------

def token_middleware(app):
    """keystonemiddleware's part, for tests: token -> identity headers; client identity headers dropped."""
    identity = ("HTTP_X_ROLES", "HTTP_X_ROLE", "HTTP_X_PROJECT_ID", "HTTP_X_TENANT_ID", "HTTP_X_TENANT",
                "HTTP_X_USER_ID", "HTTP_X_USER", "HTTP_X_IDENTITY_STATUS", "HTTP_X_SERVICE_CATALOG",
                "HTTP_X_PROJECT_NAME", "HTTP_X_USER_NAME", "HTTP_X_DOMAIN_ID", "HTTP_X_SYSTEM_SCOPE",
                "HTTP_X_SERVICE_ROLES", "HTTP_X_SERVICE_PROJECT_ID", "HTTP_X_SERVICE_USER_ID",
                "HTTP_X_SERVICE_IDENTITY_STATUS")

    def wrapped(environ, start_response):
        for k in identity:
            environ.pop(k, None)
        token = environ.get("HTTP_X_AUTH_TOKEN")
        # keystonemiddleware: a known token's identity headers, and a 401 for an unknown one (a service token too)
        for given, known, what, status in ((token, TOKENS, "token", "HTTP_X_IDENTITY_STATUS"),
                                           (environ.get("HTTP_X_SERVICE_TOKEN"), SERVICE_TOKENS, "service token",
                                            "HTTP_X_SERVICE_IDENTITY_STATUS")):
            if given is None:
                continue
            headers = known.get(given)
            if headers is None:
                body = json.dumps({"error_message": json.dumps({
                    "faultstring": "The request you have made requires authentication (unknown %s)." % what,
                    "faultcode": "Client", "debuginfo": None})}).encode()
                start_response("401 Unauthorized", [("Content-Type", "application/json"),
                                                    ("Content-Length", str(len(body)))])
                return [body]
            for k, v in headers.items():
                environ["HTTP_" + k.upper().replace("-", "_")] = v
            environ[status] = "Confirmed"
        return app(environ, start_response)
    return wrapped


def prefix_middleware(app, prefix):
    """Serve ``app`` under ``prefix`` (SCRIPT_NAME), as behind a web server at /accelerator."""
    def wrapped(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == prefix or path.startswith(prefix + "/"):
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
            environ["PATH_INFO"] = path[len(prefix):] or "/"
            return app(environ, start_response)
        body = b'{"error_message": "not found: Cyborg is served under /accelerator"}'
        start_response("404 Not Found", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]
    return wrapped


def serve(conf_file, extra=None):
    """Run the API and the conductor until SIGTERM. ``extra(conf)``, when given, runs once the conductor's RPC
    server is up (svc_cyborg_agent.py starts Cyborg's agent there) and returns a callable that stops it."""
    import signal
    import threading

    import oslo_messaging as messaging
    from oslo_config import cfg
    from cyborg.api import app as cyborg_app
    from cyborg.common import constants, rpc
    from cyborg.common import service as cyborg_service
    from cyborg.conductor import manager
    from cyborg.db import migration
    from cyborg.db.sqlalchemy import api as db_api
    from cyborg.objects import base as objects_base
    import waitress.server

    t0 = time.time()
    cyborg_service.prepare_service(["cyborg", "--config-file", conf_file])
    conf = cfg.CONF
    # Foreign keys enforced as on MySQL: deleting a profile that an ARQ uses fails as in production
    # (SQLite ignores them by default, and the orphaned ARQ then breaks GET /accelerator_requests).
    db_api.main_context_manager.configure(sqlite_fk=True)
    # The schema (``cyborg-dbsync create_schema``, what works on SQLite), in this process: one start-up less.
    if not os.path.exists(conf.database.connection[len("sqlite:///"):]):
        migration.create_schema()
    conductor = manager.ConductorManager(constants.CONDUCTOR_TOPIC, conf.host)
    server = rpc.get_server(messaging.Target(topic=constants.CONDUCTOR_TOPIC, server=conf.host), [conductor],
                            objects_base.CyborgObjectSerializer())
    server.start()
    stop_extra = extra(conf) if extra is not None else None
    # Not conductor.init_host(): it only repairs data of older releases (ARQ project ids, from Nova; device
    # states), and with no Nova configured it logs a traceback on every start.
    application = prefix_middleware(token_middleware(cyborg_app.load_app()), PREFIX)
    httpd = waitress.server.create_server(application, host=conf.api.host_ip, port=conf.api.port, threads=4,
                                          ident="cyborg")
    sys.stderr.write("cyborg: API and conductor (fake:// transport) ready on %s:%s in %.1f s\n"
                     % (conf.api.host_ip, conf.api.port, time.time() - t0))
    sys.stderr.flush()

    def stop(signum, frame):  # pylint: disable=unused-argument
        threading.Thread(target=httpd.close, daemon=True).start()
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        httpd.run()
    except SystemExit:
        pass
    finally:
        t1 = time.time()
        if stop_extra is not None:
            try:
                stop_extra()
            except Exception:  # pylint: disable=broad-except
                pass
        try:
            server.stop()
            server.wait()
        except Exception:  # pylint: disable=broad-except
            pass
        sys.stderr.write("cyborg: stopped in %.1f s\n" % (time.time() - t1))
        sys.stderr.flush()
        # Worker threads of waitress and oslo.messaging are not daemons: end the process here, now that the
        # RPC server has stopped and the listening socket is closed.
        os._exit(0)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "serve":
    serve(sys.argv[2])
