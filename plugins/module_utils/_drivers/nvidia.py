# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA GPU driver: mdev parents (GRID/vGPU on pre-Ampere cards and the mdev-based vGPU manager),
vendor-specific VFIO vGPU on SR-IOV VFs (``nvidia/creatable_vgpu_types``, ``current_vgpu_type``),
and MIG mode, instances and GPU instance profiles from ``nvidia-smi`` (read-only queries) when it is installed.

vGPU type ids mean different things on different card models, so a VF's type id is resolved to a
name with the types listed by the VFs of the same card (its PF).

The family's rules outside discovery are hooks of the driver (``nvidia-smi`` and its ``nvidia_smi`` option, the MIG
device nodes a process may hold, hostdev's rules for a vendor-VFIO VF). Beside this file: ``nvidia_smi.py`` (what
nvidia-smi's output says) and ``nvidia_mig_layout.py`` (the MIG layout grammar). The family's programming is in the
engines, imported on first use: ``_engines/nvidia_vgpu.py`` (the vgpu module's vendor_vfio
backend) and ``_engines/nvidia_mig.py`` (the MIG engine of the ``mig`` kind, which is here).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import os
import re
from collections import Counter

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import (
    HOST_PROGRAM_SETTINGS,
    Kind,
    function_record,
    mdev_units,
    read_mdev,
    read_text,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.gpu import GpuDriver, empty_gpu_section, mdev_function
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia_mig_layout import carries_layout, layout_text, parse_layout
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia_smi import (
    parse_mig_ci,
    parse_mig_gi,
    parse_mig_gip,
    parse_mig_gipp,
    parse_mig_modes,
    parse_vgpu_query,
    parse_vgpu_supported_types,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._naming import discovered_function_trait
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import ProgrammingError

__metaclass__ = type

_TYPE_LINE = re.compile(r"^\s*(\d+)\s*:\s*(.*?)\s*$")


def parse_vgpu_types(text):
    """Parse ``creatable_vgpu_types`` / ``supported_vgpu_types``: a header line and then one
    ``<id> : <name>`` per line. Returns [{id, name}] (ids as strings)."""
    out = []
    for line in (text or "").splitlines():
        m = _TYPE_LINE.match(line)
        if m:
            out.append({"id": m.group(1), "name": m.group(2) or None})
    return out


def _mig_profiles(gip, gipp):
    """One GPU's profiles from -lgip, with the placements -lgipp lists (null where it listed none)."""
    out = []
    for p in gip:
        starts, size = gipp.get(p["id"], (None, None))
        out.append(dict(p, memory_slices=size, placements=starts))
    return out


MIG_MINORS = "/proc/driver/nvidia-caps/mig-minors"
_MINOR_LINE = re.compile(r"^gpu(\d+)/gi(\d+)/(?:ci(\d+)/)?access\s+(\d+)\s*$")
_DEVICE_MINOR = re.compile(r"^Device Minor:\s*(\d+)\s*$", re.M)


def parse_mig_minors(text):
    """``/proc/driver/nvidia-caps/mig-minors`` (``gpu0/gi2/access 21``, ``gpu0/gi2/ci0/access 22``) ->
    {(gpu minor, gi id, ci id or None): device minor of /dev/nvidia-caps/nvidia-cap<minor>}."""
    out = {}
    for line in (text or "").splitlines():
        m = _MINOR_LINE.match(line.strip())
        if m:
            ci = int(m.group(3)) if m.group(3) is not None else None
            out[(int(m.group(1)), int(m.group(2)), ci)] = int(m.group(4))
    return out


def read_mig_minors(sysfs):
    """The parsed mig-minors file of the host ({} when it is missing: no MIG-capable driver)."""
    try:
        with open(sysfs.real(MIG_MINORS), "rb") as f:
            return parse_mig_minors(f.read(1 << 20).decode("utf-8", "replace"))
    except (IOError, OSError):
        return {}


def gpu_minor(sysfs, address, index):
    """The GPU's device minor (/dev/nvidia<minor>): ``Device Minor`` of /proc/driver/nvidia/gpus/<address>/
    information, else the nvidia-smi index (the same on hosts where the driver numbers GPUs in PCI order)."""
    try:
        with open(sysfs.real("/proc/driver/nvidia/gpus/%s/information" % address), "rb") as f:
            m = _DEVICE_MINOR.search(f.read(8192).decode("utf-8", "replace"))
        if m:
            return int(m.group(1))
    except (IOError, OSError):
        pass
    return index


def held_node(target):
    """Whether ``target`` is a device path MIG in-use evidence needs (a caps node or a GPU node)."""
    if target.startswith("/dev/nvidia-caps/"):
        return True
    return target.startswith("/dev/nvidia") and target[len("/dev/nvidia"):].isdigit()


def mig_evidence(by_path, minors, minor, gi_id, ci_ids):
    """In-use evidence of GPU instance ``gi_id`` of the GPU with device minor ``minor``: the processes holding
    its capability node or one of its compute instances' (``by_path``: :attr:`_inuse.InUse.by_path`)."""
    out = []
    keys = [(minor, gi_id, None)] + [(minor, gi_id, c) for c in ci_ids]
    for k in keys:
        n = minors.get(k)
        if n is None:
            continue
        for ev in by_path.get("/dev/nvidia-caps/nvidia-cap%d" % n, ()):
            if ev not in out:
                out.append(ev)
    return out


def _mig_in_use(ctx, addr, entry):
    """Adds ``in_use``/``in_use_by`` to each GPU instance of ``entry`` and ``gpu_in_use_by`` (processes holding
    /dev/nvidia<minor>: what makes a MIG mode change wait for a reset). Reads mig-minors only when a process
    holds an NVIDIA node at all."""
    inuse = ctx.inuse
    by_path = inuse.by_path if inuse is not None else {}
    minors = {}
    minor = entry["index"]
    if by_path:
        if "nvidia_mig_minors" not in ctx.cache:
            ctx.cache["nvidia_mig_minors"] = read_mig_minors(ctx.sysfs)
        minors = ctx.cache["nvidia_mig_minors"]
        minor = gpu_minor(ctx.sysfs, addr, entry["index"])
    for gi in entry["gpu_instances"]:
        cis = [c["id"] for c in entry["compute_instances"] if c["gpu_instance_id"] == gi["id"]]
        ev = mig_evidence(by_path, minors, minor, gi["id"], cis) if by_path else []
        gi["in_use"] = bool(ev)
        gi["in_use_by"] = ev
    entry["gpu_in_use_by"] = list(by_path.get("/dev/nvidia%d" % minor, ())) if by_path else []


def _smi_once(ctx, key, args, parse):
    """``nvidia-smi <args>`` parsed with ``parse``, run at most once per discovery (kept in ``ctx.cache[key]``); {}
    without nvidia-smi, or when it fails (then a warning says why)."""
    cache = ctx.cache.get(key)
    if cache is not None:
        return cache
    ctx.cache[key] = found = {}
    if not ctx.tool_enabled("nvidia-smi"):
        return found
    res = ctx.run_tool("nvidia-smi", args)
    if res is None:
        return found
    rc, out, err = res
    if rc != 0:
        ctx.warn("nvidia-smi %s failed (rc %s): %s" % (" ".join(args), rc, (err or out).strip()[:200]))
        return found
    found.update(parse(out))
    return found


def smi_vgpu_types(ctx):
    """vGPU types per card from ``nvidia-smi vgpu -s -v`` with their GI profile ids (run at most once per discovery:
    when a type id could not be named from sysfs, or a GPU in MIG mode lists vGPU types)."""
    return _smi_once(ctx, "nvidia_vgpu_s", ["vgpu", "-s", "-v"], parse_vgpu_supported_types)


def smi_vgpu_names(ctx):
    """vGPU type names per card from ``nvidia-smi vgpu -s -v``."""
    return dict((gpu, dict((tid, t["name"]) for tid, t in types.items() if t["name"]))
                for gpu, types in smi_vgpu_types(ctx).items())


def assign_vgpu_vfs(vgpus, vf_types, domains_of=None):
    """Ties each vGPU of :func:`parse_vgpu_query` to the host VF that holds it, in place: ``vfs``, the VFs it may be
    on (those whose ``nvidia/current_vgpu_type`` is its type, less those tied to another vGPU), and ``address``,
    the VF when one remains (else None). Where several VFs hold the type, the domain running the vGPU (``VM Name``)
    picks the VF that domain has (``domains_of(vf)``: names of the running domains that have it). ``vf_types``:
    {VF address: type id}."""
    by_type = {}
    for addr, tid in sorted(vf_types.items()):
        if tid:
            by_type.setdefault(tid, []).append(addr)
    for v in vgpus:
        v["vfs"] = list(by_type.get(v["type_id"], ()))
        if len(v["vfs"]) > 1 and v["vm_name"] and domains_of is not None:
            named = [a for a in v["vfs"] if v["vm_name"] in domains_of(a)]
            if len(named) == 1:
                v["vfs"] = named
    changed = True
    while changed:  # a VF tied to one vGPU is not another's
        changed = False
        for v in vgpus:
            if len(v["vfs"]) != 1:
                continue
            for other in vgpus:
                if other is not v and len(other["vfs"]) > 1 and v["vfs"][0] in other["vfs"]:
                    other["vfs"].remove(v["vfs"][0])
                    changed = True
    for v in vgpus:
        v["address"] = v["vfs"][0] if len(v["vfs"]) == 1 else None
    return vgpus


def smi_vgpus(ctx):
    """The vGPUs ``nvidia-smi vgpu -q`` lists, per GPU (only for a GPU in MIG mode with typed VFs: which GPU instance
    a MIG-backed vGPU holds is not in sysfs)."""
    return _smi_once(ctx, "nvidia_vgpu_q", ["vgpu", "-q"], parse_vgpu_query)


def vgpu_gi_evidence(vgpus):
    """{GI id: [evidence]} for one GPU's MIG-backed vGPUs (:func:`parse_vgpu_query` entries tied to their VFs by
    :func:`assign_vgpu_vfs`): each GI holding a vGPU is in use by it (``{kind: vgpu, name: <host VF address>}``; the
    VFs it may be on, comma-separated, when nothing tells which). What a layout change must not destroy."""
    out = {}
    for v in vgpus:
        if v["gpu_instance_id"] is None:
            continue
        vfs = v.get("vfs") or []
        where = ("VF %s" % vfs[0]) if len(vfs) == 1 else ("one of VFs %s" % ", ".join(vfs)) if vfs else "a VF"
        out.setdefault(v["gpu_instance_id"], []).append({
            "kind": "vgpu", "name": ", ".join(vfs) or None, "pid": None,
            "evidence": "vGPU %s on %s%s (nvidia-smi vgpu -q: GPU Instance ID %d)"
                        % (v["name"] or v["type_id"], where, ", domain %s" % v["vm_name"] if v["vm_name"] else "",
                           v["gpu_instance_id"])})
    return out


def mig_backed_types(supported, profiles):
    """{type id: GI profile name} of a card's MIG-backed types: those whose ``GPU Instance Profile ID`` (``supported``:
    :func:`parse_vgpu_supported_types` of the card) is one of the card's GI profiles (``profiles``: ``-lgip`` rows,
    {id, name})."""
    names = dict((p["id"], p["name"]) for p in profiles or [])
    return dict((tid, names[t["gi_profile_id"]]) for tid, t in (supported or {}).items() if t["gi_profile_id"] in names)


def _mig_vgpus(ctx, pf, gpu, mig, backed):
    """MIG-backed vGPU on a GPU in MIG mode with typed VFs: ``mig.vgpus`` (each VF's vGPU and the GI it holds, from
    ``nvidia-smi vgpu -q`` tied to the VF by :func:`assign_vgpu_vfs`), ``mig.creatable_vgpu_types`` (the MIG-backed
    types a VF can take now, with the GI profile and how many of its GIs back no vGPU), and each GI backing a vGPU
    marked in use (``vgpu``: its VF (null where nvidia-smi does not tell which of ``vfs``) and type; evidence: the
    vGPU, and a domain or process that has the VF). ``backed``: {type id: GI profile name} of the MIG-backed types."""
    typed = dict((v["address"], v["current_type"]["id"]) for v in gpu["vgpu_vfs"] if v["current_type"])
    smi = smi_vgpus(ctx).get(pf.address, []) if typed else []

    def evidence_of(addr):
        vf = ctx.scan.get(addr)
        if ctx.inuse is None or vf is None:
            return []
        return ctx.inuse.lookup(address=addr, iommu_group=vf.identity().get("iommu_group"))
    assign_vgpu_vfs(smi, typed, lambda a: [e.get("name") for e in evidence_of(a) if e.get("kind") == "domain"])
    held_by = vgpu_gi_evidence(smi)
    by_id = dict((gi["id"], gi) for gi in mig["gpu_instances"])
    type_of = dict((v["current_type"]["id"], v["current_type"]) for v in gpu["vgpu_vfs"] if v["current_type"])
    for gi in mig["gpu_instances"]:
        gi["vgpu"] = None
    gi_of = dict((v["address"], v["gpu_instance_id"]) for v in smi if v["address"])
    vgpus = []
    for v in gpu["vgpu_vfs"]:
        t = v["current_type"]
        profile = backed.get(t["id"]) if t else None
        if profile:
            vgpus.append({"address": v["address"], "type": t, "profile": profile, "gpu_instance_id": gi_of.get(v["address"])})
    for sv in smi:
        gi = by_id.get(sv["gpu_instance_id"])
        if gi is None:
            continue
        gi["vgpu"] = {"address": sv["address"], "vfs": list(sv["vfs"]),
                      "type": type_of.get(sv["type_id"]) or {"id": sv["type_id"], "name": sv["name"]}}
        gi["in_use"] = True
        ev = list(held_by.get(gi["id"], ()))
        for a in sv["vfs"]:
            ev += [e for e in evidence_of(a) if e not in ev]
        gi["in_use_by"] = ev + [e for e in gi["in_use_by"] if e not in ev]
    busy = Counter(gi["name"] for gi in mig["gpu_instances"] if gi.get("vgpu"))
    total = Counter(gi["name"] for gi in mig["gpu_instances"])
    typed_on = Counter(v["profile"] for v in vgpus)  # a typed VF holds a GI even where nvidia-smi does not list it
    names = dict((t["id"], t["name"]) for t in gpu["vgpu_types"])
    creatable = {}
    for v in gpu["vgpu_vfs"]:
        for tid in v["creatable_type_ids"]:
            profile = backed.get(tid)
            if profile and tid not in creatable:
                creatable[tid] = {"id": tid, "name": names.get(tid), "profile": profile,
                                  "free": max(0, total[profile] - max(busy[profile], typed_on[profile]))}
    mig["vgpus"] = vgpus
    mig["creatable_vgpu_types"] = sorted(creatable.values(), key=lambda t: int(t["id"]))


def mig_layout_function(mig):
    """The function of a GPU in MIG mode that carries MIG-backed vGPUs: its layout (``1 x 3g.40gb + 2 x 1g.10gb``,
    as ``nvidia_mig`` writes it), with the layout's trait."""
    text = layout_text([gi["name"] for gi in mig["gpu_instances"]])
    return function_record(text, "MIG " + text, discovered_function_trait("MIG " + text))


def mig_vgpu_inventory(mig, profile):
    """VGPU units of a MIG-backed type running on GI ``profile`` on a GPU: one per GI of that profile (free or holding
    one of its vGPUs), as Nova counts MIG-backed vGPUs (each VF offers the type while a GI is free, capped by
    ``[mdev_<type>] max_instances``, which its docs set to the number of GIs)."""
    return sum(1 for gi in mig.get("gpu_instances") or [] if profile and gi.get("name") == profile)


def mig_state(ctx):
    """MIG state of every GPU nvidia-smi sees, keyed by PCI address; {} when nvidia-smi is absent
    or fails (then a warning says why). Runs at most once per discovery."""
    cache = ctx.cache.get("nvidia_mig")
    if cache is not None:
        return cache
    state = {}
    ctx.cache["nvidia_mig"] = state
    res = ctx.run_tool("nvidia-smi", ["--query-gpu=index,pci.bus_id,mig.mode.current,mig.mode.pending",
                                      "--format=csv,noheader"])
    if res is None:
        return state
    rc, out, err = res
    if rc != 0:
        ctx.warn("nvidia-smi --query-gpu failed (rc %s): %s" % (rc, (err or out).strip()[:200]))
        return state
    modes = parse_mig_modes(out)
    gis, cis, gip, gipp = {}, {}, {}, {}
    if any(m["mode_current"] == "Enabled" for m in modes.values()):
        res = ctx.run_tool("nvidia-smi", ["mig", "-lgi"])
        if res is not None and res[0] == 0:
            gis = parse_mig_gi(res[1])
        res = ctx.run_tool("nvidia-smi", ["mig", "-lci"])
        if res is not None and res[0] == 0:
            cis = parse_mig_ci(res[1])
        res = ctx.run_tool("nvidia-smi", ["mig", "-lgip"])
        if res is not None and res[0] == 0:
            gip = parse_mig_gip(res[1])
        if gip:
            res = ctx.run_tool("nvidia-smi", ["mig", "-lgipp"])
            if res is not None and res[0] == 0:
                gipp = parse_mig_gipp(res[1])
    for addr, m in modes.items():
        enabled = m["mode_current"] == "Enabled"
        state[addr] = {
            "index": m["index"],
            "mode_current": m["mode_current"],
            "mode_pending": m["mode_pending"],
            "gpu_instances": gis.get(m["index"], []) if enabled else [],
            "compute_instances": cis.get(m["index"], []) if enabled else [],
            "profiles": _mig_profiles(gip.get(m["index"], []), gipp.get(m["index"], {})) if enabled else [],
        }
        _mig_in_use(ctx, addr, state[addr])
    return state


class NvidiaGpuDriver(GpuDriver):
    name = "nvidia"
    family = "gpu"
    programming_model = "single"
    vendor_vfio_vendor = "10de"    # Ada/Hopper/Blackwell vGPU: VFs typed through nvidia/current_vgpu_type
    vendor_vfio_name = "NVIDIA"
    discovery_tool = ("nvidia-smi", "nvidia_smi", "MIG state")
    cyborg_driver_name = "nvidia_gpu_driver"
    pci_vendors = {"nvidia": "10de"}

    def claims(self, func, ctx=None):
        return func.vendor_id == "10de" and func.base_class == "03"

    def matches_record(self, record):
        return record.get("family") == "gpu" and record.get("vendor_id") == "10de"

    def in_use_evidence(self, card):
        # a MIG GPU's instances are units of the card too (discovery lists them, with their holders, under gpu.mig)
        mig = (card.get("gpu") or {}).get("mig") if isinstance(card.get("gpu"), dict) else None
        return ["mig gpu instance %s (%s): %s %s" % (gi.get("id"), gi.get("name"), who.get("kind", "?"),
                                                     who.get("evidence") or who.get("name") or "")
                for gi in (mig or {}).get("gpu_instances") or [] for who in gi.get("in_use_by") or []]

    def held_device_nodes(self, sysfs):
        # a MIG GPU's instances are held through its capability nodes (one per GPU and compute instance) and the GPU
        # through /dev/nvidia<minor>; without caps nodes there is no instance to hold
        try:
            return held_node if os.listdir(sysfs.real("/dev/nvidia-caps")) else None
        except (IOError, OSError):
            return None

    def provider_specs(self, record, base_traits, function_traits):
        """A GPU in MIG mode carrying MIG-backed vGPUs: VGPU units of its vGPUs' type, one per GI of the profile
        that type runs on (:func:`mig_vgpu_inventory`), with the layout's function trait and the type's; any other
        GPU as the GPU family reports it."""
        mig = (record.get("gpu") or {}).get("mig") or {}
        if not mig.get("vgpus"):
            return super(NvidiaGpuDriver, self).provider_specs(record, base_traits, function_traits)
        names = Counter(v["type"].get("name") or v["type"].get("id") for v in mig["vgpus"])
        name = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        profile = [v["profile"] for v in mig["vgpus"] if (v["type"].get("name") or v["type"].get("id")) == name][0]
        note = None
        if len(names) > 1:
            note = "vGPUs of several MIG-backed types (%s): one provider reports one type, %s" % (", ".join(sorted(names)), name)
        traits = base_traits + function_traits(record.get("function")) + [discovered_function_trait(name)]
        return [(record.get("address"), "VGPU", mig_vgpu_inventory(mig, profile), traits, note)]

    # -- vendor-specific VFIO vGPU ----------------------------------------------------------------
    def vendor_vfio_why_not(self, unit):
        return None if unit.get("vgpu_type") else "NVIDIA vendor-VFIO VF without a vGPU type"

    def vendor_vfio_unmanaged(self):
        return ("NVIDIA vendor-VFIO VF",
                "the nvidia driver must stay bound to serve the vGPU, so libvirt must not rebind it")

    def vendor_vfio_backend(self):
        # by name, on first use: the programming backend is loaded by the vgpu engine, not by discovery, and shipped
        # only by the modules that program vGPUs (they import it themselves), not by every module that has the driver
        from ansible_collections.accelops.lifecycle.plugins.module_utils import _engines  # pylint: disable=import-outside-toplevel
        return _engines.engine("_engines.nvidia_vgpu").BACKEND

    @staticmethod
    def _vgpu_of(func):
        """(current type id or None, creatable [{id,name}]) for a function with an nvidia/ dir."""
        cur = read_text(func, func.real + "/nvidia/current_vgpu_type", "nvidia/current_vgpu_type")
        creatable = parse_vgpu_types(read_text(func, func.real + "/nvidia/creatable_vgpu_types",
                                               "nvidia/creatable_vgpu_types"))
        cur_id = None
        if cur is not None:
            cur = cur.strip()
            if cur.isdigit():
                cur_id = None if int(cur) == 0 else str(int(cur))
            elif cur:
                func.warn("nvidia/current_vgpu_type: unexpected value %r" % cur[:40])
        return cur_id, creatable

    def _card_types(self, pf, ctx):
        """{type id: name} for a card: the union of what its PF and VFs list (cached per card)."""
        key = "nvidia_types:" + pf.address
        if key in ctx.cache:
            return ctx.cache[key]
        names = {}
        pf.identity()
        members = [pf] + [ctx.scan.get(a) for a in (pf.vfs or [])]
        vgpu = {}
        for f in members:
            if f is None or "nvidia" not in f.entries():
                continue
            cur, creatable = self._vgpu_of(f)
            # read directly (a missing file is silent): no listing of nvidia/ per VF
            supported = read_text(f, f.real + "/nvidia/supported_vgpu_types", "nvidia/supported_vgpu_types")
            for t in parse_vgpu_types(supported):
                names.setdefault(t["id"], t["name"])
            for t in creatable:
                names.setdefault(t["id"], t["name"])
            vgpu[f.address] = (cur, creatable)
        ctx.cache[key] = (names, vgpu)
        return names, vgpu

    def _model_names(self, pf, ctx):
        """{type id: name} from every NVIDIA card of the same model (vendor, device and subsystem ids)
        on this host: a type id means the same on identical cards (cached per model)."""
        ident = pf.identity()
        model = (pf.vendor_id, pf.device_id, ident.get("subsystem_vendor_id"), ident.get("subsystem_device_id"))
        key = "nvidia_model_types:%s:%s:%s:%s" % model
        if key in ctx.cache:
            return ctx.cache[key]
        names = {}
        for other in ctx.scan.functions.values():
            if other is pf or other.physfn or not self.claims(other) or other.vendor_id != pf.vendor_id \
                    or other.device_id != pf.device_id:
                continue
            oid = other.identity()
            if (oid.get("subsystem_vendor_id"), oid.get("subsystem_device_id")) != model[2:]:
                continue
            for tid, name in self._card_types(other, ctx)[0].items():
                if name:
                    names.setdefault(tid, name)
        ctx.cache[key] = names
        return names

    def type_name(self, pf, tid, names, ctx):
        """The name of vGPU type ``tid`` on card ``pf``: what the card's own PF/VFs list, else what a card
        of the same model lists, else ``nvidia-smi vgpu -s -v`` for that card; None when nothing knows."""
        if not tid:
            return None
        name = names.get(tid)
        if name:
            return name
        resolved = ctx.cache.setdefault("nvidia_resolved:" + pf.address, {})
        if tid not in resolved:
            resolved[tid] = self._model_names(pf, ctx).get(tid) or smi_vgpu_names(ctx).get(pf.address, {}).get(tid)
        return resolved[tid]

    def describe(self, func, ctx):
        gpu = empty_gpu_section()
        out = {"gpu": gpu, "function": None}
        model = "fixed"
        ent = func.entries()
        types, mdevs = [], []
        if "mdev_supported_types" in ent or any(len(e) == 36 for e in ent):
            types, mdevs = read_mdev(func, ctx)
            gpu["mdev_types"] = types
            gpu["mdevs"] = mdevs
            out["units"] = mdev_units(func, mdevs)
            if types:
                model = "single"
            out["function"] = mdev_function(types, mdevs, func)
        pf = ctx.scan.get(func.physfn) if func.physfn else func
        if pf is not None and ("nvidia" in ent or (func is pf and pf.identity()["sriov"]["vfs"])):
            names, vgpu = self._card_types(pf, ctx)

            def _t(tid):
                return {"id": tid, "name": self.type_name(pf, tid, names, ctx)} if tid else None
            if func.address in vgpu and func.physfn:
                cur, creatable = vgpu[func.address]
                gpu["vgpu"] = {"current_type": _t(cur), "creatable_types": creatable}
                out["unit_type"] = cur
                model = "single"
                if cur:
                    name = self.type_name(pf, cur, names, ctx)
                    out["function"] = function_record(cur, name, discovered_function_trait(name, "NVIDIA_VGPU_" + cur))
            if func is pf and vgpu:
                gpu["vgpu_types"] = [{"id": k, "name": v} for k, v in sorted(names.items(), key=lambda kv: int(kv[0]))]
                gpu["vgpu_vfs"] = [
                    {"address": a, "current_type": _t(vgpu[a][0]),
                     "creatable_type_ids": [t["id"] for t in vgpu[a][1]]}
                    for a in (pf.vfs or []) if a in vgpu]
                if gpu["vgpu_types"] or gpu["vgpu_vfs"]:
                    model = "single"
                if out["function"] is None:
                    counts = Counter(v["current_type"]["id"] for v in gpu["vgpu_vfs"] if v["current_type"])
                    if counts:
                        tid = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
                        name = self.type_name(pf, tid, names, ctx)
                        out["function"] = function_record(tid, name, discovered_function_trait(name, "NVIDIA_VGPU_" + tid))
        if not func.physfn and func.driver == "nvidia" and ctx.tool_enabled("nvidia-smi"):
            mig = mig_state(ctx).get(func.address)
            if mig is not None and mig["mode_current"] is not None:
                gpu["mig"] = mig
                # which types are MIG-backed, and on which GI profile: nvidia-smi vgpu -s -v's GPU Instance Profile ID
                backed = {}
                if (gpu["vgpu_types"] or gpu["vgpu_vfs"]) and mig["gpu_instances"]:
                    backed = mig_backed_types(smi_vgpu_types(ctx).get(func.address, {}), mig["profiles"])
                for gi in mig["gpu_instances"]:
                    gi["vgpu_types"] = [t for t in gpu["vgpu_types"] if backed.get(t["id"]) == gi["name"]]
                if mig["mode_current"] == "Enabled":
                    model = "dynamic"
                    if gpu["vgpu_vfs"]:
                        _mig_vgpus(ctx, func, gpu, mig, backed)
                        if mig["vgpus"]:
                            out["function"] = mig_layout_function(mig)
        out["programming_model"] = model
        return out


# -- the declaration's mig kind ----------------------------------------------------------------------------------
class MigKind(Kind):
    """An NVIDIA GPU's MIG mode and layout (``accelops.lifecycle.nvidia_mig``). Its engine (``_engines/nvidia_mig.py``)
    is imported by name through ``_engines.ENGINES`` (``Kind.program``): a module that only reads declarations does
    not ship it."""

    name = "mig"
    keys = ("layout", "mode")
    families = ("gpu",)
    module = "accelops.lifecycle.nvidia_mig"
    converge_settings = HOST_PROGRAM_SETTINGS

    def validate(self, c, raw):
        m = c.mapping(raw, "mig", self.keys)
        mode = m.get("mode", "enabled")
        if mode not in ("enabled", "disabled"):
            c.fail("mig.mode", "%r is not a MIG mode; accepted: enabled, disabled" % (mode,))
        try:
            names = parse_layout(m.get("layout"), option="layout")
        except ProgrammingError as e:  # the engine's message names the key and the accepted forms
            c.fail("mig", str(e))
        if mode == "enabled" and names is None:
            c.fail("mig.layout", "is required with mode enabled: a list like [{profile: 1g.10gb, count: 7}], a "
                                 "mapping {1g.10gb: 7} or a string like '2 x 3g.40gb + 1 x 1g.10gb'")
        return {"mode": mode, "layout": m.get("layout"), "profiles": names}

    def refusal(self, entry, card):
        if (card.get("gpu") or {}).get("mig") is None:
            return "not a MIG-capable GPU (discovery shows no gpu.mig)"
        return None

    def carries(self, entry, card, by_addr):
        return carries_layout(card, entry["mig"]["mode"], entry["mig"]["profiles"])

    def module_args(self, entry, address):
        args = {"address": address, "mode": entry["mig"]["mode"]}
        if entry["mig"]["layout"] is not None:
            args["layout"] = entry["mig"]["layout"]
        return args


MIG_KIND = MigKind()
