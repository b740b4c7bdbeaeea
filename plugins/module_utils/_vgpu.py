# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vGPU programming: N vGPUs of one type on a GPU, with two backends chosen from what the card shows.

- **mdev** (``<pci>/mdev_supported_types``): a vGPU is an mdev; it is created by writing its UUID to the type's
  ``create`` and removed with ``/sys/bus/mdev/devices/<uuid>/remove``. UUIDs are deterministic:
  ``uuid5(NAMESPACE, "<host>|<parent>|<type id>|<index>")``, so reruns and reboots keep identities.
- **vendor_vfio** (NVIDIA vendor-specific VFIO, SR-IOV cards): the card's VFs are enabled with ``sriov-manage -e``
  (or ``sriov_numvfs`` when the tool is missing) and a vGPU is a VF whose ``nvidia/current_vgpu_type`` holds the
  per-card type id, resolved from the type name with the VFs' ``creatable_vgpu_types``. A VF's identity is its
  address; VFs that already have the type are kept, more are taken from the lowest free index.

MIG-backed vGPU (vendor_vfio on a GPU in MIG mode, NVIDIA Virtual GPU Software User Guide, "Configuring a GPU for
MIG-Backed vGPUs"): a type named ``<card>-<slices>-<GB>C`` runs on a GPU instance of profile ``<slices>g.<GB>gb``
(``CME``: ``+me``), and setting it on a VF takes one free instance of that profile. The plan reads the layout with
nvidia-smi (``mig -lgi``) and refuses a count above the instances of the profile, a MIG-backed type on a GPU not in
MIG mode and a time-sliced type on one in MIG mode; the boot unit starts after the MIG layout's
(``accelops-mig-<address>.service``), which makes the instances.

Time-sliced cards run one type per physical GPU: changing a card's type removes every vGPU of it first (a
whole-card change, refused while any of them is in use). vGPUs on the card that the declaration does not name
(other UUIDs, extra VFs) are orphans and are removed.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import json
import os
import socket
import uuid as uuidlib

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia_mig import SMI, find_gpu, read_layout
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import parse_mdevctl_defined, shell_quote, unit_basename
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import Job, tool_program
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan
from ansible_collections.accelops.lifecycle.plugins.module_utils._sriov import (
    DEVICES,
    HostOps,
    ProgrammingError,
    blocked_error,
    blocking,
    future_vf_addresses,
    read_pf,
    resolve_address,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import SysfsError
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import UUID_RE
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import MAX_INSTANCE_RE
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia import mig_vgpu_profile, parse_vgpu_supported, parse_vgpu_types
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import vendor_vfio_vendors

# uuid5(NAMESPACE_URL, "https://github.com/accelops/lifecycle/vgpu"), fixed forever: changing it renames every vGPU.
NAMESPACE = uuidlib.UUID("0b7e3d6a-6f0e-5b8c-9a53-2f1c3c4d9e21")
TYPE_CACHE = "/var/lib/accelops/vgpu-types.json"


def host_name(sysfs):
    for path in ("/proc/sys/kernel/hostname", "/etc/hostname"):
        v = sysfs.read_optional(path)
        if v:
            return v.strip()
    return socket.gethostname()


def mdev_uuid(host, parent, type_id, index):
    """The deterministic UUID of the ``index``-th vGPU of ``type_id`` on ``parent`` of ``host``."""
    return str(uuidlib.uuid5(NAMESPACE, "%s|%s|%s|%d" % (host, parent, type_id, index)))


class VgpuDesired(object):
    def __init__(self, type_name=None, count=0, backend="auto", force=False, persistent=True, hostname=None):
        self.type = type_name
        self.count = count
        self.backend = backend or "auto"
        self.force = force
        self.persistent = persistent
        self.hostname = hostname


# -- mdev backend -------------------------------------------------------------------------------------------
def read_mdev_card(sysfs, addr):
    base = "%s/%s" % (DEVICES, addr)
    types = []
    for tid in sysfs.listdir(base + "/mdev_supported_types"):
        tdir = base + "/mdev_supported_types/" + tid
        desc = sysfs.read_optional(tdir + "/description") or ""
        m = MAX_INSTANCE_RE.search(desc)
        types.append({"id": tid, "name": sysfs.read_optional(tdir + "/name"),
                      "available": _int(sysfs.read_optional(tdir + "/available_instances")),
                      "max": int(m.group(1)) if m else None})
    mdevs = {}
    for name in sysfs.listdir(base):
        if UUID_RE.match(name):
            t = sysfs.link_name("%s/%s/mdev_type" % (base, name))
            g = sysfs.link_name("%s/%s/iommu_group" % (base, name))
            mdevs[name] = {"type": t, "group": _int(g)}
    return types, mdevs


def _int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def resolve_mdev_type(types, wanted, addr):
    w = ("%s" % wanted).strip()
    for t in types:
        if t["id"] == w:
            return t
    for t in types:
        if (t["name"] or "").lower() == w.lower():
            return t
    raise ProgrammingError("type: %s offers no vGPU type %r; it offers: %s"
                           % (addr, wanted, ", ".join("%s (%s)" % (t["id"], t["name"]) for t in types) or "none"))


def plan_mdev(ops, plan, addr, desired, files, module_name, mdevctl_defs):
    sysfs = ops.sysfs
    types, mdevs = read_mdev_card(sysfs, addr)
    base = "%s/%s" % (DEVICES, addr)
    count = desired.count
    t = resolve_mdev_type(types, desired.type, addr) if count else None
    host = desired.hostname or host_name(sysfs)
    want = [mdev_uuid(host, addr, t["id"], i) for i in range(count)] if t else []
    if t:
        same_kept = [u for u in want if u in mdevs and mdevs[u]["type"] == t["id"]]
        cap = t["max"] if t["max"] is not None else (t["available"] or 0) + sum(1 for m in mdevs.values() if m["type"] == t["id"])
        if count > cap:
            raise ProgrammingError("count: %s offers at most %d vGPUs of type %s (%s); %d asked" % (addr, cap, t["id"], t["name"], count))
    else:
        same_kept = []
    other_types = sorted(set(m["type"] for m in mdevs.values() if t is None or m["type"] != t["id"]))
    whole_card = bool(t and other_types)
    orphans = sorted(u for u in mdevs if u not in same_kept)
    for u in orphans:
        ev = blocking(ops.evidence(uuid=u, group=mdevs[u]["group"]), desired.force)
        if ev:
            why = ("changing the card's vGPU type from %s to %s is a whole-card change and this vGPU (%s) is in use"
                   % ("/".join(other_types), t["id"], u)) if whole_card else "vGPU %s is not declared (orphan) but is in use" % u
            plan.block(u, why, ev)
    for u in orphans:
        old_type = mdevs[u]["type"]
        plan.add("remove vGPU %s (type %s) from %s" % (u, old_type, addr),
                 ops.writer("/sys/bus/mdev/devices/%s/remove" % u, "1", "remove mdev", u, old_type, None),
                 ops.writer("%s/mdev_supported_types/%s/create" % (base, old_type), u),
                 target=u, before="mdev %s on %s" % (old_type, addr), after="absent")
    for i, u in enumerate(want):
        if u in same_kept:
            continue
        plan.add("create vGPU %s (%s, %s #%d) on %s" % (u, t["id"], t["name"], i, addr),
                 ops.writer("%s/mdev_supported_types/%s/create" % (base, t["id"]), u, "create mdev", u, None, t["id"]),
                 ops.writer("/sys/bus/mdev/devices/%s/remove" % u, "1"),
                 target=u, before="absent", after="mdev %s on %s" % (t["id"], addr))
    # persistence
    if mdevctl_defs is not None:
        for u in sorted(d for d, v in mdevctl_defs.items() if v["parent"] == addr and d not in want):
            plan.add("mdevctl undefine %s" % u,
                     ops.wrap(_tool(ops, "mdevctl", ["undefine", "-u", u]), "mdevctl undefine", u, mdevctl_defs[u]["type"], None),
                     _tool(ops, "mdevctl", _define_args(u, addr, mdevctl_defs[u]["type"], mdevctl_defs[u]["auto"])),
                     target=u, before="defined (%s)" % mdevctl_defs[u]["type"], after="not defined")
        if desired.persistent:
            for u in want:
                d = mdevctl_defs.get(u)
                if d and d["parent"] == addr and d["type"] == t["id"] and d["auto"]:
                    continue
                if d:
                    plan.add("mdevctl undefine %s (to redefine it)" % u, _tool(ops, "mdevctl", ["undefine", "-u", u]),
                             _tool(ops, "mdevctl", _define_args(u, d["parent"], d["type"], d["auto"])), target=u)
                plan.add("mdevctl define --auto %s (%s on %s)" % (u, t["id"], addr),
                         ops.wrap(_tool(ops, "mdevctl", _define_args(u, addr, t["id"], True)), "mdevctl define", u, None, t["id"]),
                         _tool(ops, "mdevctl", ["undefine", "-u", u]),
                         target=u, before="not defined", after="defined auto (%s)" % t["id"])
    elif files is not None:
        body = None
        if want and desired.persistent:
            body = ["# vGPUs (mdev) of %s: %d x %s" % (addr, count, t["id"]),
                    "p=%s" % shell_quote(sysfs.real(base)), 'need "$p/mdev_supported_types/%s/create"' % t["id"]]
            for u in want:
                body.append('[ -e "$p/%s" ] || echo %s > "$p/mdev_supported_types/%s/create" || rc=1' % (u, u, t["id"]))
        if body or not want:
            files.unit_steps(plan, ops.wrap, module_name, "vgpu", addr, "accelops.lifecycle: vGPUs of %s" % addr, body)
    return {"address": addr, "backend": "mdev", "type": t["id"] if t else None, "type_name": t["name"] if t else None,
            "vgpus": want, "removed": orphans, "whole_card_change": whole_card}


def _define_args(u, parent, mtype, auto):
    return ["define", "-u", u, "-p", parent, "-t", mtype] + (["--auto"] if auto else [])


def _tool(ops, name, args):
    return lambda: ops.run_tool(name, args)


# -- vendor-specific VFIO backend -----------------------------------------------------------------------------
def read_vendor_vfs(sysfs, vf_addrs):
    out = []
    for i, a in enumerate(vf_addrs):
        base = "%s/%s/nvidia" % (DEVICES, a)
        cur = _int(sysfs.read_optional(base + "/current_vgpu_type"))
        out.append({"index": i, "address": a, "current": str(cur) if cur else None,
                    "creatable": parse_vgpu_types(sysfs.read_optional(base + "/creatable_vgpu_types")),
                    "supported": parse_vgpu_types(sysfs.read_optional(base + "/supported_vgpu_types")),
                    "has_nvidia": sysfs.isdir(base)})
    return out


class TypeResolver(object):
    """Type name -> per-card id, from what the card's VFs list, remembered per card model in a small cache file
    (a full card lists no creatable types, so the name of its current type cannot be read back otherwise)."""

    def __init__(self, sysfs, files, addr, wanted, check_mode):
        self.sysfs = sysfs
        self.files = files
        self.addr = addr
        self.wanted = ("%s" % wanted).strip()
        self.check_mode = check_mode
        dev = (sysfs.read_optional("%s/%s/device" % (DEVICES, addr)) or "").lower().replace("0x", "")
        ven = (sysfs.read_optional("%s/%s/vendor" % (DEVICES, addr)) or "").lower().replace("0x", "")
        self.model = "%s:%s" % (ven, dev)
        self.cache_path = files.real(TYPE_CACHE) if files is not None else None
        self.known = {}
        cache = self._load()
        self.known.update(cache.get(self.model, {}))
        self._cache = cache

    def _load(self):
        if not self.cache_path:
            return {}
        try:
            with open(self.cache_path) as f:
                data = json.load(f)
            return data if isinstance(data, dict) else {}
        except (IOError, OSError, ValueError):
            return {}

    def learn(self, vfs):
        for v in vfs:
            for t in v["creatable"] + v["supported"]:
                if t["name"]:
                    self.known[t["id"]] = t["name"]

    def save(self):
        if self.check_mode or not self.cache_path:
            return
        if self._cache.get(self.model) == self.known or not self.known:
            return
        self._cache[self.model] = dict(self.known)
        d = os.path.dirname(self.cache_path)
        try:
            if not os.path.isdir(d):
                os.makedirs(d, 0o755)
            with open(self.cache_path, "w") as f:
                json.dump(self._cache, f, indent=1, sort_keys=True)
        except (IOError, OSError):
            pass

    def resolve(self):
        """The type id, or None when the card does not (yet) list the name."""
        if self.wanted.isdigit():
            return str(int(self.wanted))
        for tid, name in self.known.items():
            if name.lower() == self.wanted.lower():
                return tid
        return None

    def unknown(self):
        return ProgrammingError("type: %s offers no vGPU type %r; it lists: %s" % (
            self.addr, self.wanted,
            ", ".join("%s (%s)" % (k, v) for k, v in sorted(self.known.items(), key=lambda kv: int(kv[0]))) or "none"))


def plan_vendor(ops, plan, addr, desired, files, module_name, check_mode):
    sysfs = ops.sysfs
    pf = read_pf(sysfs, addr)
    count = desired.count
    base = "%s/%s" % (DEVICES, addr)
    if count > pf["totalvfs"]:
        raise ProgrammingError("count: %s has %d VFs (sriov_totalvfs), so at most %d vGPUs; %d asked" % (addr, pf["totalvfs"], pf["totalvfs"], count))
    enabled = pf["numvfs"] > 0
    vf_addrs = [v["address"] for v in pf["vfs"]] if enabled else future_vf_addresses(pf, pf["totalvfs"])
    vfs = read_vendor_vfs(sysfs, vf_addrs) if enabled else [
        {"index": i, "address": a, "current": None, "creatable": [], "supported": [], "has_nvidia": False}
        for i, a in enumerate(vf_addrs)]
    resolver = TypeResolver(sysfs, files, addr, desired.type, check_mode) if count else None
    tid = None
    if resolver:
        resolver.learn(vfs)
        tid = resolver.resolve()
    mig = _mig_backing(ops, addr, desired, resolver, tid)
    if resolver and tid is None:
        tid = resolver.resolve()  # _mig_backing may have learnt the id from nvidia-smi
    if resolver and tid is None and enabled and not any(v["current"] for v in vfs):
        raise resolver.unknown()
    typed = [v for v in vfs if v["current"]]
    other = sorted(set(v["current"] for v in typed if tid is None or v["current"] != tid))
    if resolver and tid is None and not other and enabled:
        raise resolver.unknown()
    keep = [v for v in typed if tid is not None and v["current"] == tid][:count]
    keep_set = set(v["address"] for v in keep)
    clear = [v for v in typed if v["address"] not in keep_set]
    # MIG-backed vGPUs each hold a GPU instance of their own: changing the type is no whole-card change
    whole_card = bool(count and other) and mig is None
    for v in clear:
        ev = blocking(ops.evidence(address=v["address"], group=ops.group_of(v["address"])), desired.force)
        if ev:
            why = ("changing the card's vGPU type from %s to %s is a whole-card change and VF %s is in use"
                   % ("/".join(other), tid or desired.type, v["address"])) if whole_card else \
                "VF %s has vGPU type %s that is not declared (orphan) but is in use" % (v["address"], v["current"])
            plan.block(v["address"], why, ev)
    if count and not enabled:
        if ops.find_tool("sriov-manage"):
            plan.add("enable the VFs of %s (sriov-manage -e)" % addr,
                     ops.wrap(_tool(ops, "sriov-manage", ["-e", addr]), "sriov-manage -e", addr, 0, pf["totalvfs"]),
                     _tool(ops, "sriov-manage", ["-d", addr]), target=addr, before="sriov_numvfs 0",
                     after="sriov_numvfs %d" % pf["totalvfs"])
        else:
            plan.add("enable the %d VFs of %s (sriov_numvfs)" % (pf["totalvfs"], addr),
                     ops.writer(base + "/sriov_numvfs", str(pf["totalvfs"]), "set sriov_numvfs", addr, 0, pf["totalvfs"]),
                     ops.writer(base + "/sriov_numvfs", "0"), target=addr, before="sriov_numvfs 0",
                     after="sriov_numvfs %d" % pf["totalvfs"])
    for v in clear:
        path = "%s/%s/nvidia/current_vgpu_type" % (DEVICES, v["address"])
        plan.add("clear vGPU type %s of VF %s" % (v["current"], v["address"]),
                 ops.writer(path, "0", "clear vgpu type", v["address"], v["current"], 0),
                 ops.writer(path, v["current"]), target=v["address"],
                 before="vGPU type %s" % v["current"], after="none")
    free = [v for v in vfs if v["address"] not in keep_set]
    add = free[:max(0, count - len(keep))]
    state = {"tid": tid}

    def type_id():
        if state["tid"] is None:
            now = read_vendor_vfs(sysfs, [v["address"] for v in vfs])
            resolver.learn(now)
            state["tid"] = resolver.resolve()
            if state["tid"] is None:
                raise resolver.unknown()
        return state["tid"]
    label = tid or desired.type
    for v in add:
        path = "%s/%s/nvidia/current_vgpu_type" % (DEVICES, v["address"])
        plan.add("set vGPU type %s on VF %s" % (label, v["address"]),
                 _set_type(ops, path, v["address"], type_id), ops.writer(path, "0"),
                 target=v["address"], before="none", after="vGPU type %s" % label)
    if files is not None:
        body = None
        if count and desired.persistent:
            body = _vendor_boot_lines(ops, pf, base, [v["address"] for v in keep + add], tid)
        if body is not None or not count:
            _vendor_unit_steps(ops, files, plan, module_name, addr, body, mig)
    if resolver:
        resolver.save()
    card = {"address": addr, "backend": "vendor_vfio", "type": tid, "type_name": desired.type if not ("%s" % desired.type).isdigit() else None,
            "vgpus": sorted(v["address"] for v in keep + add), "removed": [v["address"] for v in clear], "whole_card_change": whole_card,
            "_resolver": resolver, "_state": state, "_mig": mig}
    if mig is not None:
        card["mig_profile"] = mig["profile"]
    return card


def _vendor_unit_steps(ops, files, plan, module_name, addr, body, mig):
    """The vGPU boot unit of a card; for MIG-backed vGPUs ordered after the unit that makes the MIG layout."""
    after = (unit_basename("mig", addr) + ".service",) if mig is not None else ()
    files.unit_steps(plan, ops.wrap, module_name, "vgpu", addr, "accelops.lifecycle: vGPUs of %s" % addr, body, after=after)


def _mig_backing(ops, addr, desired, resolver, tid):
    """For a GPU in MIG mode or a MIG-backed type: ``{profile, index, instances}`` (the GPU instances of the profile
    the type runs on), after refusing what cannot run: a MIG-backed type on a GPU not in MIG mode, a time-sliced type
    on one in MIG mode, more vGPUs than instances of the profile. None for a time-sliced type where nvidia-smi cannot
    tell (not installed: as before MIG) or the GPU is not in MIG mode."""
    if not desired.count:
        return None
    name = resolver.known.get(tid) if tid is not None else None
    name = name or ("%s" % desired.type if not ("%s" % desired.type).strip().isdigit() else None)
    profile = mig_vgpu_profile(name)
    if profile is None and not (ops.can_run() and ops.find_tool(SMI)):
        return None
    if not ops.find_tool(SMI):
        raise ProgrammingError("type: %s is a MIG-backed vGPU type (it runs on a %s GPU instance); nvidia-smi is needed to read "
                               "the GPU instances of %s and is not installed" % (name, profile, addr))
    try:
        gpu = find_gpu(ops, addr)
    except ProgrammingError:
        if profile is None:
            return None  # a time-sliced type where nvidia-smi does not answer for the GPU: as before MIG
        raise
    if gpu["mode_current"] != "Enabled":
        if profile is None:
            return None
        raise ProgrammingError("type: %s is a MIG-backed vGPU type (it runs on a %s GPU instance) and %s is not in MIG mode "
                               "(mig.mode.current %s): set its MIG mode and layout with nvidia_mig first"
                               % (name, profile, addr, gpu["mode_current"] or "N/A"))
    if tid is None or name is None:
        # the type's id and name on this card from nvidia-smi, so that check mode plans the boot unit too (no VF lists
        # the type before the VFs are on, nor once every instance of its profile is taken); where it fails, the id is
        # learnt from the VFs while running, as on other cards
        rc, out, _err = ops.run_tool(SMI, ["vgpu", "-s", "-v", "-i", str(gpu["index"])], check=False)
        for type_id, type_name in parse_vgpu_supported(out if rc == 0 else "").get(addr, {}).items():
            resolver.known.setdefault(type_id, type_name)
        name = resolver.known.get(resolver.resolve()) or name
        profile = mig_vgpu_profile(name)
    if name is None:
        raise ProgrammingError("type: %s is in MIG mode and neither its VFs nor nvidia-smi name vGPU type %s, so whether it is "
                               "MIG-backed cannot be told; give the type's name (as NVIDIA H100-1-10C)" % (addr, desired.type))
    if profile is None:
        raise ProgrammingError("type: %s is not a MIG-backed vGPU type (<card>-<slices>-<GB>C, as NVIDIA H100-1-10C) and %s is "
                               "in MIG mode, where only MIG-backed types run" % (name, addr))
    instances = sorted(gi["id"] for gi in read_layout(ops, gpu["index"])[0] if gi["name"] == profile)
    if desired.count > len(instances):
        raise ProgrammingError("count: %s has %d GPU instance(s) of profile %s (%s) for vGPU type %s; %d asked (each MIG-backed "
                               "vGPU holds one instance: add instances to the layout with nvidia_mig)"
                               % (addr, len(instances), profile, ", ".join("GI %d" % i for i in instances) or "none",
                                  name, desired.count))
    return {"profile": profile, "index": gpu["index"], "instances": instances}


def _set_type(ops, path, vf, type_id):
    def run():
        tid = type_id()
        ops.write(path, tid, "set vgpu type", vf, 0, tid)
    return run


def _vendor_boot_lines(ops, pf, base, vf_addrs, tid):
    if tid is None:
        return None  # written by the run that resolves it (see plan_vgpu)
    sysfs = ops.sysfs
    tool = ops.find_tool("sriov-manage")
    lines = ["# vGPUs (vendor-specific VFIO) of %s: %d x type %s" % (pf["address"], len(vf_addrs), tid),
             "p=%s" % shell_quote(sysfs.real(base)), 'need "$p/sriov_numvfs"']
    if tool:
        lines.append('[ "$(cat "$p/sriov_numvfs")" != 0 ] || %s -e %s || rc=1' % (shell_quote(tool), pf["address"]))
    else:
        lines.append('[ "$(cat "$p/sriov_numvfs")" != 0 ] || put %d "$p/sriov_numvfs"' % pf["totalvfs"])
    for a in sorted(vf_addrs):
        f = shell_quote(sysfs.real("%s/%s/nvidia/current_vgpu_type" % (DEVICES, a)))
        lines.append('need %s; c=$(cat %s); [ "$c" = %s ] || { [ "$c" = 0 ] || put 0 %s; put %s %s; }' % (f, f, tid, f, tid, f))
    return lines


# -- entry point --------------------------------------------------------------------------------------------------
def choose_backend(sysfs, addr, wanted):
    base = "%s/%s" % (DEVICES, addr)
    has_mdev = sysfs.isdir(base + "/mdev_supported_types")
    physfn = sysfs.exists(base + "/physfn")
    total = _int(sysfs.read_optional(base + "/sriov_totalvfs")) or 0
    vendor = (sysfs.read_optional(base + "/vendor") or "").strip().lower()
    vendor_ok = (vendor[2:] if vendor.startswith("0x") else vendor) in vendor_vfio_vendors() and total > 0 and not physfn
    if wanted == "mdev" or (wanted == "auto" and has_mdev):
        if not has_mdev:
            raise ProgrammingError("backend: %s is not an mdev parent (no mdev_supported_types; is the vGPU host driver loaded?)" % addr)
        return "mdev"
    if wanted == "vendor_vfio" or (wanted == "auto" and vendor_ok):
        if physfn:
            raise ProgrammingError("addresses: %s is a VF; give the GPU's (PF's) address" % addr)
        if not vendor_ok:
            raise ProgrammingError("backend: %s is not an SR-IOV NVIDIA GPU (vendor-specific VFIO needs sriov_totalvfs)" % addr)
        return "vendor_vfio"
    if physfn:
        raise ProgrammingError("addresses: %s is a VF without mdev types; give the GPU's (PF's) address" % addr)
    raise ProgrammingError("%s offers no vGPUs: neither mdev types (mdev_supported_types) nor NVIDIA SR-IOV VFs" % addr)


def plan_vgpu(ops, addresses, desired, files=None, module_name="vgpu", check_mode=False):
    """Plan vGPUs on every GPU in ``addresses``. Returns ``(plan, cards)``."""
    sysfs = ops.sysfs
    if not isinstance(desired.count, int) or desired.count < 0:
        raise ProgrammingError("count: %r must be 0 or more" % (desired.count,))
    if desired.count and not desired.type:
        raise ProgrammingError("type: a vGPU type (name or id) is needed when count is not 0")
    plan = Plan()
    cards = []
    seen = set()
    mdevctl_defs = None
    mdevctl_checked = False
    for a in addresses:
        addr = resolve_address(sysfs, a, "addresses")
        if addr in seen:
            raise ProgrammingError("addresses: %s is listed twice" % addr)
        seen.add(addr)
        backend = choose_backend(sysfs, addr, desired.backend)
        if backend == "mdev":
            if not mdevctl_checked:
                mdevctl_checked = True
                if ops.find_tool("mdevctl"):
                    _rc, out, _err = ops.run_tool("mdevctl", ["list", "-d", "--dumpjson"])
                    try:
                        mdevctl_defs = parse_mdevctl_defined(out)
                    except (ValueError, AttributeError, TypeError) as e:
                        raise ProgrammingError("mdevctl list -d --dumpjson gave output that is not mdevctl's JSON: %s" % e)
            cards.append(plan_mdev(ops, plan, addr, desired, files, module_name, mdevctl_defs))
        else:
            cards.append(plan_vendor(ops, plan, addr, desired, files, module_name, check_mode))
    if plan.blocked:
        raise blocked_error(plan, "change the vGPUs of %s" % ", ".join(c["address"] for c in cards))
    return plan, cards


def finish_vendor_persistence(ops, files, cards, module_name, desired, check_mode):
    """After a run that learnt a vendor type id only while running: write the boot files for those cards (a
    second small plan, returned for the module to run)."""
    plan = Plan()
    for c in cards:
        if c["backend"] != "vendor_vfio" or c["type"] is not None or not desired.count or not desired.persistent:
            continue
        tid = c["_state"]["tid"]
        if tid is None:
            continue
        c["type"] = tid
        pf = read_pf(ops.sysfs, c["address"])
        body = _vendor_boot_lines(ops, pf, "%s/%s" % (DEVICES, c["address"]), c["vgpus"], tid)
        _vendor_unit_steps(ops, files, plan, module_name, c["address"], body, c["_mig"])
        if c["_resolver"]:
            c["_resolver"].save()
    return plan


def _public(cards):
    return [dict((k, v) for k, v in c.items() if not k.startswith("_")) for c in cards]


def plan_module(host):
    """The plan hook of the ``vgpu`` module (run by :mod:`_hostmodule`): every GPU of ``addresses``; after the
    run, the boot files of cards whose vendor type id was learnt only while running (a follow-up plan)."""
    p = host.params
    ops = HostOps(host.sysfs, run=host.run, auditor=host.auditor, tool_timeout=p["tool_timeout"],
                  libvirt_run_dir=p["libvirt_run_dir"])
    files = host.files
    count = 0 if p["state"] == "absent" else p["count"]
    desired = VgpuDesired(p["type"], count, p["backend"], p["force"], p["persistent"], p["hostname"])
    plan, cards = plan_vgpu(ops, p["addresses"], desired, files=files, check_mode=host.check_mode)
    host.result["gpus"] = _public(cards)

    def finish(host):
        if host.check_mode:
            return None
        try:
            more = finish_vendor_persistence(ops, files, cards, "vgpu", desired, host.check_mode)
        except (ProgrammingError, SysfsError) as e:
            raise ProgrammingError("the vGPUs are in place but their boot files could not be planned: %s" % e)
        finally:
            host.result["gpus"] = _public(cards)
        return more
    return Job(plan, finish=finish)


PROGRAM = tool_program(
    "vgpu",
    dict(
        addresses=dict(type="list", elements="str", required=True),
        type=dict(type="str"),
        count=dict(type="int", default=1),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        backend=dict(type="str", choices=["auto", "mdev", "vendor_vfio"], default="auto"),
        hostname=dict(type="str"),
    ),
    plan_module,
    {"count": (0, 4096)},
)
