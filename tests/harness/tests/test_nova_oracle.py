# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What Nova reports for the nova.conf the collection renders, decided by Nova 34's own code.

For simulator labs modelled on real cards, the collection discovers the host, renders nova.conf
(``_novaconf.render``, as the nova_compute_config role does) and predicts Nova's providers
(``_novaconf.nova_expected_providers``, what the drift report reads back). tests/harness/nova_oracle.py then runs
Nova (in .venv-nova) on the same /sys (a private mount namespace: needs root, as CI runs) and the rendered file:
Nova's option loading, alias parsing, mdev config checks, libvirt PCI device parsing, the PCI tracker with
``[pci] device_spec``, ``pci_placement_translator.update_provider_tree_for_pci`` and the libvirt driver's
``_update_provider_tree_for_vgpu``, into a real ``ProviderTree``. The tests check that Nova accepts the file, that
the function traits land where Nova keeps them, that Nova's providers are the predicted ones, that Nova does not
fail on a host with no device spec (defect 10), and that no provider the collection would write as its own has a
name Nova uses (case-insensitively: MySQL's default collation).
Needs .venv-nova (tests/harness/setup-venv.sh nova). Run: .venv/bin/python -m pytest tests/harness/tests"""
import json
import os
import subprocess
import sys

import pytest

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(os.path.dirname(HARNESS))
SIMULATOR = os.path.join(TOP, "tests", "simulator")
if SIMULATOR not in sys.path:
    sys.path.insert(0, SIMULATOR)

import accelsim  # noqa: E402  pylint: disable=wrong-import-position
import servicelib  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

NOVA_PYTHON = os.path.join(servicelib.service_venv("nova"), "bin", "python")    # $ACCELOPS_NOVA_VENV or .venv-nova
ORACLE = os.path.join(HARNESS, "nova_oracle.py")
NODE = "cn1.example.org"
SHA = "ab" * 32
GZIP = "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"


def _need_nova():
    why = None
    if not os.access(NOVA_PYTHON, os.X_OK):
        why = "no .venv-nova: run tests/harness/setup-venv.sh nova"
    elif os.geteuid() != 0:
        why = "the Nova oracle mounts the simulated /sys in a private mount namespace: needs root"
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module", autouse=True)
def _oracle(tmp_path_factory):
    """One nova_oracle.py --serve for the module (Nova is imported once); its stderr goes to a file."""
    if not os.access(NOVA_PYTHON, os.X_OK) or os.geteuid() != 0:
        yield None
        return
    log = str(tmp_path_factory.mktemp("nova-oracle-log") / "stderr")
    with open(log, "w") as err:
        proc = subprocess.Popen([NOVA_PYTHON, ORACLE, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, text=True)
    _SERVER.update(proc=proc, log=log)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=60)
    _SERVER.clear()


_SERVER = {}


def nova(nova_conf, root, providers=None, api_conf=None, allocations=None):
    """Nova's answer (see nova_oracle.py) for this nova.conf (and nova-api file) on the host tree ``root``."""
    _need_nova()
    req = {"nova_conf": nova_conf, "nodename": NODE, "sysfs": root, "providers": providers or []}
    if api_conf is not None:
        req["api_conf"] = api_conf
    if allocations is not None:
        req["allocations"] = allocations
    proc = _SERVER["proc"]
    proc.stdin.write(json.dumps(req) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        with open(_SERVER["log"]) as f:
            pytest.fail("nova_oracle.py stopped:\n%s" % f.read()[-4000:])
    return json.loads(line)


def accepted(ans):
    assert ans["error"] is None, "Nova refused it at %s: %s: %s\n%s" % (
        ans["error"]["stage"], ans["error"]["type"], ans["error"]["message"], ans["error"]["traceback"])
    return ans


def children(ans):
    return dict((p["name"], p) for p in ans["providers"] if p["parent"] is not None)


# -------------------------------------------------------------------------------------- the hosts

def _nic(h):
    with h.transaction() as k:
        k.set_numvfs("0000:d8:00.0", "4")


def _vendor_vfio(h):
    rc, _out, err = h.tool("sriov-manage", "-e", "0000:3b:00.0")
    assert rc == 0, err
    with h.transaction() as k:
        for vf in k.vfs("0000:3b:00.0")[:4]:
            k.set_vgpu_type(vf, "1145")


def _pac_vf(h):
    with h.transaction() as k:
        k.set_numvfs("0000:5e:00.0", "1")


def _flex(h):
    with h.transaction() as k:
        k.set_numvfs("0000:4d:00.0", "2")


# lab, what is done to it first, the declaration
CASES = {
    "nic-sriov": ("nic-sriov", _nic, [
        {"name": "x710-vf", "match": {"address": "0000:d8:00.0"}, "vfs": {"count": 4},
         "placement": {"traits": ["CUSTOM_FAST_NET"]}}]),
    "gpu-mdev": ("gpu-mdev", None, [
        {"name": "t4-2q", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "GRID T4-2Q", "count": 1}}]),
    "gpu-vendor-vfio": ("gpu-vendor-vfio", _vendor_vfio, [
        {"name": "l40-8q", "match": {"address": "0000:3b:00.0"}, "vgpu": {"type": "NVIDIA L40-8Q", "count": 4}}]),
    "pac-port-on-vf": ("fpga-opae-vf", _pac_vf, [
        {"name": "gzip", "match": {"address": "0000:5e:00.0"},
         "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": SHA, "function_id": GZIP}}]),
    "xilinx-alveo": ("xilinx-alveo", None, [
        {"name": "alveo", "match": {"address": "0000:af:00.1"}, "passthrough": {}}]),
    "qat": ("qat", None, [
        {"name": "qat", "match": {"family": "qat", "count": 2}, "passthrough": {},
         "placement": {"resource_class": "CUSTOM_QAT"}}]),
    "amd-instinct": ("gpu-amd-instinct", None, [
        {"name": "mi300x", "match": {"address": "0000:83:00.0"}, "passthrough": {}},
        {"name": "mi210-vf", "match": {"address": "0000:3b:00.0"}, "vfs": {"count": 1}}]),
    "intel-flex": ("gpu-intel-flex", _flex, [
        {"name": "flex-vf", "match": {"address": "0000:4d:00.0"}, "vfs": {"count": 2}}]),
}


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """Each case rendered once: {case: (tree root, discovery, declaration, rendered, Nova's answer)}."""
    out = {}

    def get(case):
        if case not in out:
            lab, prepare, functions = CASES[case]
            root = str(tmp_path_factory.mktemp("nova-oracle") / lab)
            h = accelsim.render_tree(lab, root)
            if prepare:
                prepare(h)
            disc = discover(Sysfs(root=root))
            rendered = nc.render(functions, disc, {"host": NODE})
            assert rendered["problems"] == [], rendered["problems"]
            out[case] = (root, disc, functions, rendered, nova(rendered["nova_conf"], root,
                                                               api_conf=rendered["alias_conf"]))
        return out[case]
    return get


# -------------------------------------------------------------------------------------- the tests

@pytest.mark.parametrize("case", sorted(CASES))
def test_nova_accepts_the_rendered_config_and_reports_what_the_collection_predicts(hosts, case):
    _root, disc, functions, rendered, ans = hosts(case)
    accepted(ans)
    assert ans["conf"]["report_in_placement"] is True
    # every device the declaration gives Nova is one Nova tracks, and no other
    specs = [s for s in rendered["device_specs"] if not s.get("physical_network")]
    expected = nc.nova_expected_providers(functions, disc, {"host": NODE}, NODE)
    assert sorted(a for p in expected if p["kind"] == "pci" for a in p["devices"]) == ans["assignable"]
    assert bool(specs) == bool(ans["assignable"])
    got = children(ans)
    assert sorted(got) == [p["name"] for p in expected]
    for p in expected:
        g = got[p["name"]]
        assert list(g["inventory"]) == [p["resource_class"]], p["name"]
        assert g["inventory"][p["resource_class"]]["total"] == p["total"], p["name"]
        assert g["traits"] == p["traits"], p["name"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_function_traits_land_where_nova_keeps_them(hosts, case):
    _root, disc, functions, rendered, ans = hosts(case)
    accepted(ans)
    got = children(ans)
    expected = nc.nova_expected_providers(functions, disc, {"host": NODE}, NODE)
    assert expected, "the case gives Nova nothing to report"
    for p in expected:
        fn_traits = set(_naming.function_trait(f) for f in p["functions"])
        assert fn_traits and fn_traits <= set(p["function_traits"])
        if p["kind"] == "pci":
            # from the device_spec traits tag: Nova writes them itself, every periodic update
            assert fn_traits <= set(got[p["name"]]["traits"]), p["name"]
        else:
            assert got[p["name"]]["traits"] == ["OWNER_NOVA"]


@pytest.mark.parametrize("case", sorted(c for c in CASES if c != "gpu-mdev"))   # mdev vGPUs have no alias
def test_a_flavor_asking_for_the_function_finds_novas_provider(hosts, case):
    """nova-api/scheduler with the alias file the role writes: each alias becomes a Placement request group
    (RequestSpec.generate_request_groups_from_pci_requests) asking for the function trait, and one of Nova's
    providers on the host can serve it. Needs [filter_scheduler] pci_in_placement in that file."""
    _root, _disc, _functions, rendered, ans = hosts(case)
    accepted(ans)
    assert ans["api"]["pci_in_placement"] is True
    assert sorted(ans["api"]["groups"]) == sorted(set(a["name"] for a in rendered["aliases"]))
    got = children(ans)
    for alias in rendered["aliases"]:
        groups = ans["api"]["groups"][alias["name"]]
        assert len(groups) == 1, groups
        (rc, n), = groups[0]["resources"].items()
        assert _naming.function_trait(alias["name"]) in groups[0]["required_traits"]
        serving = [name for name, p in got.items()
                   if p["inventory"].get(rc, {}).get("total", 0) >= n and set(groups[0]["required_traits"]) <= set(p["traits"])]
        assert serving, "no Nova provider serves alias %s (%s)" % (alias["name"], groups[0])


def test_nova_keeps_a_function_trait_added_to_its_pgpu_provider_and_drops_it_from_a_pci_provider(hosts):
    root, disc, functions, rendered, _ans = hosts("gpu-mdev")
    pgpu = nc.nova_pgpu_provider_name(NODE, "0000:18:00.0")
    trait = _naming.function_trait("t4-2q")
    ans = accepted(nova(rendered["nova_conf"], root, [{"name": pgpu, "traits": [trait, "OWNER_NOVA"]}]))
    assert children(ans)[pgpu]["traits"] == sorted([trait, "OWNER_NOVA"])
    # a PCI provider is rewritten: a trait put there from outside is gone after Nova's update
    root, disc, functions, rendered, _ans = hosts("nic-sriov")
    pci = nc.nova_pci_provider_name(NODE, "0000:d8:00.0")
    ans = accepted(nova(rendered["nova_conf"], root, [{"name": pci, "traits": ["CUSTOM_FROM_OUTSIDE"]}]))
    assert "CUSTOM_FROM_OUTSIDE" not in children(ans)[pci]["traits"]


@pytest.mark.parametrize("functions", [[], CASES["gpu-mdev"][2]], ids=["no-device", "mdev-only"])
def test_a_host_with_no_device_spec_keeps_reporting_pci_defect_10(hosts, functions):
    """A compute node that reported PCI devices before (a provider with COMPUTE_MANAGED_PCI_DEVICE) goes to mdev
    vGPUs only, or to no declared device: Nova must still read report_in_placement as True."""
    root, disc, _f, _r, _a = hosts("gpu-mdev")
    rendered = nc.render(functions, disc, {"host": NODE})
    assert rendered["device_specs"] == []
    before = [{"name": nc.nova_pci_provider_name(NODE, "0000:18:00.0"), "traits": ["COMPUTE_MANAGED_PCI_DEVICE"],
               "inventory": {"CUSTOM_PCI_10DE_1EB8": {"total": 1, "max_unit": 1}}}]
    ans = accepted(nova(rendered["nova_conf"], root, before))
    assert ans["conf"]["report_in_placement"] is True
    # Nova removes the PCI provider it no longer has a device for, and nothing fails
    assert before[0]["name"] not in children(ans)
    # the same tree with the option missing (what the role wrote before the fix): Nova stops the node
    without = "\n".join(x for x in rendered["nova_conf"].splitlines() if not x.startswith("report_in_placement"))
    refused = nova(without, root, before)
    assert refused["error"] and refused["error"]["type"] == "PlacementPciException"
    assert "does not support disabling" in refused["error"]["message"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_collection_targets_novas_providers_by_novas_names(hosts, case):
    """With Nova's config from the declaration (the reporter the converge picks then), the providers the
    collection's Placement code (desired_providers with the converge's reporters) puts function traits on and
    reads back are Nova's own, by name."""
    _root, disc, functions, _r, ans = hosts(case)
    accepted(ans)
    reporting = _declaration.check_reporting({"nova": True})
    reporters = _declaration.reporters(_declaration.resolve(functions, disc), disc, reporting)
    ours = [p for p in P.desired_providers(NODE, disc, reporters=reporters) if p["reporter"] == "nova"]
    assert ours, "no device reported by Nova here: the check would prove nothing"
    got = children(ans)
    assert sorted(set(p["name"] for p in ours)) == sorted(got)
    # the function traits it looks for on a PCI provider are there, written by Nova from the device_spec (else
    # the converge warns on every run, and a trait added from outside would be dropped at Nova's next update)
    names = _declaration.resolve(functions, disc)["function_names"]
    for p in P.desired_providers(NODE, disc, reporters=reporters, function_names=names):
        if p["reporter"] == "nova" and not p["mdev"]:
            want = set(t for t in p["traits"] if P.is_function_trait(t))
            assert want <= set(got[p["name"]]["traits"]), (p["name"], sorted(want - set(got[p["name"]]["traits"])))


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_provider_of_the_collection_has_a_name_nova_uses(hosts, case):
    """The collection's own providers (the accelops reporter: desired_providers) never share a name with Nova's,
    case-insensitively: MySQL's default collation compares names that way and Placement's name is unique."""
    _root, disc, _f, _r, ans = hosts(case)
    accepted(ans)
    ours = set(p["name"].lower() for p in P.desired_providers(NODE, disc))
    theirs = set(n.lower() for n in children(ans))
    assert theirs, "Nova reports nothing here: the check would prove nothing"
    assert not ours & theirs, "the collection's providers take names Nova uses: %s" % sorted(ours & theirs)


DRAIN = "6f70656e-7374-6163-6b00-00000000d0a1"
PROVIDER_UUID = "6f70656e-7374-6163-6b00-0000000000b1"


def test_drain_what_nova_keeps_and_what_it_rewrites(tmp_path):
    """How a Nova provider can be drained (docs/nova-config.md): a ``reserved`` written from outside lasts on a PCI
    provider only while Nova's total stays the same, and never on a vGPU provider; an allocation held by a
    consumer of the drainer's own is left alone by Nova, which keeps the inventory at least at its usage."""
    root = str(tmp_path / "nic")
    h = accelsim.render_tree("nic-sriov", root)
    _nic(h)
    functions = CASES["nic-sriov"][2]
    disc = discover(Sysfs(root=root))
    conf = nc.render(functions, disc, {"host": NODE})["nova_conf"]
    (exp,) = nc.nova_expected_providers(functions, disc, {"host": NODE}, NODE)
    rc = exp["resource_class"]
    drained = {rc: {"total": 4, "reserved": 4, "min_unit": 1, "max_unit": 4, "step_size": 1, "allocation_ratio": 1.0}}
    before = [{"name": exp["name"], "uuid": PROVIDER_UUID, "traits": exp["traits"], "inventory": drained}]
    # 1. same VF count: Nova finds nothing to change, the reserved stays
    ans = accepted(nova(conf, root, before))
    assert children(ans)[exp["name"]]["inventory"] == drained
    # 2. the VF count changes (4 -> 2): Nova writes total and max_unit only, so Placement resets reserved to 0
    with h.transaction() as k:
        k.set_numvfs("0000:d8:00.0", "0")
    with h.transaction() as k:
        k.set_numvfs("0000:d8:00.0", "2")
    ans = accepted(nova(conf, root, before))
    assert children(ans)[exp["name"]]["inventory"] == {rc: {"total": 2, "max_unit": 2}}
    # 3. a drain consumer holding the units: Nova keeps total at the usage and leaves the allocation alone
    allocs = {DRAIN: {"allocations": {PROVIDER_UUID: {"resources": {rc: 4}}}, "project_id": DRAIN,
                      "user_id": DRAIN, "consumer_generation": 1}}
    free = dict((k, dict(v, reserved=0)) for k, v in drained.items())
    ans = accepted(nova(conf, root, [dict(before[0], inventory=free)], allocations=allocs))
    assert children(ans)[exp["name"]]["inventory"] == free      # total stays 4 although 2 VFs are left
    assert ans["allocations"] == allocs and ans["allocations_changed"] is False
    # 4. a vGPU provider: Nova writes reserved 0 on every update
    root = str(tmp_path / "gpu")
    accelsim.render_tree("gpu-mdev", root)
    functions = CASES["gpu-mdev"][2]
    disc = discover(Sysfs(root=root))
    (exp,) = nc.nova_expected_providers(functions, disc, {"host": NODE}, NODE)
    inv = {"VGPU": {"total": exp["total"], "reserved": exp["total"], "min_unit": 1, "max_unit": exp["total"],
                    "step_size": 1, "allocation_ratio": 1.0}}
    ans = accepted(nova(nc.render(functions, disc, {"host": NODE})["nova_conf"], root,
                        [{"name": exp["name"], "uuid": PROVIDER_UUID, "traits": ["OWNER_NOVA"], "inventory": inv}]))
    assert children(ans)[exp["name"]]["inventory"]["VGPU"]["reserved"] == 0


FUNCTIONAL = os.path.join(HARNESS, "nova_functional.py")


def fake_libvirt_devices(expected, disc):
    """The devices of Nova's providers for Nova's fake libvirt, laid out as it lays them out (a PF at function 0,
    its VFs in the functions after it): same ids, same PF addresses, as many VFs."""
    by_addr = dict((r["address"], r) for r in disc["accelerators"])
    out = []
    for p in expected:
        rec = by_addr[p["address"]]
        _dom, bus, rest = p["address"].split(":")
        slot, fn = (int(x, 16) for x in rest.split("."))
        vfs = [by_addr[a] for a in p["devices"] if by_addr[a].get("physfn") == p["address"]]
        kind = "PF" if (rec.get("sriov") or {}).get("totalvfs") else "PCI"
        dev = {"type": kind, "bus": int(bus, 16), "slot": slot, "function": fn, "vendor_id": rec["vendor_id"],
               "product_id": rec["device_id"]}
        if kind == "PF":
            dev["vf_ratio"] = len(vfs)
        out.append(dev)
        for i, vf in enumerate(vfs):
            assert fn == 0, "the fake libvirt puts VFs after a PF at function 0"
            out.append({"type": "VF", "bus": int(bus, 16), "slot": slot + (i + 1) // 8, "function": (i + 1) % 8,
                        "vendor_id": vf["vendor_id"], "product_id": vf["device_id"], "vf_ratio": len(vfs),
                        "parent": [int(bus, 16), slot, fn]})
    return out


@pytest.mark.parametrize("case", ["nic-sriov", "qat"])
def test_a_server_boots_on_novas_provider_with_the_function_in_novas_functional_harness(hosts, case, tmp_path):
    """The stretch goal: Nova's own functional harness (fake libvirt, real API, scheduler with the PCI-in-Placement
    prefilter, conductor, compute, in-process Placement) with the rendered device_spec and alias boots a server
    whose flavor asks for the function; its PCI allocation is on Nova's provider that carries the function trait."""
    _need_nova()
    _root, disc, functions, rendered, _ans = hosts(case)
    expected = [p for p in nc.nova_expected_providers(functions, disc, {"host": NODE}, NODE) if p["kind"] == "pci"]
    alias = rendered["aliases"][0]["name"]
    req = {"nodename": NODE, "device_spec": [json.dumps(s) for s in rendered["device_specs"]],
           "alias": [json.dumps(a) for a in rendered["aliases"]], "request_alias": alias,
           "devices": fake_libvirt_devices(expected, disc),
           "pfs": [r["address"] for r in disc["accelerators"] if (r.get("sriov") or {}).get("totalvfs")]}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(req))
    p = subprocess.run([NOVA_PYTHON, FUNCTIONAL, str(path)], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0 and p.stdout.strip(), p.stderr[-4000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["status"] == "ACTIVE", out["error"]
    pci = [x for x in out["providers"] if x["name"] != NODE]
    assert len(pci) == 1, out["providers"]
    names = dict((e["name"], e) for e in expected)
    assert pci[0]["name"] in names
    assert pci[0]["resources"] == {names[pci[0]["name"]]["resource_class"]: 1}
    assert _naming.function_trait(alias) in pci[0]["traits"]
