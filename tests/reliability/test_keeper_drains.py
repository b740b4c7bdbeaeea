# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The function pool keeper's drains after a killed run (docs/reliability.md, "Killed runs"), against the real
Placement.

The keeper drains the cards it is about to reprogram with ``placement_provider_drain`` (run_once, on the controller)
and releases what its converge did not take over at the end. A keeper killed between the two leaves its drains:
exactly the state the drain module's run leaves with no release after it, which is how this test makes it. Each
drain must carry the collection's mark, and the next keeper run (``state: lifted``) must lift the marked drain of a
card as declared, leave the marked drain of a card that is not, and never lift an operator's drain (no mark). Check
mode changes nothing; a second lift finds nothing to do; a release takes the mark away with the drain.
"""

from __future__ import annotations

import time

import pytest

from modrunner import patch_exits, run_module  # pylint: disable=wrong-import-order
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_drain

pytest.importorskip("openstack")
DRAIN_TRAIT = "CUSTOM_ACCELOPS_DRAINED"
OWNER = "CUSTOM_OWNER_ACCELOPS"


def _drain(placement, providers, state="drained", check=False):
    args = {"cloud": placement.cloud(), "providers": providers, "state": state}
    out = run_module(placement_provider_drain.main, args, check=check)
    assert out.kind == "exit", out.result
    return out.result


def _drained(placement, uuid):
    invs = placement.inventories(uuid)
    return bool(invs) and all(i["reserved"] >= i["total"] for i in invs.values())


def test_a_killed_keepers_drains_are_marked_and_lifted_and_an_operators_is_left(clean_placement, monkeypatch,
                                                                                figures):
    patch_exits(monkeypatch)
    placement = clean_placement
    t0 = time.monotonic()
    root = placement.create_provider("keeper1")
    uuids = {}
    for card in ("0000:86:00.0", "0000:87:00.0", "0000:88:00.0"):
        name = "keeper1_accelops_" + card
        uuids[card] = placement.create_provider(name, parent=root["uuid"])["uuid"]
        placement.set_inventories(uuids[card], {"FPGA": {"total": 1, "reserved": 0}})
        placement.set_traits(uuids[card], [OWNER, "CUSTOM_FUNCTION_GZIP"])
    ours, other = uuids["0000:86:00.0"], uuids["0000:87:00.0"]
    operators = uuids["0000:88:00.0"]
    # an operator's drain, by hand: reserved = total, no mark
    placement.set_inventories(operators, {"FPGA": {"total": 1, "reserved": 1}})

    # the keeper's drain, then the run is killed (no release follows)
    r = _drain(placement, [{"uuid": ours, "name": "ours", "card": "keeper1 86"},
                           {"uuid": other, "name": "other", "card": "keeper1 87"}])
    assert r["drained"] == ["ours", "other"]
    for u in (ours, other):
        assert _drained(placement, u) and DRAIN_TRAIT in placement.traits(u), "the keeper's drain has no mark"
    assert DRAIN_TRAIT not in placement.traits(operators)
    # the next drain of a marked provider is refused saying whose it is (not taken for an operator's)
    again = _drain(placement, [{"uuid": ours, "name": "ours"}])
    assert again["providers"][0]["action"] == "refused" and "earlier run of the collection" in again["refused"][0]

    # the next keeper run: 86 is as declared, 87 is not (say its function is being changed), 88 is the operator's
    lift = [{"uuid": ours, "name": "ours", "card": "keeper1 86", "as_declared": True},
            {"uuid": other, "name": "other", "card": "keeper1 87", "as_declared": False},
            {"uuid": operators, "name": "operators", "card": "keeper1 88", "as_declared": True}]
    before = dict((u, (placement.inventories(u), placement.traits(u))) for u in uuids.values())
    check = _drain(placement, lift, state="lifted", check=True)
    assert check["changed"] and check["lifted"] == ["ours"]
    assert dict((u, (placement.inventories(u), placement.traits(u))) for u in uuids.values()) == before, \
        "check mode wrote"

    done = _drain(placement, lift, state="lifted")
    assert done["changed"] and done["lifted"] == ["ours"], done
    assert [p["action"] for p in done["providers"]] == ["lifted", "left", "left"]
    assert "left by an earlier run that did not end" in done["providers"][0]["reason"]
    assert "not as declared" in done["providers"][1]["reason"]
    assert "(an operator's drain): left so" in done["providers"][2]["reason"]
    assert not _drained(placement, ours) and DRAIN_TRAIT not in placement.traits(ours)
    assert "CUSTOM_FUNCTION_GZIP" in placement.traits(ours), "the lift took another trait away"
    assert _drained(placement, other) and DRAIN_TRAIT in placement.traits(other)
    assert _drained(placement, operators), "the operator's drain was lifted"

    rerun = _drain(placement, lift, state="lifted")
    assert not rerun["changed"] and [p["action"] for p in rerun["providers"]] == ["unchanged", "left", "left"]

    # a release (the keeper's own, at the end of a run that was not killed) takes the mark away with the drain
    rel = _drain(placement, [{"uuid": other, "name": "other"}], state="released")
    assert rel["changed"] and not _drained(placement, other) and DRAIN_TRAIT not in placement.traits(other)
    figures["killed keeper runs"] = {"keeper drains left by the killed run": 2, "lifted (card as declared)": 1,
                                     "left (card not as declared)": 1, "operator drains kept": 1,
                                     "drains left by the killed run after a lift and the release": 0,
                                     "seconds": round(time.monotonic() - t0, 1)}
