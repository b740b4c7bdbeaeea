# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""placement_provider_drain against a real Placement: a free provider is drained and nothing more can be allocated
on it; an allocated one is refused; an allocation written (as Nova writes it) between the module's read and its
drain is seen through the provider generation and the provider is left alone; a card is drained whole or not at
all; a release restores reserved. And placement_aggregate_info, which the pool keeper reads aggregates with.
Run: .venv/bin/python -m pytest tests/harness/tests"""
import json

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P
from ansible_collections.accelops.lifecycle.plugins.modules import placement_aggregate_info as agg_mod
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_drain as drain_mod

CONSUMER = "6f70656e-7374-6163-6b00-0000000000a1"
LATE = "6f70656e-7374-6163-6b00-0000000000a2"


def run(env, capsys, providers, state="drained", check=False):
    args = {"cloud": env.cloud(), "providers": providers, "state": state, "_ansible_check_mode": check}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            drain_mod.main()
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def env(clean_placement):
    """A compute node with two FPGA card providers (total 1 each)."""
    p = clean_placement
    root = p.create_provider("cn1")
    for name in ("cn1_accelops_0000:86:00.0", "cn1_accelops_0000:87:00.0"):
        u = p.create_provider(name, parent=root["uuid"])["uuid"]
        p.set_inventories(u, {"FPGA": {"total": 1, "reserved": 0}})
    return p


def uuid_of(env, name):
    return env.provider_by_name(name)["uuid"]


def test_a_free_provider_is_drained_and_then_nothing_can_be_allocated(env, capsys):
    u = uuid_of(env, "cn1_accelops_0000:86:00.0")
    gen = env.get("/resource_providers/" + u)["generation"]
    r = run(env, capsys, [{"uuid": u, "name": "a", "generation": gen, "card": "cn1 86"}])
    assert r["changed"] and r["drained"] == ["a"] and r["refused"] == []
    assert r["providers"][0]["action"] == "drained" and not r["providers"][0]["moved"]
    assert env.inventories(u)["FPGA"]["reserved"] == 1
    with pytest.raises(Exception, match="HTTP 409"):
        env.allocate(CONSUMER, {u: {"FPGA": 1}})
    # idempotent: drained before (by this module: its mark) -> refused, not drained twice
    again = run(env, capsys, [{"uuid": u, "name": "a"}])
    assert not again["changed"] and again["providers"][0]["action"] == "refused"
    assert "drained by an earlier run of the collection" in again["providers"][0]["reason"]
    # released: reserved back to 0
    rel = run(env, capsys, [{"uuid": u, "name": "a"}], state="released")
    assert rel["changed"] and rel["providers"][0]["action"] == "released"
    assert env.inventories(u)["FPGA"]["reserved"] == 0


def test_an_allocated_provider_is_refused_and_left_as_it_is(env, capsys):
    u = uuid_of(env, "cn1_accelops_0000:86:00.0")
    env.allocate(CONSUMER, {u: {"FPGA": 1}})
    r = run(env, capsys, [{"uuid": u, "name": "a"}])
    assert not r["changed"] and r["drained"] == []
    assert r["refused"] == ["a: has allocations of %s" % CONSUMER]
    assert env.inventories(u)["FPGA"]["reserved"] == 0
    assert list(env.get("/allocations/" + CONSUMER)["allocations"]) == [u]


def test_an_allocation_made_between_the_read_and_the_drain_is_caught_by_the_generation(env):
    import openstack
    u = uuid_of(env, "cn1_accelops_0000:86:00.0")
    plan_gen = env.get("/resource_providers/" + u)["generation"]
    conn = openstack.connect(**env.cloud())
    client = P.Client(conn.placement)
    played = []
    real_call = client.call

    def call(method, path, body=None, ok=(200,), retry=None):
        if method == "PUT" and path.endswith("/inventories") and not played:
            played.append(1)  # Nova schedules an instance onto the card after the module read it free
            env.allocate(LATE, {u: {"FPGA": 1}})
        return real_call(method, path, body, ok=ok, retry=retry)
    client.call = call
    out = drain_mod.drain_one(client, {"uuid": u, "name": "a", "generation": plan_gen, "card": "c"}, 5, False)
    assert played
    assert out["action"] == "refused" and out["moved"]
    assert out["reason"] == "has allocations of %s (made since the plan's read)" % LATE
    assert env.inventories(u)["FPGA"]["reserved"] == 0
    assert list(env.get("/allocations/" + LATE)["allocations"]) == [u]


def test_a_card_is_drained_whole_or_not_at_all(env, capsys):
    a, b = uuid_of(env, "cn1_accelops_0000:86:00.0"), uuid_of(env, "cn1_accelops_0000:87:00.0")
    env.allocate(CONSUMER, {b: {"FPGA": 1}})
    r = run(env, capsys, [{"uuid": a, "name": "a", "card": "one card"}, {"uuid": b, "name": "b", "card": "one card"}])
    assert [p["action"] for p in r["providers"]] == ["undone", "refused"]
    assert r["providers"][0]["reason"] == "another provider of card one card was refused"
    assert r["drained"] == []
    assert env.inventories(a)["FPGA"]["reserved"] == 0 and env.inventories(b)["FPGA"]["reserved"] == 0


def test_check_mode_writes_nothing(env, capsys):
    u = uuid_of(env, "cn1_accelops_0000:86:00.0")
    r = run(env, capsys, [{"uuid": u, "name": "a"}], check=True)
    assert r["changed"] and r["providers"][0]["action"] == "drained"
    assert env.inventories(u)["FPGA"]["reserved"] == 0


def test_aggregate_members_are_read(env, capsys):
    agg, empty = "6f1c0a4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f", "6f1c0a4e-2a3b-4c5d-8e9f-0a1b2c3d4e60"
    root = env.provider_by_name("cn1")
    other = env.create_provider("cn2")
    for rp in (root, other):
        gen = env.get("/resource_providers/%s" % rp["uuid"])["generation"]
        env.request("PUT", "/resource_providers/%s/aggregates" % rp["uuid"],
                    {"aggregates": [agg], "resource_provider_generation": gen}, expect=200)
    args = {"cloud": env.cloud(), "aggregates": [agg, empty]}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            agg_mod.main()
    r = json.loads(capsys.readouterr().out)
    assert not r["changed"]
    assert [m["name"] for m in r["aggregates"][agg]] == ["cn1", "cn2"]
    assert r["aggregates"][agg][0]["uuid"] == root["uuid"] and r["aggregates"][empty] == []
    with patch_module_args({"cloud": env.cloud(), "aggregates": ["rack1"]}):
        with pytest.raises(SystemExit):
            agg_mod.main()
    assert "rack1 is not a uuid" in json.loads(capsys.readouterr().out)["msg"]


def test_numbers_out_of_range_are_refused_naming_the_option(env, capsys):
    u = uuid_of(env, "cn1_accelops_0000:86:00.0")
    r = run(env, capsys, [{"uuid": u, "generation": -1}])
    assert r["failed"] and r["msg"].startswith("providers[0].generation: must be ")
    args = {"cloud": env.cloud(), "providers": [{"uuid": u}], "conflict_retries": 1000}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            drain_mod.main()
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] and out["msg"].startswith("conflict_retries: must be ") and "between 0 and 100" in out["msg"]
    assert env.inventories(u)["FPGA"]["reserved"] == 0


def test_a_provider_nova_reports_is_drained_by_a_hold_that_its_inventory_rewrite_cannot_undo(env, capsys):
    root = env.provider_by_name("cn1")["uuid"]
    nova = env.create_provider("cn1_0000:D8:00.0", parent=root)["uuid"]
    env.set_traits(nova, ["OWNER_NOVA"])
    env.set_inventories(nova, {"SRIOV_NET_VF": {"total": 4, "max_unit": 4}})
    r = run(env, capsys, [{"uuid": nova, "name": "nic", "card": "cn1 d8"}])
    assert r["changed"] and r["drained"] == ["nic"] and r["providers"][0]["held"] == {"SRIOV_NET_VF": 4}
    assert env.inventories(nova)["SRIOV_NET_VF"]["reserved"] == 0       # Nova's inventory is left to Nova
    # Nova's periodic update writes its inventory again: nothing can be allocated still
    env.set_inventories(nova, {"SRIOV_NET_VF": {"total": 4, "max_unit": 4, "reserved": 0}})
    with pytest.raises(Exception, match="HTTP 409"):
        env.allocate(CONSUMER, {nova: {"SRIOV_NET_VF": 1}})
    again = run(env, capsys, [{"uuid": nova, "name": "nic"}])
    assert not again["changed"] and "held" in again["providers"][0]["reason"]
    rel = run(env, capsys, [{"uuid": nova, "name": "nic"}], state="released")
    assert rel["changed"] and rel["providers"][0]["action"] == "released"
    env.allocate(CONSUMER, {nova: {"SRIOV_NET_VF": 1}})
