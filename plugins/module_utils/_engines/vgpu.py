# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vGPU programming: N vGPUs of one type on a GPU, with a backend chosen from what the card shows.

- **mdev** (``<pci>/mdev_supported_types``): a vGPU is an mdev; it is created by writing its UUID to the type's
  ``create`` and removed with ``/sys/bus/mdev/devices/<uuid>/remove``. UUIDs are deterministic:
  ``uuid5(NAMESPACE, "<host>|<parent>|<type id>|<index>")``, so reruns and reboots keep identities.
- **vendor_vfio** (vendor-specific VFIO, SR-IOV cards): a vGPU is a VF given a type through the vendor's own sysfs.
  The backend is the GPU family's (``Driver.vendor_vfio_backend``: NVIDIA's in ``_engines/nvidia_vgpu.py``), found
  by the card's PCI vendor; it plans with the helpers here and :mod:`_sriov`'s.

Time-sliced cards run one type per physical GPU: changing a card's type removes every vGPU of it first (a
whole-card change, refused while any of them is in use). vGPUs on the card that the declaration does not name
(other UUIDs, extra VFs) are orphans and are removed.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import socket
import uuid as uuidlib

from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import parse_mdevctl_defined, shell_quote
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import Job, tool_program
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import (
    DEVICES,
    HostOps,
    ProgrammingError,
    blocked_error,
    blocking,
    resolve_address,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import SysfsError, kernel_int
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import UUID_RE
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import MAX_INSTANCE_RE
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.gpu import vendor_vfio_driver, vendor_vfio_names

# uuid5(NAMESPACE_URL, "https://github.com/accelops/lifecycle/vgpu"), fixed forever: changing it renames every vGPU.
NAMESPACE = uuidlib.UUID("0b7e3d6a-6f0e-5b8c-9a53-2f1c3c4d9e21")
# The vgpu module's documented range of count; the converge's declarations are held to it too, before any uuid
# is built or the card is read.
MAX_COUNT = 4096


def _short(value):
    if isinstance(value, int) and value.bit_length() > 128:
        # repr() of a very long integer raises (Python's int/str digit limit)
        return "an integer of about %d digits" % int(value.bit_length() * 0.30103)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
                      "available": int_or_none(sysfs.read_optional(tdir + "/available_instances")),
                      "max": int(m.group(1)) if m else None})
    mdevs = {}
    for name in sysfs.listdir(base):
        if UUID_RE.match(name):
            t = sysfs.link_name("%s/%s/mdev_type" % (base, name))
            g = sysfs.link_name("%s/%s/iommu_group" % (base, name))
            mdevs[name] = {"type": t, "group": int_or_none(g)}
    return types, mdevs


def int_or_none(v):
    """A sysfs integer as the kernel prints it, or None for a missing or garbled file (``1_0``, ``+4``)."""
    return v if isinstance(v, int) and not isinstance(v, bool) else kernel_int(v)


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
    if t:
        # the capacity first: a count past what the card holds is refused before one uuid is built for it
        cap = t["max"] if t["max"] is not None else (t["available"] or 0) + sum(1 for m in mdevs.values() if m["type"] == t["id"])
        if count > cap:
            raise ProgrammingError("count: %s offers at most %d vGPUs of type %s (%s); %d asked" % (addr, cap, t["id"], t["name"], count))
    want = [mdev_uuid(host, addr, t["id"], i) for i in range(count)] if t else []
    if t:
        same_kept = [u for u in want if u in mdevs and mdevs[u]["type"] == t["id"]]
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
                     ops.wrap(tool_call(ops, "mdevctl", ["undefine", "-u", u]), "mdevctl undefine", u, mdevctl_defs[u]["type"], None),
                     tool_call(ops, "mdevctl", _define_args(u, addr, mdevctl_defs[u]["type"], mdevctl_defs[u]["auto"])),
                     target=u, before="defined (%s)" % mdevctl_defs[u]["type"], after="not defined")
        if desired.persistent:
            for u in want:
                d = mdevctl_defs.get(u)
                if d and d["parent"] == addr and d["type"] == t["id"] and d["auto"]:
                    continue
                if d:
                    plan.add("mdevctl undefine %s (to redefine it)" % u, tool_call(ops, "mdevctl", ["undefine", "-u", u]),
                             tool_call(ops, "mdevctl", _define_args(u, d["parent"], d["type"], d["auto"])), target=u)
                plan.add("mdevctl define --auto %s (%s on %s)" % (u, t["id"], addr),
                         ops.wrap(tool_call(ops, "mdevctl", _define_args(u, addr, t["id"], True)), "mdevctl define", u, None, t["id"]),
                         tool_call(ops, "mdevctl", ["undefine", "-u", u]),
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


def tool_call(ops, name, args):
    return lambda: ops.run_tool(name, args)


# -- entry point --------------------------------------------------------------------------------------------------
def _family_driver(sysfs, addr):
    """The GPU family driver whose vendor-specific VFIO the GPU at ``addr`` has (by its PCI vendor), or None."""
    vendor = (sysfs.read_optional("%s/%s/vendor" % (DEVICES, addr)) or "").strip().lower()
    return vendor_vfio_driver(vendor[2:] if vendor.startswith("0x") else vendor)


def choose_backend(sysfs, addr, wanted):
    base = "%s/%s" % (DEVICES, addr)
    has_mdev = sysfs.isdir(base + "/mdev_supported_types")
    physfn = sysfs.exists(base + "/physfn")
    total = int_or_none(sysfs.read_optional(base + "/sriov_totalvfs")) or 0
    vendor_ok = _family_driver(sysfs, addr) is not None and total > 0 and not physfn
    if wanted == "mdev" or (wanted == "auto" and has_mdev):
        if not has_mdev:
            raise ProgrammingError("backend: %s is not an mdev parent (no mdev_supported_types; is the vGPU host driver loaded?)" % addr)
        return "mdev"
    if wanted == "vendor_vfio" or (wanted == "auto" and vendor_ok):
        if physfn:
            raise ProgrammingError("addresses: %s is a VF; give the GPU's (PF's) address" % addr)
        if not vendor_ok:
            raise ProgrammingError("backend: %s is not an SR-IOV %s GPU (vendor-specific VFIO needs sriov_totalvfs)"
                                   % (addr, vendor_vfio_names()))
        return "vendor_vfio"
    if physfn:
        raise ProgrammingError("addresses: %s is a VF without mdev types; give the GPU's (PF's) address" % addr)
    raise ProgrammingError("%s offers no vGPUs: neither mdev types (mdev_supported_types) nor %s SR-IOV VFs"
                           % (addr, vendor_vfio_names()))


def plan_vgpu(ops, addresses, desired, files=None, module_name="vgpu", check_mode=False):
    """Plan vGPUs on every GPU in ``addresses``. Returns ``(plan, cards)``."""
    sysfs = ops.sysfs
    if isinstance(desired.count, bool) or not isinstance(desired.count, int) or not 0 <= desired.count <= MAX_COUNT:
        raise ProgrammingError("count: %s must be an integer from 0 to %d" % (_short(desired.count), MAX_COUNT))
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
            backend = _family_driver(sysfs, addr).vendor_vfio_backend()
            cards.append(backend.plan(ops, plan, addr, desired, files, module_name, check_mode))
    if plan.blocked:
        raise blocked_error(plan, "change the vGPUs of %s" % ", ".join(c["address"] for c in cards))
    return plan, cards


def finish_persistence(ops, files, cards, module_name, desired):
    """After a run that learnt a card's type id only while running: the boot files its backend writes for it then (a
    second small plan, returned for the module to run)."""
    plan = Plan()
    for c in cards:
        if c.get("_backend") is not None:
            c["_backend"].finish(ops, files, plan, c, module_name, desired)
    return plan


def _public(cards):
    return [dict((k, v) for k, v in c.items() if not k.startswith("_")) for c in cards]


def plan_module(host):
    """The plan hook of the ``vgpu`` module (run by :mod:`_hostmodule`): every GPU of ``addresses``; after the
    run, the boot files of cards whose vendor type id was learnt only while running (a follow-up plan)."""
    p = host.params
    ops = HostOps(host.sysfs, run=host.run, auditor=host.auditor, tool_timeout=p["tool_timeout"],
                  libvirt_run_dir=p["libvirt_run_dir"], inuse=host.inuse)
    files = host.files
    count = 0 if p["state"] == "absent" else p["count"]
    desired = VgpuDesired(p["type"], count, p["backend"], p["force"], p["persistent"], p["hostname"])
    plan, cards = plan_vgpu(ops, p["addresses"], desired, files=files, check_mode=host.check_mode)
    host.result["gpus"] = _public(cards)

    def finish(host):
        if host.check_mode:
            return None
        try:
            more = finish_persistence(ops, files, cards, "vgpu", desired)
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
    {"count": (0, MAX_COUNT)},
)
