# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal_node_accelerators as a module: option checks before any request, what it computes from a lab
host's discovery and the declaration, check and diff mode, warnings. The SDK connection is replaced by a scripted
Ironic (the module's own code runs unchanged); the real Ironic is in the integration targets."""

from __future__ import annotations

import json
import re

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=import-error

from ansible_collections.accelops.lifecycle.plugins.module_utils import _openstack  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.modules import baremetal_node_accelerators as M  # noqa: E402

SHA = "ab" * 32
GZIP_AFU = "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"   # what the fpga-opae card of lab-all carries


class Resp(object):
    def __init__(self, status, body=None):
        self.status_code = status
        self.text = "" if body is None else json.dumps(body)


class ScriptedIronic(object):
    """One node, answering GET / PUT / DELETE trait / PATCH as Ironic does."""

    def __init__(self, traits=(), properties=None):
        self.node = {"uuid": "u-1", "name": "bm1", "traits": list(traits), "properties": dict(properties or {}),
                     "provision_state": "available", "maintenance": False}
        self.writes = []

    def request(self, path, method, **kw):
        if method == "GET":
            return Resp(200, self.node)
        self.writes.append((method, path))
        if method == "PUT":
            self.node["traits"].append(path.rsplit("/", 1)[1])
            return Resp(204)
        if method == "DELETE":
            self.node["traits"].remove(path.rsplit("/", 1)[1])
            return Resp(204)
        for op in kw["json"]:
            if op["op"] == "add":
                self.node["properties"]["accelerators"] = op["value"]
            else:
                self.node["properties"].pop("accelerators", None)
        return Resp(200, self.node)


class FakeConn(object):
    def __init__(self, ironic):
        self.baremetal = ironic


@pytest.fixture
def ironic(monkeypatch):
    patch_exits(monkeypatch)
    api = ScriptedIronic(["CUSTOM_GOLD"], {"cpus": 16})
    monkeypatch.setattr(_openstack.OpenStackModule, "conn", property(lambda self: FakeConn(api)))
    return api


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("bm") / "lab-all")
    accelsim.render_tree("lab-all", root)
    return discover(Sysfs(root=root))


def run(args, **kw):
    return run_module(M.main, dict({"node": "bm1"}, **args), **kw)


@pytest.mark.parametrize("args,message", [
    ({"traits": ["CUSTOM_GOLD"]}, r"^traits\[0\]: CUSTOM_GOLD is outside the namespaces"),
    ({"traits": ["function_x"]}, r"^traits\[0\]: 'function_x' is not a valid Ironic trait"),
    ({"functions": [{"name": "x", "match": {"family": "qat"}, "passthrough": {}}]}, r"^functions: needs discovery"),
    ({"accelerators": [{"vendor_id": "8086"}]}, r"^accelerators\[0\].device_id: required"),
    ({"discovery": {"nothing": 1}}, r"^discovery: expected the result of accelops.lifecycle.accelerator_info"),
    ({"lock_retries": -1}, r"^lock_retries and lock_delay: must be 0 or more"),
])
def test_bad_input_fails_naming_the_option_before_any_write(ironic, args, message):
    r = run(args)
    assert r.kind == "fail" and r.result["msg"] and re.search(message, r.result["msg"]), r.result
    assert ironic.writes == []


def test_families_choices_are_checked_by_the_argument_spec(ironic):
    r = run({"families": ["tpu"]})
    assert r.kind == "fail" and "families" in r.result["msg"] and "tpu" in r.result["msg"]


def test_from_lab_discovery_and_declaration_check_then_real_then_again(ironic, lab):
    decl = [{"name": "gzip", "match": {"family": "fpga", "vendor_id": "8086", "count": 1},
             "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": SHA, "function_id": GZIP_AFU}},
            {"name": "crypto", "match": {"address": "0000:01:00.0"}, "passthrough": {}}]
    args = {"discovery": lab, "functions": decl}
    check = run(args, check=True, diff=True)
    assert check.kind == "exit" and check.result["changed"] and ironic.writes == []
    r = check.result
    assert "CUSTOM_FUNCTION_GZIP" in r["traits"] and "CUSTOM_ACCELOPS_PREPARED" in r["traits"]
    assert "CUSTOM_GOLD" in r["traits"] and r["foreign_traits"] == ["CUSTOM_GOLD"]
    assert "CUSTOM_FUNCTION_CRYPTO" not in r["traits"]
    assert any("crypto" in p for p in r["problems"]) and r["functions"]["gzip"]["on_node"]
    assert r["diff"]["before"]["traits"] == ["CUSTOM_GOLD"] and r["diff"]["after"]["traits"] == r["traits"]
    assert [a["type"] for a in r["accelerators"]].count("GPU") >= 2
    real = run(args)
    assert real.result["changed"] and "diff" not in real.result
    assert sorted(ironic.node["traits"]) == r["traits"]
    assert ironic.node["properties"]["cpus"] == 16 and ironic.node["properties"]["accelerators"] == r["accelerators"]
    again = run(args)
    assert not again.result["changed"] and again.result["requests"]["writes"] == 0


def test_hardware_traits_off_and_explicit_accelerators(ironic, lab):
    acc = [{"vendor_id": "8086", "device_id": "0b30", "type": "FPGA", "pci_address": "86:00.0"}]
    r = run({"discovery": lab, "hardware_traits": False, "accelerators": acc}).result
    assert r["owned_traits"] == ["CUSTOM_ACCELOPS_PREPARED"]
    assert r["accelerators"] == [{"vendor_id": "8086", "device_id": "0b30", "type": "FPGA",
                                  "pci_address": "0000:86:00.0", "device_info": ""}]


def test_absent(ironic):
    run({"traits": ["CUSTOM_FUNCTION_GZIP"], "accelerators": []})
    r = run({"state": "absent"}, diff=True).result
    assert r["changed"] and r["removed"] == ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP"]
    assert ironic.node["traits"] == ["CUSTOM_GOLD"] and ironic.node["properties"] == {"cpus": 16}
    assert r["diff"]["before"]["accelerators"] == [] and r["diff"]["after"]["accelerators"] is None
