# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What Nova would report to Placement for one host, decided by Nova's own code (run with .venv-nova's python).

Reads a JSON request on stdin and prints a JSON answer on stdout (``--serve``: one per line, until stdin ends):

  request: {"nova_conf": text, "nodename": str, "sysfs": a host tree whose sys/ stands for /sys,
            "api_conf": the nova-api/scheduler file (optional: the Placement request group of each alias),
            "providers": [{"name", "uuid", "parent" (name or null), "traits", "inventory"}] already in
            Placement (optional), "allocations": {consumer: {"allocations": {...}}} (optional)}
  answer:  {"error": null | {"type", "message", "stage", "traceback"}, "conf": {...}, "pci_devices": [...],
            "assignable": [...], "providers": [{"name", "parent", "inventory", "traits"}],
            "allocations": the allocations as Nova would write them back, "allocations_changed": bool,
            "api": {"pci_in_placement": bool, "groups": {alias: [{"resources", "required_traits"}]}}}

The script re-runs itself in a private mount namespace (root only) and, for a request with ``sysfs``, bind-mounts
that tree's sys/ on /sys while it answers, because Nova reads /sys itself (``nova.pci.utils.is_physical_function`` decides from
``sriov_totalvfs`` whether a device_spec address is a PF that matches its VFs; the PF's MAC comes from its net/).

Nova's code does the work: oslo.config parses the file with every nova.conf option registered;
``nova.pci.request.get_alias_from_config`` checks the aliases; the libvirt driver's
``_get_supported_vgpu_types`` checks the mdev sections; ``nova.virt.libvirt.host.Host._get_pcidev_info`` turns
libvirt node device XML into Nova's PCI device dicts (dev_type, parent_addr); the real ``PciDevTracker`` (on a
throw-away SQLite database, empty as on a new compute node) filters them with ``[pci] device_spec``;
``pci_placement_translator.update_provider_tree_for_pci`` and the libvirt driver's
``_update_provider_tree_for_vgpu`` write a real ``ProviderTree``.

What stands in for libvirtd is ``NodeDevices`` below: it makes the node device XML the way libvirt's udev
backend does (src/node_device/node_device_udev.c: name ``pci_DDDD_BB_SS_F``; src/conf/node_device_conf.c:
the ``virt_functions`` capability when sriov_totalvfs > 0, ``phys_function`` from physfn, ``mdev_types`` from
mdev_supported_types with availableInstances; mdev devices ``mdev_<uuid with _>_<parent address with _>``
since libvirt 7.7), reading the same /sys.
"""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from xml.sax.saxutils import escape

# this directory holds the harness's fixtures.py, which would hide the ``fixtures`` package Nova imports
sys.path[:] = [x for x in sys.path if os.path.abspath(x or ".") != os.path.dirname(os.path.abspath(__file__))]

SYS = "/sys"
_STATE = {}     # what --serve keeps between requests: the work directory, the database made once


def _read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except (IOError, OSError):
        return default


def _addr_name(address):
    return address.replace(":", "_").replace(".", "_")


class NodeDevice(object):
    """One libvirt virNodeDevice: the methods Nova calls (name, parent, XMLDesc, listCaps)."""

    def __init__(self, name, parent, caps, xml):
        self._name, self._parent, self._caps, self._xml = name, parent, caps, xml

    def name(self):
        return self._name

    def parent(self):
        return self._parent

    def listCaps(self):  # noqa: N802 (libvirt's name)
        return list(self._caps)

    def XMLDesc(self, flags=0):  # noqa: N802 (libvirt's name)
        return self._xml


class NodeDevices(object):
    """The node devices libvirt would list for /sys, and the Host methods Nova's driver calls on them."""

    def __init__(self, sys_root=SYS):
        self.sys = sys_root
        self.devices = {}
        pci = os.path.join(self.sys, "bus", "pci", "devices")
        for addr in sorted(os.listdir(pci)) if os.path.isdir(pci) else []:
            self._pci(addr, os.path.join(pci, addr))
        mdev = os.path.join(self.sys, "bus", "mdev", "devices")
        for uuid in sorted(os.listdir(mdev)) if os.path.isdir(mdev) else []:
            self._mdev(uuid, os.path.join(mdev, uuid))

    def _pci(self, addr, path):
        dom, bus, rest = addr.split(":")
        slot, fn = rest.split(".")
        vendor = _read(os.path.join(path, "vendor"), "0x0000")
        device = _read(os.path.join(path, "device"), "0x0000")
        numa = _read(os.path.join(path, "numa_node"), "-1")
        caps = ["<domain>%d</domain>" % int(dom, 16), "<bus>%d</bus>" % int(bus, 16),
                "<slot>%d</slot>" % int(slot, 16), "<function>%d</function>" % int(fn, 16),
                "<product id='%s'/>" % device, "<vendor id='%s'/>" % vendor]
        physfn = os.path.join(path, "physfn")
        if os.path.islink(physfn):
            p = os.path.basename(os.path.realpath(physfn))
            pd, pb, pr = p.split(":")
            ps, pf = pr.split(".")
            caps.append("<capability type='phys_function'><address domain='0x%s' bus='0x%s' slot='0x%s' "
                        "function='0x%s'/></capability>" % (pd, pb, ps, pf))
        total = _read(os.path.join(path, "sriov_totalvfs"))
        if total and total.isdigit() and int(total) > 0:
            vfs = []
            for entry in sorted(os.listdir(path)):
                if entry.startswith("virtfn"):
                    v = os.path.basename(os.path.realpath(os.path.join(path, entry)))
                    vd, vb, vr = v.split(":")
                    vs, vf = vr.split(".")
                    vfs.append("<address domain='0x%s' bus='0x%s' slot='0x%s' function='0x%s'/>" % (vd, vb, vs, vf))
            caps.append("<capability type='virt_functions' maxCount='%s'>%s</capability>" % (total, "".join(vfs)))
        types_dir = os.path.join(path, "mdev_supported_types")
        if os.path.isdir(types_dir):
            types = []
            for t in sorted(os.listdir(types_dir)):
                tp = os.path.join(types_dir, t)
                types.append("<type id='%s'><name>%s</name><deviceAPI>%s</deviceAPI>"
                             "<availableInstances>%s</availableInstances></type>"
                             % (escape(t), escape(_read(os.path.join(tp, "name"), "")),
                                escape(_read(os.path.join(tp, "device_api"), "vfio-pci")),
                                _read(os.path.join(tp, "available_instances"), "0")))
            caps.append("<capability type='mdev_types'>%s</capability>" % "".join(types))
        if numa.lstrip("-").isdigit() and int(numa) >= 0:
            caps.append("<numa node='%s'/>" % numa)
        name = "pci_" + _addr_name(addr)
        xml = ("<device><name>%s</name><path>%s</path><parent>computer</parent><capability type='pci'>%s"
               "</capability></device>" % (name, escape(os.path.realpath(path)), "".join(caps)))
        kinds = ["pci"] + (["mdev_types"] if os.path.isdir(types_dir) else [])
        self.devices[name] = NodeDevice(name, "computer", kinds, xml)

    def _mdev(self, uuid, path):
        parent = os.path.basename(os.path.dirname(os.path.realpath(path)))
        mtype = os.path.basename(os.path.realpath(os.path.join(path, "mdev_type")))
        group = os.path.basename(os.path.realpath(os.path.join(path, "iommu_group")))
        name = "mdev_%s_%s" % (uuid.replace("-", "_"), _addr_name(parent))
        xml = ("<device><name>%s</name><parent>pci_%s</parent><capability type='mdev'><type id='%s'/>"
               "<uuid>%s</uuid>%s</capability></device>"
               % (name, _addr_name(parent), escape(mtype), uuid,
                  "<iommuGroup number='%s'/>" % group if group.isdigit() else ""))
        self.devices[name] = NodeDevice(name, "pci_" + _addr_name(parent), ["mdev"], xml)

    # -- the nova.virt.libvirt.host.Host methods the driver's vGPU code calls ------------------------------
    def list_mdev_capable_devices(self, flags=0):
        return [n for n, d in sorted(self.devices.items()) if "mdev_types" in d.listCaps()]

    def list_mediated_devices(self, flags=0):
        return [n for n, d in sorted(self.devices.items()) if "mdev" in d.listCaps()]

    def device_lookup_by_name(self, name):
        return self.devices[name]


def _tree_out(tree):
    out = []
    for uuid in tree.get_provider_uuids():
        d = tree.data(uuid)
        parent = tree.data(d.parent_uuid).name if d.parent_uuid else None
        out.append({"name": d.name, "uuid": d.uuid, "parent": parent, "inventory": d.inventory,
                    "traits": sorted(d.traits)})
    return out


def oracle(req):
    ans = {"error": None, "conf": None, "pci_devices": [], "assignable": [], "providers": []}
    stage = "import"
    try:
        import nova.conf
        from nova import context as nova_context
        from nova import objects
        from nova.compute import pci_placement_translator as ppt
        from nova.compute import provider_tree
        from nova.db import migration
        from nova.pci import manager as pci_manager
        from nova.pci import request as pci_request
        from nova.virt.libvirt import driver as libvirt_driver
        from nova.virt.libvirt import host as libvirt_host
        objects.register_all()
        conf = nova.conf.CONF

        stage = "config"
        if "work" not in _STATE:
            _STATE["work"] = tempfile.mkdtemp(prefix="nova-oracle-")
            atexit.register(shutil.rmtree, _STATE["work"], True)
        work = _STATE["work"]
        path = os.path.join(work, "nova.conf")
        with open(path, "w") as f:
            f.write(req["nova_conf"])
        conf([], project="nova", default_config_files=[path])
        conf.set_override("connection", "sqlite:///" + os.path.join(work, "nova.sqlite"), group="database")
        ans["conf"] = {
            "report_in_placement": conf.pci.report_in_placement,
            "pci_in_placement": conf.filter_scheduler.pci_in_placement,
            "device_spec": list(conf.pci.device_spec),
            "enabled_mdev_types": list(conf.devices.enabled_mdev_types),
        }
        stage = "alias"
        pci_request.get_alias_from_config.cache_clear()   # nova-api reads it once per process; --serve re-reads
        ans["conf"]["aliases"] = sorted(pci_request.get_alias_from_config())

        stage = "libvirt"
        nodedevs = NodeDevices()
        host = libvirt_host.Host.__new__(libvirt_host.Host)
        pci_devs = [d for d in nodedevs.devices.values() if "pci" in d.listCaps()]
        # the loop of LibvirtDriver._get_pci_passthrough_devices (no net or vDPA node devices here)
        infos = [host._get_pcidev_info(d.name(), d, [], [], pci_devs) for d in pci_devs]
        ans["pci_devices"] = [dict((k, i.get(k)) for k in ("address", "vendor_id", "product_id", "dev_type",
                                                           "parent_addr", "numa_node")) for i in infos]
        # the driver's vGPU state as its __init__ sets it up from the config (no connection is opened)
        drv = libvirt_driver.LibvirtDriver.__new__(libvirt_driver.LibvirtDriver)
        drv.pgpu_type_mapping = libvirt_driver.collections.defaultdict(str)
        drv.mdev_class_mapping = libvirt_driver.collections.defaultdict(lambda: libvirt_driver.orc.VGPU)
        drv.mdev_classes = set()
        drv.mdev_type_max_mapping = libvirt_driver.collections.defaultdict(str)
        drv.pgpu_type_default = None
        drv.virtual_mdevs = set()
        drv._host = nodedevs
        stage = "mdev-config"
        drv.supported_vgpu_types = drv._get_supported_vgpu_types()

        stage = "pci-tracker"
        if not _STATE.get("db"):
            migration.db_sync()
            _STATE["db"] = True
        ctx = nova_context.get_admin_context()
        tracker = pci_manager.PciDevTracker(ctx, objects.ComputeNode(id=1, numa_topology=None))
        tracker.update_devices_from_hypervisor_resources(json.dumps(infos))
        ans["assignable"] = sorted(d.address for d in tracker.pci_devs)

        stage = "provider-tree"
        tree = provider_tree.ProviderTree()
        nodename = req["nodename"]
        tree.new_root(nodename, "00000000-0000-4000-8000-000000000001")
        for i, p in enumerate(req.get("providers") or []):
            u = p.get("uuid") or "00000000-0000-4000-8000-%012d" % (i + 2)
            tree.new_child(p["name"], p.get("parent") or nodename, uuid=u)
            if p.get("inventory"):
                tree.update_inventory(p["name"], p["inventory"])
            tree.update_traits(p["name"], p.get("traits") or [])
        stage = "pci-placement"
        allocations = req.get("allocations") or {}
        ans["allocations_changed"] = ppt.update_provider_tree_for_pci(tree, nodename, tracker, allocations, [])
        ans["allocations"] = allocations
        stage = "vgpu-placement"
        drv._update_provider_tree_for_vgpu(tree, nodename)
        ans["providers"] = _tree_out(tree)

        if req.get("api_conf") is not None:
            # the API/scheduler side: a flavor asking for one device of each alias, as nova-api builds its PCI
            # requests and the scheduler its Placement request groups (RequestSpec)
            stage = "api-config"
            path = os.path.join(work, "nova-api.conf")
            with open(path, "w") as f:
                f.write(req["api_conf"])
            conf([], project="nova", default_config_files=[path])
            ans["api"] = {"pci_in_placement": conf.filter_scheduler.pci_in_placement, "groups": {}}
            pci_request.get_alias_from_config.cache_clear()
            stage = "api-request"
            for name in sorted(pci_request.get_alias_from_config()):
                flavor = objects.Flavor(extra_specs={"pci_passthrough:alias": "%s:1" % name})
                spec = objects.RequestSpec(pci_requests=pci_request.get_pci_requests_from_flavor(flavor),
                                           requested_resources=[])
                spec.generate_request_groups_from_pci_requests()
                ans["api"]["groups"][name] = [{"resources": g.resources, "required_traits": sorted(g.required_traits)}
                                              for g in spec.requested_resources]
    except Exception as e:  # the answer says what Nova refused, where
        ans["error"] = {"type": type(e).__name__, "message": str(e), "stage": stage,
                        "traceback": traceback.format_exc()}
    return ans


def handle(req):
    """One request; with ``sysfs``, that tree's sys/ is bind-mounted on /sys for its duration."""
    sysfs = req.pop("sysfs", None)
    if not sysfs:
        return oracle(req)
    mounted = subprocess.run(["mount", "--bind", os.path.join(sysfs, "sys"), SYS], capture_output=True, text=True,
                             check=False)
    if mounted.returncode != 0:
        return {"error": {"type": "MountError", "message": mounted.stderr.strip(), "stage": "sysfs",
                          "traceback": ""}}
    try:
        return oracle(req)
    finally:
        subprocess.run(["umount", SYS], check=False)


def main(argv):
    """``nova_oracle.py``: one JSON request on stdin, one answer. ``nova_oracle.py --serve``: one request per
    line, one answer per line, until stdin ends (Nova is imported once)."""
    if os.environ.get("NOVA_ORACLE_IN_NS") != "1":
        # Nova reads /sys itself: give it the simulated host's, in a mount namespace of its own
        env = dict(os.environ, NOVA_ORACLE_IN_NS="1")
        return subprocess.call(["unshare", "--mount", "--propagation", "private", sys.executable,
                                os.path.abspath(__file__)] + argv, env=env)
    if argv == ["--serve"]:
        for line in sys.stdin:
            if line.strip():
                sys.stdout.write(json.dumps(handle(json.loads(line)), sort_keys=True, default=str) + "\n")
                sys.stdout.flush()
        return 0
    json.dump(handle(json.load(sys.stdin)), sys.stdout, sort_keys=True, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
