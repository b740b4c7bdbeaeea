# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Discovery: every accelerator and assignable unit on a host as plain data.

    sysfs = Sysfs(root="/")
    result = discover(sysfs, families=["gpu"], include_all=False)
    result["accelerators"]   # records, schema in docs/discovery.md
    result["host"]           # hostname, kernel, what was scanned
    result["warnings"]       # host-level warnings; device-level ones are in each record

Steps: one pass over the PCI functions (:func:`_pci.scan`), one driver per function from the
registry (:mod:`_drivers`), filters, then the identity and the driver's description of each
remaining function, and in-use evidence collected once (:mod:`_inuse`). Nothing here raises for a
bad tree: problems become warnings. Bad *options* raise :class:`OptionError`.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import fnmatch
import gc
import os
import re
import socket

from ansible_collections.accelops.lifecycle.plugins.module_utils import _inuse, _pci, _tools
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import FAMILIES, Registry
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs, isdir_real, read_attr_real
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

__metaclass__ = type

SCHEMA_VERSION = 1
VF_DETAILS = ("full", "summary")
DEFAULT_LIBVIRT_RUN_DIR = "/run/libvirt/qemu"
TOOL_TIMEOUT = 30
# the settings of a family's discovery tool option (``Driver.discovery_tool``) that turn the tool off
TOOL_OFF = ("never", "none", "off", "false", "no", "")

_VENDOR_RE = re.compile(r"^(0x)?[0-9a-fA-F]{4}$")
_ADDR_PATTERN_RE = re.compile(r"^[0-9a-fA-F:.*?\[\]!-]+$")

# Key order of a record (stable; documented in docs/discovery.md).
RECORD_KEYS = (
    "address", "family", "handler", "vendor_id", "device_id", "subsystem_vendor_id",
    "subsystem_device_id", "class_id", "revision", "vendor_name", "device_name", "subsystem_name",
    "class_name", "driver", "driver_override", "numa_node", "local_cpulist", "iommu_group",
    "iommu_group_members", "iommu_group_drivers", "link", "sriov", "physfn", "vf_index", "programming_model",
    "function", "healthy", "units", "gpu", "fpga", "qat", "nic", "warnings",
)


class OptionError(ValueError):
    """A discovery option has a bad value; the message names the option and the accepted form."""


# -- options ---------------------------------------------------------------------------------------
def normalize_options(families=None, vendor_ids=None, addresses=None):
    """Validate and normalise the filters. Returns ``(families set|None, vendor set|None,
    address patterns|None)``; raises :class:`OptionError`."""
    fams = None
    if families:
        if isinstance(families, str):
            families = families.split(",")
        fams = set()
        for f in families:
            f2 = ("%s" % (f,)).strip().lower()
            if f2 not in FAMILIES:
                raise OptionError("families: %r is not a family; use a list of: %s" % (f, ", ".join(FAMILIES)))
            fams.add(f2)
    vendors = None
    if vendor_ids:
        if isinstance(vendor_ids, str):
            vendor_ids = vendor_ids.split(",")
        vendors = set()
        for v in vendor_ids:
            v2 = ("%s" % (v,)).strip()
            if not _VENDOR_RE.match(v2):
                raise OptionError("vendor_ids: %r is not a PCI vendor id; use 4 hex digits such as "
                                  "'10de' or '0x10de'" % (v,))
            vendors.add(v2.lower()[-4:])
    pats = None
    if addresses:
        if isinstance(addresses, str):
            addresses = addresses.split(",")
        pats = []
        for a in addresses:
            a2 = ("%s" % (a,)).strip().lower()
            norm = pci_address(a2)
            if norm:
                pats.append(norm)
                continue
            if any(c in a2 for c in "*?[") and _ADDR_PATTERN_RE.match(a2):
                if a2.count(":") == 1:
                    a2 = "0000:" + a2
                pats.append(a2)
                continue
            raise OptionError("addresses: %r is not a PCI address; use DDDD:BB:SS.F or BB:SS.F (hex), "
                              "optionally with shell wildcards such as '0000:3b:*'" % (a,))
    return fams, vendors, pats


# -- context handed to drivers ------------------------------------------------------------------------
def discovery_tools(drivers):
    """``{tool: (module option, what discovery reads with it)}``: the vendor tools the families' drivers name
    (``Driver.discovery_tool``), each with the option that says where it is or that it is not to be run."""
    out = {}
    for drv in drivers:
        if drv.discovery_tool is not None:
            tool, option, reads = drv.discovery_tool
            out.setdefault(tool, (option, reads))
    return out


class Context(object):
    """What drivers may use while describing: the sysfs layer, the scan, pci.ids names, in-use
    evidence, a per-discovery cache, host-level warnings and read-only tools."""

    def __init__(self, sysfs, scan, pci_ids=None, inuse=None, tool_settings=None):
        self.sysfs = sysfs
        self.scan = scan
        self.pci_ids = pci_ids
        self.inuse = inuse
        self.cache = {}
        self.warnings = []
        self.tools = {}  # name -> path used (or None)
        # tool -> (option, its setting: auto, one of TOOL_OFF or a path, what is not read without it)
        self.tool_settings = dict(tool_settings or {})

    def warn(self, message):
        if message not in self.warnings:
            self.warnings.append(message)

    def _setting(self, name):
        option, value, reads = self.tool_settings.get(name, (None, "auto", None))
        return option, ("%s" % (value,)).strip(), reads

    def tool_enabled(self, name):
        """False when the tool's option turns it off (a tool no option names is always enabled)."""
        return self._setting(name)[1].lower() not in TOOL_OFF

    def find_tool(self, name):
        """A tool's path on this machine: the path its option gives, else (``auto``) the one tool finder's. With a
        root other than '/', only <root>/usr/bin etc. are looked at (the simulated host's tools), never this
        machine's."""
        value = self._setting(name)[1]
        if not self.tool_enabled(name):
            return None
        if value.lower() != "auto":
            return value if os.access(value, os.X_OK) else None
        return _tools.find_tool(self.sysfs, name)

    def run_tool(self, name, args, timeout=TOOL_TIMEOUT):
        """Run a read-only query tool: ``(rc, stdout, stderr)`` or None when it is not installed.
        Failures to start it become a warning and None."""
        if name not in self.tools:
            self.tools[name] = self.find_tool(name)
            option, value, reads = self._setting(name)
            if self.tools[name] is None and self.tool_enabled(name) and value.lower() != "auto":
                self.warn("%s: %s is not an executable file; %s not read" % (option, value, reads))
        path = self.tools[name]
        if path is None:
            return None
        try:
            return _tools.run_captured([path] + list(args), timeout)
        except _tools.ToolError as e:
            self.warn(str(e))
            return None


# -- discovery -----------------------------------------------------------------------------------------
def _host_info(sysfs):
    host, _e = read_attr_real(sysfs.real("/proc/sys/kernel/hostname"))
    kernel, _e = read_attr_real(sysfs.real("/proc/sys/kernel/osrelease"))
    if not host:
        host, _e = read_attr_real(sysfs.real("/etc/hostname"))
    if sysfs.root == "/":
        host = host or socket.gethostname()
        if not kernel:
            try:
                kernel = os.uname()[2]
            except (AttributeError, OSError):
                kernel = None
    return host, kernel


def _unit(kind, uid, address, utype, group, cdev, inuse):
    ev = []
    if inuse is not None:
        # look up only when some source has evidence for one of the unit's keys (most units have none)
        if kind == "mdev":
            hit = uid in inuse.by_uuid
        else:
            hit = address in inuse.by_address
        if hit or group in inuse.by_group or (cdev is not None and cdev in inuse.by_cdev):
            ev = inuse.lookup(address=address if kind != "mdev" else None, uuid=uid if kind == "mdev" else None,
                              iommu_group=group, cdev=cdev)
    return {"kind": kind, "id": uid, "address": address, "type": utype, "iommu_group": group,
            "in_use": bool(ev), "in_use_by": ev}


def _vfio_cdev(func):
    """The function's VFIO cdev name (vfioN) when a VFIO driver is bound and exposes one."""
    if not func.driver or "vfio" not in func.driver:
        return None
    try:
        names = sorted(n for n in os.listdir(func.real + "/vfio-dev") if n.startswith("vfio"))
    except (IOError, OSError):
        return None
    return names[0] if names else None


def _describe(func, driver, ctx, folded=False):
    """The driver's description of ``func``, or with ``folded`` what a VF folded into its PF's record needs
    (never raises: a failure is a warning on the function)."""
    try:
        if folded:
            return driver.describe_folded_vf(func, ctx) or {}
        return driver.describe(func, ctx) or {}
    except Exception as e:  # a driver bug or a tree it did not expect: keep the identity
        func.warn("driver %s could not describe this function: %s: %s" % (driver.name, type(e).__name__, e))
        return {}


def _units(func, unit_type, more_units, ctx):
    """The function's own unit (kind ``vf`` for a VF, else ``device``) and the driver's extra units."""
    inuse = ctx.inuse
    main_addr = func.address
    kind = "vf" if func.physfn else "device"
    cdev = _vfio_cdev(func) if func.driver and "vfio" in func.driver else None
    units = [_unit(kind, main_addr, main_addr, unit_type, func.iommu_group, cdev, inuse)]
    for u in more_units:
        units.append(_unit(u["kind"], u["id"], u.get("address", main_addr), u.get("type"),
                           u.get("iommu_group"), None, inuse))
    return units


def _check_present(func):
    if not isdir_real(func.real):
        func.warn("the device went away during the scan; what is reported was read before it did")


def build_record(func, driver, ctx):
    """The discovery record of one function (see docs/discovery.md). Never raises: an unexpected
    failure leaves the fields read so far and a warning in the record."""
    # every key of RECORD_KEYS, in that order; what the first pass read is filled in already, so that even a
    # record cut short says what the device is
    rec = {
        "address": func.address, "family": driver.family, "handler": driver.name, "vendor_id": func.vendor_id,
        "device_id": func.device_id, "subsystem_vendor_id": None, "subsystem_device_id": None,
        "class_id": func.class_id, "revision": None, "vendor_name": None, "device_name": None,
        "subsystem_name": None, "class_name": None, "driver": func.driver, "driver_override": None,
        "numa_node": None, "local_cpulist": None, "iommu_group": func.iommu_group, "iommu_group_members": None,
        "iommu_group_drivers": None, "link": None, "sriov": None, "physfn": func.physfn, "vf_index": None, "programming_model": None,
        "function": None, "healthy": None, "units": [], "gpu": None, "fpga": None, "qat": None, "nic": None,
        "warnings": None,
    }
    try:
        _fill_record(rec, func, driver, ctx)
    except Exception as e:  # last resort: never a traceback for one odd device
        func.warn("discovery of this function failed part-way: %s: %s" % (type(e).__name__, e))
    rec["warnings"] = list(func.warnings)
    return rec


def _fill_record(rec, func, driver, ctx):
    try:
        rec.update(func.identity())
        sriov = rec["sriov"] = dict(rec["sriov"])  # the record's own copy (identity() is cached per function)
        sriov["vfs"] = list(sriov["vfs"])
        sriov["vf_units"] = None
    except Exception as e:  # identity() reads defensively; this is a last resort
        func.warn("reading the PCI identity failed: %s" % e)
    scan = ctx.scan
    if func.physfn:
        rec["vf_index"] = scan.vf_index(func)
    members = rec["iommu_group_members"] = scan.group_members(func.iommu_group)
    # what VFIO's viability rule needs (hostdev_units): the scan already read every member's driver
    functions = scan.functions
    rec["iommu_group_drivers"] = {a: (functions[a].driver if a in functions else None) for a in members}
    ids = ctx.pci_ids
    if ids is not None:
        rec["vendor_name"], rec["device_name"], rec["subsystem_name"], rec["class_name"] = ids.names(
            func.vendor_id, func.device_id, rec["subsystem_vendor_id"], rec["subsystem_device_id"], func.class_id)
    rec["programming_model"] = driver.programming_model
    extra = _describe(func, driver, ctx)
    unit_type = extra.pop("unit_type", None)
    more_units = extra.pop("units", None) or []
    for k, v in extra.items():
        if k in rec:
            rec[k] = v
    rec["units"] = _units(func, unit_type, more_units, ctx)
    _check_present(func)


def _vf_unit_order(pf):
    """The sort key of ``sriov.vf_units``: by VF index (VFs without one last, by address), a VF's own unit first.
    A VF's own unit leaves out its index when it is its place in the PF's ``sriov.vfs`` (``pf``'s)."""
    position = pf.vf_positions().get

    def order(u):
        i = u["vf_index"] if "vf_index" in u else position(u["address"])
        return (i is None, i, u["address"], u["kind"] != "vf")
    return order


def vf_units(func, driver, ctx, pf=None):
    """What ``vf_detail: summary`` keeps of a VF whose PF is reported: its units (the VF itself
    first, then e.g. mdevs on it), each with the VF's ``vf_index``, ``driver``, ``mac`` and
    ``netdev``. Reads only what that needs (no identity attributes). ``pf``: the VF's PF's
    :class:`_pci.PciFunction` when the caller has it. Never raises."""
    try:
        extra = _describe(func, driver, ctx, folded=True)
        nic = extra.get("nic")
        ifs = nic.get("interfaces") if nic else None
        # with the PF at hand the VF's own unit leaves its index out (its place in the PF's sriov.vfs)
        vf_index = None if pf is not None else ctx.scan.vf_index(func)
        mac = nic.get("mac") if nic else None
        netdev = ifs[0].get("name") if ifs else None
        address = func.address
        group = func.iommu_group
        drv = func.driver
        inuse = ctx.inuse
        cdev = _vfio_cdev(func) if drv and "vfio" in drv else None
        # the VF's own unit as _unit() makes it, with the VF's facts, built in one go (thousands on a large host)
        if inuse is not None and (address in inuse.by_address or group in inuse.by_group
                                  or (cdev is not None and cdev in inuse.by_cdev)):
            ev = inuse.lookup(address=address, iommu_group=group, cdev=cdev)
        else:
            ev = []
        units = [_folded_vf_unit(address, extra.get("unit_type"), group, ev, vf_index, pf is not None, drv, mac, netdev)]
        more_units = extra.get("units")
        if more_units:
            if pf is not None:
                vf_index = pf.vf_position(address)
            more = {"vf_index": vf_index, "driver": drv, "mac": mac, "netdev": netdev}
            for u in more_units:
                unit = _unit(u["kind"], u["id"], u.get("address", address), u.get("type"), u.get("iommu_group"),
                             None, inuse)
                unit.update(more)
                units.append(unit)
        if mac is None:
            # a MAC read from below the device is the last read of a folded NIC VF: it was there after the scan
            _check_present(func)
    except Exception as e:  # last resort, as in build_record
        func.warn("discovery of this function failed part-way: %s: %s" % (type(e).__name__, e))
        units = [_folded_vf_unit(func.address, None, func.iommu_group, None, None, False, func.driver, None, None)]
    return units


def _folded_vf_unit(address, utype, group, ev, vf_index, index_is_position, drv, mac, netdev):
    """A VF's own unit in ``sriov.vf_units``, in the compact form (docs/discovery.md, "VF detail"): the unit of a
    full record less ``id`` (the VF's address), ``type`` when null and ``in_use_by`` when empty, plus the VF's
    facts, of which ``vf_index`` only when it is not its place in the PF's ``sriov.vfs`` (``index_is_position``:
    it was read from there); ``_vocab.record_units`` gives it back whole. Thousands on a large host: the keys left
    out are a third of the module's result and of ansible-core's work on it (a number costs it most)."""
    if utype is None and not ev and index_is_position:
        return {"kind": "vf", "address": address, "iommu_group": group, "in_use": False, "driver": drv, "mac": mac,
                "netdev": netdev}
    unit = {"kind": "vf", "address": address}
    if utype is not None:
        unit["type"] = utype
    unit["iommu_group"] = group
    unit["in_use"] = bool(ev)
    if ev:
        unit["in_use_by"] = ev
    if not index_is_position:
        unit["vf_index"] = vf_index
    unit.update(driver=drv, mac=mac, netdev=netdev)
    return unit


def discover(sysfs=None, families=None, vendor_ids=None, addresses=None, include_all=False,
             libvirt_run_dir=DEFAULT_LIBVIRT_RUN_DIR, pci_ids_path=None,
             in_use=True, registry=None, root="/", vf_detail="full", keep_inuse=False, **tool_options):
    """Discover accelerators. ``sysfs`` is a :class:`Sysfs` (or one is made for ``root``).

    Filters: ``families`` (subset of gpu/fpga/nic/qat/pci), ``vendor_ids`` (hex ids), ``addresses``
    (PCI addresses or shell patterns; a PF's address also selects its VFs, either PF of a Xilinx card
    selects the card). Functions no accelerator driver claims (family ``pci``) are reported only with
    ``include_all`` or when ``families`` names ``pci``; so is, as a family ``pci`` record of its own, a
    function that a driver reports inside another function's record (an Alveo's management PF).

    ``vf_detail``: ``full`` (every VF is a record of its own) or ``summary`` (a VF whose PF is reported
    too is not a record: its units, with its index, driver and MAC, are in the PF record's
    ``sriov.vf_units`` and its warnings in the PF record's, prefixed with its address; drivers whose VFs
    are accelerators with family data of their own, FPGA ports, keep them as records).

    ``tool_options``: where a family's vendor tool is (``auto``: looked up; a path; ``never``: not run), by the option
    its driver names (``Driver.discovery_tool``: ``nvidia_smi``); the host's ``<option>`` is the tool that was run.

    Returns ``{"schema_version", "accelerators": [records], "host": {...}, "warnings": [...]}``.
    Raises :class:`OptionError` for bad options only.
    """
    fams, vendors, pats = normalize_options(families, vendor_ids, addresses)
    vf_detail = ("%s" % (vf_detail or "full",)).strip().lower()
    if vf_detail not in VF_DETAILS:
        raise OptionError("vf_detail: %r is not one of %s" % (vf_detail, ", ".join(VF_DETAILS)))
    if sysfs is None:
        sysfs = Sysfs(root=root)
    # Discovery builds tens of thousands of dicts and lists and frees none of them: the cyclic garbage
    # collector's passes over that growing, acyclic heap are pure cost (several per cent of a large host's
    # discovery), so it is paused for the duration and restored as it was.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _discover(sysfs, fams, vendors, pats, include_all, libvirt_run_dir, tool_options, pci_ids_path,
                         in_use, registry, vf_detail, keep_inuse)
    finally:
        if paused:
            gc.enable()


def _discover(sysfs, fams, vendors, pats, include_all, libvirt_run_dir, tool_options, pci_ids_path, in_use,
              registry, vf_detail, keep_inuse=False):
    registry = registry or Registry()
    tools = discovery_tools(registry.drivers)
    settings = dict((tool, (option, tool_options.get(option, "auto"), reads)) for tool, (option, reads) in tools.items())
    unknown = set(tool_options) - set(option for option, _reads in tools.values())
    if unknown:
        # a built-in family's option is accepted (and unused) with a registry that lacks the family
        unknown -= set(option for option, _reads in discovery_tools(Registry().drivers).values())
    if unknown:
        raise TypeError("discover() got an unexpected keyword argument %r" % sorted(unknown)[0])
    scan = _pci.scan(sysfs)
    pci_ids_file = _pci.find_pci_ids(sysfs, pci_ids_path)
    warnings = list(scan.warnings)
    if pci_ids_path and pci_ids_file is None:
        warnings.append("pci_ids_path: %s is not a readable file; names are not reported" % pci_ids_path)
    ids = _pci.PciIds(pci_ids_file) if pci_ids_file else None
    ctx = Context(sysfs, scan, ids, None, settings)

    # a function reported inside another's record (an Alveo's management PF) also gets a record of its own, from
    # the generic driver, whenever the non-accelerator functions are reported: every function lspci lists has one
    want_pci = include_all or (fams is not None and "pci" in fams)
    generic = None
    selected = []
    for func in scan.functions.values():
        drv = registry.claim(func, scan, ctx)
        if drv.family != "pci":
            try:
                secondary = drv.is_secondary(func, ctx)
            except Exception as e:
                func.warn("driver %s failed to group this function: %s" % (drv.name, e))
                secondary = False
            if secondary:
                if not want_pci:
                    continue
                if generic is None:
                    generic = registry.generic()
                drv = generic
        if drv.family == "pci" and not want_pci:
            continue
        if fams is not None and drv.family not in fams:
            continue
        if vendors is not None and func.vendor_id not in vendors:
            continue
        if pats is not None:
            try:
                rel = drv.related_addresses(func, ctx)
                if not any(fnmatch.fnmatchcase(a, p) for a in rel for p in pats):
                    continue
            except Exception as e:
                func.warn("driver %s failed to group this function: %s" % (drv.name, e))
        selected.append((func, drv))

    if in_use and selected:
        ctx.inuse = _inuse.collect(sysfs, libvirt_run_dir, processes=True, drivers=registry.drivers)
        warnings.extend(ctx.inuse.warnings)
    else:
        ctx.inuse = _inuse.InUse()
    records = []
    if vf_detail == "summary":
        reported = set(func.address for func, _drv in selected)
        folded = {}  # PF address -> [(func, driver)] of its VFs
        for func, drv in selected:
            if func.physfn and func.physfn in reported and func.physfn != func.address \
                    and getattr(drv, "summarize_vfs", True):
                folded.setdefault(func.physfn, []).append((func, drv))
            else:
                records.append(build_record(func, drv, ctx))
        for rec in list(records):
            vfs = folded.get(rec["address"])
            if not vfs:
                continue
            if not isinstance(rec.get("sriov"), dict):  # the PF's identity failed: its VFs stay records
                records.extend(build_record(func, drv, ctx) for func, drv in vfs)
                continue
            units = []
            warns = rec["warnings"]
            pf = scan.get(rec["address"])  # its identity() was read for its record: vf_position() is ready
            for func, drv in vfs:
                units.extend(vf_units(func, drv, ctx, pf))
                if func.warnings:
                    warns.extend("VF %s: %s" % (func.address, w) for w in func.warnings)
            units.sort(key=_vf_unit_order(pf))
            rec["sriov"]["vf_units"] = units
        records.sort(key=lambda r: r["address"])
    else:
        records = [build_record(func, drv, ctx) for func, drv in selected]
    if ids is not None and ids.error:
        warnings.append(ids.error)
    warnings.extend(ctx.warnings)
    hostname, kernel = _host_info(sysfs)
    host = {
        "hostname": hostname,
        "kernel": kernel,
        "root": sysfs.root,
        "pci_functions": len(scan.functions),
        "iommu": bool(scan.groups),
        "libvirt_run_dir": libvirt_run_dir or None,
        "domains": [d["name"] for d in ctx.inuse.domains],
        "processes_scanned": ctx.inuse.processes_scanned,
    }
    for tool, (option, _reads) in tools.items():
        host[option] = ctx.tools.get(tool)
    host.update(pci_ids=pci_ids_file, vf_detail=vf_detail)
    found = {"schema_version": SCHEMA_VERSION, "accelerators": records, "host": host, "warnings": warnings}
    if keep_inuse:
        # the scan itself (an _inuse.InUse, not JSON), for a caller that plans changes from the same evidence
        found["inuse"] = ctx.inuse
    return found
