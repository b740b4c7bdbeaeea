# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Ironic engine's pure logic: ownership, validation, discovery and declaration to traits and
properties.accelerators, the plan and its 50-trait limit, and the client's handling of a locked node (against a
scripted HTTP adapter; the real Ironic runs in tests/integration/targets/baremetal_node_accelerators)."""

from __future__ import annotations

import json

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils import _ironic as I  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

SHA = "ab" * 32
GZIP_AFU = "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"   # what the fpga-opae card of lab-all carries
OTHER_AFU = "11111111-2222-3333-4444-555555555555"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("ironic") / "lab-all")
    accelsim.render_tree("lab-all", root)
    return discover(Sysfs(root=root))


def fpga(name, afu, **match):
    return {"name": name, "match": match or {"family": "fpga", "vendor_id": "8086"},
            "fpga": {"bitstream": "/srv/%s.gbs" % name, "sha256": SHA, "function_id": afu}}


# ------------------------------------------------------------------------------------------------ ownership

@pytest.mark.parametrize("trait,owned", [
    ("CUSTOM_FUNCTION_GZIP", True), ("CUSTOM_ACCELOPS_PREPARED", True), ("CUSTOM_ACCELERATOR_GPU", True),
    ("CUSTOM_FPGA_FUNCTION_ID_INTEL_ABC", True), ("CUSTOM_OWNER_ACCELOPS", True), ("CUSTOM_NUMA_NODE_1", True),
    ("CUSTOM_GOLD", False), ("HW_CPU_X86_AVX2", False), ("CUSTOM_FUNCTIONAL", False), ("CUSTOM_ACCELOPS", False),
])
def test_owned_namespaces(trait, owned):
    assert I.is_owned(trait) is owned


def test_trait_validation_names_the_option_and_form():
    assert I.check_traits(["CUSTOM_FUNCTION_B", "CUSTOM_FUNCTION_A", "CUSTOM_FUNCTION_A"]) == \
        ["CUSTOM_FUNCTION_A", "CUSTOM_FUNCTION_B"]
    with pytest.raises(I.IronicInputError, match=r"traits\[0\]: 'custom_function_x' is not a valid Ironic trait.*"
                                                 r"CUSTOM_FUNCTION_X"):
        I.check_traits(["custom_function_x"])
    with pytest.raises(I.IronicInputError, match="at most 255"):
        I.check_traits(["CUSTOM_FUNCTION_" + "A" * 250])
    with pytest.raises(I.IronicInputError, match=r"traits\[1\]: CUSTOM_GOLD is outside the namespaces.*"
                                                 r"CUSTOM_FUNCTION_\*.*baremetal_node"):
        I.check_traits(["CUSTOM_FUNCTION_A", "CUSTOM_GOLD"])
    with pytest.raises(I.IronicInputError, match="expected a list"):
        I.check_traits("CUSTOM_FUNCTION_A")
    with pytest.raises(I.IronicInputError, match="non-empty string"):
        I.check_traits([""])


# ----------------------------------------------------------------------------------------- accelerators form

def test_accelerators_in_ironic_inspection_form():
    out = I.check_accelerators([
        {"vendor_id": "0x10DE", "device_id": "1eb8", "type": "GPU", "pci_address": "3B:00.0",
         "device_info": "NVIDIA Corporation Tesla T4"},
        {"vendor_id": "8086", "device_id": "9c4", "type": "FPGA", "pci_address": "0000:1a:00.0"},
    ])
    assert out == [
        {"vendor_id": "8086", "device_id": "09c4", "type": "FPGA", "pci_address": "0000:1a:00.0", "device_info": ""},
        {"vendor_id": "10de", "device_id": "1eb8", "type": "GPU", "pci_address": "0000:3b:00.0",
         "device_info": "NVIDIA Corporation Tesla T4"},
    ]
    assert all(set(e) == set(I.ACCELERATOR_KEYS) for e in out)


@pytest.mark.parametrize("item,message", [
    ({"vendor_id": 8086, "device_id": "0b30", "type": "FPGA", "pci_address": "0000:1a:00.0"},
     r"accelerators\[0\].vendor_id: give PCI ids as quoted strings"),
    ({"vendor_id": "xyz", "device_id": "0b30", "type": "FPGA", "pci_address": "0000:1a:00.0"},
     r"accelerators\[0\].vendor_id: expected 4 hex digits"),
    ({"vendor_id": "8086", "device_id": "0b30", "type": "FPGA", "pci_address": "1a:00.9"},
     r"accelerators\[0\].pci_address: expected a PCI address"),
    ({"vendor_id": "8086", "device_id": "0b30", "pci_address": "0000:1a:00.0"}, r"accelerators\[0\].type: required"),
    ({"vendor_id": "8086", "device_id": "0b30", "type": "FPGA", "pci_address": "0000:1a:00.0", "slot": 1},
     r"unknown key\(s\) slot; Ironic's form has vendor_id, device_id, type, pci_address, device_info"),
    ("GPU", r"accelerators\[0\]: expected a mapping"),
])
def test_bad_accelerators_are_refused(item, message):
    with pytest.raises(I.IronicInputError, match=message):
        I.check_accelerators([item])


def test_duplicate_address_is_refused():
    a = {"vendor_id": "8086", "device_id": "0b30", "type": "FPGA", "pci_address": "0000:1a:00.0"}
    with pytest.raises(I.IronicInputError, match="listed twice"):
        I.check_accelerators([a, dict(a, pci_address="1a:00.0")])


# -------------------------------------------------------------------------------- from discovery of a lab host

def test_accelerators_from_lab_discovery(lab):
    acc = I.accelerators_from_discovery(lab)
    cards = [r for r in lab["accelerators"] if not r["physfn"] and r["family"] in ("gpu", "fpga", "qat")]
    assert [a["pci_address"] for a in acc] == sorted(r["address"] for r in cards)
    t4 = next(a for a in acc if a["pci_address"] == "0000:18:00.0")
    rec = next(r for r in lab["accelerators"] if r["address"] == "0000:18:00.0")
    assert t4["type"] == "GPU" and t4["vendor_id"] == "10de" and t4["device_id"] == rec["device_id"]
    assert t4["device_info"] == "%s %s" % (rec["vendor_name"], rec["device_name"])
    assert {a["type"] for a in acc} == {"GPU", "FPGA", "QAT"}
    # VFs are never listed; NICs only when asked for
    assert not any(a["pci_address"] in {r["address"] for r in lab["accelerators"] if r["physfn"]} for a in acc)
    with_nic = I.accelerators_from_discovery(lab, ["nic"])
    assert with_nic and {a["type"] for a in with_nic} == {"NIC"}
    with pytest.raises(I.IronicInputError, match="families: unknown family tpu; choose from gpu"):
        I.check_families(["gpu", "tpu"])


def test_hardware_traits_of_lab(lab):
    t = I.hardware_traits(lab)
    assert {"CUSTOM_ACCELERATOR_GPU", "CUSTOM_ACCELERATOR_FPGA", "CUSTOM_ACCELERATOR_QAT", "CUSTOM_VENDOR_10DE",
            "CUSTOM_PRODUCT_10DE_1EB8"} <= set(t)
    assert all(I.is_owned(x) for x in t)
    loaded = I.loaded_function_traits(lab)
    assert "CUSTOM_FUNCTION_GRID_T4_2Q" in loaded
    assert any(x.startswith("CUSTOM_FPGA_FUNCTION_ID_INTEL_") for x in loaded)


def test_function_traits_loaded_and_declared(lab):
    decl = [fpga("gzip", GZIP_AFU, family="fpga", vendor_id="8086", count=1),
            fpga("regex", OTHER_AFU, family="fpga", vendor_id="8086", count=1),
            {"name": "qat", "match": {"family": "qat"}, "passthrough": {}},
            fpga("nothere", OTHER_AFU, address="0000:01:00.0")]
    traits, detail, problems = I.function_traits(lab, decl, "loaded")
    # gzip is on a card now, regex only assigned (needs programming), qat is offered whole
    assert traits == ["CUSTOM_FUNCTION_GZIP", "CUSTOM_FUNCTION_QAT"]
    assert detail["gzip"]["carrying"] and not detail["gzip"]["pending"] and detail["gzip"]["on_node"]
    assert detail["regex"]["pending"] and not detail["regex"]["on_node"]
    assert any("nothere" in p and "0000:01:00.0" in p for p in problems)
    traits, detail, _problems = I.function_traits(lab, decl, "declared")
    assert "CUSTOM_FUNCTION_REGEX" in traits and detail["regex"]["on_node"]
    assert I.function_traits(lab, [], "loaded") == ([], {}, [])
    with pytest.raises(I.IronicInputError, match=r"^functions: accelerator_host_functions\[0\]"):
        I.function_traits(lab, [{"name": "x", "match": {}, "passthrough": {}}])
    with pytest.raises(I.IronicInputError, match="function_state: expected one of loaded, declared"):
        I.function_traits(lab, decl, "programmed")


def test_discovery_must_be_accelerator_info_output():
    with pytest.raises(I.IronicInputError, match="discovery: expected the result of accelops.lifecycle.accelerator_info"):
        I.accelerators_from_discovery({"host": {}})


# ------------------------------------------------------------------------------------------------------ plan

ACC = [{"vendor_id": "10de", "device_id": "1eb8", "type": "GPU", "pci_address": "0000:3b:00.0", "device_info": "T4"}]


def test_plan_merges_with_foreign_traits_and_keeps_other_properties():
    p = I.plan("bm1", ["CUSTOM_GOLD", "HW_CPU_X86_AVX2", "CUSTOM_FUNCTION_OLD"], {"cpus": 8, "memory_mb": 1024},
               ["CUSTOM_FUNCTION_GZIP"], ACC)
    assert p["add"] == ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP"]
    assert p["remove"] == ["CUSTOM_FUNCTION_OLD"]
    assert p["foreign_traits"] == ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"]
    assert p["traits_after"] == ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP", "CUSTOM_GOLD", "HW_CPU_X86_AVX2"]
    # one JSON patch op on properties/accelerators: cpus and memory_mb are not touched
    assert p["properties_patch"] == [{"op": "add", "path": "/properties/accelerators", "value": ACC}]


def test_plan_is_empty_when_nothing_changes():
    p = I.plan("bm1", ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP", "CUSTOM_GOLD"], {"accelerators": ACC},
               ["CUSTOM_FUNCTION_GZIP"], ACC)
    assert p["add"] == [] and p["remove"] == [] and p["properties_patch"] == []
    # accelerators None: the property is left alone whatever it holds
    p = I.plan("bm1", ["CUSTOM_ACCELOPS_PREPARED"], {"accelerators": [{"x": 1}]}, [], None)
    assert p["properties_patch"] == [] and p["accelerators_after"] == [{"x": 1}]


def test_plan_absent_removes_owned_traits_and_the_property():
    p = I.plan("bm1", ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP", "CUSTOM_GOLD"], {"accelerators": ACC,
               "cpus": 4}, [], None, state="absent")
    assert p["add"] == [] and p["remove"] == ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP"]
    assert p["properties_patch"] == [{"op": "remove", "path": "/properties/accelerators"}]
    assert p["traits_after"] == ["CUSTOM_GOLD"]


def test_plan_within_50_traits_and_a_clear_failure_beyond():
    foreign = ["CUSTOM_F%02d" % i for i in range(47)]
    p = I.plan("bm1", foreign, {}, ["CUSTOM_FUNCTION_A", "CUSTOM_FUNCTION_B"], None)   # 47 + 2 + marker = 50
    assert len(p["traits_after"]) == 50
    with pytest.raises(I.IronicInputError) as e:
        I.plan("bm1", foreign + ["CUSTOM_FUNCTION_OLD"], {}, ["CUSTOM_FUNCTION_A", "CUSTOM_FUNCTION_B",
                                                              "CUSTOM_FUNCTION_C"], None)
    msg = str(e.value)
    assert "node bm1 would carry 51 traits; Ironic allows 50 per node: 47 it has that this module does not manage" in msg
    assert "CUSTOM_F00" in msg and "plus the 4 it wants" in msg and "CUSTOM_FUNCTION_C" in msg
    # stale owned traits do not count: they are removed first
    assert "CUSTOM_FUNCTION_OLD" not in msg


# ---------------------------------------------------------------------------------------- client and converge

class Resp(object):
    def __init__(self, status, body=None):
        self.status_code = status
        self.text = "" if body is None else json.dumps(body)


def fault(msg):
    return {"error_message": json.dumps({"faultstring": msg, "debuginfo": None})}


class ScriptedIronic(object):
    """Answers like Ironic's API for one node; ``locked`` refuses that many writes with NodeLocked."""

    def __init__(self, traits, properties, locked=0):
        self.node = {"uuid": "u-1", "name": "bm1", "traits": list(traits), "properties": dict(properties),
                     "provision_state": "available", "maintenance": False}
        self.locked = locked
        self.calls = []

    def request(self, path, method, **kw):
        assert kw["microversion"] == I.MICROVERSION and kw["raise_exc"] is False
        assert kw["retriable_status_codes"] == [] and kw["status_code_retries"] == 0
        self.calls.append((method, path))
        if method == "GET":
            if path in ("/nodes/bm1", "/nodes/u-1"):
                return Resp(200, self.node)
            return Resp(404, fault("Node %s could not be found." % path.rsplit("/", 1)[1]))
        if self.locked:
            self.locked -= 1
            return Resp(409, fault("Node u-1 is locked by host other-conductor, please retry after the current "
                                   "operation is completed."))
        if method == "PUT":
            self.node["traits"].append(path.rsplit("/", 1)[1])
            return Resp(204)
        if method == "DELETE":
            t = path.rsplit("/", 1)[1]
            if t not in self.node["traits"]:
                return Resp(404, fault("trait gone"))
            self.node["traits"].remove(t)
            return Resp(204)
        if method == "PATCH":
            for op in kw["json"]:
                if op["op"] == "add":
                    self.node["properties"]["accelerators"] = op["value"]
                else:
                    self.node["properties"].pop("accelerators")
            return Resp(200, self.node)
        raise AssertionError(method)


def test_converge_writes_removals_first_then_additions_then_properties():
    api = ScriptedIronic(["CUSTOM_GOLD", "CUSTOM_FUNCTION_OLD"], {"cpus": 2})
    r = I.converge(I.Client(api), "bm1", ["CUSTOM_FUNCTION_GZIP"], ACC)
    assert r["changed"] and r["added"] == ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP"]
    assert [c[0] for c in api.calls] == ["GET", "DELETE", "PUT", "PUT", "PATCH"]
    assert sorted(api.node["traits"]) == r["traits"]
    assert api.node["properties"] == {"cpus": 2, "accelerators": ACC}
    assert r["requests"] == {"reads": 1, "writes": 4, "lock_retries": 0, "retried": 0}
    again = I.converge(I.Client(api), "u-1", ["CUSTOM_FUNCTION_GZIP"], ACC)
    assert not again["changed"] and again["requests"]["writes"] == 0


def test_check_mode_sends_no_write():
    api = ScriptedIronic(["CUSTOM_GOLD"], {})
    r = I.converge(I.Client(api), "bm1", ["CUSTOM_FUNCTION_GZIP"], ACC, check_mode=True)
    assert r["changed"] and r["traits"] == ["CUSTOM_ACCELOPS_PREPARED", "CUSTOM_FUNCTION_GZIP", "CUSTOM_GOLD"]
    assert api.calls == [("GET", "/nodes/bm1")] and api.node["traits"] == ["CUSTOM_GOLD"]


def test_a_trait_removed_meanwhile_is_fine():
    """Another writer removes the stale trait between our read and our DELETE: the 404 means the goal is met."""
    api = ScriptedIronic(["CUSTOM_FUNCTION_OLD"], {})
    orig = api.request

    def request(path, method, **kw):
        resp = orig(path, method, **kw)
        if method == "GET":
            api.node["traits"] = []
        return resp
    api.request = request
    r = I.converge(I.Client(api), "bm1", [], None)
    assert r["removed"] == ["CUSTOM_FUNCTION_OLD"] and api.node["traits"] == ["CUSTOM_ACCELOPS_PREPARED"]
    assert ("DELETE", "/nodes/u-1/traits/CUSTOM_FUNCTION_OLD") in api.calls


def test_locked_node_is_retried_then_reported():
    slept = []
    api = ScriptedIronic([], {}, locked=2)
    r = I.converge(I.Client(api, lock_retries=3, lock_delay=0.5, sleep=slept.append), "bm1", [], None)
    assert r["changed"] and slept == [0.5, 0.5] and r["requests"]["lock_retries"] == 2
    api = ScriptedIronic([], {}, locked=10)
    with pytest.raises(I.IronicInputError) as e:
        I.converge(I.Client(api, lock_retries=1, lock_delay=0, sleep=slept.append), "bm1", [], None)
    assert "node bm1 is locked by a conductor (Node u-1 is locked by host other-conductor" in str(e.value)
    assert "after 1 retries" in str(e.value) and "lock_retries" in str(e.value)


def test_unknown_node_and_other_errors():
    api = ScriptedIronic([], {})
    with pytest.raises(I.IronicInputError, match="node: no Ironic node named or with uuid 'bm2'"):
        I.converge(I.Client(api), "bm2", [], None)

    class Broken(ScriptedIronic):
        def request(self, path, method, **kw):
            if method == "GET":
                return ScriptedIronic.request(self, path, method, **kw)
            return Resp(400, fault("Could not modify traits for node 1 as it would exceed the maximum"))
    with pytest.raises(I.IronicHTTPError) as e:
        I.converge(I.Client(Broken([], {})), "bm1", [], None)
    assert e.value.status == 400 and "exceed the maximum" in str(e.value) and not e.value.locked


class _Status(object):
    """Answers every request with one status (a stand-in for Ironic behind Keystone, which the standalone
    harness Ironic cannot be: it runs noauth, so the real 401/403 cannot be produced there)."""

    def __init__(self, status, body=None, after=None):
        self.status, self.body, self.after, self.calls = status, body, after, []

    def request(self, path, method, **kw):
        self.calls.append((method, path))
        if self.after is not None and len(self.calls) > self.after:
            return Resp(200, {"uuid": "u-1", "name": "bm1", "traits": [], "properties": {}})
        return Resp(self.status, self.body)


@pytest.mark.parametrize("status, said, todo", [(403, "permission denied", "admin role"),
                                                (401, "authentication failed", "check auth")])
def test_forbidden_and_unauthorized_say_so_name_ironic_and_the_operation(status, said, todo):
    api = _Status(status, fault("Access was denied to this resource."))
    with pytest.raises(I.IronicHTTPError) as e:
        I.converge(I.Client(api, sleep=lambda s: None), "bm1", ["CUSTOM_FUNCTION_GZIP"], None)
    m = str(e.value)
    assert "read node bm1" in m and "HTTP %d" % status in m and said in m and todo in m and "Ironic" in m
    assert len(api.calls) == 1   # not retried


def test_no_answer_and_5xx_are_retried_within_bounds_then_fail_clearly():
    from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import ServiceUnavailable
    pauses = []
    api = _Status(503, fault("busy"))
    with pytest.raises(ServiceUnavailable) as e:
        I.converge(I.Client(api, sleep=pauses.append, retries=3, retry_delay=0.5), "bm1", [], None)
    m = str(e.value)
    assert m.startswith("Ironic: read node bm1 failed: GET /nodes/bm1: HTTP 503: busy (4 attempts, 3.5 s")
    assert "run again" in m and pauses == [0.5, 1.0, 2.0] and len(api.calls) == 4
    api = _Status(503, fault("busy"), after=2)   # answers after two 503s
    assert I.converge(I.Client(api, sleep=pauses.append), "bm1", [], None, check_mode=True)["changed"]


def test_a_pci_address_is_read_as_the_declaration_and_discovery_read_it():
    # one normaliser (_vocab.pci_address): a slot above 0x1f is no PCI address; a short slot or bus is
    assert I.normalize_pci_address("3b:0.0", "accelerators[0].pci_address") == "0000:3b:00.0"
    with pytest.raises(I.IronicInputError, match=r"accelerators\[0\].pci_address: expected a PCI address"):
        I.normalize_pci_address("0000:3b:20.0", "accelerators[0].pci_address")
