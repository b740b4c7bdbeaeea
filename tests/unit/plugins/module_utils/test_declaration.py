# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The declaration: validation messages, and resolution against the discovery of a simulated lab host."""

from __future__ import annotations

import copy
import re

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration as d  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

SHA = "ab" * 32
GZIP_AFU = "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"   # what the fpga-opae card of lab-all carries
OTHER_AFU = "11111111-2222-3333-4444-555555555555"


@pytest.fixture(scope="module")
def lab(fork_shared):
    return fork_shared("decl-lab-all", _discover_lab_all)


def _discover_lab_all(where):
    root = where + "/lab-all"
    accelsim.render_tree("lab-all", root)
    return discover(Sysfs(root=root))


def fpga(name="gzip", afu=GZIP_AFU, **match):
    return {"name": name, "match": match or {"family": "fpga", "vendor_id": "8086"},
            "fpga": {"bitstream": "/srv/%s.gbs" % name, "sha256": SHA, "function_id": afu}}


# ------------------------------------------------------------------------------------------------ validation

@pytest.mark.parametrize("entry,message", [
    ({"match": {"family": "fpga"}, "vfs": {"count": 2}}, "name: is required"),
    ({"name": "bad name", "match": {"family": "nic"}, "vfs": {"count": 2}}, "'bad name' is not valid; accepted form"),
    ({"name": "x", "match": {"family": "nic"}}, "needs exactly one of fpga, vgpu, vfs, mig, passthrough"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": 2}, "vgpu": {"type": "t", "count": 1}},
     "needs exactly one of"),
    ({"name": "x", "vfs": {"count": 2}}, "match: needs at least one of address"),
    ({"name": "x", "match": {"address": "3b:00"}, "vfs": {"count": 2}}, "'3b:00' is not a PCI address; accepted form: 0000:3b:00.0"),
    ({"name": "x", "match": {"vendor_id": 8086}, "vfs": {"count": 2}}, "must be quoted: 4 hex digits"),
    ({"name": "x", "match": {"vendor_id": "intel"}, "vfs": {"count": 2}}, "accepted form: 4 hex digits"),
    ({"name": "x", "match": {"family": "tpu"}, "vfs": {"count": 2}}, "'tpu' is not a family; accepted: gpu, fpga"),
    ({"name": "x", "match": {"family": "nic", "colour": 1}, "vfs": {"count": 2}}, "unknown key(s) colour"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": 0}}, "vfs.count: must be an integer from 1 to 65535, got 0"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": "many"}}, "vfs.count: must be an integer"),
    # quoted counts: only ASCII digits ("²" and "³" are digits to str.isdigit(), and int() then raised)
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": "\u00b2"}}, "vfs.count: must be an integer from 1 to 65535, got '\u00b2'"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": "\u0663"}}, "vfs.count: must be an integer from 1 to 65535"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": "1_0"}}, "vfs.count: must be an integer from 1 to 65535"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": "9" * 5001}}, "vfs.count: must be an integer from 1 to 65535, got '9999"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": 10 ** 5000}}, "got an integer of about 5000 digits"),
    ({"name": "x", "match": {"family": "gpu"}, "vgpu": {"type": "t", "count": 10 ** 8}}, "vgpu.count: must be an integer from 1 to 65535"),
    ({"name": "x", "match": {"family": "nic", "numa_node": 4096}, "vfs": {"count": 2}}, "match.numa_node: must be an integer from 0 to 1023"),
    ({"name": "x", "match": {"family": "gpu"}, "fpga": {"bitstream": "/b", "sha256": SHA, "function_id": GZIP_AFU}},
     "fpga functions need family fpga, not gpu"),
    ({"name": "x", "match": {"family": "fpga"}, "fpga": {"bitstream": "/b", "sha256": "abc", "function_id": GZIP_AFU}},
     "fpga.sha256: 'abc' is not valid; accepted form: 64 hex digits"),
    ({"name": "x", "match": {"family": "fpga"}, "fpga": {"sha256": SHA, "function_id": GZIP_AFU}},
     "fpga.bitstream: is required"),
    ({"name": "x", "match": {"family": "fpga"}, "fpga": {"bitstream": "/b", "sha256": SHA, "function_id": "gzip"}},
     "fpga.function_id: 'gzip' is not valid; accepted form: the AFU / xclbin UUID"),
    ({"name": "x", "match": {"family": "gpu"}, "vgpu": {"count": 2}}, "vgpu.type: is required"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": 2}, "placement": {"traits": ["gold"]}},
     "'gold' is not a valid custom trait"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": 2}, "nova": {"device_type": "vf"}},
     "nova.device_type: accepted: type-PCI, type-PF, type-VF"),
    ({"name": "x", "match": {"address": ["3b:00.0"], "count": 2}, "passthrough": {}}, "2 is more than the 1 address"),
    ({"name": "x", "match": {"family": "nic"}, "vfs": {"count": 2}, "reporter": "neutron"},
     "reporter: 'neutron' is not a reporter; accepted: nova, cyborg, accelops"),
])
def test_validate_names_entry_key_and_form(entry, message):
    with pytest.raises(d.DeclarationError) as err:
        d.validate([entry])
    assert message in str(err.value)
    assert str(err.value).startswith("accelerator_host_functions[0]")


@pytest.mark.parametrize("first, second", [("fast-net", "fast_net"), ("fast_net", "fast.net"), ("Fast.Net", "fast-net")])
def test_validate_refuses_two_names_that_become_one_trait(first, second):
    entries = [{"name": first, "match": {"family": "nic"}, "vfs": {"count": 2}},
               {"name": second, "match": {"family": "nic"}, "vfs": {"count": 2}}]
    with pytest.raises(d.DeclarationError) as err:
        d.validate(entries)
    assert ("%r and %r (entry 0) both become the trait CUSTOM_FUNCTION_FAST_NET" % (second, first)) in str(err.value)


def test_validate_refuses_non_list_duplicate_names_and_shared_addresses():
    with pytest.raises(d.DeclarationError, match="must be a list of function entries, got dict"):
        d.validate({"name": "x"})
    with pytest.raises(d.DeclarationError, match=r"\[1\] \(GZIP\)\.name: 'GZIP' is declared twice \(also entry 0\)"):
        d.validate([fpga(), fpga(name="GZIP")])
    a = {"name": "a", "match": {"address": "0000:d8:00.0"}, "vfs": {"count": 2}}
    b = {"name": "b", "match": {"address": "d8:00.0"}, "passthrough": {}}
    with pytest.raises(d.DeclarationError, match="0000:d8:00.0 is already given to function 'a'"):
        d.validate([a, b])


def test_validate_normalises():
    out = d.validate([{"name": "x710-vf", "match": {"address": "D8:00.0", "vendor_id": "0x8086"},
                       "vfs": {"count": "16", "driver": "vfio-pci"}}])[0]
    assert out["kind"] == "vfs"
    assert out["trait"] == "CUSTOM_FUNCTION_X710_VF"
    assert out["match"]["address"] == ["0000:d8:00.0"]
    assert out["match"]["vendor_id"] == "8086"
    assert out["vfs"] == {"count": 16, "driver": "vfio-pci", "vfs": []}
    assert out["nova"]["alias"] == "x710-vf"


# ------------------------------------------------------------------------------------------------ resolution

def by_addr(res):
    return {a["address"]: a for a in res["assignments"]}


def test_resolve_fpga_selector_without_count_takes_every_matching_card(lab):
    res = d.resolve([fpga(family="fpga", vendor_id="8086")], lab)
    got = by_addr(res)
    assert sorted(got) == ["0000:5e:00.0", "0000:86:00.0"]
    assert got["0000:5e:00.0"]["change_needed"] is False       # the OPAE card carries the gzip AFU already
    assert got["0000:86:00.0"]["change_needed"] is True
    assert got["0000:86:00.0"]["module"] == "accelops.lifecycle.fpga_program"
    assert got["0000:86:00.0"]["module_args"] == {"address": "0000:86:00.0", "bitstream": "/srv/gzip.gbs",
                                                  "sha256": SHA, "function_id": GZIP_AFU}
    assert res["problems"] == []
    assert res["function_names"][GZIP_AFU.replace("-", "")] == "gzip"
    assert res["summary"]["gzip"] == {"kind": "fpga", "cards": ["0000:5e:00.0", "0000:86:00.0"], "changes": 1,
                                      "blocked": []}


def test_resolve_count_prefers_a_card_that_already_carries_the_function(lab):
    # 86:00.0 carries nlb, 5e:00.0 does not: the carrying card wins although its address is higher.
    afu_86 = "9aeffe5f-8457-0612-c000-c9660d824272"
    res = d.resolve([fpga(name="nlb", afu=afu_86, family="fpga", vendor_id="8086", count=1)], lab)
    assert [a["address"] for a in res["assignments"]] == ["0000:86:00.0"]
    assert res["assignments"][0]["reason"] == "already carries nlb"
    assert res["assignments"][0]["change_needed"] is False


def test_resolve_count_skips_busy_cards_and_reports_shortfall(lab):
    busy = copy.deepcopy(lab)
    for rec in busy["accelerators"]:
        if rec["address"] == "0000:5e:00.0":
            rec["units"][0]["in_use"] = True
            rec["units"][0]["in_use_by"] = [{"kind": "domain", "name": "instance-00000001"}]
    res = d.resolve([fpga(name="other", afu=OTHER_AFU, family="fpga", vendor_id="8086", count=2)], busy)
    assert [a["address"] for a in res["assignments"]] == ["0000:86:00.0"]
    assert res["assignments"][0]["reason"] == "free card, lowest address"
    assert res["problems"] == ["other: wants 2 card(s), 1 available; in use and not carrying it: 0000:5e:00.0"]


def test_resolve_named_busy_card_is_blocked_with_evidence(lab):
    busy = copy.deepcopy(lab)
    for rec in busy["accelerators"]:
        if rec["address"] == "0000:86:00.0":
            rec["units"][0]["in_use"] = True
            rec["units"][0]["in_use_by"] = [{"kind": "domain", "name": "instance-0000002a"}]
    res = d.resolve([fpga(name="other", afu=OTHER_AFU, address="0000:86:00.0")], busy)
    a = res["assignments"][0]
    assert a["blocked"] is True and a["in_use"] is True and a["change_needed"] is True
    assert a["in_use_by"] == ["device 0000:86:00.0: domain instance-0000002a"]
    assert res["summary"]["other"]["blocked"] == ["0000:86:00.0"]


def test_resolve_a_card_serves_one_function_first_entry_wins(lab):
    res = d.resolve([fpga(name="a", address="0000:5e:00.0"),
                     fpga(name="b", afu=OTHER_AFU, family="fpga", vendor_id="8086")], lab)
    assert {a["address"]: a["function"] for a in res["assignments"]} == {"0000:5e:00.0": "a", "0000:86:00.0": "b"}


def test_resolve_vgpu_and_vfs(lab):
    decl = [
        {"name": "t4-2q", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "GRID T4-2Q", "count": 4}},
        {"name": "l40-8q", "match": {"family": "gpu", "device_id": "26b5"}, "vgpu": {"type": "NVIDIA L40-8Q", "count": 2}},
        {"name": "x710-vf", "match": {"family": "nic", "count": 1}, "vfs": {"count": 8, "driver": "vfio-pci"}},
    ]
    got = by_addr(d.resolve(decl, lab))
    assert got["0000:18:00.0"]["module_args"] == {"addresses": ["0000:18:00.0"], "type": "GRID T4-2Q", "count": 4}
    assert got["0000:3b:00.0"]["module"] == "accelops.lifecycle.vgpu"
    assert got["0000:d8:00.0"]["module_args"] == {"address": "0000:d8:00.0", "num_vfs": 8, "vf_driver": "vfio-pci"}
    assert "0000:d8:00.1" not in got
    assert all(a["change_needed"] for a in got.values())


def test_resolve_reports_what_cannot_be_met(lab):
    decl = [
        {"name": "a", "match": {"address": "0000:99:00.0"}, "passthrough": {}},
        {"name": "b", "match": {"address": "0000:5e:00.0"}, "vfs": {"count": 4}},
        {"name": "c", "match": {"family": "nic"}, "vfs": {"count": 65}},
        {"name": "d", "match": {"address": "0000:18:00.0", "vendor_id": "8086"}, "passthrough": {}},
    ]
    res = d.resolve(decl, lab)
    assert res["assignments"] == []
    assert res["problems"] == [
        "a: no device at 0000:99:00.0 on this host",
        "b: 0000:5e:00.0 cannot carry it: vfs.count 4 is more than its totalvfs 1",
        "c: no free device on this host matches family=nic",
        "d: 0000:18:00.0 cannot carry it: it does not match the other match keys",
    ]


def test_resolve_vf_address_points_at_its_pf(lab):
    rec = {"address": "0000:d8:02.0", "physfn": "0000:d8:00.0", "family": "nic"}
    res = d.resolve([{"name": "a", "match": {"address": "0000:d8:02.0"}, "passthrough": {}}],
                    lab["accelerators"] + [rec])
    assert res["problems"] == ["a: 0000:d8:02.0 is a VF; declare functions on its PF 0000:d8:00.0"]


def test_resolve_refuses_what_is_not_discovery():
    with pytest.raises(d.DeclarationError, match="expected the result of accelops.lifecycle.accelerator_info"):
        d.resolve([], {"hosts": []})
    with pytest.raises(d.DeclarationError, match="expected a list of accelerator_info records"):
        d.resolve([], ["0000:3b:00.0"])


def test_resolve_reads_folded_vf_units_of_vf_detail_summary():
    pf = {"address": "0000:d8:00.0", "family": "nic", "physfn": None, "units": [{"kind": "device", "in_use": False}],
          "sriov": {"totalvfs": 8, "numvfs": 2, "vfs": ["0000:d8:02.0", "0000:d8:02.1"], "vf_units": [
              {"kind": "vf", "id": "0000:d8:02.0", "address": "0000:d8:02.0", "driver": "vfio-pci", "in_use": False},
              {"kind": "vf", "id": "0000:d8:02.1", "address": "0000:d8:02.1", "driver": "vfio-pci", "in_use": True,
               "in_use_by": [{"kind": "domain", "name": "instance-00000007"}]}]}}
    same = d.resolve([{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": 2, "driver": "vfio-pci"}}], [pf])
    a = same["assignments"][0]
    assert a["change_needed"] is False and a["blocked"] is False
    assert a["in_use_by"] == ["vf 0000:d8:02.1: domain instance-00000007"]
    more = d.resolve([{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": 4, "driver": "vfio-pci"}}], [pf])
    assert more["assignments"][0]["blocked"] is True


def test_resolve_vgpu_selector_skips_cards_that_do_not_offer_the_type(lab):
    # the T4 lists its mdev types and the L40 type is not one of them; the L40 (no VFs yet) lists none: possible
    res = d.resolve([{"name": "l40", "match": {"family": "gpu"}, "vgpu": {"type": "NVIDIA L40-8Q", "count": 1}}], lab)
    assert [a["address"] for a in res["assignments"]] == ["0000:3b:00.0"]
    named = d.resolve([{"name": "t4", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "NVIDIA A40-12Q",
                                                                                     "count": 1}}], lab)
    assert named["problems"] == ["t4: 0000:18:00.0 cannot carry it: does not offer vGPU type 'NVIDIA A40-12Q'"]


def test_validate_says_quote_a_number():
    with pytest.raises(d.DeclarationError, match="12345678 was read as a number: quote it"):
        d.validate([{"name": "x", "match": {"family": "fpga"},
                     "fpga": {"bitstream": "/b", "sha256": SHA, "function_id": 12345678}}])


# ------------------------------------------------------------------------------------------------ reporters

def test_each_card_gets_one_reporter_from_its_entry_or_the_deployment(lab):
    decl = [fpga(family="fpga", vendor_id="8086"),
            {"name": "fast-net", "match": {"family": "nic"}, "vfs": {"count": 4}, "reporter": "accelops"}]
    res = d.resolve(decl, lab)
    nic = [a["address"] for a in res["assignments"] if a["function"] == "fast-net"]
    # auto: the families Cyborg's agent reports are Cyborg's, the rest Nova's when Nova's config comes from here
    reps = d.reporters(res, lab, d.check_reporting({"nova": True, "cyborg_families": ["fpga"]}))
    assert reps["0000:5e:00.0"] == reps["0000:86:00.0"] == "cyborg"
    assert nic and all(reps[a] == "accelops" for a in nic)        # the entry's own reporter wins
    reps = d.reporters(res, lab, d.check_reporting({"nova": True}))
    assert reps["0000:86:00.0"] == "nova"
    assert d.reporters(res, lab, d.check_reporting({}))["0000:86:00.0"] == "accelops"
    # one reporter named for the whole host covers the cards nothing declares too
    every = d.reporters(res, lab, d.check_reporting({"reporter": "nova"}))
    assert len(every) > len(res["assignments"]) and every["0000:86:00.0"] == "nova"
    assert all(every[a] == "accelops" for a in nic)


@pytest.mark.parametrize("reporting,message", [
    ("nova", "reporting: expected a dict with reporter"),
    ({"reporter": "neutron"}, "reporting.reporter: expected auto, nova, cyborg, accelops, got 'neutron'"),
    ({"nova": "yes"}, "reporting.nova: expected true or false"),
    ({"cyborg_families": ["tpu"]}, "reporting.cyborg_families: expected a list of gpu, fpga"),
    ({"colour": 1}, "reporting: unknown key(s) colour"),
])
def test_bad_reporting_is_refused_naming_the_key(reporting, message):
    with pytest.raises(d.DeclarationError, match=re.escape(message)):
        d.check_reporting(reporting)


# ------------------------------------------------------------------------------------------------ MIG

@pytest.fixture(scope="module")
def mig_lab(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("decl-mig") / "a100")
    accelsim.render_tree("gpu-mig-a100", root)
    return discover(Sysfs(root=root))


def test_a_mig_layout_is_a_declared_function_carried_only_when_every_instance_is_there(mig_lab):
    gpu = next(r for r in mig_lab["accelerators"] if (r.get("gpu") or {}).get("mig") is not None)
    have = sorted(gi["name"] for gi in gpu["gpu"]["mig"]["gpu_instances"])
    same = {"name": "same", "match": {"address": gpu["address"]}, "mig": {"layout": have}}
    other = {"name": "seven", "match": {"address": gpu["address"]}, "mig": {"layout": "7 x 1g.5gb"}}
    (a,) = d.resolve([same], mig_lab)["assignments"]
    assert a["change_needed"] is False and a["module"] == "accelops.lifecycle.nvidia_mig"
    (b,) = d.resolve([other], mig_lab)["assignments"]
    # the lab's GI 2 is held by a process: a layout change is blocked, with the evidence
    assert b["change_needed"] is True and b["blocked"] is True and "nvidia-cap21" in " ".join(b["in_use_by"])
    assert b["module_args"] == {"address": gpu["address"], "mode": "enabled", "layout": "7 x 1g.5gb"}


@pytest.mark.parametrize("mig,message", [
    ({"layout": "2 x 9g.99"}, "mig: layout: '9g.99' is not a MIG profile name"),
    ({"mode": "on", "layout": "1g.5gb"}, "mig.mode: 'on' is not a MIG mode; accepted: enabled, disabled"),
    ({}, "mig.layout: is required with mode enabled"),
    ({"layout": "1g.5gb", "colour": 1}, "unknown key(s) colour"),
])
def test_a_bad_mig_entry_is_refused_naming_the_key(mig, message):
    with pytest.raises(d.DeclarationError, match=re.escape(message)):
        d.validate([{"name": "m", "match": {"family": "gpu"}, "mig": mig}])
