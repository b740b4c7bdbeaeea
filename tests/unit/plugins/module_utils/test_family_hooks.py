# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The families' Nova, Cyborg and Ironic hooks: each family's values, what the registry builds from them, what a
new family gets by default, and each declaration kind's ``nova_spec``; the hooks that hold NVIDIA's rules (vendor-
specific VFIO, the device nodes of the in-use scan, discovery's vendor tool), NVIDIA's values and a new family's."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate, _discovery, _drivers
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import gpu, nvidia_vgpu
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Driver, Kind
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

BY_NAME = dict((d.name, d) for d in _drivers.default_drivers())

# driver -> (Cyborg's driver, friendly family words and classes, PCI vendors, Ironic type, listed by default)
FAMILY_VALUES = {
    "intel_fpga": ("intel_fpga_driver", {"fpga": "FPGA"}, {"intel": "8086"}, "FPGA", True),
    "xilinx": ("xilinx_fpga_driver", {"fpga": "FPGA"}, {"xilinx": "10ee"}, "FPGA", True),
    "qat": ("intel_qat_driver", {"qat": "CUSTOM_QAT"}, {"intel": "8086"}, "QAT", True),
    "nvidia": ("nvidia_gpu_driver", {"gpu": "PGPU", "pgpu": "PGPU", "vgpu": "VGPU"}, {"nvidia": "10de"}, "GPU", True),
    "amd_gpu": (None, {"gpu": "PGPU", "pgpu": "PGPU", "vgpu": "VGPU"}, {"amd": "1002", "intel": "8086"}, "GPU", True),
    "intel_gpu": (None, {"gpu": "PGPU", "pgpu": "PGPU", "vgpu": "VGPU"}, {"amd": "1002", "intel": "8086"}, "GPU", True),
    "gpu": (None, {"gpu": "PGPU", "pgpu": "PGPU", "vgpu": "VGPU"}, {"amd": "1002", "intel": "8086"}, "GPU", True),
    "nic": ("intel_nic_driver", {}, {"intel": "8086", "mellanox": "15b3"}, "NIC", False),
    "pci": (None, {}, {}, "PCI", False),
}


class NewFamilyDriver(Driver):
    """A family that states nothing but its name."""

    name = "tpu"
    family = "tpu"


def test_every_built_in_driver_has_its_values_listed():
    assert sorted(BY_NAME) == sorted(FAMILY_VALUES)


@pytest.mark.parametrize("name", sorted(FAMILY_VALUES))
def test_each_family_states_its_cyborg_and_ironic_values(name):
    drv = BY_NAME[name]
    cyborg, words, vendors, ironic_type, ironic_default = FAMILY_VALUES[name]
    assert (drv.cyborg_driver_name, drv.cyborg_profile_classes, drv.pci_vendors) == (cyborg, words, vendors)
    assert (drv.ironic_type, drv.ironic_default) == (ironic_type, ironic_default)


def test_the_registry_builds_the_tables_from_the_families():
    # what _novaconf, _ironic and _cyborg offered before the tables moved into the families
    assert _drivers.cyborg_families() == ("fpga", "qat", "gpu", "nic")
    assert _drivers.ironic_types() == {"gpu": "GPU", "fpga": "FPGA", "qat": "QAT", "nic": "NIC", "pci": "PCI"}
    assert list(_drivers.ironic_types()) == ["gpu", "fpga", "qat", "nic", "pci"]   # the module's choices, in order
    assert _drivers.ironic_default_families() == ("gpu", "fpga", "qat")
    assert _drivers.pci_vendors() == {"intel": "8086", "nvidia": "10de", "amd": "1002", "xilinx": "10ee",
                                      "mellanox": "15b3"}
    words = _drivers.cyborg_profile_families()
    assert dict((w, d.cyborg_profile_classes[w]) for w, d in words.items()) == {
        "fpga": "FPGA", "gpu": "PGPU", "pgpu": "PGPU", "vgpu": "VGPU", "qat": "CUSTOM_QAT"}
    assert dict((w, d.family) for w, d in words.items()) == {"fpga": "fpga", "gpu": "gpu", "pgpu": "gpu",
                                                             "vgpu": "gpu", "qat": "qat"}


def test_a_new_family_gets_the_defaults():
    drv = NewFamilyDriver()
    rec = {"address": "0000:5e:00.0", "family": "tpu", "vendor_id": "1ae0"}
    assert drv.cyborg_driver(rec) == (None, "Cyborg has no driver for tpu cards of vendor 1ae0 (0000:5e:00.0); "
                                            "not configured")
    assert (drv.cyborg_profile_classes, drv.pci_vendors) == ({}, {})
    assert drv.cyborg_vendor_trait("acme") is None and drv.cyborg_function_trait("acme", "ab" * 16) is None
    assert (drv.ironic_type, drv.ironic_default) == ("PCI", False)
    assert drv.in_use_evidence({"gpu": {"mig": {"gpu_instances": [{"id": 1, "in_use_by": [{"kind": "domain"}]}]}}}) == []


def test_a_family_with_a_cyborg_driver_name_is_reported_by_it():
    class NamedDriver(NewFamilyDriver):
        cyborg_driver_name = "acme_tpu_driver"
    assert NamedDriver().cyborg_driver({"address": "0000:5e:00.0"}) == ("acme_tpu_driver", None)


@pytest.mark.parametrize("name, vendor", [("qat", "1af4"), ("nic", "15b3")])
def test_cyborg_reads_intel_qat_and_nics_only(name, vendor):
    rec = {"address": "0000:3d:00.0", "family": BY_NAME[name].family, "vendor_id": vendor}
    drv, problem = BY_NAME[name].cyborg_driver(rec)
    assert drv is None and "Cyborg has no driver for %s cards of vendor %s" % (rec["family"], vendor) in problem
    assert BY_NAME[name].cyborg_driver(dict(rec, vendor_id="8086")) == (FAMILY_VALUES[name][0], None)


def test_the_fpga_family_names_vendors_and_function_ids_in_cyborgs_words():
    for name in ("intel_fpga", "xilinx"):
        drv = BY_NAME[name]
        assert drv.cyborg_vendor_trait("intel") == "CUSTOM_FPGA_INTEL"
        assert drv.cyborg_function_trait("Intel", "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7") == (
            "CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A93C849C1AD7C6D7B3C2A7")
    for name in ("nvidia", "qat", "nic", "pci"):
        assert BY_NAME[name].cyborg_vendor_trait("intel") is None
        assert BY_NAME[name].cyborg_function_trait("intel", "ab" * 16) is None


def test_the_fpga_vendor_trait_of_a_profile_is_the_one_the_card_reports():
    rec = {"address": "0000:3b:00.0", "family": "fpga", "fpga": {"vendor": "xilinx"}}
    drv = BY_NAME["xilinx"]
    assert drv.cyborg_vendor_trait("xilinx") in drv.card_traits(rec, ["CUSTOM_X"])


# -- in use ----------------------------------------------------------------------------------------------------
def _mig_card(vendor="10de", handler="nvidia"):
    return {"address": "0000:1b:00.0", "family": "gpu", "vendor_id": vendor, "handler": handler, "units": [],
            "gpu": {"mig": {"gpu_instances": [
                {"id": 1, "name": "3g.40gb", "in_use_by": []},
                {"id": 2, "name": "2g.20gb", "in_use_by": [{"kind": "process", "evidence": "/dev/nvidia-caps/nvidia-cap21"}]},
            ]}}}


def test_an_nvidia_gpu_reports_its_held_mig_instances():
    assert BY_NAME["nvidia"].in_use_evidence(_mig_card()) == [
        "mig gpu instance 2 (2g.20gb): process /dev/nvidia-caps/nvidia-cap21"]
    assert BY_NAME["nvidia"].in_use_evidence({"gpu": None}) == []


def test_card_in_use_adds_the_familys_evidence_to_the_units():
    busy, evidence = _cardstate.card_in_use(_mig_card(), {})
    assert busy and evidence == ["mig gpu instance 2 (2g.20gb): process /dev/nvidia-caps/nvidia-cap21"]
    card = _mig_card()
    card["gpu"]["mig"]["gpu_instances"][1]["in_use_by"] = []
    assert _cardstate.card_in_use(card, {}) == (False, [])


# -- Nova: each kind's nova_spec -----------------------------------------------------------------------------
def _assignment(kind, module_args=None, function="fn"):
    return {"function": function, "kind": kind, "address": "0000:3b:00.0", "module_args": module_args}


def test_a_device_passed_whole_is_the_kinds_default():
    card = {"address": "0000:3b:00.0", "family": "pci", "device_id": "0b30", "sriov": {"totalvfs": 0}}
    spec, problems = Kind().nova_spec(_assignment("passthrough"), card, {card["address"]: card})
    assert problems == [] and spec == {"addresses": ["0000:3b:00.0"], "product_id": "0b30", "device_type": "type-PCI",
                                       "vfs_of": None, "resource_class": None, "managed": None}
    card["sriov"]["totalvfs"] = 4
    assert _drivers.kind("passthrough").nova_spec(_assignment("passthrough"), card, {})[0]["device_type"] == "type-PF"


def test_an_fpga_whose_port_is_on_its_vf_offers_the_vf():
    pf = {"address": "0000:3b:00.0", "family": "fpga", "handler": "intel_fpga", "device_id": "09c4",
          "fpga": {"vendor": "intel", "ports": []}, "sriov": {"totalvfs": 1, "vfs": ["0000:3b:00.1"]}}
    vf = {"address": "0000:3b:00.1", "family": "fpga", "device_id": "09c5", "physfn": pf["address"],
          "fpga": {"vendor": "intel", "ports": [{"id": "port.0"}]}}
    spec, _problems = _drivers.kind("fpga").nova_spec(_assignment("fpga"), pf, {pf["address"]: pf, vf["address"]: vf})
    assert (spec["addresses"], spec["product_id"], spec["device_type"]) == (["0000:3b:00.1"], "09c5", "type-VF")


def test_vfs_are_offered_by_their_pf_address_or_one_by_one_when_they_share_its_ids():
    kind = _drivers.kind("vfs")
    pf = {"address": "0000:d8:00.0", "device_id": "1592",
          "sriov": {"vf_device_id": "1889", "vfs": ["0000:d8:01.1", "0000:d8:01.0"]}}
    spec, problems = kind.nova_spec(_assignment("vfs"), pf, {})
    assert problems == [] and spec == {"addresses": ["0000:d8:00.0"], "product_id": "1889", "device_type": "type-VF",
                                       "vfs_of": "0000:d8:00.0", "resource_class": None, "managed": None}
    same = dict(pf, sriov=dict(pf["sriov"], vf_device_id="1592"))
    assert kind.nova_spec(_assignment("vfs"), same, {})[0]["addresses"] == ["0000:d8:01.0", "0000:d8:01.1"]
    assert kind.nova_spec(_assignment("vfs"), dict(same, sriov={"vf_device_id": "1592"}), {}) == (
        None, ["fn: the VFs of 0000:d8:00.0 share its PCI ids and are not enabled yet: enable them and render again"])
    assert kind.nova_spec(_assignment("vfs"), dict(pf, sriov={}), {}) == (
        None, ["fn: 0000:d8:00.0 does not report its VF device id; no device_spec"])


def test_a_vgpu_on_an_mdev_gpu_is_an_mdev_type():
    kind = _drivers.kind("vgpu")
    card = {"address": "0000:3b:00.0", "gpu": {"mdev_types": [{"id": "nvidia-558", "name": "GRID T4-4Q"}]}}
    args = {"type": "grid t4-4q", "count": 2}
    assert kind.nova_spec(_assignment("vgpu", args), card, {}) == (
        {"mdev_type": "nvidia-558", "addresses": ["0000:3b:00.0"], "on_vfs": False}, [])
    assert kind.nova_spec(_assignment("vgpu", dict(args, type="nvidia-999")), card, {}) == (
        None, ["fn: 0000:3b:00.0 offers no mdev type 'nvidia-999' (offered: nvidia-558)"])


def test_a_vgpu_on_an_sriov_mdev_gpu_takes_the_vfs_that_carry_the_type_first():
    kind = _drivers.kind("vgpu")
    vfs = ["0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6"]
    by_addr = dict((a, {"address": a, "gpu": {"mdev_types": [{"id": "nvidia-700", "mdevs": ["u"] if a.endswith("6") else []}]}})
                   for a in vfs)
    card = {"address": "0000:3b:00.0", "sriov": {"vfs": vfs}}
    assert kind.nova_spec(_assignment("vgpu", {"type": "nvidia-700", "count": 2}), card, by_addr) == (
        {"mdev_type": "nvidia-700", "addresses": ["0000:3b:00.6", "0000:3b:00.4"], "on_vfs": True}, [])


def test_a_vendor_vfio_vgpu_is_vfs_nova_must_not_rebind():
    kind = _drivers.kind("vgpu")
    card = {"address": "0000:3b:00.0", "device_id": "26b9", "sriov": {"vf_device_id": "26ba"},
            "gpu": {"vgpu_vfs": [{"address": "0000:3b:00.5", "current_type": None},
                                 {"address": "0000:3b:00.4", "current_type": {"id": "1155", "name": "NVIDIA L40S-12Q"}}]}}
    spec, problems = kind.nova_spec(_assignment("vgpu", {"type": "NVIDIA L40S-12Q", "count": 3}, "l40s"), card, {})
    assert spec == {"addresses": ["0000:3b:00.4", "0000:3b:00.5"], "product_id": "26ba", "device_type": "type-VF",
                    "vfs_of": None, "resource_class": "CUSTOM_VGPU_L40S", "managed": False}
    assert problems == ["l40s: 0000:3b:00.0 has 2 VF(s) for 3 vGPU(s) of NVIDIA L40S-12Q"]


# -- vendor-specific VFIO (hostdev's rule for a VF typed through the vendor's sysfs) ---------------------------------
def test_nvidia_states_its_vendor_vfio_rules():
    nvidia = BY_NAME["nvidia"]
    assert nvidia.vendor_vfio_vendor == "10de"
    assert nvidia.vendor_vfio_why_not({"vgpu_type": None}) == "NVIDIA vendor-VFIO VF without a vGPU type"
    assert nvidia.vendor_vfio_why_not({"vgpu_type": "1155"}) is None
    assert nvidia.vendor_vfio_unmanaged() == (
        "NVIDIA vendor-VFIO VF", "the nvidia driver must stay bound to serve the vGPU, so libvirt must not rebind it")


@pytest.mark.parametrize("drv", [NewFamilyDriver(), BY_NAME["gpu"], BY_NAME["amd_gpu"]], ids=lambda d: d.name)
def test_a_family_without_vendor_vfio_has_no_such_rules(drv):
    assert drv.vendor_vfio_vendor is None and drv.vendor_vfio_name is None
    assert drv.vendor_vfio_why_not({"vgpu_type": None}) is None
    assert drv.vendor_vfio_unmanaged() is None
    assert drv.vendor_vfio_backend() is None
    assert drv not in gpu.vendor_vfio_drivers()


def test_the_vgpu_engine_finds_nvidias_vendor_vfio_backend_by_the_cards_vendor():
    nvidia = BY_NAME["nvidia"]
    assert [d.name for d in gpu.vendor_vfio_drivers()] == ["nvidia"] and gpu.vendor_vfio_names() == "NVIDIA"
    assert gpu.vendor_vfio_driver("10de") is not None and gpu.vendor_vfio_driver("10de").name == "nvidia"
    assert gpu.vendor_vfio_driver("1002") is None and gpu.vendor_vfio_driver(None) is None
    backend = nvidia.vendor_vfio_backend()
    assert backend is nvidia_vgpu.BACKEND and backend.name == "vendor_vfio"
    assert callable(backend.plan) and callable(backend.finish)


# -- in use: the device nodes a process may hold a family's units through ------------------------------------------
def test_nvidia_asks_for_its_nodes_only_where_caps_nodes_exist(tmp_path):
    sysfs = Sysfs(root=str(tmp_path))
    nvidia = BY_NAME["nvidia"]
    assert nvidia.held_device_nodes(sysfs) is None                # no /dev/nvidia-caps: no scan for it
    (tmp_path / "dev" / "nvidia-caps").mkdir(parents=True)
    assert nvidia.held_device_nodes(sysfs) is None                # the directory alone holds nothing
    (tmp_path / "dev" / "nvidia-caps" / "nvidia-cap21").write_text("")
    test = nvidia.held_device_nodes(sysfs)
    paths = ("/dev/nvidia-caps/nvidia-cap21", "/dev/nvidia0", "/dev/nvidia12", "/dev/nvidiactl", "/dev/nvidia-uvm",
             "/dev/vfio/5")
    assert [p for p in paths if test(p)] == ["/dev/nvidia-caps/nvidia-cap21", "/dev/nvidia0", "/dev/nvidia12"]


@pytest.mark.parametrize("drv", [NewFamilyDriver(), BY_NAME["gpu"], BY_NAME["intel_fpga"]], ids=lambda d: d.name)
def test_a_family_without_device_nodes_of_its_own_asks_for_none(drv, tmp_path):
    (tmp_path / "dev" / "nvidia-caps").mkdir(parents=True)
    (tmp_path / "dev" / "nvidia-caps" / "nvidia-cap21").write_text("")
    assert drv.held_device_nodes(Sysfs(root=str(tmp_path))) is None


# -- discovery's vendor tool and the option that points at it ----------------------------------------------------
def test_nvidia_names_nvidia_smi_and_its_option():
    assert BY_NAME["nvidia"].discovery_tool == ("nvidia-smi", "nvidia_smi", "MIG state")
    assert [d.name for d in _drivers.default_drivers() if d.discovery_tool] == ["nvidia"]
    assert NewFamilyDriver().discovery_tool is None


class _TpuDriver(NewFamilyDriver):
    """A new family whose discovery runs its own query tool."""

    discovery_tool = ("tpu-info", "tpu_info", "TPU chip state")

    def claims(self, func, ctx=None):
        return func.vendor_id == "1ae0"

    def describe(self, func, ctx):
        res = ctx.run_tool("tpu-info", ["--json"])
        return {"function": None if res is None else {"id": res[1].strip(), "name": None, "trait": None}}


@pytest.fixture
def tpu_host(host):
    host.add_pci("0000:07:00.0", "1ae0", "0027", "120000")
    host.write("/usr/bin/tpu-info", "#!/bin/sh\necho v5e\n", mode=0o755)
    reg = _drivers.Registry()
    reg.register(_TpuDriver())
    return host, reg


def test_a_new_familys_tool_is_found_run_and_reported_under_its_option(tpu_host):
    host, reg = tpu_host
    res = _discovery.discover(Sysfs(host.root), registry=reg, nvidia_smi="never")
    assert res["accelerators"][0]["function"]["id"] == "v5e"
    assert res["host"]["tpu_info"] == host.root + "/usr/bin/tpu-info" and res["host"]["nvidia_smi"] is None


@pytest.mark.parametrize("setting", ["never", "off", "none"])
def test_a_new_familys_tool_option_turns_it_off(tpu_host, setting):
    host, reg = tpu_host
    res = _discovery.discover(Sysfs(host.root), registry=reg, tpu_info=setting)
    assert res["accelerators"][0]["function"] is None and res["host"]["tpu_info"] is None and res["warnings"] == []


def test_a_new_familys_tool_option_names_a_path_that_is_no_tool(tpu_host):
    host, reg = tpu_host
    res = _discovery.discover(Sysfs(host.root), registry=reg, tpu_info=host.root + "/nowhere")
    assert res["host"]["tpu_info"] is None
    assert "tpu_info: %s/nowhere is not an executable file; TPU chip state not read" % host.root in res["warnings"]


def test_an_option_no_family_names_is_refused(host):
    with pytest.raises(TypeError, match="unexpected keyword argument 'tpu_info'"):
        _discovery.discover(Sysfs(host.root), tpu_info="never")
