# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fleet benchmark: converge N simulated hosts with playbooks/converge.yml against the floor of one ping task.

Every host is its own FUSE-mounted simulator root (tests/simulator accelsim, lab nic-sriov by default: the
kernel model reacts to the converge's writes) reached with the local connection, and has a compute node
provider in a real Placement started from tests/harness. In one run, over the same inventory and with the same
forks:

1. floor: a play with one ansible.builtin.ping task;
2. converge from scratch (the declaration: 4 VFs on the first X710 PF, bound to vfio-pci);
3. no-op converge (the same again), --repeat times, each followed by a floor run, so the ratio compares runs
   taken under the same machine load;
4. with --plain: every converged host rendered as a plain tree (the simulator's tree writer, from its state), and
   --repeat more no-op + floor pairs on those. A no-op run writes nothing, so the plain tree is faithful for it
   (checked: a digest of every tree is the same after each run), and discovery then reads files at the speed of
   a file system rather than through a Python FUSE daemon per host.

Each run is timed (wall clock, and the CPU time of ansible-playbook and everything it started), the per-task wall
time is taken by a small callback (task start to the next task's start: with the linear strategy that is the time
the slowest fork needed for it), and the results are checked independently: every host's sriov_numvfs, the
number of writes the FUSE daemons served during a no-op run (must be 0), changed counts and failures.

Usage (root, /dev/fuse): .venv/bin/python bench/fleet_bench.py [--hosts 100] [--forks 5] [--repeat 3]
[--lab nic-sriov] [--mount-jobs 4] [--collection DIR] [--compare DIR] [--plain] [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SIM = os.path.join(TOP, "tests", "simulator")
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
import servicelib  # noqa: E402

# What each lab's hosts are asked to offer, and how to read back that it is done.
LABS = {
    "nic-sriov": {
        "functions": [{"name": "x710-vf", "match": {"address": "0000:d8:00.0"},
                       "vfs": {"count": 4, "driver": "vfio-pci"}}],
        "check_file": "sys/bus/pci/devices/0000:d8:00.0/sriov_numvfs",
        "check_value": "4",
    },
}

CALLBACK = '''
from __future__ import annotations
import json, os, resource, time
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: fleet_timing
type: aggregate
short_description: per-task wall time for bench/fleet_bench.py
description: [Writes the wall time of every task (start to the next start) and the result counts.]
requirements: [enabled in ANSIBLE_CALLBACKS_ENABLED]
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fleet_timing"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.tasks = []
        self.current = None
        self.results = {"ok": 0, "changed": 0, "failed": 0, "skipped": 0, "unreachable": 0}
        self.modules = {}

    def _close(self):
        if self.current is not None:
            self.current["wall"] = time.monotonic() - self.current.pop("t0")
            self.tasks.append(self.current)
            self.current = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        self.current = {"name": task.get_name(), "action": task.action, "t0": time.monotonic(), "hosts": 0,
                        "skipped": 0}

    def _count(self, result, kind):
        self.results[kind] += 1
        if self.current is not None:
            if kind == "skipped":
                self.current["skipped"] += 1
            else:
                self.current["hosts"] += 1
                self.modules[self.current["action"]] = self.modules.get(self.current["action"], 0) + 1

    def v2_runner_on_ok(self, result):
        self._count(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._count(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._count(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        self._close()
        with open(os.environ["FLEET_TIMING_OUT"], "w") as f:
            # peak RSS (KiB on Linux) of this, the main process, and of the largest process it started and waited
            # for (a worker, or a module the worker ran: the kernel keeps the largest of the descendants)
            json.dump({"tasks": self.tasks, "results": self.results, "executions": self.modules,
                       "maxrss_main_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                       "maxrss_children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}, f)
'''


def sh(argv, **kw):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def sim(*args):
    env = dict(os.environ, PYTHONPATH=SIM)
    return sh([sys.executable, "-m", "accelsim"] + list(args), env=env)


def placement_request(svc, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(svc["placement_endpoint"] + path, data=data, method=method,
                                 headers={"X-Auth-Token": svc["placement_token"], "Content-Type": "application/json",
                                          "OpenStack-API-Version": "placement 1.39"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status


def write_inventory(work, hosts, svc, lab, root="root", name="inventory.yml"):
    lines = ["all:", "  vars:",
             "    ansible_connection: local",
             "    ansible_python_interpreter: %s" % json.dumps(sys.executable),
             "    accelerator_host_placement_endpoint: %s" % json.dumps(svc["placement_endpoint"]),
             "    accelerator_host_placement_token: %s" % json.dumps(svc["placement_token"]),
             "    accelerator_host_fpga_persistent: false",
             "    accelerator_host_functions: %s" % json.dumps(LABS[lab]["functions"]),
             "  hosts:"]
    for host in hosts:
        d = os.path.join(work, "hosts", host)
        lines += ["    %s:" % host,
                  "      accelerator_host_root: %s" % json.dumps(os.path.join(d, root)),
                  "      accelerator_host_lock_dir: %s" % json.dumps(os.path.join(d, "lock")),
                  "      accelerator_host_persist_root: %s" % json.dumps(os.path.join(d, "persist"))]
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def fuse_writes(work, hosts):
    total = 0
    for name in hosts:
        log = os.path.join(work, "hosts", name, "state", "writes.log")
        if os.path.exists(log):
            with open(log) as f:
                total += sum(1 for line in f if line.strip())
    return total


def link_collection(work, name, tree):
    """work/<name>/ansible_collections/accelops/lifecycle -> tree; returns work/<name>."""
    path = os.path.join(work, name)
    os.makedirs(os.path.join(path, "ansible_collections", "accelops"), exist_ok=True)
    link = os.path.join(path, "ansible_collections", "accelops", "lifecycle")
    if os.path.islink(link):
        os.unlink(link)
    os.symlink(os.path.abspath(tree), link)
    return path


def run_playbook(work, inventory, playbook, forks, label, collections="collections"):
    out = os.path.join(work, "timing-%s.json" % label)
    env = dict(os.environ,
               ANSIBLE_COLLECTIONS_PATH=os.path.join(work, collections),
               ANSIBLE_CALLBACK_PLUGINS=os.path.join(work, "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="fleet_timing",
               ANSIBLE_FORKS=str(forks),
               ANSIBLE_HOST_KEY_CHECKING="False",
               ANSIBLE_RETRY_FILES_ENABLED="False",
               ANSIBLE_NOCOLOR="1",
               FLEET_TIMING_OUT=out)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()
    t0 = time.monotonic()
    with open(os.path.join(work, "log-%s.txt" % label), "w") as log:
        rc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
                             playbook], stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work, check=False).returncode
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(out) as f:
        timing = json.load(f)
    return {"label": label, "rc": rc, "wall": wall, "cpu": cpu, "load_before": load, "load_after": os.getloadavg(),
            "results": timing["results"], "maxrss_main_mb": timing["maxrss_main_kb"] / 1024.0,
            "maxrss_children_mb": timing["maxrss_children_kb"] / 1024.0,
            "executions": timing["executions"], "tasks": timing["tasks"]}


def mount_hosts(work, hosts, lab, jobs):
    def one(name):
        d = os.path.join(work, "hosts", name)
        os.makedirs(os.path.join(d, "root"))
        sim("mount", lab, os.path.join(d, "root"), "--state", os.path.join(d, "state"))
        return name
    t0 = time.monotonic()
    mounted = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for name in pool.map(one, hosts):
            mounted.append(name)
    return mounted, time.monotonic() - t0


def unmount_hosts(work, hosts):
    for name in hosts:
        root = os.path.join(work, "hosts", name, "root")
        try:
            sim("umount", root)
        except subprocess.CalledProcessError as e:
            print("umount %s: %s" % (root, e.stdout.strip()), file=sys.stderr)


def render_plain(work, hosts):
    """Plain-tree copies of the hosts as they are now (converged): each host's state rendered by the simulator's
    tree writer under hosts/<name>/plain, its disk directories (etc, var) linked to the state's. A no-op run
    writes nothing, so a plain tree is faithful for it, and it is read at the speed of a real file system instead
    of through a Python FUSE daemon (whose per-operation latency, milliseconds on a busy machine, is the
    simulator's, not the role's)."""
    if SIM not in sys.path:
        sys.path.insert(0, SIM)
    from accelsim.kernel import Host
    from accelsim.render import write_tree
    from accelsim.store import DISK_DIRS, StateStore
    for name in hosts:
        d = os.path.join(work, "hosts", name)
        dest = os.path.join(d, "plain")
        if os.path.lexists(dest):
            shutil.rmtree(dest)
        state_dir = os.path.join(d, "state")
        write_tree(Host(StateStore(state_dir).load()), dest)
        for disk in DISK_DIRS:
            if not os.path.lexists(os.path.join(dest, disk)):
                os.symlink(os.path.join(state_dir, disk), os.path.join(dest, disk))


def tree_digest(work, hosts, sub="plain"):
    """One digest of every path, kind, mode, symlink target and file content under the hosts' plain trees."""
    h = hashlib.sha256()
    for name in hosts:
        top = os.path.join(work, "hosts", name, sub)
        for base, dirs, files in os.walk(top):
            dirs.sort()
            for entry in sorted(dirs + files):
                full = os.path.join(base, entry)
                st = os.lstat(full)
                h.update(("%s %o\n" % (os.path.relpath(full, top), st.st_mode)).encode())
                if os.path.islink(full):
                    h.update(os.readlink(full).encode())
                elif os.path.isfile(full):
                    with open(full, "rb") as f:
                        h.update(f.read())
    return h.hexdigest()


def top_tasks(run, n=20):
    tasks = sorted(run["tasks"], key=lambda t: -t["wall"])[:n]
    return [{"name": t["name"], "action": t["action"], "wall": round(t["wall"], 2), "hosts": t["hosts"],
             "skipped": t["skipped"]} for t in tasks]


def summarise(run):
    r = run["results"]
    return ("%-12s rc=%d wall %7.1f s  cpu %7.1f s  load %.1f-%.1f  ok %d changed %d failed %d skipped %d  "
            "module runs %d  peak RSS main %.0f MB, largest child %.0f MB"
            % (run["label"], run["rc"], run["wall"], run["cpu"], run["load_before"][0], run["load_after"][0],
               r["ok"], r["changed"], r["failed"], r["skipped"],
               sum(v for k, v in run["executions"].items() if not k.endswith("set_fact")),
               run["maxrss_main_mb"], run["maxrss_children_mb"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--forks", type=int, default=5, help="ansible forks for every run (ansible's default is 5)")
    ap.add_argument("--repeat", type=int, default=3, help="no-op converge + floor pairs")
    ap.add_argument("--fuse-repeat", type=int,
                    help="no-op converge + floor pairs on the FUSE mounts (default --repeat; with --plain, 0 keeps "
                         "only the plain-tree pairs)")
    ap.add_argument("--lab", default="nic-sriov", choices=sorted(LABS))
    ap.add_argument("--mount-jobs", type=int, default=4, help="hosts mounted at once while setting up")
    ap.add_argument("--collection", default=TOP,
                    help="the collection tree to run (default this checkout; e.g. a copy with a changed role)")
    ap.add_argument("--compare", metavar="DIR",
                    help="after the no-op runs, run --repeat more no-op + floor pairs with this collection tree (a "
                         "changed role) on the same converged hosts")
    ap.add_argument("--plain", action="store_true",
                    help="after the no-op runs on the FUSE mounts, render each converged host as a plain tree and "
                         "run --repeat more no-op + floor pairs on those (a no-op run writes nothing, so a plain tree "
                         "is faithful for it; it takes the simulator's FUSE latency out of the discovery reads)")
    ap.add_argument("--keep", help="work in this directory and leave it (mounts are still unmounted)")
    ap.add_argument("--json", help="write every figure here")
    args = ap.parse_args()

    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        sys.exit("fleet_bench: needs root and /dev/fuse (every host is a FUSE-mounted simulator root)")
    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="accelops-fleet-")
    link_collection(work, "collections", args.collection)
    if args.compare:
        link_collection(work, "collections-compare", args.compare)
    os.makedirs(os.path.join(work, "callback_plugins"), exist_ok=True)
    with open(os.path.join(work, "callback_plugins", "fleet_timing.py"), "w") as f:
        f.write(CALLBACK)
    ping = os.path.join(work, "ping.yml")
    with open(ping, "w") as f:
        f.write("- name: Floor\n  hosts: all\n  gather_facts: false\n  tasks:\n"
                "    - name: Ping\n      ansible.builtin.ping:\n")
    converge = os.path.join(os.path.abspath(args.collection), "playbooks", "converge.yml")
    hosts = ["fleet%03d" % i for i in range(args.hosts)]
    report = {"machine": {"nproc": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform()},
              "hosts": args.hosts, "forks": args.forks, "lab": args.lab, "runs": []}
    svc_dir = os.path.join(work, "services")
    mounted = []
    # The harness waits 15 s for Placement; a machine busy with other work needs longer.
    servicelib.STARTUP_TIMEOUT = max(servicelib.STARTUP_TIMEOUT, 120.0)
    try:
        svc = servicelib.start(svc_dir, ["placement"])
        for name in hosts:
            placement_request(svc, "POST", "/resource_providers", {"name": name})
        mounted, report["mount_seconds"] = mount_hosts(work, hosts, args.lab, args.mount_jobs)
        print("mounted %d hosts in %.1f s" % (len(mounted), report["mount_seconds"]), flush=True)
        inventory = write_inventory(work, hosts, svc, args.lab)
        check = LABS[args.lab]

        def converged():
            ok = 0
            for name in hosts:
                with open(os.path.join(work, "hosts", name, "root", check["check_file"])) as f:
                    ok += f.read().strip() == check["check_value"]
            return ok

        runs = report["runs"]
        plain_inventory = write_inventory(work, hosts, svc, args.lab, root="plain", name="inventory-plain.yml")

        def compare_pair(i):
            writes0 = fuse_writes(work, hosts)
            runs.append(run_playbook(work, plain_inventory if args.plain else inventory,
                                     os.path.join(os.path.abspath(args.compare), "playbooks", "converge.yml"),
                                     args.forks, "cmpnoop-%d" % i, collections="collections-compare"))
            runs[-1]["fuse_writes"] = fuse_writes(work, hosts) - writes0
            runs[-1]["converged_hosts"] = converged()
            if args.plain:
                runs[-1]["tree_unchanged"] = tree_digest(work, hosts) == digest
            print(summarise(runs[-1]), "writes %d" % runs[-1]["fuse_writes"], flush=True)
            runs.append(run_playbook(work, plain_inventory if args.plain else inventory, ping, args.forks,
                                     "cmpfloor-%d" % i))
            print(summarise(runs[-1]), flush=True)

        runs.append(run_playbook(work, inventory, ping, args.forks, "floor-0"))
        print(summarise(runs[-1]), flush=True)
        writes0 = fuse_writes(work, hosts)
        runs.append(run_playbook(work, inventory, converge, args.forks, "scratch"))
        runs[-1]["fuse_writes"] = fuse_writes(work, hosts) - writes0
        runs[-1]["converged_hosts"] = converged()
        print(summarise(runs[-1]), "writes %d, converged hosts %d"
              % (runs[-1]["fuse_writes"], runs[-1]["converged_hosts"]), flush=True)
        for i in range(1, (args.repeat if args.fuse_repeat is None else args.fuse_repeat) + 1):
            writes0 = fuse_writes(work, hosts)
            runs.append(run_playbook(work, inventory, converge, args.forks, "noop-%d" % i))
            runs[-1]["fuse_writes"] = fuse_writes(work, hosts) - writes0
            runs[-1]["converged_hosts"] = converged()
            print(summarise(runs[-1]), "writes %d" % runs[-1]["fuse_writes"], flush=True)
            runs.append(run_playbook(work, inventory, ping, args.forks, "floor-%d" % i))
            print(summarise(runs[-1]), flush=True)
        if args.plain:
            render_plain(work, hosts)
            digest = tree_digest(work, hosts)
            for i in range(1, args.repeat + 1):
                runs.append(run_playbook(work, plain_inventory, converge, args.forks, "plainnoop-%d" % i))
                runs[-1]["tree_unchanged"] = tree_digest(work, hosts) == digest
                print(summarise(runs[-1]), "plain trees unchanged: %s" % runs[-1]["tree_unchanged"], flush=True)
                runs.append(run_playbook(work, plain_inventory, ping, args.forks, "plainfloor-%d" % i))
                print(summarise(runs[-1]), flush=True)
                if args.compare:
                    # the compared tree's pair right after this tree's (A B A B), so both see the same load
                    compare_pair(i)
        for i in range(1, args.repeat + 1 if args.compare and not args.plain else 1):
            compare_pair(i)
    except KeyboardInterrupt:
        print("interrupted: summarising the runs that finished", flush=True)
    finally:
        unmount_hosts(work, mounted)
        servicelib.stop(svc_dir)

    floors = [r for r in report["runs"] if r["label"].startswith("floor")]
    noops = [r for r in report["runs"] if r["label"].startswith("noop")]
    scratch = [r for r in report["runs"] if r["label"] == "scratch"]
    # each no-op run against the floor run right after it (same load), then the medians
    pairs = [(n, report["runs"][report["runs"].index(n) + 1]) for n in noops
             if report["runs"].index(n) + 1 < len(report["runs"])]
    if floors and pairs:
        ratios = sorted(n["wall"] / f["wall"] for n, f in pairs)
        cpu_ratios = sorted(n["cpu"] / f["cpu"] for n, f in pairs)
        report["noop_vs_floor"] = {"wall_ratios": ratios, "median_wall_ratio": ratios[len(ratios) // 2],
                                   "cpu_ratios": cpu_ratios, "median_cpu_ratio": cpu_ratios[len(cpu_ratios) // 2],
                                   "target": 3.0}
        report["scratch_vs_floor"] = {"wall_ratio": scratch[0]["wall"] / floors[0]["wall"],
                                      "cpu_ratio": scratch[0]["cpu"] / floors[0]["cpu"]} if scratch else None
        print("\nno-op / floor, wall: %s (median %.2f, target <= 3); cpu: %s (median %.2f)"
              % (", ".join("%.2f" % x for x in ratios), report["noop_vs_floor"]["median_wall_ratio"],
                 ", ".join("%.2f" % x for x in cpu_ratios), report["noop_vs_floor"]["median_cpu_ratio"]))
        best = min(noops, key=lambda r: r["wall"])
        print("\nslowest tasks of the fastest no-op run (wall s, hosts run, hosts skipped):")
        for t in top_tasks(best):
            print("  %7.2f  %3d %3d  %-28s %s" % (t["wall"], t["hosts"], t["skipped"], t["action"], t["name"]))
        print("module executions per no-op run: %s" % json.dumps(best["executions"], sort_keys=True))
    plain_pairs = [(n, report["runs"][report["runs"].index(n) + 1]) for n in report["runs"]
                   if n["label"].startswith("plainnoop") and report["runs"].index(n) + 1 < len(report["runs"])]
    if plain_pairs:
        ratios = sorted(n["wall"] / f["wall"] for n, f in plain_pairs)
        cpu_ratios = sorted(n["cpu"] / f["cpu"] for n, f in plain_pairs)
        report["plain_noop_vs_floor"] = {"wall_ratios": ratios, "median_wall_ratio": ratios[len(ratios) // 2],
                                         "cpu_ratios": cpu_ratios, "median_cpu_ratio": cpu_ratios[len(cpu_ratios) // 2],
                                         "trees_unchanged": all(n["tree_unchanged"] for n, f in plain_pairs)}
        print("\nplain trees: no-op / floor, wall: %s (median %.2f); cpu: %s (median %.2f); trees unchanged: %s"
              % (", ".join("%.2f" % x for x in ratios), report["plain_noop_vs_floor"]["median_wall_ratio"],
                 ", ".join("%.2f" % x for x in cpu_ratios), report["plain_noop_vs_floor"]["median_cpu_ratio"],
                 report["plain_noop_vs_floor"]["trees_unchanged"]))
        best = min((n for n, f in plain_pairs), key=lambda r: r["wall"])
        for t in top_tasks(best, 10):
            print("  %7.2f  %3d %3d  %-28s %s" % (t["wall"], t["hosts"], t["skipped"], t["action"], t["name"]))
    cmp_pairs = [(n, report["runs"][report["runs"].index(n) + 1]) for n in report["runs"] if n["label"].startswith("cmpnoop")
                 and report["runs"].index(n) + 1 < len(report["runs"])]
    if cmp_pairs:
        ratios = sorted(n["wall"] / f["wall"] for n, f in cmp_pairs)
        cpu_ratios = sorted(n["cpu"] / f["cpu"] for n, f in cmp_pairs)
        report["compare_noop_vs_floor"] = {"collection": os.path.abspath(args.compare), "wall_ratios": ratios,
                                           "median_wall_ratio": ratios[len(ratios) // 2],
                                           "cpu_ratios": cpu_ratios, "median_cpu_ratio": cpu_ratios[len(cpu_ratios) // 2]}
        print("\n--compare %s: no-op / floor, wall: %s (median %.2f); cpu: %s (median %.2f)"
              % (args.compare, ", ".join("%.2f" % x for x in ratios), ratios[len(ratios) // 2],
                 ", ".join("%.2f" % x for x in cpu_ratios), cpu_ratios[len(cpu_ratios) // 2]))
        best = min((n for n, f in cmp_pairs), key=lambda r: r["wall"])
        for t in top_tasks(best):
            print("  %7.2f  %3d %3d  %-28s %s" % (t["wall"], t["hosts"], t["skipped"], t["action"], t["name"]))
        print("module executions per no-op run: %s" % json.dumps(best["executions"], sort_keys=True))
    print("\npeak RSS, MB (main process / largest child), highest over the runs of each kind:")
    for kind in ("floor", "scratch", "noop", "plainfloor", "plainnoop", "cmpfloor", "cmpnoop"):
        of_kind = [r for r in report["runs"] if r["label"].rstrip("-0123456789") == kind]
        if of_kind:
            report.setdefault("peak_rss_mb", {})[kind] = {"main": max(r["maxrss_main_mb"] for r in of_kind),
                                                          "children": max(r["maxrss_children_mb"] for r in of_kind)}
            print("  %-11s %5.0f / %5.0f" % (kind, report["peak_rss_mb"][kind]["main"],
                                             report["peak_rss_mb"][kind]["children"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    failed = [r["label"] for r in report["runs"] if r["rc"] != 0 or r.get("tree_unchanged") is False
              or (r["label"].startswith(("noop", "plainnoop", "cmpnoop"))
                  and (r["results"]["changed"] or r.get("fuse_writes")))]
    if failed:
        print("runs that failed, changed something or wrote: %s (logs in the work directory; use --keep)"
              % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
