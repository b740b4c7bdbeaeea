# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenStack Cyborg with its agent, on a simulated host: the agent's own drivers read the simulator's /sys.

Not a harness service of its own (no ``SERVICE``: it needs a simulated host, which a test makes first). A test
or an integration target starts one next to the harness's Placement::

    python3 svc_cyborg_agent.py start STATE_DIR --placement URL --sys HOST_ROOT/sys --hostname NAME \
        --root-provider NAME [--python .venv-cyborg/bin/python] [--drivers intel_fpga_driver] [--interval S]
    python3 svc_cyborg_agent.py wait STATE_DIR [--timeout S]   # a report that starts after this command does
    python3 svc_cyborg_agent.py stop STATE_DIR

``start`` prints the variables (JSON) and returns once Cyborg answers and the agent has reported once.

Why it looks like this:

- oslo.messaging's ``fake://`` transport works inside one process only, so the agent runs in the process of the
  API and the conductor (``svc_cyborg.serve`` with a hook): its report still goes through Cyborg's own path,
  ``ResourceTracker.update_usage`` -> ``ConductorAPI.report_data`` (an RPC call, objects serialised as on a
  broker) -> ``ConductorManager.report_data`` -> Placement.
- Cyborg's drivers read fixed paths (``/sys/bus/pci/devices``, ``/sys/class/fpga``, ...) and name deployables
  after ``socket.gethostname()``. The process therefore runs in private mount and UTS namespaces
  (``unshare --mount --uts --propagation private``, root only): the simulated host's ``sys`` is bind-mounted
  over ``/sys`` and the host name is set there. Nothing changes outside the namespaces; the whole of ``/sys``
  is replaced so that no real device of the machine running the test can leak into what the agent finds.
- The agent's periodic task ``update_available_resource`` has Cyborg's default spacing (60 s); here the same
  method runs every ``--interval`` seconds (default 1) so a test sees a change reported quickly. Each report
  appends one JSON line to ``STATE_DIR/cyborg-agent/reports.jsonl`` (``n``, ``start``, ``end``, ``error``), so a
  test can wait for a report that began after its change.
- The agent does not program anything here and has no Glance: the collection programs the card.
- Binding an ARQ ends with Cyborg telling Nova (``POST /os-server-external-events``, event
  ``accelerator-request-bound``); without an answer the bind API fails with HTTP 500 after the bind is stored.
  Given a Nova API (``--nova``: nova_cyborg.py serves Nova's on a local port), ``[nova]`` points there.
  Otherwise ``[nova]`` points at a recorder in the same process that answers as Nova's API does when every
  event is accepted (HTTP 200, each event with ``code`` 200) and appends what Cyborg sent to
  ``STATE_DIR/cyborg-agent/nova-events.jsonl``, so a test can check what Nova would have been told.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import servicelib  # noqa: E402  pylint: disable=wrong-import-position
import svc_cyborg  # noqa: E402  pylint: disable=wrong-import-position

NAME = "cyborg-agent"


def reports(state_dir):
    """The agent's reports so far (each a dict), oldest first."""
    path = os.path.join(state_dir, NAME, "reports.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def wait_for_report(state_dir, after, timeout=30.0):
    """Wait for a report that started after the time ``after`` (time.time()) and ended; return it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for r in reports(state_dir):
            if r["start"] > after and r.get("end"):
                return r
        time.sleep(0.1)
    raise servicelib.HarnessError("no agent report started after %.3f and ended within %.0f s" % (after, timeout))


def start(state_dir, placement, sys_root, hostname, root_provider, python=None, drivers="intel_fpga_driver",
          interval=1.0, nova=None, nova_token="admin"):
    """Start Cyborg (API, conductor, agent) in private mount/UTS namespaces; return its variables. ``nova``: the
    endpoint of a Nova API that Cyborg tells of bound ARQs (with ``nova_token``); without it, the recorder."""
    if os.geteuid() != 0:
        raise servicelib.HarnessError("the Cyborg agent on a simulated host needs root (unshare --mount --uts)")
    if not os.path.isdir(os.path.join(sys_root, "bus", "pci", "devices")):
        raise servicelib.HarnessError("%s is not a simulated /sys (no bus/pci/devices)" % sys_root)
    state_dir = os.path.abspath(state_dir)
    d = os.path.join(state_dir, NAME)
    os.makedirs(os.path.join(d, "locks"), exist_ok=True)
    python = python or svc_cyborg.cyborg_bin("python")
    port = servicelib.free_port()
    conf = svc_cyborg.write_config(d, port, placement)
    nova_port = None if nova else servicelib.free_port()
    with open(conf, "a") as f:
        f.write("""
[agent]
enabled_drivers = {drivers}
resource_provider_name = {root}
resource_provider_startup_retries = 0

[nova]
auth_type = admin_token
endpoint = {nova}
token = {nova_token}
""".format(drivers=drivers, root=root_provider, nova=nova or "http://127.0.0.1:%d" % nova_port,
           nova_token=nova_token))
    run = {"sys": os.path.abspath(sys_root), "hostname": hostname, "interval": float(interval),
           "reports": os.path.join(d, "reports.jsonl"),
           "nova_port": nova_port, "nova_events": os.path.join(d, "nova-events.jsonl"),
           # the namespaces of the launcher: the server refuses to mount or rename anything in these
           "outside": dict((ns, os.readlink("/proc/self/ns/" + ns)) for ns in ("mnt", "uts"))}
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(run, f)
    log = os.path.join(d, "cyborg.log")
    env = dict(os.environ, HOME=d, PYTHONDONTWRITEBYTECODE="1", PYTHONWARNINGS="ignore::UserWarning")
    env.pop("OS_CLOUD", None)
    endpoint = "http://127.0.0.1:%d%s" % (port, svc_cyborg.PREFIX)
    cmd = ["unshare", "--mount", "--uts", "--propagation", "private", "--",
           python, os.path.abspath(__file__), "serve", conf, os.path.join(d, "run.json")]
    servicelib.spawn(NAME, state_dir, cmd,
                     lambda: (servicelib.http_status(endpoint + "/v2/device_profiles", {"X-Auth-Token": "admin"}) == 200
                              and any(r.get("end") for r in reports(state_dir))),
                     log, env=env, cwd=d)
    return {
        "cyborg_agent_endpoint": endpoint,
        "cyborg_agent_token": "admin",
        "cyborg_agent_service_token": "service",
        "cyborg_agent_log": log,
        "cyborg_agent_reports": run["reports"],
        "cyborg_agent_nova_events": run["nova_events"],
        "cyborg_agent_hostname": hostname,
        "cyborg_agent_root_provider": root_provider,
    }


def stop(state_dir):
    return servicelib.stop_service(NAME, os.path.abspath(state_dir))


# ---------------------------------------------------------------------------------------------------------
# The server process (runs in .venv-cyborg, inside the namespaces unshare made)
# ---------------------------------------------------------------------------------------------------------

def _enter_simulated_host(run):
    """Bind the simulated sys over /sys and set the host name, after checking that both namespaces are private."""
    import socket
    for ns in ("mnt", "uts"):
        if os.readlink("/proc/self/ns/" + ns) == run["outside"][ns]:
            raise SystemExit("cyborg-agent: not in a private %s namespace; refusing to touch /sys or the host name" % ns)
    subprocess.run(["mount", "--bind", run["sys"], "/sys"], check=True)
    socket.sethostname(run["hostname"])


def _nova_events_recorder(run):
    """What Nova's API answers to Cyborg's bind notification when it accepts every event; records the events.
    Served by waitress in a thread of this process (http.server's ThreadingHTTPServer left connections unread
    here now and then, under the load of the agent's reports)."""
    import threading

    import waitress.server

    def answer(start_response, status, obj):
        data = json.dumps(obj).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    def app(environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if method == "GET":
            # version discovery: one v2.1 API with microversions up to beyond what Cyborg asks for (2.82)
            return answer(start_response, "200 OK", {"version": {
                "id": "v2.1", "status": "CURRENT", "version": "2.95", "min_version": "2.1",
                "links": [{"rel": "self", "href": "http://127.0.0.1:%d/" % run["nova_port"]}]}})
        if method == "POST" and path.rstrip("/").endswith("/os-server-external-events"):
            size = int(environ.get("CONTENT_LENGTH") or 0)
            body = json.loads(environ["wsgi.input"].read(size) or b"{}")
            with open(run["nova_events"], "a") as f:
                f.write(json.dumps({"time": time.time(), "events": body.get("events")}) + "\n")
            return answer(start_response, "200 OK", {"events": [dict(e, code=200) for e in body.get("events") or []]})
        return answer(start_response, "404 Not Found", {"itemNotFound": {"code": 404, "message": "not here: " + path}})

    httpd = waitress.server.create_server(app, host="127.0.0.1", port=run["nova_port"], threads=2,
                                          ident="nova-events-recorder")
    threading.Thread(target=httpd.run, name="nova-events-recorder", daemon=True).start()
    return httpd


def _agent(run):
    """The ``extra`` hook of svc_cyborg.serve: Cyborg's agent manager, its RPC server, its report loop."""
    def start_agent(conf):
        import threading

        import oslo_messaging as messaging
        from cyborg import context as cyborg_context
        from cyborg.agent import manager as agent_manager
        from cyborg.common import constants, rpc
        from cyborg.objects import base as objects_base

        recorder = _nova_events_recorder(run) if run["nova_port"] else None
        agent = agent_manager.AgentManager(constants.AGENT_TOPIC, conf.host)
        server = rpc.get_server(messaging.Target(topic=constants.AGENT_TOPIC, server=conf.host), [agent],
                                objects_base.CyborgObjectSerializer())
        server.start()
        ctx = cyborg_context.get_admin_context()
        done = threading.Event()

        def loop():
            n = 0
            while not done.is_set():
                n += 1
                rec = {"n": n, "start": time.time(), "error": None}
                try:
                    agent.update_available_resource(ctx)
                except Exception as e:  # pylint: disable=broad-except
                    rec["error"] = "%s: %s" % (type(e).__name__, e)
                rec["end"] = time.time()
                with open(run["reports"], "a") as f:
                    f.write(json.dumps(rec) + "\n")
                done.wait(run["interval"])

        t = threading.Thread(target=loop, name="cyborg-agent-reports", daemon=True)
        t.start()

        def stop_agent():
            done.set()
            t.join(10)
            server.stop()
            server.wait()
            if recorder is not None:
                recorder.close()
        return stop_agent
    return start_agent


def serve(conf_file, run_file):
    import faulthandler
    import signal
    # SIGUSR2 writes every thread's stack to the log (a hung request can be looked at)
    faulthandler.register(signal.SIGUSR2, all_threads=True)
    with open(run_file) as f:
        run = json.load(f)
    _enter_simulated_host(run)
    svc_cyborg.serve(conf_file, extra=_agent(run))


def main(argv):
    import argparse
    if argv[:1] == ["serve"] and len(argv) == 3:
        serve(argv[1], argv[2])
        return 0
    ap = argparse.ArgumentParser(prog="svc_cyborg_agent.py", description=__doc__.split("\n", maxsplit=1)[0])
    sub = ap.add_subparsers(dest="action", required=True)
    s = sub.add_parser("start")
    s.add_argument("state_dir")
    s.add_argument("--placement", required=True, help="Placement's endpoint (token admin)")
    s.add_argument("--sys", required=True, help="the simulated host's sys directory")
    s.add_argument("--hostname", required=True, help="the host name inside the namespace (socket.gethostname())")
    s.add_argument("--root-provider", required=True, help="the compute node provider ([agent] resource_provider_name)")
    s.add_argument("--python", help="the Python of .venv-cyborg")
    s.add_argument("--drivers", default="intel_fpga_driver", help="[agent] enabled_drivers")
    s.add_argument("--interval", type=float, default=1.0, help="seconds between the agent's reports")
    s.add_argument("--nova", help="a Nova API (its /v2.1 endpoint) that Cyborg tells of bound ARQs; default: the recorder")
    s.add_argument("--nova-token", default="admin", help="the token Cyborg sends to --nova")
    w = sub.add_parser("wait", help="wait for an agent report that starts after this command does; print it")
    w.add_argument("state_dir")
    w.add_argument("--timeout", type=float, default=30.0)
    p = sub.add_parser("stop")
    p.add_argument("state_dir")
    a = ap.parse_args(argv)
    try:
        if a.action == "start":
            t0 = time.time()
            v = start(a.state_dir, a.placement, a.sys, a.hostname, a.root_provider, python=a.python,
                      drivers=a.drivers, interval=a.interval, nova=a.nova, nova_token=a.nova_token)
            v["cyborg_agent_start_seconds"] = round(time.time() - t0, 1)
            print(json.dumps(v))
        elif a.action == "wait":
            print(json.dumps(wait_for_report(os.path.abspath(a.state_dir), time.time(), a.timeout)))
        else:
            print(json.dumps({"stopped": stop(a.state_dir)}))
    except servicelib.HarnessError as e:
        print("cyborg-agent: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
