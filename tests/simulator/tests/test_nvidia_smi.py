"""The nvidia-smi fake's read-only queries, with the real tool's layouts: --query-gpu MIG modes, mig -lgi/-lci,
vgpu -s/-c."""

import copy
import json
import os

import pytest

from accelsim.model import load_lab
from accelsim.render import render_tree

A100 = {
    "bdf": "0000:af:00.0", "vendor": 0x10de, "device": 0x20b5, "subsystem_vendor": 0x10de,
    "subsystem_device": 0x1533, "class": 0x030200, "revision": 0xa1, "driver": "nvidia", "numa_node": 1,
    "iommu_group": 90, "link": {"speed": "16.0 GT/s PCIe", "width": 16},
    "gpu": {"name": "NVIDIA A100 80GB PCIe", "uuid": "GPU-00000000-1111-2222-3333-444444444444",
            "memory_mib": 81920,
            "mig": {"mode": "Enabled", "pending": "Enabled", "gpu_instances": [
                {"id": 1, "profile_id": 9, "name": "3g.40gb", "placement": "0:4",
                 "compute_instances": [{"id": 0, "profile_id": 2, "name": "3g.40gb", "placement": "0:3"}]},
                {"id": 9, "profile_id": 19, "name": "1g.10gb", "placement": "4:1",
                 "compute_instances": [{"id": 0, "profile_id": 0, "name": "1g.10gb", "placement": "0:1"}]},
                {"id": 13, "profile_id": 19, "name": "1g.10gb", "placement": "6:1"}]}},
}


def mig_lab(mode="Enabled", instances=True):
    """gpu-vendor-vfio (an L40, not MIG capable) plus a MIG-capable A100 in ``mode``."""
    lab = copy.deepcopy(load_lab("gpu-vendor-vfio"))
    a100 = copy.deepcopy(A100)
    a100["gpu"]["mig"]["mode"] = a100["gpu"]["mig"]["pending"] = mode
    if not instances:
        a100["gpu"]["mig"]["gpu_instances"] = []
    lab["functions"].append(a100)
    lab["name"] = "gpu-mig"
    return lab


@pytest.fixture
def host(tmp_path):
    return render_tree(mig_lab(), str(tmp_path / "h"))


def test_query_gpu_mig_modes(host):
    rc, out, _err = host.tool("nvidia-smi", "--query-gpu=index,pci.bus_id,mig.mode.current,mig.mode.pending",
                              "--format=csv,noheader")
    assert rc == 0
    assert out.splitlines() == ["0, 00000000:3B:00.0, [N/A], [N/A]", "1, 00000000:AF:00.0, Enabled, Enabled"]
    rc, out, _err = host.tool("nvidia-smi", "--query-gpu=pci.bus_id,mig.mode.current", "--format=csv")
    assert out.splitlines()[0] == "pci.bus_id, mig.mode.current"


def test_mig_lgi_table(host):
    rc, out, _err = host.tool("nvidia-smi", "mig", "-lgi")
    assert rc == 0
    lines = out.splitlines()
    assert lines[1].startswith("| GPU instances:") and lines[2].split() == [
        "|", "GPU", "Name", "Profile", "Instance", "Placement", "|"]
    rows = [line for line in lines if "MIG" in line]
    assert rows == [
        "|   1  MIG 3g.40gb            9        1          0:4     |",
        "|   1  MIG 1g.10gb           19        9          4:1     |",
        "|   1  MIG 1g.10gb           19       13          6:1     |",
    ]
    assert all(len(line) == len(lines[0]) for line in lines)  # a closed box, as the real table
    assert lines[-1] == lines[0] and lines[lines.index(rows[0]) + 1] == lines[0]  # a rule after every row


def test_mig_lci_table_and_filters(host):
    rc, out, _err = host.tool("nvidia-smi", "mig", "-lci")
    assert rc == 0
    rows = [line for line in out.splitlines() if "MIG" in line]
    assert rows == [
        "|   1      1       MIG 3g.40gb          2         0          0:3     |",
        "|   1      9       MIG 1g.10gb          0         0          0:1     |",
    ]
    assert "Compute instances:" in out and "Start:Size" in out
    rc, out, _err = host.tool("nvidia-smi", "mig", "-lci", "-i", "1", "-gi", "9")
    assert [line for line in out.splitlines() if "MIG" in line] == rows[1:]
    rc, out, _err = host.tool("nvidia-smi", "mig", "-lgi", "-i", "0")
    assert (rc, out) == (0, "No MIG-enabled devices found.\n")  # the L40 is not MIG capable (exit 0 as on a real H200)
    rc, out, _err = host.tool("nvidia-smi", "mig", "-lci", "-gi", "13")
    assert (rc, out) == (6, "No compute instances found: Not Found\n")


def test_mig_disabled_and_enabled_without_instances(tmp_path):
    h = render_tree(mig_lab(mode="Disabled"), str(tmp_path / "off"))
    # as the real H200 capture (tests/captures/nvidia-h200-580.159.04): the message on stdout, exit 0
    for listing in ("-lgi", "-lci"):
        rc, out, _err = h.tool("nvidia-smi", "mig", listing)
        assert (rc, out) == (0, "No MIG-enabled devices found.\n")
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lgip", "-i", "1")  # profiles are listed with MIG disabled
    assert rc == 0 and "MIG 7g.80gb" in out and " 7/7 " in out
    rc, out, _err = h.tool("nvidia-smi", "--query-gpu=mig.mode.current", "--format=csv,noheader", "-i", "1")
    assert out == "Disabled\n"
    h = render_tree(mig_lab(instances=False), str(tmp_path / "empty"))
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lgi")
    assert (rc, out) == (6, "No GPU instances found: Not Found\n")
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lci")
    assert (rc, out) == (6, "No compute instances found: Not Found\n")


def test_mig_bad_arguments(host):
    rc, out, _err = host.tool("nvidia-smi", "mig", "-cgi")
    assert rc == 2 and "Invalid combination" in out
    rc, out, _err = host.tool("nvidia-smi", "mig", "-dgi", "-C")
    assert rc == 2 and "Invalid combination" in out


def test_vgpu_supported_and_creatable(host):
    rc, out, _err = host.tool("nvidia-smi", "vgpu", "-s", "-i", "0")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "GPU 00000000:3B:00.0"
    assert lines[1:3] == ["    NVIDIA L40-1Q", "    NVIDIA L40-2Q"] and len(lines) == 11
    rc, out, _err = host.tool("nvidia-smi", "vgpu", "-s", "-v", "-i", "00000000:3B:00.0")
    lines = out.splitlines()
    assert lines[1] == "    vGPU Type ID                          : 0x474"  # 1140
    assert lines[2] == "        Name                              : NVIDIA L40-1Q"
    assert sum(1 for line in lines if "vGPU Type ID" in line) == 10
    with host.transaction() as h:
        h.set_numvfs("0000:3b:00.0", "32")
        h.set_vgpu_type(h.vfs("0000:3b:00.0")[0], "1149")  # 48Q: the whole card
    rc, out, _err = host.tool("nvidia-smi", "vgpu", "-c", "-i", "0")
    assert (rc, out) == (0, "GPU 00000000:3B:00.0\n")  # nothing creatable any more
    rc, out, _err = host.tool("nvidia-smi", "vgpu", "-s", "-v")
    assert "GPU 00000000:AF:00.0" in out.splitlines()  # every GPU, the A100 without vGPU types


def test_vgpu_mdev_parent_types(tmp_path):
    h = render_tree("gpu-mdev", str(tmp_path / "t4"))
    rc, out, _err = h.tool("nvidia-smi", "vgpu", "-s", "-v")
    assert rc == 0
    lab = load_lab("gpu-mdev")
    t4 = [f for f in lab["functions"] if f.get("mdev")][0]
    first = t4["mdev"]["types"][0]
    assert "    vGPU Type ID                          : 0x%x" % int(first["id"].split("-")[1]) in out.splitlines()
    assert "        Name                              : %s" % first["name"] in out.splitlines()


def test_mig_lgip_counts_free_instances_from_the_layout(tmp_path):
    # gpu-mig-h100: 3g.40gb at 4:4 and 1g.10gb at 0:1 and 1:1 leave memory slices 2-3 and two compute slices
    h = render_tree(load_lab("gpu-mig-h100"), str(tmp_path / "h100"))
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lgip", "-i", "0")
    assert rc == 0
    lines = out.splitlines()
    assert lines[1].startswith("| GPU instance profiles:") and lines[2].split() == [
        "|", "GPU", "Name", "ID", "Instances", "Memory", "P2P", "SM", "DEC", "ENC", "|"]
    assert all(len(line) == 81 for line in lines)
    rows = [line.split() for line in lines if "MIG" in line]
    assert [(r[3], int(r[4]), r[5], r[6]) for r in rows] == [
        ("1g.10gb", 19, "2/7", "9.75"), ("1g.10gb+me", 20, "1/1", "9.75"), ("1g.20gb", 15, "1/4", "19.62"),
        ("2g.20gb", 14, "1/3", "19.62"), ("3g.40gb", 9, "0/2", "39.50"), ("4g.40gb", 5, "0/1", "39.50"),
        ("7g.80gb", 0, "0/1", "79.25")]
    # each profile row is followed by its CE/JPEG/OFA row (the 7g row: 8 CE, 7 JPEG, 1 OFA)
    i = lines.index([line for line in lines if "7g.80gb" in line][0])
    assert lines[i + 1].split() == ["|", "8", "7", "1", "|"]


def test_mig_lgip_full_layout_and_placements(tmp_path):
    # gpu-mig-a100: the MIG user guide's 3-2-1-1 layout fills all eight memory slices
    h = render_tree(load_lab("gpu-mig-a100"), str(tmp_path / "a100"))
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lgip")
    assert rc == 0
    rows = [line.split() for line in out.splitlines() if "MIG" in line]
    assert [(r[3], int(r[4]), r[5]) for r in rows] == [
        ("1g.5gb", 19, "0/7"), ("1g.5gb+me", 20, "0/1"), ("1g.10gb", 15, "0/4"), ("2g.10gb", 14, "0/3"),
        ("3g.20gb", 9, "0/2"), ("4g.20gb", 5, "0/1"), ("7g.40gb", 0, "0/1")]
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lgipp", "-i", "0")
    assert rc == 0
    assert out.splitlines() == [
        "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1",
        "GPU  0 Profile ID 20 Placements: {0,1,2,3,4,5,6}:1",
        "GPU  0 Profile ID 15 Placements: {0,2,4,6}:2",
        "GPU  0 Profile ID 14 Placements: {0,2,4}:2",
        "GPU  0 Profile ID  9 Placements: {0,4}:4",
        "GPU  0 Profile ID  5 Placement : {0}:4",
        "GPU  0 Profile ID  0 Placement : {0}:8"]


def test_mig_lgip_needs_a_mig_capable_card_the_simulator_knows(host, tmp_path):
    rc, out, _err = host.tool("nvidia-smi", "mig", "-lgip", "-i", "0")  # the L40: not MIG capable
    assert rc == 6 and out == "No MIG-enabled devices found.\n"
    lab = mig_lab()
    lab["functions"][-1]["device"] = 0x20b6  # a card the simulator has no profile table for
    h = render_tree(lab, str(tmp_path / "unknown"))
    rc, _out, err = h.tool("nvidia-smi", "mig", "-lgip")
    assert rc == 2 and "no MIG profile table for device 0x20b6" in err


CAPTURE = os.path.join(os.path.dirname(__file__), "..", "..", "captures", "nvidia-h200-580.159.04", "capture.json")


def _captured(name):
    """What the real tool printed on stdout for the capture's command ``name`` (tools/capture-host.py)."""
    with open(CAPTURE) as f:
        commands = json.load(f)["commands"]
    return [c["stdout"] for c in commands if c["name"] == name][0]


@pytest.mark.parametrize("device", [0x2335, 0x233b])
def test_h200_profiles_match_the_real_capture(tmp_path, device):
    """An H200 (SXM 2335, NVL 233b) with MIG disabled and no vGPU manager answers mig -lgip/-lgipp/-lgi/-lci and the
    vgpu listings as the real H200 did, byte for byte (driver 580.159.04; mig-parted groups the NVL with the SXM)."""
    lab = mig_lab(mode="Disabled")
    h200 = lab["functions"][-1]
    h200["device"] = device
    h200["bdf"] = "0000:00:06.0"
    lab["functions"] = [h200]
    h = render_tree(lab, str(tmp_path / "h200"))
    for name, args in (("smi-mig-lgip", ("mig", "-lgip")), ("smi-mig-lgipp", ("mig", "-lgipp")),
                       ("smi-mig-lgi", ("mig", "-lgi")), ("smi-mig-lci", ("mig", "-lci")), ("smi-vgpu", ("vgpu",)),
                       ("smi-vgpu-q", ("vgpu", "-q")), ("smi-vgpu-s-v", ("vgpu", "-s", "-v")),
                       ("smi-vgpu-c", ("vgpu", "-c"))):
        rc, out, _err = h.tool("nvidia-smi", *args)
        assert (rc, out) == (0, _captured(name)), name


def test_a30_and_a100_pcie_40gb_have_profile_tables(tmp_path):
    """A30 (20b7: 4 memory and 4 compute slices) and A100 PCIe 40GB (20b1) are known to the simulator."""
    lab = mig_lab(instances=False)
    gpu = lab["functions"][-1]
    gpu["device"] = 0x20b7
    h = render_tree(lab, str(tmp_path / "a30"))
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lgipp", "-i", "1")
    assert rc == 0 and out.splitlines() == [
        "GPU  1 Profile ID 14 Placements: {0,1,2,3}:1", "GPU  1 Profile ID 21 Placements: {0,1,2,3}:1",
        "GPU  1 Profile ID  5 Placements: {0,2}:2", "GPU  1 Profile ID  6 Placements: {0,2}:2",
        "GPU  1 Profile ID  0 Placement : {0}:4"]
    rc, out, _err = h.tool("nvidia-smi", "mig", "-cgi", "5,14,14,14", "-i", "1")  # 2 + 1 + 1 of 4 slices, then none
    assert rc != 0 and out.count("Successfully created GPU instance") == 3 and "Insufficient Resources" in out
    gpu["device"] = 0x20b1
    h = render_tree(lab, str(tmp_path / "a100"))
    rc, out, _err = h.tool("nvidia-smi", "mig", "-lgip", "-i", "1")
    assert rc == 0 and "MIG 1g.5gb " in out and "MIG 7g.40gb" in out
