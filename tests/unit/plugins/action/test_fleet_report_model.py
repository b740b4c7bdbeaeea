# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report's model (plugin_utils/_fleet_report.py, the fleet_report action of playbooks/report.yml):
capacity arithmetic, function names, cards, drift, profiles, and the page's template rendering user-given text
as text. Hosts are the discovery of a simulated lab-all host."""

from __future__ import annotations

import copy
import os
from html.parser import HTMLParser

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")
jinja2 = pytest.importorskip("jinja2")

from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import (  # noqa: E402
    FleetReportError, bar_segments, provider_function, units)
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import build as fleet_report  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "playbooks", "templates",
                        "fleet_report.html.j2")
OPAE_AFU = "d8424dc4a4a93c849c1ad7c6d7b3c2a7"     # what lab-all's PAC A10 (0000:5e:00.0) carries
OPAE_TRAIT = "CUSTOM_FPGA_FUNCTION_ID_INTEL_" + OPAE_AFU.upper()
SHA = "ab" * 32


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("fleet") / "lab-all")
    accelsim.render_tree("lab-all", root)
    return {"changed": False, "accelerators": discover(Sysfs(root=root))["accelerators"]}


def inv(total, reserved=0):
    return {"total": total, "reserved": reserved, "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": 1.0}


def prov(host, suffix, traits=(), inventories=None, usages=None, owner="accelops", allocations=None, root="root-a"):
    traits = list(traits) + (["CUSTOM_OWNER_ACCELOPS"] if owner == "accelops" else [])
    return {"name": "%s_%s" % (host, suffix), "uuid": "u-%s-%s" % (host, suffix), "host": host,
            "root_provider_uuid": root, "parent_provider_uuid": root, "owner": owner, "traits": traits,
            "inventories": inventories or {}, "usages": usages or {}, "allocations": allocations or {}}


def root_of(host, uuid="root-a"):
    return {"name": host, "uuid": uuid, "host": host, "root_provider_uuid": uuid, "parent_provider_uuid": None,
            "owner": None, "traits": [], "inventories": {"VCPU": inv(64)}, "usages": {"VCPU": 8}, "allocations": {}}


def fpga_entry(name, address):
    return {"name": name, "match": {"address": address},
            "fpga": {"bitstream": "/srv/%s.gbs" % name, "sha256": SHA, "function_id": OPAE_AFU}}


T4_2Q = {"name": "t4-2q", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "GRID T4-2Q", "count": 1}}
L40_8Q = {"name": "l40-8q", "match": {"address": "0000:3b:00.0"}, "vgpu": {"type": "NVIDIA L40-8Q", "count": 2}}


# -- capacity arithmetic ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("total,reserved,used,want", [
    (8, 0, 3, {"free": 5, "used": 3, "drained": 0, "reserved": 0, "is_drained": False}),
    (8, 2, 3, {"free": 3, "used": 3, "drained": 0, "reserved": 2, "is_drained": False}),
    (4, 4, 1, {"free": 0, "used": 1, "drained": 3, "reserved": 0, "is_drained": True}),   # a drain of a busy card
    (1, 1, 0, {"free": 0, "used": 0, "drained": 1, "reserved": 0, "is_drained": True}),
    (4, 3, 2, {"free": 0, "used": 2, "drained": 0, "reserved": 2, "is_drained": False}),  # reserved after use
    (0, 0, 0, {"free": 0, "used": 0, "drained": 0, "reserved": 0, "is_drained": False}),
])
def test_units_free_is_total_less_reserved_less_used(total, reserved, used, want):
    got = units(inv(total, reserved), used)
    assert dict((k, got[k]) for k in want) == want
    assert got["total"] == total
    if used <= total:   # the four parts add up to the total
        assert got["free"] + got["used"] + got["drained"] + got["reserved"] == total


def test_bar_segments_are_shares_of_the_whole():
    segs = bar_segments({"used": 1, "drained": 1, "reserved": 0, "free": 2, "total": 4})
    assert [(s["kind"], s["units"], s["pct"]) for s in segs] == [("used", 1, 25.0), ("drained", 1, 25.0),
                                                                 ("free", 2, 50.0)]
    assert bar_segments({"used": 0, "drained": 0, "reserved": 0, "free": 0, "total": 0}) == []


# -- function names --------------------------------------------------------------------------------------------

def test_declared_name_wins_over_discovery_name_and_raw_trait():
    declared = {"CUSTOM_FUNCTION_T4_2Q": "t4-2q"}
    discovered = {"CUSTOM_FUNCTION_GRID_T4_2Q": "GRID T4-2Q"}
    both = ["CUSTOM_FUNCTION_GRID_T4_2Q", "CUSTOM_FUNCTION_T4_2Q", "CUSTOM_VENDOR_10DE"]
    assert provider_function(both, declared, discovered) == ("t4-2q", "CUSTOM_FUNCTION_T4_2Q", True)
    assert provider_function(both[:1], declared, discovered) == ("GRID T4-2Q", "CUSTOM_FUNCTION_GRID_T4_2Q", False)
    plain = ("CUSTOM_FUNCTION_X", "CUSTOM_FUNCTION_X", False)
    assert provider_function(["CUSTOM_FUNCTION_X", OPAE_TRAIT], {}, {}) == plain
    assert provider_function([OPAE_TRAIT], {}, {}) == (OPAE_TRAIT, OPAE_TRAIT, False)
    assert provider_function(["CUSTOM_VENDOR_10DE"], declared, discovered) == (None, None, False)


# -- the fleet ---------------------------------------------------------------------------------------------------

def fleet(lab, **over):
    """Host a: lab-all with gzip declared on the PAC A10 it carries, t4-2q on the T4 and l40-8q on the L40 (which
    carries nothing); Placement: the A10 with gzip, the T4 with both function traits and a vGPU allocated, the L40
    without inventory, a Cyborg provider with 2 gzip units of which one is used, and host b's drained A10."""
    data = {
        "names": ["a", "b"],
        "hosts": [
            {"name": "a", "placement_host": "a", "discovery": lab,
             "functions": [fpga_entry("gzip", "0000:5e:00.0"), T4_2Q, L40_8Q]},
            {"name": "b", "placement_host": "b", "discovery": {"accelerators": []}, "functions": []},
        ],
        "placement": [{"changed": False, "providers": [
            root_of("a"),
            prov("a", "0000:5e:00.0", [OPAE_TRAIT, "CUSTOM_FUNCTION_GZIP"], {"FPGA": inv(1)}),
            prov("a", "0000:18:00.0", ["CUSTOM_FUNCTION_GRID_T4_2Q", "CUSTOM_FUNCTION_T4_2Q"], {"VGPU": inv(8)},
                 {"VGPU": 1}, allocations={"c-1": {"resources": {"VGPU": 1}}}),
            prov("a", "0000:3b:00.0"),
            prov("a", "0000:3d:00.0", [], {"CUSTOM_QAT": inv(1)}),
            prov("a", "cyborg-0", ["OWNER_CYBORG", "CUSTOM_FUNCTION_GZIP"], {"FPGA": inv(2)}, {"FPGA": 1},
                 owner="cyborg"),
            root_of("b", "root-b"),
            prov("b", "0000:5e:00.0", [OPAE_TRAIT], {"FPGA": inv(1, 1)}, root="root-b"),
        ]}],
        "profiles": [
            {"name": "gzip", "description": "<gzip>", "groups": [{"resources:FPGA": "1",
                                                                  "trait:CUSTOM_FUNCTION_GZIP": "required"}],
             "candidates": {"count": 2, "hosts": ["a", "a"], "providers": []}, "satisfiable": True},
            {"name": "l40", "description": None, "groups": [{"resources:VGPU": "1",
                                                             "trait:CUSTOM_FUNCTION_L40_8Q": "required"}],
             "candidates": {"count": 0, "hosts": [], "providers": [], "reason": "No such trait"},
             "satisfiable": False},
        ],
        "generated": "2026-11-24 20:00:00 UTC",
    }
    data.update(over)
    return data


def row(report, function, rc):
    rows = [r for r in report["functions"] if r["function"] == function and r["resource_class"] == rc]
    assert len(rows) == 1, report["functions"]
    return rows[0]


def test_capacity_per_function_counts_every_reporter_and_skips_roots(lab):
    r = fleet_report(fleet(lab))
    gzip = row(r, "gzip", "FPGA")
    assert (gzip["total"], gzip["used"], gzip["free"], gzip["drained"], gzip["providers"]) == (3, 1, 2, 0, 2)
    assert gzip["declared"] is True and gzip["trait"] == "CUSTOM_FUNCTION_GZIP"
    assert gzip["where"] == [{"host": "a", "total": 3, "free": 2}]
    t4 = row(r, "t4-2q", "VGPU")
    assert (t4["total"], t4["used"], t4["free"]) == (8, 1, 7)
    # b's A10 carries lab-all's AFU but nobody declares it there: named by what discovery calls it (its id)
    b = row(r, OPAE_AFU, "FPGA")
    assert (b["total"], b["free"], b["drained"], b["where"]) == (1, 0, 1, [])
    qat = row(r, None, "CUSTOM_QAT")
    assert qat["total"] == 1
    assert [x["function"] for x in r["functions"]][-1] is None        # no function last
    assert "VCPU" not in [x["resource_class"] for x in r["functions"]]
    assert r["summary"]["drained_providers"] == 1
    classes = dict((c["resource_class"], c["total"]) for c in r["summary"]["classes"])
    assert classes == {"FPGA": 4, "VGPU": 8, "CUSTOM_QAT": 1}


def test_cards_status_evidence_and_drift(lab):
    data = fleet(lab)
    a = [h for h in fleet_report(data)["hosts"] if h["name"] == "a"][0]
    cards = dict((c["address"], c) for c in a["cards"])
    assert len(cards) == len([x for x in lab["accelerators"] if not x.get("physfn")])
    assert cards["0000:5e:00.0"]["status"] == "as declared"
    assert cards["0000:5e:00.0"]["declared"] == "gzip"
    assert cards["0000:18:00.0"]["status"] == "as declared"
    # the declared name of what it carries; discovery's own name or id where nothing declares it
    assert (cards["0000:18:00.0"]["carries"], cards["0000:18:00.0"]["function_id"]) == ("t4-2q", "nvidia-231")
    assert cards["0000:86:00.0"]["carries"] == cards["0000:86:00.0"]["function_id"] == "9aeffe5f84570612c000c9660d824272"
    assert cards["0000:3b:00.0"]["status"] == "to change"
    assert cards["0000:3d:00.0"]["status"] == "not declared"
    t4 = cards["0000:18:00.0"]
    assert t4["in_use"] is True
    assert "placement a_0000:18:00.0: 1 VGPU used" in t4["evidence"]
    assert "placement consumer c-1 holds VGPU 1" in t4["evidence"]
    assert t4["providers"][0]["function"] == "t4-2q"
    assert a["drift"] == ["0000:3b:00.0: declared l40-8q (vgpu), carries nothing"]
    assert [p["name"] for p in a["other_providers"]] == ["a_cyborg-0"]       # Cyborg's: no drift
    cyborg = a["other_providers"][0]
    assert (cyborg["owner"], cyborg["function"]) == ("cyborg", "gzip")
    assert [(i["resource_class"], i["used"], i["total"]) for i in cyborg["inventories"]] == [("FPGA", 1, 2)]
    assert (a["capacity"]["total"], a["capacity"]["used"], a["capacity"]["free"]) == (12, 2, 10)


def test_a_card_that_does_not_carry_its_function_yet_is_not_free_capacity(lab):
    """The L40 is declared l40-8q and carries nothing (drift), but its provider already has the function's trait and
    an inventory (written before the card was reset, or by hand): its units count as not loaded, not as free, and
    the function can land nowhere."""
    data = fleet(lab)
    providers = data["placement"][0]["providers"]
    providers[:] = [p for p in providers if p["name"] != "a_0000:3b:00.0"]
    providers.append(prov("a", "0000:3b:00.0", ["CUSTOM_FUNCTION_L40_8Q"], {"VGPU": inv(4)}))
    r = fleet_report(data)
    l40 = row(r, "l40-8q", "VGPU")
    assert (l40["total"], l40["free"], l40["not_loaded"], l40["where"]) == (4, 0, 4, [])
    assert [s["kind"] for s in l40["bar"]] == ["not_loaded"]
    a = [h for h in r["hosts"] if h["name"] == "a"][0]
    assert (a["capacity"]["total"], a["capacity"]["free"], a["capacity"]["not_loaded"]) == (16, 10, 4)
    card = [c for c in a["cards"] if c["address"] == "0000:3b:00.0"][0]
    assert [(i["free"], i["not_loaded"]) for i in card["providers"][0]["inventories"]] == [(0, 4)]
    # the T4 carries what its provider says: its free units stay free
    assert row(r, "t4-2q", "VGPU")["free"] == 7


def test_host_evidence_and_blocked_card(lab):
    found = copy.deepcopy(lab)
    t4 = [x for x in found["accelerators"] if x["address"] == "0000:18:00.0"][0]
    t4["units"][0]["in_use"] = True
    t4["units"][0]["in_use_by"] = [{"kind": "domain", "name": "instance-0000002a"}]
    t4_4q = dict(T4_2Q, name="t4-4q", vgpu={"type": "GRID T4-4Q", "count": 1})
    data = fleet(lab)
    data["hosts"][0].update(discovery=found, functions=[t4_4q])
    a = fleet_report(data)["hosts"][0]
    card = [c for c in a["cards"] if c["address"] == "0000:18:00.0"][0]
    assert card["status"] == "blocked"
    assert card["evidence"][0] == "device 0000:18:00.0: domain instance-0000002a"
    assert a["drift"][0].startswith("0000:18:00.0: declared t4-4q (vgpu), carries GRID T4-2Q; in use, not changed")


def test_placement_drift_missing_trait_and_stale_provider(lab):
    data = fleet(lab)
    provs = data["placement"][0]["providers"]
    provs[1]["traits"].remove("CUSTOM_FUNCTION_GZIP")       # the A10 carries gzip, Placement does not say so
    provs.append(prov("a", "0000:99:00.0", [], {"FPGA": inv(1)}))
    a = fleet_report(data)["hosts"][0]
    assert "0000:5e:00.0: carries gzip, Placement lacks CUSTOM_FUNCTION_GZIP on a_0000:5e:00.0" in a["drift"]
    assert "a_0000:99:00.0: provider of this collection without a card on the host" in a["drift"]


def test_declaration_problem_is_drift(lab):
    data = fleet(lab)
    data["hosts"][0]["functions"] = [dict(T4_2Q, match={"address": "0000:77:00.0"})]
    a = fleet_report(data)["hosts"][0]
    assert a["drift"] == ["declaration: t4-2q: no device at 0000:77:00.0 on this host"]


def test_hosts_not_read(lab):
    data = fleet(lab)
    data["hosts"] = [None, {"name": "b", "placement_host": "b", "discovery": {"failed": True, "msg": "no /sys"},
                            "functions": []}]
    data["placement"] = [
        {"item": "a", "failed": False, "msg": "hosts: no resource provider named a"},
        {"item": "b", "providers": [root_of("b", "root-b"),
                                    prov("b", "0000:5e:00.0", [], {"FPGA": inv(1)}, root="root-b")]}]
    r = fleet_report(data)
    a, b = r["hosts"]
    assert a["error"].startswith("not reached")
    assert a["drift"] == ["Placement: hosts: no resource provider named a"]
    assert b["error"] == "discovery failed: no /sys"
    assert b["cards"] == [] and b["drift"] == []       # no discovery: its providers are not called stale
    assert r["summary"]["hosts_failed"] == 2


def test_profiles_candidates_and_unsatisfiable(lab):
    r = fleet_report(fleet(lab))
    by = dict((p["name"], p) for p in r["profiles"])
    assert r["unsatisfiable"] == ["l40"]
    assert by["gzip"]["candidates"] == 2 and by["gzip"]["hosts"] == ["a"]
    assert by["gzip"]["asks"] == [{"function": "gzip", "resource_class": "FPGA", "count": 1, "free_in_fleet": 2}]
    assert by["l40"]["asks"][0]["function"] == "l40-8q"          # named by the declaration, no provider has it
    assert by["l40"]["asks"][0]["free_in_fleet"] == 0
    assert by["l40"]["reason"] == "No such trait"
    # free units by the group's traits, whatever row the providers are counted in: the T4's row is t4-2q
    grid = {"name": "grid", "groups": [{"resources:VGPU": "1", "trait:CUSTOM_FUNCTION_GRID_T4_2Q": "required"}]}
    group = {"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required", "trait:OWNER_CYBORG": "forbidden"}
    not_cyborg = {"name": "not-cyborg", "groups": [group]}
    asks = dict((p["name"], p["asks"][0]) for p in fleet_report(fleet(lab, profiles=[grid, not_cyborg]))["profiles"])
    assert (asks["grid"]["function"], asks["grid"]["free_in_fleet"]) == ("GRID T4-2Q", 7)
    assert (asks["not-cyborg"]["function"], asks["not-cyborg"]["free_in_fleet"]) == ("gzip", 1)
    unchecked = fleet_report(fleet(lab, profiles=[{"name": "x", "groups": []}]))["profiles"][0]
    assert unchecked["satisfiable"] is None and unchecked["candidates"] is None


@pytest.mark.parametrize("data,message", [
    ("text", "expects a dictionary"),
    ({"hosts": "a"}, "hosts must be a list"),
    ({"hosts": [{"placement_host": "a"}]}, r"hosts\[0\] must be a dictionary with a name"),
    ({"providers": ["x"]}, "providers must be"),
])
def test_wrong_input_fails_clearly(data, message):
    with pytest.raises(FleetReportError, match=message):
        fleet_report(data)


# -- the page ---------------------------------------------------------------------------------------------------

class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_page_renders_user_text_as_text(lab):
    hostile = '<script>alert("x")</script>&<i>'
    data = fleet(lab, title=hostile)
    data["hosts"][1].update(name=hostile, placement_host=hostile + "-pl")
    for p in data["placement"][0]["providers"]:
        if p["host"] == "b":
            p["host"] = hostile + "-pl"
            p["name"] = p["name"].replace("b", hostile + "-pl", 1)
    data["profiles"][0]["description"] = hostile
    report = fleet_report(data)
    with open(TEMPLATE) as f:
        env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
        html = env.from_string(f.read()).render(accelops_report=report)
    page = Tags()
    page.feed(html)
    assert "script" not in page.tags and "i" not in page.tags
    text = "".join(page.text)
    assert text.count(hostile) >= 4          # title, heading, host row, host section, profile description
    assert 'data-host="%s"' % hostile.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        '"', "&#34;") in html
    assert "0000:3b:00.0" in text and "to change" in text
