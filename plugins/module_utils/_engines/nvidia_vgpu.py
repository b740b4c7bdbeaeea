# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA's vendor-specific VFIO vGPU: the ``vendor_vfio`` backend of the vgpu module (:mod:`_vgpu`, the engine).

The card's VFs are enabled with ``sriov-manage -e`` (or ``sriov_numvfs`` when the tool is missing) and a vGPU is a VF
whose ``nvidia/current_vgpu_type`` holds the per-card type id, resolved from the type name with the VFs'
``creatable_vgpu_types``. A VF's identity is its address; VFs that already have the type are kept, more are taken
from the lowest free index.

MIG-backed vGPU (vendor_vfio on a GPU in MIG mode, NVIDIA Virtual GPU Software User Guide, "Configuring a GPU for
MIG-Backed vGPUs"): a type named ``<card>-<slices>-<GB>C`` runs on a GPU instance of profile ``<slices>g.<GB>gb``
(``CME``: ``+me``), and setting it on a VF takes one free instance of that profile. The plan reads the layout with
nvidia-smi (``mig -lgi``) and refuses a count above the instances of the profile, a MIG-backed type on a GPU not in
MIG mode and a time-sliced type on one in MIG mode; the boot unit starts after the MIG layout's
(``accelops-mig-<address>.service``), which makes the instances.

A file of its own beside :mod:`nvidia` (the family's discovery), which every discovery loads: this one, with the
programming machinery it imports, is loaded only to program vGPUs.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import json
import os

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia import parse_vgpu_types
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia_smi import parse_vgpu_supported_types
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.nvidia_mig import SMI, find_gpu, read_layout
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import shell_quote, unit_basename
from ansible_collections.accelops.lifecycle.plugins.module_utils._safefile import make_dir, read_text, write_atomic
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import DEVICES, ProgrammingError, blocking, future_vf_addresses, read_pf
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.vgpu import int_or_none, tool_call

TYPE_CACHE = "/var/lib/accelops/vgpu-types.json"
# A card model lists a few dozen types; a cache longer than this is not one this module wrote.
TYPE_CACHE_LIMIT = 1 << 18


class VendorVfioBackend(object):
    """The vgpu module's ``vendor_vfio`` backend for NVIDIA GPUs (``NvidiaGpuDriver.vendor_vfio_backend``)."""

    name = "vendor_vfio"

    def plan(self, ops, plan, addr, desired, files, module_name, check_mode):
        """Adds the card's steps to ``plan``; returns the card's result (keys with ``_``: kept for :meth:`finish`)."""
        return dict(plan_vendor(ops, plan, addr, desired, files, module_name, check_mode), _backend=self)

    def finish(self, ops, files, plan, card, module_name, desired):
        finish_card(ops, files, plan, card, module_name, desired)


BACKEND = VendorVfioBackend()


def read_vendor_vfs(sysfs, vf_addrs):
    out = []
    for i, a in enumerate(vf_addrs):
        base = "%s/%s/nvidia" % (DEVICES, a)
        cur = int_or_none(sysfs.read_optional(base + "/current_vgpu_type"))
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
        """The cache as ``{model: {type id: name}}``; a cache that is missing, not a regular file owned by this
        user, too long, not JSON or of another shape counts as empty (it is rewritten on the next save)."""
        if not self.cache_path:
            return {}
        try:
            data = json.loads(read_text(self.cache_path, TYPE_CACHE_LIMIT, owned=True))
        except (IOError, OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return dict((model, dict((tid, name) for tid, name in types.items()
                                 if isinstance(tid, str) and tid.isascii() and tid.isdigit() and isinstance(name, str)))
                    for model, types in data.items() if isinstance(model, str) and isinstance(types, dict))

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
        try:
            # Under the file rule (_safefile): a checked 0755 directory, a 0644 file renamed into place whatever
            # the umask, no link written through.
            make_dir(os.path.dirname(self.cache_path), 0o755)
            write_atomic(self.cache_path, json.dumps(self._cache, indent=1, sort_keys=True).encode("utf-8"), 0o644)
        except (IOError, OSError):
            pass

    def resolve(self):
        """The type id, or None when the card does not (yet) list the name."""
        if self.wanted.isascii() and self.wanted.isdigit():
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
                     ops.wrap(tool_call(ops, "sriov-manage", ["-e", addr]), "sriov-manage -e", addr, 0, pf["totalvfs"]),
                     tool_call(ops, "sriov-manage", ["-d", addr]), target=addr, before="sriov_numvfs 0",
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
    on one in MIG mode, more vGPUs than instances of the profile. A type is MIG-backed when ``nvidia-smi vgpu -s -v``
    gives it a ``GPU Instance Profile ID`` (its name does not tell: Blackwell's ``DC-1-2Q`` is MIG-backed). None for a
    time-sliced type on a GPU not in MIG mode, and where nvidia-smi cannot tell (not installed, or not answering for
    the GPU: as before MIG)."""
    if not desired.count or not (ops.can_run() and ops.find_tool(SMI)):
        return None
    try:
        gpu = find_gpu(ops, addr)
    except ProgrammingError:
        return None
    # the card's types with the GI profile each runs on; also names the wanted type in check mode (no VF lists it
    # before the VFs are on, nor once every instance of its profile is taken), so that check mode plans the boot unit
    rc, out, _err = ops.run_tool(SMI, ["vgpu", "-s", "-v", "-i", str(gpu["index"])], check=False)
    types = parse_vgpu_supported_types(out if rc == 0 else "").get(addr, {})
    for type_id, t in types.items():
        if t["name"]:
            resolver.known.setdefault(type_id, t["name"])
    tid = tid if tid is not None else resolver.resolve()
    t = types.get(tid) if tid is not None else None
    name = resolver.known.get(tid) if tid is not None else None
    label = name or desired.type
    profile_id = t["gi_profile_id"] if t else None
    enabled = gpu["mode_current"] == "Enabled"
    if profile_id is None and not enabled:
        return None
    if t is None:
        raise ProgrammingError("type: %s is in MIG mode and neither its VFs nor nvidia-smi (vgpu -s -v) list vGPU type %s, so "
                               "whether it is MIG-backed cannot be told; give a type they list (as NVIDIA H100XM-1-10C)"
                               % (addr, desired.type))
    gis, profiles = read_layout(ops, gpu["index"])
    profile = next((n for n, p in profiles.items() if p["id"] == profile_id), None) if profile_id is not None else None
    if not enabled:
        raise ProgrammingError("type: %s is a MIG-backed vGPU type (it runs on a %s GPU instance) and %s is not in MIG mode "
                               "(mig.mode.current %s): set its MIG mode and layout with nvidia_mig first"
                               % (label, profile or "profile %d" % profile_id, addr, gpu["mode_current"] or "N/A"))
    if profile_id is None:
        raise ProgrammingError("type: %s is not a MIG-backed vGPU type (nvidia-smi vgpu -s -v gives it no GPU Instance Profile "
                               "ID) and %s is in MIG mode, where only MIG-backed types run" % (label, addr))
    if profile is None:
        raise ProgrammingError("type: %s runs on GPU instance profile %d, which %s does not offer (nvidia-smi mig -lgip lists: "
                               "%s)" % (label, profile_id, addr, ", ".join("%s (%d)" % (n, p["id"]) for n, p in sorted(profiles.items()))))
    instances = sorted(gi["id"] for gi in gis if gi["name"] == profile)
    if desired.count > len(instances):
        raise ProgrammingError("count: %s has %d GPU instance(s) of profile %s (%s) for vGPU type %s; %d asked (each MIG-backed "
                               "vGPU holds one instance: add instances to the layout with nvidia_mig)"
                               % (addr, len(instances), profile, ", ".join("GI %d" % i for i in instances) or "none",
                                  label, desired.count))
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


def finish_card(ops, files, plan, card, module_name, desired):
    """After a run that learnt the card's type id only while running: its boot files, as steps of ``plan`` (the
    module's second small plan)."""
    if card["type"] is not None or not desired.count or not desired.persistent:
        return
    tid = card["_state"]["tid"]
    if tid is None:
        return
    card["type"] = tid
    pf = read_pf(ops.sysfs, card["address"])
    body = _vendor_boot_lines(ops, pf, "%s/%s" % (DEVICES, card["address"]), card["vgpus"], tid)
    _vendor_unit_steps(ops, files, plan, module_name, card["address"], body, card["_mig"])
    if card["_resolver"]:
        card["_resolver"].save()
