# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nova/Cyborg config rendering: the output is parsed back as INI (configparser, repeated keys kept the way
oslo.config's MultiStrOpt reads them) and JSON, and checked against the declaration and the option formats that
Nova documents (nova/conf/pci.py, nova/conf/devices.py, the PCI passthrough and virtual GPU admin guides)."""

from __future__ import annotations

import configparser
import copy
import json
import os
import re

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import DeclarationError  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

# ----------------------------------------------------------------------------- Nova's documented formats

# [pci] device_spec: vendor_id, product_id, address | devname, and the tags Nova lists
SPEC_KEYS = {"vendor_id", "product_id", "address", "devname", "physical_network", "trusted", "remote_managed",
             "managed", "live_migratable", "resource_class", "traits", "one_time_use"}
# [pci] alias
ALIAS_KEYS = {"name", "product_id", "vendor_id", "device_type", "numa_policy", "resource_class", "traits",
              "live_migratable"}
STANDARD_RC = {"VGPU", "PGPU", "FPGA", "SRIOV_NET_VF", "PCI_DEVICE", "VCPU", "MEMORY_MB", "DISK_GB"}
CUSTOM = re.compile(r"^CUSTOM_[A-Z0-9_]{1,248}$")
HEX4 = re.compile(r"^[0-9a-f]{4}$")
ADDRESS = re.compile(r"^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
MDEV_CLASS = re.compile(r"^(VGPU|CUSTOM_[A-Z0-9_]+)$")


class _Multi(dict):
    def __setitem__(self, key, value):
        if isinstance(value, list) and key in self and isinstance(self[key], list):
            self[key].extend(value)
        else:
            super().__setitem__(key, value)


def parse_ini(text):
    """{section: {key: [values]}} with repeated keys kept (MultiStrOpt)."""
    p = configparser.RawConfigParser(strict=False, dict_type=_Multi, interpolation=None)
    p.optionxform = str
    p.read_string(text)
    return dict((s, dict((k, v.split("\n")) for k, v in p.items(s, raw=True))) for s in p.sections())


def check_address(addr):
    m = ADDRESS.match(addr)
    assert m, "not a full PCI address: %r" % addr
    assert int(m.group(3), 16) <= 0x1F, "slot above 0x1f: %r" % addr


def check_spec(spec):
    assert set(spec) <= SPEC_KEYS, "keys Nova does not know: %s" % (set(spec) - SPEC_KEYS)
    assert not ("address" in spec and "devname" in spec)
    assert HEX4.match(spec["vendor_id"]) and HEX4.match(spec["product_id"])
    check_address(spec["address"])
    if "managed" in spec:
        assert spec["managed"] in ("yes", "no")
    if "resource_class" in spec:
        assert spec["resource_class"] in STANDARD_RC or CUSTOM.match(spec["resource_class"])
    if "traits" in spec:
        assert all(CUSTOM.match(t) for t in spec["traits"].split(","))
    for v in spec.values():
        assert isinstance(v, str), "device_spec values are strings: %r" % (spec,)


def check_alias(alias):
    assert set(alias) <= ALIAS_KEYS, "keys Nova does not know: %s" % (set(alias) - ALIAS_KEYS)
    assert alias["name"]
    assert alias["device_type"] in ("type-PCI", "type-PF", "type-VF")
    assert ("vendor_id" in alias and "product_id" in alias) or "resource_class" in alias
    if "numa_policy" in alias:
        assert alias["numa_policy"] in ("legacy", "preferred", "required", "socket")
    if "traits" in alias:
        assert "resource_class" in alias or "product_id" in alias     # an alias with only traits is refused


def matched(spec, records):
    """Addresses a device_spec matches the way Nova's devspec does: the exact address, or, when the address is
    a PF's, its VFs (by parent address); vendor and product ids must match too."""
    out = []
    pfs = set(r["address"] for r in records if (r.get("sriov") or {}).get("totalvfs"))
    for r in records:
        if r["vendor_id"] != spec["vendor_id"] or r["device_id"] != spec["product_id"]:
            continue
        if r["address"] == spec["address"] or (spec["address"] in pfs and r.get("physfn") == spec["address"]):
            out.append(r["address"])
    return out


def check_conf(result, records):
    """Everything Nova would check at start, plus our own contract; returns the parsed INI."""
    ini = parse_ini(result["nova_conf"])
    assert result["nova_conf"].startswith(nc.MARKER + "\n")
    mdev_types = ini.get("devices", {}).get("enabled_mdev_types", [""])[0]
    types = [t for t in mdev_types.split(",") if t]
    seen = {}
    for t in types:
        sect = ini["mdev_%s" % t]
        assert MDEV_CLASS.match(sect["mdev_class"][0]) and len(sect["mdev_class"][0]) <= 255
        for addr in sect["device_addresses"][0].split(","):
            check_address(addr)
            assert addr not in seen, "Nova: duplicate types for PCI ID %s" % addr
            seen[addr] = t
        if "max_instances" in sect:
            assert int(sect["max_instances"][0]) >= 1
    pci = ini.get("pci", {})
    specs = [json.loads(v) for v in pci.get("device_spec", [])]
    aliases = [json.loads(v) for v in pci.get("alias", [])]
    assert specs == result["device_specs"] and aliases == result["aliases"]
    hit = []
    for s in specs:
        check_spec(s)
        m = matched(s, records)
        assert m, "a device_spec that matches no device: %r" % s
        hit.extend(m)
    assert len(hit) == len(set(hit)), "a device matched twice"
    by_addr = dict((r["address"], r) for r in records)
    for a in hit:
        assert by_addr[a].get("physfn") not in hit, "Nova refuses a PF and its VFs both configured (%s)" % a
    for a in aliases:
        check_alias(a)
    if "report_in_placement" in pci:
        assert pci["report_in_placement"] == ["True"]
        assert len(set(a["name"] for a in aliases)) == len(aliases), "one specification per alias name"
    return ini


# ----------------------------------------------------------------------------- the demo lab, programmed

SHA = "ab" * 32
GZIP = "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"


@pytest.fixture(scope="module")
def lab(fork_shared):
    """lab-all with the L40's VFs enabled and 4 of them typed NVIDIA L40-8Q, and 4 VFs on the first X710 port."""
    return fork_shared("novaconf-lab-all", _build_lab)


def _build_lab(where):
    root = os.path.join(where, "lab-all")
    h = accelsim.render_tree("lab-all", root)
    rc, _out, err = h.tool("sriov-manage", "-e", "0000:3b:00.0")
    assert rc == 0, err
    with h.transaction() as k:
        for vf in k.vfs("0000:3b:00.0")[:4]:
            k.set_vgpu_type(vf, "1145")
        k.set_numvfs("0000:d8:00.0", "4")
    return discover(Sysfs(root=root))


FUNCTIONS = [
    {"name": "t4-2q", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "GRID T4-2Q", "count": 1}},
    {"name": "l40-8q", "match": {"address": "0000:3b:00.0"}, "vgpu": {"type": "NVIDIA L40-8Q", "count": 4}},
    {"name": "x710-vf", "match": {"address": "0000:d8:00.0"}, "vfs": {"count": 4},
     "nova": {"numa_policy": "preferred"}, "placement": {"traits": ["CUSTOM_FAST_NET"]}},
    {"name": "qat", "match": {"family": "qat", "count": 2}, "passthrough": {}},
    {"name": "gzip", "match": {"address": "0000:5e:00.0"},
     "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": SHA, "function_id": GZIP}},
]


def records_of(lab):
    return lab["accelerators"]


def test_demo_host_renders_what_nova_accepts(lab):
    r = nc.render(FUNCTIONS, lab, {"host": "compute-01"})
    assert r["problems"] == []
    ini = check_conf(r, records_of(lab))
    assert "# host: compute-01" in r["nova_conf"]
    # the T4 is an mdev parent: the type by id, the card's address, class VGPU, no max_instances
    assert ini["devices"]["enabled_mdev_types"] == ["nvidia-231"]
    assert ini["mdev_nvidia-231"] == {"device_addresses": ["0000:18:00.0"], "mdev_class": ["VGPU"]}
    # the L40: its four typed VFs as PCI devices, managed no, one class for the function
    l40 = [s for s in r["device_specs"] if s["vendor_id"] == "10de"]
    assert [s["address"] for s in l40] == ["0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6", "0000:3b:00.7"]
    # the traits: the declared function's, and the one the collection's Placement code gives the vGPU type (Nova
    # writes a PCI provider's traits from the spec alone)
    assert all(s["managed"] == "no" and s["resource_class"] == "CUSTOM_VGPU_L40_8Q"
               and s["traits"] == "CUSTOM_FUNCTION_L40_8Q,CUSTOM_FUNCTION_NVIDIA_L40_8Q" for s in l40)
    pac = [s for s in r["device_specs"] if s["address"] == "0000:5e:00.0"]
    assert pac[0]["traits"].split(",")[0] == "CUSTOM_FUNCTION_GZIP"
    assert pac[0]["traits"].split(",")[1].startswith("CUSTOM_FPGA_FUNCTION_ID_INTEL_")
    assert matched(l40[0], records_of(lab)) == ["0000:3b:00.4"]
    # the X710 VFs: one spec by PF address and VF id, which matches exactly its 4 VFs
    nic = [s for s in r["device_specs"] if s["product_id"] == "154c"]
    assert nic == [{"address": "0000:d8:00.0", "product_id": "154c", "vendor_id": "8086",
                    "traits": "CUSTOM_FUNCTION_X710_VF,CUSTOM_FAST_NET"}]
    pf = [x for x in records_of(lab) if x["address"] == "0000:d8:00.0"][0]
    assert matched(nic[0], records_of(lab)) == sorted(pf["sriov"]["vfs"]) and len(pf["sriov"]["vfs"]) == 4
    # whole devices: the two chosen QAT cards and the PAC, SR-IOV capable -> type-PF
    qat = [s["address"] for s in r["device_specs"] if s["product_id"] == "37c8"]
    assert qat == r["resolution"]["summary"]["qat"]["cards"] and len(qat) == 2
    aliases = dict((a["name"], a) for a in r["aliases"])
    assert aliases == {
        "gzip": {"name": "gzip", "device_type": "type-PF", "vendor_id": "8086", "product_id": "09c4",
                 "traits": "CUSTOM_FUNCTION_GZIP"},
        "l40-8q": {"name": "l40-8q", "device_type": "type-VF", "vendor_id": "10de", "product_id": "26b5",
                   "resource_class": "CUSTOM_VGPU_L40_8Q", "traits": "CUSTOM_FUNCTION_L40_8Q"},
        "qat": {"name": "qat", "device_type": "type-PF", "vendor_id": "8086", "product_id": "37c8",
                "traits": "CUSTOM_FUNCTION_QAT"},
        "x710-vf": {"name": "x710-vf", "device_type": "type-VF", "vendor_id": "8086", "product_id": "154c",
                    "numa_policy": "preferred", "traits": "CUSTOM_FUNCTION_X710_VF"},
    }
    assert r["functions"]["t4-2q"]["handled_by"] == "nova-mdev"
    assert r["functions"]["gzip"]["handled_by"] == "nova-pci"
    assert r["cyborg_conf"] == "" and r["cyborg_drivers"] == []


def test_rendering_is_deterministic(lab):
    a = nc.render(FUNCTIONS, lab)
    b = nc.render(list(reversed(copy.deepcopy(FUNCTIONS[:1]))) + copy.deepcopy(FUNCTIONS[1:]), copy.deepcopy(lab))
    assert a["nova_conf"] == b["nova_conf"]


def test_mdev_type_by_id_and_custom_class(lab):
    fns = [{"name": "t4", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "nvidia-231", "count": 1},
            "placement": {"resource_class": "CUSTOM_T4_2Q"}}]
    r = nc.render(fns, lab)
    ini = check_conf(r, records_of(lab))
    assert ini["mdev_nvidia-231"]["mdev_class"] == ["CUSTOM_T4_2Q"]


def test_mdev_class_nova_refuses_is_reported(lab):
    fns = [{"name": "t4", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "nvidia-231", "count": 1},
            "placement": {"resource_class": "PGPU"}}]
    r = nc.render(fns, lab)
    assert any("cannot be an mdev_class" in p for p in r["problems"])
    assert parse_ini(r["nova_conf"])["mdev_nvidia-231"]["mdev_class"] == ["VGPU"]


def test_mdev_type_the_card_does_not_offer(lab):
    fns = [{"name": "t4", "match": {"address": "0000:18:00.0"}, "vgpu": {"type": "GRID T4-3Q", "count": 1}}]
    r = nc.render(fns, lab)
    # the declaration's resolution refuses the card already (novaconf keeps its own check for other inputs)
    assert any("does not offer vGPU type 'GRID T4-3Q'" in p for p in r["problems"])
    assert "devices" not in parse_ini(r["nova_conf"])


def test_legacy_pci_tracker_has_no_placement_keys(lab):
    r = nc.render(FUNCTIONS, lab, {"report_in_placement": False})
    ini = check_conf(r, records_of(lab))
    assert "report_in_placement" not in ini["pci"]
    assert all("traits" not in a and "resource_class" not in a for a in r["aliases"])


def test_cyborg_takes_the_fpgas(lab):
    fns = FUNCTIONS + [{"name": "dfl", "match": {"address": "0000:86:00.0"},
                        "fpga": {"bitstream": "/srv/x.gbs", "sha256": SHA, "function_id": GZIP}}]
    r = nc.render(fns, lab, {"cyborg_families": ["fpga"]})
    check_conf(r, records_of(lab))
    assert r["cyborg_drivers"] == ["intel_fpga_driver"]
    assert parse_ini(r["cyborg_conf"]) == {"agent": {"enabled_drivers": ["intel_fpga_driver"]}}
    assert not any(s["address"] in ("0000:5e:00.0", "0000:86:00.0") for s in r["device_specs"])
    assert "gzip" not in [a["name"] for a in r["aliases"]]
    # the D5005 runs the DFL driver, which Cyborg's Intel driver cannot read: said, not hidden
    assert any("0000:86:00.0 uses the upstream DFL driver" in p for p in r["problems"])


def test_physical_network_makes_a_neutron_spec(lab):
    r = nc.render(FUNCTIONS[2:3], lab, {"physical_networks": {"x710-vf": "physnet1"}})
    check_conf(r, records_of(lab))
    assert r["device_specs"] == [{"address": "0000:d8:00.0", "product_id": "154c", "vendor_id": "8086",
                                  "physical_network": "physnet1"}]
    assert r["aliases"] == []
    # the same from the declaration's own nova.physical_network
    declared = [dict(FUNCTIONS[2], nova={"physical_network": "physnet1"})]
    assert nc.render(declared, lab)["device_specs"] == r["device_specs"]


def test_cards_with_different_ids_need_a_class(lab):
    fns = [{"name": "gz", "match": {"family": "fpga", "vendor_id": "8086"},
            "fpga": {"bitstream": "/srv/x.gbs", "sha256": SHA, "function_id": GZIP}}]
    r = nc.render(fns, lab)
    assert any("declare placement.resource_class" in p for p in r["problems"])
    fns[0]["placement"] = {"resource_class": "CUSTOM_GZIP"}
    r = nc.render(fns, lab)
    assert r["problems"] == []
    check_conf(r, records_of(lab))
    assert r["aliases"] == [{"name": "gz", "device_type": "type-PF", "resource_class": "CUSTOM_GZIP",
                             "traits": "CUSTOM_FUNCTION_GZ"}]
    # legacy tracker: one name may have several specifications (any of them)
    fns[0]["placement"] = {}
    r = nc.render(fns, lab, {"report_in_placement": False})
    assert r["problems"] == [] and [a["product_id"] for a in r["aliases"]] == ["09c4", "0b2b"]


def test_declared_nova_keys_win(lab):
    fns = copy.deepcopy(FUNCTIONS[3:4])
    fns[0]["nova"] = {"alias": "crypto", "device_type": "type-PCI", "managed": False, "numa_policy": "socket"}
    r = nc.render(fns, lab)
    check_conf(r, records_of(lab))
    assert r["aliases"][0]["name"] == "crypto" and r["aliases"][0]["device_type"] == "type-PCI"
    assert r["aliases"][0]["numa_policy"] == "socket"
    assert all(s["managed"] == "no" for s in r["device_specs"])


def test_nothing_declared_keeps_report_in_placement_on(lab):
    # Nova reads a missing report_in_placement as False, and a node that reported PCI before stops reporting
    r = nc.render([], lab, {"host": "h"})
    assert parse_ini(r["nova_conf"]) == {"pci": {"report_in_placement": ["True"]}}
    assert r["nova_conf"].startswith(nc.MARKER)
    off = nc.render([], lab, {"host": "h", "report_in_placement": False})
    assert parse_ini(off["nova_conf"]) == {} and off["nova_conf"].startswith(nc.MARKER)
    assert r["alias_conf"] == nc.MARKER + "\n# Do not edit: the next run overwrites it. Change the declaration instead.\n"


def test_resolution_problems_are_passed_on(lab):
    r = nc.render([{"name": "x", "match": {"address": "0000:99:00.0"}, "passthrough": {}}], lab)
    assert r["problems"] == ["x: no device at 0000:99:00.0 on this host"]


@pytest.mark.parametrize("options,message", [
    ({"report_in_placement": "yes"}, "report_in_placement: must be true or false"),
    ({"cyborg_families": ["tpu"]}, "cyborg_families: a list of families Cyborg has drivers for"),
    ({"physical_networks": {"x": 1}}, "physical_networks: a mapping of function name"),
    ({"colour": 1}, "unknown option(s) colour"),
])
def test_bad_options(lab, options, message):
    with pytest.raises(nc.NovaConfigError, match=re.escape(message)):
        nc.render(FUNCTIONS, lab, options)


def test_bad_declaration_is_the_declarations_error(lab):
    with pytest.raises(DeclarationError, match=r"vfs\.count"):
        nc.render([{"name": "x", "match": {"family": "nic"}, "vfs": {"count": 0}}], lab)


# ----------------------------------------------------------------------------- the unprogrammed L40

def test_unprogrammed_vendor_vfio_card_is_a_problem(tmp_path):
    root = str(tmp_path / "l40")
    accelsim.render_tree("gpu-vendor-vfio", root)
    r = nc.render(FUNCTIONS[1:2], discover(Sysfs(root=root)))
    assert r["problems"] == ["l40-8q: the VFs of 0000:3b:00.0 are not enabled yet, so their addresses are unknown: "
                             "program the card (accelops.lifecycle.vgpu) and render again"]
    assert r["device_specs"] == [] and r["aliases"] == []


def test_vendor_vfio_prediction_follows_the_vgpu_module(tmp_path):
    """VFs enabled, two typed: those are kept, then the lowest free ones (what accelops.lifecycle.vgpu does)."""
    root = str(tmp_path / "l40")
    h = accelsim.render_tree("gpu-vendor-vfio", root)
    assert h.tool("sriov-manage", "-e", "0000:3b:00.0")[0] == 0
    with h.transaction() as k:
        vfs = k.vfs("0000:3b:00.0")
        k.set_vgpu_type(vfs[5], "1145")
        k.set_vgpu_type(vfs[9], "1145")
    disc = discover(Sysfs(root=root))
    r = nc.render(FUNCTIONS[1:2], disc)
    want = sorted([vfs[5], vfs[9], vfs[0], vfs[1]])
    assert [s["address"] for s in r["device_specs"]] == want
    check_conf(r, disc["accelerators"])


# ----------------------------------------------------------------------------- shapes the labs do not have

def _gpu_with_mdev_vfs():
    """An Ampere-style SR-IOV GPU whose VFs are the mdev parents (vGPU 13-16), one VF already has an mdev."""
    pf = {"address": "0000:41:00.0", "family": "gpu", "vendor_id": "10de", "device_id": "2235", "physfn": None,
          "handler": "nvidia", "numa_node": 0, "driver": "nvidia",
          "sriov": {"totalvfs": 4, "numvfs": 4, "vf_device_id": "2235",
                    "vfs": ["0000:41:00.4", "0000:41:00.5", "0000:41:00.6", "0000:41:00.7"]},
          "gpu": {"mdev_types": [], "vgpu_vfs": []}, "units": [{"kind": "device", "in_use": False}]}
    vfs = []
    for i, a in enumerate(pf["sriov"]["vfs"]):
        mdevs = ["u-%d" % i] if i == 2 else []
        vfs.append({"address": a, "family": "gpu", "vendor_id": "10de", "device_id": "2235", "physfn": pf["address"],
                    "handler": "nvidia", "sriov": {"totalvfs": 0, "numvfs": 0, "vfs": []},
                    "gpu": {"mdev_types": [{"id": "nvidia-558", "name": "NVIDIA A40-2Q", "mdevs": mdevs,
                                            "available_instances": 0 if mdevs else 1}]},
                    "units": [{"kind": "vf", "in_use": False}]})
    return [pf] + vfs


def test_mdev_on_vfs_lists_the_vfs_and_caps_the_type():
    recs = _gpu_with_mdev_vfs()
    fns = [{"name": "a40", "match": {"address": "0000:41:00.0"}, "vgpu": {"type": "NVIDIA A40-2Q", "count": 2}}]
    r = nc.render(fns, recs)
    ini = check_conf(r, recs)
    # the VF carrying an mdev first, then the lowest free one; max_instances = the declared vGPUs
    assert ini["mdev_nvidia-558"] == {"device_addresses": ["0000:41:00.4,0000:41:00.6"], "mdev_class": ["VGPU"],
                                      "max_instances": ["2"]}


def test_vfs_sharing_the_pf_ids_are_listed_one_by_one():
    pf = {"address": "0000:82:00.0", "family": "nic", "vendor_id": "15b3", "device_id": "101e", "physfn": None,
          "handler": "nic", "sriov": {"totalvfs": 8, "numvfs": 2, "vf_device_id": "101e",
                                      "vfs": ["0000:82:00.2", "0000:82:00.3"]},
          "units": [{"kind": "device", "in_use": False}]}
    vfs = [{"address": a, "family": "nic", "vendor_id": "15b3", "device_id": "101e", "physfn": pf["address"],
            "handler": "nic", "sriov": {"totalvfs": 0, "numvfs": 0, "vfs": []}, "units": [{"kind": "vf", "in_use": False}]}
           for a in pf["sriov"]["vfs"]]
    fns = [{"name": "cx", "match": {"address": "0000:82:00.0"}, "vfs": {"count": 2}}]
    r = nc.render(fns, [pf] + vfs)
    check_conf(r, [pf] + vfs)    # a spec by PF address would match the PF as well: Nova refuses that
    assert [s["address"] for s in r["device_specs"]] == ["0000:82:00.2", "0000:82:00.3"]


# ----------------------------------------------------------------------------- aliases for the API nodes

def test_merge_aliases_of_several_hosts(lab):
    a = nc.render(FUNCTIONS, lab)
    b = nc.render(FUNCTIONS[2:], lab)
    m = nc.merge_aliases([a, b])
    assert m["problems"] == []
    assert [x["name"] for x in m["aliases"]] == ["gzip", "l40-8q", "qat", "x710-vf"]
    ini = parse_ini(m["alias_conf"])
    assert [json.loads(v) for v in ini["pci"]["alias"]] == m["aliases"]
    other = copy.deepcopy(a["aliases"])
    other[0]["traits"] = "CUSTOM_OTHER"
    assert "differs between hosts" in nc.merge_aliases([a, other])["problems"][0]


def test_mdev_only_host_keeps_report_in_placement_on(lab):
    r = nc.render([FUNCTIONS[0]], lab, {"host": "h"})
    ini = parse_ini(r["nova_conf"])
    assert ini["devices"]["enabled_mdev_types"] == ["nvidia-231"]
    assert ini["pci"] == {"report_in_placement": ["True"]}
