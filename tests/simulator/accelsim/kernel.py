"""The simulated kernel: the dynamic state of one lab host and the semantics of every write.

``Host`` wraps a JSON-serialisable state dict. Every method that changes state either succeeds or raises
``OSError`` carrying the errno the real kernel returns for the same write, so the FUSE layer can hand the
errno straight back from ``write()``. Nothing here touches the filesystem; see ``store.py`` for
persistence and ``tree.py`` for how the state is shown as sysfs.
"""

import copy
import errno
import os
import re

from . import mig
from .model import UUID_RE, format_bdf, parse_bdf, vf_bdf

ALWAYS_DRIVERS = ("vfio-pci", "pci-stub")
ZERO_MAC = "00:00:00:00:00:00"
VF_DEFAULTS = {"mac": ZERO_MAC, "vlan": 0, "qos": 0, "trust": False, "spoofchk": True}
FIRST_FAKE_PID = 40000


def seeded_mac(seed):
    """A stable, locally administered unicast MAC derived from ``seed``."""
    import hashlib  # pylint: disable=import-outside-toplevel  # here, not above: see domain_xml
    h = hashlib.sha256(seed.encode()).digest()
    return "%02x:%02x:%02x:%02x:%02x:%02x" % ((h[0] & 0xFC) | 0x02, h[1], h[2], h[3], h[4], h[5])


def _err(code, msg):
    return OSError(code, "%s: %s" % (os.strerror(code), msg))


def _parse_uint(text, bits=16):
    """Parse like the kernel's kstrtou16/kstrtouint with base 0 (one trailing newline allowed)."""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    if text.endswith("\n"):
        text = text[:-1]
    if not re.match(r"^(0x[0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$", text):
        raise _err(errno.EINVAL, "not a number: %r" % text)
    value = int(text, 0)
    if value >= 1 << bits:
        raise _err(errno.ERANGE, "number too large: %r" % text)
    return value


def _strip(text):
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return text.strip()


def new_state(lab):
    """The state of a freshly booted host for ``lab``."""
    state = {
        "version": 1,
        "lab": lab,
        "boot": 0,
        "persist": {"fpga_flash": {}, "alveo_flash": {}},
        "mode": None,
        "root": None,
    }
    Host(state).boot()
    return state


class Host(object):
    """Operations on one host's state dict (mutated in place)."""

    def __init__(self, state):
        self.state = state
        self.lab = state["lab"]
        self._static = {f["bdf"]: f for f in self.lab["functions"]}

    # -- boot / reboot -------------------------------------------------------------------------
    def boot(self):
        """Power on: every transient thing is rebuilt from the lab description plus persistent state."""
        st = self.state
        st["boot"] = st.get("boot", 0) + 1
        st["functions"] = {}
        for f in self.lab["functions"]:
            st["functions"][f["bdf"]] = {"driver": f["driver"], "driver_override": None, "numvfs": 0,
                                         "autoprobe": 1, "iommu_group": f["iommu_group"]}
        st["mdevs"] = {}
        st["vgpu"] = {}
        st["vfinfo"] = {}
        st["fpga"] = {}
        for f in self.lab["functions"]:
            if f.get("fpga"):
                flash = st["persist"]["fpga_flash"].get(f["bdf"], {})
                st["fpga"][f["bdf"]] = {"interface_id": flash.get("interface_id", f["fpga"]["interface_id"]),
                                        "afu_id": flash.get("afu_id", f["fpga"]["afu_id"]),
                                        "released": f["fpga"]["port_released"]}
        st["alveo"] = {}
        for f in self.lab["functions"]:
            if f.get("alveo") and f["alveo"]["role"] == "mgmt":
                flash = st["persist"]["alveo_flash"].get(f["bdf"], {})
                st["alveo"][f["bdf"]] = {"shell": flash.get("shell", f["alveo"]["shell"]),
                                         "interface_uuid": flash.get("interface_uuid", f["alveo"]["interface_uuid"]),
                                         "logic_uuid": flash.get("logic_uuid", f["alveo"]["logic_uuid"]),
                                         "xclbin_uuid": "00000000-0000-0000-0000-000000000000"}
        st["domains"] = {}
        st["processes"] = {}
        st["next_pid"] = FIRST_FAKE_PID
        groups = [f["iommu_group"] for f in self.lab["functions"]]
        st["next_group"] = (max(groups) + 1) if groups else 0
        for f in self.lab["functions"]:
            if f.get("sriov") and f["sriov"]["boot_numvfs"] and f["driver"]:
                self._enable_vfs(f["bdf"], f["sriov"]["boot_numvfs"])
        mig.boot(self)
        if st["boot"] == 1:
            # The lab's initial transient state: what was running when the lab was captured.
            for m in self.lab["mdevs"]:
                self.mdev_create(m["parent"], m["type"], m["uuid"])
            for d in self.lab["domains"]:
                self.add_domain(d["name"], domain_xml(d["name"], d.get("hostdevs", [])))
            for p in self.lab["processes"]:
                self.add_process(p.get("comm", "qemu-kvm"), p["holds"])

    def reboot(self, mdevctl_definitions=()):
        """Reboot: transient state is lost, persistent state kept; ``mdevctl_definitions`` are
        (uuid, parent, type, auto) tuples from etc/mdevctl.d, the auto ones are started at boot."""
        self.boot()
        for uuid, parent, mtype, auto in mdevctl_definitions:
            if auto:
                try:
                    self.mdev_create(parent, mtype, uuid)
                except OSError:
                    pass  # as mdevctl's udev rule: a failed auto-start leaves the device down

    # -- functions -----------------------------------------------------------------------------
    def bdfs(self):
        return sorted(self.state["functions"], key=parse_bdf)

    def exists(self, bdf):
        return bdf in self.state["functions"]

    def dyn(self, bdf):
        try:
            return self.state["functions"][bdf]
        except KeyError:
            raise _err(errno.ENODEV, "no such device %s" % bdf) from None

    def static(self, bdf):
        """The static description of a function (a VF's is derived from its PF)."""
        if bdf in self._static:
            return self._static[bdf]
        d = self.dyn(bdf)
        pf = self._static[d["physfn"]]
        s = pf["sriov"]
        return {
            "bdf": bdf, "vendor": pf["vendor"], "device": s["vf_device"], "class": s["vf_class"],
            "revision": s["vf_revision"], "subsystem_vendor": pf["subsystem_vendor"],
            "subsystem_device": s.get("vf_subsystem_device", pf["subsystem_device"]),
            "driver": s["vf_driver"], "parent": pf["parent"], "numa_node": pf["numa_node"],
            "local_cpulist": pf["local_cpulist"], "iommu_group": d["iommu_group"], "irq": 0,
            "link": s["vf_link"], "net": [], "is_vf": True, "physfn": d["physfn"], "vf_index": d["vf_index"],
        }

    def known_drivers(self):
        names = set(ALWAYS_DRIVERS)
        for f in self.lab["functions"]:
            if f["driver"]:
                names.add(f["driver"])
            if f.get("sriov") and f["sriov"]["vf_driver"]:
                names.add(f["sriov"]["vf_driver"])
        return sorted(names)

    def native_driver(self, bdf):
        return self.static(bdf)["driver"]

    def vfs(self, pf):
        d = self.dyn(pf)
        s = self.static(pf).get("sriov") or {}
        return [vf_bdf(pf, s["offset"], s["stride"], i) for i in range(d["numvfs"])]

    def driver_of(self, bdf):
        return self.dyn(bdf)["driver"]

    # -- in use --------------------------------------------------------------------------------
    def add_domain(self, name, xml):
        self.state["domains"][name] = xml

    def remove_domain(self, name):
        self.state["domains"].pop(name, None)

    def add_process(self, comm, holds, pid=None):
        """A process holding ``holds`` (host paths such as /dev/vfio/12) open; returns its pid."""
        if pid is None:
            pid = self.state["next_pid"]
            self.state["next_pid"] = pid + 1
        self.state["processes"][str(pid)] = {"comm": comm, "fds": {str(10 + i): h for i, h in enumerate(holds)}}
        return pid

    def remove_process(self, pid):
        self.state["processes"].pop(str(pid), None)

    def group_of(self, unit):
        if unit in self.state["mdevs"]:
            return self.state["mdevs"][unit]["iommu_group"]
        return self.dyn(unit)["iommu_group"]

    def held_paths(self):
        paths = {}
        for pid, p in self.state["processes"].items():
            for target in p["fds"].values():
                paths.setdefault(target, pid)
        return paths

    def in_use(self, unit):
        """Why ``unit`` (a PCI address or an mdev uuid) is in use, or None."""
        for name, xml in sorted(self.state["domains"].items()):
            pci, mdevs = domain_hostdevs(xml)
            if unit in pci or unit in mdevs:
                return "assigned to running domain %s" % name
        try:
            group = self.group_of(unit)
        except OSError:
            return None
        holder = self.held_paths().get("/dev/vfio/%d" % group)
        if holder:
            return "/dev/vfio/%d held open by pid %s" % (group, holder)
        return None

    # -- PCI core writes -----------------------------------------------------------------------
    def set_numvfs(self, pf, data):
        s = self.static(pf).get("sriov")
        d = self.dyn(pf)
        if not s:
            raise _err(errno.EACCES, "%s has no SR-IOV capability" % pf)
        num = _parse_uint(data, 16)
        # sriov_numvfs_store (drivers/pci/iov.c), in its order: the range, then the current count (a no-op that
        # succeeds), then whether a driver is bound and has sriov_configure (ENOENT), then the driver's answer
        if num > s["totalvfs"]:
            raise _err(errno.ERANGE, "%s: %d exceeds sriov_totalvfs %d" % (pf, num, s["totalvfs"]))
        if num == d["numvfs"]:
            return
        if not d["driver"]:
            raise _err(errno.ENOENT, "%s: no driver bound to configure SR-IOV" % pf)
        native = d["driver"] == self.native_driver(pf)
        if not s["configurable"] and native:
            # the bound driver has no sriov_configure
            raise _err(errno.ENOENT, "%s: driver %s does not support SR-IOV configuration via sysfs" % (pf, d["driver"]))
        if s["configure_errno"] and native:
            # the driver's sriov_configure refuses (xe on a part it runs without SR-IOV: -ENODEV)
            raise _err(getattr(errno, s["configure_errno"]), "%s: %s refuses to enable VFs" % (pf, d["driver"]))
        if num == 0:
            for vf in self.vfs(pf):
                why = self.in_use(vf) or self._mdev_users(vf)
                if why:
                    raise _err(errno.EBUSY, "VF %s is in use (%s)" % (vf, why))
            for vf in self.vfs(pf):
                for uuid in [u for u, m in self.state["mdevs"].items() if m["parent"] == vf]:
                    del self.state["mdevs"][uuid]
                self.drop_vgpu(vf)
                del self.state["functions"][vf]
            self.state.get("vfinfo", {}).pop(pf, None)
            d["numvfs"] = 0
            return
        if d["numvfs"]:
            raise _err(errno.EBUSY, "%s: %d VFs already enabled; disable before enabling %d" % (pf, d["numvfs"], num))
        self._enable_vfs(pf, num)

    def _enable_vfs(self, pf, num):
        """pci_enable_sriov: VFs 0..num-1 appear (each in an IOMMU group of its own) and are probed when the PF's
        sriov_drivers_autoprobe is on."""
        s = self.static(pf)["sriov"]
        d = self.dyn(pf)
        for i in range(num):
            bdf = vf_bdf(pf, s["offset"], s["stride"], i)
            if bdf in self.state["functions"]:
                raise _err(errno.EBUSY, "%s: VF address %s is taken" % (pf, bdf))
        for i in range(num):
            bdf = vf_bdf(pf, s["offset"], s["stride"], i)
            group = self.state["next_group"]
            self.state["next_group"] = group + 1
            self.state["functions"][bdf] = {"driver": None, "driver_override": None, "numvfs": 0, "autoprobe": 0,
                                            "iommu_group": group, "physfn": pf, "vf_index": i}
            if d["autoprobe"]:
                self._probe(bdf)
        d["numvfs"] = num

    def _mdev_users(self, bdf):
        for uuid, m in self.state["mdevs"].items():
            if m["parent"] == bdf:
                why = self.in_use(uuid)
                if why:
                    return "mdev %s %s" % (uuid, why)
        return None

    def set_autoprobe(self, pf, data):
        self.dyn(pf)["autoprobe"] = 1 if _parse_uint(data, 1) else 0

    def set_driver_override(self, bdf, data):
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
        text = text.split("\n", 1)[0]
        if len(text) >= 4096:
            raise _err(errno.EINVAL, "driver_override too long")
        self.dyn(bdf)["driver_override"] = text or None

    def _matches(self, drv, bdf):
        override = self.dyn(bdf)["driver_override"]
        if override:
            return drv == override
        return drv == self.native_driver(bdf)

    def _probe(self, bdf):
        d = self.dyn(bdf)
        if d["driver"]:
            return
        for drv in self.known_drivers():
            if self._matches(drv, bdf):
                d["driver"] = drv
                return

    def unbind(self, drv, data):
        bdf = _strip(data)
        if not self.exists(bdf) or self.dyn(bdf)["driver"] != drv:
            raise _err(errno.ENODEV, "%s is not bound to %s" % (bdf, drv))
        why = self.in_use(bdf) or self._mdev_users(bdf)
        if why:
            raise _err(errno.EBUSY, "%s is in use (%s)" % (bdf, why))
        if self.dyn(bdf)["numvfs"]:
            raise _err(errno.EBUSY, "%s has VFs enabled" % bdf)
        for uuid in [u for u, m in self.state["mdevs"].items() if m["parent"] == bdf]:
            del self.state["mdevs"][uuid]
        self.drop_vgpu(bdf)
        self.dyn(bdf)["driver"] = None

    def bind(self, drv, data):
        bdf = _strip(data)
        if not self.exists(bdf) or self.dyn(bdf)["driver"] or not self._matches(drv, bdf):
            raise _err(errno.ENODEV, "%s cannot be bound to %s" % (bdf, drv))
        self.dyn(bdf)["driver"] = drv

    def drivers_probe(self, data):
        bdf = _strip(data)
        if not self.exists(bdf):
            raise _err(errno.ENODEV, "no such device %s" % bdf)
        self._probe(bdf)

    # -- network interfaces and VF administrative settings (what ip link set dev PF vf N ... changes) ---------
    def nets(self, bdf):
        """The network interfaces of a function: [(name, MAC)]; a NIC VF's netdev is <PF netdev>v<N> and
        carries the MAC the administrator set on the PF for it, if any."""
        st = self.static(bdf)
        d = self.dyn(bdf)
        if not d["driver"] or d["driver"] != st["driver"]:
            return []
        if st.get("is_vf"):
            pf = self.static(st["physfn"])
            if not pf.get("net"):
                return []
            admin = self.vf_info(st["physfn"], st["vf_index"])["mac"]
            mac = admin if admin != ZERO_MAC else seeded_mac(self.lab["hostname"] + bdf)
            return [("%sv%d" % (pf["net"][0]["name"], st["vf_index"]), mac)]
        return [(n["name"], n.get("mac") or seeded_mac(n["name"])) for n in st.get("net", [])]

    def netdevs(self):
        """{interface name: (PCI address, MAC)} of every network interface, in address order."""
        out = {}
        for bdf in self.bdfs():
            for name, mac in self.nets(bdf):
                out[name] = (bdf, mac)
        return out

    def vf_info(self, pf, index):
        """The administrative settings of VF ``index`` of ``pf`` (mac, vlan, qos, trust, spoofchk)."""
        cur = self.state.get("vfinfo", {}).get(pf, {}).get(str(index), {})
        return dict(VF_DEFAULTS, **cur)

    def set_vf(self, pf, index, key, value):
        """``ip link set dev <pf netdev> vf <index> <key> <value>`` as the PF driver sees it (ndo_set_vf_*)."""
        st = self.static(pf)
        if not st.get("sriov") or st.get("is_vf") or self.dyn(pf)["driver"] != st["driver"]:
            raise _err(errno.EOPNOTSUPP, "%s cannot configure VFs" % pf)
        if not 0 <= index < self.dyn(pf)["numvfs"]:
            raise _err(errno.EINVAL, "%s has no VF %d" % (pf, index))
        if key == "mac":
            value = str(value).lower()
            if not re.match(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$", value) or int(value[:2], 16) & 1:
                raise _err(errno.EINVAL, "invalid or multicast MAC %s" % value)
        elif key == "vlan":
            if not 0 <= int(value) <= 4095:
                raise _err(errno.EINVAL, "VLAN %s out of range" % value)
            value = int(value)
        elif key == "qos":
            if not 0 <= int(value) <= 7:
                raise _err(errno.EINVAL, "QoS %s out of range" % value)
            value = int(value)
        elif key in ("trust", "spoofchk"):
            value = bool(value)
        else:
            raise _err(errno.EOPNOTSUPP, "VF setting %s is not supported" % key)
        vfs = self.state.setdefault("vfinfo", {}).setdefault(pf, {})
        cur = vfs.setdefault(str(index), {})
        cur[key] = value
        if key == "vlan" and not value:
            cur.pop("qos", None)
        if all(cur.get(k, VF_DEFAULTS[k]) == VF_DEFAULTS[k] for k in list(cur)):
            del vfs[str(index)]
            if not vfs:
                del self.state["vfinfo"][pf]

    # -- mdev ----------------------------------------------------------------------------------
    def mdev_parent(self, bdf):
        """The mdev description of a function when it currently registers as an mdev parent."""
        st = self.static(bdf)
        if st.get("mdev") and self.dyn(bdf)["driver"] == st["driver"]:
            return st["mdev"]
        return None

    def mdev_type(self, parent, type_id):
        m = self.mdev_parent(parent)
        for t in (m or {}).get("types", []):
            if t["id"] == type_id:
                return t
        return None

    def available_instances(self, parent, type_id):
        """What the vendor driver reports: the free share of the device, and NVIDIA's time-sliced rule that
        one physical GPU runs one vGPU type at a time."""
        m = self.mdev_parent(parent)
        t = self.mdev_type(parent, type_id)
        existing = [x for x in self.state["mdevs"].values() if x["parent"] == parent]
        if m["single_type"] and any(x["type"] != type_id for x in existing):
            return 0
        return _free_share(m["types"], [x["type"] for x in existing], t)

    def mdev_create(self, parent, type_id, data):
        if not self.mdev_parent(parent) or not self.mdev_type(parent, type_id):
            raise _err(errno.ENODEV, "%s has no mdev type %s" % (parent, type_id))
        uuid = _strip(data).lower()
        if not UUID_RE.match(uuid):
            raise _err(errno.EINVAL, "invalid UUID %r" % uuid)
        if uuid in self.state["mdevs"]:
            raise _err(errno.EEXIST, "mdev %s exists" % uuid)
        if self.available_instances(parent, type_id) <= 0:
            raise _err(errno.EUSERS, "no instances of %s left on %s" % (type_id, parent))
        group = self.state["next_group"]
        self.state["next_group"] = group + 1
        self.state["mdevs"][uuid] = {"parent": parent, "type": type_id, "iommu_group": group}

    def mdev_remove(self, uuid, data):
        if uuid not in self.state["mdevs"]:
            raise _err(errno.ENODEV, "no mdev %s" % uuid)
        if not _parse_uint(data, 32):
            return
        why = self.in_use(uuid)
        if why:
            raise _err(errno.EBUSY, "mdev %s is in use (%s)" % (uuid, why))
        del self.state["mdevs"][uuid]

    # -- NVIDIA vendor-specific VFIO (SR-IOV vGPU) ---------------------------------------------
    def vgpu_config(self, vf):
        st = self.static(vf)
        if not st.get("is_vf"):
            return None
        pf = self.static(st["physfn"])
        if pf.get("vgpu") and self.dyn(vf)["driver"] == pf["sriov"]["vf_driver"]:
            return pf["vgpu"]
        return None

    def creatable_vgpu_types(self, vf):
        """What ``nvidia/creatable_vgpu_types`` lists: nothing while the VF has a type; on a GPU in MIG mode the
        MIG-backed types (``gi_profile``) with a GPU instance of that profile free (accelsim/mig.py); otherwise
        the time-sliced types that still fit beside the card's one running type."""
        cfg = self.vgpu_config(vf)
        if not cfg or self.state["vgpu"].get(vf):
            return []
        pf = self.static(vf)["physfn"]
        m = mig.state_of(self, pf)
        if m is not None and m["mode"] == "Enabled":
            return [t for t in cfg["types"] if t.get("gi_profile") and mig.free_vgpu_gi(m, t["gi_profile"])]
        siblings = set(self.vfs(pf))
        used = [t for v, t in self.state["vgpu"].items() if t and v in siblings]
        out = []
        for t in cfg["types"]:
            if t.get("gi_profile"):
                continue
            if cfg["single_type"] and any(u != t["id"] for u in used):
                continue
            if _free_share(cfg["types"], used, t, key="id") > 0:
                out.append(t)
        return out

    def set_vgpu_type(self, vf, data):
        if not self.vgpu_config(vf):
            raise _err(errno.ENODEV, "%s is not an NVIDIA vGPU VF" % vf)
        type_id = _parse_uint(data, 32)
        current = self.state["vgpu"].get(vf, 0)
        if type_id == current:
            return
        if type_id == 0:
            why = self.in_use(vf)
            if why:
                raise _err(errno.EBUSY, "%s is in use (%s)" % (vf, why))
            self.drop_vgpu(vf)
            return
        if current:
            raise _err(errno.EBUSY, "%s already has vGPU type %d; write 0 first" % (vf, current))
        if type_id not in [t["id"] for t in self.creatable_vgpu_types(vf)]:
            raise _err(errno.EINVAL, "vGPU type %d is not creatable on %s%s" % (type_id, vf, self._not_creatable(vf, type_id)))
        t = [x for x in self.vgpu_config(vf)["types"] if x["id"] == type_id][0]
        if t.get("gi_profile"):
            m = mig.state_of(self, self.static(vf)["physfn"])
            mig.free_vgpu_gi(m, t["gi_profile"])[0]["vgpu_vf"] = vf
        self.state["vgpu"][vf] = type_id

    def _not_creatable(self, vf, type_id):
        """Why a type is not creatable, for the error text (the driver says only EINVAL)."""
        t = [x for x in self.vgpu_config(vf)["types"] if x["id"] == type_id]
        m = mig.state_of(self, self.static(vf)["physfn"])
        enabled = m is not None and m["mode"] == "Enabled"
        if not t:
            return " (the card has no such type)"
        if t[0].get("gi_profile") and not enabled:
            return " (a MIG-backed type needs MIG mode)"
        if t[0].get("gi_profile"):
            return " (no free GPU instance of profile %s)" % t[0]["gi_profile"]
        if enabled:
            return " (a time-sliced type cannot run on a GPU in MIG mode)"
        return ""

    def drop_vgpu(self, vf):
        """The VF's vGPU is gone (type 0 written, the VF removed or unbound): its GPU instance is free again."""
        self.state["vgpu"].pop(vf, None)
        st = self.static(vf) if self.exists(vf) else None
        m = mig.state_of(self, st["physfn"]) if st and st.get("is_vf") else None
        for gi in (m or {}).get("gpu_instances", []):
            if gi.get("vgpu_vf") == vf:
                del gi["vgpu_vf"]

    # -- FPGA ----------------------------------------------------------------------------------
    def fpga_ports(self, pf):
        """Device nodes of an FPGA's port (what a user of the AFU holds open)."""
        g = self.static(pf)["fpga"]
        prefix = "intel-fpga" if g["layout"] == "opae" else "dfl"
        out = ["/dev/%s-port.%d" % (prefix, g["index"])]
        vf = self.fpga_port_vf(pf)
        if vf is not None:
            out.append("/dev/%s-port.%d" % (prefix, self.fpga_vf_index(pf)))
        return out

    def fpga_port_vf(self, pf):
        """The VF that holds the PF's released port, or None: the first VF, once SR-IOV is on (the DFL driver
        gives released ports to VFs in order, dfl_fpga_cdev_config_ports_vf), while it is bound to the FPGA driver
        (bound to vfio-pci the port is the guest's and the host shows nothing of it)."""
        cur = self.state["fpga"].get(pf)
        if not cur or not cur.get("released"):
            return None
        vfs = self.vfs(pf)
        if not vfs or self.dyn(vfs[0])["driver"] != self.static(pf)["driver"]:
            return None
        return vfs[0]

    def fpga_vf_index(self, pf):
        """The instance number the VF's FPGA device and port get (the next free one after every PF's)."""
        cards = sorted(self.state["fpga"])
        return max(self.static(b)["fpga"]["index"] for b in cards) + 1 + cards.index(pf)

    def fpga_port_on_pf(self, pf):
        return not (self.state["fpga"].get(pf) or {}).get("released")

    def fpga_release_port(self, pf):
        """The FME's port-release ioctl (DFL_FPGA_FME_PORT_RELEASE; OPAE's FPGA_FME_PORT_RELEASE)."""
        cur = self.state["fpga"].get(pf)
        if cur is None:
            raise _err(errno.ENODEV, "%s is not an FPGA" % pf)
        if cur.get("released"):
            raise _err(errno.EBUSY, "the port of %s is released already" % pf)
        why = self.fpga_busy(pf)
        if why:
            raise _err(errno.EBUSY, "port of %s is in use (%s)" % (pf, why))
        cur["released"] = True

    def fpga_assign_port(self, pf):
        """The FME's port-assign ioctl: the port back to the PF, refused while SR-IOV is on."""
        cur = self.state["fpga"].get(pf)
        if cur is None:
            raise _err(errno.ENODEV, "%s is not an FPGA" % pf)
        if not cur.get("released"):
            raise _err(errno.EINVAL, "the port of %s is not released" % pf)
        if self.dyn(pf)["numvfs"]:
            raise _err(errno.EBUSY, "%s has VFs enabled; disable SR-IOV before assigning the port back" % pf)
        cur["released"] = False

    def fpga_busy(self, pf):
        held = self.held_paths()
        for path in self.fpga_ports(pf):
            if path in held:
                return "%s held open by pid %s" % (path, held[path])
        for vf in self.vfs(pf):
            why = self.in_use(vf)
            if why:
                return "port VF %s %s" % (vf, why)
        return self.in_use(pf)

    def fpga_program(self, pf, interface_id, afu_id, flash=False):
        """Partial reconfiguration of the port's AFU (what fpgaconf does), or, with ``flash``, writing the
        image to the card's flash so it loads at every power-on."""
        if pf not in self.state["fpga"]:
            raise _err(errno.ENODEV, "%s is not an FPGA" % pf)
        cur = self.state["fpga"][pf]
        if interface_id.replace("-", "").lower() != cur["interface_id"]:
            raise _err(errno.EINVAL, "bitstream interface %s does not match the FPGA's %s" % (interface_id, cur["interface_id"]))
        why = self.fpga_busy(pf)
        if why:
            raise _err(errno.EBUSY, "port of %s is in use (%s)" % (pf, why))
        cur["afu_id"] = afu_id.replace("-", "").lower()
        if flash:
            self.state["persist"]["fpga_flash"][pf] = dict(cur)

    # -- Xilinx Alveo ----------------------------------------------------------------------------
    def alveo_user_of(self, mgmt):
        for f in self.lab["functions"]:
            if f.get("alveo") and f["alveo"]["role"] == "user" and f["alveo"].get("mgmt") == mgmt:
                return f["bdf"]
        return None

    def alveo_load_xclbin(self, mgmt, interface_uuid, xclbin_uuid):
        if mgmt not in self.state["alveo"]:
            raise _err(errno.ENODEV, "%s is not an Alveo management function" % mgmt)
        cur = self.state["alveo"][mgmt]
        if interface_uuid.lower() != cur["interface_uuid"].lower():
            raise _err(errno.EINVAL, "xclbin interface %s does not match the shell's %s" % (interface_uuid, cur["interface_uuid"]))
        user = self.alveo_user_of(mgmt)
        why = user and self.in_use(user)
        if why:
            raise _err(errno.EBUSY, "user function %s is in use (%s)" % (user, why))
        cur["xclbin_uuid"] = xclbin_uuid.lower()

    def alveo_flash_shell(self, mgmt, shell, interface_uuid, logic_uuid):
        """Flash a new base shell: it is written to flash and becomes active only after a cold reboot."""
        if mgmt not in self.state["alveo"]:
            raise _err(errno.ENODEV, "%s is not an Alveo management function" % mgmt)
        self.state["persist"]["alveo_flash"][mgmt] = {"shell": shell, "interface_uuid": interface_uuid, "logic_uuid": logic_uuid}


def _free_share(types, used_type_ids, t, key="id"):
    """Instances of ``t`` that still fit, when each instance of a type takes 1/max_instances of the device."""
    sizes = {x[key]: x["max_instances"] for x in types}
    used = sum(1.0 / sizes[u] for u in used_type_ids if sizes.get(u))
    free = max(0.0, 1.0 - used)
    return int(free * t["max_instances"] + 1e-9)


def domain_xml(name, hostdevs):
    """A minimal libvirt live domain XML as found in /run/libvirt/qemu/<name>.xml."""
    # imported where used: every tool fake run imports this module, and few of them need XML or a hash
    import xml.etree.ElementTree as ET  # pylint: disable=import-outside-toplevel
    root = ET.Element("domstatus", state="running", reason="booted", pid="1")
    dom = ET.SubElement(root, "domain", type="kvm", id="1")
    ET.SubElement(dom, "name").text = name
    devices = ET.SubElement(dom, "devices")
    for h in hostdevs:
        if "pci" in h:
            dd, bb, ss, ff = parse_bdf(h["pci"])
            hd = ET.SubElement(devices, "hostdev", mode="subsystem", type="pci", managed="yes")
            src = ET.SubElement(hd, "source")
            ET.SubElement(src, "address", domain="0x%04x" % dd, bus="0x%02x" % bb, slot="0x%02x" % ss, function="0x%x" % ff)
        else:
            hd = ET.SubElement(devices, "hostdev", mode="subsystem", type="mdev", model="vfio-pci")
            src = ET.SubElement(hd, "source")
            ET.SubElement(src, "address", uuid=h["mdev"])
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def domain_hostdevs(xml):
    """(set of PCI addresses, set of mdev uuids) assigned in a domain XML."""
    import xml.etree.ElementTree as ET  # pylint: disable=import-outside-toplevel  # see domain_xml
    pci, mdevs = set(), set()
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return pci, mdevs
    for hd in root.iter("hostdev"):
        addr = hd.find("source/address")
        if addr is None:
            continue
        if hd.get("type") == "pci":
            pci.add(format_bdf(int(addr.get("domain", "0"), 0), int(addr.get("bus"), 0), int(addr.get("slot"), 0), int(addr.get("function"), 0)))
        elif hd.get("type") == "mdev" and addr.get("uuid"):
            mdevs.add(addr.get("uuid").lower())
    return pci, mdevs


def snapshot(state):
    """A deep copy suitable for comparing before/after."""
    return copy.deepcopy(state)


def add_open_fd(state, pid, comm, target):
    """Record that a real process opened ``target`` through the FUSE mount; returns the fd number shown
    in /proc/<pid>/fd."""
    proc = state["processes"].setdefault(str(pid), {"comm": comm, "fds": {}, "real": True})
    fd = 3
    while str(fd) in proc["fds"]:
        fd += 1
    proc["fds"][str(fd)] = target
    return fd


def remove_open_fd(state, pid, fd):
    proc = state["processes"].get(str(pid))
    if not proc:
        return
    proc["fds"].pop(str(fd), None)
    if not proc["fds"] and proc.get("real"):
        del state["processes"][str(pid)]
