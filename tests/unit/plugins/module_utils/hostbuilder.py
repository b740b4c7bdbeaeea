# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build small host-root trees (sys/, proc/, dev/, run/) shaped like what the kernel shows, for tests.

Only the shapes discovery reads are built: PCI function directories under /sys/devices with the
/sys/bus/pci/devices links, driver and IOMMU group links, SR-IOV physfn/virtfn links, mdev types and
mdevs, FPGA sub-trees, netdevs, libvirt status XML and /proc/<pid>/fd links. Paths given to the
builder are host paths (``/sys/...``); they are created under ``root``.
"""

from __future__ import annotations

import os
import struct

__metaclass__ = type


def _hex(value, width):
    if isinstance(value, int):
        return "%0*x" % (width, value)
    value = value.lower()
    if value.startswith("0x"):
        value = value[2:]
    return value.zfill(width)


class HostTree(object):
    """A host root being built under ``root`` (a directory on this machine)."""

    def __init__(self, root):
        self.root = str(root)
        self.functions = {}  # address -> dict of what was set
        self._vf_count = {}

    # -- primitives -------------------------------------------------------------------------
    def path(self, host_path):
        return os.path.join(self.root, host_path.lstrip("/"))

    def mkdir(self, host_path):
        p = self.path(host_path)
        if not os.path.isdir(p):
            os.makedirs(p)
        return p

    def write(self, host_path, content, mode=None):
        p = self.path(host_path)
        d = os.path.dirname(p)
        if not os.path.isdir(d):
            os.makedirs(d)
        data = content if isinstance(content, bytes) else ("%s" % (content,)).encode("utf-8")
        with open(p, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(p, mode)
        return p

    def symlink(self, host_path, target):
        """A symlink at ``host_path``; an absolute host ``target`` is made relative like sysfs does."""
        p = self.path(host_path)
        d = os.path.dirname(p)
        if not os.path.isdir(d):
            os.makedirs(d)
        if target.startswith("/") and not target.startswith("/dev/"):
            target = os.path.relpath(target, os.path.dirname(host_path))
        if os.path.lexists(p):
            os.unlink(p)
        os.symlink(target, p)
        return p

    # -- PCI ----------------------------------------------------------------------------------
    @staticmethod
    def bus_dir(address):
        return "/sys/devices/pci%s" % address[:7]

    def add_pci(self, address, vendor, device, class_id, revision="00", subsystem=None, driver=None,
                driver_override=None, numa_node=-1, local_cpulist="0-3", iommu_group=None, link=None,
                sriov_totalvfs=None, sriov_vf_device=None, physfn=None, parent=None, config=True,
                extra=None):
        """Create one PCI function. Returns its device directory (host path)."""
        if parent is None:
            parent = os.path.dirname(self.functions[physfn]["dir"]) if physfn else self.bus_dir(address)
        ddir = "%s/%s" % (parent, address)
        vendor, device, class_id = _hex(vendor, 4), _hex(device, 4), _hex(class_id, 6)
        revision = _hex(revision, 2)
        sv, sd = subsystem if subsystem else ("0000", "0000")
        sv, sd = _hex(sv, 4), _hex(sd, 4)
        attrs = {
            "vendor": "0x%s\n" % vendor,
            "device": "0x%s\n" % device,
            "class": "0x%s\n" % class_id,
            "revision": "0x%s\n" % revision,
            "subsystem_vendor": "0x%s\n" % sv,
            "subsystem_device": "0x%s\n" % sd,
            "numa_node": "%d\n" % numa_node,
            "local_cpulist": "%s\n" % local_cpulist,
            "driver_override": "%s\n" % (driver_override or "(null)"),
            "enable": "1\n",
            "irq": "16\n",
            "modalias": "pci:v0000%sd0000%ssv0000%ssd0000%sbc%ssc%si%s\n" % (
                vendor.upper(), device.upper(), sv.upper(), sd.upper(), class_id[:2].upper(),
                class_id[2:4].upper(), class_id[4:].upper()),
            "resource": "0x0000000000000000 0x0000000000000000 0x0000000000000000\n" * 6,
        }
        if link:
            attrs["current_link_speed"] = "%s\n" % link[0]
            attrs["current_link_width"] = "%s\n" % link[1]
            attrs["max_link_speed"] = "%s\n" % (link[2] if len(link) > 2 else link[0])
            attrs["max_link_width"] = "%s\n" % (link[3] if len(link) > 3 else link[1])
        if sriov_totalvfs is not None:
            attrs["sriov_totalvfs"] = "%d\n" % sriov_totalvfs
            attrs["sriov_numvfs"] = "0\n"
            attrs["sriov_vf_device"] = "%s\n" % _hex(sriov_vf_device or "0000", 4)
        for name, value in attrs.items():
            self.write("%s/%s" % (ddir, name), value)
        if config:
            cfg = struct.pack("<HHHHB3sBBBB", int(vendor, 16), int(device, 16), 0x0406, 0x0010,
                              int(revision, 16), bytes.fromhex(class_id)[::-1], 0, 0, 0, 0)
            cfg += b"\0" * (44 - len(cfg)) + struct.pack("<HH", int(sv, 16), int(sd, 16))
            cfg += b"\0" * (64 - len(cfg))
            self.write("%s/config" % ddir, cfg)
        self.mkdir("%s/power" % ddir)
        self.symlink("%s/subsystem" % ddir, "/sys/bus/pci")
        self.symlink("/sys/bus/pci/devices/%s" % address, ddir)
        if driver:
            self.bind(address, driver, ddir=ddir)
        if iommu_group is not None:
            self.symlink("%s/iommu_group" % ddir, "/sys/kernel/iommu_groups/%s" % iommu_group)
            self.symlink("/sys/kernel/iommu_groups/%s/devices/%s" % (iommu_group, address), ddir)
            self.mkdir("/dev/vfio")
        self.functions[address] = {"dir": ddir, "vendor": vendor, "device": device, "class": class_id,
                                   "driver": driver, "iommu_group": iommu_group, "subsystem": (sv, sd)}
        self.uevent(address)
        if physfn:
            pf = self.functions[physfn]["dir"]
            n = self._vf_count.get(physfn, 0)
            self._vf_count[physfn] = n + 1
            self.symlink("%s/physfn" % ddir, pf)
            self.symlink("%s/virtfn%d" % (pf, n), ddir)
            self.write("%s/sriov_numvfs" % pf, "%d\n" % (n + 1))
        for name, value in (extra or {}).items():
            self.write("%s/%s" % (ddir, name), value)
        return ddir

    def bind(self, address, driver, ddir=None):
        ddir = ddir or self.functions[address]["dir"]
        self.mkdir("/sys/bus/pci/drivers/%s" % driver)
        self.symlink("%s/driver" % ddir, "/sys/bus/pci/drivers/%s" % driver)
        self.symlink("/sys/bus/pci/drivers/%s/%s" % (driver, address), ddir)
        if address in self.functions:
            self.functions[address]["driver"] = driver
            self.uevent(address)

    def uevent(self, address):
        """(Re)write the function's uevent the way the kernel formats it."""
        f = self.functions[address]
        lines = []
        if f["driver"]:
            lines.append("DRIVER=%s" % f["driver"])
        lines.append("PCI_CLASS=%X" % int(f["class"], 16))
        lines.append("PCI_ID=%s:%s" % (f["vendor"].upper(), f["device"].upper()))
        lines.append("PCI_SUBSYS_ID=%s:%s" % (f["subsystem"][0].upper(), f["subsystem"][1].upper()))
        lines.append("PCI_SLOT_NAME=%s" % address)
        self.write("%s/uevent" % f["dir"], "\n".join(lines) + "\n")

    def dev(self, address):
        return self.functions[address]["dir"]

    # -- mdev ---------------------------------------------------------------------------------
    def add_mdev_type(self, address, type_id, name, description="", device_api="vfio-pci",
                      available=1):
        tdir = "%s/mdev_supported_types/%s" % (self.dev(address), type_id)
        self.write("%s/name" % tdir, name + "\n")
        self.write("%s/description" % tdir, description + "\n")
        self.write("%s/device_api" % tdir, device_api + "\n")
        self.write("%s/available_instances" % tdir, "%d\n" % available)
        self.write("%s/create" % tdir, "")
        self.mkdir("%s/devices" % tdir)
        self.symlink("/sys/class/mdev_bus/%s" % address, self.dev(address))
        return tdir

    def add_mdev(self, address, uuid, type_id, iommu_group=None):
        mdir = "%s/%s" % (self.dev(address), uuid)
        tdir = "%s/mdev_supported_types/%s" % (self.dev(address), type_id)
        self.mkdir(mdir)
        self.symlink("%s/mdev_type" % mdir, tdir)
        self.symlink("%s/devices/%s" % (tdir, uuid), mdir)
        self.symlink("/sys/bus/mdev/devices/%s" % uuid, mdir)
        self.write("%s/remove" % mdir, "")
        if iommu_group is not None:
            self.symlink("%s/iommu_group" % mdir, "/sys/kernel/iommu_groups/%s" % iommu_group)
            self.symlink("/sys/kernel/iommu_groups/%s/devices/%s" % (iommu_group, uuid), mdir)
        return mdir

    # -- net ----------------------------------------------------------------------------------
    def add_netdev(self, address, ifname, mac, operstate="up"):
        ndir = "%s/net/%s" % (self.dev(address), ifname)
        self.write("%s/address" % ndir, mac + "\n")
        self.write("%s/operstate" % ndir, operstate + "\n")
        self.symlink("/sys/class/net/%s" % ifname, ndir)

    # -- libvirt / processes ---------------------------------------------------------------------
    def add_domain(self, name, hostdevs=(), mdevs=(), interfaces=(), state="running",
                   run_dir="/run/libvirt/qemu"):
        parts = []
        for addr in hostdevs:
            d, b, sf = addr.split(":")
            s, f = sf.split(".")
            parts.append("<hostdev mode='subsystem' type='pci' managed='yes'><source>"
                         "<address domain='0x%s' bus='0x%s' slot='0x%s' function='0x%s'/>"
                         "</source></hostdev>" % (d, b, s, f))
        for uuid in mdevs:
            parts.append("<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source>"
                         "<address uuid='%s'/></source></hostdev>" % uuid)
        for addr in interfaces:
            d, b, sf = addr.split(":")
            s, f = sf.split(".")
            parts.append("<interface type='hostdev' managed='yes'><source>"
                         "<address type='pci' domain='0x%s' bus='0x%s' slot='0x%s' function='0x%s'/>"
                         "</source></interface>" % (d, b, s, f))
        xml = ("<domstatus state='%s' reason='booted' pid='4242'><domain type='kvm' id='1'>"
               "<name>%s</name><uuid>1b4e28ba-2fa1-11d2-883f-0016d3cca427</uuid><devices>%s</devices>"
               "</domain></domstatus>\n" % (state, name, "".join(parts)))
        return self.write("%s/%s.xml" % (run_dir, name), xml)

    def add_process(self, pid, comm, fds):
        self.write("/proc/%d/comm" % pid, comm + "\n")
        self.mkdir("/proc/%d/fd" % pid)
        for fd, target in fds.items():
            self.symlink("/proc/%d/fd/%d" % (pid, fd), target)


def generate(root, functions=2500, seed=0):
    """A big, varied host: NICs with VFs, NVIDIA GPUs with mdev types, QAT with VFs, Intel FPGAs and
    filler functions until ``functions`` PCI functions exist. Returns the HostTree."""
    t = HostTree(root)
    group = [0]
    count = [0]

    def grp():
        group[0] += 1
        return group[0]

    def add(addr, *a, **kw):
        count[0] += 1
        kw.setdefault("iommu_group", grp())
        return t.add_pci(addr, *a, **kw)

    bus = 0x10
    while count[0] < functions:
        kind = bus % 5
        b = "0000:%02x" % (bus & 0xFF)
        dom = "%04x" % (bus >> 8)
        b = "%s:%02x" % (dom, bus & 0xFF)
        numa = bus % 2
        if kind == 0:  # NIC PF with 32 VFs
            pf = "%s:00.0" % b
            add(pf, "8086", "1593", "020000", driver="ice", numa_node=numa, local_cpulist="0-31",
                link=("16.0 GT/s PCIe", 16), sriov_totalvfs=64, sriov_vf_device="1889",
                subsystem=("8086", "0002"))
            t.add_netdev(pf, "ens%df0" % bus, "3c:fd:fe:00:%02x:00" % (bus & 0xFF))
            for i in range(32):
                vf = "%s:%02x.%d" % (b, 1 + i // 8, i % 8)
                add(vf, "8086", "1889", "020000", driver="iavf", physfn=pf, numa_node=numa)
                t.add_netdev(vf, "ens%df0v%d" % (bus, i), "3c:fd:fe:%02x:%02x:01" % (bus & 0xFF, i))
        elif kind == 1:  # NVIDIA T4 with mdev types
            g = "%s:00.0" % b
            add(g, "10de", "1eb8", "030200", revision="a1", driver="nvidia", numa_node=numa,
                link=("8.0 GT/s PCIe", 16), subsystem=("10de", "12a2"))
            for tid, name in (("nvidia-222", "GRID T4-1B"), ("nvidia-223", "GRID T4-2B"),
                              ("nvidia-230", "GRID T4-16Q")):
                t.add_mdev_type(g, tid, name, "num_heads=4, frl_config=45, framebuffer=2048M, "
                                "max_resolution=5120x2880, max_instance=8", available=8)
        elif kind == 2:  # QAT with 16 VFs
            pf = "%s:00.0" % b
            add(pf, "8086", "4940", "0b4000", driver="4xxx", numa_node=numa, sriov_totalvfs=16,
                sriov_vf_device="4941", extra={"qat/state": "up\n", "qat/cfg_services": "sym;asym\n"})
            for i in range(16):
                add("%s:%02x.%d" % (b, (i + 1) // 8, (i + 1) % 8), "8086", "4941",
                    "0b4000", driver="vfio-pci", physfn=pf)
        elif kind == 3:  # Intel PAC (DFL)
            f = "%s:00.0" % b
            d = add(f, "8086", "0b30", "120000", driver="dfl-pci", numa_node=numa)
            t.write(d + "/fpga_region/region0/dfl-fme.%d/bitstream_id" % bus, "0x123\n")
            t.write(d + "/fpga_region/region0/dfl-fme.%d/dfl-fme-region.%d/fpga_region/region%d/compat_id"
                    % (bus, bus, bus + 1000), "f3c99413-5081-4aad-bced-07eb84a6d0bb\n".replace("-", ""))
            t.write(d + "/fpga_region/region0/dfl-port.%d/afu_id" % bus, "d8424dc4a4a3c413f89e433683f9040b\n")
        else:  # filler: a bridge and 7 functions of misc devices
            add("%s:00.0" % b, "8086", "2030", "060400", driver="pcieport", numa_node=numa)
            for i in range(1, 8):
                add("%s:00.%d" % (b, i), "8086", "0998", "088000", numa_node=numa)
        bus += 1
    return t
