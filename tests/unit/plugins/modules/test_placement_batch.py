# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Batch reports (per-host function names, overrides, drain, undrain in one call) and keep_drained (a drain made
by someone else, before or during the run, is not undone), against a small in-memory Placement that checks
generations like the real one (the real service runs in the placement_provider_tree integration target and in
tests/reliability)."""

from __future__ import annotations

import copy
import importlib
import json
import re
import uuid

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _openstack
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_tree as tree_module

from modrunner import Exit, patch_exits, run_module  # noqa: E402  pylint: disable=import-error

AFU = "d8424dc4-a4a1-c3d4-3213-4b09c1d7f2a2"


class Resp(object):
    def __init__(self, status, body=None):
        self.status_code = status
        self.text = json.dumps(body) if body is not None else ""
        self.content = self.text.encode()

    def json(self):
        return json.loads(self.text)


def _conflict():
    return Resp(409, {"errors": [{"code": "placement.concurrent_update", "detail": "generation mismatch"}]})


class FakePlacement(object):
    """The requests placement_provider_tree sends, with generation checks on trait and inventory writes."""

    def __init__(self):
        self.rps = {}
        self.traits = set(["HW_CPU_X86_AVX", "OWNER_CYBORG", "OWNER_NOVA"])
        self.rcs = set(P.STANDARD_RESOURCE_CLASSES)
        self.sent = []

    def add(self, name, parent=None, traits=(), invs=None):
        u = str(uuid.uuid3(uuid.NAMESPACE_DNS, name)) if parent else str(uuid.uuid4())
        root = self.rps[parent]["root_provider_uuid"] if parent else u
        self.rps[u] = {"uuid": u, "name": name, "generation": 0, "parent_provider_uuid": parent,
                       "root_provider_uuid": root, "traits": sorted(traits), "inventories": invs or {}}
        return u

    def by_name(self, name):
        return next(p for p in self.rps.values() if p["name"] == name)

    def drain(self, name):
        """Another writer (an operator) drains a provider."""
        p = self.by_name(name)
        for inv in p["inventories"].values():
            inv["reserved"] = inv["total"]
        p["generation"] += 1

    @staticmethod
    def _listed(p):
        return dict((k, p[k]) for k in ("uuid", "name", "generation", "parent_provider_uuid", "root_provider_uuid"))

    def request(self, path, method, **kw):  # noqa: C901 - a router
        self.sent.append((method, path))
        body = kw.get("json")
        m = re.match(r"^/resource_providers(?:/([^/?]+))?(?:/(traits|inventories|usages|allocations))?(\?.*)?$", path)
        if path.startswith("/traits"):
            if method == "GET":
                want = path.split("in:", 1)[1].split(",") if "in:" in path else list(self.traits)
                return Resp(200, {"traits": [t for t in want if t in self.traits]})
            self.traits.add(path.rsplit("/", 1)[1])
            return Resp(201)
        if path.startswith("/resource_classes"):
            if method == "GET":
                return Resp(200, {"resource_classes": [{"name": n} for n in self.rcs]})
            self.rcs.add(path.rsplit("/", 1)[1])
            return Resp(201)
        u, sub = m.group(1), m.group(2)
        if u is None:
            if method == "POST":
                p = self.rps[self.add(body["name"], body["parent_provider_uuid"])]
                return Resp(200, self._listed(p))
            return Resp(200, {"resource_providers": [self._listed(p) for p in self.rps.values()]})
        p = self.rps.get(u)
        if p is None:
            return Resp(404, {"errors": [{"detail": "no such provider"}]})
        if sub is None:
            if method == "DELETE":
                del self.rps[u]
                return Resp(204)
            if method == "PUT":  # a rename keeps the uuid, the generation and everything on the provider
                p["name"] = body["name"]
            return Resp(200, self._listed(p))
        if sub in ("usages", "allocations"):
            return Resp(200, {sub: {}})
        if method == "GET":
            return Resp(200, {sub: copy.deepcopy(p[sub]), "resource_provider_generation": p["generation"]})
        if body["resource_provider_generation"] != p["generation"]:
            return _conflict()
        if sub == "traits":
            missing = [t for t in body["traits"] if t not in self.traits]
            assert not missing, missing
        p[sub] = sorted(body[sub]) if sub == "traits" else copy.deepcopy(body[sub])
        p["generation"] += 1
        return Resp(200, {sub: copy.deepcopy(p[sub]), "resource_provider_generation": p["generation"]})


def nic(numvfs):
    return {"address": "0000:d8:00.0", "family": "nic", "vendor_id": "8086", "device_id": "1572",
            "programming_model": "fixed", "sriov": {"numvfs": numvfs}}


def fpga(afu=AFU):
    return {"address": "0000:5e:00.0", "family": "fpga", "vendor_id": "8086", "device_id": "0b30",
            "programming_model": "single", "function": {"id": afu} if afu else None,
            "fpga": {"vendor": "intel", "regions": []}}


def spec(host, recs, **kw):
    return {"host": host, "root_provider": None, "providers": P.desired_providers(host, recs, **kw)}


def run(fake, hosts, check_mode=False, before_write=None):
    return P.converge(fake, hosts, {"conflict_retries": 5}, check_mode=check_mode, before_write=before_write)


def inv(fake, name, rc="SRIOV_NET_VF"):
    return fake.by_name(name)["inventories"][rc]


@pytest.fixture
def fake():
    f = FakePlacement()
    for h in ("cn1", "cn2", "cn3"):
        f.add(h)
    return f


def test_one_call_reports_each_host_with_its_own_names_overrides_and_drain(fake):
    hosts = [spec("cn1", [fpga()], function_names={AFU: "gzip"}),
             spec("cn2", [fpga()], function_names={AFU: "zstd"}, overrides={"0000:5e:00.0": {"traits": ["CUSTOM_GOLD"]}}),
             spec("cn3", [nic(4)], drain=["0000:d8:00.0"])]
    r = run(fake, hosts)
    assert r["summary"]["created"] == 3 and r["changed"]
    assert "CUSTOM_FUNCTION_GZIP" in fake.by_name("cn1_accelops_0000:5e:00.0")["traits"]
    t2 = fake.by_name("cn2_accelops_0000:5e:00.0")["traits"]
    assert "CUSTOM_FUNCTION_ZSTD" in t2 and "CUSTOM_GOLD" in t2 and "CUSTOM_FUNCTION_GZIP" not in t2
    assert inv(fake, "cn3_accelops_0000:d8:00.0")["reserved"] == 4
    assert [p["drained"] for p in r["providers"]] == [False, False, True]
    # each host's share, without the whole providers list
    assert sorted(r["by_host"]) == ["cn1", "cn2", "cn3"]
    assert r["by_host"]["cn1"] == {"summary": {"created": 1, "updated": 0, "unchanged": 0, "pruned": 0, "kept": 0,
                                               "foreign": 0, "awaiting": 0}, "drained": []}
    assert r["by_host"]["cn3"]["drained"] == [{"name": "cn3_accelops_0000:d8:00.0", "address": "0000:d8:00.0"}]
    # the same batch again: nothing to write, one request (the provider list) plus the detail reads
    writes = fake.sent[:]
    r = run(fake, hosts)
    assert not r["changed"] and r["requests"]["writes"] == 0
    assert all(m == "GET" for m, dummy in fake.sent[len(writes):])


def test_keep_drained_leaves_someone_elses_drain_and_undrain_releases(fake):
    run(fake, [spec("cn1", [nic(4)]), spec("cn2", [nic(4)])])
    fake.drain("cn1_accelops_0000:d8:00.0")
    fake.drain("cn2_accelops_0000:d8:00.0")
    # without keep_drained the report would restore reserved = 0 (the hazard keep_drained removes)
    r = run(fake, [spec("cn1", [nic(4)]), spec("cn2", [nic(4)])], check_mode=True)
    assert r["summary"]["updated"] == 2
    r = run(fake, [spec("cn1", [nic(4)], keep_drained=True),
                   spec("cn2", [nic(4)], keep_drained=True, undrain=["0000:d8:00.0"])])
    assert inv(fake, "cn1_accelops_0000:d8:00.0")["reserved"] == 4
    assert inv(fake, "cn2_accelops_0000:d8:00.0")["reserved"] == 0
    assert dict((p["host"], p["action"]) for p in r["providers"]) == {"cn1": "unchanged", "cn2": "updated"}
    # a change of total keeps the drain: 8 VFs now, all reserved
    r = run(fake, [spec("cn1", [nic(8)], keep_drained=True)])
    assert inv(fake, "cn1_accelops_0000:d8:00.0")["total"] == 8 and inv(fake, "cn1_accelops_0000:d8:00.0")["reserved"] == 8
    assert r["providers"][0]["drained"]


def test_drain_between_read_and_write_is_not_undone(fake):
    run(fake, [spec("cn1", [nic(4)]), spec("cn2", [nic(4)])])
    drained = []

    def operator(action, what):  # someone drains the provider right before this run's inventory write
        if what == "inventories" and action["name"] not in drained:
            drained.append(action["name"])
            fake.drain(action["name"])

    r = run(fake, [spec("cn1", [nic(8)], keep_drained=True), spec("cn2", [nic(8)])], before_write=operator)
    assert drained == ["cn1_accelops_0000:d8:00.0", "cn2_accelops_0000:d8:00.0"]
    assert r["requests"]["conflicts_resolved"] == 2
    assert inv(fake, "cn1_accelops_0000:d8:00.0")["total"] == 8 and inv(fake, "cn1_accelops_0000:d8:00.0")["reserved"] == 8
    # without keep_drained the write after the conflict restores reserved = 0: the drain is lost
    assert inv(fake, "cn2_accelops_0000:d8:00.0")["reserved"] == 0


def test_keep_drained_after_a_stale_read_reads_the_inventories_again(fake):
    run(fake, [spec("cn1", [nic(4)])])
    state = P.TreeState(P.Client(fake), None)
    listed = state.by_name["cn1_accelops_0000:d8:00.0"]
    traits, invs = state.details(listed)
    fake.drain("cn1_accelops_0000:d8:00.0")
    d = P.desired_providers("cn1", [nic(8)], keep_drained=True)[0]
    action = {"kind": "update", "name": d["name"], "uuid": d["uuid"], "listed": dict(listed, generation=-1),
              "before": {"traits": traits, "inventories": invs}, "desired": d, "traits": None,
              "inventories": d["inventories"]}
    P.Converger(state.client, state).apply(action)
    assert inv(fake, "cn1_accelops_0000:d8:00.0") == dict(inv(fake, "cn1_accelops_0000:d8:00.0"), total=8, reserved=8)


def test_drain_wins_over_undrain_and_flags_per_provider():
    (p,) = P.desired_providers("cn1", [nic(4)], drain=["all"], keep_drained=True, undrain=["0000:d8:00.0"])
    assert p["inventories"]["SRIOV_NET_VF"]["reserved"] == 4 and not p["keep_drained"]
    (p,) = P.desired_providers("cn1", [nic(4)], keep_drained=True, undrain=["cn1_accelops_0000:d8:00.1"])
    assert p["keep_drained"] and p["inventories"]["SRIOV_NET_VF"]["reserved"] == 0
    assert P.is_drained({"FPGA": {"total": 1, "reserved": 1}}) and not P.is_drained({})


def test_check_mode_plans_the_kept_drain_without_writing(fake):
    run(fake, [spec("cn1", [nic(4)])])
    fake.drain("cn1_accelops_0000:d8:00.0")
    n = len(fake.sent)
    r = run(fake, [spec("cn1", [nic(6)], keep_drained=True)], check_mode=True)
    assert all(m == "GET" for m, dummy in fake.sent[n:])
    (p,) = r["providers"]
    assert p["action"] == "updated" and p["inventories"]["SRIOV_NET_VF"]["reserved"] == 6 and p["drained"]
    assert r["diff"]["before"]["cn1_accelops_0000:d8:00.0"]["inventories"]["SRIOV_NET_VF"]["total"] == 4


ADDR = "0000:5e:00.0"


@pytest.mark.parametrize("value, match", [
    ({ADDR: {"colour": "red"}}, r"^hosts\[1\]\.overrides\[0000:5e:00\.0\]: unknown key\(s\) colour; accepted: resource_class"),
    ({ADDR: {"reserved": "x"}}, r"^hosts\[1\]\.overrides\[0000:5e:00\.0\]\.reserved: .*unable to convert to int"),
    ({ADDR: {"reserved": -1}}, r"^hosts\[1\]\.overrides\[0000:5e:00\.0\]\.reserved: must be a whole number of at "
                               r"least 0, got -1$"),
    ({ADDR: {"step_size": 0}}, r"\.step_size: must be a whole number of at least 1, got 0$"),
    ({ADDR: {"max_unit": True}}, r"\.max_unit: must be a whole number of at least 1, got True$"),
    ({ADDR: {"min_unit": 1.5}}, r"\.min_unit: .*unable to convert to int"),
    ({ADDR: {"min_unit": "1e99999999"}}, r"\.min_unit: must be a whole number, got '1e99999999' \(far too large\)$"),
    ({ADDR: {"reserved": float("inf")}}, r"\.reserved: must be a whole number, got inf \(not a finite number\)$"),
    ({ADDR: {"allocation_ratio": 0}}, r"\.allocation_ratio: must be a number more than 0, got 0\.0$"),
    ({ADDR: {"allocation_ratio": float("nan")}}, r"\.allocation_ratio: must be a number more than 0, got nan$"),
    ({ADDR: {"allocation_ratio": "lots"}}, r"\.allocation_ratio: .*unable to convert to float"),
    ({ADDR: {"resource_class": "fpga-big"}}, r"\.resource_class: 'fpga-big' is not a resource class .*CUSTOM_FPGA_BIG"),
    ({ADDR: {"traits": ["gold"]}}, r"\.traits: 'gold' is not a valid trait"),
    ({ADDR: {"traits": {"a": 1}}}, r"\.traits: .*unable to convert to list"),
    ({ADDR: "FPGA"}, r"^hosts\[1\]\.overrides\[0000:5e:00\.0\]: expected a dict with any of resource_class, reserved"),
])
def test_per_host_overrides_are_checked_and_named(value, match):
    with pytest.raises(P.PlacementInputError, match=match):
        tree_module._overrides(value, "hosts[1].overrides")


def test_overrides_are_converted_and_unset_keys_left_out():
    got = tree_module._overrides({ADDR: {"reserved": "2", "allocation_ratio": 1, "traits": ["CUSTOM_GOLD"],
                                         "max_unit": None}}, "overrides")
    assert got == {ADDR: {"reserved": 2, "allocation_ratio": 1.0, "traits": ["CUSTOM_GOLD"]}}


def test_per_host_function_names_are_checked_and_named():
    assert tree_module._function_names({AFU: "gzip"}, "hosts[0].function_names") == {AFU: "gzip"}
    with pytest.raises(P.PlacementInputError, match=r"^hosts\[0\]\.function_names\[%s\]: .* gives no usable trait" % AFU):
        tree_module._function_names({AFU: "\u65e5\u672c\u8a9e"}, "hosts[0].function_names")


DISCOVERY = {"host": {"hostname": "cn1"}, "accelerators": []}


@pytest.mark.parametrize("item, words", [
    # what the argument spec (hosts: options=) refuses, before the module reads anything
    ({"discovery": DISCOVERY, "overrides": [ADDR]}, ["overrides", "hosts", "dict"]),
    ({"discovery": DISCOVERY, "function_names": ["gzip"]}, ["function_names", "hosts", "dict"]),
    ({"discovery": DISCOVERY, "drain": {"a": 1}}, ["drain", "hosts", "list"]),
    ({"discovery": DISCOVERY, "colour": 1}, ["colour", "hosts", "discovery, drain, function_names"]),
    ({"host": "cn1"}, ["discovery", "hosts", "required"]),
    # and what the module's own checks refuse, naming the item
    ({"discovery": DISCOVERY, "overrides": {ADDR: {"colour": 1}}},
     ["hosts[0].overrides[0000:5e:00.0]: unknown key(s) colour"]),
    ({"discovery": DISCOVERY, "function_names": {AFU: "\u65e5"}}, ["hosts[0].function_names[%s]" % AFU]),
    ({"discovery": None}, ["hosts[0].discovery: expected the result of accelerator_info"]),
    ({"discovery": {"accelerators": []}}, ["hosts[0]: the discovery result names no host"]),
])
def test_hosts_items_are_checked_and_named(monkeypatch, item, words):
    patch_exits(monkeypatch)
    out = run_module(tree_module.main, {"hosts": [item], "cloud": "nowhere"})
    assert out.kind == "fail", out.result
    for w in words:
        assert w in out.result["msg"], out.result["msg"]


def test_a_hosts_item_takes_a_string_for_its_lists_as_the_module_wide_lists_do(monkeypatch):
    # drain: "a,b" was refused in a hosts item and accepted module-wide; the argument spec now treats both alike
    patch_exits(monkeypatch)
    seen = {}

    def stop(self):
        seen["hosts"] = self._validate()[0]
        raise Exit("exit", {})
    monkeypatch.setattr(tree_module.PlacementProviderTreeModule, "run", stop)
    out = run_module(tree_module.main, {"hosts": [{"discovery": [nic(4)], "host": "cn1", "drain": "0000:d8:00.0"}],
                                        "drain": "x,y", "cloud": "nowhere"})
    assert out.kind == "exit"
    (p,) = seen["hosts"][0]["providers"]
    assert p["inventories"]["SRIOV_NET_VF"]["reserved"] == 4


MODULE_BASE = {
    "placement_provider_tree": {"discovery": DISCOVERY},
    "placement_provider_info": {},
    "placement_provider_drain": {"providers": [{"uuid": "2f1e0a4c-5b6d-4e7f-8a9b-0c1d2e3f4a5b"}]},
    "placement_aggregate_info": {"aggregates": ["2f1e0a4c-5b6d-4e7f-8a9b-0c1d2e3f4a5b"]},
}


@pytest.mark.parametrize("name", sorted(MODULE_BASE))
@pytest.mark.parametrize("option, value, form", [
    ("request_retries", True, "a whole number between 0 and 20"), ("request_retries", 21, "between 0 and 20"),
    ("request_retry_delay", float("nan"), "a number of seconds between 0 and 60"),
    ("request_retry_delay", 61, "between 0 and 60")])
def test_every_placement_module_takes_the_shared_retry_options(monkeypatch, name, option, value, form):
    # the shared spec (_openstack.RETRY_ARGUMENT_SPEC) and its ranges, checked before anything is sent; the
    # Placement modules had their own copies, whose check let a boolean through
    mod = importlib.import_module("ansible_collections.accelops.lifecycle.plugins.modules." + name)
    cls = next(v for k, v in vars(mod).items() if k.startswith("Placement") and k.endswith("Module"))
    assert dict((k, cls.argument_spec[k]) for k in _openstack.RETRY_ARGUMENT_SPEC) == _openstack.RETRY_ARGUMENT_SPEC
    patch_exits(monkeypatch)
    args = dict(MODULE_BASE[name], cloud="nowhere")
    args[option] = value
    out = run_module(mod.main, args)
    assert out.kind == "fail" and out.result["msg"].startswith(option + ": must be ") and form in out.result["msg"], \
        out.result


# -- reporters: one per device -----------------------------------------------------------------------------------
def mdev_gpu(fid="nvidia-558"):
    return {"address": "0000:84:00.0", "family": "gpu", "vendor_id": "10de", "device_id": "2236",
            "programming_model": "single", "function": {"id": fid, "name": "NVIDIA A10-4Q"},
            "gpu": {"mdev_types": [{"id": fid, "name": "NVIDIA A10-4Q", "available_instances": 6}]}}


def test_cyborg_reporter_adds_function_traits_to_cyborgs_provider_only(fake):
    root = fake.by_name("cn1")["uuid"]
    # as Cyborg 17's conductor makes it: uuid3 of its name, its driver's traits, no owner trait
    cyb = fake.add("cn1_0000:5e:00.0", root, traits=["CUSTOM_FPGA_INTEL"], invs={"FPGA": P.inventory(1)})
    r = run(fake, [spec("cn1", [fpga()], function_names={AFU: "gzip"}, reporter="cyborg")])
    (p,) = r["providers"]
    assert (p["name"], p["uuid"], p["action"], p["reporter"], p["owner"]) == (
        "cn1_0000:5e:00.0", cyb, "updated", "cyborg", "cyborg")
    got = fake.rps[cyb]["traits"]
    assert "CUSTOM_FUNCTION_GZIP" in got and "CUSTOM_FPGA_INTEL" in got and "CUSTOM_OWNER_ACCELOPS" not in got
    assert fake.rps[cyb]["inventories"] == {"FPGA": P.inventory(1)}  # Cyborg's inventory is Cyborg's
    assert [n for n in (q["name"] for q in fake.rps.values()) if "accelops" in n] == []
    assert run(fake, [spec("cn1", [fpga()], function_names={AFU: "gzip"}, reporter="cyborg")])["changed"] is False


def test_a_reporter_that_has_not_reported_yet_is_awaited_not_replaced(fake):
    before = len(fake.rps)
    r = run(fake, [spec("cn1", [fpga()], reporter="cyborg")])
    assert r["providers"][0]["action"] == "awaiting" and r["summary"]["awaiting"] == 1
    assert len(fake.rps) == before and not any(m in ("POST", "PUT") for m, dummy in fake.sent)
    assert any("Cyborg has not reported 0000:5e:00.0 yet" in w for w in r["warnings"])


def test_nova_reporter_traits_nova_vgpu_provider_and_reads_pci_ones_back(fake):
    root = fake.by_name("cn1")["uuid"]
    pgpu = fake.add("cn1_pci_0000_84_00_0", root, traits=["OWNER_NOVA"], invs={"VGPU": P.inventory(6)})
    pci = fake.add("cn1_0000:D8:00.0", root, traits=["OWNER_NOVA"], invs={"CUSTOM_PCI_8086_154C": P.inventory(4)})
    r = run(fake, [spec("cn1", [mdev_gpu(), nic(4)], function_names={"nvidia-558": "a10-4q"}, reporter="nova",
                        overrides={"0000:d8:00.0": {"traits": ["CUSTOM_FUNCTION_X710_VF"]}})])
    by = dict((p["name"], p) for p in r["providers"])
    assert by["cn1_pci_0000_84_00_0"]["action"] == "updated"
    assert "CUSTOM_FUNCTION_A10_4Q" in fake.rps[pgpu]["traits"] and "OWNER_NOVA" in fake.rps[pgpu]["traits"]
    # a Nova PCI provider is Nova's to write (it rewrites its traits from the device_spec): read back only
    assert by["cn1_0000:D8:00.0"]["action"] == "foreign" and fake.rps[pci]["traits"] == ["OWNER_NOVA"]
    # read back: the function trait Nova's provider lacks (Nova writes it from the device_spec traits tag)
    assert by["cn1_0000:D8:00.0"]["missing_traits"] == ["CUSTOM_FUNCTION_X710_VF"]
    assert any("lacks CUSTOM_FUNCTION_X710_VF" in w for w in r["warnings"])


def test_a_device_another_service_reports_is_refused_naming_both(fake):
    root = fake.by_name("cn1")["uuid"]
    fake.add("cn1_0000:D8:00.0", root, traits=["OWNER_NOVA"])
    fake.add("cn1_0000:5e:00.0", root, traits=["CUSTOM_FPGA_INTEL"])  # Cyborg's: uuid3 of its name, no owner trait
    with pytest.raises(P.PlacementInputError) as e:
        run(fake, [spec("cn1", [nic(4), fpga()])])
    msg = str(e.value)
    assert "one reporter per device" in msg and "0000:d8:00.0 is reported by nova as cn1_0000:D8:00.0" in msg
    assert "0000:5e:00.0 is reported by cyborg as cn1_0000:5e:00.0" in msg
    assert "cn1_accelops_0000:d8:00.0" in msg and not any(m in ("POST", "PUT") for m, dummy in fake.sent)


def test_own_provider_under_its_old_name_is_renamed_in_place(fake):
    root = fake.by_name("cn1")["uuid"]
    old = fake.add("cn1_0000:d8:00.0", root, traits=["CUSTOM_OWNER_ACCELOPS"], invs={"SRIOV_NET_VF": P.inventory(4)})
    r = run(fake, [spec("cn1", [nic(4)])])
    (p,) = [q for q in r["providers"] if q["address"]]
    assert (p["name"], p["uuid"], p["renamed_from"]) == ("cn1_accelops_0000:d8:00.0", old, "cn1_0000:d8:00.0")
    assert fake.rps[old]["name"] == "cn1_accelops_0000:d8:00.0" and r["summary"]["pruned"] == 0
    assert run(fake, [spec("cn1", [nic(4)])])["changed"] is False


def test_old_own_provider_at_cyborgs_name_goes_when_cyborg_reports(fake):
    root = fake.by_name("cn1")["uuid"]
    old = fake.add("cn1_0000:5e:00.0", root, traits=["CUSTOM_OWNER_ACCELOPS"], invs={"FPGA": P.inventory(1)})
    r = run(fake, [spec("cn1", [fpga()], reporter="cyborg")])
    assert old not in fake.rps and r["summary"]["pruned"] == 1 and r["summary"]["awaiting"] == 1


def test_a_generation_conflict_pauses_a_random_short_time_before_the_re_read(fake):
    run(fake, [spec("cn1", [nic(4)])])
    state = P.TreeState(P.Client(fake), None)
    listed = state.by_name["cn1_accelops_0000:d8:00.0"]
    traits, invs = state.details(listed)
    d = P.desired_providers("cn1", [nic(8)])[0]
    action = {"kind": "update", "name": d["name"], "uuid": d["uuid"], "listed": listed,
              "before": {"traits": traits, "inventories": invs}, "desired": d, "traits": None,
              "inventories": d["inventories"]}
    drained = []

    def operator(action, what):  # someone writes the provider once, right before this run's inventory write
        if what == "inventories" and not drained:
            drained.append(action["name"])
            fake.drain(action["name"])

    pauses = []
    conv = P.Converger(state.client, state, before_write=operator, sleep=pauses.append)
    conv.apply(action)
    # one conflict, one pause of at most CONFLICT_PAUSE before the re-read, then the write went through
    assert drained and conv.conflicts == 1 and len(pauses) == 1 and 0 <= pauses[0] <= P.tree.CONFLICT_PAUSE
    assert inv(fake, "cn1_accelops_0000:d8:00.0")["total"] == 8
