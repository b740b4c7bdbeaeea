# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The readers of a card's state agree: a matrix of cards (in use by a VM, by a process, through a VF, through a MIG
instance, allocated in Placement, held by this collection's drain, reserved, drained by an operator, free, declared
but not carrying it yet, as declared) through the converge (the host's plan and the batch's Placement step), the pool
keeper, the provisioner, the fleet report and Ironic's function traits, each checked against the one decision
(_cardstate.card_state) and against what the card is."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import build as fleet_report
from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate, _converge, _ironic, _pools, _provision
from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration as D
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import card_addresses, placement_evidence

HOST = "cn1"
GZIP = "11112222333344445555666677778888"
GZIP_TRAIT = "CUSTOM_FUNCTION_GZIP"
VM = [{"kind": "domain", "name": "instance-1"}]
PROC = [{"kind": "process", "name": "qemu", "evidence": "/proc/7/fd/3 -> /dev/vfio/20"}]
MIG_HOLDER = [{"kind": "process", "evidence": "/dev/nvidia-caps/nvidia-cap21"}]

# address: (what it is, in use?, held back in Placement (drained or held)?, declared for gzip?)
MATRIX = {
    "0000:0a:00.0": ("vm", True, False, True),
    "0000:0b:00.0": ("process", True, False, True),
    "0000:0c:00.0": ("vf in use", True, False, True),
    "0000:0d:00.0": ("mig instance in use", True, False, False),
    "0000:0e:00.0": ("allocated (Nova's provider name)", True, False, True),
    "0000:0f:00.0": ("held by the drain", False, True, True),
    "0000:1a:00.0": ("reserved", False, False, True),
    "0000:1b:00.0": ("drained by an operator", False, True, True),
    "0000:1c:00.0": ("free", False, False, False),
    "0000:1d:00.0": ("drift: declared, carries nothing", False, False, True),
    "0000:1e:00.0": ("as declared", False, False, True),
}


def _fpga(address, loaded=None, holders=None):
    return {"address": address, "family": "fpga", "vendor_id": "8086", "device_id": "0b30", "physfn": None,
            "function": {"id": loaded} if loaded else None,
            "units": [{"kind": "device", "id": address, "in_use": bool(holders), "in_use_by": holders or []}]}


def _provider(name, address, traits=(), total=1, reserved=0, used=0, consumers=None, in_use=False, drained=False,
              held=None):
    return {"name": name, "uuid": "uuid-" + address, "root_provider_uuid": "uuid-root", "host": HOST,
            "owner": "accelops", "traits": ["CUSTOM_OWNER_ACCELOPS"] + list(traits),
            "inventories": {"FPGA": {"total": total, "reserved": reserved}}, "usages": {"FPGA": used},
            "allocations": dict((c, {"resources": {"FPGA": 1}}) for c in consumers or []),
            "in_use": in_use, "drained": drained, "held": held}


def _lab():
    a = sorted(MATRIX)
    recs = [
        _fpga(a[0], holders=VM),
        _fpga(a[1], holders=PROC),
        dict(_fpga(a[2]), sriov={"vfs": ["0000:0c:00.1"]}),
        {"address": "0000:0c:00.1", "family": "fpga", "physfn": a[2], "vendor_id": "8086", "device_id": "0b32",
         "units": [{"kind": "vf", "id": "0000:0c:00.1", "in_use": True, "in_use_by": VM}]},
        {"address": a[3], "family": "gpu", "vendor_id": "10de", "device_id": "20b0", "handler": "nvidia",
         "physfn": None, "function": None, "units": [{"kind": "device", "id": a[3], "in_use": False}],
         "gpu": {"mdev_types": [], "mig": {"gpu_instances": [{"id": 1, "name": "3g.40gb", "in_use_by": MIG_HOLDER}]}}},
    ] + [_fpga(x) for x in a[4:10]] + [_fpga(a[10], loaded=GZIP)]
    providers = [
        _provider("cn1_accelops_%s" % a[0], a[0]),
        _provider("cn1_accelops_%s" % a[1], a[1]),
        _provider("cn1_accelops_%s" % a[2], a[2]),
        # Nova names a PF's provider with the address in upper case
        _provider("cn1_%s" % a[4].upper(), a[4], used=1, consumers=["c-1"], in_use=True),
        # this collection's drain hold: allocated, drained, not use
        _provider("cn1_accelops_%s" % a[5], a[5], used=1, consumers=["hold-1"], drained=True, held={"FPGA": 1}),
        _provider("cn1_accelops_%s" % a[6], a[6], total=2, reserved=1),
        _provider("cn1_accelops_%s" % a[7], a[7], reserved=1, drained=True),
        _provider("cn1_accelops_%s" % a[8], a[8]),
        # the provider has the declared function's trait already, the card does not carry it
        _provider("cn1_accelops_%s" % a[9], a[9], traits=[GZIP_TRAIT]),
        _provider("cn1_accelops_%s" % a[10], a[10], traits=[GZIP_TRAIT]),
    ]
    declared = [x for x in a if MATRIX[x][3]]
    functions = [{"name": "gzip", "match": {"address": declared},
                  "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": "a" * 64, "function_id": GZIP}}]
    return {"accelerators": recs}, providers, functions


def _expected_in_use():
    return sorted(x for x, row in MATRIX.items() if row[1])


def _expected_held_back():
    return sorted(x for x, row in MATRIX.items() if row[2])


def test_the_one_decision_says_what_each_card_is():
    discovery, providers, _functions = _lab()
    cards, by_addr = _cardstate.cards(_cardstate.records(discovery))
    states = dict((c["address"], _cardstate.card_state(c, by_addr, providers, HOST)) for c in cards)
    assert sorted(states) == sorted(MATRIX)
    assert sorted(a for a, s in states.items() if s["in_use"]) == _expected_in_use()
    assert sorted(a for a, s in states.items() if s["held"] or s["drained"]) == _expected_held_back()
    assert [states[a]["state"] for a in sorted(MATRIX)] == [
        "in use", "in use", "in use", "in use", "allocated", "held", "reserved", "drained", "free", "free", "free"]


def test_the_converge_blocks_exactly_the_declared_cards_to_change_in_use():
    discovery, providers, functions = _lab()
    cards = _converge.card_records(D.resolve(functions, discovery), {}, True)
    # the batch adds Placement's evidence after the host's plan
    cards = [_cardstate.with_placement(c, placement_evidence(providers, HOST, c["address"]), True) for c in cards]
    status = dict((c["address"], c["status"]) for c in cards)
    declared_in_use = [x for x in _expected_in_use() if MATRIX[x][3]]
    assert sorted(a for a, s in status.items() if s == "blocked") == declared_in_use
    assert status["0000:1e:00.0"] == "ok"
    assert sorted(a for a, s in status.items() if s == "todo") == [
        "0000:0f:00.0", "0000:1a:00.0", "0000:1b:00.0", "0000:1d:00.0"]


def test_the_pool_keeper_sees_the_same_use_and_drains():
    discovery, providers, functions = _lab()
    entries = D.validate(functions)
    cards = _pools._cards({HOST: {"placement_host": HOST, "discovery": discovery}}, providers, entries)  # pylint: disable=protected-access
    assert sorted(c.address for c in cards if c.busy) == _expected_in_use()
    assert sorted(c.address for c in cards if c.drained) == _expected_held_back()


def test_the_provisioner_refuses_exactly_the_cards_in_use_or_held_back():
    discovery, providers, _functions = _lab()
    fn = {"kind": "fpga", "id": GZIP, "trait": GZIP_TRAIT}
    refused = dict((rec["address"], why) for _cat, _h, rec, _o, why in _provision.cards({HOST: discovery}, fn, providers))
    fpga_cards = [x for x in MATRIX if x != "0000:0d:00.0"]
    assert sorted(refused) == sorted(fpga_cards)
    assert sorted(a for a, why in refused.items() if why) == sorted(
        x for x in _expected_in_use() + _expected_held_back() if x in fpga_cards)
    assert refused["0000:0c:00.0"] == "vf 0000:0c:00.1 is in use (domain instance-1)"


def test_the_provisioner_sees_a_mig_instance_in_use():
    discovery, providers, _functions = _lab()
    mig = next(r for r in discovery["accelerators"] if r["address"] == "0000:0d:00.0")
    mig["gpu"]["mdev_types"] = [{"id": "nvidia-231"}]
    fn = {"kind": "vgpu", "id": "nvidia-231", "trait": "CUSTOM_FUNCTION_GRID"}
    (row,) = _provision.cards({HOST: discovery}, fn, providers)
    assert row[4] == "in use: mig gpu instance 1 (3g.40gb): process /dev/nvidia-caps/nvidia-cap21"


def test_the_fleet_report_agrees_and_counts_no_drift_as_free():
    discovery, providers, functions = _lab()
    report = fleet_report({"hosts": [{"name": HOST, "discovery": discovery, "functions": functions}],
                           "providers": providers})
    (host,) = report["hosts"]
    cards = dict((c["address"], c) for c in host["cards"])
    assert sorted(cards) == sorted(MATRIX)
    assert sorted(a for a, c in cards.items() if c["in_use"]) == _expected_in_use()
    assert sorted(a for a, c in cards.items() if c["drained"]) == _expected_held_back()
    declared_in_use = [x for x in _expected_in_use() if MATRIX[x][3]]
    assert sorted(a for a, c in cards.items() if c["status"] == "blocked") == declared_in_use
    assert cards["0000:1e:00.0"]["status"] == "as declared"
    assert cards["0000:1d:00.0"]["status"] == "to change"
    gzip = next(r for r in report["functions"] if r["function"] == "gzip")
    # the card that carries gzip gives its free unit; the one that does not carry it yet is not free capacity
    assert (gzip["total"], gzip["free"], gzip["not_loaded"]) == (2, 1, 1)


def test_ironic_counts_only_the_card_that_carries_the_function():
    discovery, _providers, functions = _lab()
    _traits, detail, _problems = _ironic.function_traits(discovery, functions)
    assert detail["gzip"]["carrying"] == ["0000:1e:00.0"]
    assert sorted(detail["gzip"]["pending"]) == sorted(x for x in MATRIX if MATRIX[x][3] and x != "0000:1e:00.0")


@pytest.mark.parametrize("address", sorted(MATRIX))
def test_every_reader_of_one_card_agrees_with_the_decision(address):
    discovery, providers, functions = _lab()
    cards, by_addr = _cardstate.cards(_cardstate.records(discovery))
    card = by_addr[address]
    st = _cardstate.card_state(card, by_addr, providers, HOST)
    _what, in_use, held_back, _declared = MATRIX[address]
    assert st["in_use"] is in_use
    assert bool(st["held"] or st["drained"]) is held_back
    assert address in card_addresses(card, by_addr)
