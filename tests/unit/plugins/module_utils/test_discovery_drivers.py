# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each family driver on small kernel-shaped trees, plus the registry and the filters."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _discovery
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import OptionError, discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import Driver, Registry
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import all_f
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

UUID1 = "4b20d080-1b54-4048-85b3-a6a62d165c01"
UUID2 = "4b20d080-1b54-4048-85b3-a6a62d165c02"


def _run(host, **kw):
    kw.setdefault("nvidia_smi", "never")
    return discover(Sysfs(host.root), **kw)


def _by_addr(result):
    return dict((r["address"], r) for r in result["accelerators"])


def test_record_keys_are_stable(host):
    host.add_pci("0000:00:00.0", "8086", "2020", "060000")
    rec = _run(host, include_all=True)["accelerators"][0]
    assert tuple(rec) == _discovery.RECORD_KEYS


def test_nvidia_mdev_parent(host):
    host.add_pci("0000:18:00.0", "10de", "1eb8", "030200", driver="nvidia", iommu_group=21,
                 subsystem=("10de", "12a2"))
    host.add_mdev_type("0000:18:00.0", "nvidia-222", "GRID T4-1B",
                       "num_heads=4, frl_config=45, framebuffer=1024M, max_resolution=5120x2880, max_instance=16", available=0)
    host.add_mdev_type("0000:18:00.0", "nvidia-231", "GRID T4-2Q", "no max here", available=6)
    host.add_mdev("0000:18:00.0", UUID1, "nvidia-231", iommu_group=100)
    host.add_mdev("0000:18:00.0", UUID2, "nvidia-231", iommu_group=101)
    host.add_domain("instance-0000002a", mdevs=[UUID1])
    rec = _by_addr(_run(host))["0000:18:00.0"]
    assert rec["family"] == "gpu" and rec["handler"] == "nvidia"
    assert rec["programming_model"] == "single"
    assert rec["function"] == {"id": "nvidia-231", "name": "GRID T4-2Q", "trait": "CUSTOM_FUNCTION_GRID_T4_2Q"}
    types = dict((t["id"], t) for t in rec["gpu"]["mdev_types"])
    assert types["nvidia-222"]["max_instances"] == 16 and types["nvidia-222"]["available_instances"] == 0
    assert types["nvidia-231"]["max_instances"] == 8  # available + existing when the description has no max
    assert types["nvidia-231"]["mdevs"] == [UUID1, UUID2]
    assert types["nvidia-231"]["device_api"] == "vfio-pci"
    assert rec["gpu"]["mdevs"] == [{"uuid": UUID1, "type": "nvidia-231", "iommu_group": 100},
                                   {"uuid": UUID2, "type": "nvidia-231", "iommu_group": 101}]
    units = dict((u["id"], u) for u in rec["units"])
    assert units["0000:18:00.0"]["kind"] == "device" and not units["0000:18:00.0"]["in_use"]
    assert units[UUID1]["kind"] == "mdev" and units[UUID1]["in_use"]
    assert units[UUID1]["in_use_by"] == [{"kind": "domain", "name": "instance-0000002a", "pid": 4242,
                                          "evidence": "/run/libvirt/qemu/instance-0000002a.xml"}]
    assert not units[UUID2]["in_use"] and units[UUID2]["type"] == "nvidia-231"
    assert rec["warnings"] == []


def _vgpu_vf(host, pf, vf, creatable, current=0):
    host.add_pci(vf, "10de", "26b5", "030200", driver="nvidia", physfn=pf, iommu_group=int(vf[-3:-2], 16) + 200,
                 extra={"nvidia/creatable_vgpu_types": "ID    : vGPU Name\n" + "".join(
                     "%-6d: %s\n" % (i, n) for i, n in creatable), "nvidia/current_vgpu_type": "%d\n" % current})


def test_nvidia_vendor_vfio_types_resolved_per_card(host):
    host.add_pci("0000:3b:00.0", "10de", "26b5", "030200", driver="nvidia", sriov_totalvfs=32, sriov_vf_device="26b5")
    host.add_pci("0000:5e:00.0", "10de", "26b9", "030200", driver="nvidia", sriov_totalvfs=32, sriov_vf_device="26b9")
    # the same type id means different things on an L40 and an L40S
    _vgpu_vf(host, "0000:3b:00.0", "0000:3b:00.4", [(1140, "NVIDIA L40-1Q"), (1145, "NVIDIA L40-8Q")], current=1145)
    _vgpu_vf(host, "0000:3b:00.0", "0000:3b:00.5", [], current=0)  # after a type is set others may list none
    _vgpu_vf(host, "0000:5e:00.0", "0000:5e:00.4", [(1145, "NVIDIA L40S-2Q")], current=1145)
    res = _by_addr(_run(host))
    vf = res["0000:3b:00.4"]
    assert vf["family"] == "gpu" and vf["physfn"] == "0000:3b:00.0" and vf["vf_index"] == 0
    assert vf["gpu"]["vgpu"]["current_type"] == {"id": "1145", "name": "NVIDIA L40-8Q"}
    assert vf["function"]["name"] == "NVIDIA L40-8Q"
    assert vf["units"][0]["kind"] == "vf" and vf["units"][0]["type"] == "1145"
    assert res["0000:3b:00.5"]["gpu"]["vgpu"] == {"current_type": None, "creatable_types": []}
    assert res["0000:5e:00.4"]["gpu"]["vgpu"]["current_type"]["name"] == "NVIDIA L40S-2Q"
    pf = res["0000:3b:00.0"]
    assert pf["programming_model"] == "single"
    assert pf["gpu"]["vgpu_types"] == [{"id": "1140", "name": "NVIDIA L40-1Q"}, {"id": "1145", "name": "NVIDIA L40-8Q"}]
    assert [v["address"] for v in pf["gpu"]["vgpu_vfs"]] == ["0000:3b:00.4", "0000:3b:00.5"]
    assert pf["gpu"]["vgpu_vfs"][0]["current_type"] == {"id": "1145", "name": "NVIDIA L40-8Q"}
    assert pf["function"]["id"] == "1145"
    assert pf["sriov"]["vfs"] == ["0000:3b:00.4", "0000:3b:00.5"]


NVIDIA_SMI = r"""#!/bin/sh
case "$*" in
  *query-gpu*) printf '0, 00000000:3B:00.0, Enabled, Enabled\n1, 00000000:5E:00.0, [N/A], [N/A]\n' ;;
  "mig -lgi") cat <<'T'
+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 1g.10gb         19        9          2:1     |
|   0  MIG 3g.40gb          9        2          4:4     |
+-------------------------------------------------------+
T
  ;;
  "mig -lci") cat <<'T'
+--------------------------------------------------------------------+
| Compute instances:                                                 |
| GPU     GPU       Name             Profile   Instance   Placement  |
|       Instance                       ID        ID       Start:Size |
|         ID                                                         |
|====================================================================|
|   0      9       MIG 1g.10gb          0         0          0:1     |
+--------------------------------------------------------------------+
T
  ;;
  *) exit 3 ;;
esac
"""


def test_nvidia_mig_from_nvidia_smi_under_root(host):
    host.add_pci("0000:3b:00.0", "10de", "20b5", "030200", driver="nvidia")
    host.add_pci("0000:5e:00.0", "10de", "1eb8", "030200", driver="nvidia")
    p = host.write("/usr/bin/nvidia-smi", NVIDIA_SMI)
    os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
    res = discover(Sysfs(host.root))
    assert res["host"]["nvidia_smi"] == p
    recs = _by_addr(res)
    mig = recs["0000:3b:00.0"]["gpu"]["mig"]
    assert mig["mode_current"] == "Enabled"
    assert mig["gpu_instances"] == [
        {"id": 9, "name": "1g.10gb", "profile_id": 19, "placement": "2:1", "in_use": False, "in_use_by": [], "vgpu_types": []},
        {"id": 2, "name": "3g.40gb", "profile_id": 9, "placement": "4:4", "in_use": False, "in_use_by": [], "vgpu_types": []}]
    assert mig["compute_instances"][0]["gpu_instance_id"] == 9
    assert recs["0000:3b:00.0"]["programming_model"] == "dynamic"
    assert recs["0000:5e:00.0"]["gpu"]["mig"] is None  # not MIG capable
    off = _by_addr(discover(Sysfs(host.root), nvidia_smi="never"))
    assert off["0000:3b:00.0"]["gpu"]["mig"] is None


def test_nvidia_smi_failure_is_a_warning(host):
    host.add_pci("0000:3b:00.0", "10de", "20b5", "030200", driver="nvidia")
    p = host.write("/usr/bin/nvidia-smi", "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    os.chmod(p, 0o755)
    res = discover(Sysfs(host.root))
    assert any("nvidia-smi" in w and "rc 9" in w for w in res["warnings"])
    res = discover(Sysfs(host.root), nvidia_smi=host.path("/nonexistent"))
    assert any("nvidia_smi:" in w for w in res["warnings"])


def _dfl(host, addr, afu, iid, n=0):
    d = host.add_pci(addr, "8086", "0b2b", "120000", driver="dfl-pci", iommu_group=51)
    base = "%s/fpga_region/region%d" % (d, 2 * n)
    host.write("%s/dfl-fme.%d/bitstream_id" % (base, n), "0x40100022c164db1\n")
    host.write("%s/dfl-fme.%d/dfl-fme-region.%d/fpga_region/region%d/compat_id" % (base, n, 2 * n + 1, 2 * n + 1), iid + "\n")
    host.write("%s/dfl-port.%d/afu_id" % (base, n), afu + "\n")
    return d


def test_intel_fpga_dfl_layout(host):
    _dfl(host, "0000:86:00.0", "9aeffe5f84570612c000c9660d824272", "9346116df8f65a1ba2b6f1ec3a8a0b5e")
    rec = _run(host)["accelerators"][0]
    assert rec["family"] == "fpga" and rec["handler"] == "intel_fpga" and rec["programming_model"] == "dynamic"
    f = rec["fpga"]
    assert f["layout"] == "dfl" and f["board"] == "PAC_D5005" and f["bitstream_id"] == "0x40100022c164db1"
    assert f["regions"] == [{"id": "region1", "interface_id": "9346116df8f65a1ba2b6f1ec3a8a0b5e", "healthy": True,
                             "trait": "CUSTOM_FPGA_REGION_INTEL_9346116DF8F65A1BA2B6F1EC3A8A0B5E"}]
    assert f["ports"] == [{"id": "dfl-port.0", "afu_id": "9aeffe5f84570612c000c9660d824272", "healthy": True}]
    assert rec["healthy"] is True and f["healthy"] is True
    assert rec["function"]["trait"] == "CUSTOM_FPGA_FUNCTION_ID_INTEL_9AEFFE5F84570612C000C9660D824272"


def test_intel_fpga_opae_layout_and_all_f_is_unhealthy(host):
    d = host.add_pci("0000:5e:00.0", "8086", "09c4", "120000", driver="intel-fpga-pci", iommu_group=41)
    host.write(d + "/fpga/intel-fpga-dev.0/intel-fpga-fme.0/pr/interface_id", "38558f8b33385e6ba9a5c6ac75f8e59f\n")
    host.write(d + "/fpga/intel-fpga-dev.0/intel-fpga-fme.0/bitstream_id", "0x123\n")
    host.write(d + "/fpga/intel-fpga-dev.0/intel-fpga-port.0/afu_id", "f" * 32 + "\n")
    rec = _run(host)["accelerators"][0]
    f = rec["fpga"]
    assert f["layout"] == "opae" and f["board"] == "PAC_ARRIA10"
    assert f["regions"][0]["interface_id"] == "38558f8b33385e6ba9a5c6ac75f8e59f" and f["regions"][0]["healthy"]
    assert f["ports"][0]["healthy"] is False
    assert f["healthy"] is False and rec["healthy"] is False


def test_all_f():
    assert all_f("ffffffff-ffff-ffff-ffff-ffffffffffff") and all_f("0xFFFF")
    assert not all_f("fffe") and not all_f("") and not all_f(None)


def test_xilinx_pair_is_one_card(host):
    m = host.add_pci("0000:af:00.0", "10ee", "5004", "120000", driver="xclmgmt", iommu_group=61)
    u = host.add_pci("0000:af:00.1", "10ee", "5005", "120000", driver="xocl", iommu_group=62)
    host.write(m + "/interface_uuids", "0b2dd2bacdd03ee80c1b6d1a8ebcd9b7\n")
    host.write(m + "/logic_uuids", "5dc1c8d8d5c48f6dba2fef1a7a6a9e32\n")
    host.write(m + "/board_name", "u250\n")
    host.write(u + "/icap.u.1/xclbinuuid", "1f5d8a48-7e1c-4a4b-9d0b-6b1f6c0c7a11\n")
    res = _run(host)
    assert [r["address"] for r in res["accelerators"]] == ["0000:af:00.1"]
    rec = res["accelerators"][0]
    f = rec["fpga"]
    assert f["layout"] == "xrt" and f["management_address"] == "0000:af:00.0" and f["user_address"] == "0000:af:00.1"
    assert f["board"] == "u250" and f["regions"][0]["interface_id"] == "0b2dd2bacdd03ee80c1b6d1a8ebcd9b7"
    assert rec["function"]["id"] == "1f5d8a48-7e1c-4a4b-9d0b-6b1f6c0c7a11"
    assert rec["function"]["trait"] == "CUSTOM_FPGA_FUNCTION_ID_XILINX_1F5D8A487E1C4A4B9D0B6B1F6C0C7A11"
    assert rec["programming_model"] == "single" and rec["healthy"] is True
    # either PF's address selects the card
    assert [r["address"] for r in _run(host, addresses=["0000:af:00.0"])["accelerators"]] == ["0000:af:00.1"]
    host.write(m + "/logic_uuids", "f" * 32 + "\n")
    assert _run(host)["accelerators"][0]["healthy"] is False


def test_qat_gen4_services_and_vfs(host):
    host.add_pci("0000:6b:00.0", "8086", "4940", "0b4000", driver="4xxx", sriov_totalvfs=16, sriov_vf_device="4941",
                 extra={"qat/state": "up\n", "qat/cfg_services": "asym;dc\n"})
    host.add_pci("0000:6b:00.1", "8086", "4941", "0b4000", driver="vfio-pci", physfn="0000:6b:00.0", iommu_group=7)
    host.add_pci("0000:3d:00.0", "8086", "37c8", "0b4000", driver="c6xx")
    res = _by_addr(_run(host))
    pf, vf, old = res["0000:6b:00.0"], res["0000:6b:00.1"], res["0000:3d:00.0"]
    assert pf["family"] == vf["family"] == old["family"] == "qat"
    assert pf["qat"] == {"product": "4xxx", "state": "up", "cfg_services": "asym;dc"}
    assert pf["programming_model"] == "single" and pf["healthy"] is True
    assert pf["function"] == {"id": "asym;dc", "name": "asym;dc", "trait": "CUSTOM_FUNCTION_QAT_ASYM_DC"}
    assert vf["function"] == pf["function"] and vf["units"][0]["kind"] == "vf"
    assert old["programming_model"] == "fixed" and old["function"] is None and old["qat"]["product"] == "c62x"


def test_nic_pf_and_vfs(host):
    host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", sriov_totalvfs=64, sriov_vf_device="154c")
    host.add_netdev("0000:d8:00.0", "enp216s0f0", "3c:fd:fe:a1:b2:c0")
    host.add_pci("0000:d8:02.0", "8086", "154c", "020000", driver="iavf", physfn="0000:d8:00.0", iommu_group=90)
    host.add_netdev("0000:d8:02.0", "enp216s0f0v0", "02:00:00:00:00:01")
    host.add_pci("0000:d8:02.1", "8086", "154c", "020000", driver="vfio-pci", physfn="0000:d8:00.0", iommu_group=91)
    host.add_pci("0000:00:03.0", "1af4", "1041", "020000", driver="virtio-pci")  # no SR-IOV: not an accelerator
    host.add_domain("instance-1", interfaces=["0000:d8:02.1"])
    res = _by_addr(_run(host))
    assert sorted(res) == ["0000:d8:00.0", "0000:d8:02.0", "0000:d8:02.1"]
    assert res["0000:d8:00.0"]["nic"]["interfaces"] == [{"name": "enp216s0f0", "mac": "3c:fd:fe:a1:b2:c0", "operstate": "up"}]
    assert res["0000:d8:02.0"]["nic"]["mac"] == "02:00:00:00:00:01"
    assert res["0000:d8:02.1"]["nic"] == {"interfaces": [], "mac": None}
    unit = res["0000:d8:02.1"]["units"][0]
    assert unit["in_use"] and unit["in_use_by"][0]["name"] == "instance-1"
    assert _by_addr(_run(host, include_all=True))["0000:00:03.0"]["family"] == "pci"


def test_folded_vf_netdevs_from_the_netdev_index_and_from_net(host):
    """A folded VF's netdev and MAC: from /sys/class/net's links when they name the function and its net/<name> is
    there, else from a listing of the VF's net/ (a VF without a class/net link, one whose link points at a netdev
    that is not below it any more)."""
    host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", sriov_totalvfs=64, sriov_vf_device="154c")
    host.add_netdev("0000:d8:00.0", "enp216s0f0", "3c:fd:fe:a1:b2:c0")
    for n in range(4):
        host.add_pci("0000:d8:02.%d" % n, "8086", "154c", "020000", driver="iavf", physfn="0000:d8:00.0")
        host.add_netdev("0000:d8:02.%d" % n, "enp216s0f0v%d" % n, "02:00:00:00:00:0%d" % n)
    os.unlink(host.path("/sys/class/net/enp216s0f0v1"))  # no link: its net/ is listed
    host.add_netdev("0000:d8:02.2", "enp216s0f0v2b", "02:00:00:00:00:22")  # two netdevs: the first by name
    os.rename(host.path(host.dev("0000:d8:02.3") + "/net/enp216s0f0v3"),
              host.path(host.dev("0000:d8:02.3") + "/net/eth9"))  # the link names a netdev gone from below it
    pf = _by_addr(_run(host, vf_detail="summary"))["0000:d8:00.0"]
    got = [(u["address"], u["netdev"], u["mac"]) for u in pf["sriov"]["vf_units"]]
    assert got == [("0000:d8:02.0", "enp216s0f0v0", "02:00:00:00:00:00"),
                   ("0000:d8:02.1", "enp216s0f0v1", "02:00:00:00:00:01"),
                   ("0000:d8:02.2", "enp216s0f0v2", "02:00:00:00:00:02"),
                   ("0000:d8:02.3", "eth9", "02:00:00:00:00:03")]
    assert pf["warnings"] == []
    full = _by_addr(_run(host, vf_detail="full"))
    assert [(a, full[a]["nic"]["interfaces"][0]["name"], full[a]["nic"]["mac"]) for a, _n, _m in got] == got


def test_filters(host):
    host.add_pci("0000:18:00.0", "10de", "1eb8", "030200", driver="nvidia")
    host.add_pci("0000:d8:00.0", "8086", "1572", "020000", driver="i40e", sriov_totalvfs=64)
    host.add_pci("0000:d8:02.0", "8086", "154c", "020000", physfn="0000:d8:00.0")
    host.add_pci("0000:00:00.0", "8086", "2020", "060000")

    def addrs(**kw):
        return [r["address"] for r in _run(host, **kw)["accelerators"]]
    assert addrs() == ["0000:18:00.0", "0000:d8:00.0", "0000:d8:02.0"]
    assert addrs(include_all=True) == ["0000:00:00.0", "0000:18:00.0", "0000:d8:00.0", "0000:d8:02.0"]
    assert addrs(families=["gpu"]) == ["0000:18:00.0"]
    assert addrs(families=["pci"]) == ["0000:00:00.0"]
    assert addrs(vendor_ids=["0x10DE"]) == ["0000:18:00.0"]
    assert addrs(addresses=["d8:00.0"]) == ["0000:d8:00.0", "0000:d8:02.0"]  # a PF selects its VFs
    assert addrs(addresses=["0000:d8:02.*"]) == ["0000:d8:02.0"]
    assert addrs(addresses=["0000:18:*"], families=["nic"]) == []


@pytest.mark.parametrize("kw,needle", [
    ({"families": ["tpu"]}, "families"),
    ({"vendor_ids": ["nvidia"]}, "vendor_ids"),
    ({"addresses": ["pci-0"]}, "addresses"),
    ({"addresses": ["0000:3b:00.9"]}, "addresses"),
])
def test_bad_options_name_the_option(host, kw, needle):
    with pytest.raises(OptionError) as e:
        _run(host, **kw)
    assert str(e.value).startswith(needle + ":")


def test_registry_order_and_custom_driver(host):
    host.add_pci("0000:18:00.0", "1234", "5678", "120000", driver="acme")

    class Acme(Driver):
        name = "acme"
        family = "fpga"
        programming_model = "single"

        def claims(self, func, ctx=None):
            return func.vendor_id == "1234"

        def describe(self, func, ctx):
            return {"function": {"id": "x", "name": "X", "trait": "CUSTOM_FUNCTION_X"}}

    reg = Registry()
    assert reg.drivers[-1].name == "pci"
    reg.register(Acme())
    rec = discover(Sysfs(host.root), registry=reg)["accelerators"][0]
    assert rec["handler"] == "acme" and rec["function"]["name"] == "X"


def test_a_failing_driver_gives_a_warning_not_a_traceback(host):
    host.add_pci("0000:18:00.0", "10de", "1eb8", "030200", driver="nvidia")
    reg = Registry()

    def boom(func, ctx):
        raise RuntimeError("kaboom")
    reg.by_name("nvidia").describe = boom
    rec = discover(Sysfs(host.root), registry=reg, nvidia_smi="never")["accelerators"][0]
    assert rec["vendor_id"] == "10de" and rec["units"]
    assert any("kaboom" in w for w in rec["warnings"])


def test_the_family_rules_of_a_record_are_its_drivers():
    """Placement's rules for a record come from its family's driver: the handler that made it when it is of the
    record's family, else the first driver of that family, else generic PCI."""
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record
    assert for_record({"family": "fpga", "handler": "xilinx"}).name == "xilinx"
    assert for_record({"family": "fpga", "handler": "nic"}).name == "intel_fpga"
    assert for_record({"family": "gpu", "vendor_id": "10de"}).name == "nvidia"
    assert for_record({"family": "gpu", "vendor_id": "1002"}).name == "gpu"
    assert for_record({"family": "fpga", "fpga": {"vendor": "xilinx"}}).name == "xilinx"
    assert for_record({"family": "tpu", "handler": "tpu"}).name == "pci"
    assert for_record({"family": "nic"}).vfs_pooled_in_pf and not for_record({"family": "fpga"}).vfs_pooled_in_pf


def test_family_provider_specs():
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record

    def traits(fn):
        return ["FN_" + fn["id"]] if fn else []
    fpga = {"family": "fpga", "handler": "intel_fpga", "address": "0000:5e:00.0", "programming_model": "dynamic",
            "function": {"id": "aaaa"}, "fpga": {"vendor": "intel", "regions": [{"id": "r0", "trait": "CUSTOM_R"}]}}
    assert for_record(fpga).provider_specs(fpga, ["BASE"], traits) == [
        ("0000:5e:00.0", "FPGA", 1, ["BASE", "CUSTOM_FPGA_INTEL", "CUSTOM_R", "FN_aaaa"], None)]
    assert for_record(fpga).discovered_function_trait(fpga, {"id": "aaaa-bbbb"}) == \
        "CUSTOM_FPGA_FUNCTION_ID_INTEL_AAAABBBB"
    nic = {"family": "nic", "address": "0000:d8:00.0", "sriov": {"numvfs": 0}}
    assert for_record(nic).provider_specs(nic, ["BASE"], traits) == [
        ("0000:d8:00.0", None, 0, ["BASE"], "no VFs created: no inventory")]
    other = {"family": "pci", "address": "0000:af:00.0", "vendor_id": "1af4", "device_id": "1041"}
    assert for_record(other).provider_specs(other, ["BASE"], traits) == [
        ("0000:af:00.0", "CUSTOM_PCI_1AF4_1041", 1, ["BASE"], None)]


@pytest.mark.parametrize("record, expected", [
    ({"family": "fpga", "handler": "intel_fpga", "fpga": {"vendor": "intel", "layout": "opae"}},
     ("intel_fpga_driver", None)),
    ({"family": "fpga", "handler": "xilinx", "fpga": {"vendor": "xilinx"}}, ("xilinx_fpga_driver", None)),
    ({"family": "qat", "vendor_id": "8086"}, ("intel_qat_driver", None)),
    ({"family": "gpu", "vendor_id": "10de"}, ("nvidia_gpu_driver", None)),
    ({"family": "nic", "vendor_id": "8086"}, ("intel_nic_driver", None)),
    ({"family": "nic", "vendor_id": "15b3", "address": "0000:d8:00.0"},
     (None, "Cyborg has no driver for nic cards of vendor 15b3 (0000:d8:00.0); not configured")),
    ({"family": "gpu", "vendor_id": "1002", "address": "0000:3b:00.0"},
     (None, "Cyborg has no driver for gpu cards of vendor 1002 (0000:3b:00.0); not configured")),
])
def test_cyborg_driver_of_each_family(record, expected):
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record
    assert for_record(record).cyborg_driver(record) == expected


def test_cyborg_cannot_see_a_dfl_intel_fpga():
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record
    rec = {"family": "fpga", "handler": "intel_fpga", "address": "0000:5e:00.0",
           "fpga": {"vendor": "intel", "layout": "dfl"}}
    drv, problem = for_record(rec).cyborg_driver(rec)
    assert drv == "intel_fpga_driver" and "0000:5e:00.0 uses the upstream DFL driver" in problem
