# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""placement_provider_tree and placement_provider_info against a real Placement.

Counts requests from the server's own access log, plays a concurrent writer between the module's read and
its write, and reads results back with the osc-placement CLI (a separate client in a separate venv).
Run: .venv/bin/python -m pytest tests/harness/tests
"""
import json
import socket

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_info as info_mod
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_tree as tree_mod

AFU_GZIP = "d8424dc4-a4a1-c3d4-3213-4b09c1d7f2a2"
AFU_AES = "f7df405c-bd7a-cf72-22f1-44b0b93acd18"
GPU_ADDR, FPGA_ADDR, NIC_ADDR, XIL_ADDR = "0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0", "0000:d8:00.1"


def fpga_record(addr=FPGA_ADDR, afu=AFU_GZIP):
    return {"address": addr, "family": "fpga", "vendor_id": "8086", "device_id": "09c4", "numa_node": 0,
            "physfn": None, "programming_model": "dynamic",
            "function": {"id": afu, "name": None, "trait": P._naming.fpga_function_trait("intel", afu)} if afu else None,
            "fpga": {"vendor": "intel", "regions": [{"id": "intel-fpga-fme.0", "interface_id": "9926ab6d6c925a68aabca7d84c545738",
                                                     "trait": "CUSTOM_FPGA_REGION_INTEL_9926AB6D6C925A68AABCA7D84C545738"}],
                     "ports": [{"id": "intel-fpga-port.0", "afu_id": afu}]},
            "sriov": {"totalvfs": 0, "numvfs": 0, "vfs": []}, "units": []}


def gpu_record(addr=GPU_ADDR):
    return {"address": addr, "family": "gpu", "vendor_id": "10de", "device_id": "1eb8", "numa_node": 1,
            "physfn": None, "programming_model": "fixed", "function": None, "gpu": {"mdev_types": []},
            "sriov": {"totalvfs": 0, "numvfs": 0, "vfs": []}, "units": [{"kind": "device", "id": addr}]}


def nic_record(addr=NIC_ADDR, numvfs=8):
    return {"address": addr, "family": "nic", "vendor_id": "8086", "device_id": "1572", "numa_node": 1,
            "physfn": None, "programming_model": "fixed", "function": None,
            "sriov": {"totalvfs": 64, "numvfs": numvfs, "vfs": []}, "units": []}


def xilinx_record(addr=XIL_ADDR, xclbin=None):
    return {"address": addr, "family": "fpga", "vendor_id": "10ee", "device_id": "5001", "numa_node": 0,
            "physfn": None, "programming_model": "single",
            "function": {"id": xclbin, "name": None, "trait": P._naming.fpga_function_trait("xilinx", xclbin)}
            if xclbin else None,
            "fpga": {"vendor": "xilinx", "regions": [], "ports": []}, "units": []}


def discovery(host="cn1", records=None):
    return {"schema_version": 1, "host": {"hostname": host},
            "accelerators": records if records is not None else [fpga_record(), gpu_record(), nic_record()]}


# children are named after the compute node provider found (cn1.example.org), not the spelling that found it
CHILD = "cn1.example.org_accelops_"
CYBORG_CHILD = "cn1.example.org_"  # Cyborg names its deployables <host>_<address>


def run(module, args, capsys, check=False, diff=False):
    a = dict(args)
    a["_ansible_check_mode"] = check
    a["_ansible_diff"] = diff
    with patch_module_args(a):
        with pytest.raises(SystemExit):
            module.main()
    out = capsys.readouterr().out
    return json.loads(out)


@pytest.fixture
def env(clean_placement, tmp_path):
    """Placement wiped, one compute node provider 'cn1.example.org' (an FQDN: discovery says 'cn1')."""
    p = clean_placement
    root = p.create_provider("cn1.example.org")

    def tree(capsys, check=False, diff=False, **args):
        base = {"cloud": p.cloud(), "generation_cache": str(tmp_path / "gen.json")}
        base.update(args)
        return run(tree_mod, base, capsys, check=check, diff=diff)
    p.root = root
    p.tree = tree
    return p


def by_name(result):
    return dict((x["name"], x) for x in result["providers"])


def test_create_from_scratch_then_noop_rerun_sends_no_write(env, capsys):
    mark = env.log_mark()
    r = env.tree(capsys, discovery=discovery(), diff=True)
    assert r["changed"] is True and r["summary"]["created"] == 3, r
    reqs = env.requests_since(mark)
    # the budget: 3 requests per provider plus a constant (list, trait look-up, trait creation, version doc)
    per_provider = [x for x in reqs if "/resource_providers" in x and not x.startswith("GET /resource_providers ")]
    assert len(per_provider) <= 3 * 3
    fpga = env.provider_by_name(CHILD + FPGA_ADDR)
    assert fpga["uuid"] == P.provider_uuid(CHILD + FPGA_ADDR)            # uuid3 of the name, as Cyborg's
    assert fpga["parent_provider_uuid"] == env.root["uuid"]
    assert P._naming.fpga_function_trait("intel", AFU_GZIP) in env.traits(fpga["uuid"])
    assert "CUSTOM_OWNER_ACCELOPS" in env.traits(fpga["uuid"])
    inv = env.inventories(env.provider_by_name(CHILD + NIC_ADDR)["uuid"])
    assert inv["SRIOV_NET_VF"]["total"] == 8 and inv["SRIOV_NET_VF"]["max_unit"] == 8
    assert "PGPU" in env.inventories(env.provider_by_name(CHILD + GPU_ADDR)["uuid"])
    assert r["diff"]["before"][CHILD + FPGA_ADDR] is None
    # no-op rerun: changed false, no write; with the generation cache, one request in all
    mark = env.log_mark()
    r2 = env.tree(capsys, discovery=discovery())
    assert r2["changed"] is False and r2["summary"]["unchanged"] == 3
    reqs = env.requests_since(mark)
    assert [x for x in reqs if not x.startswith("GET ")] == []
    assert r2["requests"]["total"] == 1
    # without the cache: still no write (reads only)
    mark = env.log_mark()
    r3 = env.tree(capsys, discovery=discovery(), use_generation_cache=False)
    assert r3["changed"] is False
    assert [x for x in env.requests_since(mark) if not x.startswith("GET ")] == []


def test_independent_read_back_with_the_cli(env, capsys):
    env.tree(capsys, discovery=discovery())
    listed = env.cli_json("resource", "provider", "list", "--in-tree", env.root["uuid"])
    assert sorted(x["name"] for x in listed) == sorted(["cn1.example.org", CHILD + FPGA_ADDR, CHILD + GPU_ADDR,
                                                        CHILD + NIC_ADDR])
    u = P.provider_uuid(CHILD + FPGA_ADDR)
    traits = [x["name"] for x in env.cli_json("resource", "provider", "trait", "list", u)]
    assert P._naming.fpga_function_trait("intel", AFU_GZIP) in traits
    inv = env.cli_json("resource", "provider", "inventory", "list", u)
    assert [(x["resource_class"], x["total"]) for x in inv] == [("FPGA", 1)]


def test_change_function_replaces_the_trait(env, capsys):
    env.tree(capsys, discovery=discovery())
    u = P.provider_uuid(CHILD + FPGA_ADDR)
    env.set_traits(u, env.traits(u) + ["CUSTOM_GOLD"])                  # someone else's trait
    r = env.tree(capsys, discovery=discovery(records=[fpga_record(afu=AFU_AES), gpu_record(), nic_record()]),
                 diff=True, function_names={AFU_AES: "aes"})
    assert r["changed"] is True and r["summary"]["updated"] == 1
    traits = env.traits(u)
    assert P._naming.fpga_function_trait("intel", AFU_AES) in traits
    assert "CUSTOM_FUNCTION_AES" in traits
    assert P._naming.fpga_function_trait("intel", AFU_GZIP) not in traits
    assert "CUSTOM_GOLD" in traits
    d = r["diff"]
    assert P._naming.fpga_function_trait("intel", AFU_GZIP) in d["before"][CHILD + FPGA_ADDR]["traits"]


def test_single_program_card_gets_inventory_only_once_programmed(env, capsys):
    r = env.tree(capsys, discovery=discovery(records=[xilinx_record()]))
    x = by_name(r)[CHILD + XIL_ADDR]
    assert x["inventories"] == {} and "no function" in x["note"]
    u = P.provider_uuid(CHILD + XIL_ADDR)
    assert env.inventories(u) == {}
    xclbin = "5b6d6b83-f1c4-4f4a-9b1c-4d2f6c1c8a10"
    env.tree(capsys, discovery=discovery(records=[xilinx_record(xclbin=xclbin)]))
    assert env.inventories(u)["FPGA"]["total"] == 1
    assert P._naming.fpga_function_trait("xilinx", xclbin) in env.traits(u)


def test_device_removed_is_pruned_but_kept_while_allocated(env, capsys):
    env.tree(capsys, discovery=discovery())
    gpu_u = P.provider_uuid(CHILD + GPU_ADDR)
    nic_u = P.provider_uuid(CHILD + NIC_ADDR)
    env.allocate("11111111-2222-3333-4444-555555555555", {nic_u: {"SRIOV_NET_VF": 2}})
    r = env.tree(capsys, discovery=discovery(records=[fpga_record()]))
    assert r["summary"]["pruned"] == 1 and r["summary"]["kept"] == 1
    assert env.provider_by_name(CHILD + GPU_ADDR) is None
    assert env.provider_by_name(CHILD + NIC_ADDR)["uuid"] == nic_u
    assert any("still has allocations" in str(w) and CHILD + NIC_ADDR in str(w) for w in r.get("warnings", []))
    assert gpu_u not in [p["uuid"] for p in env.providers()]


def test_concurrent_writer_between_read_and_write_both_changes_survive(env, capsys):
    import openstack
    conn = openstack.connect(**env.cloud())
    u = P.provider_uuid(CHILD + FPGA_ADDR)
    hosts = [{"host": "cn1", "providers": P.desired_providers("cn1", discovery())}]
    P.converge(conn.placement, hosts, {})
    env.set_traits(u, env.traits(u) + ["CUSTOM_RACK_A"])
    played = []

    def writer(action, what):
        if action["uuid"] == u and what == "traits" and not played:
            played.append(1)   # the other writer adds its trait after our read, before our write
            env.set_traits(u, env.traits(u) + ["CUSTOM_OTHER_WRITER"])
    new = [{"host": "cn1", "providers": P.desired_providers("cn1", discovery(
        records=[fpga_record(afu=AFU_AES), gpu_record(), nic_record()]))}]
    r = P.converge(conn.placement, new, {}, before_write=writer)
    assert played and r["requests"]["conflicts_resolved"] == 1
    traits = env.traits(u)
    assert "CUSTOM_OTHER_WRITER" in traits and "CUSTOM_RACK_A" in traits
    assert P._naming.fpga_function_trait("intel", AFU_AES) in traits
    assert P._naming.fpga_function_trait("intel", AFU_GZIP) not in traits


def test_a_device_cyborg_reports_is_refused_then_traited_as_cyborgs(env, capsys):
    name = CYBORG_CHILD + FPGA_ADDR
    theirs = env.create_provider(name, uuid=P.provider_uuid(name), parent=env.root["uuid"])
    env.set_traits(theirs["uuid"], ["OWNER_CYBORG", "CUSTOM_FPGA_FUNCTION_ID_INTEL_OLD"])
    env.set_inventories(theirs["uuid"], {"FPGA": {"total": 2}})
    mark = env.log_mark()
    r = env.tree(capsys, discovery=discovery(records=[fpga_record()]))
    # reported by this collection as well, the card would be offered twice: refused, nothing written
    assert r["failed"] is True and "one reporter per device" in r["msg"] and name in r["msg"], r
    assert [x for x in env.requests_since(mark) if not x.startswith("GET ")] == []
    assert env.traits(theirs["uuid"]) == ["CUSTOM_FPGA_FUNCTION_ID_INTEL_OLD", "OWNER_CYBORG"]
    # declared as Cyborg's, only the function traits are swapped on Cyborg's provider
    # (this Cyborg's host name is the FQDN, not the short name discovery reports: name_prefix says so)
    r = env.tree(capsys, discovery=discovery(records=[fpga_record()]), reporter="cyborg", name_prefix="cn1.example.org")
    assert by_name(r)[name]["action"] == "updated" and by_name(r)[name]["reporter"] == "cyborg"
    assert env.traits(theirs["uuid"]) == sorted(["OWNER_CYBORG", P._naming.fpga_function_trait("intel", AFU_GZIP)])
    assert env.inventories(theirs["uuid"])["FPGA"]["total"] == 2
    assert [p["name"] for p in env.providers() if "accelops" in p["name"]] == []


def test_own_providers_under_the_old_names_are_renamed_with_their_allocations(env, capsys):
    old = CYBORG_CHILD + NIC_ADDR  # what this collection named its providers before reporters
    p = env.create_provider(old, uuid=P.provider_uuid(old), parent=env.root["uuid"])
    env.set_traits(p["uuid"], ["CUSTOM_OWNER_ACCELOPS"])
    env.set_inventories(p["uuid"], {"SRIOV_NET_VF": {"total": 8, "max_unit": 8}})
    env.allocate("11111111-2222-3333-4444-555555555555", {p["uuid"]: {"SRIOV_NET_VF": 1}})
    r = env.tree(capsys, discovery=discovery(records=[nic_record()]))
    nic = by_name(r)[CHILD + NIC_ADDR]
    assert nic["uuid"] == p["uuid"] and nic["renamed_from"] == old and r["summary"]["pruned"] == 0, r
    assert env.provider_by_name(old) is None and env.provider_by_name(CHILD + NIC_ADDR)["uuid"] == p["uuid"]
    assert env.get("/resource_providers/%s/usages" % p["uuid"])["usages"] == {"SRIOV_NET_VF": 1}


def test_check_mode_sends_no_write(env, capsys):
    mark = env.log_mark()
    r = env.tree(capsys, check=True, diff=True, discovery=discovery())
    assert r["changed"] is True and r["summary"]["created"] == 3
    assert [x for x in env.requests_since(mark) if not x.startswith("GET ")] == []
    assert [p["name"] for p in env.providers()] == ["cn1.example.org"]
    real = env.tree(capsys, discovery=discovery(), diff=True)
    assert real["diff"] == r["diff"] or set(real["diff"]["after"]) == set(r["diff"]["after"])
    mark = env.log_mark()
    r = env.tree(capsys, check=True, discovery=discovery(records=[fpga_record()]))
    assert r["summary"]["pruned"] == 2 and len(env.providers()) == 4
    assert [x for x in env.requests_since(mark) if not x.startswith("GET ")] == []


def test_drain_and_restore(env, capsys):
    env.tree(capsys, discovery=discovery())
    u = P.provider_uuid(CHILD + NIC_ADDR)
    r = env.tree(capsys, discovery=discovery(), drain=[NIC_ADDR])
    assert r["changed"] is True and env.inventories(u)["SRIOV_NET_VF"]["reserved"] == 8
    info = run(info_mod, {"cloud": env.cloud(), "hosts": ["cn1"]}, capsys)
    assert by_name(info)[CHILD + NIC_ADDR]["drained"] is True
    env.tree(capsys, discovery=discovery())
    assert env.inventories(u)["SRIOV_NET_VF"]["reserved"] == 0


def test_fleet_in_one_call(env, capsys):
    env.create_provider("cn2")
    r = env.tree(capsys, hosts=[{"discovery": discovery("cn1")}, {"discovery": discovery("cn2", [gpu_record()])}])
    assert r["summary"]["created"] == 4
    assert env.provider_by_name("cn2_accelops_" + GPU_ADDR)["root_provider_uuid"] == env.provider_by_name("cn2")["uuid"]


def test_info_reports_inventories_usages_traits_allocations(env, capsys):
    env.tree(capsys, discovery=discovery())
    u = P.provider_uuid(CHILD + NIC_ADDR)
    env.allocate("11111111-2222-3333-4444-555555555555", {u: {"SRIOV_NET_VF": 3}})
    r = run(info_mod, {"cloud": env.cloud(), "hosts": ["cn1"]}, capsys)
    assert r["changed"] is False
    nic = by_name(r)[CHILD + NIC_ADDR]
    assert nic["usages"] == {"SRIOV_NET_VF": 3} and nic["in_use"] is True and nic["owner"] == "accelops"
    assert nic["allocations"]["11111111-2222-3333-4444-555555555555"]["resources"] == {"SRIOV_NET_VF": 3}
    assert by_name(r)["cn1.example.org"]["owner"] is None
    owned = run(info_mod, {"cloud": env.cloud()}, capsys)
    assert sorted(p["name"] for p in owned["providers"]) == sorted(CHILD + a for a in (FPGA_ADDR, GPU_ADDR, NIC_ADDR))


@pytest.mark.parametrize("args, words", [
    ({"overrides": {FPGA_ADDR: {"resource_class": "fpga-big"}}}, ["overrides[%s].resource_class" % FPGA_ADDR,
                                                                  "CUSTOM_FPGA_BIG"]),
    ({"extra_traits": ["gold tier"]}, ["extra_traits", "CUSTOM_GOLD_TIER"]),
    ({"overrides": {FPGA_ADDR: {"colour": 1}}}, ["unknown key", "colour", "resource_class"]),
    ({"root_provider": "no-such-node"}, ["root_provider", "no-such-node"]),
    ({"host": "cn9"}, ["cn9", "no compute node resource provider", "root_provider"]),
    ({"discovery": {"nothing": 1}}, ["discovery", "accelerators"]),
])
def test_bad_input_fails_with_a_clear_message(env, capsys, args, words):
    a = {"discovery": discovery()}
    a.update(args)
    r = env.tree(capsys, **a)
    assert r.get("failed") is True, r
    for w in words:
        assert w in r["msg"], r["msg"]
    assert "Traceback" not in r["msg"]


def _closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_endpoint_and_wrong_credentials(env, capsys):
    e = "http://127.0.0.1:%d" % _closed_port()
    r = run(tree_mod, {"cloud": dict(env.cloud(endpoint=e), api_timeout=2), "discovery": discovery(),
                       "use_generation_cache": False}, capsys)
    assert r["failed"] is True and "Traceback" not in r["msg"] and ("connect" in r["msg"].lower() or e in r["msg"])
    r = run(tree_mod, {"cloud": env.cloud(token="not-admin"), "discovery": discovery(),
                       "use_generation_cache": False}, capsys)
    assert r["failed"] is True and ("HTTP 403" in r["msg"] or "HTTP 401" in r["msg"]), r["msg"]
    assert "credentials" in r["msg"]
    r = run(info_mod, {"cloud": env.cloud(token="not-admin")}, capsys)
    assert r["failed"] is True and "credentials" in r["msg"]


def test_any_spelling_of_the_host_reports_the_same_children(env, capsys):
    # reported as the discovery's short name, then as the FQDN the root carries: one set of children, no
    # rename, no prune (a renamed set beside an allocated old one offered the same device twice)
    r = env.tree(capsys, discovery=discovery())
    assert r["summary"]["created"] == 3, r
    names = sorted(p["name"] for p in env.providers())
    assert names == sorted(["cn1.example.org"] + [CHILD + a for a in (FPGA_ADDR, GPU_ADDR, NIC_ADDR)])
    again = env.tree(capsys, discovery=discovery(), host="cn1.example.org")
    assert again["changed"] is False, again
    assert again["summary"]["created"] == 0 and again["summary"]["pruned"] == 0, again["summary"]
    assert sorted(p["name"] for p in env.providers()) == names
    # an explicit name_prefix is still what names them
    prefixed = env.tree(capsys, discovery=discovery(), name_prefix="cn1", check=True)
    assert sorted(p["name"] for p in prefixed["providers"] if p["name"].startswith("cn1_")) == \
        sorted("cn1_accelops_" + a for a in (FPGA_ADDR, GPU_ADDR, NIC_ADDR))


def test_a_nova_reported_unit_is_drained_by_a_hold_that_nova_cannot_undo(env, capsys):
    # Nova's PCI provider of the NIC: Nova rewrites its inventory (reserved included) every periodic update
    name = "cn1.example.org_" + NIC_ADDR.upper()
    nova = env.create_provider(name, parent=env.root["uuid"])
    env.set_traits(nova["uuid"], ["OWNER_NOVA"])
    env.set_inventories(nova["uuid"], {"SRIOV_NET_VF": {"total": 8, "max_unit": 8}})
    env.allocate("11111111-2222-3333-4444-555555555555", {nova["uuid"]: {"SRIOV_NET_VF": 3}})
    rec = [nic_record()]
    r = env.tree(capsys, discovery=discovery(records=rec), reporter="nova", drain=[NIC_ADDR], keep_drained=True)
    p = by_name(r)[name]
    assert p["action"] == "foreign" and p["held"] == {"SRIOV_NET_VF": 5} and p["drained"] is True, p

    def usages():
        return env.get("/resource_providers/%s/usages" % nova["uuid"])["usages"]
    assert usages() == {"SRIOV_NET_VF": 8}
    # Nova's next periodic update writes its inventory back as it sees it: the hold stays, nothing is free
    env.set_inventories(nova["uuid"], {"SRIOV_NET_VF": {"total": 8, "max_unit": 8, "reserved": 0}})
    assert usages() == {"SRIOV_NET_VF": 8}
    # the read side: the hold is a drain, not use (the converge would otherwise block the card on its own hold)
    info = by_name(run(info_mod, {"cloud": env.cloud(), "hosts": ["cn1"]}, capsys))[name]
    assert info["held"] == {"SRIOV_NET_VF": 5} and info["drained"] is True and info["in_use"] is True
    # a second drain changes nothing; an undrain releases only the hold
    again = env.tree(capsys, discovery=discovery(records=rec), reporter="nova", drain=[NIC_ADDR], keep_drained=True)
    assert again["changed"] is False, again
    # with the instance gone, what is left on the provider is the hold alone: drained, not in use
    env.request("DELETE", "/allocations/11111111-2222-3333-4444-555555555555", expect=204)
    info = by_name(run(info_mod, {"cloud": env.cloud(), "hosts": ["cn1"]}, capsys))[name]
    assert info["held"] == {"SRIOV_NET_VF": 5} and info["in_use"] is False and info["drained"] is True
    env.tree(capsys, discovery=discovery(records=rec), reporter="nova", undrain=[NIC_ADDR], keep_drained=True)
    assert usages() == {"SRIOV_NET_VF": 0}
