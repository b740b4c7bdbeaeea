# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A session in Nova's own functional harness that the collection's code can act on between Nova's steps.

Run with .venv-nova's python: ``nova_session.py``, then one JSON request a line on stdin, one JSON answer a line
on stdout (stderr: the harness's log). The first request sets the host up:

  {"kind": "pci" | "vgpu", "nodename", "flags": {group: {option: value}} (the nova.conf the collection rendered),
   "pfs": [addresses whose sriov_totalvfs > 0], "devices": [{"type": "PCI"|"PF"|"VF"|"MDEV_TYPES", "bus", "slot",
   "function", "vendor_id", "product_id", "vf_ratio", "parent", "mdev_types": [{"id", "available"}]}]}

and answers {"endpoint": the harness's Placement served over HTTP on 127.0.0.1 (no auth: any token), "root":
the compute node provider's uuid}. Then:

- {"op": "boot", "extra_spec": {...}}: a flavor with these extra specs, a server (no network), waited for
  ACTIVE or ERROR: {"id", "status", "fault", "allocations": [{"name", "traits", "resources"}], "mdevs":
  [{"uuid", "parent"}] (the mdevs the guest XML names, with the parent device the driver made each on),
  "hostdevs": [the guest XML's hostdev elements]};
- {"op": "delete", "id"}: the server deleted and the compute's periodic update run (as Nova runs it);
- {"op": "flags", "flags": {...}} then {"op": "restart"}: nova-compute restarted with changed options;
- {"op": "periodic"}; {"op": "quit"}.

What is Nova's here: the API, conductor, scheduler (PCI-in-Placement prefilter, PciPassthroughFilter), compute
with the libvirt driver on Nova's fake libvirt (its device XML, with the types and counts asked for), and
Placement in process. Stand-ins, as Nova's own tests have them: the fake libvirt, its mdev creation
(``VGPUTestBase._create_mdev``), and ``is_physical_function`` answering from ``pfs`` (Nova's harness forbids
reading /sys). The one addition: an HTTP listener in front of the in-process Placement, so that the
collection's modules (another process, another Python) write to the same Placement Nova uses.
"""

import json
import os
import sys
import time
import traceback
import unittest

# this directory holds the harness's fixtures.py, which would hide the ``fixtures`` package Nova imports
sys.path[:] = [x for x in sys.path if os.path.abspath(x or ".") != os.path.dirname(os.path.abspath(__file__))]

SETUP = {}
ANSWERS = []      # the stdout the answers go to; anything else that writes to stdout (Nova's log) goes to stderr


def _answer(obj):
    ANSWERS[0].write(json.dumps(obj, sort_keys=True) + "\n")
    ANSWERS[0].flush()


def _request():
    """The next request; the hub keeps serving Placement (eventlet mode) while this waits for stdin."""
    from eventlet import hubs
    hubs.trampoline(sys.stdin.fileno(), read=True)
    line = sys.stdin.readline()
    return json.loads(line) if line.strip() else {"op": "quit"}


def _serve_placement(endpoint):
    """Serve the harness's in-process Placement (the wsgi-intercept app Nova's fixture installed) on 127.0.0.1."""
    import eventlet
    import eventlet.wsgi
    import wsgi_intercept
    from urllib.parse import urlparse

    u = urlparse(endpoint)
    app_fn, _script = wsgi_intercept._wsgi_intercept[(u.hostname, u.port or 80)]  # pylint: disable=protected-access
    app = app_fn()
    sock = eventlet.listen(("127.0.0.1", 0))
    eventlet.spawn(eventlet.wsgi.server, sock, app, log_output=False, log=open(os.devnull, "w"))
    return "http://127.0.0.1:%d" % sock.getsockname()[1]


def _mdev_caps(dev, types):
    """The device's mdev types as the fake libvirt writes them (its own template), with the host's types."""
    from nova.tests.fixtures import libvirt as fakelibvirt
    old = dev.mdevtypes_templ % {"type_id": fakelibvirt.NVIDIA_11_VGPU_TYPE, "instances": 16}
    new = "\n".join(dev.mdevtypes_templ % {"type_id": t["id"], "instances": t["available"]} for t in types)
    assert old in dev.pci_device
    dev.pci_device = dev.pci_device.replace(old, new)


def _test_case():
    from unittest import mock

    from lxml import etree
    from nova.tests.fixtures import libvirt as fakelibvirt
    from nova.tests.functional.libvirt import test_pci_sriov_servers, test_vgpu
    from nova.virt.libvirt import utils as libvirt_utils

    base = test_vgpu.VGPUTestBase if SETUP["kind"] == "vgpu" else test_pci_sriov_servers._PCIServersTestBase

    class Session(base):
        PCI_DEVICE_SPEC = []
        PCI_ALIAS = []
        ADDITIONAL_FILTERS = ["NUMATopologyFilter", "PciPassthroughFilter"]

        def _set_flags(self, flags):
            import nova.conf
            # [devices] first: the [mdev_<type>] groups exist once Nova registers them for the enabled types
            for group, opts in sorted(flags.items(), key=lambda go: go[0] != "devices"):
                self.flags(group=None if group == "DEFAULT" else group, **opts)
                if group == "devices":
                    nova.conf.devices.register_dynamic_opts(nova.conf.CONF)

        def setUp(self):
            self._set_flags(SETUP["flags"])
            # Nova's harness forbids reading /sys (SysFsPoisonFixture); its own tests patch this check the same way
            pfs = set(SETUP.get("pfs") or [])
            patcher = mock.patch("nova.pci.utils.is_physical_function",
                                 side_effect=lambda d, b, s, f: "%s:%s:%s.%s" % (d, b, s, f) in pfs)
            patcher.start()
            self.addCleanup(patcher.stop)
            super().setUp()
            # Nova 34's own queries use noload() and an empty and_(), deprecated in the SQLAlchemy its venv has;
            # Nova's WarningsFixture turns that into a 500 on the NoValidHost path (burying in cell0)
            import warnings
            from sqlalchemy import exc as sa_exc
            warnings.filterwarnings("always", category=sa_exc.SADeprecationWarning)
            # the PCI base class sets device_spec/alias from its class attributes: the rendered ones win
            self._set_flags(SETUP["flags"])

        def _pci_info(self):
            info = fakelibvirt.HostPCIDevicesInfo(num_pci=0, num_pfs=0, num_vfs=0)
            for i, d in enumerate(SETUP["devices"]):
                dev = info.add_device(
                    dev_type=d["type"], bus=d["bus"], slot=d["slot"], function=d["function"],
                    iommu_group=60 + i, numa_node=0, vf_ratio=d.get("vf_ratio"),
                    parent=tuple(d["parent"]) if d.get("parent") else None,
                    vend_id=d.get("vendor_id"), prod_id=d.get("product_id"))
                if d["type"] == "MDEV_TYPES":
                    _mdev_caps(dev, d["mdev_types"])
            return info

        def _allocations(self, server_id):
            out = []
            allocs = self.placement.get("/allocations/%s" % server_id).body["allocations"]
            for rp_uuid, a in sorted(allocs.items()):
                rp = self.placement.get("/resource_providers/%s" % rp_uuid).body
                traits = self.placement.get("/resource_providers/%s/traits" % rp_uuid, version="1.6").body["traits"]
                out.append({"name": rp["name"], "traits": sorted(traits), "resources": a["resources"]})
            return out

        def _guest(self, server_id):
            conn = self.computes[SETUP["nodename"]].driver._host.get_connection()
            dom = conn.lookupByUUIDString(server_id)
            xml = etree.fromstring(dom.XMLDesc(0))
            hostdevs = [etree.tostring(h).decode() for h in xml.findall("./devices/hostdev")]
            mdevs = []
            for h in xml.findall("./devices/hostdev[@type='mdev']"):
                uuid = h.find("./source/address").get("uuid")
                info = self.computes[SETUP["nodename"]].driver._get_mediated_device_information(
                    libvirt_utils.mdev_uuid2name(uuid))
                mdevs.append({"uuid": uuid, "parent": info["parent"]})
            return hostdevs, mdevs

        def boot(self, req):
            flavor = self._create_flavor(extra_spec=req["extra_spec"])
            server = self._build_server(flavor_id=flavor, networks="none")
            server = self.api.post_server({"server": server})
            for _i in range(1200):       # up to 2 minutes: a loaded 2-core CI machine boots slowly
                server = self.api.get_server(server["id"])
                if server["status"] in ("ACTIVE", "ERROR"):
                    break
                time.sleep(0.1)
            out = {"id": server["id"], "status": server["status"], "fault": (server.get("fault") or {}).get("message"),
                   "allocations": [], "mdevs": [], "hostdevs": []}
            if server["status"] == "ACTIVE":
                out["allocations"] = self._allocations(server["id"])
                out["hostdevs"], out["mdevs"] = self._guest(server["id"])
            return out

        def test_session(self):
            self.api.microversion = "latest"
            kw = {}
            if SETUP["kind"] == "vgpu":
                kw = dict(libvirt_version=self.FAKE_LIBVIRT_VERSION, qemu_version=self.FAKE_QEMU_VERSION)
            self.start_compute(hostname=SETUP["nodename"], pci_info=self._pci_info(), **kw)
            endpoint = _serve_placement(self.placement.fixture.endpoint)
            _answer({"endpoint": endpoint, "root": self.compute_rp_uuids[SETUP["nodename"]]})
            while True:
                req = _request()
                op = req.get("op")
                if op == "quit":
                    return
                try:
                    if op == "boot":
                        ans = self.boot(req)
                    elif op == "delete":
                        self._delete_server({"id": req["id"]})
                        self._run_periodics()
                        ans = {}
                    elif op == "flags":
                        self._set_flags(req["flags"])
                        ans = {}
                    elif op == "restart":
                        self.restart_compute_service(SETUP["nodename"])
                        ans = {}
                    elif op == "periodic":
                        self._run_periodics()
                        ans = {}
                    else:
                        ans = {"error": "unknown op %r" % op}
                except Exception:  # pylint: disable=broad-except
                    ans = {"error": traceback.format_exc()[-4000:]}
                _answer(ans)

    return Session


def main():
    ANSWERS.append(os.fdopen(os.dup(1), "w"))
    os.dup2(2, 1)
    line = sys.stdin.readline()
    SETUP.update(json.loads(line))
    # Nova's harness finds api-paste.ini under $state_path/etc/nova: the wheel installs it in the venv's etc/
    import nova.conf
    nova.conf.CONF.set_default("state_path", sys.prefix)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_test_case())
    out = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
    if not out.wasSuccessful():
        _answer({"error": "\n".join(t for _c, t in out.errors + out.failures)[-6000:]})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
