# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Discovery benchmark: a generated host of >= 2,500 PCI functions, timed against lspci on the same tree.

    .venv/bin/python bench/discovery_bench.py [--functions-pfs N] [--repeat N] [--keep DIR]

Times (best of N, wall clock): in-process discovery (include_all and accelerators only, with
``vf_detail`` full and summary), whole module calls (the module file run by a new interpreter with its
arguments file, i.e. interpreter start, imports, discovery, AnsibleModule's result handling, JSON out; with
``vf_detail`` full and summary), and ``lspci -D -vmm -nn -A linux-sysfs -O sysfs.path=<tree>/sys/bus/pci``.
Prints a Markdown block for bench/BENCHMARKS.md. nvidia-smi is not run (the tree's nvidia-smi is the
simulator's fake, whose start-up would dominate); in-use collection (libvirt XML, /proc scan) is included.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def collections_path():
    """A directory with ansible_collections/accelops/lifecycle pointing at this checkout."""
    d = tempfile.mkdtemp(prefix="accelops-bench-coll-")
    os.makedirs(os.path.join(d, "ansible_collections", "accelops"))
    os.symlink(TOP, os.path.join(d, "ansible_collections", "accelops", "lifecycle"))
    return d


def generate(dest, pfs, vfs):
    sys.path.insert(0, os.path.join(TOP, "tests", "simulator"))
    try:
        from accelsim.generate import generate as sim_generate
    except ImportError:
        sim_generate = None
    if sim_generate is not None:
        return sim_generate(dest, pfs=pfs, vfs=vfs), "accelsim generate (pfs=%d, vfs=%d, gpus=8, fpgas=8, qats=8)" % (pfs, vfs)
    sys.path.insert(0, os.path.join(TOP, "tests", "unit", "plugins", "module_utils"))
    import hostbuilder
    t = hostbuilder.generate(dest, 2500)
    return len(t.functions), "tests hostbuilder.generate(2500)"


def best(fn, repeat):
    times = []
    for _round in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), sorted(times)[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pfs", type=int, default=19, help="NIC PFs for accelsim generate (default 19)")
    ap.add_argument("--vfs", type=int, default=128, help="VFs per NIC PF (default 128)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--keep", help="generate the tree here and keep it (a tree already there is reused)")
    args = ap.parse_args()

    coll = collections_path()
    sys.path.insert(0, coll)
    from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
    from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

    dest = args.keep or tempfile.mkdtemp(prefix="accelops-bench-tree-")
    argdir = tempfile.mkdtemp(prefix="accelops-bench-args-")
    try:
        t0 = time.perf_counter()
        if args.keep and os.path.isdir(os.path.join(dest, "sys", "bus", "pci", "devices")):
            nfun = len(os.listdir(os.path.join(dest, "sys", "bus", "pci", "devices")))
            how = "a tree kept by an earlier run (--keep)"
        else:
            nfun, how = generate(dest, args.pfs, args.vfs)
        gen_s = time.perf_counter() - t0
        if nfun < 2500:
            sys.exit("only %d functions generated; raise --pfs/--vfs" % nfun)
        lspci = shutil.which("lspci")
        lspci_cmd = [lspci, "-D", "-vmm", "-nn", "-A", "linux-sysfs", "-O", "sysfs.path=%s/sys/bus/pci" % dest]

        def run_lspci():
            subprocess.run(lspci_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)

        def run_all():
            return discover(Sysfs(dest), include_all=True, nvidia_smi="never")

        def run_default():
            return discover(Sysfs(dest), nvidia_smi="never")

        def run_summary():
            return discover(Sysfs(dest), include_all=True, nvidia_smi="never", vf_detail="summary")

        module = os.path.join(TOP, "plugins", "modules", "accelerator_info.py")
        env = dict(os.environ, PYTHONPATH=coll)
        out_size = {}
        out_cpu = {}  # least CPU time (user + system) of one module call

        def module_call(vf_detail):
            argfile = os.path.join(argdir, "args-%s.json" % vf_detail)
            with open(argfile, "w") as f:
                f.write(json.dumps({"ANSIBLE_MODULE_ARGS": {"root": dest, "include_all": True, "nvidia_smi": "never",
                                                            "vf_detail": vf_detail}}))

            def run_module():
                t0 = os.times()
                p = subprocess.run([sys.executable, module, argfile], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=env, check=True)
                t1 = os.times()
                cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
                out_cpu[vf_detail] = min(out_cpu.get(vf_detail, cpu), cpu)
                out_size[vf_detail] = len(p.stdout)
                res = json.loads(p.stdout)
                assert not res.get("failed"), res
                assert res["host"]["vf_detail"] == vf_detail, res["host"]
            return run_module

        records = len(run_all()["accelerators"])
        accel = len(run_default()["accelerators"])
        srecords = run_summary()["accelerators"]
        folded = sum(1 for r in srecords for u in (r["sriov"] or {}).get("vf_units") or [] if u["kind"] == "vf")
        run_lspci()  # warm the page cache for everyone
        lb, lm = best(run_lspci, args.repeat)
        ab, am = best(run_all, args.repeat)
        db, dm = best(run_default, args.repeat)
        sb, sm = best(run_summary, args.repeat)
        mb, mm = best(module_call("full"), max(3, args.repeat // 2))
        msb, msm = best(module_call("summary"), max(3, args.repeat // 2))
        cpu = "unknown"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        cpu = line.split(":", 1)[1].strip()
                        break
        except IOError:
            pass
        lines = [
            "### Discovery vs lspci (%s)" % time.strftime("%Y-%m-%d"),
            "",
            "- machine: %d CPUs (`nproc`), %s; Python %s; %s" % (os.cpu_count(), cpu, platform.python_version(),
                                                                 platform.platform()),
            "- tree: %d PCI functions from %s, generated in %.1f s (plain files on %s)" % (
                nfun, how, gen_s, dest if args.keep else "a temporary directory"),
            "- lspci: `lspci -D -vmm -nn -A linux-sysfs -O sysfs.path=<tree>/sys/bus/pci`",
            "- best of %d (median in brackets), wall clock; load average before the run: %s" % (
                args.repeat, " ".join("%.2f" % x for x in os.getloadavg())),
            "",
            "| what | seconds | vs lspci |",
            "|---|---|---|",
            "| lspci | %.3f (%.3f) | 1.00 |" % (lb, lm),
            "| discovery in-process, include_all (%d records) | %.3f (%.3f) | %.2f |" % (records, ab, am, ab / lb),
            "| discovery in-process, accelerators only (%d records) | %.3f (%.3f) | %.2f |" % (accel, db, dm, db / lb),
            "| discovery in-process, include_all, `vf_detail: summary` (%d records, %d VFs folded) | %.3f (%.3f) | %.2f |" % (
                len(srecords), folded, sb, sm, sb / lb),
            "| module call, include_all, `vf_detail: full` (new interpreter, imports, discovery, %d kB JSON; "
            "CPU %.3f s) | %.3f (%.3f) | %.2f |" % (out_size["full"] // 1024, out_cpu["full"], mb, mm, mb / lb),
            "| module call, include_all, `vf_detail: summary` (%d kB JSON; CPU %.3f s) | %.3f (%.3f) | %.2f |" % (
                out_size["summary"] // 1024, out_cpu["summary"], msb, msm, msb / lb),
            "",
        ]
        print("\n".join(lines))
    finally:
        if not args.keep:
            shutil.rmtree(dest, ignore_errors=True)
        shutil.rmtree(coll, ignore_errors=True)
        shutil.rmtree(argdir, ignore_errors=True)


if __name__ == "__main__":
    main()
