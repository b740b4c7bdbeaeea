# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the NVIDIA family reads from ``nvidia-smi``'s output: MIG modes (``--query-gpu``), GPU instances and compute
instances (``mig -lgi``, ``-lci``), GPU instance profiles and their placements (``mig -lgip``, ``-lgipp``), the vGPU
types a GPU supports (``vgpu -s -v``) and the vGPUs that exist (``vgpu -q``). Text in, plain data out; running the
tool is the driver's (``nvidia.py``) and the MIG engine's. The output forms and their sources: docs/families/nvidia-mig.md.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import re

from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address

__metaclass__ = type

# `nvidia-smi mig -lgi` rows: GPU, "MIG <profile name>", profile id, instance id, placement start:size
_GI_LINE = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)\s*\|")
# `nvidia-smi mig -lci` rows: GPU, GPU instance id, "MIG <profile name>", profile id, instance id and, from
# driver R470 on, placement start:size (older drivers print no Placement column)
_CI_LINE = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)(?:\s+(\d+):(\d+))?\s*\|")
# `nvidia-smi mig -lgip` rows: GPU, "MIG <profile name>", profile id, instances free/total, memory GiB, P2P, SM,
# DEC, ENC (a continuation row with CE, JPEG, OFA follows; not every driver prints it, and nothing here needs it)
_GIP_LINE = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+(\d+(?:\.\d+)?)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|")
# `nvidia-smi mig -lgipp`: "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1" ("Placement :" when only one)
_GIPP_LINE = re.compile(r"^GPU\s+(\d+)\s+Profile ID\s+(\d+)\s+Placements?\s*:\s*\{([\d,\s]*)\}:(\d+)\s*$")
_COMPUTE_SLICES = re.compile(r"^(\d+)g\.")
# `nvidia-smi vgpu -s -v`: "GPU 00000000:3B:00.0" then per type "vGPU Type ID : 0x47a" and "Name : ..."
_SMI_GPU_LINE = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
_SMI_FIELD = re.compile(r"^\s+([A-Za-z][A-Za-z0-9 ()/-]*?)\s*:\s*(.*?)\s*$")


def parse_mig_modes(text):
    """``nvidia-smi --query-gpu=index,pci.bus_id,mig.mode.current,mig.mode.pending
    --format=csv,noheader`` -> {address: {index, mode_current, mode_pending}}."""
    out = {}
    for line in (text or "").splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) < 4:
            continue
        addr = pci_address(cols[1])
        if addr is None:
            continue
        try:
            index = int(cols[0])
        except ValueError:
            continue

        def _mode(v):
            return None if v.startswith("[") or v in ("", "N/A") else v
        out[addr] = {"index": index, "mode_current": _mode(cols[2]), "mode_pending": _mode(cols[3])}
    return out


def parse_mig_gi(text):
    """``nvidia-smi mig -lgi`` table -> {gpu index: [{id, name, profile_id, placement}]}."""
    out = {}
    for line in (text or "").splitlines():
        m = _GI_LINE.match(line.strip())
        if m:
            out.setdefault(int(m.group(1)), []).append({
                "id": int(m.group(4)), "name": m.group(2), "profile_id": int(m.group(3)),
                "placement": "%s:%s" % (m.group(5), m.group(6))})
    return out


def parse_mig_ci(text):
    """``nvidia-smi mig -lci`` table -> {gpu index: [{gpu_instance_id, id, name, profile_id,
    placement}]} (placement null from drivers that print no Placement column)."""
    out = {}
    for line in (text or "").splitlines():
        m = _CI_LINE.match(line.strip())
        if m:
            out.setdefault(int(m.group(1)), []).append({
                "gpu_instance_id": int(m.group(2)), "id": int(m.group(5)), "name": m.group(3),
                "profile_id": int(m.group(4)),
                "placement": "%s:%s" % (m.group(6), m.group(7)) if m.group(6) is not None else None})
    return out


def parse_mig_gip(text):
    """``nvidia-smi mig -lgip`` table -> {gpu index: [{id, name, instances_free, instances_total, memory_gib,
    compute_slices}]} (compute slices from the name's ``<n>g``)."""
    out = {}
    for line in (text or "").splitlines():
        m = _GIP_LINE.match(line.strip())
        if m:
            c = _COMPUTE_SLICES.match(m.group(2))
            out.setdefault(int(m.group(1)), []).append({
                "id": int(m.group(3)), "name": m.group(2), "instances_free": int(m.group(4)),
                "instances_total": int(m.group(5)), "memory_gib": float(m.group(6)),
                "compute_slices": int(c.group(1)) if c else None})
    return out


def parse_mig_gipp(text):
    """``nvidia-smi mig -lgipp`` -> {gpu index: {profile id: (placement starts, memory slices)}}."""
    out = {}
    for line in (text or "").splitlines():
        m = _GIPP_LINE.match(line.strip())
        if m:
            starts = [int(x) for x in m.group(3).replace(" ", "").split(",") if x]
            out.setdefault(int(m.group(1)), {})[int(m.group(2))] = (starts, int(m.group(4)))
    return out


def _smi_fields(text):
    """``(GPU address, field, value)`` for each ``Field : value`` line of ``nvidia-smi vgpu`` output under the
    ``GPU <bus id>`` line it follows, and ``(GPU address, None, None)`` at each such line."""
    gpu = None
    for line in (text or "").splitlines():
        m = _SMI_GPU_LINE.match(line.strip())
        if m:
            gpu = pci_address(m.group(1)) or m.group(1).lower()
            yield gpu, None, None
            continue
        m = _SMI_FIELD.match(line)
        if m and gpu is not None:
            yield gpu, m.group(1), m.group(2)


def parse_vgpu_supported(text):
    """``nvidia-smi vgpu -s -v`` -> {PCI address: {type id (decimal string): name}}."""
    return dict((gpu, dict((tid, t["name"]) for tid, t in types.items() if t["name"]))
                for gpu, types in parse_vgpu_supported_types(text).items())


def parse_vgpu_supported_types(text):
    """``nvidia-smi vgpu -s -v`` -> {PCI address: {type id (decimal string): {name, gi_profile_id}}}:
    ``gi_profile_id`` is the type's ``GPU Instance Profile ID`` (the GI profile a MIG-backed type runs on; None for
    ``N/A``, a time-sliced type). What makes a type MIG-backed is that field, not its name: Blackwell's ``DC-1-2Q``
    is MIG-backed (NVIDIA Virtual GPU Software User Guide, "Virtual GPU Types for Supported GPUs")."""
    out = {}
    cur = None
    for gpu, key, value in _smi_fields(text):
        types = out.setdefault(gpu, {})
        if key is None:
            cur = None
        elif key == "vGPU Type ID":
            try:
                tid = str(int(value, 16) if value.lower().startswith("0x") else int(value))
            except ValueError:
                cur = None
                continue
            cur = types.setdefault(tid, {"name": None, "gi_profile_id": None})
        elif cur is None:
            continue
        elif key == "Name" and value and cur["name"] is None:
            cur["name"] = value
        elif key == "GPU Instance Profile ID" and value.isdigit():
            cur["gi_profile_id"] = int(value)
    return out


def parse_vgpu_query(text):
    """``nvidia-smi vgpu -q`` -> {GPU PCI address: [{type_id, name, gpu_instance_id, vm_name, guest_address}]}: one
    entry per vGPU block (``vGPU Type``, ``vGPU Name``, ``GPU Instance ID``: null for ``N/A``, a time-sliced vGPU;
    ``VM Name``: the domain running it, null for ``N/A``; ``guest_address``: the ``Bus Id`` of its ``PCI`` section,
    the vGPU's address inside the guest (``00000000:00:00.0`` until the guest driver loads), not the host VF:
    :func:`assign_vgpu_vfs` ties each vGPU to its VF)."""
    out = {}
    cur = None
    for gpu, key, value in _smi_fields(text):
        vgpus = out.setdefault(gpu, [])
        if key is None:
            cur = None
        elif key == "vGPU ID":
            cur = {"type_id": None, "name": None, "gpu_instance_id": None, "vm_name": None, "guest_address": None}
            vgpus.append(cur)
        elif cur is None:
            continue
        elif key == "vGPU Type" and value.isdigit():
            cur["type_id"] = str(int(value))
        elif key == "vGPU Name" and value not in ("", "N/A"):
            cur["name"] = value
        elif key == "GPU Instance ID" and value.isdigit():
            cur["gpu_instance_id"] = int(value)
        elif key == "VM Name" and value not in ("", "N/A"):
            cur["vm_name"] = value
        elif key == "Bus Id":
            cur["guest_address"] = pci_address(value)
    return out
