# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""PCI functions as sysfs shows them: one pass over /sys/bus/pci/devices, identity records, pci.ids.

:func:`scan` reads, for every function, its links (kernel driver, IOMMU group, physfn); the ids (vendor,
device, class) are read from the ``vendor``, ``device`` and ``class`` files, as lspci and Cyborg read them,
when first asked for: a driver's claim, a filter or a record (a VF folded into its PF's record never needs
them). :meth:`PciFunction.identity` reads the rest (revision, subsystem, NUMA, link, SR-IOV) for the
functions that end up in a result. Every read goes through :mod:`_sysfs`'s machine-path helpers; problems
become per-function warnings.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import errno
import os
import re

from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import (
    errno_text,
    kernel_int,
    read_attr_real,
    read_attrs_real,
    readlink_real,
    readlinks_real,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

__metaclass__ = type

DEVICES = "/sys/bus/pci/devices"
# TotalVFs is a 16-bit field of the SR-IOV capability (PCIe base spec, section 9.3.3.6): no device has more.
MAX_VFS = 0xFFFF
DRIVERS = "/sys/bus/pci/drivers"
# the drivers' directories are listed when the host has at least this many functions per driver (see _bound_functions)
_LIST_DRIVERS_FACTOR = 8

# The ids, read when first needed (the first pass reads only the driver, iommu_group and physfn links of every
# function), and what identity() reads of a reported one. The ids and the subsystem come from the files lspci reads, not from uevent's PCI_ID,
# PCI_CLASS and PCI_SUBSYS_ID (issue 18: read what lspci and Cyborg read).
_ID_ATTRS = ("vendor", "device", "class")
_IDENTITY_ATTRS = ("revision", "subsystem_vendor", "subsystem_device", "driver_override", "numa_node",
                   "current_link_speed", "sriov_totalvfs")
# The kernel shows the sriov_* attributes only on a physical function (sriov_attrs_are_visible): a VF's
# identity does not try them.
_VF_IDENTITY_ATTRS = _IDENTITY_ATTRS[:-1]
_SRIOV_GEOMETRY_ATTRS = ("sriov_offset", "sriov_stride")
_LINK_ATTRS = ("current_link_width", "max_link_speed", "max_link_width")
_SRIOV_ATTRS = ("sriov_numvfs", "sriov_vf_device")

_HEX = "0123456789abcdef"
_BLOCK_END = re.compile(b"\n[^\t#\n]")  # a line that is not a device/subsystem/comment line
_DEVICE_END = re.compile(b"\n(?!\t\t|#)")  # a line that is not a subsystem/comment line

# pci.ids is about 1.4 MB; a file larger than this is not one
_PCI_IDS_LIMIT = 64 << 20

PCI_IDS_PATHS = ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids")


def _hexattr(text, width):
    """'0x10de' -> '10de' (lower-case, zero-padded to ``width``); None when not hex."""
    if not text:
        return None
    t = text.lower()
    if t[:2] == "0x":
        t = t[2:]
    if not t or len(t) > width or t.strip(_HEX):
        return None
    return t.zfill(width) if len(t) < width else t


def _routing_id(address):
    """Bus, device and function of a canonical address as the 16-bit PCI routing id."""
    return int(address[-7:-5], 16) << 8 | int(address[-4:-2], 16) << 3 | int(address[-1], 16)


def _intattr(text):
    return kernel_int(text)


class PciFunction(object):
    """One PCI function: what the first pass read, plus lazily read identity details."""

    __slots__ = ("address", "real", "_ids", "driver", "iommu_group", "physfn", "warnings", "_entries",
                 "_identity", "vfs", "_vf_pos", "_cache")

    def __init__(self, address, real, cache=None):
        self.address = address
        self.real = real  # machine path of the device directory (through the bus symlink)
        self._ids = None  # (vendor, device, class), read when first asked for
        self.driver = None
        self.iommu_group = None
        self.physfn = None
        self.warnings = []
        self._entries = None
        self._identity = None
        self.vfs = None
        self._vf_pos = None
        # shared by the functions of one scan: local_cpulist read so far, by (numa_node text, its errno,
        # domain:bus) (the kernel prints the CPUs of the function's NUMA node, or without CONFIG_NUMA of its bus,
        # so the functions sharing both share it), and the parsed ids by ("ids", their texts)
        self._cache = {} if cache is None else cache

    def __repr__(self):
        return "PciFunction(%s %s:%s class %s driver %s)" % (
            self.address, self.vendor_id, self.device_id, self.class_id, self.driver)

    # -- ids: the vendor, device and class files, read once when first needed ----------------------------
    @property
    def vendor_id(self):
        return (self._ids or self.read_ids())[0]

    @property
    def device_id(self):
        return (self._ids or self.read_ids())[1]

    @property
    def class_id(self):
        return (self._ids or self.read_ids())[2]

    def read_ids(self):
        (vendor, verr), (device, derr), (cls, cerr) = read_attrs_real(self.real + "/", _ID_ATTRS)
        return self.set_ids(vendor, verr, device, derr, cls, cerr)

    def set_ids(self, vendor, verr, device, derr, cls, cerr):
        key = ("ids", vendor, device, cls)
        ids = self._cache.get(key)
        if ids is None:
            ids = self._cache[key] = (_hexattr(vendor, 4), _hexattr(device, 4), _hexattr(cls, 6))
        self._ids = ids
        if verr is not None or derr is not None or cerr is not None or None in ids:
            for attr, text, err, value in (("vendor", vendor, verr, ids[0]), ("device", device, derr, ids[1]),
                                           ("class", cls, cerr, ids[2])):
                if err is not None:
                    self.warn("%s: %s" % (attr, errno_text(err)))
                elif value is None:
                    self.warn("%s: unexpected value %r" % (attr, text[:40]))
        return ids

    # -- helpers for drivers ---------------------------------------------------------------------
    @property
    def base_class(self):
        return self.class_id[:2] if self.class_id else None

    def warn(self, message):
        if message not in self.warnings:
            self.warnings.append(message)

    def entries(self):
        """Names in the device directory (cached; one listdir)."""
        if self._entries is None:
            try:
                self._entries = frozenset(os.listdir(self.real))
            except (IOError, OSError) as e:
                self.warn("cannot list the device directory: %s" % errno_text(e.errno))
                self._entries = frozenset()
        return self._entries

    def has(self, name):
        return name in self.entries()

    def attr(self, name, required=False):
        """A text attribute of this function, or None. Unreadable/garbled attributes warn; missing
        ones warn only when ``required``."""
        value, err = read_attr_real(self.real + "/" + name)
        if err is not None and (required or err != errno.ENOENT):
            self.warn("%s: %s" % (name, errno_text(err)))
        return value

    def path_attr(self, relpath, required=False):
        """An attribute in a sub-directory (``nvidia/current_vgpu_type``)."""
        return self.attr(relpath, required)

    def link(self, name):
        return readlink_real(self.real + "/" + name)

    def link_name(self, name):
        t = readlink_real(self.real + "/" + name)
        return os.path.basename(t.rstrip("/")) if t else None

    # -- identity -----------------------------------------------------------------------------
    def identity(self):
        """The PCI identity part of a discovery record (see docs/discovery.md). Reads only the
        attributes needed (no directory listing): absent optional attributes cost one failed open.
        Warnings come in the order of the record's keys (revision ... local_cpulist)."""
        if self._identity is not None:
            return self._identity
        base = self.real + "/"
        warn = self._warn_err
        vendor_id, device_id, class_id = self._ids or self.read_ids()  # their warnings come first
        if self.physfn:
            (rev, erev), (sv, esv), (sd, esd), (override, eovr), (numa, enuma), (speed, espeed) = \
                read_attrs_real(base, _VF_IDENTITY_ATTRS)
            total = etotal = None
        else:
            (rev, erev), (sv, esv), (sd, esd), (override, eovr), (numa, enuma), (speed, espeed), (total, etotal) = \
                read_attrs_real(base, _IDENTITY_ATTRS)
        cpus_key = (numa, enuma, self.address[:-5])
        cpus_read = self._cache.get(cpus_key)
        if cpus_read is None:
            cpus_read = self._cache[cpus_key] = read_attr_real(base + "local_cpulist")
        cpus, ecpus = cpus_read
        if erev is not None:
            warn("revision", erev)
        rev = _hexattr(rev, 2)
        if esv is not None:
            warn("subsystem_vendor", esv)
        if esd is not None:
            warn("subsystem_device", esd)
        sv = _hexattr(sv, 4)
        sd = _hexattr(sd, 4)
        if eovr is not None:
            warn("driver_override", eovr)
        if override in ("(null)", ""):
            override = None
        if enuma is not None:
            warn("numa_node", enuma)
        numa = _intattr(numa)
        if numa is not None and numa < 0:
            numa = None
        if espeed is not None:
            warn("current_link_speed", espeed)
        link = None
        if speed is not None:
            (width, ew), (max_speed, ems), (max_width, emw) = read_attrs_real(base, _LINK_ATTRS)
            for name, err in (("current_link_width", ew), ("max_link_speed", ems), ("max_link_width", emw)):
                if err is not None:
                    warn(name, err)
            link = {
                "speed": speed,
                "width": _intattr(width),
                "max_speed": max_speed,
                "max_width": _intattr(max_width),
            }
        if etotal is not None:
            warn("sriov_totalvfs", etotal)
        sriov = {"totalvfs": 0, "numvfs": 0, "vf_device_id": None, "vfs": []}
        if total is not None:
            sriov["totalvfs"] = kernel_int(total, 0, MAX_VFS) or 0
            if sriov["totalvfs"] == 0 and total not in ("", "0"):
                self.warn("sriov_totalvfs: %r is not a VF count the kernel prints" % total[:40])
            (numvfs, en), (vf_device, evd) = read_attrs_real(base, _SRIOV_ATTRS)
            if en is not None:
                warn("sriov_numvfs", en)
            if evd is not None:
                warn("sriov_vf_device", evd)
            numvfs_text, numvfs = numvfs, kernel_int(numvfs, 0, sriov["totalvfs"])
            if numvfs is None and numvfs_text is not None:
                # bounded by what the device says it has: a garbled count is reported, its links read as they are
                self.warn("sriov_numvfs: %r is not a VF count from 0 to sriov_totalvfs (%d)"
                          % (numvfs_text[:40], sriov["totalvfs"]))
            sriov["numvfs"] = numvfs or 0
            sriov["vf_device_id"] = _hexattr(vf_device, 4)
            vfs = self._vfs_by_routing_id(base, numvfs)
            if vfs is not None:
                idx = ()
            elif numvfs is None:
                vfs = []
                names = sorted((_intattr(n[6:]), n) for n in self.entries() if n.startswith("virtfn"))
                idx = [i for i, _n in names if i is not None]
            else:
                vfs = []
                idx = range(numvfs)
            for start in range(0, len(idx), 256):  # in batches: a garbled sriov_numvfs may be huge
                chunk = idx[start:start + 256]
                for i, target in zip(chunk, readlinks_real(base, ["virtfn%d" % i for i in chunk])):
                    if target is None:
                        self.warn("virtfn%d: missing or not a link although sriov_numvfs is %s" % (i, numvfs))
                        continue
                    a = pci_address(target.rstrip("/").rsplit("/", 1)[-1])
                    if a:
                        vfs.append(a)
            sriov["vfs"] = vfs
        if ecpus is not None:
            warn("local_cpulist", ecpus)
        self.vfs = sriov["vfs"]
        self._identity = {
            "address": self.address,
            "vendor_id": vendor_id,
            "device_id": device_id,
            "subsystem_vendor_id": sv,
            "subsystem_device_id": sd,
            "class_id": class_id,
            "revision": rev,
            "driver": self.driver,
            "driver_override": override,
            "numa_node": numa,
            "local_cpulist": cpus,
            "iommu_group": self.iommu_group,
            "link": link,
            "sriov": sriov,
            "physfn": self.physfn,
            "vf_index": None,
        }
        return self._identity

    def _vfs_by_routing_id(self, base, numvfs):
        """This PF's VFs in virtfnN order without reading the N links, or None (then the links are read). The
        kernel places VF N at routing id PF + sriov_offset + N * sriov_stride (pci_iov_virtfn_bus/devfn) and links
        it as virtfnN; the scan has every function's physfn link. Used only when the scan has exactly
        ``numvfs`` VFs of this PF, each lands on its own N below ``numvfs``, and virtfn0 and the last link point
        where the arithmetic says."""
        found = self._cache.get(("vfs", self.address)) if numvfs else None
        if not found or len(found) != numvfs:
            return None
        (offset, _e1), (stride, _e2) = read_attrs_real(base, _SRIOV_GEOMETRY_ATTRS)
        offset, stride = _intattr(offset), _intattr(stride)
        if offset is None or not stride or stride < 0:
            return None
        start = _routing_id(self.address) + offset
        domain = self.address[:-7]  # "dddd:" (a domain may have more digits)
        vfs = [None] * numvfs
        for a in found:
            if a[:-7] != domain:
                return None
            n, rest = divmod(_routing_id(a) - start, stride)
            if rest or n < 0 or n >= numvfs or vfs[n] is not None:
                return None
            vfs[n] = a
        # the first and the last link must agree (a tree that is not the kernel's: its links win)
        first, last = readlinks_real(base, ("virtfn0", "virtfn%d" % (numvfs - 1)))
        for target, a in ((first, vfs[0]), (last, vfs[-1])):
            if target is None or target.rstrip("/").rsplit("/", 1)[-1] != a:
                return None
        return vfs

    def _warn_err(self, name, err):
        """The warning for an attribute that could not be read (a missing one is silent)."""
        if err != errno.ENOENT:
            self.warn("%s: %s" % (name, errno_text(err)))

    def vf_position(self, address):
        """The N of this PF's virtfnN link that points at ``address`` (needs identity()), or None."""
        return self.vf_positions().get(address)

    def vf_positions(self):
        """VF address -> the N of this PF's first virtfnN link to it (needs identity(); empty before)."""
        pos = self._vf_pos
        if pos is None:
            if self.vfs is None:
                return {}
            pos = self._vf_pos = {}
            for i, a in enumerate(self.vfs):
                pos.setdefault(a, i)
        return pos


class PciScan(object):
    """The result of one pass over /sys/bus/pci/devices."""

    def __init__(self, functions, groups, warnings):
        self.functions = functions  # address -> PciFunction, in address order
        self.groups = groups  # iommu group (int) -> [addresses]
        self.warnings = warnings  # scan-level warnings (vanished devices, unreadable directory)

    def get(self, address):
        return self.functions.get(address)

    def group_members(self, group):
        return list(self.groups.get(group, ())) if group is not None else []

    def vf_index(self, func):
        """The N of the PF's virtfnN link that points at ``func`` (needs the PF's identity)."""
        pf = self.functions.get(func.physfn) if func.physfn else None
        if pf is None:
            return None
        pf.identity()
        return pf.vf_position(func.address)


def _bound_functions(sysfs, names):
    """Address -> kernel driver of the listed functions, from the drivers' directories, or None when reading each
    function's ``driver`` link is cheaper (a host with few functions per driver). The kernel links a bound device into
    its driver's directory under the device's name, and the driver into the device's directory as ``driver``, in
    one step (driver_sysfs_add; driver_sysfs_remove unlinks both): one listing per driver instead of one readlink
    per function (2,912 on the benchmark's host, 19 drivers). A name under two drivers (a tree that is not the
    kernel's) is left out: its ``driver`` link is read."""
    base = sysfs.real(DRIVERS)
    try:
        drivers = os.listdir(base)
    except (OSError, ValueError):
        return None
    # a listing costs about four readlinks (open, fstat, getdents, close); a driver directory also holds bind,
    # unbind, new_id, remove_id, module and uevent
    if len(names) < _LIST_DRIVERS_FACTOR * (len(drivers) + 1):
        return None
    wanted = set(names)
    bound = {}
    twice = set()
    for drv in drivers:
        try:
            entries = os.listdir(base + "/" + drv)
        except (OSError, ValueError):
            continue
        for name in entries:
            if name in wanted:
                if name in bound:
                    twice.add(name)
                else:
                    bound[name] = drv
    for name in twice:
        del bound[name]
    return bound


def scan(sysfs):
    """One pass over the PCI functions: returns a :class:`PciScan`. Never raises for a bad tree."""
    warnings = []
    base = sysfs.real(DEVICES)
    try:
        names = os.listdir(base)
    except (IOError, OSError) as e:
        if e.errno not in (errno.ENOENT, errno.ENOTDIR):
            warnings.append("cannot list %s: %s" % (DEVICES, errno_text(e.errno)))
        else:
            warnings.append("%s does not exist: no PCI functions to discover" % DEVICES)
        names = []
    names.sort()
    functions = {}
    groups = {}
    cache = {}
    readlink = os.readlink
    bound = _bound_functions(sysfs, names) if names else None
    by_target = {}  # physfn link target -> (PF address or None, the PF's VF list in cache)
    get_bound = (bound or {}).get
    for name in names:
        address = pci_address(name)
        if address is None or address != name:
            warnings.append("%s/%s: not a PCI address, skipped" % (DEVICES, name))
            continue
        real = base + "/" + name
        f = PciFunction(address, real, cache)
        # its driver, IOMMU group and physfn links, each as readlink_real reads it (inline: thousands of functions);
        # the driver from its driver's directory when the drivers were listed
        drv = get_bound(name)
        if drv is None:
            try:
                drv = readlink(real + "/driver")
            except (OSError, ValueError):
                drv = None
        try:
            grp = readlink(real + "/iommu_group")
        except (OSError, ValueError):
            grp = None
        try:
            pf = readlink(real + "/physfn")
        except (OSError, ValueError):
            pf = None
        if drv is None and grp is None and pf is None:
            # no link at all: a function with no driver and no IOMMU, or one that went away or cannot be read;
            # its ids tell which (and are read now)
            (vendor, verr), (device, derr), (cls, cerr) = read_attrs_real(real + "/", _ID_ATTRS)
            if verr == errno.ENOENT and derr == errno.ENOENT and not os.path.exists(real):
                warnings.append("%s: the device went away during the scan (it was listed in %s but its "
                                "directory is gone); skipped" % (address, DEVICES))
                continue
            if verr is not None and verr == derr == cerr and verr not in (errno.ENOENT, errno.EACCES) \
                    and not os.path.isdir(real):
                # not a directory one can read at all (a symlink loop, a file): nothing to report it by
                warnings.append("%s: cannot read the device directory %s/%s: %s; skipped" % (
                    address, DEVICES, name, errno_text(verr)))
                continue
            f.set_ids(vendor, verr, device, derr, cls, cerr)
        if drv:
            f.driver = drv.rstrip("/").rsplit("/", 1)[-1]
        if grp:
            g = _intattr(grp.rstrip("/").rsplit("/", 1)[-1])
            if g is None:
                f.warn("iommu_group: unexpected link target %r" % grp[:80])
            else:
                f.iommu_group = g
                groups.setdefault(g, []).append(address)
        if pf:
            # the VFs of a PF share one link target: its PF's address and VF list are worked out once
            vfs_of = by_target.get(pf)
            if vfs_of is None:
                pfa = pci_address(pf.rstrip("/").rsplit("/", 1)[-1])
                vfs_of = by_target[pf] = (pfa, cache.setdefault(("vfs", pfa), []) if pfa else None)
            f.physfn = vfs_of[0]
            if vfs_of[1] is not None:
                vfs_of[1].append(address)
        functions[address] = f
    _cut_physfn_chains(functions, cache)
    return PciScan(functions, groups, warnings)


def _cut_physfn_chains(functions, cache):
    """The kernel links a VF to its PF, never to another VF: a ``physfn`` that points at a function with a
    ``physfn`` of its own (a cycle between two functions, a function naming itself, a chain) is reported on the
    function and not followed (its ``physfn`` is dropped), so nothing downstream walks the PCI graph in a loop."""
    cut = [f for f in functions.values() if f.physfn and functions.get(f.physfn) is not None
           and functions[f.physfn].physfn]
    for f in cut:
        pf = functions[f.physfn]
        f.warn("physfn: points at %s, which is itself a VF (its physfn is %s); a cycle or chain in the PCI graph "
               "the kernel never makes, not followed" % (pf.address, pf.physfn))
    for f in cut:
        vfs = cache.get(("vfs", f.physfn))
        if vfs is not None and f.address in vfs:
            vfs.remove(f.address)
        f.physfn = None


class PciIds(object):
    """Names from a pci.ids file, looked up lazily: the file is read once, and only the vendor blocks
    that are asked about are searched (no full parse)."""

    def __init__(self, path):
        self.path = path
        self._data = None
        self._vendors = {}  # vid -> (start, end) of its block, or None
        self._memo = {}
        self.error = None

    def _load(self):
        if self._data is None:
            self._data = b""
            if self.path:
                try:
                    with open(self.path, "rb") as f:
                        # read(n) allocates n bytes first: ask for the file's size (and one more, to see it has not
                        # grown), not for the limit (0.4 ms for the 64 MiB buffer, four times the read itself)
                        size = os.fstat(f.fileno()).st_size
                        data = f.read(size + 1 if 0 < size < _PCI_IDS_LIMIT else _PCI_IDS_LIMIT)
                        if len(data) > size:
                            data += f.read(_PCI_IDS_LIMIT - len(data))
                        self._data = data
                except (IOError, OSError) as e:
                    self.error = "cannot read %s: %s" % (self.path, errno_text(e.errno))
        return self._data

    @staticmethod
    def _name(data, start):
        end = data.find(b"\n", start)
        if end < 0:
            end = len(data)
        return data[start:end].strip().decode("utf-8", "replace") or None

    def _vendor_block(self, vid):
        if vid in self._vendors:
            return self._vendors[vid]
        data = self._load()
        key = b"\n" + vid.encode("ascii") + b"  "
        pos = data.find(key)
        block = None
        if pos >= 0:
            start = pos + len(key)
            # the block runs until the next line that does not start with a tab or '#'
            m = _BLOCK_END.search(data, start)
            end = m.start() if m else len(data)
            block = (pos + 1, start, end)
        self._vendors[vid] = block
        return block

    def _memoized(self, lookup, *args):
        """``lookup(*args)``, computed once per argument tuple (pci.ids answers are reused across devices)."""
        key = (lookup.__name__,) + args
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = lookup(*args)
            return value

    def names(self, vid, did, svid, sdid, class_id):
        """``(vendor, device, subsystem, class)`` names of one function, memoised on the whole tuple (a
        host has few distinct ones)."""
        key = (vid, did, svid, sdid, class_id)
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = (self.vendor(vid), self.device(vid, did),
                                       self.subsystem(vid, did, svid, sdid), self.class_name(class_id))
            return value

    def vendor(self, vid):
        return self._memoized(self._vendor, vid)

    def _vendor(self, vid):
        if not vid:
            return None
        block = self._vendor_block(vid)
        return self._name(self._data, block[1]) if block else None

    def device(self, vid, did):
        return self._memoized(self._device, vid, did)

    def _device(self, vid, did):
        if not vid or not did:
            return None
        block = self._vendor_block(vid)
        if not block:
            return None
        key = b"\n\t" + did.encode("ascii") + b"  "
        pos = self._data.find(key, block[1], block[2])
        return self._name(self._data, pos + len(key)) if pos >= 0 else None

    def subsystem(self, vid, did, svid, sdid):
        return self._memoized(self._subsystem, vid, did, svid, sdid)

    def _subsystem(self, vid, did, svid, sdid):
        if not (vid and did and svid and sdid):
            return None
        block = self._vendor_block(vid)
        if not block:
            return None
        key = b"\n\t" + did.encode("ascii") + b"  "
        pos = self._data.find(key, block[1], block[2])
        if pos < 0:
            return None
        m = _DEVICE_END.search(self._data, pos + len(key), block[2])
        dend = m.start() if m else block[2]
        skey = b"\n\t\t" + svid.encode("ascii") + b" " + sdid.encode("ascii") + b"  "
        spos = self._data.find(skey, pos, dend)
        return self._name(self._data, spos + len(skey)) if spos >= 0 else None

    def class_name(self, class_id):
        return self._memoized(self._class_name, class_id)

    def _class_name(self, class_id):
        """Name of the sub-class ('0302' of '030200'), else of the base class."""
        if not class_id or len(class_id) < 4:
            return None
        data = self._load()
        # "C xx" lines are only in the class list, which ends the file: searched from the end (from the start, the
        # search crosses the whole vendor list, 1.3 ms; vendor ids are lower-case hex and device lines start with a tab)
        key = b"\nC " + class_id[:2].encode("ascii") + b"  "
        pos = data.rfind(key)
        if pos < 0:
            return None
        base = self._name(data, pos + len(key))
        nxt = data.find(b"\nC ", pos + len(key))
        if nxt < 0:
            nxt = len(data)
        skey = b"\n\t" + class_id[2:4].encode("ascii") + b"  "
        spos = data.find(skey, pos, nxt)
        return self._name(data, spos + len(skey)) if spos >= 0 else base


def find_pci_ids(sysfs, explicit=None):
    """The pci.ids file to use: ``explicit`` (a path on this machine) when given, else the first
    standard location under the root, else on this machine. None when none exists."""
    if explicit:
        return explicit if os.path.isfile(explicit) else None
    for p in PCI_IDS_PATHS:
        under = sysfs.real(p)
        if os.path.isfile(under):
            return under
    for p in PCI_IDS_PATHS:
        if os.path.isfile(p):
            return p
    return None
