# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Concurrent writers (docs/reliability.md, "Concurrent writers").

Another process (nova_writer.py) writes the same providers the way nova-compute and the Cyborg agent do
(generation-checked PUTs, redone on 409) as fast as Placement answers, while placement_provider_tree runs
with a changing discovery result every round. After each round both stop and an independent read checks
that neither side lost an update: the module's traits and inventories are what that round asked for, the
other writer's traits and inventory totals are what it last committed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from helpers import AFU_AES, AFU_GZIP, discovery, fpga_record, gpu_record, nic_record, patch_exits, run_module

from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_tree as tree_mod

ROUNDS = int(os.environ.get("RELIABILITY_ROUNDS", "30"))
HOST = "cn1"
# the compute node provider found for HOST: its children are named after it
ROOT_NAME = "cn1.example.org"
ROOT_UUID = "5d1a1a0e-3f1e-4c5e-9a37-0c3f6f1c0101"
CYBORG_ADDR = "0000:86:00.0"
HERE = os.path.dirname(os.path.abspath(__file__))


class WriterProcess(object):
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "nova_writer.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def send(self, **msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the writer process ended"
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def round_records(r):
    """What discovery says in round ``r``: the function on both FPGAs and the NIC's VF count change."""
    afu = AFU_GZIP if r % 2 == 0 else AFU_AES
    other = AFU_AES if r % 2 == 0 else AFU_GZIP
    return [fpga_record(afu=afu), gpu_record(), nic_record(numvfs=4 + 4 * (r % 4)),
            fpga_record(afu=other, addr=CYBORG_ADDR)]


def test_concurrent_writer_loses_no_update(clean_placement, monkeypatch, tmp_path, figures):
    pl = clean_placement
    patch_exits(monkeypatch)
    pl.create_provider(ROOT_NAME, uuid=ROOT_UUID)
    # a provider the Cyborg agent owns, for a card declared as Cyborg's: the module may only touch its function traits
    cy_name = "%s_%s" % (ROOT_NAME, CYBORG_ADDR)
    cy = pl.create_provider(cy_name, uuid=P.provider_uuid(cy_name), parent=ROOT_UUID)
    pl.set_traits(cy["uuid"], ["OWNER_CYBORG", "CUSTOM_FPGA_INTEL"])
    pl.set_inventories(cy["uuid"], {"FPGA": {"total": 1, "max_unit": 1}})
    args = {"cloud": pl.cloud(), "generation_cache": str(tmp_path / "gen.json"),
            "reporters": {CYBORG_ADDR: "cyborg"}}
    first = run_module(tree_mod.main, dict(args, discovery=discovery(HOST, round_records(0))))
    assert first.kind == "exit", first
    owned = [p["uuid"] for p in first.result["providers"] if p["owner"] == "accelops"]
    assert len(owned) == 3

    writer = WriterProcess()
    try:
        assert writer.send(cmd="setup", endpoint=pl.endpoint, token=pl.token, trait_providers=owned + [cy["uuid"]],
                           inventory_providers={ROOT_UUID: "VCPU", cy["uuid"]: "FPGA"}, seed=7)["ok"]
        stats = {"rounds": 0, "rounds_without_lost_update": 0, "module_runs_failed": 0, "module_writes": 0,
                 "module_conflicts_resolved": 0, "writer_writes": 0, "writer_conflicts": 0}
        lost = []
        started = time.time()
        writer_state = {"traits": {}, "inventories": {}}
        for r in range(1, ROUNDS + 1):
            disc = discovery(HOST, round_records(r))
            assert writer.send(cmd="go")["ok"]
            out = run_module(tree_mod.main, dict(args, discovery=disc))
            writer_state = writer.send(cmd="stop")
            stats["rounds"] += 1
            assert out.kind != "traceback", out.tb
            assert not writer_state["errors"], writer_state["errors"]
            problems = []
            if out.kind == "fail":
                stats["module_runs_failed"] += 1
                problems.append("module run failed: %s" % out.msg)
            else:
                stats["module_writes"] += out.result["requests"]["writes"]
                stats["module_conflicts_resolved"] += out.result["requests"]["conflicts_resolved"]
            # both sides have stopped: read each provider's traits and inventories once (plain HTTP), check
            # both sides against that one read
            traits_of = dict((u, pl.traits(u)) for u in owned + [cy["uuid"]])
            inventories_of = dict((u, pl.inventories(u)) for u in owned + [ROOT_UUID, cy["uuid"]])
            # the module's side: exactly what this round asked for
            desired = dict((d["uuid"], d) for d in P.desired_providers(HOST, disc, prefix=ROOT_NAME,
                                                                       reporters={CYBORG_ADDR: "cyborg"}))
            for u in owned:
                traits = traits_of[u]
                mine = sorted(t for t in traits if P.is_managed_trait(t))
                if mine != sorted(desired[u]["traits"]):
                    problems.append("%s: module traits %s, wanted %s" % (u, mine, sorted(desired[u]["traits"])))
                if not P.same_inventories(inventories_of[u], desired[u]["inventories"]):
                    problems.append("%s: module inventories lost" % u)
            cy_traits = traits_of[cy["uuid"]]
            fn = sorted(t for t in cy_traits if P.is_function_trait(t))
            if fn != sorted(t for t in desired[cy["uuid"]]["traits"] if P.is_function_trait(t)):
                problems.append("cyborg provider: function traits %s" % fn)
            if "OWNER_CYBORG" not in cy_traits:
                problems.append("cyborg provider lost OWNER_CYBORG")
            # the other writer's side: what it last committed
            for u, own in writer_state["traits"].items():
                have = sorted(t for t in (traits_of[u] if u in traits_of else pl.traits(u))
                              if t.startswith("CUSTOM_NOVA_W_"))
                if have != own:
                    problems.append("%s: writer traits %s, it committed %s" % (u, have, own))
            for u, total in writer_state["inventories"].items():
                rc = "VCPU" if u == ROOT_UUID else "FPGA"
                have = (inventories_of[u] if u in inventories_of else pl.inventories(u)).get(rc, {}).get("total")
                if have != total:
                    problems.append("%s: writer's %s total %s, it committed %s" % (u, rc, have, total))
            if problems:
                lost.append("round %d: %s" % (r, "; ".join(problems)))
            else:
                stats["rounds_without_lost_update"] += 1
        stats["writer_writes"] = writer_state["writes"]
        stats["writer_conflicts"] = writer_state["conflicts"]
        stats["seconds"] = round(time.time() - started, 1)
    finally:
        writer.close()
    figures["placement_concurrent_writers"] = stats
    assert not lost, "\n".join(lost[:20])
    # the rounds really raced: both sides hit generation conflicts and resolved them
    assert stats["module_conflicts_resolved"] > 0 and stats["writer_conflicts"] > 0, stats


def test_trait_write_between_read_and_inventory_write_survives(clean_placement, tmp_path):
    """The race the round test found (fixed): another writer changes the traits after the module read
    them and before its inventory PUT. The inventory PUT meets a generation conflict and succeeds on retry
    with a fresh generation; the traits PUT that follows must not use that generation with the traits read
    before, or it silently removes the other writer's trait."""
    import openstack
    pl = clean_placement
    pl.create_provider(ROOT_NAME, uuid=ROOT_UUID)
    conn = openstack.connect(**pl.cloud())
    cache = str(tmp_path / "gen.json")
    first = [{"host": HOST, "providers": P.desired_providers(HOST, discovery(HOST, round_records(0)[:3]))}]
    P.converge(conn.placement, first, {}, cache_path=cache, endpoint=pl.endpoint)
    nic = P.provider_uuid(P.provider_name(ROOT_NAME, nic_record()["address"]))
    played = []

    def writer(action, what):
        if action["uuid"] == nic and what == "inventories" and not played:
            played.append(action["uuid"])
            pl.set_traits(action["uuid"], pl.traits(action["uuid"]) + ["CUSTOM_NOVA_W_0"])
    # round 1 changes the NIC's inventory (more VFs); moving it to NUMA node 0 changes its traits as well
    recs = round_records(1)[:3]
    recs[2] = dict(recs[2], numa_node=0)
    new = [{"host": HOST, "providers": P.desired_providers(HOST, discovery(HOST, recs))}]
    r = P.converge(conn.placement, new, {}, cache_path=cache, endpoint=pl.endpoint, before_write=writer)
    assert nic in played and r["requests"]["conflicts_resolved"] >= 1
    for u in played:
        assert "CUSTOM_NOVA_W_0" in pl.traits(u), u
    want = dict((d["uuid"], d) for d in P.named_after_root(new[0], {"name": ROOT_NAME}))
    for u in played:
        assert sorted(t for t in pl.traits(u) if P.is_managed_trait(t)) == sorted(want[u]["traits"])
        assert P.same_inventories(pl.inventories(u), want[u]["inventories"])
    # and the generation cache does not hand the next run a stale view: a rerun changes nothing
    again = P.converge(conn.placement, new, {}, cache_path=cache, endpoint=pl.endpoint)
    assert not again["changed"]
    for u in played:
        assert "CUSTOM_NOVA_W_0" in pl.traits(u)
