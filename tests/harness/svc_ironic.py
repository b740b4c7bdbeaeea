# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenStack Ironic (PyPI ironic), standalone, for the harness: the all-in-one ``ironic`` process.

Loaded by ``servicelib`` (standard library only at import time). ``start`` writes a config, creates the
schema on SQLite with ``ironic-dbsync create_schema`` and runs ``.venv-ironic/bin/ironic --config-file F``:
the API and the conductor in one process, no message bus (``rpc_transport = none``), no Keystone
(``auth_strategy = noauth``: every request is an admin's), only the ``fake-hardware`` hardware type with
every interface fake or no-op (anything else makes the conductor worker crash-loop while the parent lives
on), no DHCP. Nodes can be created, their traits and properties set and read; nothing is ever booted.

openstacksdk talks to it with ``auth_type: none`` and ``baremetal_endpoint_override`` (see the variables
``start`` returns). SQLite allows one writer: tests drive it serially. Everything is written under
``STATE_DIR/ironic``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import servicelib  # noqa: E402  pylint: disable=wrong-import-position

# Traits arrived in API 1.37; 1.x newest is what openstacksdk negotiates anyway.
MICROVERSION = "1.37"


def ironic_bin(name):
    return servicelib.service_bin("ironic", name)


def write_config(d, port):
    db = os.path.join(d, "ironic.sqlite")
    conf = os.path.join(d, "ironic.conf")
    for sub in ("locks", "state", "tmp"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    with open(conf, "w") as f:
        f.write("""[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = accelops-harness
state_path = {d}/state
tempdir = {d}/tmp
use_stderr = true
debug = false
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_firmware_interfaces = fake,no-firmware
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
default_network_interface = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = noop
enabled_vendor_interfaces = fake,no-vendor

[api]
host_ip = 127.0.0.1
port = {port}

[conductor]
# Nothing to power-sync or clean: fake hardware.
sync_power_state_interval = -1
automated_clean = false

[dhcp]
dhcp_provider = none

[database]
connection = sqlite:///{db}

[oslo_concurrency]
lock_path = {d}/locks

[pxe]
tftp_root = {d}/tftpboot
tftp_master_path = {d}/tftpboot/master_images
instance_master_path = {d}/master_images
images_path = {d}/images

[deploy]
http_root = {d}/httpboot

[vnc]
enabled = false
""".format(d=d, port=port, db=db))
    return conf


def api_ready(endpoint):
    """True once the conductor has registered the fake-hardware driver (the API answers before that)."""
    req = urllib.request.Request(endpoint + "/v1/drivers", headers={"X-OpenStack-Ironic-API-Version": "1.37"})
    try:
        with urllib.request.urlopen(req, timeout=2.0) as r:
            drivers = json.loads(r.read().decode("utf-8")).get("drivers") or []
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return any(x.get("name") == "fake-hardware" for x in drivers)


class Ironic(object):
    """Standalone Ironic: API and conductor in one process, fake-hardware, noauth, SQLite."""

    name = "ironic"
    order = 20
    context = {}

    def start(self, state_dir):
        d = os.path.join(state_dir, self.name)
        os.makedirs(d, exist_ok=True)
        port = servicelib.free_port()
        endpoint = "http://127.0.0.1:%d" % port
        conf = write_config(d, port)
        log = os.path.join(d, "ironic.log")
        db = os.path.join(d, "ironic.sqlite")
        if not os.path.exists(db):
            with open(log, "ab") as out:
                rc = subprocess.call([ironic_bin("ironic-dbsync"), "--config-file", conf, "create_schema"],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=d,
                                     env=dict(os.environ, HOME=d, TMPDIR=os.path.join(d, "tmp")))
            if rc != 0:
                raise servicelib.HarnessError("ironic-dbsync create_schema failed (exit %d); see %s" % (rc, log))
        # HOME and TMPDIR in the state dir too: oslo.config also looks in ~/.ironic, and nothing may land
        # outside the state dir.
        env = dict(os.environ, HOME=d, TMPDIR=os.path.join(d, "tmp"))
        # About 6 s on an idle machine.
        servicelib.spawn(self.name, state_dir, [ironic_bin("ironic"), "--config-file", conf],
                         lambda: api_ready(endpoint), log, env=env, cwd=d)
        return {
            "ironic_endpoint": endpoint,
            "ironic_microversion": MICROVERSION,
            "ironic_log": log,
        }

    def stop(self, state_dir):
        return servicelib.stop_service(self.name, state_dir)


SERVICE = Ironic
