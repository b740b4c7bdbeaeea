# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Start and stop real OpenStack services on 127.0.0.1 for tests and benchmarks.

Standard library only: the controller's .venv and the gate runner call it; the services themselves run
from ``.venv-services`` (built by ``tests/harness/setup-venv.sh``).

Each service is one class in :data:`SERVICES` with ``start(state_dir) -> dict of variables`` and
``stop(state_dir)``; adding Cyborg or Ironic is one more class. Everything a service writes (config,
database, logs, pid file) stays in its own folder below the state directory.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# Seconds a service may take to answer after launch (a loaded 2-core machine needs far more than an idle one).
STARTUP_TIMEOUT = float(os.environ.get("ACCELOPS_SERVICE_TIMEOUT", "60"))


class HarnessError(Exception):
    pass


def services_venv():
    return os.environ.get("ACCELOPS_SERVICES_VENV") or os.path.join(TOP, ".venv-services")


def service_venv(service):
    """The venv of a service: ``ACCELOPS_<NAME>_VENV`` or ``.venv-<name>`` (Placement's is .venv-services)."""
    default = ".venv-services" if service == "placement" else ".venv-" + service
    env = "ACCELOPS_SERVICES_VENV" if service == "placement" else "ACCELOPS_%s_VENV" % service.upper()
    return os.environ.get(env) or os.path.join(TOP, default)


def service_bin(service, name):
    venv = service_venv(service)
    path = os.path.join(venv, "bin", name)
    if not os.path.exists(path):
        raise HarnessError("%s not found: run tests/harness/setup-venv.sh%s first (it builds %s)"
                           % (path, "" if service == "placement" else " " + service, venv))
    return path


def venv_bin(name):
    return service_bin("placement", name)


def spawn(name, state_dir, cmd, ready, log, env=None, cwd=None):
    """Start ``cmd`` as the process-group leader of service ``name`` (pid file STATE_DIR/NAME/NAME.pid, output
    appended to ``log``) and wait up to STARTUP_TIMEOUT for ``ready()``; stopped again when it never is."""
    pid_file = os.path.join(state_dir, name, name + ".pid")
    old = _read_pid(pid_file)
    if old and _pid_alive(old):
        raise HarnessError("%s already runs from %s (pid file %s): stop it first" % (name, state_dir, pid_file))
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, start_new_session=True)
    with open(pid_file, "w") as f:
        f.write("%d\n" % proc.pid)
    try:
        wait_until(ready, STARTUP_TIMEOUT, name, log, proc.pid)
    except HarnessError:
        stop_pid_file(pid_file)
        raise
    return proc.pid


def stop_service(name, state_dir):
    return stop_pid_file(os.path.join(state_dir, name, name + ".pid"))


def free_port():
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_pid(pid_file):
    try:
        with open(pid_file) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def stop_pid_file(pid_file, grace=5.0):
    """Stop the process group whose leader's pid is in ``pid_file``; a missing or stale file is fine."""
    pid = _read_pid(pid_file)
    if pid is None:
        return False
    stopped = False
    if _pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        deadline = time.time() + grace
        while time.time() < deadline and _pid_alive(pid):
            _reap(pid)
            time.sleep(0.05)
        if _pid_alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            _reap(pid)
        stopped = True
    try:
        os.unlink(pid_file)
    except OSError:
        pass
    return stopped


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def http_status(url, headers=None, timeout=2.0):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, OSError):
        return None


def wait_until(check, timeout, what, log_file=None, pid=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if check():
            return
        if pid is not None and not _pid_alive(pid):
            break
        time.sleep(0.1)
    tail = ""
    if log_file and os.path.exists(log_file):
        with open(log_file, errors="replace") as f:
            tail = "".join(f.readlines()[-20:])
    raise HarnessError("%s did not become ready within %.0f s%s\n%s"
                       % (what, timeout, "" if pid is None or _pid_alive(pid) else " (the process exited)", tail))


class Placement(object):
    """OpenStack Placement (PyPI openstack-placement) under gunicorn, one request at a time, SQLite,
    noauth2 (token ``admin``)."""

    name = "placement"

    def start(self, state_dir):
        d = os.path.join(state_dir, self.name)
        os.makedirs(d, exist_ok=True)
        port = free_port()
        endpoint = "http://127.0.0.1:%d" % port
        db = os.path.join(d, "placement.sqlite")
        with open(os.path.join(d, "placement.conf"), "w") as f:
            f.write("[DEFAULT]\nuse_stderr = True\n\n[api]\nauth_strategy = noauth2\n\n"
                    "[placement_database]\nconnection = sqlite:///%s\nsync_on_startup = True\n" % db)
        log = os.path.join(d, "placement.log")
        # gunicorn: one worker, one thread (SQLite and concurrent writers give "database is locked");
        # no control socket (it would go to ~/.gunicorn). The access log counts requests for tests/benchmarks.
        cmd = [venv_bin("gunicorn"), "--bind", "127.0.0.1:%d" % port, "--workers", "1",
               "--worker-class", "gthread", "--threads", "1", "--no-control-socket", "--timeout", "120",
               "--access-logfile", os.path.join(d, "access.log"),
               "--access-logformat", '%(r)s %(s)s',
               "--error-logfile", log, "--chdir", d, "placement.wsgi.api:application"]
        spawn(self.name, state_dir, cmd, lambda: http_status(endpoint + "/resource_providers",
                                                             {"X-Auth-Token": "admin"}) == 200,
              log, env=dict(os.environ, OS_PLACEMENT_CONFIG_DIR=d), cwd=d)
        return {
            "placement_endpoint": endpoint,
            "placement_token": "admin",
            "placement_microversion": "1.39",
            "placement_access_log": os.path.join(d, "access.log"),
            "osc_placement_cli": venv_bin("openstack"),
        }

    def stop(self, state_dir):
        return stop_service(self.name, state_dir)


def _load_services():
    """Placement, then every ``svc_<name>.py`` beside this file that defines ``SERVICE`` (a class like
    :class:`Placement`, with ``name``, ``start(state_dir)`` and ``stop(state_dir)``, and optionally ``order``:
    lower starts first, Placement is 0). Before ``start`` the harness sets ``svc.context`` to the variables of
    the services started before it (Cyborg reads ``placement_endpoint`` there)."""
    import importlib.util
    found = {"placement": Placement}
    for fname in sorted(os.listdir(HERE)):
        if not (fname.startswith("svc_") and fname.endswith(".py")):
            continue
        spec = importlib.util.spec_from_file_location("accelops_harness_" + fname[:-3], os.path.join(HERE, fname))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        cls = getattr(mod, "SERVICE", None)
        if cls is not None:
            found[cls.name] = cls
    return dict(sorted(found.items(), key=lambda kv: (getattr(kv[1], "order", 0), kv[0])))


# One entry per service, in start order.
SERVICES = _load_services()


def write_vars(path, variables):
    """A flat YAML mapping (every value a JSON scalar, which YAML reads the same)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("# written by tests/harness/services; removed by `services stop`\n")
        for k in sorted(variables):
            f.write("%s: %s\n" % (k, json.dumps(variables[k])))
    os.replace(tmp, path)


def read_vars(path):
    """Read what :func:`write_vars` wrote (no YAML library needed)."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or ":" not in line:
                continue
            k, v = line.split(":", 1)
            v = v.strip()
            try:
                out[k.strip()] = json.loads(v)
            except ValueError:
                out[k.strip()] = v
    return out


def start(state_dir, names=None):
    state_dir = os.path.abspath(state_dir)
    os.makedirs(state_dir, exist_ok=True)
    names = list(SERVICES) if names is None else list(names)
    unknown = [n for n in names if n not in SERVICES]
    if unknown:
        raise HarnessError("unknown service(s) %s; known: %s" % (", ".join(unknown), ", ".join(SERVICES)))
    names = [n for n in SERVICES if n in names]   # start order
    variables = {"services_state_dir": state_dir}
    started = []
    try:
        for n in names:
            svc = SERVICES[n]()
            svc.context = dict(variables)
            variables.update(svc.start(state_dir))
            started.append(n)
    except Exception:
        for n in reversed(started):
            SERVICES[n]().stop(state_dir)
        raise
    variables["services_started"] = ",".join(started)
    with open(os.path.join(state_dir, "services.list"), "w") as f:
        f.write("\n".join(started) + "\n")
    write_vars(os.path.join(state_dir, "services.yml"), variables)
    return variables


def stop(state_dir):
    state_dir = os.path.abspath(state_dir)
    stopped = []
    for n in SERVICES:
        if SERVICES[n]().stop(state_dir):
            stopped.append(n)
    for f in ("services.yml", "services.list"):
        try:
            os.unlink(os.path.join(state_dir, f))
        except OSError:
            pass
    return stopped


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = ("usage: services start STATE_DIR [--services %s] [--without NAME,...] | services stop STATE_DIR  "
             "(default: all)" % ",".join(SERVICES))
    if len(argv) < 2 or argv[0] not in ("start", "stop"):
        print(usage, file=sys.stderr)
        return 2
    action, state_dir, rest = argv[0], argv[1], argv[2:]
    names, without = None, []
    while rest:
        opt = rest.pop(0)
        if opt == "--services" and rest:
            names = [n for n in rest.pop(0).split(",") if n]
        elif opt == "--without" and rest:
            without = [n for n in rest.pop(0).split(",") if n]
        elif opt.startswith("--services="):
            names = [n for n in opt.split("=", 1)[1].split(",") if n]
        else:
            print(usage, file=sys.stderr)
            return 2
    if without:
        names = [n for n in (names if names is not None else SERVICES) if n not in without]
    try:
        if action == "start":
            t0 = time.time()
            variables = start(state_dir, names)
            print("services: started %s in %.1f s; variables in %s"
                  % (variables["services_started"].replace(",", ", "), time.time() - t0, os.path.join(os.path.abspath(state_dir), "services.yml")))
            for k in sorted(variables):
                print("  %s: %s" % (k, variables[k]))
        else:
            stopped = stop(state_dir)
            print("services: stopped %s" % (", ".join(stopped) or "nothing (none running)"))
    except HarnessError as e:
        print("services: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
