# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: the function pool keeper's planner (action accelops.lifecycle.pool_plan) on a fleet of H hosts x C
FPGA cards, against a baseline measured in the same run.

- baseline: resolving the same declaration on every host (``_declaration.resolve``, what the converge role does for
  each host of a run), on the same discovery records;
- plan: ``pool_plan`` for the whole fleet, two pools: gzip above its minimum, lz4 short of half the cards (a quarter
  of the cards allocated, some empty, some loaded with a function no pool keeps, some taken from gzip until the
  hysteresis stops it, and a shortfall): every step of the order runs;
- no-op plan: the same fleet once every pool is at its minimum (what a periodic keeper run costs most of the time);
- report: ``pool_report`` of the plan against a Placement read.

Inputs are the discovery records and Placement providers the keeper would get (placement_provider_info's form),
built in memory: this measures the decision, not Placement or the hosts.

With --keeper, the whole keeper instead: ``playbooks/keep_pools.yml`` as a dry run on --hosts simulated hosts (plain
trees of lab fpga-dfl, one PAC D5005 each, three in four carrying gzip, one in eight allocated) reached with the
local connection, against a real Placement from tests/harness where every host is reported (compute node and card
providers with their function traits), beside the floor of one ``ping`` task over the same inventory, in turns:
floor, keeper with every pool met (no-op), keeper with a deficit (lz4 short: the plan chooses cards), floor again.
Wall time and the CPU time of ansible-playbook and everything it started.

Usage: .venv/bin/python bench/pool_bench.py [--hosts 100] [--cards 4] [--repeat 9] [--json FILE]
       .venv/bin/python bench/pool_bench.py --keeper [--hosts 100] [--forks 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
import fixtures  # noqa: E402
import servicelib  # noqa: E402

fixtures.put_collection_on_path()
from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration, _pools  # noqa: E402


def pool_plan(data):
    """What the pool_plan action decides (after its argument spec) from these arguments."""
    return _pools.plan(data["functions"], data["pools"], data["hosts"], data["providers"],
                       not_allowed=_declaration.not_allowed)


def pool_report(data):
    """What the pool_report action decides from these arguments."""
    return _pools.report(data["plan"], data["providers"], data["hosts"], data["drain"], data["converge"],
                         applied=data["apply"])


GZIP = "11112222333344445555666677778888"
LZ4 = "aaaabbbbccccddddeeeeffff00001111"
OTHER = "9aeffe5f84570612c000c9660d824272"
FUNCTIONS = [
    {"name": "gzip", "match": {"family": "fpga", "vendor_id": "8086", "device_id": "0b2b"},
     "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": "a" * 64, "function_id": GZIP}},
    {"name": "lz4", "match": {"family": "fpga", "vendor_id": "8086", "device_id": "0b2b"},
     "fpga": {"bitstream": "/srv/lz4.gbs", "sha256": "b" * 64, "function_id": LZ4}},
]
TRAITS = {GZIP: "CUSTOM_FUNCTION_GZIP", LZ4: "CUSTOM_FUNCTION_LZ4"}


def card(address, afu):
    return {"address": address, "family": "fpga", "vendor_id": "8086", "device_id": "0b2b", "physfn": None,
            "numa_node": 0, "programming_model": "dynamic", "function": {"id": afu} if afu else None,
            "fpga": {"ports": [{"id": "dfl-port.0", "afu_id": afu}] if afu else []},
            "units": [{"kind": "device", "id": address, "in_use": False, "in_use_by": []}]}


def fleet(n_hosts, n_cards, settled=False):
    """Discovery and Placement of a fleet: by card index, gzip, lz4, empty, other; one card in four allocated."""
    hosts, providers, i = {}, [], 0
    for h in range(n_hosts):
        name = "cn-%03d" % h
        recs = []
        for c in range(n_cards):
            kind = i % 8
            afu = GZIP if kind < 4 else LZ4 if kind == 4 or (settled and kind in (5, 6)) else None if kind == 5 else OTHER
            rec = card("0000:%02x:00.0" % (0x80 + c), afu)
            recs.append(rec)
            used = 1 if i % 4 == 0 else 0
            traits = ["CUSTOM_OWNER_ACCELOPS"] + ([TRAITS[afu]] if afu in TRAITS else [])
            pname = "%s_accelops_%s" % (name, rec["address"])
            providers.append({"name": pname, "uuid": "u-" + pname, "generation": 5, "host": name, "traits": traits,
                              "inventories": {"FPGA": {"total": 1, "reserved": 0}} if afu else {},
                              "usages": {"FPGA": used} if afu else {},
                              "allocations": {"c-%d" % i: {"resources": {"FPGA": 1}}} if used and afu else {},
                              "in_use": bool(used and afu), "drained": False})
            i += 1
        hosts[name] = {"placement_host": name, "discovery": {"accelerators": recs},
                       "allowed_functions": ["gzip", "lz4", "a" * 64, "b" * 64]}
    return hosts, providers


def timed(fns, repeat):
    """Median CPU time (this process) of each function, the functions run in turn in every round, so that a change
    of load on the machine touches all of them alike."""
    out = dict((k, []) for k in fns)
    for _round in range(repeat):
        for k, fn in fns.items():
            t0 = time.process_time()
            fn()
            out[k].append(time.process_time() - t0)
    return dict((k, statistics.median(v)) for k, v in out.items())


def _placement(svc, method, path, body=None):
    req = urllib.request.Request(svc["placement_endpoint"] + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"X-Auth-Token": svc["placement_token"], "Content-Type": "application/json",
                                          "OpenStack-API-Version": "placement 1.39"})
    with urllib.request.urlopen(req, timeout=60) as r:
        text = r.read().decode()
    return json.loads(text) if text else None


def _run(work, inventory, playbook, forks, extra=()):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(work, "collections"), ANSIBLE_FORKS=str(forks),
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="False")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
                          playbook] + list(extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env, cwd=work, check=False)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"rc": out.returncode, "wall": wall, "load": load, "output": out.stdout,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def keeper_bench(args):
    """The keeper's dry run on a simulated fleet against a real Placement, beside a ping floor."""
    sys.path.insert(0, os.path.join(TOP, "tests", "simulator"))
    import accelsim  # pylint: disable=import-outside-toplevel
    import openstack  # pylint: disable=import-outside-toplevel
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _discovery  # pylint: disable=import-outside-toplevel
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P  # pylint: disable=import-outside-toplevel

    work = tempfile.mkdtemp(prefix="accelops-pools-")
    coll = os.path.join(work, "collections", "ansible_collections", "accelops")
    os.makedirs(coll)
    os.symlink(TOP, os.path.join(coll, "lifecycle"))
    servicelib.STARTUP_TIMEOUT = max(servicelib.STARTUP_TIMEOUT, 120.0)
    svc = servicelib.start(os.path.join(work, "services"), ["placement"])
    try:
        hosts = ["pool%03d" % i for i in range(args.hosts)]
        t0 = time.monotonic()
        reported = []
        for i, name in enumerate(hosts):
            lab = accelsim.load_lab("fpga-dfl")
            if i % 4 != 3:
                next(f for f in lab["functions"] if f.get("fpga"))["fpga"]["afu_id"] = GZIP
            root = os.path.join(work, "hosts", name)
            accelsim.render_tree(lab, root)
            _placement(svc, "POST", "/resource_providers", {"name": name})
            disc = _discovery.discover(root=root)
            reported.append({"host": name, "providers": P.desired_providers(
                name, disc, function_names={GZIP: "gzip", LZ4: "lz4"})})
        conn = openstack.connect(auth_type="admin_token", auth={"endpoint": svc["placement_endpoint"],
                                                                "token": svc["placement_token"]},
                                 placement_endpoint_override=svc["placement_endpoint"])
        P.converge(conn.placement, reported, {})
        for i, name in enumerate(hosts):
            if i % 8 == 0:
                rp = _placement(svc, "GET", "/resource_providers?name=%s_accelops_0000:86:00.0" % name)["resource_providers"][0]
                _placement(svc, "PUT", "/allocations/%s" % servicelib_uuid(name),
                           {"allocations": {rp["uuid"]: {"resources": {"FPGA": 1}}}, "project_id": "p" * 32,
                            "user_id": "u" * 32, "consumer_generation": None, "consumer_type": "INSTANCE"})
        setup = time.monotonic() - t0
        gz_free = sum(1 for i in range(args.hosts) if i % 4 != 3 and i % 8 != 0)
        inventory = os.path.join(work, "inventory.yml")
        functions = [dict(f, fpga=dict(f["fpga"], bitstream=os.path.join(work, f["name"] + ".gbs"))) for f in FUNCTIONS]
        with open(inventory, "w") as f:
            json.dump({"pool": {"vars": {
                "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                "accelerator_host_placement_endpoint": svc["placement_endpoint"],
                "accelerator_host_placement_token": svc["placement_token"],
                "function_pools_functions": functions},
                "hosts": dict((h, {"accelerator_host_root": os.path.join(work, "hosts", h)}) for h in hosts)}}, f)
        ping = os.path.join(work, "ping.yml")
        with open(ping, "w") as f:
            f.write("- name: Floor\n  hosts: all\n  gather_facts: false\n  tasks:\n"
                    "    - name: Ping\n      ansible.builtin.ping:\n")
        keep = os.path.join(TOP, "playbooks", "keep_pools.yml")
        met = json.dumps({"function_pools_pools": [{"function": "gzip", "hosts": "pool", "min_free": gz_free},
                                                   {"function": "lz4", "hosts": "pool", "min_free": 0}]})
        short = json.dumps({"function_pools_pools": [{"function": "gzip", "hosts": "pool", "min_free": 1},
                                                     {"function": "lz4", "hosts": "pool", "min_free": 20}]})
        runs = [("floor", ping, ()), ("keeper no-op (dry run)", keep, ("-e", met)),
                ("keeper with a deficit (dry run)", keep, ("-e", short)), ("floor again", ping, ())]
        res = {"hosts": args.hosts, "forks": args.forks, "setup_s": setup, "runs": []}
        for label, book, extra in runs:
            r = _run(work, inventory, book, args.forks, extra)
            if r["rc"] != 0:
                raise SystemExit("%s failed (rc %d):\n%s" % (label, r["rc"], r["output"][-3000:]))
            plan = [ln for ln in r["output"].splitlines() if "pool(s):" in ln]
            res["runs"].append({"label": label, "wall": r["wall"], "cpu": r["cpu"], "load": r["load"],
                                "plan": plan[0].strip().strip('",') if plan else None})
            line = "%-32s wall %6.1f s  cpu %6.1f s  load %.2f" % (label, r["wall"], r["cpu"], r["load"])
            print(line, res["runs"][-1]["plan"] or "", flush=True)
        floor = min(x["wall"] for x in res["runs"] if x["label"].startswith("floor"))
        floor_cpu = min(x["cpu"] for x in res["runs"] if x["label"].startswith("floor"))
        for x in res["runs"]:
            x["wall_x"], x["cpu_x"] = x["wall"] / floor, x["cpu"] / floor_cpu
            print("  %-30s %.2fx wall, %.2fx cpu of the floor" % (x["label"], x["wall_x"], x["cpu_x"]))
        return res
    finally:
        servicelib.stop(os.path.join(work, "services"))
        shutil.rmtree(work, ignore_errors=True)


def servicelib_uuid(name):
    import uuid  # pylint: disable=import-outside-toplevel
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, "consumer." + name))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--cards", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json")
    ap.add_argument("--keeper", action="store_true", help="time keep_pools.yml (dry run) on simulated hosts instead")
    ap.add_argument("--forks", type=int, default=5)
    args = ap.parse_args()
    if args.keeper:
        res = keeper_bench(args)
        res["machine"] = "%s, %d CPUs, Python %s" % (platform.machine(), os.cpu_count() or 0,
                                                     platform.python_version())
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=2)
        return
    n = args.hosts * args.cards
    hosts, providers = fleet(args.hosts, args.cards)
    pools = [{"function": "gzip", "hosts": sorted(hosts), "min_free": n // 3},
             {"function": "lz4", "hosts": sorted(hosts), "min_free": n // 2}]
    data = {"functions": FUNCTIONS, "pools": pools, "hosts": hosts, "providers": providers}
    plan = pool_plan(data)
    s_hosts, s_providers = fleet(args.hosts, args.cards, settled=True)
    settled = dict(data, hosts=s_hosts, providers=s_providers,
                   pools=[dict(pools[0], min_free=1), dict(pools[1], min_free=1)])
    noop = pool_plan(settled)
    assert noop["actions"] == [], noop["summary"]

    def baseline():
        entries = _declaration.validate(FUNCTIONS)
        for h in hosts.values():
            _declaration.resolve(entries, h["discovery"], validated=True)

    times = timed({
        "baseline": baseline,
        "plan": lambda: pool_plan(data),
        "noop_plan": lambda: pool_plan(settled),
        "report": lambda: pool_report({"plan": plan, "providers": providers, "hosts": hosts, "apply": True,
                                       "drain": {"providers": []}, "converge": {}}),
    }, args.repeat)
    res = {
        "hosts": args.hosts, "cards": n, "repeat": args.repeat,
        "machine": "%s, %d CPUs, Python %s" % (platform.machine(), os.cpu_count() or 0, platform.python_version()),
        "load": os.getloadavg()[0], "summary": plan["summary"], "pools": [p["message"][:120] for p in plan["pools"]],
    }
    for k, v in times.items():
        res[k + "_s"] = v
    for key in ("plan_s", "noop_plan_s", "report_s"):
        res[key.replace("_s", "_x")] = res[key] / res["baseline_s"]
    print("%d hosts, %d cards (%s), load %.2f, median CPU time of %d rounds"
          % (args.hosts, n, res["machine"], res["load"], args.repeat))
    print("  %s" % res["summary"])
    print("  baseline: resolve the declaration on every host  %8.1f ms" % (res["baseline_s"] * 1000))
    for key, label in (("plan", "plan (deficits, %d actions)" % len(plan["actions"])), ("noop_plan", "plan (no-op)"),
                       ("report", "report")):
        print("  %-48s %8.1f ms  %6.2fx baseline" % (label, res[key + "_s"] * 1000, res[key + "_x"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
