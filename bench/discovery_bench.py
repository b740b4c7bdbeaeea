# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Discovery benchmark: a generated host of >= 2,500 PCI functions, timed against lspci on the same tree.

    .venv/bin/python bench/discovery_bench.py [--pfs N] [--vfs N] [--repeat N] [--keep DIR] [--no-module] [--phases N]

Times (best of N with the median, wall clock, and the least CPU time, user + system, of one run), all in one
run on the same tree: ``lspci -D -vmm -nn -A linux-sysfs -O sysfs.path=<tree>/sys/bus/pci`` (numbers and
names: it reads pci.ids, as discovery does) and, for reference, ``lspci -D -vmm -n`` (numbers only);
in-process discovery (accelerators only = the module's defaults, include_all, and ``vf_detail: summary``);
whole module calls (the module file run by a new interpreter with its arguments file, i.e. interpreter
start, imports, discovery, AnsibleModule's result handling, JSON out) with the default options, with
``vf_detail: summary``, and with ``include_all`` in both forms. Then the size of the result for a set of
option combinations (records, JSON bytes, dicts + lists, scalar values: ansible's result handling costs per
dict, list and value). Prints Markdown blocks for bench/BENCHMARKS.md. nvidia-smi is not run (the tree's
nvidia-smi is the simulator's fake, whose start-up would dominate); in-use collection (libvirt XML, /proc
scan) is included.
"""

from __future__ import annotations

import argparse
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


def one_run(fn):
    """(wall, CPU) of one run of ``fn``, which returns its CPU seconds or None (then this process's own CPU
    time is taken)."""
    c0 = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    cpu = fn()
    wall = time.perf_counter() - t
    c1 = resource.getrusage(resource.RUSAGE_SELF)
    return wall, cpu if cpu is not None else (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)


def children_cpu(run):
    """CPU seconds (user + system) of the child processes waited for while ``run()`` ran."""
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = run()
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime), out


def interleaved(items, repeat):
    """Run ``items`` ([(label, fn, runs)]) in rounds, each item once per round (``runs`` rounds at most), so
    that a change in the machine's load hits every item alike. Returns [(label, (best, median, least CPU))]."""
    walls = dict((label, []) for label, _fn, _runs in items)
    cpus = dict((label, []) for label, _fn, _runs in items)
    for rnd in range(repeat):
        for label, fn, runs in items:
            if rnd < runs:
                w, c = one_run(fn)
                walls[label].append(w)
                cpus[label].append(c)
    return [(label, (min(walls[label]), sorted(walls[label])[len(walls[label]) // 2], min(cpus[label])))
            for label, _fn, _runs in items]


def shape(value):
    """(dicts + lists, scalar values) in a JSON-like value."""
    containers = scalars = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            containers += 1
            stack.extend(v.values())
        elif isinstance(v, list):
            containers += 1
            stack.extend(v)
        else:
            scalars += 1
    return containers, scalars


# Run by a new interpreter (``python PHASES module.py args.json``): the module's own main(), with the CPU time
# (process_time) taken between its steps, printed as JSON on stderr: the interpreter's start, ansible-core's basic
# import, the module's and the collection's imports, argument handling, discover(), remove_values, and the rest of
# exit_json (the encoder, the write); the caller adds the interpreter's exit from the child's whole CPU time.
PHASES = r"""
import atexit, json, os, resource, sys, time
T = [("interpreter start", time.process_time())]  # CPU time is counted from the process's start
mod_path, args = sys.argv[1], sys.argv[2]
sys.argv = [mod_path, args]
import ansible.module_utils.basic as basic
T.append(("ansible.module_utils.basic import", time.process_time()))
import importlib.util
spec = importlib.util.spec_from_file_location("accelerator_info_bench", mod_path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
T.append(("the module and the collection's imports", time.process_time()))
real_discover, real_remove_values = mod.discover, basic.remove_values
def discover(*a, **k):
    T.append(("AnsibleModule: arguments, logging", time.process_time()))
    r = real_discover(*a, **k)
    T.append(("discover()", time.process_time()))
    return r
def remove_values(*a):
    if T[-1][0] != "discover()":  # the arguments' own pass, before discovery
        return real_remove_values(*a)
    T.append(("module warnings, exit_json up to remove_values", time.process_time()))
    r = real_remove_values(*a)
    T.append(("exit_json: remove_values", time.process_time()))
    return r
mod.discover, basic.remove_values = discover, remove_values
def done():
    T.append(("exit_json: JSON encoder and write", time.process_time()))
    out = {T[0][0]: T[0][1]}
    for (name, t), (_p, t_prev) in zip(T[1:], T[:-1]):
        out[name] = t - t_prev
    sys.stderr.write("PHASES " + json.dumps(out) + "\n")
atexit.register(done)
sys.stdout = open(os.devnull, "w")
mod.main(exiting=True)  # as the module's own "if __name__ == '__main__'" does
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pfs", type=int, default=19, help="NIC PFs for accelsim generate (default 19)")
    ap.add_argument("--vfs", type=int, default=128, help="VFs per NIC PF (default 128)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--keep", help="generate the tree here and keep it (a tree already there is reused)")
    ap.add_argument("--no-module", action="store_true", help="leave out the module calls")
    ap.add_argument("--phases", type=int, default=0, metavar="N",
                    help="also time the steps of N module calls with the default options (least of each step)")
    args = ap.parse_args()
    if args.phases and args.no_module:
        ap.error("--phases times module calls: leave out --no-module")

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
        lspci_n_cmd = [lspci, "-D", "-vmm", "-n", "-A", "linux-sysfs", "-O", "sysfs.path=%s/sys/bus/pci" % dest]

        def child_cpu(cmd):
            def run():
                return children_cpu(lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                           check=True))[0]
            return run

        def in_process(**kw):
            def run():
                discover(Sysfs(dest), nvidia_smi="never", **kw)
            return run

        module = os.path.join(TOP, "plugins", "modules", "accelerator_info.py")
        # Imports come from bytecode, for the collection as for ansible-core's own module_utils (installed with
        # their .pyc): with PYTHONDONTWRITEBYTECODE set, every call would compile the collection's sources
        # (about 0.02 s here) but not ansible's, which is neither a real AnsiballZ run (it compiles both) nor
        # a figure of discovery.
        env = dict(os.environ, PYTHONPATH=coll)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        out_size = {}

        def module_call(name, **options):
            argfile = os.path.join(argdir, "args-%s.json" % name)
            options = dict(options, root=dest, nvidia_smi="never")
            with open(argfile, "w") as f:
                f.write(json.dumps({"ANSIBLE_MODULE_ARGS": options}))

            subprocess.run([sys.executable, module, argfile], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=env, check=True)  # writes the bytecode

            def run_module():
                cpu, p = children_cpu(lambda: subprocess.run([sys.executable, module, argfile], stdout=subprocess.PIPE,
                                                             stderr=subprocess.PIPE, env=env, check=True))
                out_size[name] = len(p.stdout)
                res = json.loads(p.stdout)
                assert not res.get("failed"), res
                assert res["host"]["vf_detail"] == options.get("vf_detail", "summary"), res["host"]
                return cpu
            return run_module

        # option sets whose result size is reported (in-process, the module's result keys)
        size_sets = [
            ("defaults (accelerators only, `vf_detail: summary`)", {"vf_detail": "summary"}),
            ("`vf_detail: full`", {"vf_detail": "full"}),
            ("`include_all: true`", {"include_all": True, "vf_detail": "summary"}),
            ("`include_all: true`, `vf_detail: full`", {"include_all": True, "vf_detail": "full"}),
            ("`families: [gpu, fpga, qat]`", {"families": ["gpu", "fpga", "qat"]}),
            ("`families: [nic]`", {"families": ["nic"], "vf_detail": "summary"}),
        ]
        sizes = []
        for label, kw in size_sets:
            res = discover(Sysfs(dest), nvidia_smi="never", **kw)
            out = {"changed": False, "schema_version": res["schema_version"], "accelerators": res["accelerators"],
                   "host": res["host"]}
            c, v = shape(out)
            sizes.append((label, len(res["accelerators"]), len(json.dumps(out)), c, v))
        records = len(discover(Sysfs(dest), include_all=True, nvidia_smi="never", vf_detail="full")["accelerators"])
        full_accel = sizes[1][1]
        accel = sizes[0][1]
        srecords = discover(Sysfs(dest), include_all=True, nvidia_smi="never", vf_detail="summary")["accelerators"]
        folded = sum(1 for r in srecords for u in (r["sriov"] or {}).get("vf_units") or [] if u["kind"] == "vf")

        load = " ".join("%.2f" % x for x in os.getloadavg())
        child_cpu(lspci_cmd)()  # warm the page cache for everyone
        mrep = max(3, args.repeat // 2)
        items = [
            ("lspci `-nn` (numbers and names from pci.ids)", child_cpu(lspci_cmd), args.repeat),
            ("lspci `-n` (numbers only; reference)", child_cpu(lspci_n_cmd), args.repeat),
            ("discovery in-process, the module's defaults (accelerators only, `vf_detail: summary`, %d records)"
             % accel, in_process(vf_detail="summary"), args.repeat),
            ("discovery in-process, `vf_detail: full` (%d records)" % full_accel, in_process(vf_detail="full"),
             args.repeat),
            ("discovery in-process, include_all, `vf_detail: full` (%d records)" % records,
             in_process(include_all=True, vf_detail="full"), args.repeat),
            ("discovery in-process, include_all (%d records, %d VFs folded)" % (len(srecords), folded),
             in_process(include_all=True, vf_detail="summary"), args.repeat),
        ]
        calls = []
        if not args.no_module:
            calls = [("default", "module call, default options (accelerators only, `vf_detail: summary`)", {}),
                     ("full", "module call, `vf_detail: full`", {"vf_detail": "full"}),
                     ("all-full", "module call, include_all, `vf_detail: full`",
                      {"include_all": True, "vf_detail": "full"}),
                     ("all-summary", "module call, include_all", {"include_all": True})]
            items += [(name, module_call(name, **options), mrep) for name, _label, options in calls]
        rows = interleaved(items, args.repeat)
        labels = dict((name, "%s (%d kB JSON)" % (label, out_size[name] // 1024)) for name, label, _o in calls)
        rows = [(labels.get(label, label), r) for label, r in rows]
        lsp = rows[0][1]
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
            "### Discovery vs lspci (%s)" % time.strftime("%Y-%m-%d %H:%M"),
            "",
            "- machine: %d CPUs (`nproc`), %s; Python %s; %s" % (os.cpu_count(), cpu, platform.python_version(),
                                                                 platform.platform()),
            "- tree: %d PCI functions from %s, generated in %.1f s (plain files on %s)" % (
                nfun, how, gen_s, dest if args.keep else "a temporary directory"),
            "- lspci: `lspci -D -vmm -nn -A linux-sysfs -O sysfs.path=<tree>/sys/bus/pci`",
            "- best of %d (module calls: of %d), median in brackets, wall clock; CPU: least user + system time of "
            "one run; load average before the run: %s, after: %s" % (
                args.repeat, mrep, load, " ".join("%.2f" % x for x in os.getloadavg())),
            "",
            "| what | seconds | vs lspci | CPU s | CPU vs lspci |",
            "|---|---|---|---|---|",
        ]
        for label, (b, m, c) in rows:
            cpu_ratio = c / lsp[2] if lsp[2] else 0.0
            lines.append("| %s | %.3f (%.3f) | %.2f | %.3f | %.2f |" % (label, b, m, b / lsp[0], c, cpu_ratio))
        if args.phases:
            phases_py = os.path.join(argdir, "phases.py")
            with open(phases_py, "w") as f:
                f.write(PHASES)
            argfile = os.path.join(argdir, "args-default.json")
            least = {}
            for _i in range(args.phases):
                cpu, p = children_cpu(lambda: subprocess.run(
                    [sys.executable, phases_py, module, argfile], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    env=env, check=True, universal_newlines=True))
                got = json.loads(p.stderr.rsplit("PHASES ", 1)[1])
                got["the interpreter's exit (after atexit)"] = cpu - sum(got.values())
                for k, v in got.items():
                    least[k] = min(least.get(k, v), v)
            lines += ["", "Steps of a module call with the default options (least CPU seconds of each step over %d "
                      "calls; the lspci of this run: %.3f s CPU):" % (args.phases, lsp[2]), "",
                      "| step | CPU s | vs lspci |", "|---|---|---|"]
            for k, v in least.items():
                lines.append("| %s | %.4f | %.2f |" % (k, v, v / lsp[2]))
            total = sum(least.values())
            lines.append("| sum of the least | %.4f | %.2f |" % (total, total / lsp[2]))
        lines += [
            "",
            "Result size by options (the module's result without warnings; `publish_facts: true` adds the records "
            "a second time):",
            "",
            "| options | records | JSON kB | dicts + lists | scalar values |",
            "|---|---|---|---|---|",
        ]
        for label, n, size, c, v in sizes:
            lines.append("| %s | %d | %d | %d | %d |" % (label, n, size // 1024, c, v))
        lines.append("")
        print("\n".join(lines))
    finally:
        if not args.keep:
            shutil.rmtree(dest, ignore_errors=True)
        shutil.rmtree(coll, ignore_errors=True)
        shutil.rmtree(argdir, ignore_errors=True)


if __name__ == "__main__":
    main()
