# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RabbitMQ (Debian's ``rabbitmq-server``) for the harness: the message bus Nova's notifications travel on.

Loaded by ``servicelib`` (standard library only). ``start`` runs ``/usr/lib/rabbitmq/bin/rabbitmq-server`` as
the calling user on 127.0.0.1 with every port its own (AMQP, Erlang distribution, its own epmd), its own node
name, ``HOME`` (the Erlang cookie), database and log folders under ``STATE_DIR/rabbitmq``, and a user of its own
with a random password (``default_user``/``default_pass``, set when the fresh database is made), so it neither
meets nor disturbs another broker on the machine. Ready when the port answers the AMQP 0-9-1 protocol header
with ``Connection.Start``. ``stop`` ends the broker and its epmd.

``python3 tests/harness/svc_rabbitmq.py restart STATE_DIR`` stops and starts it again on the same port with the
same database (a bus restart, as tests need one mid-run); the variable ``rabbitmq_restart_argv`` is that command.
The variables also say where what talks on the bus in tests lives: ``nova_python`` (.venv-nova, Nova's own
notifier), ``eda_bin`` (.venv-eda: ansible-rulebook, aio-pika) and ``eda_java_home`` (its JDK).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import servicelib  # noqa: E402  pylint: disable=wrong-import-position

SERVER = os.environ.get("ACCELOPS_RABBITMQ_SERVER", "/usr/lib/rabbitmq/bin/rabbitmq-server")
NAME = "rabbitmq"


def amqp_ready(port):
    """True when 127.0.0.1:PORT answers the AMQP 0-9-1 header with a method frame (Connection.Start)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"AMQP\x00\x00\x09\x01")
            return s.recv(1) == b"\x01"
    except OSError:
        return False


def java_home():
    """Debian's JDK 17 (openjdk-17-jre-headless), which ansible-rulebook's drools-jpy needs; JAVA_HOME first."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    base = "/usr/lib/jvm"
    found = sorted(n for n in (os.listdir(base) if os.path.isdir(base) else []) if n.startswith("java-17-openjdk"))
    return os.path.join(base, found[0]) if found else ""


def _environment(d, settings):
    return dict(
        os.environ,
        HOME=d,
        RABBITMQ_NODENAME="accelops%d@localhost" % settings["port"],
        RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
        RABBITMQ_NODE_PORT=str(settings["port"]),
        RABBITMQ_DIST_PORT=str(settings["dist_port"]),
        ERL_EPMD_PORT=str(settings["epmd_port"]),
        ERL_EPMD_ADDRESS="127.0.0.1",
        RABBITMQ_CONFIG_FILE=os.path.join(d, "rabbitmq"),
        RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(d, "enabled_plugins"),
        RABBITMQ_MNESIA_BASE=os.path.join(d, "mnesia"),
        RABBITMQ_LOG_BASE=os.path.join(d, "log"),
        RABBITMQ_PID_FILE=os.path.join(d, "server.pid"),
        RABBITMQ_LOGS="-",
    )


def _launch(state_dir, d, settings):
    log = os.path.join(d, "rabbitmq.log")
    servicelib.spawn(NAME, state_dir, [SERVER], lambda: amqp_ready(settings["port"]), log,
                     env=_environment(d, settings), cwd=d)


class RabbitMQ(object):
    name = NAME
    order = 5

    def start(self, state_dir):
        if not os.access(SERVER, os.X_OK):
            raise servicelib.HarnessError("%s not found: apt-get install rabbitmq-server (Makefile DEBS)" % SERVER)
        d = os.path.join(state_dir, NAME)
        for sub in ("mnesia", "log"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        settings = {"port": servicelib.free_port(), "dist_port": servicelib.free_port(),
                    "epmd_port": servicelib.free_port(), "user": "accelops",
                    "password": secrets.token_hex(12), "vhost": "/"}
        with open(os.path.join(d, "rabbitmq.conf"), "w") as f:
            f.write("default_user = %s\ndefault_pass = %s\nloopback_users = none\n"
                    "listeners.tcp.default = 127.0.0.1:%d\n"
                    % (settings["user"], settings["password"], settings["port"]))
        with open(os.path.join(d, "enabled_plugins"), "w") as f:
            f.write("[].\n")
        fd = os.open(os.path.join(d, "settings.json"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(settings, f)
        _launch(state_dir, d, settings)
        return {
            "rabbitmq_host": "127.0.0.1",
            "rabbitmq_port": settings["port"],
            "rabbitmq_user": settings["user"],
            "rabbitmq_password": settings["password"],
            "rabbitmq_vhost": settings["vhost"],
            "rabbitmq_transport_url": "rabbit://%s:%s@127.0.0.1:%d/" % (
                settings["user"], settings["password"], settings["port"]),
            "rabbitmq_restart_argv": [sys.executable, os.path.abspath(__file__), "restart", state_dir],
            # What talks on the bus in tests: Nova's own notifier, ansible-rulebook and its JDK.
            "nova_python": os.path.join(servicelib.service_venv("nova"), "bin", "python"),
            "eda_bin": os.path.join(servicelib.service_venv("eda"), "bin"),
            "eda_java_home": java_home(),
        }

    def stop(self, state_dir):
        d = os.path.join(state_dir, NAME)
        stopped = servicelib.stop_service(NAME, state_dir)
        settings_file = os.path.join(d, "settings.json")
        if os.path.exists(settings_file):
            with open(settings_file) as f:
                epmd_port = json.load(f)["epmd_port"]
            # epmd daemonises out of the broker's process group: end it by its port (it is this broker's own).
            # It refuses while it still lists the node that just stopped: try again for a few seconds.
            for _attempt in range(20):
                out = subprocess.run(["epmd", "-port", str(epmd_port), "-kill"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, check=False).stdout
                if "not allowed" not in out:
                    break
                time.sleep(0.25)
        return stopped


def restart(state_dir):
    state_dir = os.path.abspath(state_dir)
    d = os.path.join(state_dir, NAME)
    with open(os.path.join(d, "settings.json")) as f:
        settings = json.load(f)
    servicelib.stop_service(NAME, state_dir)
    deadline = time.time() + 10
    while time.time() < deadline and amqp_ready(settings["port"]):
        time.sleep(0.1)
    _launch(state_dir, d, settings)


SERVICE = RabbitMQ

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "restart":
        print("usage: svc_rabbitmq.py restart STATE_DIR", file=sys.stderr)
        sys.exit(2)
    restart(sys.argv[2])
    print("rabbitmq: restarted")
