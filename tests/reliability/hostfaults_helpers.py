# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by the host-side fault tests (test_host_*.py): labs with several cards, a checkpoint of a simulated
host (kernel state and disk) that a case restores, a comparable view of the host, and a runner for a sequence of
module invocations (what a converge does to one host, stopping at the first failure as Ansible does)."""

from __future__ import annotations

import copy
import os
import shutil
import tempfile

import yaml

from helpers import run_module

DISK_DIRS = ("etc", "var")
# The vgpu module's cache of vendor type names per card model: a cache, not host state (written while planning,
# a failed write of it is ignored by design); left out of the host comparisons.
VGPU_TYPE_CACHE = "var/lib/accelops/vgpu-types.json"

# Two Tesla T4 (mdev) and two L40 (vendor-specific VFIO): the shipped labs have one of each.
MULTI_GPU_LAB = {
    "name": "multi-gpu",
    "description": "two Tesla T4 (mdev) and two L40 (vendor-specific VFIO)",
    "include": ["gpu-mdev", "gpu-vendor-vfio"],
}
T4A, T4B = "0000:18:00.0", "0000:19:00.0"
L40A, L40B = "0000:3b:00.0", "0000:3c:00.0"


def write_multi_gpu_lab(directory):
    """A lab YAML with a second T4 and a second L40 (copies of the shipped ones at other addresses)."""
    from accelsim.model import lab_path  # pylint: disable=import-outside-toplevel
    with open(lab_path("gpu-mdev"), encoding="utf-8") as f:
        t4 = [fn for fn in yaml.safe_load(f)["functions"] if fn["bdf"] == T4A][0]
    with open(lab_path("gpu-vendor-vfio"), encoding="utf-8") as f:
        l40 = [fn for fn in yaml.safe_load(f)["functions"] if fn["bdf"] == L40A][0]
    t4b = dict(copy.deepcopy(t4), bdf=T4B, iommu_group=22, irq=67)
    t4b["gpu"] = dict(t4b["gpu"], uuid="GPU-5c4fb7d7-2a7a-1a0e-6e1b-0c2f4a3d9b12", serial="1321020012346")
    l40b = dict(copy.deepcopy(l40), bdf=L40B, iommu_group=32, irq=68)
    l40b["gpu"] = dict(l40b["gpu"], uuid="GPU-9f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5c", serial="1654722012346")
    lab = dict(MULTI_GPU_LAB, functions=[t4b, l40b])
    path = os.path.join(str(directory), "multi-gpu.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(lab, f)
    return path


def write_two_fpga_lab(directory):
    path = os.path.join(str(directory), "two-fpga.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump({"name": "two-fpga", "description": "Arria 10 (OPAE) and D5005 (DFL)",
                        "include": ["fpga-opae", "fpga-dfl"]}, f)
    return path


# -- the host, as a comparable value ------------------------------------------------------------------------
def _strip_groups(value):
    """IOMMU group numbers are allocated from a counter: a VF or mdev created again gets another one."""
    if isinstance(value, dict):
        return dict((k, _strip_groups(v)) for k, v in value.items() if k != "iommu_group")
    if isinstance(value, list):
        return [_strip_groups(v) for v in value]
    return value


def disk_view(state_dir, skip=(VGPU_TYPE_CACHE,)):
    """Files and links under the host's etc/ and var/: {relative path: ("file", bytes, mode) | ("link", target)}.
    Directories are left out (a run that created a directory and rolled back may leave it, empty)."""
    out = {}
    for top in DISK_DIRS:
        base = os.path.join(state_dir, top)
        for dirpath, dirnames, filenames in os.walk(base):
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                p = os.path.join(dirpath, name)
                rel = os.path.relpath(p, state_dir)
                if rel in skip:
                    continue
                if os.path.islink(p):
                    out[rel] = ("link", os.readlink(p))
                else:
                    with open(p, "rb") as f:
                        out[rel] = ("file", f.read(), os.stat(p).st_mode & 0o7777)
    return out


KERNEL_KEYS = ("functions", "mdevs", "vgpu", "vfinfo", "fpga", "alveo", "domains", "processes", "persist")


def host_view(h):
    """What the host is: the simulated kernel's state (without IOMMU group numbers) and its disk."""
    st = h.store.load()
    return {"kernel": _strip_groups(dict((k, st.get(k)) for k in KERNEL_KEYS)), "disk": disk_view(h.state_dir)}


def view_diff(a, b):
    """A short text of where two host views differ (for assertion messages)."""
    lines = []
    for part in ("kernel", "disk"):
        x, y = a[part], b[part]
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                if part == "kernel" and isinstance(x.get(k), dict) and isinstance(y.get(k), dict):
                    for kk in sorted(set(x[k]) | set(y[k])):
                        if x[k].get(kk) != y[k].get(kk):
                            lines.append("%s.%s: %r -> %r" % (k, kk, x[k].get(kk), y[k].get(kk)))
                else:
                    lines.append("%s %s: %r -> %r" % (part, k, str(x.get(k))[:80], str(y.get(k))[:80]))
    return "\n".join(lines[:30]) or "(no difference)"


class Checkpoint(object):
    """The kernel state and the disk of a mounted host at one moment; :meth:`restore` puts them back (the FUSE
    daemon picks the state file up on its next access) and removes every fault."""

    def __init__(self, h):
        self.h = h
        self.state = h.store.load()
        self.dir = tempfile.mkdtemp(prefix="hostfaults-ckpt-")
        for top in DISK_DIRS:
            shutil.copytree(os.path.join(h.state_dir, top), os.path.join(self.dir, top), symlinks=True)

    def restore(self):
        h = self.h
        h.clear_faults()
        with h.store._locked():  # pylint: disable=protected-access
            h.store._save(copy.deepcopy(self.state))  # pylint: disable=protected-access
        for top in DISK_DIRS:
            shutil.rmtree(os.path.join(h.state_dir, top))
            shutil.copytree(os.path.join(self.dir, top), os.path.join(h.state_dir, top), symlinks=True)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


# -- running a converge (a sequence of module invocations) -----------------------------------------------------
def run_steps(steps):
    """Run ``[(name, main, args)]`` in order, stopping after the first that does not exit normally. Returns the
    outcomes (as many as ran)."""
    out = []
    for _name, main, args in steps:
        o = run_module(main, args)
        out.append(o)
        if o.kind != "exit":
            break
    return out


def count_tool_runs(h, tools):
    """Count the runs of each tool fake from now on (a fault that runs the real fake every time)."""
    for t in tools:
        h.fail_tool(t, rc=None, times=0)


def tool_runs(h):
    return dict((f["tool"], f["seen"]) for f in h.faults()["tools"])
