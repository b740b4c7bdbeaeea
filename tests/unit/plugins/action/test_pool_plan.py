# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The function pool keeper's planner (module_utils/_pools.py) and its three actions: deficits and surpluses from
Placement, the order cards are taken in, hysteresis, cards in use or allocated never touched, the shortfall, the
declarations handed to the converge role, and the report after the run."""

from __future__ import annotations

import copy
import importlib
import re

import pytest
import yaml

from ansible_collections.accelops.lifecycle.plugins.action import pool_converge as pool_converge_action
from ansible_collections.accelops.lifecycle.plugins.action import pool_plan as pool_plan_action
from ansible_collections.accelops.lifecycle.plugins.action import pool_report as pool_report_action
from ansible_collections.accelops.lifecycle.plugins.module_utils import _pools

from ansible_collections.accelops.lifecycle.tests.unit.plugins.action.controller_run import refused_type, run_action


class Refused(Exception):
    """The action failed: its message."""


def _act(module, key, args):
    """The action's ``key`` result; Refused with its message when the task fails."""
    result = run_action(module.ActionModule, args)
    if result.get("failed"):
        assert "Traceback" not in result["msg"] and "exception" not in result, result
        raise Refused(result["msg"])
    assert result["changed"] is False
    return result[key]


def pool_plan(args):
    return _act(pool_plan_action, "plan", dict({"pools": []}, **args))


def pool_converge(args):
    return _act(pool_converge_action, "converge", args)


def pool_report(args):
    return _act(pool_report_action, "report", args)


GZIP = "11112222333344445555666677778888"
LZ4 = "aaaabbbbccccddddeeeeffff00001111"
OTHER = "9aeffe5f84570612c000c9660d824272"
FUNCTIONS = [
    {"name": "gzip", "match": {"family": "fpga"},
     "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": "a" * 64, "function_id": GZIP}},
    {"name": "lz4", "match": {"family": "fpga"},
     "fpga": {"bitstream": "/srv/lz4.gbs", "sha256": "b" * 64, "function_id": LZ4}},
]
TRAIT = {GZIP: "CUSTOM_FUNCTION_GZIP", LZ4: "CUSTOM_FUNCTION_LZ4"}


def fpga(address, loaded=None, in_use=False):
    return {"address": address, "family": "fpga", "physfn": None, "function": {"id": loaded} if loaded else None,
            "units": [{"kind": "device", "id": address, "in_use": in_use,
                       "in_use_by": [{"kind": "domain", "name": "instance-1"}] if in_use else []}]}


def provider(host, rec, used=0, allocations=None, drained=False, trait=True, generation=3):
    """What placement_provider_info returns for the card (FPGA total 1); the function trait when it carries one."""
    loaded = (rec.get("function") or {}).get("id")
    traits = ["CUSTOM_OWNER_ACCELOPS"] + ([TRAIT[loaded]] if trait and loaded in TRAIT else [])
    name = "%s_%s" % (host, rec["address"])
    return {"name": name, "uuid": "uuid-" + name, "generation": generation, "traits": traits,
            "inventories": {"FPGA": {"total": 1, "reserved": 1 if drained else 0}}, "usages": {"FPGA": used},
            "allocations": allocations or ({"c-1": {"resources": {"FPGA": used}}} if used else {}),
            "in_use": bool(used), "drained": drained}


def fleet(cards, **provider_kw):
    """cards: {host: [records]} -> (hosts, providers); provider_kw: {"host address": provider options}."""
    hosts, providers = {}, []
    for host, recs in cards.items():
        hosts[host] = {"placement_host": host, "discovery": {"accelerators": recs}}
        for rec in recs:
            providers.append(provider(host, rec, **provider_kw.get("%s %s" % (host, rec["address"]), {})))
    return hosts, providers


def pool(function, hosts, lo, hi=None, **kw):
    return dict(kw, function=function, hosts=hosts, min_free=lo, max_free=hi)


def run(pools, hosts, providers, **kw):
    return pool_plan(dict(kw, functions=FUNCTIONS, pools=pools, hosts=hosts, providers=providers))


def chosen(plan):
    return [(a["host"], a["address"], a["function"], a["change"]) for a in plan["actions"]]


def test_free_units_deficit_and_surplus_come_from_placement_usages():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0", GZIP)],
                          "h2": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0", LZ4)]},
                         **{"h1 0000:01:00.0": {"used": 1}})
    # a provider reported by someone else (no owner trait) with the function trait counts too; reserved is not free
    provs.append({"name": "h2_0000:09:00.0", "traits": ["CUSTOM_FUNCTION_GZIP"], "generation": 1,
                  "inventories": {"FPGA": {"total": 2, "reserved": 1}}, "usages": {"FPGA": 0}, "allocations": {}})
    p = run([pool("gzip", ["h1", "h2"], 1, 2), pool("lz4", ["h1", "h2"], 3)], hosts, provs)
    gz, lz = p["pools"]
    assert (gz["total"], gz["reserved"], gz["used"], gz["free"]) == (5, 1, 1, 3)
    assert (gz["deficit"], gz["surplus"], gz["status"]) == (0, 1, "ok")
    assert "max 2: 1 above it" in gz["message"]
    assert (lz["free"], lz["deficit"]) == (1, 2)


def test_empty_cards_first_then_foreign_then_surplus_of_another_pool():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0", GZIP), fpga("0000:03:00.0", GZIP),
                                 fpga("0000:04:00.0", GZIP)],
                          "h2": [fpga("0000:01:00.0", OTHER)],
                          "h3": [fpga("0000:01:00.0")]})
    p = run([pool("gzip", ["h1", "h2", "h3"], 1), pool("lz4", ["h1", "h2", "h3"], 3)], hosts, provs)
    assert chosen(p) == [("h3", "0000:01:00.0", "lz4", "load"), ("h2", "0000:01:00.0", "lz4", "reload"),
                         ("h1", "0000:01:00.0", "lz4", "take")]
    load, foreign, take = [a["reason"] for a in p["actions"]]
    assert "free, nothing loaded" in load
    assert "loaded with %s, which no pool keeps" % OTHER in foreign
    assert "carries gzip; gzip keep(s) 3 free after it (min + margin: 2)" in take
    assert take.startswith("h1 0000:01:00.0 -> lz4: ")
    assert p["actions"][2]["takes_from"] == ["gzip"]
    assert [x["status"] for x in p["pools"]] == ["ok", "will-meet"]
    assert p["pools"][1]["planned_free"] == 3 and p["pools"][0]["planned_free"] == 3


def test_a_card_carrying_the_function_without_its_trait_is_only_reported():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP)], "h2": [fpga("0000:01:00.0")]},
                         **{"h1 0000:01:00.0": {"trait": False}})
    p = run([pool("gzip", ["h1", "h2"], 1)], hosts, provs)
    assert chosen(p) == [("h1", "0000:01:00.0", "gzip", "publish")]
    assert "a report is enough" in p["actions"][0]["reason"]


def test_fewest_hosts_changed_then_host_and_address():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0")], "h2": [fpga("0000:01:00.0"), fpga("0000:02:00.0")]})
    p = run([pool("gzip", ["h1", "h2"], 1), pool("lz4", ["h1", "h2"], 1)], hosts, provs)
    # gzip takes h1's card (host order); lz4 would prefer h1 too, which has no card left, so h2's
    assert chosen(p) == [("h1", "0000:01:00.0", "gzip", "load"), ("h2", "0000:01:00.0", "lz4", "load")]
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0"), fpga("0000:02:00.0")], "h2": [fpga("0000:01:00.0")]})
    p = run([pool("gzip", ["h1", "h2"], 1), pool("lz4", ["h1", "h2"], 1)], hosts, provs)
    # lz4 stays on h1, which gzip's card changes already, instead of touching h2 as well
    assert chosen(p) == [("h1", "0000:01:00.0", "gzip", "load"), ("h1", "0000:02:00.0", "lz4", "load")]
    assert "on a host this run changes already" in p["actions"][1]["reason"]
    assert p["summary"].endswith("2 card(s) on 1 host(s) to change")


def test_pools_above_their_max_give_first():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0", GZIP), fpga("0000:03:00.0", GZIP)],
                          "h2": [fpga("0000:01:00.0", LZ4), fpga("0000:02:00.0", LZ4), fpga("0000:03:00.0", LZ4),
                                 fpga("0000:04:00.0", LZ4)]})
    fns = FUNCTIONS + [{"name": "nlb", "match": {"family": "fpga"},
                        "fpga": {"bitstream": "/srv/nlb.gbs", "sha256": "c" * 64, "function_id": OTHER}}]
    p = pool_plan({"functions": fns, "hosts": hosts, "providers": provs,
                   "pools": [pool("gzip", ["h1", "h2"], 1), pool("lz4", ["h1", "h2"], 1, 2),
                             pool("nlb", ["h1", "h2"], 1)]})
    # both gzip (3 free, min 1) and lz4 (4 free, max 2) could give; lz4 is above its max and gives
    assert chosen(p) == [("h2", "0000:01:00.0", "nlb", "take")]
    assert "lz4 above its max" in p["actions"][0]["reason"]


def test_hysteresis_a_pool_gives_only_what_keeps_it_at_min_plus_margin():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0", GZIP), fpga("0000:03:00.0", GZIP)]})
    p = run([pool("gzip", ["h1"], 2), pool("lz4", ["h1"], 2)], hosts, provs)
    # gzip has 3, min 2 + margin 1 = 3: it cannot give even one card; lz4 stays short and says by how much
    assert p["actions"] == []
    lz = p["pools"][1]
    assert (lz["status"], lz["shortfall"]) == ("cannot-meet", 2)
    assert "cannot meet the minimum: 0 free of lz4, min 2, 0 after this run: short by 2 unit(s)" in lz["message"]
    assert "whose pool gzip would have 2 free, below its min 2 + margin 1" in lz["message"]
    # margin 0: gzip gives one card (3 -> 2 = its min) and no more
    p = run([pool("gzip", ["h1"], 2), pool("lz4", ["h1"], 2)], hosts, provs, margin=0)
    assert chosen(p) == [("h1", "0000:01:00.0", "lz4", "take")]
    assert p["pools"][1]["shortfall"] == 1


def test_two_pools_competing_for_the_same_cards_settle():
    """Run the planner, apply its plan to the fleet, run it again: the second plan is empty, and no card that the
    first plan gave to a pool is ever taken back by the other."""
    cards = {"h1": [fpga("0000:0%d:00.0" % i, GZIP) for i in range(1, 5)] + [fpga("0000:05:00.0", LZ4)]}
    pools = [pool("gzip", ["h1"], 2), pool("lz4", ["h1"], 2)]
    moves = []
    for _round in range(3):
        hosts, provs = fleet(cards)
        p = run(pools, hosts, provs)
        moves.append(chosen(p))
        for a in p["actions"]:
            fid = GZIP if a["function"] == "gzip" else LZ4
            cards["h1"] = [fpga(r["address"], fid) if r["address"] == a["address"] else r for r in cards["h1"]]
    assert moves[0] == [("h1", "0000:01:00.0", "lz4", "take")]
    assert moves[1:] == [[], []]
    # both at their minimum or above, gzip at min + margin
    assert [x["free"] for x in p["pools"]] == [3, 2]
    # consumption takes lz4 below its minimum again: gzip (3 = min + margin) cannot give; lz4 says it is short
    hosts, provs = fleet(cards, **{"h1 0000:01:00.0": {"used": 1}})
    p = run(pools, hosts, provs)
    assert p["actions"] == [] and p["pools"][1]["shortfall"] == 1


def test_cards_in_use_allocated_or_drained_are_never_touched():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", in_use=True)],  # host evidence
                          "h2": [fpga("0000:01:00.0", OTHER)],  # Placement allocation (no usage yet)
                          "h3": [fpga("0000:01:00.0", OTHER)],  # used
                          "h4": [fpga("0000:01:00.0", OTHER)]},  # drained by an operator
                         **{"h2 0000:01:00.0": {"allocations": {"c-9": {"resources": {"FPGA": 1}}}},
                            "h3 0000:01:00.0": {"used": 1}, "h4 0000:01:00.0": {"drained": True}})
    p = run([pool("gzip", ["h1", "h2", "h3", "h4"], 1)], hosts, provs)
    assert p["actions"] == []
    gz = p["pools"][0]
    assert gz["status"] == "cannot-meet" and gz["shortfall"] == 1
    why = dict((c["host"], c["reason"]) for c in p["considered"])
    assert "in use, never touched: device 0000:01:00.0: domain instance-1" in why["h1"]
    assert "Placement provider h2_0000:01:00.0 has allocations of c-9" in why["h2"]
    assert "Placement provider h3_0000:01:00.0 has usages FPGA=1" in why["h3"]
    assert "drained (h4_0000:01:00.0): left alone" in why["h4"]


def test_left_drains_say_which_drained_cards_are_as_declared_on_this_discovery():
    # was: the keeper's lift judged "as declared" by the provider's trait alone (in Jinja), so a card a killed run
    # left half programmed, whose provider still had its old trait, had its drain lifted
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP)],                # carries gzip: as declared
                          "h2": [fpga("0000:01:00.0", GZIP)],                # its discovery now: nothing loaded
                          "h3": [fpga("0000:01:00.0", GZIP, in_use=True)],   # the host shows a user
                          "h4": [fpga("0000:01:00.0", OTHER)],               # carries no pool function
                          "h5": [fpga("0000:01:00.0", GZIP)]},               # not drained
                         **dict(("h%d 0000:01:00.0" % i, {"drained": True}) for i in (1, 2, 3, 4)))
    hosts["h2"]["discovery"]["accelerators"][0]["function"] = None
    p = run([pool("gzip", ["h1", "h2", "h3", "h4", "h5"], 0)], hosts, provs)
    left = dict((d["card"], d) for d in p["left_drains"])
    assert sorted(left) == ["h%d 0000:01:00.0" % i for i in (1, 2, 3, 4)]
    assert [left["h%d 0000:01:00.0" % i]["as_declared"] for i in (1, 2, 3, 4)] == [True, False, False, False]
    assert left["h1 0000:01:00.0"]["uuid"] == "uuid-h1_0000:01:00.0"


def test_match_keys_and_the_allow_list_limit_which_cards_a_function_gets():
    fns = [dict(FUNCTIONS[0], match={"family": "fpga", "numa_node": 1}), FUNCTIONS[1]]
    recs = [dict(fpga("0000:01:00.0"), numa_node=0), dict(fpga("0000:02:00.0"), numa_node=1)]
    hosts, provs = fleet({"h1": recs, "h2": [dict(fpga("0000:01:00.0"), numa_node=1)]})
    hosts["h1"]["allowed_functions"] = ["lz4", "b" * 64]          # gzip not allowed on h1
    p = pool_plan({"functions": fns, "pools": [pool("gzip", ["h1", "h2"], 1)], "hosts": hosts, "providers": provs})
    assert chosen(p) == [("h2", "0000:01:00.0", "gzip", "load")]
    hosts["h2"]["allowed_functions"] = ["gzip"]                   # name listed, bitstream sha256 not
    p = pool_plan({"functions": fns, "pools": [pool("gzip", ["h1", "h2"], 1)], "hosts": hosts, "providers": provs})
    why = [c["reason"] for c in p["considered"]]
    assert p["actions"] == []
    assert "h1 0000:01:00.0: does not match gzip's match keys" in why
    assert any(w.startswith("h1 0000:02:00.0: outside the host's allow-list: gzip: function name not in") for w in why)
    assert any("fpga.sha256 %s (/srv/gzip.gbs) not in" % ("a" * 64) in w for w in why)


def test_declarations_name_every_carrying_card_by_address():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0", LZ4, in_use=True),
                                 fpga("0000:03:00.0")]})
    p = run([pool("gzip", ["h1"], 2)], hosts, provs)
    assert chosen(p) == [("h1", "0000:03:00.0", "gzip", "load")]
    decl = p["declarations"]["h1"]
    assert [(e["name"], e["match"]) for e in decl] == [("gzip", {"address": ["0000:01:00.0", "0000:03:00.0"]}),
                                                       ("lz4", {"address": ["0000:02:00.0"]})]
    assert decl[0]["fpga"] == FUNCTIONS[0]["fpga"]
    assert p["function_names"][GZIP] == "gzip"
    assert p["actions"][0]["providers"] == [{"uuid": "uuid-h1_0000:03:00.0", "name": "h1_0000:03:00.0",
                                             "generation": 3}]


def test_a_card_the_drain_refused_is_left_out_of_the_converge():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0")], "h2": [fpga("0000:01:00.0"), fpga("0000:02:00.0", GZIP)]})
    p = run([pool("lz4", ["h1", "h2"], 2)], hosts, provs)
    assert [a["host"] for a in p["actions"]] == ["h1", "h2"]
    drain = {"providers": [
        {"name": "h1_0000:01:00.0", "uuid": "u1", "card": "h1 0000:01:00.0", "action": "refused",
         "reason": "has allocations of c-7 (made since the plan's read)"},
        {"name": "h2_0000:01:00.0", "uuid": "u2", "card": "h2 0000:01:00.0", "action": "drained", "reason": None}]}
    todo = pool_converge({"plan": p, "functions": FUNCTIONS, "drain": drain})
    assert todo["hosts"] == ["h2"]
    assert [(e["name"], e["match"]["address"]) for e in todo["declarations"]["h2"]] == [
        ("gzip", ["0000:02:00.0"]), ("lz4", ["0000:01:00.0"])]
    (skip,) = todo["skipped"]
    assert skip["address"] == "0000:01:00.0" and "made since the plan's read" in skip["why"]
    # the report: h2's card changed; h1's skipped; a drained card whose host did not converge it is released
    rep = pool_report({"plan": p, "drain": drain, "apply": True, "hosts": hosts, "providers": None,
                       "converge": {"h2": {"changed": ["0000:01:00.0"], "failed": [], "error": None,
                                           "placement": {"undrained": ["0000:01:00.0"], "kept_drained": []}}}})
    assert [(a["host"], a["outcome"]) for a in rep["actions"]] == [("h1", "skipped"), ("h2", "changed")]
    assert rep["release"] == []
    rep = pool_report({"plan": p, "drain": drain, "apply": True, "hosts": hosts, "providers": None,
                       "converge": {"h2": {"changed": [], "failed": [], "error": "the host is locked",
                                           "placement": {"undrained": [], "kept_drained": []}}}})
    assert rep["release"] == [{"uuid": "u2", "name": "h2_0000:01:00.0", "card": "h2 0000:01:00.0"}]
    assert [a["outcome"] for a in rep["actions"]] == ["skipped", "failed"]
    # a card the converge left drained (it did not verify) is not released
    rep = pool_report({"plan": p, "drain": drain, "apply": True, "hosts": hosts, "providers": None,
                       "converge": {"h2": {"changed": [], "failed": ["0000:01:00.0"], "error": None,
                                           "placement": {"undrained": [], "kept_drained": ["0000:01:00.0"]}}}})
    assert rep["release"] == [] and rep["actions"][1]["outcome"] == "failed"


def test_the_report_says_before_after_and_the_shortfall():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0"), fpga("0000:02:00.0", GZIP)]})
    p = run([pool("gzip", ["h1"], 3)], hosts, provs)
    assert p["pools"][0]["shortfall"] == 1
    after_hosts, after = fleet({"h1": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0", GZIP)]})
    rep = pool_report({"plan": p, "providers": after, "hosts": after_hosts, "apply": True, "fail_on_shortfall": True,
                       "drain": {"providers": []}, "converge": {"h1": {"changed": ["0000:01:00.0"]}}})
    assert rep["pools"][0]["before"] == 1 and rep["pools"][0]["after"] == 2
    assert rep["lines"][0] == "gzip (gzip): free 1 -> 2, min 3: short by 1 unit(s)"
    assert rep["failure"] == "function_pools: gzip short by 1 unit(s)"
    dry = pool_report({"plan": p, "providers": None, "hosts": hosts, "apply": False})
    assert dry["lines"][0] == "gzip (gzip): free 1, min 3; planned 2: cannot meet the minimum, short by 1 unit(s)"
    assert [a["outcome"] for a in dry["actions"]] == ["planned"] and dry["failure"] is None


@pytest.mark.parametrize("pools, msg", [
    ([{"function": "zstd", "hosts": ["h1"], "min_free": 1}], "is not a function of function_pools_functions"),
    ([{"function": "gzip", "hosts": ["h1"], "min_free": 2, "max_free": 1}], "max_free: 1 is below min_free 2"),
    ([{"function": "gzip", "hosts": ["h1"], "min_free": -1}], "min_free: must be an integer >= 0"),
    ([{"function": "gzip", "hosts": ["h9"], "min_free": 1}], "no discovery in hosts for host(s) h9"),
    ([{"function": "gzip", "hosts": ["h1"], "min_free": 1, "size": 3}], "unknown key(s) size"),
])
def test_bad_pools_are_refused_naming_the_key(pools, msg):
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0")]})
    with pytest.raises(Refused, match=r"^.*" + msg.replace("(", r"\(").replace(")", r"\)")):
        run(pools, hosts, provs)


def test_a_bad_declaration_is_refused_with_the_declaration_message():
    with pytest.raises(_pools.PoolError, match=r"function_pools_functions\[0\] \(gzip\)\.fpga\.sha256"):
        _pools.plan([dict(FUNCTIONS[0], fpga={"bitstream": "x", "sha256": "zz", "function_id": GZIP})],
                    [], {}, [])


def test_a_pool_over_a_placement_aggregate_counts_its_member_compute_nodes():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP)], "h2": [fpga("0000:01:00.0")],
                          "h3": [fpga("0000:01:00.0")]})
    hosts["h2"]["placement_host"] = "cn-2.example.org"
    for p in provs:
        p["name"] = p["name"].replace("h2_", "cn-2.example.org_")
    agg = "6f1c0a4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f"
    members = {agg: [{"name": "cn-2.example.org", "uuid": "r2"}, {"name": "h1", "uuid": "r1"}]}
    p = pool_plan({"functions": FUNCTIONS, "hosts": hosts, "providers": provs, "aggregates": members,
                   "pools": [{"function": "gzip", "aggregate": agg, "min_free": 2}]})
    assert p["pools"][0]["hosts"] == ["h1", "h2"] and p["pools"][0]["free"] == 1
    # h3 is not in the aggregate: only h2's card (named after its compute node) is chosen
    assert chosen(p) == [("h2", "0000:01:00.0", "gzip", "load")]
    assert p["actions"][0]["providers"][0]["name"] == "cn-2.example.org_0000:01:00.0"
    with pytest.raises(Refused, match="member.s. cn-9 of aggregate .* are not hosts of the play"):
        pool_plan({"functions": FUNCTIONS, "hosts": hosts, "providers": provs, "aggregates": {agg: ["cn-9"]},
                   "pools": [{"function": "gzip", "aggregate": agg, "min_free": 2}]})
    with pytest.raises(Refused, match="needs one of hosts .* or aggregate"):
        pool_plan({"functions": FUNCTIONS, "hosts": hosts, "providers": provs, "aggregates": members,
                   "pools": [{"function": "gzip", "aggregate": agg, "hosts": ["h1"], "min_free": 2}]})


def test_providers_are_placed_by_the_host_they_were_read_for_not_only_by_name():
    # "h1" and "h1_2" are two hosts: a name prefix alone would count h1_2's card for h1
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP)], "h1_2": [fpga("0000:01:00.0", GZIP)]})
    for p in provs:
        p["host"] = "h1_2" if p["name"].startswith("h1_2_") else "h1"
    p = run([pool("gzip", ["h1"], 1)], hosts, provs)
    assert p["pools"][0]["free"] == 1 and p["pools"][0]["providers"] == 1


# Wrong-shaped input (issue 21, the hostile-input sweep at 1,000 inputs per filter): each case below ended in a
# Python traceback (AttributeError, TypeError, KeyError, or _declaration's DeclarationError unconverted) before the
# shape checks at the boundary of _pools.py; now the task fails naming the path and the accepted form (the option's
# type is checked first, by the action's argument spec).
def _plan_input():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0"), fpga("0000:02:00.0", GZIP)]})
    return {"functions": FUNCTIONS, "pools": [pool("gzip", ["h1"], 2)], "hosts": hosts, "providers": provs,
            "groups": {"all": ["h1"]}}


@pytest.mark.parametrize("change, msg", [
    # was AttributeError: 'str' object has no attribute 'get' (pool_states)
    (lambda d: d["providers"].append("x"), refused_type('providers', 'str', 'dict', elements=True)),
    # was TypeError: 'int' object is not iterable
    (lambda d: d.update(providers=1), refused_type('providers', 'str', 'dict', elements=True)),
    # was ValueError: invalid literal for int() (an inventory total that is not a number)
    (lambda d: d["providers"][0]["inventories"]["FPGA"].update(total="x"),
     r"providers\[0\]\.inventories\.FPGA\.total: must be an integer, got str"),
    # was TypeError: '<' not supported (a usage keyed by a number, sorted with the others)
    (lambda d: d["providers"][0].update(usages={"FPGA": 1, 7: 1}), r"providers\[0\]\.usages: must be a mapping"),
    # was AttributeError: 'tuple' object has no attribute 'get' (validate_pools)
    (lambda d: d.update(groups=([], {})), refused_type('groups', 'tuple', 'dict')),
    # was AttributeError: 'list' object has no attribute 'get' (pool_states)
    (lambda d: d["hosts"].update(h1=[[]]), r"hosts\.h1: must be a mapping with placement_host"),
    # was DeclarationError (not a filter error) from _declaration._cards
    (lambda d: d["hosts"]["h1"]["discovery"]["accelerators"].append([]),
     r"hosts\.h1\.discovery\.accelerators\[2\]: must be an accelerator_info record"),
    # was AttributeError: 'str' object has no attribute 'get' (_declaration._unit_evidence)
    (lambda d: d["hosts"]["h1"]["discovery"]["accelerators"][0].update(units=["x"]),
     r"hosts\.h1\.discovery\.accelerators\[0\]\.units\[0\]: must be a unit"),
    # was TypeError: unhashable type: 'dict' (an aggregate that is not a uuid string)
    (lambda d: d.update(pools=[{"function": "gzip", "aggregate": {}, "min_free": 1}]),
     r"function_pools_pools\[0\] \(gzip\)\.aggregate: must be a Placement aggregate uuid"),
    # was ValueError: invalid literal for int() ('²'.isdigit() is true)
    (lambda d: d.update(margin="\u00b2"), refused_type('margin', 'str', 'int')),
])
def test_pool_plan_refuses_wrong_shaped_input_naming_the_path(change, msg):
    data = _plan_input()
    change(data)
    with pytest.raises(Refused, match=r"^" + msg):
        pool_plan(data)


def _converge_input():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0")], "h2": [fpga("0000:01:00.0")]})
    p = run([pool("lz4", ["h1", "h2"], 2)], hosts, provs)
    drain = {"providers": [{"name": "h1_0000:01:00.0", "uuid": "u1", "card": "h1 0000:01:00.0", "action": "drained",
                            "reason": None}]}
    return {"plan": p, "functions": FUNCTIONS, "drain": drain}, hosts


@pytest.mark.parametrize("change, msg", [
    # was AttributeError: 'int' object has no attribute 'get'
    (lambda d: d.update(drain=-9), r"drain: must be placement_provider_drain's result"),
    (lambda d: d["drain"]["providers"].append("x"), r"drain\.providers\[1\]: must be a provider of "),
    # was AttributeError: 'tuple' object has no attribute 'get' (declarations)
    (lambda d: d.update(functions=((False, False), {})), refused_type('functions', 'tuple', 'list')),
    # was AttributeError: 'list' object has no attribute 'get'
    (lambda d: d["plan"].update(carrying=[{}]), r"plan\.carrying: must be a mapping of host"),
    # was TypeError: tuple indices must be integers or slices, not str
    (lambda d: d["plan"]["actions"].__setitem__(0, (-1, -1)), r"plan\.actions\[0\]: must be an action of pool_plan"),
    # was AttributeError: 'int' object has no attribute 'lower' (an action's function)
    (lambda d: d["plan"]["actions"][0].update(function=3), r"plan\.actions\[0\]\.function: must be a string"),
])
def test_pool_converge_refuses_wrong_shaped_input_naming_the_path(change, msg):
    data, _hosts = _converge_input()
    change(data)
    with pytest.raises(Refused, match=r"^" + msg):
        pool_converge(data)


@pytest.mark.parametrize("change, msg", [
    # was AttributeError: 'list' object has no attribute 'get'
    (lambda d: d.update(drain=[("x", None)]), r"drain: must be placement_provider_drain's result"),
    # was KeyError: 'uuid' (a drained provider without its uuid, released)
    (lambda d: d["drain"]["providers"][0].pop("uuid"), r"drain\.providers\[0\]\.uuid: must be a string"),
    # was AttributeError: 'tuple' object has no attribute 'get'
    (lambda d: d.update(converge=(1, 2)), refused_type('converge', 'tuple', 'dict')),
    # was TypeError: can only concatenate str (not "list") to str
    (lambda d: d.update(converge={"h1": {"placement": {"undrained": "0000:01:00.0"}}}),
     r"converge\.h1\.placement\.undrained: must be a list of card addresses"),
    # was AttributeError: 'str' object has no attribute 'get' (pool_states)
    (lambda d: d.update(providers=["x"]), refused_type('providers', 'str', 'dict', elements=True)),
    (lambda d: d.update(providers=-2), refused_type('providers', 'str', 'dict', elements=True)),
    # was TypeError: 'NoneType' object is not subscriptable / KeyError: 'hosts' / unhashable name
    (lambda d: d["plan"]["pools"].__setitem__(0, None), r"plan\.pools\[0\]: must be a pool of pool_plan's result"),
    (lambda d: d["plan"]["pools"][0].pop("hosts"), r"plan\.pools\[0\]\.hosts: must be a list of host names"),
    (lambda d: d["plan"]["pools"][0].update(name={}), r"plan\.pools\[0\]\.name: must be a string"),
    # was AttributeError: 'int' object has no attribute 'get' / 'list' object ... (hosts)
    (lambda d: d["hosts"].update(h1=-1), r"hosts\.h1: must be a mapping with placement_host"),
    (lambda d: d.update(hosts=["h1"]), refused_type('hosts', 'list', 'dict')),
])
def test_pool_report_refuses_wrong_shaped_input_naming_the_path(change, msg):
    data, hosts = _converge_input()
    data = {"plan": data["plan"], "drain": data["drain"], "hosts": hosts, "apply": True,
            "providers": fleet({"h1": [fpga("0000:01:00.0", LZ4)], "h2": [fpga("0000:01:00.0")]})[1],
            "converge": {"h1": {"changed": [], "failed": [], "error": "locked",
                                "placement": {"undrained": [], "kept_drained": []}}}}
    pool_report(copy.deepcopy(data))       # the input before the change is accepted
    change(data)
    with pytest.raises(Refused, match=r"^" + msg):
        pool_report(data)


def test_empty_drain_and_null_entries_are_still_accepted():
    data, hosts = _converge_input()
    for drain in (None, [], {}, {"changed": False, "skipped": True}):
        assert pool_converge(dict(data, drain=drain))["hosts"] == ["h1", "h2"]
    rep = pool_report({"plan": data["plan"], "drain": None, "hosts": hosts, "providers": None, "apply": True,
                       "converge": {"h1": None}})
    assert [a["outcome"] for a in rep["actions"]] == ["not-converged", "not-converged"]


# Unsatisfiable device profiles served as pools (issue 20): device_profile_info's profiles (check_candidates)
def profile(name, *groups, **kw):
    return dict({"name": name, "uuid": "uuid-" + name, "description": None, "groups": list(groups),
                 "satisfiable": False, "candidates": {"count": 0, "hosts": [], "providers": []}}, **kw)


def group(function=None, units="1", rc="FPGA", **traits):
    g = {"resources:%s" % rc: units}
    if function:
        g["trait:CUSTOM_FUNCTION_%s" % function.upper()] = "required"
    g.update(("trait:" + k, v) for k, v in traits.items())
    return g


def test_unsatisfiable_profiles_become_pools_of_the_units_they_ask_for():
    profiles = [profile("fpga-gzip", group("gzip"), satisfiable=True,
                        candidates={"count": 2, "hosts": ["h1"], "providers": ["h1_0000:01:00.0"]}),
                profile("fpga-lz4-x2", group("lz4", units="2", CUSTOM_FPGA_INTEL="required"))]
    out = _pools.pools_from_profiles(profiles, _pools.D.validate(FUNCTIONS), ["h1", "h2"])
    # the satisfiable profile is left alone; the other asks for 2 units of lz4: min_free 2, margin 0
    assert out["pools"] == [{"name": "profile:fpga-lz4-x2", "function": "lz4", "hosts": ["h1", "h2"], "min_free": 2,
                             "margin": 0}]
    assert [(p["name"], p["status"], p["pools"]) for p in out["profiles"]] == [
        ("fpga-gzip", "satisfiable", []), ("fpga-lz4-x2", "served", ["profile:fpga-lz4-x2"])]
    assert out["profiles"][1]["reason"] == "unsatisfiable: 2 unit(s) of lz4"


def test_a_profile_asking_for_an_undeclared_function_is_not_servable_with_the_reason():
    profiles = [profile("fpga-zstd", group("zstd")), profile("gpu-any", group(rc="VGPU")),
                profile("two", group(None, CUSTOM_FUNCTION_GZIP="required", CUSTOM_FUNCTION_LZ4="required")),
                profile("half", group("gzip"), group("zstd"))]
    out = _pools.pools_from_profiles(profiles, _pools.D.validate(FUNCTIONS), "all")
    assert out["pools"] == []
    why = dict((p["name"], (p["status"], p["reason"])) for p in out["profiles"])
    assert why["fpga-zstd"] == ("not-servable", "group 0 asks for CUSTOM_FUNCTION_ZSTD, which no entry of "
                                "function_pools_functions provides (declared: CUSTOM_FUNCTION_GZIP, "
                                "CUSTOM_FUNCTION_LZ4)")
    assert why["gpu-any"][1].startswith("group 0 asks for no function (no trait:CUSTOM_FUNCTION_<NAME>: required)")
    assert why["two"][1] == ("group 0 asks for CUSTOM_FUNCTION_GZIP, CUSTOM_FUNCTION_LZ4 together: a card carries "
                             "one function")
    # a profile is served whole or not at all: its gzip group alone would not make it satisfiable
    assert why["half"] == ("not-servable", "group 1 asks for CUSTOM_FUNCTION_ZSTD, which no entry of "
                           "function_pools_functions provides (declared: CUSTOM_FUNCTION_GZIP, CUSTOM_FUNCTION_LZ4)")


def test_several_groups_one_pool_per_function_with_the_units_summed():
    profiles = [profile("mixed", group("gzip", units="2"), group("lz4"), group("gzip"))]
    out = _pools.pools_from_profiles(profiles, _pools.D.validate(FUNCTIONS), ["h1"])
    assert [(p["name"], p["function"], p["min_free"]) for p in out["pools"]] == [
        ("profile:mixed:gzip", "gzip", 3), ("profile:mixed:lz4", "lz4", 1)]
    # a group naming several resource classes asks for the largest count
    out = _pools.pools_from_profiles([profile("p", dict(group("gzip"), **{"resources:CUSTOM_X": "4"}))],
                                     _pools.D.validate(FUNCTIONS), ["h1"])
    assert out["pools"][0]["min_free"] == 4


def test_the_keeper_serves_unsatisfiable_profiles_through_the_same_plan():
    hosts, provs = fleet({"h1": [fpga("0000:01:00.0", GZIP), fpga("0000:02:00.0")], "h2": [fpga("0000:01:00.0")]})
    profiles = [profile("fpga-lz4", group("lz4")), profile("fpga-zstd", group("zstd")),
                profile("fpga-gzip", group("gzip"), satisfiable=True)]
    p = run([pool("gzip", ["h1", "h2"], 1)], hosts, provs, profiles=profiles, profile_hosts="pool_hosts",
            groups={"pool_hosts": ["h1", "h2"]})
    assert [(x["name"], x["min_free"], x["margin"], x["status"]) for x in p["pools"]] == [
        ("gzip", 1, 1, "ok"), ("profile:fpga-lz4", 1, 0, "will-meet")]
    assert chosen(p) == [("h1", "0000:02:00.0", "lz4", "load")]
    assert p["summary"].endswith("1 card(s) on 1 host(s) to change; 2 unsatisfiable profile(s): 1 kept by a pool, "
                                 "1 not servable")
    assert "profile fpga-lz4: unsatisfiable: 1 unit(s) of lz4: kept by pool(s) profile:fpga-lz4" in p["lines"]
    assert any(x.startswith("profile fpga-zstd: unsatisfiable and not servable by a pool: group 0 asks for "
                            "CUSTOM_FUNCTION_ZSTD") for x in p["lines"])
    # the report names the profile no pool can serve; with fail_on_shortfall the run fails for it
    rep = pool_report({"plan": p, "providers": None, "hosts": hosts, "apply": False, "fail_on_shortfall": True})
    assert rep["lines"][-1].startswith("profile fpga-zstd: unsatisfiable and not servable by a pool")
    assert rep["failure"] == "function_pools: profile fpga-zstd not servable"
    # without profiles (or with none unsatisfiable) the plan is what it was
    p0 = run([pool("gzip", ["h1", "h2"], 1)], hosts, provs)
    p1 = run([pool("gzip", ["h1", "h2"], 1)], hosts, provs, profiles=[], profile_hosts="pool_hosts")
    assert p0["summary"] == p1["summary"] and p0["profiles"] == p1["profiles"] == []


@pytest.mark.parametrize("profiles, hosts, msg", [
    ([profile("p", group("gzip"))], None, r"function_pools_profiles: needs the hosts its pools count over"),
    ("p", "all", refused_type('profiles', 'str', 'dict', elements=True)),
    ([dict(profile("p", group("gzip")), satisfiable=None)], "all",
     r"function_pools_profiles\[0\] \(p\)\.satisfiable: must be true or false, got NoneType: read the profiles with "
     r"accelops\.lifecycle\.device_profile_info and check_candidates: true"),
    ([profile("p", ["resources:FPGA"])], "all", r"function_pools_profiles\[0\] \(p\)\.groups\[0\]: must be a request "
                                                r"group in Cyborg's form"),
    ([profile("p", group("gzip", units="one"))], "all",
     r"function_pools_profiles\[0\] \(p\)\.groups\[0\]\.resources:FPGA: must be a whole number of units"),
    ([profile("p", group("gzip")), profile("p", group("lz4"))], "all", r"function_pools_profiles\[1\]\.name: profile 'p' is given twice"),
])
def test_bad_profiles_are_refused_naming_the_path(profiles, hosts, msg):
    h, provs = fleet({"h1": [fpga("0000:01:00.0")]})
    with pytest.raises(Refused, match=r"^" + msg):
        run([], h, provs, profiles=profiles, profile_hosts=hosts, groups={"all": ["h1"]})


# -- the actions: arguments, check mode, documentation ----------------------------------------------------------
def _run_raw(module, args, check_mode=False):
    out = run_action(module.ActionModule, args, check_mode=check_mode)
    assert "exception" not in out and "Traceback" not in out.get("msg", ""), out
    return out


def test_check_mode_plans_converges_and_reports_the_same():
    data, hosts = _converge_input()
    args = _plan_input()
    for module, a in ((pool_plan_action, args), (pool_converge_action, data),
                      (pool_report_action, {"plan": data["plan"], "hosts": hosts, "drain": data["drain"]})):
        real, check = _run_raw(module, copy.deepcopy(a)), _run_raw(module, copy.deepcopy(a), check_mode=True)
        assert not real.get("failed") and real == check


@pytest.mark.parametrize("module, args, msg", [
    (pool_plan_action, {"pools": [], "hosts": {}, "providers": []}, r"^missing required arguments: functions$"),
    (pool_plan_action, {"functions": [], "pools": [], "hosts": {}, "providers": [], "min_free": 1},
     r"^Unsupported parameters for \(accelops\.lifecycle\.pool_plan\) module: min_free\. Supported parameters include: "),
    (pool_plan_action, {"functions": [], "pools": [], "hosts": {}, "providers": [], "margin": -1},
     r"^margin: must be an integer >= 0, got -1$"),
    (pool_plan_action, {"functions": [], "pools": "gzip", "hosts": {}, "providers": []},
     r"^" + refused_type('pools', 'str', elements=True)),
    (pool_converge_action, {"functions": []}, r"^missing required arguments: plan$"),
    (pool_converge_action, {"plan": [], "functions": []}, r"^" + refused_type('plan', 'list')),
    (pool_report_action, {"plan": {}, "hosts": {}, "apply": "maybe"}, r"^" + refused_type('apply', 'str')),
    (pool_report_action, {"plan": {}, "hosts": {}}, r"^plan: expected pool_plan's result \(no actions\)$"),
])
def test_bad_arguments_fail_naming_the_option(module, args, msg):
    out = _run_raw(module, args)
    assert out["failed"] is True
    assert re.search(msg, out["msg"]), out["msg"]


def _doc_options(name):
    doc = importlib.import_module("ansible_collections.accelops.lifecycle.plugins.modules." + name).DOCUMENTATION
    return yaml.safe_load(doc)["options"]


@pytest.mark.parametrize("name", ["pool_plan", "pool_converge", "pool_report", "provision_plan", "resolve_functions"])
def test_each_argument_spec_is_its_documentation(name):
    spec = importlib.import_module("ansible_collections.accelops.lifecycle.plugins.action." + name).ActionModule
    documented = dict((opt, dict((k, v) for k, v in d.items() if k in ("type", "elements", "required", "default")))
                      for opt, d in _doc_options(name).items())
    assert documented == spec.ARGUMENT_SPEC
