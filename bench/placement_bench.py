# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: report H hosts x D devices to a real Placement, three ways, in one run.

1. accelops: the engine of accelops.lifecycle.placement_provider_tree (one call for the fleet), from scratch,
   then a no-op rerun with the generation cache, then a no-op rerun without it.
2. naive SDK loop: per device, find-or-create the provider, set its inventory and traits with openstacksdk's
   Placement proxy (what a quick script does).
3. the operators' way today: `openstack resource provider ...` CLI calls (osc-placement), as Nova's vGPU
   documentation shows. Each call is a new process (~1 s), so by default it runs for --cli-hosts hosts only
   and the per-provider time is extrapolated to the whole fleet (said so in the output).

Each way gets a fresh Placement (tests/harness) so custom traits start absent for all. Requests are counted from
the server's access log. Usage: .venv/bin/python bench/placement_bench.py [--hosts 50] [--devices 16]
[--cli-hosts 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
import fixtures  # noqa: E402
import servicelib  # noqa: E402

fixtures.put_collection_on_path()
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P  # noqa: E402

warnings.simplefilter("ignore")


def host_discovery(h, devices):
    """A synthetic host: FPGAs (dynamic, function loaded), GPUs (passthrough), NICs (8 VFs), QAT (16 VFs)."""
    recs = []
    for d in range(devices):
        addr = "0000:%02x:00.0" % (0x10 + d)
        kind = d % 4
        if kind == 0:
            afu = "d8424dc4-a4a1-c3d4-3213-4b09c1d7f2a%d" % (d % 8)
            recs.append({"address": addr, "family": "fpga", "vendor_id": "8086", "device_id": "09c4",
                         "numa_node": d % 2, "programming_model": "dynamic",
                         "function": {"id": afu, "trait": P._naming.fpga_function_trait("intel", afu)},
                         "fpga": {"vendor": "intel", "regions": [{"id": "r0", "trait": "CUSTOM_FPGA_REGION_INTEL_9926AB6D"}],
                                  "ports": []}})
        elif kind == 1:
            recs.append({"address": addr, "family": "gpu", "vendor_id": "10de", "device_id": "1eb8",
                         "numa_node": d % 2, "programming_model": "fixed", "function": None, "gpu": {}})
        elif kind == 2:
            recs.append({"address": addr, "family": "nic", "vendor_id": "8086", "device_id": "1572",
                         "numa_node": d % 2, "programming_model": "fixed", "function": None,
                         "sriov": {"numvfs": 8, "totalvfs": 64}})
        else:
            recs.append({"address": addr, "family": "qat", "vendor_id": "8086", "device_id": "4940",
                         "numa_node": d % 2, "programming_model": "single",
                         "function": {"id": "sym;dc", "name": "sym;dc", "trait": "CUSTOM_FUNCTION_QAT_SYM_DC"},
                         "sriov": {"numvfs": 16, "totalvfs": 16}})
    return {"host": {"hostname": "bench%03d" % h}, "accelerators": recs}


class Fresh(object):
    """A fresh Placement with H compute node providers."""

    def __init__(self, hosts):
        self.state = tempfile.mkdtemp(prefix="accelops-bench-")
        self.svc = fixtures.PlacementService(servicelib.start(self.state, ["placement"]))
        self.roots = {}
        for h in range(hosts):
            self.roots["bench%03d" % h] = self.svc.create_provider("bench%03d" % h)["uuid"]

    def close(self):
        servicelib.stop(self.state)
        shutil.rmtree(self.state, ignore_errors=True)

    def measure(self, fn):
        mark = self.svc.log_mark()
        t0 = time.perf_counter()
        fn()
        wall = time.perf_counter() - t0
        reqs = self.svc.requests_since(mark)
        return {"wall_s": round(wall, 2), "requests": len(reqs),
                "writes": sum(1 for r in reqs if not r.startswith("GET "))}


def bench_accelops(hosts, devices):
    import openstack
    f = Fresh(hosts)
    try:
        cache = os.path.join(f.state, "gen.json")
        specs = [{"host": "bench%03d" % h, "providers": P.desired_providers("bench%03d" % h, host_discovery(h, devices))}
                 for h in range(hosts)]

        def once(use_cache=True):
            conn = openstack.connect(**f.svc.cloud())  # a module run builds its own connection too
            r = P.converge(conn.placement, specs, {}, cache_path=cache if use_cache else None,
                           endpoint=f.svc.endpoint)
            assert not r["warnings"], r["warnings"]
            return r
        out = {"scratch": f.measure(once)}
        out["noop"] = f.measure(once)
        out["noop_no_cache"] = f.measure(lambda: once(False))
        # check
        n = len([p for p in f.svc.providers() if p.get("parent_provider_uuid")])
        assert n == hosts * devices, n
        return out
    finally:
        f.close()


def bench_naive_sdk(hosts, devices):
    import openstack
    f = Fresh(hosts)
    try:
        def once():
            conn = openstack.connect(**f.svc.cloud())
            pl = conn.placement
            known_traits = set()
            for h in range(hosts):
                host = "bench%03d" % h
                for d in P.desired_providers(host, host_discovery(h, devices)):
                    rp = pl.find_resource_provider(d["name"])
                    if rp is None:
                        rp = pl.create_resource_provider(name=d["name"], uuid=d["uuid"],
                                                         parent_provider_uuid=f.roots[host])
                    if d["inventories"]:
                        gen = pl.get("/resource_providers/%s/inventories" % rp.id, microversion="1.39").json()[
                            "resource_provider_generation"]
                        pl.put("/resource_providers/%s/inventories" % rp.id, microversion="1.39",
                               json={"inventories": d["inventories"], "resource_provider_generation": gen})
                    for t in d["traits"]:
                        if t not in known_traits:
                            try:
                                pl.get_trait(t)
                            except openstack.exceptions.NotFoundException:
                                pl.create_trait(t)
                            known_traits.add(t)
                    rp = pl.get_resource_provider(rp)  # a fresh generation for the traits write
                    pl.put("/resource_providers/%s/traits" % rp.id, microversion="1.39",
                           json={"traits": d["traits"], "resource_provider_generation": rp.generation})
        out = {"scratch": f.measure(once)}
        out["noop"] = f.measure(once)
        return out
    finally:
        f.close()


def bench_cli(cli_hosts, devices):
    f = Fresh(cli_hosts)
    cli = f.svc.cli
    base = [cli, "--os-auth-type", "admin_token", "--os-endpoint", f.svc.endpoint, "--os-token", "admin",
            "--os-placement-api-version", "1.39"]

    def osc(*args):
        subprocess.run(base + list(args), check=True, capture_output=True, timeout=120)
    try:
        def once():
            traits_done = set()
            for h in range(cli_hosts):
                host = "bench%03d" % h
                for d in P.desired_providers(host, host_discovery(h, devices)):
                    # the documented way: create the provider, set its inventory, create and set its traits
                    osc("resource", "provider", "create", "--parent-provider", f.roots[host], "--uuid", d["uuid"],
                        d["name"])
                    for rc, inv in d["inventories"].items():
                        if rc.startswith("CUSTOM_") and rc not in traits_done:
                            osc("resource", "class", "create", rc)
                            traits_done.add(rc)
                        osc("resource", "provider", "inventory", "set", d["uuid"], "--resource",
                            "%s:total=%d" % (rc, inv["total"]), "--resource", "%s:max_unit=%d" % (rc, inv["max_unit"]))
                    for t in d["traits"]:
                        if t not in traits_done:
                            osc("trait", "create", t)
                            traits_done.add(t)
                    osc("resource", "provider", "trait", "set", d["uuid"], *sum((["--trait", t] for t in d["traits"]), []))
        return {"scratch": f.measure(once)}
    finally:
        f.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--devices", type=int, default=16)
    ap.add_argument("--cli-hosts", type=int, default=1, help="hosts to run the CLI way on (extrapolated)")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--json", help="write the results here too")
    a = ap.parse_args()
    providers = a.hosts * a.devices
    res = {"hosts": a.hosts, "devices": a.devices, "providers": providers, "python": sys.version.split()[0]}
    print("placement bench: %d hosts x %d devices = %d providers (real Placement 16.0.0, SQLite, 1 worker)"
          % (a.hosts, a.devices, providers))
    res["accelops"] = bench_accelops(a.hosts, a.devices)
    res["naive_sdk"] = bench_naive_sdk(a.hosts, a.devices)
    if not a.skip_cli:
        cli = bench_cli(a.cli_hosts, a.devices)
        n = a.cli_hosts * a.devices
        per = cli["scratch"]["wall_s"] / n
        cli["measured_providers"] = n
        cli["scratch_extrapolated"] = {"wall_s": round(per * providers, 1),
                                       "requests": round(cli["scratch"]["requests"] / n * providers)}
        res["cli"] = cli
    acc = res["accelops"]
    rows = [("accelops from scratch", acc["scratch"]), ("accelops no-op (cache)", acc["noop"]),
            ("accelops no-op (no cache)", acc["noop_no_cache"]), ("naive SDK from scratch", res["naive_sdk"]["scratch"]),
            ("naive SDK no-op", res["naive_sdk"]["noop"])]
    if "cli" in res:
        rows.append(("CLI from scratch (%d providers measured)" % res["cli"]["measured_providers"], res["cli"]["scratch"]))
        rows.append(("CLI from scratch, extrapolated to %d" % providers, dict(res["cli"]["scratch_extrapolated"], writes="")))
    print("%-45s %10s %10s %8s" % ("way", "wall s", "requests", "writes"))
    for name, r in rows:
        print("%-45s %10s %10s %8s" % (name, r["wall_s"], r["requests"], r.get("writes", "")))
    s = acc["scratch"]
    res["checks"] = {
        "scratch_requests_per_provider": round(s["requests"] / providers, 2),
        "noop_requests_per_host": round(acc["noop"]["requests"] / a.hosts, 3),
        "noop_no_cache_requests_per_host": round(acc["noop_no_cache"]["requests"] / a.hosts, 2),
        "speedup_vs_naive_sdk": round(res["naive_sdk"]["scratch"]["wall_s"] / s["wall_s"], 1),
    }
    if "cli" in res:
        res["checks"]["speedup_vs_cli_extrapolated"] = round(res["cli"]["scratch_extrapolated"]["wall_s"] / s["wall_s"], 1)
    print(json.dumps(res["checks"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
