# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Programming benchmark: sriov_vfs and vgpu converging a large FUSE-mounted simulated host, from scratch and on
a no-op rerun (which must write nothing to sysfs).

    .venv/bin/python bench/programming_bench.py [--pfs 16 --vfs 64 --gpus 8 --vgpus 16]   (root, /dev/fuse)

Whole module calls (a new interpreter running the module file with its arguments file), wall clock:

- sriov_vfs: one call per PF (``num_vfs``, ``vf_driver: vfio-pci``), summed over the PFs;
- vgpu, vendor-specific VFIO: one call for all GPUs (synthetic L40s, ``NVIDIA L40-1Q``);
- vgpu, mdev: one call for all GPUs (Tesla T4 clones, ``GRID T4-1Q``, mdevctl definitions).

Sysfs writes are counted by the FUSE daemon's write log (``h.writes()``, every write() it served, refused ones
included): the no-op rerun must not write a single sysfs file, and the benchmark fails if it does. Prints a
Markdown block for bench/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "simulator"))

import accelsim  # noqa: E402  pylint: disable=wrong-import-position
from accelsim.generate import synthetic_lab  # noqa: E402  pylint: disable=wrong-import-position


CPU = [0.0]  # CPU seconds of the module processes (the rest of the wall time is the FUSE daemon and tools)
DAEMON = [None, 0.0]  # the FUSE daemon's pid and its CPU seconds at the last row


def daemon_cpu(pid):
    """User+system CPU seconds of a process (the FUSE daemon) so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def collections_path():
    d = tempfile.mkdtemp(prefix="accelops-bench-coll-")
    os.makedirs(os.path.join(d, "ansible_collections", "accelops"))
    os.symlink(TOP, os.path.join(d, "ansible_collections", "accelops", "lifecycle"))
    return d


def module_call(coll, name, args):
    fd, argfile = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"ANSIBLE_MODULE_ARGS": args}, f)
    env = dict(os.environ, PYTHONPATH=coll, ACCELOPS_AUDIT_SYSLOG="0")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, os.path.join(TOP, "plugins", "modules", name + ".py"), argfile],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=False)
    dt = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] += (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    os.unlink(argfile)
    out = json.loads(p.stdout.decode() or "{}")
    if out.get("failed"):
        raise SystemExit("%s failed: %s" % (name, out.get("msg")))
    return dt, out


def t4_lab(gpus):
    """gpus Tesla T4 mdev parents, cloned from the gpu-mdev lab, one per bus."""
    base = accelsim.load_lab("gpu-mdev")
    t4 = [f for f in base["functions"] if f["bdf"] == "0000:18:00.0"][0]
    funcs = [f for f in base["functions"] if f["bdf"] not in ("0000:18:00.0",)]
    for i in range(gpus):
        f = copy.deepcopy(t4)
        f["bdf"] = "0000:%02x:00.0" % (0x40 + i)
        f["iommu_group"] = 200 + i
        f["gpu"] = dict(f["gpu"], uuid="GPU-00000000-0000-0000-0000-%012x" % i)
        funcs.append(f)
    lab = {"name": "t4-many", "description": "many T4", "include": [], "functions": funcs}
    return accelsim.load_lab(lab)


def check_writes(h, before, label):
    """The sysfs writes the FUSE daemon served since ``before`` (``(count, state stamp)``); a no-op rerun that
    wrote anything, or changed the host through a tool fake, fails the run."""
    log = h.writes()
    new = log[before[0]:]
    if label == "no-op rerun" and new:
        raise SystemExit("the no-op rerun wrote %d sysfs files, e.g. %s" % (len(new), new[0]))
    if label == "no-op rerun" and h.store.stamp() != before[1]:
        raise SystemExit("the no-op rerun changed the simulated host (through a tool fake)")
    if any(w["errno"] for w in new):
        raise SystemExit("the kernel refused a write: %s" % [w for w in new if w["errno"]][0])
    return len(new)


class Rows(object):
    """Prints each result row as soon as it is measured (with the module CPU time since the last row)."""

    def append(self, row):
        what, label, dt, res = row
        now = daemon_cpu(DAEMON[0])
        print("| %s | %s | %.2f | %.2f | %.2f | %s |" % (what, label, dt, CPU[0], now - DAEMON[1], res), flush=True)
        CPU[0] = 0.0
        DAEMON[1] = now


def watch(h):
    """Measure the FUSE daemon of ``h`` from now on."""
    DAEMON[0] = h.proc.pid
    DAEMON[1] = daemon_cpu(h.proc.pid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pfs", type=int, default=16)
    ap.add_argument("--vfs", type=int, default=64)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--vgpus", type=int, default=16)
    ap.add_argument("--skip-nic", action="store_true")
    args = ap.parse_args()
    coll = collections_path()
    print("- command: %s" % " ".join(["bench/programming_bench.py"] + sys.argv[1:]))
    print("- machine: %d CPUs, %s; Python %s; %s" % (
        os.cpu_count(), platform.processor() or platform.machine(), platform.python_version(), platform.platform()))
    print("- simulator: FUSE mount (single-threaded daemon; every write runs the kernel model, saves the state and "
          "rebuilds the touched devices' part of the tree)")
    print()
    print("- load average at the start: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    print()
    print("| what | run | wall s | module CPU s | FUSE daemon CPU s | result |")
    print("|---|---|---|---|---|---|", flush=True)
    rows = Rows()
    work = tempfile.mkdtemp(prefix="accelops-bench-prog-")

    # SR-IOV NICs and vendor-VFIO GPUs on one synthetic host (no VFs enabled at boot)
    lab, _enable = synthetic_lab(pfs=args.pfs, vfs=args.vfs, gpus=args.gpus, fpgas=0, qats=0)
    mnt = os.path.join(work, "synthetic")
    os.makedirs(mnt)
    with accelsim.mount(lab, mnt, state_dir=os.path.join(work, "synthetic-state")) as h:
        watch(h)
        pfs = [f["bdf"] for f in lab["functions"] if f.get("sriov") and f["vendor"] == 0x8086]
        gpus = [f["bdf"] for f in lab["functions"] if f.get("vgpu")]
        persist = os.path.join(work, "persist")
        for label in ("from scratch", "no-op rerun") if not args.skip_nic else ():
            nwrites = (len(h.writes()), h.store.stamp())
            total = 0.0
            CPU[0] = 0.0
            DAEMON[1] = daemon_cpu(h.proc.pid)
            changed = 0
            for pf in pfs:
                dt, out = module_call(coll, "sriov_vfs", {"root": mnt, "address": pf, "num_vfs": args.vfs, "vf_driver": "vfio-pci",
                                                          "persist_root": persist})
                total += dt
                changed += bool(out["changed"])
            wrote = check_writes(h, nwrites, label)
            rows.append(("sriov_vfs %d PFs x %d VFs (vfio-pci), %d calls" % (len(pfs), args.vfs, len(pfs)), label, total,
                         "%d changed, %d sysfs writes" % (changed, wrote)))
        for label in ("from scratch", "no-op rerun"):
            nwrites = (len(h.writes()), h.store.stamp())
            CPU[0] = 0.0
            DAEMON[1] = daemon_cpu(h.proc.pid)
            dt, out = module_call(coll, "vgpu", {"root": mnt, "addresses": gpus, "type": "NVIDIA L40-1Q", "count": args.vgpus,
                                                 "persist_root": persist})
            wrote = check_writes(h, nwrites, label)
            rows.append(("vgpu vendor VFIO %d GPUs x %d, 1 call" % (len(gpus), args.vgpus), label, dt,
                         "changed %s, %d sysfs writes" % (out["changed"], wrote)))
    # mdev GPUs
    lab = t4_lab(args.gpus)
    mnt = os.path.join(work, "t4")
    os.makedirs(mnt)
    with accelsim.mount(lab, mnt, state_dir=os.path.join(work, "t4-state")) as h:
        watch(h)
        gpus = [f["bdf"] for f in lab["functions"] if f.get("mdev")]
        for label in ("from scratch", "no-op rerun"):
            nwrites = (len(h.writes()), h.store.stamp())
            CPU[0] = 0.0
            DAEMON[1] = daemon_cpu(h.proc.pid)
            dt, out = module_call(coll, "vgpu", {"root": mnt, "addresses": gpus, "type": "GRID T4-1Q", "count": args.vgpus,
                                                 "persist_root": os.path.join(work, "persist-t4")})
            wrote = check_writes(h, nwrites, label)
            rows.append(("vgpu mdev %d GPUs x %d (+ mdevctl define), 1 call" % (len(gpus), args.vgpus), label, dt,
                         "changed %s, %d sysfs writes" % (out["changed"], wrote)))
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(coll, ignore_errors=True)


if __name__ == "__main__":
    main()
