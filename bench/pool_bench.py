# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: the function pool keeper's planner (filter accelops.lifecycle.pool_plan) on a fleet of H hosts x C
FPGA cards, against a baseline measured in the same run.

- baseline: resolving the same declaration on every host (``_declaration.resolve``, what the converge role does for
  each host of a run), on the same discovery records;
- plan: ``pool_plan`` for the whole fleet, two pools: gzip above its minimum, lz4 short of half the cards (a quarter
  of the cards allocated, some empty, some loaded with a function no pool keeps, some taken from gzip until the
  hysteresis stops it, and a shortfall): every step of the order runs;
- no-op plan: the same fleet once every pool is at its minimum (what a periodic keeper run costs most of the time);
- report: ``pool_report`` of the plan against a Placement read.

Inputs are the discovery records and Placement providers the keeper would get (placement_provider_info's form),
built in memory: this measures the decision, not Placement or the hosts. Usage:
.venv/bin/python bench/pool_bench.py [--hosts 100] [--cards 4] [--repeat 9] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
import fixtures  # noqa: E402

fixtures.put_collection_on_path()
from ansible_collections.accelops.lifecycle.plugins.filter.pool_plan import pool_plan  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.filter.pool_report import pool_report  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration  # noqa: E402

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
            pname = "%s_%s" % (name, rec["address"])
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--cards", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json")
    args = ap.parse_args()
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
