# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vf_detail: summary folds a reported PF's VFs into its record; nothing a consumer needs is lost.

Both modes run on the same simulated lab host (lab-all with VFs enabled on every SR-IOV PF, a vGPU type set on
one VF, one VF in use by a domain) and are compared record by record, and through the Placement planner.
"""

from __future__ import annotations

import copy
import os
import shutil

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.filter.accelerator_summary import accelerator_summary  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement, _vocab  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import OptionError, discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

EXTRA = ("vf_index", "driver", "mac", "netdev")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    lab = accelsim.load_lab("lab-all")
    dest = str(tmp_path_factory.mktemp("lab") / "lab-all")
    sim = accelsim.render_tree("lab-all", dest)
    enabled = {}
    with sim.transaction() as h:
        for f in lab["functions"]:
            s = f.get("sriov")
            if s and h.driver_of(f["bdf"]):
                h.set_numvfs(f["bdf"], str(min(6, s["totalvfs"])))
                enabled[f["bdf"]] = h.vfs(f["bdf"])
        for f in lab["functions"]:
            if f.get("vgpu") and enabled.get(f["bdf"]):
                h.set_vgpu_type(enabled[f["bdf"]][1], str(f["vgpu"]["types"][0]["id"]))
    busy = sorted(enabled.items())[0][1][2]
    sim.mark_in_use(busy, by="domain", name="dom-busy")
    return {"root": dest, "enabled": enabled, "busy": busy}


def _run(lab, **kw):
    kw.setdefault("nvidia_smi", "never")
    return discover(Sysfs(lab["root"]), include_all=True, **kw)


def test_summary_keeps_every_vf_unit_and_fact(lab):
    full = _run(lab)
    summ = _run(lab, vf_detail="summary")
    assert full["host"]["vf_detail"] == "full" and summ["host"]["vf_detail"] == "summary"
    frecs = dict((r["address"], r) for r in full["accelerators"])
    srecs = dict((r["address"], r) for r in summ["accelerators"])
    vfs = set(a for v in lab["enabled"].values() for a in v)
    fpga_vfs = set(a for a in vfs if frecs[a]["family"] == "fpga")
    assert len(vfs) > 20 and fpga_vfs  # lab-all has a D5005 whose port VF is an accelerator of its own
    assert set(srecs) == set(frecs) - (vfs - fpga_vfs)
    for addr in fpga_vfs:
        assert srecs[addr] == frecs[addr]
    for addr, rec in srecs.items():
        want = copy.deepcopy(frecs[addr])
        got = copy.deepcopy(rec)
        assert want["sriov"]["vf_units"] is None
        got_units = got["sriov"].pop("vf_units")
        want["sriov"].pop("vf_units")
        assert got == want, addr  # the PF record itself is unchanged
        if addr not in lab["enabled"] or rec["family"] == "fpga":
            assert got_units is None
            continue
        expected = []
        for vf in lab["enabled"][addr]:
            vrec = frecs[vf]
            nic = vrec["nic"] or {}
            ifs = nic.get("interfaces") or []
            extra = {"vf_index": vrec["vf_index"], "driver": vrec["driver"], "mac": nic.get("mac"),
                     "netdev": ifs[0]["name"] if ifs else None}
            expected.extend(dict(u, **extra) for u in vrec["units"])
        # the compact form: a VF's own unit without id, null type, empty in_use_by, or the vf_index sriov.vfs gives
        for u in got_units:
            if u["kind"] == "vf":
                assert "id" not in u and "vf_index" not in u and u.get("type", 1) is not None, u
                assert u.get("in_use_by", 1) != [] and isinstance(u["in_use"], bool), u
        assert _vocab.record_units(rec)[len(rec["units"]):] == expected, addr
        assert [u["vf_index"] for u in expected if u["kind"] == "vf"] == list(range(len(lab["enabled"][addr])))
        assert rec["sriov"]["vfs"] == lab["enabled"][addr]


def test_summary_shows_in_use_vgpu_type_and_mac(lab):
    summ = _run(lab, vf_detail="summary")
    units = dict((u["id"], u) for r in summ["accelerators"] for u in _vocab.record_units(r)[len(r["units"]):])
    busy = units[lab["busy"]]
    assert busy["in_use"] and busy["in_use_by"][0]["name"] == "dom-busy"
    typed = [u for u in units.values() if u["type"]]
    assert len(typed) == 1 and typed[0]["driver"] == "nvidia" and typed[0]["vf_index"] == 1
    nic_vfs = [u for u in units.values() if u["netdev"]]
    assert nic_vfs and all(u["mac"] for u in nic_vfs)


def test_placement_plans_the_same_providers_either_way(lab):
    full = _run(lab)
    summ = _run(lab, vf_detail="summary")
    want = _placement.desired_providers("compute-1", full)
    got = _placement.desired_providers("compute-1", summ)
    assert want and got == want


def test_summary_filter_line_counts_vf_units(lab):
    summ = _run(lab, vf_detail="summary")
    full = _run(lab)
    pf = [a for a in sorted(lab["enabled"]) if a in set(r["address"] for r in summ["accelerators"] if r["family"] == "nic")][0]
    line = [x for x in accelerator_summary(summ["accelerators"]) if x.startswith(pf)][0]
    n = 1 + len(lab["enabled"][pf])
    assert "units=%d (" % n in line
    assert "units=1 (" in [x for x in accelerator_summary(full["accelerators"]) if x.startswith(pf)][0]


def test_a_vf_whose_pf_is_not_reported_stays_a_record(lab):
    pf = sorted(lab["enabled"])[0]
    vf = lab["enabled"][pf][0]
    res = discover(Sysfs(lab["root"]), addresses=[vf], nvidia_smi="never", vf_detail="summary")
    # an address filter naming the VF selects only it: its PF is not reported, so it keeps a full record
    assert [r["address"] for r in res["accelerators"]] == [vf]
    assert res["accelerators"][0]["physfn"] == pf and res["accelerators"][0]["vf_index"] == 0


def test_vf_warnings_go_to_the_pf_record(lab, tmp_path):
    root = str(tmp_path / "copy")
    shutil.copytree(lab["root"], root, symlinks=True)
    pf = sorted(lab["enabled"])[0]
    vf = lab["enabled"][pf][3]
    real = os.path.realpath(os.path.join(root, "sys/bus/pci/devices", vf))
    os.unlink(os.path.join(real, "iommu_group"))
    os.symlink("../../../kernel/iommu_groups/not-a-number", os.path.join(real, "iommu_group"))
    res = discover(Sysfs(root), vf_detail="summary", nvidia_smi="never")
    rec = [r for r in res["accelerators"] if r["address"] == pf][0]
    assert any(w.startswith("VF %s: iommu_group:" % vf) for w in rec["warnings"]), rec["warnings"]


def test_bad_vf_detail_names_the_option(lab):
    with pytest.raises(OptionError, match="vf_detail"):
        _run(lab, vf_detail="some")
