# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The AMD Instinct (GIM) and Intel Data Center GPU SR-IOV families on their simulated labs: discovery records,
the VF count rules of sriov_vfs, the Placement providers, Nova's device_spec, hostdev units and Ironic traits."""

from __future__ import annotations

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers, _hostdev, _ironic  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.desired import desired_providers  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import (  # noqa: E402
    HostOps, ProgrammingError, SriovDesired, plan_sriov, read_pf)
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

MI300X, MI210 = "0000:83:00.0", "0000:3b:00.0"
FLEX, MAX = "0000:4d:00.0", "0000:99:00.0"


@pytest.fixture
def amd(tmp_path):
    return accelsim.render_tree("gpu-amd-instinct", str(tmp_path / "amd"))


@pytest.fixture
def intel(tmp_path):
    """The Intel lab with 4 VFs on the Flex 170 and 3 on the Max 1550."""
    h = accelsim.render_tree("gpu-intel-flex", str(tmp_path / "intel"))
    with h.transaction() as k:
        k.set_numvfs(FLEX, "4")
        k.set_numvfs(MAX, "3")
    return h


def recs(h, **kw):
    return dict((r["address"], r) for r in discover(Sysfs(root=h.root), **kw)["accelerators"])


def providers(h, **kw):
    out = desired_providers("node1", discover(Sysfs(root=h.root), **kw))
    return dict((p["address"], (p["resource_class"], (p["inventories"].get(p["resource_class"]) or {}).get("total")))
                for p in out)


# -- discovery ------------------------------------------------------------------------------------------------------
def test_amd_records(amd):
    r = recs(amd)
    assert sorted(r) == ["0000:3b:00.0", "0000:3b:02.0", "0000:83:00.0", "0000:83:02.0"]
    pf, vf = r[MI300X], r["0000:83:02.0"]
    # claimed by its ids although an MI300X is a processing accelerator (class 12), not a display controller
    assert (pf["handler"], pf["family"], pf["class_id"], pf["driver"]) == ("amd_gpu", "gpu", "120000", "gim")
    # GIM enabled its one VF when it probed the PF; the VF has its own id and no host driver
    assert pf["sriov"]["numvfs"] == 1 and pf["sriov"]["vfs"] == ["0000:83:02.0"]
    assert pf["sriov"]["vf_device_id"] == "74b5" and vf["device_id"] == "74b5" and vf["driver"] is None
    assert pf["gpu"]["iov"] == {"vendor": "amd", "product": "Instinct MI300X", "role": "pf",
                                "vf_count_programmable": False, "host_driver": "gim", "provisioning": None,
                                "sriov_drivers": ["gim"], "vf_drivers": ["vfio-pci"], "limit": None,
                                "vf_counts": [1, 8], "vf_counts_mode": "8 in CPX compute partition mode"}
    assert vf["gpu"]["iov"]["role"] == "vf" and vf["gpu"]["iov"]["product"] == "Instinct MI300X VF"
    assert (vf["handler"], vf["physfn"], vf["units"][0]["kind"]) == ("amd_gpu", MI300X, "vf")
    assert r[MI210]["gpu"]["iov"]["product"] == "Instinct MI210" and r[MI210]["sriov"]["vf_device_id"] == "7410"
    assert all(x["programming_model"] == "fixed" and x["function"] is None and x["warnings"] == [] for x in r.values())


def test_amd_vf_in_use_evidence(amd):
    name = amd.mark_in_use("0000:83:02.0", by="domain", name="mi300x-guest")
    vf = recs(amd)["0000:83:02.0"]
    assert [(e["kind"], e["name"]) for e in vf["units"][0]["in_use_by"]] == [("domain", name)]


def test_intel_records_and_provisioning(intel):
    r = recs(intel)
    flex, mx = r[FLEX], r[MAX]
    assert (flex["handler"], flex["family"], flex["driver"]) == ("intel_gpu", "gpu", "i915")
    # a VF has the PF's device id; i915 probed them on the host (autoprobe on)
    vfs = flex["sriov"]["vfs"]
    assert len(vfs) == 4 and all(r[v]["device_id"] == "56c0" and r[v]["driver"] == "i915" for v in vfs)
    zero = dict.fromkeys(("contexts_quota", "doorbells_quota", "exec_quantum_ms", "ggtt_quota", "lmem_quota",
                          "preempt_timeout_us"), 0)
    assert flex["gpu"]["iov"]["provisioning"] == {
        "card": "card0", "auto": True, "vfs": [{"index": k, "tiles": {"gt": zero}} for k in (1, 2, 3, 4)]}
    prov = mx["gpu"]["iov"]["provisioning"]
    assert prov["auto"] is False and [v["index"] for v in prov["vfs"]] == [1, 2, 3]
    assert prov["vfs"][0]["tiles"] == {"gt0": zero, "gt1": zero}
    assert prov["vfs"][1]["tiles"]["gt1"]["lmem_quota"] == 1038090240
    assert prov["vfs"][1]["tiles"]["gt0"]["exec_quantum_ms"] == 4
    assert mx["gpu"]["iov"]["product"] == "Data Center GPU Max 1550"
    assert flex["gpu"]["iov"]["vf_count_programmable"] is True
    assert r[vfs[0]]["gpu"]["iov"]["role"] == "vf" and r[vfs[0]]["gpu"]["iov"]["provisioning"] is None
    assert all(x["warnings"] == [] for x in r.values())


def test_intel_unreadable_provisioning_is_a_warning(intel):
    path = intel.root + "/sys/bus/pci/devices/%s/drm/card0/prelim_iov/vf1/gt/lmem_quota" % FLEX
    import os
    real = os.path.realpath(path)
    os.chmod(real, 0o644)
    with open(real, "w") as f:
        f.write("lots\n")
    flex = recs(intel)[FLEX]
    assert flex["gpu"]["iov"]["provisioning"]["vfs"][0]["tiles"]["gt"]["lmem_quota"] is None
    assert any("prelim_iov/vf1/gt/lmem_quota: unexpected value" in w for w in flex["warnings"])


def test_registry_and_for_record(amd, intel):
    r = recs(amd)
    r.update(recs(intel))
    assert _drivers.for_record(r[MI300X]).name == "amd_gpu"
    assert _drivers.for_record(r[FLEX]).name == "intel_gpu"
    # a recorded discovery whose handler is no built-in driver: chosen by its ids, other GPUs keep their driver
    assert _drivers.for_record(dict(r[MI300X], handler="custom")).name == "amd_gpu"
    assert _drivers.for_record(dict(r[MAX], handler="custom")).name == "intel_gpu"
    assert _drivers.for_record({"family": "gpu", "vendor_id": "10de", "device_id": "1eb8", "handler": "x"}).name == "nvidia"
    assert _drivers.for_record({"family": "gpu", "vendor_id": "8086", "device_id": "3e92", "handler": "x"}).name == "gpu"


# -- VF count: sriov_vfs ----------------------------------------------------------------------------------------------
def test_amd_vf_count_is_refused_before_any_write(amd):
    ops = HostOps(Sysfs(root=amd.root))
    with pytest.raises(ProgrammingError) as e:
        plan_sriov(ops, MI300X, SriovDesired(num_vfs=2))
    assert "num_vfs:" in str(e.value) and "gim" in str(e.value) and "vf_num" in str(e.value)
    with pytest.raises(ProgrammingError, match="vf_num"):
        plan_sriov(ops, MI300X, SriovDesired(num_vfs=0))
    # the count GIM set, with the VF bound to vfio-pci: no count step, only the binding
    plan, info = plan_sriov(ops, MI300X, SriovDesired(num_vfs=1, vf_driver="vfio-pci"))
    assert info["vfs"] == ["0000:83:02.0"]
    assert not [s for s in plan.steps if "sriov_numvfs" in (s.after or "")]
    assert [s.after for s in plan.steps] == ["driver_override vfio-pci", "unbound", "driver vfio-pci"]


def test_amd_kernel_refuses_the_write_too(amd):
    """What the rule stands for: the simulator's kernel, as Linux, answers ENOENT for gim's PF."""
    import errno
    with pytest.raises(OSError) as e:
        with amd.transaction() as k:
            k.set_numvfs(MI300X, "0")
    assert e.value.errno == errno.ENOENT


def test_intel_vf_count_goes_through_zero(intel):
    ops = HostOps(Sysfs(root=intel.root))
    assert read_pf(ops.sysfs, FLEX)["device"] == "56c0"
    plan, _info = plan_sriov(ops, FLEX, SriovDesired(num_vfs=2))
    assert [s.after for s in plan.steps] == ["sriov_numvfs 0", "sriov_numvfs 2"]
    plan, _info = plan_sriov(ops, FLEX, SriovDesired(num_vfs=4))
    assert plan.steps == []


def test_intel_vf_count_refused_while_a_vf_is_in_use(intel):
    vf = recs(intel)[FLEX]["sriov"]["vfs"][3]
    intel.mark_in_use(vf, by="domain", name="flex-guest")
    with pytest.raises(ProgrammingError, match="in use"):
        plan_sriov(HostOps(Sysfs(root=intel.root)), FLEX, SriovDesired(num_vfs=2))


def test_sriov_rules_by_pf():
    assert _drivers.for_sriov_pf({"vendor": "1002", "device": "74a1", "driver": "gim"}).name == "amd_gpu"
    assert _drivers.for_sriov_pf({"vendor": "8086", "device": "0bd5", "driver": "xe"}).name == "intel_gpu"
    assert _drivers.for_sriov_pf({"vendor": "8086", "device": "1572", "driver": "i40e"}).name == "pci"
    intel_drv = _drivers.for_sriov_pf({"vendor": "8086", "device": "56c0"})
    assert intel_drv.vf_count_refusal({"address": FLEX, "device": "56c0", "driver": "i915"}, 4) is None
    assert "backport i915" in intel_drv.vf_count_refusal({"address": FLEX, "device": "56c0", "driver": "foo"}, 4)


# -- what each driver can do (defects found against the real drivers: docs/families/) ---------------------------------
def test_new_ids_are_claimed_with_their_products_and_rules():
    """Ids from pci.ids and the vendors' tables: each gets its family's product name and plan-time rules."""
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import amd_gpu, intel_gpu
    for dev, product in (("740c", "Instinct MI250X/MI250"), ("7408", "Instinct MI250X"),
                         ("74a8", "Instinct MI308X HF"), ("75a0", "Instinct MI350X"), ("75a3", "Instinct MI355X")):
        drv = _drivers.for_sriov_pf({"vendor": "1002", "device": dev, "driver": "gim"})
        assert drv.name == "amd_gpu" and amd_gpu.DEVICES[dev] == (product, "pf")
        assert "vf_num" in drv.vf_count_refusal({"address": MI300X, "device": dev, "driver": "gim", "numvfs": 1}, 2)
    assert [amd_gpu.DEVICES[v] for v in ("74bc", "75b0", "75b3")] == [
        ("Instinct MI308X HF VF", "vf"), ("Instinct MI350X VF", "vf"), ("Instinct MI355X VF", "vf")]
    for dev, product in (("56c2", "Data Center GPU Flex 170V"), ("0bd4", "Data Center GPU Max 1550VG"),
                         ("0b6e", "Data Center GPU Max 1100C"), ("0b69", "Data Center GPU Max 1450")):
        drv = _drivers.for_sriov_pf({"vendor": "8086", "device": dev, "driver": "i915"})
        assert drv.name == "intel_gpu" and intel_gpu.DEVICES[dev] == product
        assert "xe" in drv.vf_count_refusal({"address": FLEX, "device": dev, "driver": "xe"}, 2)


def test_gim_vf_counts_per_model(amd):
    """GIM offers 1 or 8 VFs on an MI300X (8 in CPX mode), 1, 2 or 8 on an MI355X: discovery and the refusal say so."""
    assert recs(amd)[MI300X]["gpu"]["iov"]["vf_counts"] == [1, 8]
    ops = HostOps(Sysfs(root=amd.root))
    with pytest.raises(ProgrammingError) as e:
        plan_sriov(ops, MI300X, SriovDesired(num_vfs=2))
    assert "GIM offers 1 or 8 VF(s) on Instinct MI300X (8 in CPX compute partition mode), not 2" in str(e.value)
    assert "one value per GPU" in str(e.value)
    drv = _drivers.for_sriov_pf({"vendor": "1002", "device": "75a3", "driver": "gim"})
    why = drv.vf_count_refusal({"address": MI300X, "device": "75a3", "driver": "gim", "numvfs": 1}, 8)
    assert "GIM offers 1, 2 or 8 VF(s) on Instinct MI355X" in why and "not 8" not in why


def _intel_variant(tmp_path, driver, configure_errno=None):
    """The Intel lab with the Flex 170 bound to ``driver`` (its VFs off)."""
    import yaml
    from accelsim.model import _load_raw
    raw = _load_raw("gpu-intel-flex")[0]
    for f in raw["functions"]:
        if f["bdf"] == FLEX:
            f["driver"] = driver
            f["sriov"] = dict(f["sriov"], configure_errno=configure_errno)
            f.pop("i915_iov", None)
    path = tmp_path / "intel-xe.yaml"
    path.write_text(yaml.safe_dump(raw))
    return accelsim.render_tree(str(path), str(tmp_path / "xe"))


def test_intel_flex_under_xe_has_no_sriov(tmp_path):
    """Upstream xe offers no SR-IOV on Flex (ATS-M): discovery says so and the VF count plan is refused, naming the
    driver, before anything is written (the kernel's answer would be xe's -ENODEV)."""
    h = _intel_variant(tmp_path, "xe", configure_errno="ENODEV")
    iov = recs(h)[FLEX]["gpu"]["iov"]
    assert iov["vf_count_programmable"] is False and iov["sriov_drivers"] == ["i915"]
    assert "upstream xe driver offers no SR-IOV on Data Center GPU Flex (ATS-M)" in iov["limit"]
    with pytest.raises(ProgrammingError) as e:
        plan_sriov(HostOps(Sysfs(root=h.root)), FLEX, SriovDesired(num_vfs=2))
    assert str(e.value).startswith("num_vfs: 0000:4d:00.0 is bound to xe: the upstream xe driver offers no SR-IOV")
    import errno
    with pytest.raises(OSError) as err:
        with h.transaction() as k:
            k.set_numvfs(FLEX, "2")
    assert err.value.errno == errno.ENODEV


def test_intel_vfs_are_not_xe_vfio_pci(intel):
    """xe-vfio-pci serves newer parts' VFs only: a plan that binds Flex VFs to it is refused."""
    with pytest.raises(ProgrammingError, match=r"^vf_driver: xe-vfio-pci serves the VFs of newer Intel GPUs"):
        plan_sriov(HostOps(Sysfs(root=intel.root)), FLEX, SriovDesired(num_vfs=4, vf_driver="xe-vfio-pci"))


# -- Placement, Nova, hostdev, Ironic ---------------------------------------------------------------------------------
@pytest.mark.parametrize("vf_detail", ["full", "summary"])
def test_placement_providers(amd, intel, vf_detail):
    # one provider per PF holding its VFs, in Nova's class for the VF's product id
    assert providers(amd, vf_detail=vf_detail) == {MI300X: ("CUSTOM_PCI_1002_74B5", 1),
                                                   MI210: ("CUSTOM_PCI_1002_7410", 1)}
    assert providers(intel, vf_detail=vf_detail) == {FLEX: ("CUSTOM_PCI_8086_56C0", 4),
                                                     MAX: ("CUSTOM_PCI_8086_0BD5", 3)}


def test_placement_pf_without_vfs_is_one_gpu(intel):
    with intel.transaction() as k:
        k.set_numvfs(FLEX, "0")
    assert providers(intel)[FLEX] == ("CUSTOM_PCI_8086_56C0", 1)


def test_nova_device_spec(amd, intel):
    fns = [{"name": "mi300x-vf", "match": {"address": MI300X}, "vfs": {"count": 1, "driver": "vfio-pci"}}]
    r = nc.render(fns, discover(Sysfs(root=amd.root)))
    assert r["problems"] == []
    # the VF id differs from the PF's: one spec by PF address matches exactly its VFs
    assert r["device_specs"] == [{"address": MI300X, "product_id": "74b5", "vendor_id": "1002",
                                  "traits": "CUSTOM_FUNCTION_MI300X_VF"}]
    assert [(a["device_type"], a["product_id"]) for a in r["aliases"]] == [("type-VF", "74b5")]
    fns = [{"name": "flex-vf", "match": {"address": FLEX}, "vfs": {"count": 4, "driver": "vfio-pci"}}]
    r = nc.render(fns, discover(Sysfs(root=intel.root)))
    assert r["problems"] == []
    # the VFs share the PF's id: one spec per VF address (a spec by PF address would match the PF too)
    assert [s["address"] for s in r["device_specs"]] == ["0000:4d:00.1", "0000:4d:00.2", "0000:4d:00.3", "0000:4d:00.4"]
    assert {s["product_id"] for s in r["device_specs"]} == {"56c0"}


def test_hostdev_units_and_ironic_traits(amd):
    found = discover(Sysfs(root=amd.root))
    units = _hostdev.select_units(_hostdev.collect_units(found), families=["gpu"], kinds=["vf"], assignable_only=False)
    assert sorted(u["id"] for u in units) == ["0000:3b:02.0", "0000:83:02.0"]
    traits = _ironic.hardware_traits(found)
    assert {"CUSTOM_VENDOR_1002", "CUSTOM_PRODUCT_1002_74A1"} <= set(traits)
    accel = _ironic.accelerators_from_discovery(found)
    assert sorted((a["pci_address"], a["type"]) for a in accel) == [(MI210, "GPU"), (MI300X, "GPU")]
