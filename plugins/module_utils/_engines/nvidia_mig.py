# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA MIG programming: MIG mode and the layout of GPU instances (GIs) of one GPU, through ``nvidia-smi``.

What mig-parted does for Kubernetes nodes, as a plan: read the GPU's state (``--query-gpu`` modes, ``mig -lgi``,
``-lci``, ``-lgip``, ``-lgipp``), compare the layout (the multiset of GI profile names) with the declared one and,
when they differ,

1. destroy the compute instances of the GIs that go (``mig -dci -i N -gi G``),
2. destroy those GIs (``mig -dgi -i N -gi G``),
3. create the missing GIs with their default compute instances (``mig -cgi ID,ID -C -i N``, largest first).

GIs that the new layout also has are kept when the rest still fits beside them (placements from ``-lgipp``,
compute slices and per-profile limits from ``-lgip``); otherwise everything is rebuilt. Nothing is destroyed
while it is in use: a process holding the GI's (or one of its compute instances') ``/dev/nvidia-caps`` node, or
a running domain that has the GPU, one of its VFs or mdevs (which GI backs a MIG vGPU is not visible, so such a
domain counts against every GI). Each step's undo puts back what it removed (``-cgi`` of the old profiles with
``-C``: the driver picks ids and placements again).

MIG mode: ``nvidia-smi -i N -mig 1|0``. The driver resets the GPU when nothing holds it; otherwise the change is
*pending* until a GPU reset or a reboot, which this never does: the result says so (``reset_required``) and the
layout is created by a later run or, with ``persistent``, by the boot unit. Layouts do not survive a reboot, so
the boot unit (ordered before the vGPU unit of the same GPU, libvirtd and nova-compute) recreates the layout when
MIG mode is in effect and the GPU has no GI.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import re

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia import (  # noqa: F401  pylint: disable=unused-import
    assign_vgpu_vfs,
    gpu_minor,
    mig_evidence,
    read_mig_minors,
    vgpu_gi_evidence,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia_mig_layout import (  # noqa: F401  pylint: disable=unused-import
    carries_layout,
    layout_text,
    parse_layout,
    profile_slices,
    record_layout,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia_smi import (
    parse_mig_ci,
    parse_mig_gi,
    parse_mig_gip,
    parse_mig_gipp,
    parse_vgpu_query,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import Job, tool_program
from ansible_collections.accelops.lifecycle.plugins.module_utils._inuse import evidence_text
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import shell_quote, unit_basename
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import DEVICES, HostOps, ProgrammingError, blocking

SMI = "nvidia-smi"
NOT_FOUND = 6  # nvidia-smi's exit status when there is nothing to list
QUERY = "--query-gpu=index,pci.bus_id,pci.device_id,pci.sub_device_id,mig.mode.current,mig.mode.pending"
CREATED_RE = re.compile(r"Successfully created GPU instance ID\s+(\d+)")
COMPUTE_SLICES = 7


# -- mig-parted config files -------------------------------------------------------------------------------------
def load_mig_parted(config, option="mig_parted_config"):
    """A mig-parted config (the mapping; a file named by its path is read and parsed by the nvidia_mig action, on the
    controller) -> its ``mig-configs``."""
    if isinstance(config, str):
        raise ProgrammingError("%s: the module takes the parsed mapping; a file's path (%s) is read by the task's action "
                               "(run accelops.lifecycle.nvidia_mig as a task, or pass the mapping itself)" % (option, config))
    if not isinstance(config, dict) or not isinstance(config.get("mig-configs"), dict):
        raise ProgrammingError("%s: expected mig-parted's format, a mapping with 'version: v1' and 'mig-configs: "
                               "{NAME: [{devices: all, mig-enabled: true, mig-devices: {\"1g.10gb\": 7}}]}'" % option)
    return config["mig-configs"]


def _pci_id(text, where):
    """mig-parted's ``0x233510DE`` (device, then vendor) -> ``(device, vendor)`` as 4-digit lower-case hex."""
    t = ("%s" % (text,)).strip().lower()
    t = t[2:] if t.startswith("0x") else t
    if not re.match(r"^[0-9a-f]{1,8}$", t):
        raise ProgrammingError("%s: %r is not a PCI id like 0x233510DE (device then vendor) or "
                               "0x233010DE:0x16C010DE (with the subsystem)" % (where, text))
    t = t.rjust(8, "0")
    return t[:4], t[4:]


def filter_matches(filt, device_id, sub_device_id, where):
    """Whether a mig-parted ``device-filter`` (one id or a list) names the GPU: ``0x233510DE`` matches on device and
    vendor, ``0x233010DE:0x16C010DE`` also on the subsystem device and vendor (mig-parted's DeviceID.Matches); no
    filter, or an empty one, matches every GPU."""
    filters = [filt] if isinstance(filt, str) else filt
    if filters is None or filters == "":
        return True
    if not isinstance(filters, list):
        raise ProgrammingError("%s: expected a PCI id or a list of them" % where)
    if not filters:
        return True
    gpu = _pci_id(device_id or "0", "device id")
    sub = _pci_id(sub_device_id, "subsystem id") if sub_device_id and sub_device_id.lower().startswith("0x") else None
    for f in filters:
        primary, _sep, subsystem = ("%s" % (f,)).partition(":")
        if _pci_id(primary, where) != gpu:
            continue
        if subsystem and (sub is None or _pci_id(subsystem, where) != sub):
            continue
        return True
    return False


def mig_parted_entry(configs, name, index, device_id, sub_device_id=None):
    """The state mig-parted config ``name`` leaves the GPU with nvidia-smi index ``index``, PCI id ``device_id``
    (``0x20B010DE``) and subsystem id ``sub_device_id`` (``0x16C010DE``) in. mig-parted applies every entry whose
    ``devices`` (``all`` or a list holding ``index``) and ``device-filter`` (when present) match the GPU, in the
    file's order, so the last of them decides the GPU's mode and layout. Returns ``(mode, layout names, entry
    indexes applied)``."""
    if name not in configs:
        raise ProgrammingError("config_name: %r is not in the mig-parted config; it has: %s"
                               % (name, ", ".join(sorted(configs)) or "none"))
    entries = configs[name]
    if not isinstance(entries, list):
        raise ProgrammingError("mig_parted_config: mig-configs.%s must be a list of {devices, mig-enabled, mig-devices}" % name)
    found = []
    for i, e in enumerate(entries):
        where = "mig_parted_config: mig-configs.%s[%d]" % (name, i)
        if not isinstance(e, dict) or "devices" not in e or "mig-enabled" not in e:
            raise ProgrammingError("%s: needs 'devices' and 'mig-enabled'" % where)
        devs = e["devices"]
        if devs != "all" and not (isinstance(devs, list) and all(isinstance(d, int) for d in devs)):
            raise ProgrammingError("%s.devices: expected 'all' or a list of GPU indexes" % where)
        if not isinstance(e["mig-enabled"], bool):
            raise ProgrammingError("%s.mig-enabled must be true or false" % where)
        if devs != "all" and index not in devs:
            continue
        if not filter_matches(e.get("device-filter"), device_id, sub_device_id, where + ".device-filter"):
            continue
        found.append(i)
    if not found:
        raise ProgrammingError("config_name: mig-configs.%s has no entry for GPU %d (device id %s, subsystem %s)"
                               % (name, index, device_id, sub_device_id or "unknown"))
    last = found[-1]
    e = entries[last]
    for i in found[:-1]:  # what an earlier entry asks is checked too (a bad layout fails wherever it is)
        parse_layout(entries[i].get("mig-devices") or {}, "mig_parted_config: mig-configs.%s[%d].mig-devices" % (name, i),
                     empty_means_none=True)
    if not e["mig-enabled"]:
        return "disabled", [], found
    return "enabled", parse_layout(e.get("mig-devices") or {}, "mig_parted_config: mig-configs.%s[%d].mig-devices"
                                   % (name, last), empty_means_none=True), found


# -- reading the GPU -------------------------------------------------------------------------------------------
def _bus_id(address):
    dom, rest = address.split(":", 1)
    return ("0000%s:%s" % (dom, rest)).upper()


def read_gpus(ops):
    """[{index, address, device_id, sub_device_id, mode_current, mode_pending}] of every GPU nvidia-smi sees."""
    _rc, out, _err = ops.run_tool(SMI, [QUERY, "--format=csv,noheader"])
    gpus = []
    for line in out.splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) < 6 or not cols[0].isdigit():
            continue
        addr = pci_address(cols[1])

        def mode(v):
            return None if v.startswith("[") or v in ("", "N/A") else v
        gpus.append({"index": int(cols[0]), "address": addr, "device_id": cols[2], "sub_device_id": cols[3],
                     "mode_current": mode(cols[4]), "mode_pending": mode(cols[5])})
    return gpus


def find_gpu(ops, address=None, index=None):
    gpus = read_gpus(ops)
    for g in gpus:
        if (address is not None and g["address"] == address) or (index is not None and g["index"] == index):
            return g
    seen = ", ".join("%d (%s)" % (g["index"], g["address"]) for g in gpus) or "none"
    if address is None and index is None:
        raise ProgrammingError("address: give the GPU's PCI address (0000:17:00.0), or gpu, its nvidia-smi index; "
                               "nvidia-smi lists: %s" % seen)
    if address is not None:
        raise ProgrammingError("address: nvidia-smi does not list a GPU at %s; it lists: %s" % (address, seen))
    raise ProgrammingError("gpu: nvidia-smi does not list GPU %d; it lists: %s" % (index, seen))


def _listing(ops, args):
    rc, out, err = ops.run_tool(SMI, args, check=False)
    if rc == NOT_FOUND:
        return ""
    if rc != 0:
        raise ProgrammingError("%s %s failed (exit %s): %s" % (SMI, " ".join(args), rc, ((err or "") + (out or "")).strip()[-400:]))
    return out


def read_layout(ops, index):
    """The GPU's GIs [{id, name, profile_id, placement, compute_instances: [ids]}] and its profiles {name: {...}}."""
    gis = parse_mig_gi(_listing(ops, ["mig", "-lgi", "-i", str(index)])).get(index, [])
    cis = parse_mig_ci(_listing(ops, ["mig", "-lci", "-i", str(index)])).get(index, [])
    for gi in gis:
        gi["compute_instances"] = [c["id"] for c in cis if c["gpu_instance_id"] == gi["id"]]
    gip = parse_mig_gip(_listing(ops, ["mig", "-lgip", "-i", str(index)])).get(index, [])
    gipp = parse_mig_gipp(_listing(ops, ["mig", "-lgipp", "-i", str(index)])).get(index, {})
    profiles = {}
    for p in gip:
        starts, size = gipp.get(p["id"], (None, None))
        profiles[p["name"]] = {"id": p["id"], "total": p["instances_total"], "compute": p["compute_slices"] or profile_slices(p["name"]),
                               "size": size, "starts": starts}
    return gis, profiles


def _units_of_gpu(ops, address):
    """The GPU, its VFs and the mdevs on them: what a running domain may hold of it."""
    base = "%s/%s" % (DEVICES, address)
    units = [address]
    for name in ops.sysfs.listdir(base):
        if name.startswith("virtfn"):
            vf = ops.sysfs.link_name("%s/%s" % (base, name))
            if vf:
                units.append(vf)
    mdevs = []
    for u in units:
        for name in ops.sysfs.listdir("%s/%s" % (DEVICES, u)):
            if len(name) == 36 and name.count("-") == 4:
                mdevs.append(name)
    return units, mdevs


def gpu_domains(ops, address):
    """Running domains that have the GPU, one of its VFs or one of their mdevs."""
    units, mdevs = _units_of_gpu(ops, address)
    out = []
    for ev in [e for a in units for e in ops.evidence(address=a)] + [e for u in mdevs for e in ops.evidence(uuid=u)]:
        if ev["kind"] == "domain" and ev not in out:
            out.append(ev)
    return out


def vgpu_holders(ops, gpu):
    """{gi id: [evidence]}: the MIG-backed vGPUs ``nvidia-smi vgpu -q`` lists on the GPU, by the GI each holds, tied to
    the host VF that has it (its ``Bus Id`` is the guest's address: the VFs' ``nvidia/current_vgpu_type`` and the
    running domains tell). A tool without vGPU support (the plain datacenter driver) answers with an error or "No
    supported devices in vGPU mode": no vGPU holds a GI then."""
    rc, out, _err = ops.run_tool(SMI, ["vgpu", "-q", "-i", str(gpu["index"])], check=False)
    if rc != 0:
        return {}
    vgpus = parse_vgpu_query(out).get(gpu["address"], [])
    if not vgpus:
        return {}
    units, _mdevs = _units_of_gpu(ops, gpu["address"])
    typed = {}
    for vf in units[1:]:
        cur = (ops.sysfs.read_optional("%s/%s/nvidia/current_vgpu_type" % (DEVICES, vf)) or "").strip()
        if cur.isdigit() and int(cur):
            typed[vf] = str(int(cur))
    assign_vgpu_vfs(vgpus, typed, lambda a: [e.get("name") for e in ops.evidence(address=a) if e.get("kind") == "domain"])
    return vgpu_gi_evidence(vgpus)


def instance_evidence(ops, gpu, gis):
    """{gi id: [evidence]}: processes holding the GI's caps nodes, a MIG-backed vGPU on the GI, and running domains
    with the GPU (for each GI)."""
    inuse = ops.inuse()
    by_path = getattr(inuse, "by_path", {})
    minors = read_mig_minors(ops.sysfs) if by_path else {}
    minor = gpu_minor(ops.sysfs, gpu["address"], gpu["index"])
    domains = gpu_domains(ops, gpu["address"])
    vgpus = vgpu_holders(ops, gpu) if gis else {}
    out = {}
    for gi in gis:
        ev = mig_evidence(by_path, minors, minor, gi["id"], gi["compute_instances"]) if by_path else []
        out[gi["id"]] = ev + vgpus.get(gi["id"], []) + domains
    return out


# -- planning --------------------------------------------------------------------------------------------------
def fits(profiles, kept, wanted):
    """Whether GIs of the profile names ``wanted`` fit beside the GIs ``kept`` ([{name, placement}]): a free
    placement each (memory slices), compute slices (7) and each profile's instance limit."""
    used = set()
    compute = 0
    count = {}
    for gi in kept:
        start, size = (int(x) for x in gi["placement"].split(":"))
        used |= set(range(start, start + size))
        compute += profiles.get(gi["name"], {}).get("compute", profile_slices(gi["name"]))
        count[gi["name"]] = count.get(gi["name"], 0) + 1
    # the card's compute slices: those of its whole-GPU profile (7; 4 on an A30)
    limit = max([p["compute"] for p in profiles.values()] or [COMPUTE_SLICES])
    if compute + sum(profiles[n]["compute"] for n in wanted) > limit:
        return False
    for n in set(wanted):
        if count.get(n, 0) + wanted.count(n) > profiles[n]["total"]:
            return False
    order = sorted(wanted, key=lambda n: (-(profiles[n]["size"] or 0), n))

    def place(i, used):
        if i == len(order):
            return True
        p = profiles[order[i]]
        if p["size"] is None or p["starts"] is None:
            return True  # no placements listed (an old driver): let the driver decide
        for s in p["starts"]:
            span = set(range(s, s + p["size"]))
            if not span & used and place(i + 1, used | span):
                return True
        return False
    return place(0, used)


def resolve_names(names, profiles, option):
    out = []
    for n in names:
        if n not in profiles:
            raise ProgrammingError("%s: this GPU offers no MIG profile %s; it offers: %s"
                                   % (option, n, ", ".join(sorted(profiles, key=lambda k: (profile_slices(k), k)))))
        out.append(n)
    return out


def choose_kept(gis, wanted, evidence):
    """GIs of the wanted profiles to keep (in-use ones first, then the lowest ids), and the names still to create."""
    kept = []
    rest = list(wanted)
    for gi in sorted(gis, key=lambda g: (not evidence.get(g["id"]), g["id"])):
        if gi["name"] in rest:
            rest.remove(gi["name"])
            kept.append(gi)
    return kept, rest


class MigOps(object):
    """The nvidia-smi commands of a plan, as plan actions (each audited when it succeeds)."""

    def __init__(self, ops, gpu):
        self.ops = ops
        self.gpu = gpu
        self.i = str(gpu["index"])

    def smi(self, args, check=True):
        return self.ops.run_tool(SMI, args, check=check)

    def destroy_cis(self, gis):
        def run():
            for gi in gis:
                if gi["compute_instances"]:
                    self.smi(["mig", "-dci", "-i", self.i, "-gi", str(gi["id"])])
            self._audit("destroy MIG compute instances", ["GI %d" % g["id"] for g in gis], None)
        return run

    def recreate_cis(self, gis):
        """Undo of destroy_cis: a default compute instance on each of those GIs that still exists without one."""
        def run():
            now, _profiles = read_layout(self.ops, self.gpu["index"])
            for gi in gis:
                cur = [g for g in now if g["id"] == gi["id"] and g["name"] == gi["name"]]
                if gi["compute_instances"] and cur and not cur[0]["compute_instances"]:
                    self.smi(["mig", "-cci", "-i", self.i, "-gi", str(gi["id"])])
        return run

    def destroy_gis(self, gis):
        def run():
            for gi in gis:
                self.smi(["mig", "-dgi", "-i", self.i, "-gi", str(gi["id"])])
            self._audit("destroy MIG GPU instances", layout_text([g["name"] for g in gis]), None)
        return run

    def create(self, names, profiles):
        """``-cgi ID,ID -C``, largest first; when the tool stops half way, what it created is destroyed again
        before the error is raised (so the step either happened or did not)."""
        ids = [str(profiles[n]["id"]) for n in sorted(names, key=lambda n: (-(profiles[n]["size"] or 0), -profile_slices(n), n))]
        state = {"created": []}

        def run():
            state["created"] = []
            if not ids:
                return
            rc, out, err = self.smi(["mig", "-cgi", ",".join(ids), "-C", "-i", self.i], check=False)
            state["created"] = [int(x) for x in CREATED_RE.findall(out or "")]
            if rc != 0:
                # nvidia-smi prints its errors on stdout: the last lines say why ("... Insufficient Resources")
                said = [x.strip() for x in ("%s\n%s" % (out or "", err or "")).splitlines() if x.strip()]
                self._remove(state["created"])
                raise ProgrammingError("%s mig -cgi %s -C -i %s failed (exit %s): %s"
                                       % (SMI, ",".join(ids), self.i, rc, "; ".join(said[-2:]) or "no output"))
            self._audit("create MIG GPU instances", None, layout_text(names))

        def undo():
            self._remove(state["created"])
        return run, undo

    def _remove(self, gi_ids):
        for g in gi_ids:
            self.smi(["mig", "-dci", "-i", self.i, "-gi", str(g)], check=False)
            self.smi(["mig", "-dgi", "-i", self.i, "-gi", str(g)])

    def set_mode(self, enable):
        def run():
            self.smi(["-i", self.i, "-mig", "1" if enable else "0"])
            self._audit("set MIG mode", None, "Enabled" if enable else "Disabled")
        return run

    def _audit(self, action, old, new):
        if self.ops.auditor is not None:
            self.ops.auditor.record(action, self.gpu["address"], old, new)


def refuse_unfit(profiles, names, gpu, option):
    if not fits(profiles, [], names):
        raise ProgrammingError("%s: %s does not fit on GPU %d (%s): %s" % (
            option, layout_text(names), gpu["index"], gpu["address"],
            "at most 7 compute slices, 8 memory slices at the placements nvidia-smi mig -lgipp lists, and each "
            "profile's instance limit"))


def check_layout_ahead(ops, gpu, names, option="layout"):
    """A layout asked while MIG mode is not in effect yet is checked before the mode changes, against the profiles
    the GPU lists now: nvidia-smi lists them with MIG disabled (real H100 and H200 captures, tests/captures), so a
    profile the card does not offer, or a layout that cannot fit, is refused now rather than after a reset. A
    driver that lists no profile then leaves the check to the layout step."""
    _gis, profiles = read_layout(ops, gpu["index"])
    if profiles:
        refuse_unfit(profiles, resolve_names(names, profiles, option), gpu, option)


def plan_layout(ops, plan, gpu, names, force, option="layout"):
    """Add the layout steps for a GPU whose MIG mode is in effect. Returns the layout info for the result."""
    gis, profiles = read_layout(ops, gpu["index"])
    names = resolve_names(names, profiles, option)
    current = sorted(g["name"] for g in gis)
    evidence = instance_evidence(ops, gpu, gis)
    m = MigOps(ops, gpu)
    info = {"layout_before": layout_text(current), "layout": layout_text(names),
            "gpu_instances_before": [dict(g) for g in gis]}
    refuse_unfit(profiles, names, gpu, option)
    info["_profile_ids"] = [str(profiles[n]["id"]) for n in sorted(names, key=lambda n: (-(profiles[n]["size"] or 0), -profile_slices(n), n))]
    if current == names:
        missing_ci = [g for g in gis if not g["compute_instances"]]
        for g in missing_ci:
            plan.add("create the default compute instance of MIG GPU instance %d (%s) on GPU %s" % (g["id"], g["name"], m.i),
                     lambda g=g: m.smi(["mig", "-cci", "-i", m.i, "-gi", str(g["id"])]),
                     lambda g=g: m.smi(["mig", "-dci", "-i", m.i, "-gi", str(g["id"])]),
                     target="%s/gi%d" % (gpu["address"], g["id"]), before="no compute instance", after="default compute instance")
        return info
    kept, create = choose_kept(gis, names, evidence)
    if not fits(profiles, kept, create):
        kept, create = [], list(names)
    kept_ids = set(g["id"] for g in kept)
    go = [g for g in gis if g["id"] not in kept_ids]
    for g in go:
        ev = blocking(evidence.get(g["id"], []), force)
        if ev:
            plan.block("%s/gi%d" % (gpu["address"], g["id"]),
                       "MIG GPU instance %d (%s, placement %s) would be destroyed and is in use" % (g["id"], g["name"], g["placement"]), ev)
    if plan.blocked:
        lines = ["%s: %s - %s" % (b["target"], b["reason"], evidence_text(b["evidence"])) for b in plan.blocked]
        raise ProgrammingError("refusing to change the MIG layout of GPU %s (%s) from %s to %s: %s" % (
            m.i, gpu["address"], info["layout_before"], info["layout"], "; ".join(lines)), blocked=plan.blocked)
    target = gpu["address"]
    with_ci = [g for g in go if g["compute_instances"]]
    if with_ci:
        plan.add("destroy the compute instances of MIG GPU instances %s on GPU %s"
                 % (", ".join("%d (%s)" % (g["id"], g["name"]) for g in with_ci), m.i),
                 m.destroy_cis(with_ci), m.recreate_cis(with_ci), target=target,
                 before="compute instances on GIs %s" % ", ".join(str(g["id"]) for g in with_ci), after="none on them")
    if go:
        old_names = [g["name"] for g in go]
        redo, _undo_redo = m.create(old_names, profiles)
        plan.add("destroy MIG GPU instances %s on GPU %s" % (", ".join("%d (%s)" % (g["id"], g["name"]) for g in go), m.i),
                 m.destroy_gis(go), redo, target=target, before=info["layout_before"],
                 after=layout_text(sorted(g["name"] for g in kept)))
    if create:
        run, undo = m.create(create, profiles)
        plan.add("create MIG GPU instances %s with default compute instances on GPU %s" % (layout_text(create), m.i),
                 run, undo, target=target, before=layout_text(sorted(g["name"] for g in kept)), after=info["layout"])
    info["kept"] = sorted(kept_ids)
    return info


def boot_lines(ops, gpu, names, profiles_ids):
    """The boot script: once nvidia-smi sees the GPU with MIG mode in effect and no GPU instance, create the layout
    (``-cgi ... -C``). A GPU that already has GPU instances is left as it is (something made them this boot)."""
    smi = ops.find_tool(SMI) or "/usr/bin/nvidia-smi"
    bus = _bus_id(gpu["address"])
    return [
        "# MIG layout of %s: %s" % (gpu["address"], layout_text(names)),
        "smi=%s" % shell_quote(smi),
        "bus=%s" % bus,
        'q=$("$smi" --query-gpu=index,mig.mode.current --format=csv,noheader -i "$bus" 2>/dev/null) || '
        '{ echo "accelops: nvidia-smi does not see $bus (yet)" >&2; exit 1; }',
        'i=${q%%,*}; mode=$(echo "${q#*,}" | tr -d " ")',
        '[ "$mode" = Enabled ] || { echo "accelops: MIG mode of $bus is $mode, not Enabled" >&2; exit 1; }',
        'if "$smi" mig -lgi -i "$i" >/dev/null 2>&1; then echo "accelops: $bus has GPU instances already; left as they are"; exit 0; fi',
        '"$smi" mig -cgi %s -C -i "$i" || rc=1' % ",".join(profiles_ids),
    ]


def plan_mig(ops, desired, files=None, module_name="nvidia_mig"):
    """Plan one GPU. ``desired``: dict(address, gpu, mode, layout (names or None), force, persistent). Returns
    ``(plan, info, finish)``: ``finish(check_mode)`` returns the follow-up plan a MIG mode change makes possible
    (the layout, once the mode is in effect) and records what is pending."""
    gpu = find_gpu(ops, desired.get("address"), desired.get("gpu"))
    if gpu["mode_current"] is None:
        raise ProgrammingError("%s: GPU %d (%s) is not MIG capable (nvidia-smi reports its MIG mode as [N/A])"
                               % ("address" if desired.get("address") else "gpu", gpu["index"], gpu["address"]))
    plan = Plan()
    m = MigOps(ops, gpu)
    names = desired.get("layout")
    mode = desired["mode"]
    info = {"address": gpu["address"], "index": gpu["index"], "mode_current": gpu["mode_current"],
            "mode_pending": gpu["mode_pending"], "mode": mode, "reset_required": False, "pending": None}
    enabled_now = gpu["mode_current"] == "Enabled"
    profile_ids = None
    if mode == "disabled":
        if names:
            raise ProgrammingError("layout: a layout needs mode: enabled (MIG mode %s asked)" % mode)
        if enabled_now:
            info.update(plan_layout(ops, plan, gpu, [], desired["force"]))
        if gpu["mode_pending"] != "Disabled":  # a disable already pending is not asked again (idempotent)
            plan.add("disable MIG mode on GPU %s (%s)" % (m.i, gpu["address"]), m.set_mode(False), m.set_mode(True),
                     target=gpu["address"], before="MIG mode %s (pending %s)" % (gpu["mode_current"], gpu["mode_pending"]),
                     after="MIG mode Disabled")
    else:
        if gpu["mode_pending"] != "Enabled" or not enabled_now:
            if gpu["mode_pending"] != "Enabled":
                plan.add("enable MIG mode on GPU %s (%s)" % (m.i, gpu["address"]), m.set_mode(True), m.set_mode(False),
                         target=gpu["address"], before="MIG mode %s" % gpu["mode_current"], after="MIG mode Enabled")
            info["layout"] = layout_text(names or []) if names is not None else None
            if not enabled_now and names:
                check_layout_ahead(ops, gpu, names)
        if enabled_now and names is not None:
            info.update(plan_layout(ops, plan, gpu, names, desired["force"]))
            profile_ids = info.pop("_profile_ids")
    info.pop("_profile_ids", None)
    if files is not None:
        body = None
        if mode == "enabled" and names and desired["persistent"] and profile_ids is not None:
            body = boot_lines(ops, gpu, names, profile_ids)
        if body is not None or mode == "disabled" or names == [] or (names and not desired["persistent"]):
            _unit_steps(ops, files, plan, module_name, gpu, body)

    def finish(check_mode):
        """After the plan: the mode as the GPU reports it now, and (MIG mode just came into effect) the layout."""
        if check_mode:
            if mode == "enabled" and not enabled_now and names:
                info["pending"] = ("the layout %s is created once MIG mode is in effect (at once when nothing holds the "
                                   "GPU, otherwise after a GPU reset or reboot)" % layout_text(names))
            return None
        now = find_gpu(ops, gpu["address"])
        info["mode_current"], info["mode_pending"] = now["mode_current"], now["mode_pending"]
        want = "Enabled" if mode == "enabled" else "Disabled"
        if now["mode_current"] != want:
            info["reset_required"] = True
            info["pending"] = ("MIG mode %s is pending on GPU %d (%s): something holds the GPU; it takes effect at the "
                               "next GPU reset or reboot (not done by this module)" % (want, now["index"], now["address"]))
            return None
        if mode == "enabled" and not enabled_now and names is not None:
            more = Plan()
            info.update(plan_layout(ops, more, now, names, desired["force"]))
            ids = info.pop("_profile_ids")
            if files is not None and names and desired["persistent"]:
                _unit_steps(ops, files, more, module_name, now, boot_lines(ops, now, names, ids))
            more.add("read back the MIG layout of GPU %d" % now["index"], lambda: verify(ops, info, names, mode),
                     lambda: None)
            return more
        return None
    return plan, info, finish


def _unit_steps(ops, files, plan, module_name, gpu, body):
    """The boot unit of a GPU's layout, ordered before the vGPU unit of the same GPU (vGPUs on MIG instances)."""
    files.unit_steps(plan, ops.wrap, module_name, "mig", gpu["address"], "accelops.lifecycle: MIG layout of %s" % gpu["address"],
                     body, before=(unit_basename("vgpu", gpu["address"]) + ".service",))


def verify(ops, info, names, mode):
    """Read the GPU back after a run: its mode and layout must be what was asked (a pending mode is reported, not
    an error). Returns the GIs as they are."""
    now = find_gpu(ops, info["address"])
    info["mode_current"], info["mode_pending"] = now["mode_current"], now["mode_pending"]
    if now["mode_current"] != "Enabled":
        info["gpu_instances"] = []
        return
    gis, _profiles = read_layout(ops, now["index"])
    info["gpu_instances"] = [{"id": g["id"], "profile": g["name"], "profile_id": g["profile_id"], "placement": g["placement"],
                              "compute_instances": g["compute_instances"]} for g in gis]
    if mode == "enabled" and names is not None:
        got = sorted(g["name"] for g in gis)
        if got != sorted(names):
            raise ProgrammingError("GPU %d (%s) reads back as %s, not %s"
                                   % (now["index"], now["address"], layout_text(got), layout_text(names)))
        lacking = [g["id"] for g in gis if not g["compute_instances"]]
        if lacking:
            raise ProgrammingError("GPU %d (%s): GPU instances %s have no compute instance after the run"
                                   % (now["index"], now["address"], ", ".join(str(x) for x in lacking)))


def desired_from_params(p, ops):
    """Options -> dict(address, gpu, mode, layout, force, persistent); the mig-parted entry is chosen per GPU."""
    address = None
    if p.get("address") is not None:
        address = pci_address(p["address"])
        if address is None:
            raise ProgrammingError("address: %r is not a PCI address (0000:17:00.0 or 17:00.0)" % p["address"])
    mode = p.get("mode")
    names = None
    if p.get("layout") is not None:
        names = parse_layout(p["layout"])
    if p.get("mig_parted_config") is not None:
        if not p.get("config_name"):
            raise ProgrammingError("config_name: the name of a mig-configs entry is needed with mig_parted_config")
        configs = load_mig_parted(p["mig_parted_config"])
        gpu = find_gpu(ops, address, p.get("gpu"))
        pmode, names, _applied = mig_parted_entry(configs, p["config_name"], gpu["index"], gpu["device_id"],
                                                  gpu.get("sub_device_id"))
        if mode is not None and mode != pmode:
            raise ProgrammingError("mode: %s contradicts mig-configs.%s (mig-enabled: %s)" % (mode, p["config_name"], pmode == "enabled"))
        mode = pmode
        if pmode == "disabled":
            names = None
    if mode is None:
        if names is None:
            raise ProgrammingError("one of layout, mig_parted_config or mode is needed")
        mode = "enabled"
    return {"address": address, "gpu": p.get("gpu"), "mode": mode, "layout": names, "force": p.get("force", False),
            "persistent": p.get("persistent", True)}


def plan_module(host):
    """The plan hook of the ``nvidia_mig`` module (run by :mod:`_hostmodule`)."""
    p = host.params
    ops = HostOps(host.sysfs, run=host.run, auditor=host.auditor, tool_timeout=p["tool_timeout"],
                  libvirt_run_dir=p["libvirt_run_dir"], inuse=host.inuse)
    desired = desired_from_params(p, ops)
    plan, info, after = plan_mig(ops, desired, files=host.files)
    host.result["gpu"] = info

    def finish(host):
        more = after(host.check_mode)
        host.result["reset_required"] = info["reset_required"]
        host.result["pending"] = info["pending"]
        if not host.check_mode and not more:
            verify(ops, info, desired["layout"], desired["mode"])
        return more
    return Job(plan, finish=finish, failed=lambda _host, e: "%s: %s" % (info["address"], e))


PROGRAM = tool_program(
    "nvidia_mig",
    dict(
        address=dict(type="str"),
        gpu=dict(type="int"),
        mode=dict(type="str", choices=["enabled", "disabled"]),
        layout=dict(type="raw"),
        mig_parted_config=dict(type="raw"),
        config_name=dict(type="str"),
    ),
    plan_module,
    {"gpu": (0, 63)},
)
PROGRAM.module_kwargs = dict(mutually_exclusive=[("address", "gpu"), ("layout", "mig_parted_config")],
                             required_one_of=[("address", "gpu")], required_together=[("mig_parted_config", "config_name")])
