# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""SR-IOV programming: the VF count of a PF, the driver the VFs are bound to, and a NIC's per-VF MAC, VLAN and
trust; plus :class:`HostOps`, what every programming engine of this collection shares (tools under the host root
with a time limit, in-use evidence, audited sysfs writes).

    ops = HostOps(sysfs, run=module_run, auditor=Auditor(module))
    plan, info = plan_sriov(ops, "0000:d8:00.0", SriovDesired(num_vfs=8, vf_driver="vfio-pci"))
    result = _plan.execute(plan, check_mode)

Kernel rules this follows: a PF must go to 0 VFs before another non-zero count; a VF is bound to another driver
with ``driver_override`` + ``unbind`` + ``drivers_probe``; MAC/VLAN/trust of a VF are only known to the PF's
driver (netlink), so they are read and set with ``ip link`` (``ip -d -j link show dev <pf>``).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import json
import os
import re

from ansible_collections.accelops.lifecycle.plugins.module_utils import _inuse, _tools
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_sriov_pf
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import Job, tool_program
from ansible_collections.accelops.lifecycle.plugins.module_utils._inuse import evidence_text
from ansible_collections.accelops.lifecycle.plugins.module_utils._pci import MAX_VFS
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan, ProgrammingError
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import SysfsError, kernel_int

DEVICES = "/sys/bus/pci/devices"
DRIVERS = "/sys/bus/pci/drivers"
TOOL_TIMEOUT = 60
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


class HostOps(object):
    """What a programming engine needs from the host besides reads: audited sysfs writes, tools (found under
    the host root like discovery finds them, run through ``run(argv) -> (rc, out, err)`` with a time limit)
    and in-use evidence (collected once, refreshed with :meth:`refresh_inuse`)."""

    def __init__(self, sysfs, run=None, auditor=None, tool_timeout=TOOL_TIMEOUT, libvirt_run_dir="/run/libvirt/qemu",
                 tool_paths=None, inuse=None):
        self.sysfs = sysfs
        self._run = run
        self.auditor = auditor
        self.tool_timeout = tool_timeout
        self.libvirt_run_dir = libvirt_run_dir
        self.tools = _tools.ToolRunner(sysfs, run=run, timeout=tool_timeout, tool_paths=tool_paths)
        self._inuse = inuse

    # -- sysfs ------------------------------------------------------------------------------------------
    def read(self, path):
        return self.sysfs.read_optional(path)

    def write(self, path, value, action=None, device=None, old=None, new=None):
        self.sysfs.write(path, value)
        if self.auditor is not None and action:
            self.auditor.record(action, device, old, new)

    def writer(self, path, value, action=None, device=None, old=None, new=None):
        """A plan action that writes ``value`` to ``path`` (and audits it)."""
        return lambda: self.write(path, value, action, device, old, new)

    def wrap(self, fn, action, device, old=None, new=None):
        """A plan action that runs ``fn`` and audits it when it succeeds."""
        def run():
            out = fn()
            if self.auditor is not None:
                self.auditor.record(action, device, old, new)
            return out
        return run

    # -- tools ------------------------------------------------------------------------------------------
    def find_tool(self, name):
        return self.tools.find(name)

    def can_run(self):
        """Whether tools can be run (a command runner was given)."""
        return self._run is not None

    def run_tool(self, name, args, check=True):
        """Run a tool. Returns (rc, out, err); with ``check`` a non-zero exit, a missing tool or a timeout raise
        :class:`ProgrammingError` naming the command and the cause (:mod:`_tools`' wording)."""
        path = self.find_tool(name)
        if path is None:
            raise ProgrammingError(str(_tools.not_installed(self.sysfs, name)))
        if self._run is None:
            raise ProgrammingError("cannot run %s: no command runner was given" % name)
        try:
            return self.tools.run(path, args, check=check)
        except _tools.ToolError as e:
            raise ProgrammingError(str(e))

    # -- in use -----------------------------------------------------------------------------------------
    def inuse(self):
        if self._inuse is None:
            self._inuse = _inuse.collect(self.sysfs, self.libvirt_run_dir)
        return self._inuse

    def refresh_inuse(self):
        self._inuse = None
        return self.inuse()

    def group_of(self, address):
        g = self.sysfs.link_name("%s/%s/iommu_group" % (DEVICES, address))
        try:
            return int(g) if g is not None else None
        except ValueError:
            return None

    def evidence(self, address=None, uuid=None, group=None):
        return self.inuse().lookup(address=address, uuid=uuid, iommu_group=group)


def blocking(evidence, force):
    """The evidence that blocks a change: everything without ``force``; with ``force`` all but processes (a process
    holding a VFIO group can be overridden; a running domain, or a vGPU holding a MIG GPU instance, never)."""
    if not force:
        return list(evidence)
    return [e for e in evidence if e["kind"] != "process"]


def blocked_error(plan, what):
    lines = ["%s: %s" % (b["target"], b["reason"] + (" - " + evidence_text(b["evidence"]) if b["evidence"] else ""))
             for b in plan.blocked]
    return ProgrammingError("refusing to %s: %s" % (what, "; ".join(lines)), blocked=plan.blocked)


# -- reading a PF ---------------------------------------------------------------------------------------------
def vf_address(pf, offset, stride, index):
    dom, bus, rest = pf.split(":")
    slot, fn = rest.split(".")
    rid = (int(bus, 16) << 8) | (int(slot, 16) << 3) | int(fn, 16)
    rid += offset + index * stride
    return "%s:%02x:%02x.%x" % (dom, (rid >> 8) & 0xff, (rid >> 3) & 0x1f, rid & 7)


def _int(text):
    return kernel_int(text)


def resolve_address(sysfs, address, option="address"):
    addr = pci_address(address) if isinstance(address, str) else None
    if addr is None:
        raise ProgrammingError("%s: %r is not a PCI address; use DDDD:BB:SS.F or BB:SS.F (hex)" % (option, address))
    if not sysfs.exists("%s/%s" % (DEVICES, addr)):
        raise ProgrammingError("%s: no PCI device %s on this host (%s/%s does not exist)" % (option, addr, DEVICES, addr))
    return addr


def read_vf(sysfs, address, index):
    base = "%s/%s" % (DEVICES, address)
    override = sysfs.read_optional(base + "/driver_override")
    if override in ("(null)", ""):
        override = None
    nets = sysfs.listdir(base + "/net")
    return {"index": index, "address": address, "driver": sysfs.link_name(base + "/driver"), "driver_override": override,
            "netdev": nets[0] if nets else None}


def read_pf(sysfs, address):
    """The SR-IOV state of a PF. Raises :class:`ProgrammingError` for a VF or a function without SR-IOV."""
    base = "%s/%s" % (DEVICES, address)
    physfn = sysfs.resolve(base + "/physfn")
    if sysfs.exists(base + "/physfn"):
        pf = os.path.basename(physfn) if physfn else "its PF"
        raise ProgrammingError("address: %s is a VF (of %s); give the PF's address" % (address, pf))
    total_text = sysfs.read_optional(base + "/sriov_totalvfs")
    total = kernel_int(total_text, 0, MAX_VFS)
    if total_text is not None and total_text != "" and total is None:
        raise ProgrammingError("%s: %s/sriov_totalvfs reads %r, not a VF count the kernel prints (a decimal from 0 "
                               "to %d); nothing was changed" % (address, base, total_text[:40], MAX_VFS))
    if not total:
        raise ProgrammingError("address: %s is not SR-IOV capable (no sriov_totalvfs, or it is 0)" % address)
    numvfs_text = sysfs.read_optional(base + "/sriov_numvfs")
    if numvfs_text is None:
        raise ProgrammingError("%s: cannot read %s/sriov_numvfs" % (address, base))
    # bounded by what the device says it has: a garbled count is reported, never walked VF by VF
    numvfs = kernel_int(numvfs_text, 0, total)
    if numvfs is None:
        raise ProgrammingError("%s: %s/sriov_numvfs reads %r, not a VF count from 0 to sriov_totalvfs (%d); "
                               "nothing was changed" % (address, base, numvfs_text[:40], total))
    offset = _int(sysfs.read_optional(base + "/sriov_offset"))
    stride = _int(sysfs.read_optional(base + "/sriov_stride"))
    vfs = []
    for i in range(numvfs):
        link = sysfs.resolve("%s/virtfn%d" % (base, i))
        a = os.path.basename(link) if link else (vf_address(address, offset, stride, i) if offset is not None else None)
        if a is None:
            raise ProgrammingError("%s: virtfn%d is missing although sriov_numvfs is %d" % (address, i, numvfs))
        vfs.append(read_vf(sysfs, a, i))
    nets = sysfs.listdir(base + "/net")
    return {"address": address, "totalvfs": total, "numvfs": numvfs, "driver": sysfs.link_name(base + "/driver"),
            "offset": offset, "stride": stride or 1, "vfs": vfs, "netdev": nets[0] if nets else None,
            "vendor": (sysfs.read_optional(base + "/vendor") or "").lower().replace("0x", ""),
            "device": (sysfs.read_optional(base + "/device") or "").lower().replace("0x", ""),
            "class": (sysfs.read_optional(base + "/class") or "").lower().replace("0x", "")}


def future_vf_addresses(pf, n):
    if pf["offset"] is None:
        return ["%s virtfn%d" % (pf["address"], i) for i in range(n)]
    return [vf_address(pf["address"], pf["offset"], pf["stride"], i) for i in range(n)]


# -- desired state ----------------------------------------------------------------------------------------------
class SriovDesired(object):
    def __init__(self, num_vfs, vf_driver=None, vfs=None, force=False, persistent=True):
        self.num_vfs = num_vfs
        self.vf_driver = vf_driver or None
        self.vfs = vfs or []
        self.force = force
        self.persistent = persistent


def normalize_mac(mac):
    m = ("%s" % (mac,)).strip().lower().replace("-", ":")
    if not MAC_RE.match(m):
        raise ProgrammingError("vfs: mac %r is not a MAC address; use six hex pairs such as 52:54:00:12:34:56" % (mac,))
    if int(m[:2], 16) & 1:
        raise ProgrammingError("vfs: mac %s is a multicast address (lowest bit of the first byte set); a VF needs a unicast MAC" % m)
    if m == "00:00:00:00:00:00":
        raise ProgrammingError("vfs: mac 00:00:00:00:00:00 is not allowed (it clears the MAC; leave mac out instead)")
    return m


def validate_vf_settings(vfs, num_vfs):
    """Check per-VF settings; returns {index: {mac, vlan, qos, trust}} with normalised values."""
    out = {}
    for item in vfs or []:
        idx = item.get("index")
        if not isinstance(idx, int) or idx < 0:
            raise ProgrammingError("vfs: index %r must be a VF index (0 or more)" % (idx,))
        if idx >= num_vfs:
            raise ProgrammingError("vfs: index %d does not exist with num_vfs %d (indexes are 0 to %d)" % (idx, num_vfs, num_vfs - 1))
        if idx in out:
            raise ProgrammingError("vfs: index %d is listed twice" % idx)
        s = {}
        if item.get("mac") is not None:
            s["mac"] = normalize_mac(item["mac"])
        if item.get("vlan") is not None:
            v = item["vlan"]
            if not isinstance(v, int) or not 0 <= v <= 4094:
                raise ProgrammingError("vfs: vlan %r of VF %d must be 0 (none) to 4094" % (v, idx))
            s["vlan"] = v
        if item.get("trust") is not None:
            s["trust"] = bool(item["trust"])
        out[idx] = s
    return out


def ip_vf_command(ip, netdev, index, key, value):
    """``ip link set dev <pf> vf N mac|vlan|trust <value>`` as an argv list (``ip`` is the resolved path)."""
    if key == "mac":
        return [ip, "link", "set", "dev", netdev, "vf", str(index), "mac", value]
    if key == "vlan":
        return [ip, "link", "set", "dev", netdev, "vf", str(index), "vlan", str(value)]
    if key == "trust":
        return [ip, "link", "set", "dev", netdev, "vf", str(index), "trust", "on" if value else "off"]
    raise ValueError(key)


def parse_ip_vfinfo(text):
    """``ip -d -j link show dev <pf>`` -> {vf index: {mac, vlan, trust}}."""
    data = json.loads(text or "[]")
    out = {}
    for link in data if isinstance(data, list) else [data]:
        for vf in link.get("vfinfo_list", []) or []:
            idx = vf.get("vf")
            if idx is None:
                continue
            vlan = 0
            if vf.get("vlan_list"):
                vlan = vf["vlan_list"][0].get("vlan", 0)
            elif "vlan" in vf:
                vlan = vf.get("vlan") or 0
            mac = (vf.get("address") or vf.get("mac") or "").lower() or None
            out[int(idx)] = {"mac": mac, "vlan": int(vlan), "trust": bool(vf.get("trust", False))}
    return out


# -- planning -----------------------------------------------------------------------------------------------------
def _bind_steps(ops, plan, vf_addr, vf_index, cur_driver, cur_override, new_vf, driver):
    """Steps that bind one VF to ``driver``: driver_override, unbind from the current driver, drivers_probe."""
    base = "%s/%s" % (DEVICES, vf_addr)
    sysfs = ops.sysfs
    label = "VF %d (%s)" % (vf_index, vf_addr)
    if new_vf or cur_override != driver:
        old = cur_override
        plan.add("set driver_override of %s to %s" % (label, driver),
                 ops.writer(base + "/driver_override", driver, "set driver_override", vf_addr, old, driver),
                 ops.writer(base + "/driver_override", (old or "") + "\n"),
                 target=vf_addr, before="driver_override %s" % (old or "none"), after="driver_override %s" % driver)
    if new_vf or cur_driver != driver:
        state = {}

        def unbind():
            now = sysfs.link_name(base + "/driver")
            state["old"] = now
            if now and now != driver:
                ops.write("%s/%s/unbind" % (DRIVERS, now), vf_addr, "unbind", vf_addr, now, None)

        def rebind():
            old = state.get("old")
            if old and old != driver:
                ops.write(base + "/driver_override", (cur_override or "") + "\n")
                if not sysfs.link_name(base + "/driver"):
                    ops.write("%s/%s/bind" % (DRIVERS, old), vf_addr)

        def probe():
            if sysfs.link_name(base + "/driver") != driver:
                ops.write("/sys/bus/pci/drivers_probe", vf_addr, "drivers_probe", vf_addr, None, driver)
            now = sysfs.link_name(base + "/driver")
            if now != driver:
                raise ProgrammingError("%s: after drivers_probe the VF is bound to %s, not %s (is the %s module loaded?)"
                                       % (vf_addr, now or "no driver", driver, driver))

        def unprobe():
            if sysfs.link_name(base + "/driver") == driver:
                ops.write("%s/%s/unbind" % (DRIVERS, driver), vf_addr)
        before = cur_driver if not new_vf else "its default driver"
        plan.add("unbind %s from %s" % (label, before), unbind, rebind, target=vf_addr,
                 before="driver %s" % (before or "none"), after="unbound")
        plan.add("bind %s to %s (drivers_probe)" % (label, driver), probe, unprobe, target=vf_addr,
                 before="unbound", after="driver %s" % driver)


def _restore_vfs(ops, base, old, old_vfs, netdev=None, old_settings=None):
    """Undo of removing a PF's VFs: the old count, then each VF's old override and driver, then the MAC, VLAN and
    trust the VFs had (the kernel forgets them with the VFs; ``old_settings`` as :func:`parse_ip_vfinfo` gives)."""
    sysfs = ops.sysfs

    def restore():
        ops.write(base + "/sriov_numvfs", "0")
        ops.write(base + "/sriov_numvfs", str(old))
        for vf in old_vfs:
            vbase = "%s/%s" % (DEVICES, vf["address"])
            if vf["driver_override"]:
                ops.write(vbase + "/driver_override", vf["driver_override"])
            now = sysfs.link_name(vbase + "/driver")
            if vf["driver"] and now != vf["driver"]:
                if now:
                    ops.write("%s/%s/unbind" % (DRIVERS, now), vf["address"])
                ops.write("/sys/bus/pci/drivers_probe", vf["address"])
        for idx in sorted(old_settings or {}):
            for key, value in _non_default(old_settings[idx]):
                ops.run_tool("ip", ip_vf_command("ip", netdev, idx, key, value)[1:])
    return restore


def _non_default(setting):
    """The (key, value) pairs of one VF's settings that differ from what a new VF has."""
    out = []
    mac = setting.get("mac")
    if mac and mac != "00:00:00:00:00:00":
        out.append(("mac", mac))
    if setting.get("vlan"):
        out.append(("vlan", setting["vlan"]))
    if setting.get("trust"):
        out.append(("trust", True))
    return out


def _current_vf_settings(ops, pf):
    """MAC/VLAN/trust of a PF's VFs that are not a new VF's defaults ({} when the PF has no netdev or no ip)."""
    if not pf["netdev"] or not pf["numvfs"] or not ops.can_run() or ops.find_tool("ip") is None:
        return {}
    _rc, out, _err = ops.run_tool("ip", ["-d", "-j", "link", "show", "dev", pf["netdev"]])
    try:
        current = parse_ip_vfinfo(out)
    except (ValueError, TypeError, AttributeError) as e:
        raise ProgrammingError("%s: cannot parse the output of ip -d -j link show dev %s: %s" % (pf["address"], pf["netdev"], e))
    return dict((i, s) for i, s in current.items() if _non_default(s))


def plan_sriov(ops, address, desired, module_name="sriov_vfs", files=None):
    """Plan the change of one PF. Returns ``(plan, info)``; raises :class:`ProgrammingError` for bad input or
    when a VF that would change is in use."""
    sysfs = ops.sysfs
    addr = resolve_address(sysfs, address)
    pf = read_pf(sysfs, addr)
    n = desired.num_vfs
    if not isinstance(n, int) or n < 0:
        raise ProgrammingError("num_vfs: %r must be 0 or more" % (n,))
    if n > pf["totalvfs"]:
        raise ProgrammingError("num_vfs: %s supports at most %d VFs (sriov_totalvfs); %d asked" % (addr, pf["totalvfs"], n))
    if not pf["driver"] and n != pf["numvfs"]:
        raise ProgrammingError("%s: no driver is bound to the PF, so the kernel cannot create VFs (bind its driver first)" % addr)
    if n != pf["numvfs"]:
        why = for_sriov_pf(pf).vf_count_refusal(pf, n)
        if why:
            raise ProgrammingError("num_vfs: %s" % why)
    settings = validate_vf_settings(desired.vfs, n)
    driver = desired.vf_driver
    if driver and not re.match(r"^[A-Za-z0-9_.-]+$", driver):
        raise ProgrammingError("vf_driver: %r is not a driver name" % (driver,))
    if driver and n and for_sriov_pf(pf).vf_driver_refusal(pf, driver):
        raise ProgrammingError("vf_driver: %s" % for_sriov_pf(pf).vf_driver_refusal(pf, driver))
    if driver and n and not sysfs.isdir("%s/%s" % (DRIVERS, driver)):
        raise ProgrammingError("vf_driver: the %s driver is not loaded on this host (%s/%s is missing; modprobe %s)"
                               % (driver, DRIVERS, driver, driver))
    plan = Plan()
    count_change = pf["numvfs"] != n
    if count_change and pf["numvfs"]:
        for vf in pf["vfs"]:
            ev = blocking(ops.evidence(address=vf["address"], group=ops.group_of(vf["address"])), desired.force)
            if ev:
                plan.block(vf["address"], "VF %d would be removed to change the VF count from %d to %d but is in use"
                           % (vf["index"], pf["numvfs"], n), ev)
    base = "%s/%s" % (DEVICES, addr)
    if count_change:
        if pf["numvfs"]:
            # The VFs' MAC/VLAN/trust go with them: read right before the removal, put back by its undo.
            kept = {}
            remove = ops.writer(base + "/sriov_numvfs", "0", "set sriov_numvfs", addr, pf["numvfs"], 0)

            def remove_vfs():
                kept.update(_current_vf_settings(ops, pf))
                remove()
            restore = _restore_vfs(ops, base, pf["numvfs"], pf["vfs"], pf["netdev"], kept)
            plan.add("remove the %d VFs of %s (sriov_numvfs %d -> 0)" % (pf["numvfs"], addr, pf["numvfs"]),
                     remove_vfs, restore,
                     target=addr, before="sriov_numvfs %d" % pf["numvfs"], after="sriov_numvfs 0")
        if n:
            plan.add("create %d VFs on %s (sriov_numvfs 0 -> %d)" % (n, addr, n),
                     ops.writer(base + "/sriov_numvfs", str(n), "set sriov_numvfs", addr, 0, n),
                     ops.writer(base + "/sriov_numvfs", "0"),
                     target=addr, before="sriov_numvfs 0", after="sriov_numvfs %d" % n)
    vf_list = pf["vfs"] if not count_change else [
        {"index": i, "address": a, "driver": None, "driver_override": None} for i, a in enumerate(future_vf_addresses(pf, n))]
    if driver:
        for vf in vf_list:
            if not count_change and (vf["driver"] != driver or vf["driver_override"] != driver):
                ev = blocking(ops.evidence(address=vf["address"], group=ops.group_of(vf["address"])), desired.force)
                if ev and vf["driver"] != driver:
                    plan.block(vf["address"], "VF %d would be rebound from %s to %s but is in use" % (vf["index"], vf["driver"], driver), ev)
            _bind_steps(ops, plan, vf["address"], vf["index"], vf["driver"], vf["driver_override"], count_change, driver)
    if settings:
        _ip_steps(ops, plan, pf, vf_list, settings, count_change, desired.force)
    if plan.blocked:
        raise blocked_error(plan, "change %s" % addr)
    if files is not None:
        body = boot_lines(sysfs, pf, n, driver, settings, ops) if (desired.persistent and (n or driver)) else None
        if desired.persistent or body is None:
            files.unit_steps(plan, ops.wrap, module_name, "sriov", addr,
                             "accelops.lifecycle: SR-IOV VFs of %s" % addr, body)
    info = {"address": addr, "totalvfs": pf["totalvfs"], "num_vfs_before": pf["numvfs"], "num_vfs": n,
            "vf_driver": driver, "vfs": [v["address"] for v in vf_list]}
    return plan, info


def _ip_steps(ops, plan, pf, vf_list, settings, count_change, force):
    if not pf["netdev"]:
        raise ProgrammingError("vfs: %s has no network interface on the host (bound to %s), so VF MAC/VLAN/trust cannot be set"
                               % (pf["address"], pf["driver"] or "no driver"))
    ip = ops.find_tool("ip")
    if ip is None:
        raise ProgrammingError("vfs: the ip tool (iproute2) is not installed under %s; it sets VF MAC/VLAN/trust" % ops.sysfs.root)
    current = {}
    if not count_change:
        _rc, out, _err = ops.run_tool("ip", ["-d", "-j", "link", "show", "dev", pf["netdev"]])
        try:
            current = parse_ip_vfinfo(out)
        except (ValueError, TypeError, AttributeError) as e:
            raise ProgrammingError("%s: cannot parse the output of ip -d -j link show dev %s: %s" % (pf["address"], pf["netdev"], e))
    by_index = dict((v["index"], v) for v in vf_list)
    for idx in sorted(settings):
        cur = current.get(idx, {"mac": None, "vlan": 0, "trust": False}) if not count_change else {"mac": None, "vlan": 0, "trust": False}
        vf = by_index[idx]
        for key in ("mac", "vlan", "trust"):
            if key not in settings[idx]:
                continue
            want = settings[idx][key]
            if not count_change and cur.get(key) == want:
                continue
            if not count_change:
                ev = blocking(ops.evidence(address=vf["address"], group=ops.group_of(vf["address"])), force)
                if ev:
                    plan.block(vf["address"], "VF %d %s would change but the VF is in use" % (idx, key), ev)
            argv = ip_vf_command("ip", pf["netdev"], idx, key, want)[1:]
            old = cur.get(key)
            undo_argv = ip_vf_command("ip", pf["netdev"], idx, key, old)[1:] if old is not None else None

            act = _ip_action(ops, argv, "set vf %s" % key, "%s vf %d" % (pf["address"], idx), old, want)
            if count_change:
                # A VF this plan creates: undoing its creation (an earlier step, undone later) removes the VF and
                # every setting with it, so there is nothing to undo here, and nothing stays in effect.
                undo = _nothing
            else:
                undo = _ip_action(ops, undo_argv) if undo_argv else None
            plan.add("set %s of VF %d on %s to %s" % (key, idx, pf["netdev"], want), act, undo,
                     target="%s vf %d" % (pf["address"], idx), before="%s %s" % (key, old), after="%s %s" % (key, want))


def _nothing():
    return None


def _ip_action(ops, argv, action=None, device=None, old=None, new=None):
    def run():
        ops.run_tool("ip", argv)
        if ops.auditor is not None and action:
            ops.auditor.record(action, device, old, new)
    return run


def boot_lines(sysfs, pf, n, driver, settings, ops):
    """The boot script body that restores this PF's VFs."""
    from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import shell_quote as q
    base = sysfs.real("%s/%s" % (DEVICES, pf["address"]))
    lines = ["# SR-IOV of %s: %d VFs%s" % (pf["address"], n, (", bound to %s" % driver) if driver else ""),
             "pf=%s" % q(base),
             'need "$pf/sriov_numvfs"',
             'cur=$(cat "$pf/sriov_numvfs")',
             'if [ "$cur" != %d ]; then' % n,
             '  [ "$cur" = 0 ] || put 0 "$pf/sriov_numvfs"',
             '  put %d "$pf/sriov_numvfs"' % n,
             "fi"]
    if driver and n:
        probe = q(sysfs.real("/sys/bus/pci/drivers_probe"))
        drivers = q(sysfs.real(DRIVERS))
        lines.append("for i in $(seq 0 %d); do" % (n - 1))
        lines.append('  vf=$(cd "$pf/virtfn$i" 2>/dev/null && pwd -P) || { rc=1; continue; }')
        lines.append('  a=${vf##*/}')
        lines.append('  put %s "$vf/driver_override"' % q(driver))
        lines.append('  d=$(drv "$vf")')
        lines.append('  if [ "$d" != %s ]; then' % q(driver))
        lines.append('    [ -z "$d" ] || echo "$a" > %s/"$d"/unbind || rc=1' % drivers)
        lines.append('    echo "$a" > %s || rc=1' % probe)
        lines.append("  fi")
        lines.append("done")
    if settings:
        ip = ops.find_tool("ip") or "ip"
        for idx in sorted(settings):
            for key in ("mac", "vlan", "trust"):
                if key in settings[idx]:
                    lines.append(" ".join(q(a) for a in ip_vf_command(ip, pf["netdev"], idx, key, settings[idx][key])) + " || rc=1")
    return lines


def sysfs_error_text(e):
    """A SysfsError or ProgrammingError as text (for messages)."""
    if isinstance(e, (SysfsError, ProgrammingError)):
        return str(e)
    return "%s: %s" % (type(e).__name__, e)


def plan_module(host):
    """The plan hook of the ``sriov_vfs`` module (run by :mod:`_hostmodule`)."""
    p = host.params
    ops = HostOps(host.sysfs, run=host.run, auditor=host.auditor, tool_timeout=p["tool_timeout"],
                  libvirt_run_dir=p["libvirt_run_dir"], inuse=host.inuse)
    desired = SriovDesired(p["num_vfs"], p["vf_driver"], p["vfs"], p["force"], p["persistent"])
    steps, info = plan_sriov(ops, p["address"], desired, files=host.files)
    host.result.update(info)
    return Job(steps, failed=lambda _host, e: "%s: %s" % (info["address"], e))


PROGRAM = tool_program(
    "sriov_vfs",
    dict(
        address=dict(type="str", required=True),
        num_vfs=dict(type="int", required=True),
        vf_driver=dict(type="str"),
        vfs=dict(type="list", elements="dict", default=[], options=dict(
            index=dict(type="int", required=True),
            mac=dict(type="str"),
            vlan=dict(type="int"),
            trust=dict(type="bool"),
        )),
    ),
    plan_module,
    {"num_vfs": (0, 65535), "vfs.index": (0, 65534), "vfs.vlan": (0, 4094)},
)
