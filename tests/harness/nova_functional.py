# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Boot a server in Nova's own functional harness with the configuration the collection renders.

Run with .venv-nova's python (plus Nova's functional test dependencies, tests/harness/requirements-nova.txt):
``nova_functional.py REQUEST.json``. The request: {"pfs": the addresses whose sriov_totalvfs is above 0 on the
simulated host (Nova asks whether a device_spec address is a PF), "nodename",
"device_spec": [JSON strings], "alias": [JSON strings], "devices": [{"type": "PCI"|"PF"|"VF", "bus", "slot",
"function", "vendor_id", "product_id", "vf_ratio", "parent": [bus, slot, function]}], "request_alias": name}.
Prints one JSON line: {"ok", "status", "providers": [{"name", "traits", "resources"}] the server's allocation
is on, "error"}.

Nova's harness does the rest: its fake libvirt (the devices above, laid out as it lays them out: a PF's VFs in the
functions after it), a real API, conductor, scheduler (PciPassthroughFilter, PCI-in-Placement prefilter) and
compute with the libvirt driver, and an in-process Placement. The server is booted with a flavor whose
``pci_passthrough:alias`` asks for one device of the alias.
"""

import json
import os
import sys
import unittest

# this directory holds the harness's fixtures.py, which would hide the ``fixtures`` package Nova imports
sys.path[:] = [x for x in sys.path if os.path.abspath(x or ".") != os.path.dirname(os.path.abspath(__file__))]

REQ = {}
RESULT = {"ok": False, "status": None, "providers": [], "error": None}


def _test_case():
    from unittest import mock

    from nova.tests.fixtures import libvirt as fakelibvirt
    from nova.tests.functional.libvirt import test_pci_sriov_servers

    class FlavorAsksForTheFunction(test_pci_sriov_servers._PCIServersTestBase):
        PCI_DEVICE_SPEC = REQ["device_spec"]
        PCI_ALIAS = REQ["alias"]

        def setUp(self):
            # the nova-api file's switch and the compute's report_in_placement, as rendered
            self.flags(group="pci", report_in_placement=True)
            self.flags(group="filter_scheduler", pci_in_placement=True)
            # Nova's harness forbids reading /sys (SysFsPoisonFixture) and its own tests patch this check the
            # same way: here it answers what the simulated host's sriov_totalvfs says (the oracle reads it there)
            pfs = set(REQ["pfs"])
            patcher = mock.patch("nova.pci.utils.is_physical_function",
                                 side_effect=lambda d, b, s, f: "%s:%s:%s.%s" % (d, b, s, f) in pfs)
            patcher.start()
            self.addCleanup(patcher.stop)
            super().setUp()

        def test_boot(self):
            pci_info = fakelibvirt.HostPCIDevicesInfo(num_pci=0, num_pfs=0, num_vfs=0)
            for i, d in enumerate(REQ["devices"]):
                pci_info.add_device(
                    dev_type=d["type"], bus=d["bus"], slot=d["slot"], function=d["function"],
                    iommu_group=60 + i, numa_node=0, vf_ratio=d.get("vf_ratio"),
                    parent=tuple(d["parent"]) if d.get("parent") else None,
                    vend_id=d["vendor_id"], prod_id=d["product_id"])
            self.start_compute(hostname=REQ["nodename"], pci_info=pci_info)
            self.api.microversion = "latest"       # networks "none" (2.37+)
            flavor = self._create_flavor(extra_spec={"pci_passthrough:alias": "%s:1" % REQ["request_alias"]})
            server = self._create_server(flavor_id=flavor, networks="none", expected_state="ACTIVE")
            RESULT["status"] = server["status"]
            allocs = self.placement.get("/allocations/%s" % server["id"]).body["allocations"]
            for rp_uuid, a in sorted(allocs.items()):
                rp = self.placement.get("/resource_providers/%s" % rp_uuid).body
                traits = self.placement.get("/resource_providers/%s/traits" % rp_uuid,
                                            version="1.6").body["traits"]
                RESULT["providers"].append({"name": rp["name"], "traits": sorted(traits),
                                            "resources": a["resources"]})
            RESULT["ok"] = True

    return FlavorAsksForTheFunction


def main(argv):
    with open(argv[0]) as f:
        REQ.update(json.load(f))
    # Nova's harness finds api-paste.ini under $state_path/etc/nova: the wheel installs it in the venv's etc/
    import nova.conf
    nova.conf.CONF.set_default("state_path", sys.prefix)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_test_case())
    out = unittest.TextTestRunner(stream=sys.stderr, verbosity=1).run(suite)
    if not out.wasSuccessful():
        RESULT["ok"] = False
        RESULT["error"] = "\n".join(t for _c, t in out.errors + out.failures)[-6000:]
    sys.stdout.write(json.dumps(RESULT, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
