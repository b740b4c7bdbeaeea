# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The spot workflow's choice: which card for an unsatisfiable profile, in the preferred-traits order, and why;
and the provision_plan action that runs it on the controller."""

from __future__ import annotations

import re

import pytest

from ansible_collections.accelops.lifecycle.plugins.action.provision_plan import ActionModule
from ansible_collections.accelops.lifecycle.plugins.module_utils import _provision as V
from ansible_collections.accelops.lifecycle.tests.unit.plugins.action.controller_run import refused_type, run_action

GZIP_ID = "11112222-3333-4444-5555-666677778888"
LZ4_ID = "aaaabbbb-cccc-dddd-eeee-ffff00001111"
FUNCTIONS = {
    "gzip": {"bitstream": "/srv/gzip.gbs", "sha256": "a" * 64, "function_id": GZIP_ID.replace("-", "")},
    "grid-2q": {"vgpu_type": "nvidia-231"},
}
GZIP_PROFILE = {"name": "gzip", "groups": [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required"}]}


def fpga(address, loaded=None, in_use=False):
    return {"address": address, "family": "fpga", "physfn": None,
            "function": {"id": loaded} if loaded else None,
            "units": [{"kind": "device", "id": address, "in_use": in_use,
                       "in_use_by": [{"kind": "domain", "name": "instance-1"}] if in_use else []}]}


def gpu(address, types=("nvidia-231", "nvidia-232"), loaded=None):
    return {"address": address, "family": "gpu", "physfn": None, "function": {"id": loaded} if loaded else None,
            "gpu": {"mdev_types": [{"id": t} for t in types]}, "units": [{"kind": "device", "id": address}]}


def hosts(**kw):
    return dict((h, {"accelerators": recs}) for h, recs in kw.items())


def test_a_card_that_carries_the_function_first():
    h = hosts(cn1=[fpga("0000:5e:00.0")], cn2=[fpga("0000:5e:00.0", loaded=GZIP_ID)])
    p = V.plan([GZIP_PROFILE], FUNCTIONS, h)
    (a,) = p["actions"]
    assert (a["host"], a["change"]) == ("cn2", "publish")
    assert "already carries gzip: no reprogramming" in a["reason"]
    assert p["unplaceable"] == []
    others = [c for c in p["considered"] if not c["chosen"]]
    assert others == [{"profile": "gzip", "function": "gzip", "host": "cn1", "address": "0000:5e:00.0",
                       "chosen": False, "reason": "a better card was chosen (empty)"}]


def test_then_an_empty_card_then_a_reload_on_the_host_with_fewest_changes():
    h = hosts(cn1=[fpga("0000:5e:00.0", loaded=LZ4_ID)], cn2=[fpga("0000:5e:00.0")])
    (a,) = V.plan([GZIP_PROFILE], FUNCTIONS, h)["actions"]
    assert (a["host"], a["change"]) == ("cn2", "load") and "nothing loaded" in a["reason"]
    assert a["bitstream"] == "/srv/gzip.gbs" and a["sha256"] == "a" * 64
    # two profiles that both need a reload: the second goes to the host with fewer changes planned
    lz4 = {"name": "zz-gzip2", "groups": [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required"}]}
    h = hosts(cn1=[fpga("0000:5e:00.0", loaded=LZ4_ID), fpga("0000:5f:00.0", loaded=LZ4_ID)],
              cn2=[fpga("0000:5e:00.0", loaded=LZ4_ID)])
    first, second = V.plan([GZIP_PROFILE, lz4], FUNCTIONS, h)["actions"]
    assert (first["host"], first["change"]) == ("cn1", "reload")
    assert (second["host"], second["change"]) == ("cn2", "reload")
    assert "fewest changes planned (0)" in second["reason"] and "loaded with " + LZ4_ID in second["reason"]


def test_busy_and_allocated_cards_are_never_chosen():
    h = hosts(cn1=[fpga("0000:5e:00.0", loaded=GZIP_ID, in_use=True)], cn2=[fpga("0000:5e:00.0", loaded=GZIP_ID)],
              cn3=[fpga("0000:5e:00.0")])
    providers = [{"name": "cn2_0000:5e:00.0", "in_use": True}]
    p = V.plan([GZIP_PROFILE], FUNCTIONS, h, providers)
    (a,) = p["actions"]
    assert (a["host"], a["change"]) == ("cn3", "load")
    reasons = dict((c["host"], c["reason"]) for c in p["considered"] if not c["chosen"])
    assert "device 0000:5e:00.0 is in use (domain instance-1)" in reasons["cn1"]
    assert "Placement has allocations on cn2_0000:5e:00.0" in reasons["cn2"]
    h = hosts(cn1=[fpga("0000:5e:00.0", in_use=True)])
    p = V.plan([GZIP_PROFILE], FUNCTIONS, h)
    assert p["actions"] == [] and "1 card(s) for gzip; 0 free" in p["unplaceable"][0]["reason"]


def test_count_takes_that_many_cards_and_a_card_serves_one_profile():
    two = {"name": "a-two", "groups": [{"resources:FPGA": "2", "trait:CUSTOM_FUNCTION_GZIP": "required"}]}
    h = hosts(cn1=[fpga("0000:5e:00.0"), fpga("0000:5f:00.0")])
    p = V.plan([two, GZIP_PROFILE], FUNCTIONS, h)
    assert [(a["profile"], a["address"]) for a in p["actions"]] == [("a-two", "0000:5e:00.0"), ("a-two", "0000:5f:00.0")]
    assert p["unplaceable"] == [{"profile": "gzip", "reason": "group 0 needs 1 card(s) for gzip; 0 free card(s) "
                                                              "can carry it"}]


def test_vgpu_profiles_choose_gpus_that_offer_the_type():
    prof = {"name": "vg", "groups": [{"resources:VGPU": "4", "trait:CUSTOM_FUNCTION_GRID_2Q": "required"}]}
    h = hosts(cn1=[gpu("0000:3b:00.0", types=("nvidia-100",))], cn2=[gpu("0000:3b:00.0"), fpga("0000:5e:00.0")])
    (a,) = V.plan([prof], FUNCTIONS, h)["actions"]
    assert (a["host"], a["kind"], a["vgpu_type"], a["change"]) == ("cn2", "vgpu", "nvidia-231", "load")


def test_profiles_that_ask_for_no_known_function():
    p = V.plan([{"name": "x", "groups": [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_ZSTD": "required"}]},
                {"name": "y", "groups": [{"resources:PGPU": "1"}]}], FUNCTIONS, hosts(cn1=[fpga("0000:5e:00.0")]))
    assert p["actions"] == []
    assert [u["reason"] for u in p["unplaceable"]] == [
        "group 0 asks for CUSTOM_FUNCTION_ZSTD, which the functions mapping does not say how to load",
        "group 0 asks for no function (no CUSTOM_FUNCTION_* trait): nothing to program"]


def test_function_names_in_every_spelling():
    p = V.plan([GZIP_PROFILE], FUNCTIONS, hosts(cn1=[fpga("0000:5e:00.0")]))
    assert p["function_names"] == {GZIP_ID.replace("-", ""): "gzip", GZIP_ID: "gzip"}
    assert p["hosts"] == ["cn1"]


@pytest.mark.parametrize("functions,match", [
    ({}, "expected a mapping of function name"),
    ({"gzip": "x"}, "functions.gzip: expected a mapping"),
    ({"gzip": {"bitstream": "/a"}}, "needs sha256 and function_id"),
    ({"gzip": {"colour": 1}}, "bitstream \\+ sha256 \\+ function_id"),
    ({"\u65e5\u672c": {"vgpu_type": "nvidia-231"}}, "the name gives no trait name"),
])
def test_bad_functions(functions, match):
    with pytest.raises(V.ProvisionInputError, match=match):
        V.plan([GZIP_PROFILE], functions, {})


# -- the action plugin ------------------------------------------------------------------------------------
FPGA_FUNCTIONS = {"gzip": {"bitstream": "/b.gbs", "sha256": "0" * 64, "function_id": "ab" * 16}}
ONE_HOST = {"cn1": {"accelerators": [{"address": "0000:5e:00.0", "family": "fpga", "function": None, "units": []}]}}


@pytest.mark.parametrize("check_mode", [False, True])
def test_the_action_plans_the_same_in_check_mode(check_mode):
    out = run_action(ActionModule, {"profiles": [GZIP_PROFILE], "functions": FPGA_FUNCTIONS, "hosts": ONE_HOST},
                     check_mode=check_mode)
    assert not out.get("failed") and out["changed"] is False
    assert [(a["host"], a["change"]) for a in out["plan"]["actions"]] == [("cn1", "load")]
    assert out["plan"] == V.plan([GZIP_PROFILE], FPGA_FUNCTIONS, ONE_HOST, [])


@pytest.mark.parametrize("args, msg", [
    # the argument spec: a missing option, an unknown one, a wrong type (each named)
    ({"profiles": [], "hosts": {}}, r"^missing required arguments: functions"),
    ({"profiles": [], "functions": FPGA_FUNCTIONS, "hosts": {}, "cloud": "x"},
     r"^Unsupported parameters for \(accelops\.lifecycle\.provision_plan\) module: cloud\. Supported parameters include: "),
    ({"profiles": [], "functions": ["gzip"], "hosts": {}}, r"^" + refused_type('functions', 'list')),
    ({"profiles": [], "functions": FPGA_FUNCTIONS, "hosts": ["cn1"]}, r"^" + refused_type('hosts', 'list')),
    ({"profiles": ["gzip"], "functions": FPGA_FUNCTIONS, "hosts": {}},
     r"^" + refused_type('profiles', 'str', elements=True)),
    ({"profiles": [], "functions": FPGA_FUNCTIONS, "hosts": {}, "providers": [1]},
     r"^" + refused_type('providers', 'int', elements=True)),
    # what the spec cannot say: the choice's own checks, naming the path
    ({"profiles": [], "functions": {}, "hosts": {}}, r"^functions: expected a mapping of function name"),
    ({"profiles": [], "functions": FPGA_FUNCTIONS, "hosts": {"cn1": {"accelerators": "x"}}},
     r"^hosts\.cn1\.accelerators: expected a list of accelerator_info records"),
    # found by the hostile-input sweep at 3x: a TypeError out of the provider's reading
    ({"profiles": [GZIP_PROFILE], "functions": FPGA_FUNCTIONS, "hosts": ONE_HOST,
      "providers": [{"name": "cn1_0000:5e:00.0", "allocations": [[1, 2], 3]}]},
     r"^providers\[0\]\.allocations: expected a mapping of consumer uuid to its allocation or null"),
    ({"profiles": [GZIP_PROFILE], "functions": FPGA_FUNCTIONS, "hosts": ONE_HOST,
      "providers": [{"name": "cn1_0000:5e:00.0", "usages": [1]}]},
     r"^providers\[0\]\.usages: expected a mapping of resource class to a count or null"),
])
def test_bad_arguments_fail_naming_the_option(args, msg):
    out = run_action(ActionModule, args)
    assert out["failed"] is True and "exception" not in out
    assert re.search(msg, out["msg"]), out["msg"]
