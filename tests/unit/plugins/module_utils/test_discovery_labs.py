# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Discovery against every simulated lab host: each fact asserted against the lab description.

Each lab is rendered as a plain tree; SR-IOV PFs get a few VFs enabled, one vGPU VF gets a type, and units are
marked in use by a domain and by a process, so that VFs, vGPU types and in-use evidence are exercised too.
"""

from __future__ import annotations

import os

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

LABS = list(accelsim.lab_names())
QAT_IDS = {0x0435, 0x0443, 0x37c8, 0x37c9, 0x19e2, 0x19e3, 0x4940, 0x4941, 0x4942, 0x4943, 0x4944, 0x4945}


# AMD Instinct and Intel Data Center GPU SR-IOV cards (claimed by id: an MI300X is class 12, not 03)
SRIOV_GPU_IDS = {(0x1002, 0x74a1), (0x1002, 0x740f), (0x8086, 0x56c0), (0x8086, 0x0bd5)}


def _family(f):
    if f.get("gpu") or f.get("vgpu") or (f["vendor"] == 0x10DE and f["class"] >> 16 == 3):
        return "gpu"
    if (f["vendor"], f["device"]) in SRIOV_GPU_IDS:
        return "gpu"
    if f.get("fpga") or f.get("alveo"):
        return "fpga"
    if f["vendor"] == 0x8086 and f["device"] in QAT_IDS:
        return "qat"
    if f["class"] >> 16 == 2 and f.get("sriov"):
        return "nic"
    return "pci"


@pytest.fixture(scope="module", params=LABS)
def lab_run(request, fork_shared):
    return fork_shared("discovery-labs-" + request.param, lambda where: _run_lab(request.param, where))


def _run_lab(name, where):
    lab = accelsim.load_lab(name)
    dest = os.path.join(where, name)
    sim = accelsim.render_tree(name, dest)
    enabled = {}
    vgpu_set = None
    with sim.transaction() as h:
        for f in lab["functions"]:
            s = f.get("sriov")
            if s and h.driver_of(f["bdf"]):
                if s["configurable"]:
                    h.set_numvfs(f["bdf"], str(min(4, s["totalvfs"])))
                # else the PF's driver enabled its VFs at boot (AMD's gim) and refuses sriov_numvfs
                enabled[f["bdf"]] = h.vfs(f["bdf"])
        for f in lab["functions"]:
            if f.get("vgpu") and enabled.get(f["bdf"]):
                vf = enabled[f["bdf"]][0]
                # the smallest type: in single-type mode the other VFs then still offer it (a type no VF
                # offers any more cannot be named from sysfs; see docs/discovery.md)
                t = h.creatable_vgpu_types(vf)[0]  # on a GPU in MIG mode: a MIG-backed type with a free instance
                h.set_vgpu_type(vf, str(t["id"]))
                vgpu_set = (vf, t)
                break
    marked = {}
    for pf, vfs in sorted(enabled.items()):
        if vfs:
            marked[vfs[-1]] = ("domain", sim.mark_in_use(vfs[-1], by="domain", name="dom-" + vfs[-1][-4:]))
            break
    for f in lab["functions"]:
        # (not a PF that gave its port to a VF bound to the FPGA driver: the host has no VFIO group for that card)
        if (f.get("fpga") and not f["fpga"]["port_released"]) or f.get("alveo"):
            marked[f["bdf"]] = ("process", sim.mark_in_use(f["bdf"], by="process", name="qemu-kvm"))
            break
    with sim.transaction() as h:
        groups = dict((b, h.dyn(b)["iommu_group"]) for b in h.bdfs())
    result = discover(Sysfs(dest), include_all=True)
    return {"lab": lab, "result": result, "enabled": enabled, "vgpu_set": vgpu_set, "marked": marked,
            "groups": groups, "dest": dest}


def _recs(run):
    return dict((r["address"], r) for r in run["result"]["accelerators"])


def test_no_warnings(lab_run):
    res = lab_run["result"]
    assert res["warnings"] == []
    assert dict((r["address"], r["warnings"]) for r in res["accelerators"] if r["warnings"]) == {}


def _mgmt(lab_run):
    return set(f["bdf"] for f in lab_run["lab"]["functions"] if (f.get("alveo") or {}).get("role") == "mgmt")


def test_every_function_is_reported_once(lab_run):
    """With include_all every function lspci lists (the lab's and the VFs enabled) has one record (issue 18,
    defect 9: an Alveo's management PF too, besides its place in the user PF's record); with vf_detail summary
    a VF whose PF is reported is a unit of that PF's record instead."""
    recs = _recs(lab_run)
    expected = set(f["bdf"] for f in lab_run["lab"]["functions"])
    for vfs in lab_run["enabled"].values():
        expected.update(vfs)
    assert set(recs) == expected
    assert len(recs) == len(lab_run["result"]["accelerators"])
    assert lab_run["result"]["host"]["pci_functions"] == len(expected)
    summary = discover(Sysfs(lab_run["dest"]), include_all=True, vf_detail="summary", nvidia_smi="never")
    folded = [u["address"] for r in summary["accelerators"] for u in r["sriov"]["vf_units"] or [] if u["kind"] == "vf"]
    records = [r["address"] for r in summary["accelerators"]]
    assert sorted(records + folded) == sorted(expected)


def test_management_pf_is_a_pci_record_of_its_own_only_with_include_all(lab_run):
    mgmt = _mgmt(lab_run)
    recs = _recs(lab_run)
    users = [r for r in recs.values() if r["handler"] == "xilinx"]
    assert set(r["fpga"]["management_address"] for r in users) == mgmt
    for address in mgmt:
        r = recs[address]
        assert (r["family"], r["handler"], r["fpga"], r["function"]) == ("pci", "pci", None, None), r
        assert [u["id"] for u in r["units"]] == [address]
    default = discover(Sysfs(lab_run["dest"]), nvidia_smi="never")
    assert not mgmt & set(r["address"] for r in default["accelerators"])
    pci_only = discover(Sysfs(lab_run["dest"]), families=["pci"], nvidia_smi="never")
    assert mgmt <= set(r["address"] for r in pci_only["accelerators"])


def test_pci_identity(lab_run):
    recs = _recs(lab_run)
    mgmt = _mgmt(lab_run)
    for f in lab_run["lab"]["functions"]:
        r = recs[f["bdf"]]
        assert r["vendor_id"] == "%04x" % f["vendor"], f["bdf"]
        assert r["device_id"] == "%04x" % f["device"], f["bdf"]
        assert r["subsystem_vendor_id"] == "%04x" % f["subsystem_vendor"], f["bdf"]
        assert r["subsystem_device_id"] == "%04x" % f["subsystem_device"], f["bdf"]
        assert r["class_id"] == "%06x" % f["class"], f["bdf"]
        assert r["revision"] == "%02x" % f["revision"], f["bdf"]
        assert r["driver"] == f.get("driver"), f["bdf"]
        assert r["driver_override"] is None
        assert r["numa_node"] == (f["numa_node"] if f["numa_node"] >= 0 else None), f["bdf"]
        assert r["local_cpulist"] == f["local_cpulist"], f["bdf"]
        assert r["iommu_group"] == f["iommu_group"], f["bdf"]
        assert f["bdf"] in r["iommu_group_members"]
        if f.get("link"):
            assert r["link"] == {"speed": f["link"]["speed"], "width": f["link"]["width"],
                                 "max_speed": f["link"]["max_speed"], "max_width": f["link"]["max_width"]}
        else:
            assert r["link"] is None
        assert r["vendor_name"], f["bdf"]  # every lab vendor is in pci.ids
        assert r["family"] == ("pci" if f["bdf"] in mgmt else _family(f)), f["bdf"]
        assert r["physfn"] is None


def test_sriov_pf_and_vfs(lab_run):
    recs = _recs(lab_run)
    for f in lab_run["lab"]["functions"]:
        s = f.get("sriov")
        if not s:
            continue
        r = recs.get(f["bdf"])
        vfs = lab_run["enabled"].get(f["bdf"], [])
        assert r["sriov"]["totalvfs"] == s["totalvfs"]
        assert r["sriov"]["vf_device_id"] == "%04x" % s["vf_device"]
        assert r["sriov"]["numvfs"] == len(vfs)
        assert r["sriov"]["vfs"] == vfs
        for i, vf in enumerate(vfs):
            v = recs[vf]
            assert v["physfn"] == f["bdf"] and v["vf_index"] == i
            assert v["device_id"] == "%04x" % s["vf_device"]
            assert v["driver"] == s["vf_driver"]
            assert v["family"] == r["family"]
            assert v["units"][0]["kind"] == "vf" and v["units"][0]["id"] == vf
            assert v["iommu_group"] == lab_run["groups"][vf]


def test_gpu_facts(lab_run):
    recs = _recs(lab_run)
    lab = lab_run["lab"]
    for f in lab["functions"]:
        r = recs.get(f["bdf"])
        if f.get("mdev"):
            types = r["gpu"]["mdev_types"]
            assert [(t["id"], t["name"], t["max_instances"], t["description"]) for t in types] == \
                [(t["id"], t["name"], t["max_instances"], t["description"]) for t in f["mdev"]["types"]]
            assert r["programming_model"] == "single"
            mine = [m for m in lab["mdevs"] if m["parent"] == f["bdf"]]
            assert [(m["uuid"], m["type"]) for m in r["gpu"]["mdevs"]] == [(m["uuid"], m["type"]) for m in mine]
            units = [u for u in r["units"] if u["kind"] == "mdev"]
            assert [u["id"] for u in units] == [m["uuid"] for m in mine]
            if mine:
                name = dict((t["id"], t["name"]) for t in f["mdev"]["types"])[mine[0]["type"]]
                assert r["function"]["id"] == mine[0]["type"] and r["function"]["name"] == name
        if f.get("vgpu") and lab_run["enabled"].get(f["bdf"]):
            names = dict((str(t["id"]), t["name"]) for t in f["vgpu"]["types"])
            vf, t = lab_run["vgpu_set"]
            seen = dict((x["id"], x["name"]) for x in r["gpu"]["vgpu_types"])
            assert str(t["id"]) in seen
            assert all(names[k] == v for k, v in seen.items())
            assert [v["address"] for v in r["gpu"]["vgpu_vfs"]] == lab_run["enabled"][f["bdf"]]
            v = recs[vf]
            assert v["gpu"]["vgpu"]["current_type"] == {"id": str(t["id"]), "name": t["name"]}
            assert v["function"]["name"] == t["name"] and v["units"][0]["type"] == str(t["id"])
            if (r["gpu"]["mig"] or {}).get("vgpus"):  # MIG-backed vGPU: the GPU's function is its layout
                assert r["function"]["name"].startswith("MIG ") and r["gpu"]["mig"]["vgpus"][0]["address"] == vf
            else:
                assert r["function"]["name"] == t["name"]
        if (f.get("gpu") or {}).get("mig"):
            lab_mig = f["gpu"]["mig"]
            m = r["gpu"]["mig"]
            assert (m["mode_current"], m["mode_pending"]) == (lab_mig["mode"], lab_mig.get("pending", lab_mig["mode"]))
            assert sorted((g["id"], g["profile_id"], g["placement"]) for g in m["gpu_instances"]) == sorted(
                (g["id"], g["profile_id"], g["placement"]) for g in lab_mig["gpu_instances"])
            assert len(m["compute_instances"]) == sum(len(g.get("compute_instances") or [])
                                                      for g in lab_mig["gpu_instances"])
            # every profile the card offers, none with more free instances than its total
            assert m["profiles"] and all(0 <= p["instances_free"] <= p["instances_total"] for p in m["profiles"])
            assert r["programming_model"] == ("dynamic" if lab_mig["mode"] == "Enabled" else "fixed")
        elif f.get("gpu") or f.get("vgpu"):
            assert r["gpu"]["mig"] is None  # the other lab GPUs are not MIG capable


def test_fpga_facts(lab_run):
    recs = _recs(lab_run)
    for f in lab_run["lab"]["functions"]:
        g = f.get("fpga")
        if g:
            r = recs[f["bdf"]]
            assert r["handler"] == "intel_fpga" and r["programming_model"] == "dynamic"
            assert r["fpga"]["layout"] == g["layout"]
            assert [x["interface_id"] for x in r["fpga"]["regions"]] == [g["interface_id"]]
            port_vfs = lab_run["enabled"].get(f["bdf"]) if g["port_released"] else None
            if port_vfs:  # the port (the loaded AFU) is the VF's; the PF keeps the FME
                assert r["fpga"]["ports"] == [] and r["function"] is None
                r = recs[port_vfs[0]]
                assert r["fpga"]["regions"] == [] and r["physfn"] == f["bdf"]
            assert [x["afu_id"] for x in r["fpga"]["ports"]] == [g["afu_id"]]
            assert r["healthy"] is True and r["fpga"]["healthy"] is True
            assert r["function"]["id"] == g["afu_id"]
            r = recs[f["bdf"]]
            assert r["fpga"]["bitstream_id"] == g["bitstream_id"]
        a = f.get("alveo")
        if a and a["role"] == "mgmt":
            user = [x for x in lab_run["lab"]["functions"] if (x.get("alveo") or {}).get("mgmt") == f["bdf"]][0]
            r = recs[user["bdf"]]
            assert r["handler"] == "xilinx" and r["fpga"]["layout"] == "xrt"
            assert r["fpga"]["management_address"] == f["bdf"] and r["fpga"]["user_address"] == user["bdf"]
            assert [x["interface_id"] for x in r["fpga"]["regions"]] == [a["interface_uuid"].replace("-", "")]
            assert r["fpga"]["bitstream_id"] == a["logic_uuid"].replace("-", "")
            assert r["fpga"]["board"] == a.get("board")
            assert r["programming_model"] == "single" and r["healthy"] is True


def test_nic_facts(lab_run):
    recs = _recs(lab_run)
    for f in lab_run["lab"]["functions"]:
        if f.get("net") and f.get("sriov"):
            r = recs[f["bdf"]]
            assert [(i["name"], i["mac"]) for i in r["nic"]["interfaces"]] == [(n["name"], n["mac"]) for n in f["net"]]
            for i, vf in enumerate(lab_run["enabled"].get(f["bdf"], [])):
                ifs = recs[vf]["nic"]["interfaces"]
                assert [x["name"] for x in ifs] == ["%sv%d" % (f["net"][0]["name"], i)]
                assert ifs[0]["mac"]


def test_qat_facts(lab_run):
    recs = _recs(lab_run)
    for f in lab_run["lab"]["functions"]:
        if _family(f) == "qat":
            r = recs[f["bdf"]]
            assert r["handler"] == "qat" and r["qat"]["product"] == "c62x"
            assert r["programming_model"] == "fixed"


def test_in_use(lab_run):
    recs = _recs(lab_run)
    lab = lab_run["lab"]
    busy = set()
    for unit, (kind, name) in lab_run["marked"].items():
        r = recs[unit]
        if kind == "process" and not lab_run["result"]["host"]["processes_scanned"]:
            # no VFIO group node on this host (xilinx-alveo: the marked management PF is bound to xclmgmt), so no
            # process can hold one and the process scan is skipped
            continue
        u = r["units"][0]
        assert u["in_use"], unit
        ev = u["in_use_by"][0]
        assert ev["kind"] == kind
        if kind == "domain":
            assert ev["name"] == name and ev["evidence"] == "/run/libvirt/qemu/%s.xml" % name
        else:
            assert ev["pid"] == int(name) and ev["evidence"].endswith("-> /dev/vfio/%d" % lab_run["groups"][unit])
        busy.add(unit)
    for d in lab.get("domains") or []:
        pass
    running = set(m["uuid"] for m in lab.get("mdevs") or [])
    for r in recs.values():
        for u in r["units"]:
            if u["id"] not in busy and u["id"] not in running:
                assert not u["in_use"], (u["id"], u["in_use_by"])
