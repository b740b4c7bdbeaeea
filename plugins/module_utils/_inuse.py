# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Who uses an assignable unit: running libvirt domains and processes holding VFIO files open.

Collected once per discovery:

- every ``*.xml`` in libvirt's run directory (``/run/libvirt/qemu``: the status XML of each running
  domain): ``<hostdev type='pci'>`` and ``<interface type='hostdev'>`` source PCI addresses and
  ``<hostdev type='mdev'>`` source UUIDs;
- every ``/proc/<pid>/fd/*`` link to ``/dev/vfio/<group>`` (legacy group interface) or
  ``/dev/vfio/devices/vfioN`` (iommufd cdev), and to the device nodes a family names when they exist on the host
  (``Driver.held_device_nodes``: NVIDIA's MIG capability and GPU nodes), kept by path for the family's discovery.
  The process scan (one pass for all) is skipped when neither ``/dev/vfio`` nor any family's nodes exist, since
  then nothing can hold one open.

Evidence items are dicts ``{kind: domain|process, name, pid, evidence}``; ``evidence`` is the file
that proves it (the domain's XML, or ``/proc/<pid>/fd/<n> -> /dev/vfio/<group>``).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import errno
import os

from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address
from ansible_collections.accelops.lifecycle.plugins.module_utils._safefile import UnsafeFile, read_regular
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import errno_text, read_attr_real

__metaclass__ = type

XML_LIMIT = 16 << 20


def _pci_from_address(el):
    try:
        parts = [int(el.get(k, "0"), 0) for k in ("domain", "bus", "slot", "function")]
    except (TypeError, ValueError):
        return None
    return pci_address("%04x:%02x:%02x.%x" % tuple(parts))


def parse_domain_xml(data):
    """Parse a libvirt (status) domain XML. Returns ``(name, state, pid, pci_addresses, mdev_uuids)``;
    raises ValueError when it is not a domain XML."""
    # imported on first use: most hosts a discovery reads run no domain, and the parser's import is a noticeable
    # part of a module call's start (about 1.6 ms)
    import xml.etree.ElementTree as ET  # pylint: disable=import-outside-toplevel
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise ValueError("not well-formed XML: %s" % e)
    state = pid = None
    if root.tag == "domstatus":
        state = root.get("state")
        try:
            pid = int(root.get("pid")) if root.get("pid") else None
        except ValueError:
            pid = None
        dom = root.find("domain")
    elif root.tag == "domain":
        dom = root
    else:
        dom = None
    if dom is None:
        raise ValueError("no <domain> element")
    name = (dom.findtext("name") or "").strip() or None
    pci, mdev = [], []
    devices = dom.find("devices")
    if devices is not None:
        for hd in devices.iter("hostdev"):
            t = hd.get("type")
            src = hd.find("source")
            if src is None:
                continue
            addr = src.find("address")
            if addr is None:
                continue
            if t == "pci":
                a = _pci_from_address(addr)
                if a:
                    pci.append(a)
            elif t == "mdev":
                u = (addr.get("uuid") or "").lower()
                if u:
                    mdev.append(u)
        for iface in devices.iter("interface"):
            if iface.get("type") != "hostdev":
                continue
            src = iface.find("source")
            addr = src.find("address") if src is not None else None
            if addr is not None and addr.get("type", "pci") == "pci":
                a = _pci_from_address(addr)
                if a:
                    pci.append(a)
    return name, state, pid, pci, mdev


class InUse(object):
    """Who uses what, as found by :func:`collect`."""

    def __init__(self):
        self.by_address = {}  # pci address -> [evidence]
        self.by_uuid = {}  # mdev uuid -> [evidence]
        self.by_group = {}  # iommu group -> [evidence]
        self.by_cdev = {}  # vfio cdev name (vfio3) -> [evidence]
        self.by_path = {}  # a family's device node (Driver.held_device_nodes: /dev/nvidia0) -> [evidence]
        self.domains = []  # [{name, state, pid, evidence}]
        self.warnings = []
        self.processes_scanned = False

    def lookup(self, address=None, uuid=None, iommu_group=None, cdev=None):
        """Evidence for a unit: its PCI address (device/VF) or mdev UUID, its IOMMU group and its
        VFIO cdev name. Each item appears once."""
        out = []
        seen = set()
        for src, key in ((self.by_address, address), (self.by_uuid, uuid), (self.by_group, iommu_group),
                         (self.by_cdev, cdev)):
            if key is None:
                continue
            for ev in src.get(key, ()):
                k = (ev["kind"], ev["name"], ev["pid"], ev["evidence"])
                if k not in seen:
                    seen.add(k)
                    out.append(ev)
        return out


def _evidence(kind, name, pid, evidence):
    return {"kind": kind, "name": name, "pid": pid, "evidence": evidence}


def evidence_text(evidence):
    """In-use evidence (the dicts :meth:`InUse.lookup` returns) as one phrase for a refusal message."""
    parts = []
    for e in evidence:
        if e.get("kind") == "domain":
            parts.append("running domain %s (%s)" % (e.get("name"), e.get("evidence")))
        elif e.get("kind") == "process":
            parts.append("process %s pid %s (%s)" % (e.get("name"), e.get("pid"), e.get("evidence")))
        else:
            # what a family found in its own tool's words (a vGPU holding a MIG GPU instance): the phrase is whole
            parts.append(e.get("evidence") or "%s %s" % (e.get("kind"), e.get("name")))
    return "; ".join(parts)


def collect_domains(sysfs, run_dir, inuse):
    real = sysfs.real(run_dir)
    try:
        names = sorted(os.listdir(real))
    except (IOError, OSError) as e:
        if e.errno not in (errno.ENOENT, errno.ENOTDIR):
            inuse.warnings.append("cannot list %s: %s" % (run_dir, errno_text(e.errno)))
        return
    for fname in names:
        if not fname.endswith(".xml"):
            continue
        host_path = run_dir.rstrip("/") + "/" + fname
        try:
            # a regular file only, bounded, never through a link or a FIFO (the file rule, _safefile)
            data = read_regular(real + "/" + fname, XML_LIMIT)
        except UnsafeFile as e:
            why = "larger than %d MiB" % (XML_LIMIT >> 20) if e.errno == errno.EFBIG else e.strerror
            inuse.warnings.append("%s: %s; skipped" % (host_path, why))
            continue
        except (IOError, OSError) as e:
            inuse.warnings.append("cannot read %s: %s" % (host_path, errno_text(e.errno)))
            continue
        if len(data) > XML_LIMIT:
            inuse.warnings.append("%s: larger than %d MiB, skipped" % (host_path, XML_LIMIT >> 20))
            continue
        try:
            name, state, pid, pci, mdev = parse_domain_xml(data)
        except ValueError as e:
            inuse.warnings.append("%s: %s; skipped" % (host_path, e))
            continue
        name = name or fname[:-4]
        pid_text, _err = read_attr_real(real + "/" + fname[:-4] + ".pid")  # libvirt's own pid file
        if pid_text and pid_text.isdigit():
            pid = int(pid_text)
        ev = _evidence("domain", name, pid, host_path)
        inuse.domains.append({"name": name, "state": state, "pid": pid, "evidence": host_path})
        for a in pci:
            inuse.by_address.setdefault(a, []).append(ev)
        for u in mdev:
            inuse.by_uuid.setdefault(u, []).append(ev)


def _vfio_nodes(sysfs):
    """True when /dev/vfio holds group or cdev nodes (anything a process could hold open)."""
    real = sysfs.real("/dev/vfio")
    try:
        names = os.listdir(real)
    except (IOError, OSError):
        return False
    for n in names:
        if n.isdigit() or n.startswith("noiommu-"):
            return True
        if n == "devices":
            try:
                if os.listdir(real + "/devices"):
                    return True
            except (IOError, OSError):
                pass
    return False


def _node_tests(sysfs, drivers):
    """The families' tests of a device path a process may hold their units through besides VFIO, for the families
    whose nodes exist on this host (``Driver.held_device_nodes``)."""
    if drivers is None:
        # imported here: the registry's drivers are asked only when discovery does not hand over its own
        from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import default_drivers  # pylint: disable=import-outside-toplevel
        drivers = default_drivers()
    tests = []
    for drv in drivers:
        test = drv.held_device_nodes(sysfs)
        if test is not None and test not in tests:
            tests.append(test)
    return tests


def collect_processes(sysfs, inuse, node_tests=()):
    """One pass over /proc/<pid>/fd: VFIO files (always) and the device paths one of ``node_tests`` accepts (a
    family's nodes, recorded by path)."""
    proc = sysfs.real("/proc")
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except (IOError, OSError) as e:
        inuse.warnings.append("cannot list /proc: %s; open VFIO files were not checked" % errno_text(e.errno))
        return
    inuse.processes_scanned = True
    denied = 0
    for pid in pids:
        fd_dir = proc + "/" + pid + "/fd"
        try:
            fds = os.listdir(fd_dir)
        except (IOError, OSError) as e:
            if e.errno in (errno.EACCES, errno.EPERM):
                denied += 1
            continue  # gone (ENOENT) or a kernel thread
        comm = None
        for fd in fds:
            try:
                target = os.readlink(fd_dir + "/" + fd)
            except (IOError, OSError):
                continue
            vfio = target.startswith("/dev/vfio/")
            if not vfio and not any(test(target) for test in node_tests):
                continue
            rest = target[len("/dev/vfio/"):]
            if comm is None:
                comm, _err = read_attr_real(proc + "/" + pid + "/comm")
                comm = comm or "?"
            ev = _evidence("process", comm, int(pid), "/proc/%s/fd/%s -> %s" % (pid, fd, target))
            if not vfio:
                inuse.by_path.setdefault(target, []).append(ev)
            elif rest.isdigit():
                inuse.by_group.setdefault(int(rest), []).append(ev)
            elif rest.startswith("devices/"):
                inuse.by_cdev.setdefault(rest[len("devices/"):], []).append(ev)
            elif rest.startswith("noiommu-") and rest[8:].isdigit():
                inuse.by_group.setdefault(int(rest[8:]), []).append(ev)
    if denied:
        inuse.warnings.append("the open files of %d processes could not be read (run as root to see "
                              "every process that holds a VFIO device)" % denied)


def collect(sysfs, libvirt_run_dir="/run/libvirt/qemu", processes=True, drivers=None):
    """Collect in-use evidence once for the whole host. Never raises for a bad tree. ``drivers``: the family drivers
    asked for device nodes of their own (default: the built-in ones)."""
    inuse = InUse()
    if libvirt_run_dir:
        collect_domains(sysfs, libvirt_run_dir, inuse)
    if processes:
        node_tests = _node_tests(sysfs, drivers)
        if node_tests or _vfio_nodes(sysfs):
            collect_processes(sysfs, inuse, node_tests)
    return inuse
