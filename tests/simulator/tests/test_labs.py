"""Lab descriptions: real IDs (checked against pci.ids) and an lspci read-back of every rendered lab."""

import shutil
import subprocess

import pytest

from accelsim import lab_names, load_lab
from accelsim.kernel import Host
from accelsim.model import LabError, normalize_lab

from .helpers import pci_ids

# Real VF device ids that Debian's pci.ids does not list (lspci shows "Device 09c5"): PAC A10 VF and
# PAC D5005 VF.
UNLISTED_VF_IDS = {("8086", "09c5"), ("8086", "0b2c")}
# Real ids newer than Debian 12's pci.ids: MI300X and its VF (listed by pci.ids since 2024 and by AMD's GIM,
# libgv/core/amdgv_marketing_name.c), and Aldebaran's VF id 7410 (amdgpu's pciidlist, GIM's amd-smi).
NEWER_IDS = {("1002", "74a1"), ("1002", "74b5"), ("1002", "7410")}
REQUIRED = {"gpu-mdev", "gpu-vendor-vfio", "fpga-opae", "fpga-dfl", "xilinx-alveo", "nic-sriov", "qat", "lab-all",
            "gpu-amd-instinct", "gpu-intel-flex"}
# labs of their own, not part of the demo host lab-all
STANDALONE = {"gpu-amd-instinct", "gpu-intel-flex"}

IDS = pci_ids()


def test_every_required_lab_exists():
    assert REQUIRED <= set(lab_names())


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_lab_ids_are_in_pci_ids(name):
    vendors, devices, _subsystems, classes = IDS
    lab = load_lab(name)
    ordinary = 0
    for f in lab["functions"]:
        v, d = "%04x" % f["vendor"], "%04x" % f["device"]
        assert v in vendors, f["bdf"]
        assert (v, d) in devices or (v, d) in NEWER_IDS, "%s %s:%s not in pci.ids" % (f["bdf"], v, d)
        assert "%02x%02x" % (f["class"] >> 16, (f["class"] >> 8) & 0xFF) in classes
        if f["subsystem_vendor"]:
            assert "%04x" % f["subsystem_vendor"] in vendors
        if f.get("sriov"):
            vd = (v, "%04x" % f["sriov"]["vf_device"])
            assert vd in devices or vd in UNLISTED_VF_IDS or vd in NEWER_IDS, vd
        if f["class"] >> 16 in (0x01, 0x06):
            ordinary += 1
    assert ordinary >= 2, "each lab has ordinary functions (bridges, storage) too"


def test_named_subsystems_resolve():
    _v, _d, subsystems, _c = IDS
    lab = load_lab("lab-all")
    named = {("8086", "1572", "8086", "0007"), ("8086", "37c8", "8086", "0001"), ("144d", "a80a", "144d", "a813"),
             ("8086", "2020", "15d9", "095d")}
    found = {("%04x" % f["vendor"], "%04x" % f["device"], "%04x" % f["subsystem_vendor"], "%04x" % f["subsystem_device"])
             for f in lab["functions"]}
    assert named <= found
    assert all(k in subsystems for k in named)


def test_lab_all_combines_every_lab_once():
    lab = load_lab("lab-all")
    bdfs = [f["bdf"] for f in lab["functions"]]
    assert len(bdfs) == len(set(bdfs))
    for name in REQUIRED - {"lab-all"} - STANDALONE:
        assert {f["bdf"] for f in load_lab(name)["functions"]} <= set(bdfs)


def test_invalid_labs_are_rejected():
    with pytest.raises(LabError):
        normalize_lab({"functions": [{"bdf": "nonsense", "vendor": 1, "device": 1, "class": 1, "iommu_group": 0}]})
    with pytest.raises(LabError):
        normalize_lab({"functions": [{"bdf": "0000:00:00.0", "vendor": 1, "device": 1, "class": 1, "iommu_group": 0, "parent": "0000:01:00.0"}]})
    with pytest.raises(LabError):
        normalize_lab({"functions": [{"bdf": "0000:00:00.0", "vendor": 1, "device": 1, "class": 1}]})


def _lspci(root, *args):
    lspci = shutil.which("lspci")
    assert lspci, "lspci (pciutils) is required for the read-back test"
    out = subprocess.run([lspci, "-A", "linux-sysfs", "-O", "sysfs.path=%s/sys/bus/pci" % root] + list(args),
                         capture_output=True, text=True, check=True)
    return out.stdout


def _vmm(text):
    records = []
    for block in text.strip().split("\n\n"):
        rec = {}
        for line in block.splitlines():
            key, _sep, value = line.partition(":\t")
            rec[key] = value
        records.append(rec)
    return records


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_lspci_reads_back_every_lab(name, tree):
    h = tree(name)
    host = Host(h.state())
    lines = _lspci(h.root, "-D", "-n").splitlines()
    got = {}
    for line in lines:
        parts = line.split()
        got[parts[0]] = (parts[1].rstrip(":"), parts[2], line)
    assert sorted(got) == host.bdfs()
    for bdf in host.bdfs():
        st = host.static(bdf)
        cls, ids, line = got[bdf]
        assert cls == "%04x" % (st["class"] >> 8)
        assert ids == "%04x:%04x" % (st["vendor"], st["device"])
        if st["revision"]:
            assert "(rev %02x)" % st["revision"] in line
    vendors, devices, _s, _c = IDS
    for rec in _vmm(_lspci(h.root, "-D", "-vmm", "-nn")):
        st = host.static(rec["Slot"])
        v, d = "%04x" % st["vendor"], "%04x" % st["device"]
        assert rec["Vendor"] == "%s [%s]" % (vendors[v], v)
        if (v, d) in NEWER_IDS:
            assert rec["Device"] == "Device [%s]" % d   # what lspci says of an id its pci.ids does not list
        else:
            assert rec["Device"] == "%s [%s]" % (devices[(v, d)], d)
        assert rec["IOMMUGroup"] == str(st["iommu_group"])
        assert rec["NUMANode"] == str(st["numa_node"])
        if st["subsystem_vendor"] and (st["class"] >> 8) != 0x0604:
            assert rec["SVendor"].endswith("[%04x]" % st["subsystem_vendor"])
            assert rec["SDevice"].endswith("[%04x]" % st["subsystem_device"])


def test_lspci_reads_vfs_and_links_after_enabling(tree):
    h = tree("nic-sriov")
    with h.transaction() as host:
        host.set_numvfs("0000:d8:00.1", "3")
    out = _lspci(h.root, "-D", "-nn")
    assert "0000:d8:0a.0 Ethernet controller [0200]: Intel Corporation Ethernet Virtual Function 700 Series [8086:154c] (rev 02)" in out
    assert out.count("[8086:154c]") == 3
    vv = _lspci(h.root, "-D", "-vv", "-s", "0000:d8:00.0")
    assert "LnkSta:\tSpeed 8GT/s" in vv and "Width x8" in vv
    assert "Kernel driver in use: i40e" in _lspci(h.root, "-D", "-k", "-s", "0000:d8:00.0")
