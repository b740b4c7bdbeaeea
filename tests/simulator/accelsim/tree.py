"""Show a host state as the files, directories and links a Linux kernel shows.

``build(host)`` returns a ``Tree``: a flat map of root-relative paths to nodes. ``render.py`` writes it
to disk; ``fuse.py`` serves it. Both therefore show the same bytes. Writable attributes carry a handler
tuple that ``dispatch_write`` routes to the kernel model.
"""

import hashlib
import os
import posixpath
import shutil
import sys

from . import mig
from .config import config_header
from .kernel import domain_hostdevs
from .model import cpulist_to_mask, parse_bdf

RO, RW, WO = 0o444, 0o644, 0o200
TOOLS = {"usr/bin/fpgaconf": "fpgaconf", "usr/bin/xbmgmt": "xbmgmt", "usr/bin/nvidia-smi": "nvidia-smi",
         "usr/bin/mdevctl": "mdevctl", "usr/lib/nvidia/sriov-manage": "sriov-manage", "usr/sbin/ip": "ip"}
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Node(object):
    __slots__ = ("kind", "data", "mode", "handler")

    def __init__(self, kind, data=None, mode=0o755, handler=None):
        self.kind = kind  # "d", "f" or "l"
        self.data = data
        self.mode = mode
        self.handler = handler


class Tree(object):
    """Flat map of root-relative paths to nodes, with a children index.

    Every node is added on behalf of an *owner* (``self.owner`` while it is added): a PCI function's part
    (``"fn:<BDF>"``: its directory, links, mdevs, its share of its IOMMU group), the in-use part
    (``"inuse"``) or the static rest (``"*"``). ``drop(owner)`` removes what an owner added (nodes that
    another owner also added stay; directories that nobody named and that became empty go), so
    ``update`` can rebuild only the parts that a state change touched."""

    def __init__(self):
        self.nodes = {"": Node("d")}
        self.children = {"": set()}
        self.owner = "*"
        self.refs = {}    # path -> set of owners that added it (leaves and explicitly named directories)
        self.owned = {}   # owner -> set of paths it added

    def _mkdirs(self, path):
        if path in self.nodes:
            return
        parent, _sep, name = path.rpartition("/")
        if parent:
            self._mkdirs(parent)
        self.nodes[path] = Node("d")
        self.children[path] = set()
        self.children[parent].add(name)

    def _claim(self, path):
        refs = self.refs.get(path)
        if refs is None:
            self.refs[path] = {self.owner}
        else:
            refs.add(self.owner)
        owned = self.owned.get(self.owner)
        if owned is None:
            self.owned[self.owner] = {path}
        else:
            owned.add(path)

    def _add(self, path, node):
        parent, _sep, name = path.rpartition("/")
        if parent:
            self._mkdirs(parent)
        self.nodes[path] = node
        self.children[parent].add(name)
        self._claim(path)

    def dir(self, path):
        self._mkdirs(path)
        self._claim(path)

    def file(self, path, content, mode=RO, handler=None):
        if isinstance(content, str):
            content = content.encode("utf-8")
        self._add(path, Node("f", content, mode, handler))

    def attr(self, path, value, mode=RO, handler=None):
        self.file(path, "%s\n" % (value,), mode, handler)

    def link(self, path, target):
        """A symlink at ``path`` to root-relative ``target``, stored relative as the kernel does."""
        rel = posixpath.relpath(target, posixpath.dirname(path) or ".")
        self._add(path, Node("l", rel, 0o777))

    def abslink(self, path, target):
        self._add(path, Node("l", target, 0o777))

    def get(self, path):
        return self.nodes.get(path.strip("/"))

    def listdir(self, path):
        return sorted(self.children.get(path.strip("/"), ()))

    def drop(self, owner):
        """Remove what ``owner`` added (see the class docstring)."""
        paths = self.owned.pop(owner, ())
        for path in sorted(paths, key=lambda p: p.count("/"), reverse=True):
            refs = self.refs.get(path)
            if refs is not None:
                refs.discard(owner)
                if refs:
                    continue
                del self.refs[path]
            node = self.nodes.get(path)
            if node is None or (node.kind == "d" and self.children.get(path)):
                continue
            self._remove(path)

    def _remove(self, path):
        while path:
            parent, _sep, name = path.rpartition("/")
            del self.nodes[path]
            self.children.pop(path, None)
            self.children[parent].discard(name)
            if self.children[parent] or parent in self.refs or not parent:
                return
            path = parent


def devpath(host, bdf):
    chain = [bdf]
    parent = host.static(bdf)["parent"]
    while parent:
        chain.insert(0, parent)
        parent = host.static(parent)["parent"]
    dom, bus = parse_bdf(chain[0])[:2]
    return "sys/devices/pci%04x:%02x/%s" % (dom, bus, "/".join(chain))


def _bridge_buses(host, bdf):
    buses = []
    for other in host.bdfs():
        p = host.static(other)["parent"]
        while p:
            if p == bdf:
                buses.append(parse_bdf(other)[1])
                break
            p = host.static(p)["parent"]
    own = parse_bdf(bdf)[1]
    return (own, min(buses), max(buses)) if buses else (own, 0, 0)


def build(host):
    t = Tree()
    for d in ("sys/bus/pci/devices", "sys/bus/pci/drivers", "sys/kernel/iommu_groups", "sys/class/net", "sys/class/mdev_bus",
              "sys/bus/mdev/devices", "dev/vfio", "proc", "run/libvirt/qemu"):
        t.dir(d)
    t.attr("sys/bus/pci/drivers_autoprobe", 1, RW, ("noop",))
    t.file("sys/bus/pci/drivers_probe", b"", WO, ("probe",))
    t.file("sys/bus/pci/rescan", b"", WO, ("noop",))
    for drv in host.known_drivers():
        base = "sys/bus/pci/drivers/" + drv
        t.dir(base)
        t.file(base + "/bind", b"", WO, ("bind", drv))
        t.file(base + "/unbind", b"", WO, ("unbind", drv))
        t.file(base + "/new_id", b"", WO, ("noop",))
        t.file(base + "/remove_id", b"", WO, ("noop",))
        t.file(base + "/uevent", b"", WO, ("noop",))
    t.file("dev/vfio/vfio", b"", 0o666)
    t.attr("proc/sys/kernel/hostname", host.lab["hostname"], RW, ("noop",))
    _tools(t)
    mig.render(t, host)
    ctx = _Context(host)
    for bdf in host.bdfs():
        _function_part(t, host, bdf, ctx)
    t.owner = "inuse"
    _in_use(t, host)
    t.owner = "*"
    return t


class _Context(object):
    """What the per-function parts need to know about the whole host (computed once per build/update)."""

    def __init__(self, host):
        self.slots = {}
        for bdf in host.bdfs():
            self.slots.setdefault(bdf[:-2], []).append(bdf)
        self.vfio_drivers = {"vfio-pci"}
        for f in host.lab["functions"]:
            if f.get("vgpu"):
                self.vfio_drivers.add(f["sriov"]["vf_driver"])
        self.mdevs_of = {}
        for uuid in sorted(host.state["mdevs"]):
            self.mdevs_of.setdefault(host.state["mdevs"][uuid]["parent"], []).append(uuid)


def _function_part(t, host, bdf, ctx):
    """Everything the function ``bdf`` shows: its directory and links, its mdevs, its IOMMU group share."""
    t.owner = "fn:" + bdf
    groups = {}
    _function(t, host, bdf, groups, multifunction=len(ctx.slots[bdf[:-2]]) > 1)
    for uuid in ctx.mdevs_of.get(bdf, ()):
        _mdev(t, host, uuid, groups)
    for group, members in sorted(groups.items()):
        base = "sys/kernel/iommu_groups/%d" % group
        t.attr(base + "/type", "DMA-FQ")
        t.file(base + "/reserved_regions", "0x00000000fee00000 0x00000000feefffff msi\n")
        for name, path in members:
            t.link(base + "/devices/" + name, path)
            if name in host.state["mdevs"] or host.dyn(name)["driver"] in ctx.vfio_drivers:
                t.file("dev/vfio/%d" % group, b"", 0o600)
    t.owner = "*"


# State keys whose change means a full rebuild (anything else is handled part by part).
_PART_KEYS = ("functions", "mdevs", "vgpu", "vfinfo", "fpga", "alveo", "domains", "processes")
_IGNORED_KEYS = ("next_pid", "next_group", "persist")


def update(tree, old, new):
    """Bring ``tree`` (built for Host ``old``) up to Host ``new`` by rebuilding only the parts of the
    functions whose state changed (plus those whose view depends on them: the same slot and the upstream
    bridges when functions come or go, the other VFs of a vGPU card, the mdev parent, the Alveo user
    function). Returns the tree (a new full build when the lab or the boot changed)."""
    os_, ns = old.state, new.state
    keys = set(os_) | set(ns)
    for key in keys:
        if key in _PART_KEYS or key in _IGNORED_KEYS:
            continue
        if os_.get(key) != ns.get(key):
            return build(new)
    touched = set()
    inuse = os_["domains"] != ns["domains"] or os_["processes"] != ns["processes"]
    of, nf = os_["functions"], ns["functions"]
    came_or_went = set(of) ^ set(nf)
    for bdf in set(of) | set(nf):
        if of.get(bdf) != nf.get(bdf):
            touched.add(bdf)
    for key in ("mdevs",):
        om, nm = os_[key], ns[key]
        for uuid in set(om) | set(nm):
            if om.get(uuid) != nm.get(uuid):
                touched.update(m["parent"] for m in (om.get(uuid), nm.get(uuid)) if m)
    ov, nv = os_["vgpu"], ns["vgpu"]
    for vf in set(ov) | set(nv):
        if ov.get(vf) != nv.get(vf):
            touched.add(vf)
    ovi, nvi = os_.get("vfinfo", {}), ns.get("vfinfo", {})
    for pf in set(ovi) | set(nvi):
        if ovi.get(pf) != nvi.get(pf):
            for h in (old, new):
                if h.exists(pf):
                    touched.update(h.vfs(pf))
    for key in ("fpga", "alveo"):
        for bdf in set(os_[key]) | set(ns[key]):
            if os_[key].get(bdf) != ns[key].get(bdf):
                touched.add(bdf)
                if key == "fpga":  # a released port is rendered on the VF
                    touched.update(v for h in (old, new) if h.exists(bdf) for v in h.vfs(bdf))
                for h in (old, new):
                    user = h.alveo_user_of(bdf) if key == "alveo" else None
                    if user:
                        touched.add(user)
    if not touched and not inuse:
        return tree
    for bdf in list(touched):
        for h in (old, new):
            if not h.exists(bdf):
                continue
            st = h.static(bdf)
            pf = st["physfn"] if st.get("is_vf") else (bdf if st.get("sriov") else None)
            if pf and h.static(pf).get("vgpu"):
                touched.add(pf)
                touched.update(h.vfs(pf))
    for bdf in came_or_went:
        for h in (old, new):
            if not h.exists(bdf):
                continue
            touched.update(b for b in h.bdfs() if b[:-2] == bdf[:-2])
            parent = h.static(bdf)["parent"]
            while parent:
                touched.add(parent)
                parent = h.static(parent)["parent"]
    for bdf in touched:
        tree.drop("fn:" + bdf)
    ctx = _Context(new)
    for bdf in sorted(touched):
        if new.exists(bdf):
            _function_part(tree, new, bdf, ctx)
    if inuse:
        tree.drop("inuse")
        tree.owner = "inuse"
        _in_use(tree, new)
        tree.owner = "*"
    return tree


def _function(t, host, bdf, groups, multifunction):
    st = host.static(bdf)
    dyn = host.dyn(bdf)
    p = devpath(host, bdf)
    t.dir(p)
    t.link("sys/bus/pci/devices/" + bdf, p)
    bridge = (st["class"] >> 8) == 0x0604
    cfg = config_header(st, _bridge_buses(host, bdf) if bridge else None, multifunction)
    t.file(p + "/config", cfg, RW, ("noop",))
    t.attr(p + "/vendor", "0x%04x" % st["vendor"])
    t.attr(p + "/device", "0x%04x" % st["device"])
    t.attr(p + "/subsystem_vendor", "0x%04x" % st["subsystem_vendor"])
    t.attr(p + "/subsystem_device", "0x%04x" % st["subsystem_device"])
    t.attr(p + "/class", "0x%06x" % st["class"])
    t.attr(p + "/revision", "0x%02x" % st["revision"])
    t.attr(p + "/irq", st["irq"])
    t.attr(p + "/numa_node", st["numa_node"])
    t.attr(p + "/local_cpulist", st["local_cpulist"])
    t.attr(p + "/local_cpus", cpulist_to_mask(st["local_cpulist"], host.lab["cpus"]))
    t.attr(p + "/enable", 1 if dyn["driver"] else 0)
    t.file(p + "/resource", "0x0000000000000000 0x0000000000000000 0x0000000000000000\n" * (17 if bridge else 13))
    modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
        st["vendor"], st["device"], st["subsystem_vendor"], st["subsystem_device"],
        st["class"] >> 16, (st["class"] >> 8) & 0xFF, st["class"] & 0xFF)
    t.attr(p + "/modalias", modalias)
    uevent = ""
    if dyn["driver"]:
        uevent += "DRIVER=%s\n" % dyn["driver"]
    uevent += "PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\nMODALIAS=%s\n" % (
        st["class"], st["vendor"], st["device"], st["subsystem_vendor"], st["subsystem_device"], bdf, modalias)
    t.file(p + "/uevent", uevent, RW, ("noop",))
    t.attr(p + "/driver_override", dyn["driver_override"] or "(null)", RW, ("override", bdf))
    t.link(p + "/subsystem", "sys/bus/pci")
    if st.get("link"):
        link = st["link"]
        t.attr(p + "/current_link_speed", link["speed"])
        t.attr(p + "/current_link_width", link["width"])
        t.attr(p + "/max_link_speed", link["max_speed"])
        t.attr(p + "/max_link_width", link["max_width"])
    if dyn["driver"]:
        t.link(p + "/driver", "sys/bus/pci/drivers/" + dyn["driver"])
        t.link("sys/bus/pci/drivers/%s/%s" % (dyn["driver"], bdf), p)
    group = dyn["iommu_group"]
    t.link(p + "/iommu_group", "sys/kernel/iommu_groups/%d" % group)
    groups.setdefault(group, []).append((bdf, p))
    sriov = st.get("sriov")
    if sriov:
        t.attr(p + "/sriov_totalvfs", sriov["totalvfs"])
        t.attr(p + "/sriov_numvfs", dyn["numvfs"], 0o664, ("numvfs", bdf))
        t.attr(p + "/sriov_offset", sriov["offset"])
        t.attr(p + "/sriov_stride", sriov["stride"])
        t.attr(p + "/sriov_vf_device", "%x" % sriov["vf_device"])
        t.attr(p + "/sriov_drivers_autoprobe", dyn["autoprobe"], 0o664, ("autoprobe", bdf))
        for i, vf in enumerate(host.vfs(bdf)):
            t.link(p + "/virtfn%d" % i, devpath(host, vf))
    if st.get("is_vf"):
        t.link(p + "/physfn", devpath(host, st["physfn"]))
    _net(t, host, bdf, st, dyn, p)
    mdev = host.mdev_parent(bdf)
    if mdev:
        t.link("sys/class/mdev_bus/" + bdf, p)
        for mt in mdev["types"]:
            tp = "%s/mdev_supported_types/%s" % (p, mt["id"])
            t.attr(tp + "/name", mt["name"])
            t.attr(tp + "/description", mt["description"])
            t.attr(tp + "/device_api", mt["device_api"])
            t.attr(tp + "/available_instances", host.available_instances(bdf, mt["id"]))
            t.file(tp + "/create", b"", WO, ("mdev_create", bdf, mt["id"]))
            t.dir(tp + "/devices")
    if host.vgpu_config(bdf):
        lines = ["ID    : vGPU Name"] + ["%-6d: %s" % (x["id"], x["name"]) for x in host.creatable_vgpu_types(bdf)]
        t.file(p + "/nvidia/creatable_vgpu_types", "\n".join(lines) + "\n")
        t.attr(p + "/nvidia/current_vgpu_type", host.state["vgpu"].get(bdf, 0), RW, ("vgpu", bdf))
    if st.get("i915_iov") and dyn["driver"] == st["driver"]:
        _i915_iov(t, st, p)
    if st.get("fpga") and dyn["driver"] == st["driver"]:
        _fpga(t, host, bdf, st, p)
    if st.get("is_vf") and host.static(st["physfn"]).get("fpga") and host.fpga_port_vf(st["physfn"]) == bdf:
        _fpga_vf_port(t, host, st["physfn"], p)
    if st.get("alveo") and dyn["driver"] == st["driver"]:
        a = st["alveo"]
        if a["role"] == "mgmt":
            cur = host.state["alveo"][bdf]
            t.attr(p + "/interface_uuids", cur["interface_uuid"].replace("-", ""))
            t.attr(p + "/logic_uuids", cur["logic_uuid"].replace("-", ""))
            t.attr(p + "/board_name", a.get("board", ""))
        else:
            cur = host.state["alveo"].get(a.get("mgmt"), {})
            t.attr(p + "/xclbinuuid", cur.get("xclbin_uuid", "").replace("-", ""))


I915_VF_ATTRS = ("contexts_quota", "doorbells_quota", "exec_quantum_ms", "ggtt_quota", "lmem_quota", "preempt_timeout_us")


def _i915_iov(t, st, p):
    """Intel's i915 SR-IOV PF: drm/cardN/prelim_iov/pf/auto_provisioning and vfK/<gt>/<quota> for every VF the
    card can have (K from 1; 0 is "not set": the fair share of auto provisioning). Shown, not writable here."""
    v = st["i915_iov"]
    card = "%s/drm/card%d" % (p, v["card"])
    t.link("sys/class/drm/card%d" % v["card"], card)
    base = card + "/prelim_iov"
    t.attr(base + "/pf/auto_provisioning", v["auto_provisioning"])
    for k in range(1, st["sriov"]["totalvfs"] + 1):
        set_ = v["vfs"].get(str(k), {})
        for gt in v["tiles"]:
            for name in I915_VF_ATTRS:
                t.attr("%s/vf%d/%s/%s" % (base, k, gt, name), set_.get(gt, {}).get(name, 0))


def _net(t, host, bdf, st, dyn, p):
    for name, mac in host.nets(bdf):
        np_ = "%s/net/%s" % (p, name)
        t.attr(np_ + "/address", mac)
        t.attr(np_ + "/addr_len", 6)
        t.attr(np_ + "/mtu", 1500)
        t.attr(np_ + "/operstate", "up")
        t.link(np_ + "/device", p)
        t.link("sys/class/net/" + name, np_)


def _fpga(t, host, bdf, st, p):
    g = st["fpga"]
    cur = host.state["fpga"][bdf]
    n = g["index"]
    if g["layout"] == "opae":
        base = "%s/fpga/intel-fpga-dev.%d" % (p, n)
        fme = "%s/intel-fpga-fme.%d" % (base, n)
        port = "%s/intel-fpga-port.%d" % (base, n)
        t.link("sys/class/fpga/intel-fpga-dev.%d" % n, base)
        t.link(base + "/device", p)  # a class device's parent, as Cyborg's intel driver follows it
        t.attr(fme + "/pr/interface_id", cur["interface_id"])
        t.file("dev/intel-fpga-fme.%d" % n, b"", 0o600)
    else:
        static_region, pr_region = 2 * n, 2 * n + 1
        base = "%s/fpga_region/region%d" % (p, static_region)
        fme = "%s/dfl-fme.%d" % (base, n)
        port = "%s/dfl-port.%d" % (base, n)
        pr = "%s/dfl-fme-region.%d/fpga_region/region%d" % (fme, pr_region, pr_region)
        mgr = "%s/dfl-fme-mgr.%d/fpga_manager/fpga%d" % (fme, n, n)
        t.link("sys/class/fpga_region/region%d" % static_region, base)
        t.link("sys/class/fpga_region/region%d" % pr_region, pr)
        t.link("sys/class/fpga_manager/fpga%d" % n, mgr)
        t.link("sys/bus/dfl/devices/dfl-fme.%d" % n, fme)
        if host.fpga_port_on_pf(bdf):
            t.link("sys/bus/dfl/devices/dfl-port.%d" % n, port)
        t.attr(pr + "/compat_id", cur["interface_id"])
        t.attr(mgr + "/name", "DFL FME FPGA Manager")
        t.attr(mgr + "/state", "operating")
        t.attr(mgr + "/status", "")
        t.file("dev/dfl-fme.%d" % n, b"", 0o600)
    t.attr(fme + "/bitstream_id", g["bitstream_id"])
    t.attr(fme + "/bitstream_metadata", g["bitstream_metadata"])
    t.attr(fme + "/ports_num", 1)
    t.attr(fme + "/socket_id", g["socket_id"])
    if not host.fpga_port_on_pf(bdf):
        return  # released: the port's device is gone from the PF (the VF shows it)
    t.attr(port + "/id", 0)
    t.file("dev/%s-port.%d" % ("intel-fpga" if g["layout"] == "opae" else "dfl", n), b"", 0o600)
    t.attr(port + "/afu_id", cur["afu_id"])


def _fpga_vf_port(t, host, pf, p):
    """The port of a VF bound to the FPGA driver: its feature list holds the port only (no FME). OPAE:
    fpga/intel-fpga-dev.M/intel-fpga-port.M and sys/class/fpga/intel-fpga-dev.M (what Cyborg's Intel driver
    globs, with device/physfn); DFL: fpga_region/regionK/dfl-port.M."""
    g = host.static(pf)["fpga"]
    cur = host.state["fpga"][pf]
    m = host.fpga_vf_index(pf)
    if g["layout"] == "opae":
        base = "%s/fpga/intel-fpga-dev.%d" % (p, m)
        port = "%s/intel-fpga-port.%d" % (base, m)
        t.link("sys/class/fpga/intel-fpga-dev.%d" % m, base)
        t.link(base + "/device", p)
        t.file("dev/intel-fpga-port.%d" % m, b"", 0o600)
    else:
        region = 2 * m
        base = "%s/fpga_region/region%d" % (p, region)
        port = "%s/dfl-port.%d" % (base, m)
        t.link("sys/class/fpga_region/region%d" % region, base)
        t.link("sys/bus/dfl/devices/dfl-port.%d" % m, port)
        t.file("dev/dfl-port.%d" % m, b"", 0o600)
    t.attr(port + "/id", 0)
    t.attr(port + "/afu_id", cur["afu_id"])


def _mdev(t, host, uuid, groups):
    m = host.state["mdevs"][uuid]
    parent = devpath(host, m["parent"])
    p = "%s/%s" % (parent, uuid)
    drv = host.mdev_parent(m["parent"])["driver"]
    t.link(p + "/mdev_type", "%s/mdev_supported_types/%s" % (parent, m["type"]))
    t.link("%s/mdev_supported_types/%s/devices/%s" % (parent, m["type"], uuid), p)
    t.file(p + "/remove", b"", WO, ("mdev_remove", uuid))
    t.link(p + "/subsystem", "sys/bus/mdev")
    t.link(p + "/driver", "sys/bus/mdev/drivers/" + drv)
    t.link("sys/bus/mdev/drivers/%s/%s" % (drv, uuid), p)
    t.link(p + "/iommu_group", "sys/kernel/iommu_groups/%d" % m["iommu_group"])
    t.file(p + "/uevent", "DRIVER=%s\nMDEV_TYPE=%s\n" % (drv, m["type"]), RW, ("noop",))
    t.link("sys/bus/mdev/devices/" + uuid, p)
    groups.setdefault(m["iommu_group"], []).append((uuid, p))


def _in_use(t, host):
    for name, xml in sorted(host.state["domains"].items()):
        t.file("run/libvirt/qemu/%s.xml" % name, xml, 0o600)
        t.attr("run/libvirt/qemu/%s.pid" % name, _domain_pid(name, xml), 0o644)
    for pid, proc in sorted(host.state["processes"].items()):
        base = "proc/%s" % pid
        t.attr(base + "/comm", proc["comm"])
        t.file(base + "/cmdline", proc["comm"].encode() + b"\0")
        t.dir(base + "/fd")
        for fd, target in sorted(proc["fds"].items()):
            t.abslink("%s/fd/%s" % (base, fd), target)


def _domain_pid(name, xml):
    pci, mdevs = domain_hostdevs(xml)
    return 30000 + int(hashlib.sha256((name + repr(sorted(pci | mdevs))).encode()).hexdigest()[:3], 16)


# The name on PATH of the interpreter the tool fakes run on, where there is one (tools/gates.sh links the platform's
# Python there, built for speed: every tool run is a process of its own, thousands in a gate run); else this one.
TOOL_PYTHON = "accelsim-tool-python"


def tool_python():
    return shutil.which(TOOL_PYTHON) or sys.executable


def wrapper_script(tool, depth):
    """A shell wrapper that runs a tool fake against the host root it lives in. The fake needs only the standard
    library and this package: its interpreter starts without site-packages (-S)."""
    up = "/".join([".."] * depth)
    return ("#!/bin/sh\n# accelsim fake of %s: acts on the simulated host this file lives in\n"
            "case $0 in */*) here=${0%%/*} ;; *) here=. ;; esac\n"
            "root=$(cd \"$here/%s\" && pwd)\n"
            "PYTHONPATH=\"%s${PYTHONPATH:+:$PYTHONPATH}\" exec \"%s\" -S -m accelsim tool --root \"$root\" %s \"$@\"\n"
            % (tool, up, PACKAGE_PARENT, tool_python(), tool))


def _tools(t):
    for path, tool in TOOLS.items():
        t.file(path, wrapper_script(tool, path.count("/")), 0o755)


def dispatch_write(host, handler, data):
    """Apply a write to the attribute with ``handler``; raises OSError with the kernel's errno."""
    op = handler[0]
    if op == "noop":
        return
    if op == "numvfs":
        host.set_numvfs(handler[1], data)
    elif op == "autoprobe":
        host.set_autoprobe(handler[1], data)
    elif op == "override":
        host.set_driver_override(handler[1], data)
    elif op == "bind":
        host.bind(handler[1], data)
    elif op == "unbind":
        host.unbind(handler[1], data)
    elif op == "probe":
        host.drivers_probe(data)
    elif op == "mdev_create":
        host.mdev_create(handler[1], handler[2], data)
    elif op == "mdev_remove":
        host.mdev_remove(handler[1], data)
    elif op == "vgpu":
        host.set_vgpu_type(handler[1], data)
    else:
        raise ValueError("unknown handler %r" % (handler,))
