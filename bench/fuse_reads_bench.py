# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a read-only module run costs on a FUSE-mounted simulated host: ``accelerator_info`` (the module file run
by a new interpreter with its arguments file) against a mounted lab, repeated, with the module's CPU and the FUSE
daemon's CPU per call. The tests and the gates mount such hosts for every module they run, so the daemon's share
is part of their time.

    .venv/bin/python bench/fuse_reads_bench.py [--lab lab-all] [--repeat 20]   (root, /dev/fuse)

Run it from two trees (a ``git archive`` of the commit before a change, and the checkout) to compare them: the
simulator and the collection are taken from the tree the script lives in. Prints a Markdown row.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from programming_bench import CPU, collections_path, daemon_cpu, module_call  # noqa: E402  pylint: disable=wrong-import-position

import accelsim  # noqa: E402  pylint: disable=wrong-import-position  # on sys.path by programming_bench


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--lab", default="lab-all")
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    coll = collections_path()
    mnt = tempfile.mkdtemp(prefix="accelops-bench-fuse-")
    h = accelsim.mount(a.lab, mnt)
    try:
        args = {"root": mnt, "nvidia_smi": "never"}
        module_call(coll, "accelerator_info", args)  # a first call: the bytecode of the tree is written
        walls, mods, daemons = [], [], []
        for _call in range(a.repeat):
            c0, d0 = CPU[0], daemon_cpu(h.proc.pid)
            wall, out = module_call(coll, "accelerator_info", args)
            walls.append(wall)
            mods.append(CPU[0] - c0)
            daemons.append(daemon_cpu(h.proc.pid) - d0)
        records = len(out.get("accelerators", []))
    finally:
        h.unmount()
        os.rmdir(mnt)
    rev = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, check=False).stdout.decode().strip() or "not a git tree"
    print("- machine: %s, %d CPUs, Python %s; tree: %s" % (platform.machine(), os.cpu_count() or 0,
                                                           platform.python_version(), rev))
    print("")
    print("| lab | calls | records | wall s, median (best) | module CPU s, median | FUSE daemon CPU s, median |")
    print("|---|---:|---:|---:|---:|---:|")
    print("| %s | %d | %d | %.3f (%.3f) | %.3f | %.3f |" % (
        a.lab, a.repeat, records, statistics.median(walls), min(walls), statistics.median(mods),
        statistics.median(daemons)))


if __name__ == "__main__":
    main()
