"""The nvidia-smi fake's MIG changes (mig -cgi/-cci/-dci/-dgi, -mig 0|1) and the MIG state's life across a
reboot, on the gpu-mig-a100 (one instance in use) and gpu-mig-h100 labs."""

import copy
import os
import re

import pytest

from accelsim import mig
from accelsim.mig_profiles import profiles
from accelsim.model import load_lab
from accelsim.render import render_tree


@pytest.fixture
def a100(tmp_path):
    return render_tree("gpu-mig-a100", str(tmp_path / "a100"))


@pytest.fixture
def h100(tmp_path):
    return render_tree("gpu-mig-h100", str(tmp_path / "h100"))


def gis(h):
    return [(g["id"], g["name"], g["placement"], len(g["compute_instances"]))
            for g in h.state()["mig"][next(iter(h.state()["mig"]))]["gpu_instances"]]


CREATED = re.compile(r"^Successfully created GPU instance ID +(\d+) on GPU +0 using profile MIG (\S+) \(ID +(\d+)\)$")


def test_create_with_default_compute_instances_follows_the_placement_rules(h100):
    rc, out, _err = h100.tool("nvidia-smi", "mig", "-cgi", "2g.20gb", "-C", "-i", "0")
    assert rc == 0, out
    lines = out.splitlines()
    gid = int(CREATED.match(lines[0]).group(1))
    assert lines[1] == ("Successfully created compute instance ID  0 on GPU  0 GPU instance ID %2d using profile "
                        "MIG 2g.20gb (ID  1)" % gid)
    # the only free 2-slice start of the H100 lab is 2 (0:1, 1:1 and 4:4 are taken); the id is the driver's choice
    assert (gid, "2g.20gb", "2:2", 1) in gis(h100)


def test_insufficient_resources_stops_at_the_first_refusal(h100):
    rc, out, _err = h100.tool("nvidia-smi", "mig", "-cgi", "19,14", "-C")
    lines = out.splitlines()
    assert rc == 255
    m = CREATED.match(lines[0])
    assert m and m.group(2, 3) == ("1g.10gb", "19")
    assert lines[2] == "Unable to create a GPU instance on GPU  0 using profile 14: Insufficient Resources"
    assert lines[-1] == "Failed to create GPU instances: Insufficient Resources"
    made = [g for g in gis(h100) if g[0] == int(m.group(1))]
    assert made and made[0][1] == "1g.10gb" and made[0][2] in ("2:1", "3:1")  # what was created before stays
    rc, out, _err = h100.tool("nvidia-smi", "mig", "-cgi", "99")
    assert rc == 6 and "using profile 99: Not Found" in out


def test_destroy_order_and_in_use(a100):
    rc, out, _err = a100.tool("nvidia-smi", "mig", "-dgi", "-gi", "4")
    assert rc == 255  # its compute instance is still there
    assert out.splitlines() == ["Unable to destroy GPU instance ID  4 from GPU  0: In use by another client",
                                "Failed to destroy GPU instances: In use by another client"]
    rc, out, _err = a100.tool("nvidia-smi", "mig", "-dci", "-i", "0")
    assert rc == 255
    assert "Unable to destroy compute instance ID  0 from GPU  0 GPU instance ID  2: In use by another client" in out
    assert "Successfully destroyed compute instance ID  0 from GPU  0 GPU instance ID  4" in out
    rc, out, _err = a100.tool("nvidia-smi", "mig", "-dgi")
    assert rc == 255 and "Successfully destroyed GPU instance ID  8 from GPU  0" in out
    assert gis(a100) == [(2, "3g.20gb", "4:4", 1)]  # the in-use one (pid holds nvidia-cap21/22)
    rc, out, _err = a100.tool("nvidia-smi", "mig", "-dgi")
    assert (rc, out) == (255, "Unable to destroy GPU instance ID  2 from GPU  0: In use by another client\n"
                              "Failed to destroy GPU instances: In use by another client\n")
    pid = next(iter(a100.state()["processes"]))
    a100.release(pid)
    assert a100.tool("nvidia-smi", "mig", "-dci")[0] == 0
    assert a100.tool("nvidia-smi", "mig", "-dgi")[0] == 0
    rc, out, _err = a100.tool("nvidia-smi", "mig", "-dgi")
    assert (rc, out) == (6, "No GPU instances found: Not Found\n")
    rc, out, _err = a100.tool("nvidia-smi", "mig", "-cgi", "9,19,14,19", "-C")
    assert rc == 0
    # the 3g takes 4:4 (the highest start, as real drivers place it first); the rest land where the driver chooses
    got = sorted((g[1], g[2]) for g in gis(a100))
    assert [n for n, _p in got] == ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"] and ("3g.20gb", "4:4") in got
    assert all(int(p.split(":")[0]) < 4 for n, p in got if n != "3g.20gb")


def test_gpu_instance_ids_are_the_drivers_choice(tmp_path):
    """GI ids do not follow from placements (DCGM issue 138: a 3g at 4:4 is GI 1, a 1g at 3:1 GI 14): two GPUs given
    the same layout get different ids, and a rerun of the lab the same ones."""
    lab = load_lab("gpu-mig-h100")
    gpu = [f for f in lab["functions"] if (f.get("gpu") or {}).get("mig")][0]
    twin = copy.deepcopy(gpu)
    twin["bdf"] = "0000:9a:00.0"
    twin["gpu"]["uuid"] = "GPU-6b0e6a24-0000-4000-8000-0000000000aa"
    lab["functions"].append(twin)

    def layout(path):
        h = render_tree(copy.deepcopy(lab), str(tmp_path / path))
        for i in ("0", "1"):
            h.tool("nvidia-smi", "mig", "-dci", "-i", i)
            h.tool("nvidia-smi", "mig", "-dgi", "-i", i)
            assert h.tool("nvidia-smi", "mig", "-cgi", "9,19,19,19", "-C", "-i", i)[0] == 0
        return [sorted((g["placement"], g["id"]) for g in m["gpu_instances"]) for m in h.state()["mig"].values()]
    first, second = layout("a"), layout("b")
    assert first == second  # seeded: a lab replays the same choices
    assert first[0] != first[1]  # the same request on two GPUs: other ids or placements
    placement_ids = {"4:4": 2, "0:1": 7, "1:1": 8, "2:1": 9, "3:1": 10}  # the old derived numbering
    assert any(placement_ids.get(p) != gid for p, gid in first[0] + first[1])


def test_cci_creates_the_default_compute_instance(h100):
    assert h100.tool("nvidia-smi", "mig", "-dci", "-gi", "7")[0] == 0
    rc, out, _err = h100.tool("nvidia-smi", "mig", "-cci", "-gi", "7")
    assert (rc, out) == (0, "Successfully created compute instance ID  0 on GPU  0 GPU instance ID  7 using "
                            "profile MIG 1g.10gb (ID  0)\n")


def test_caps_nodes_and_minors(a100):
    text = open(a100.path("/proc/driver/nvidia-caps/mig-minors")).read().splitlines()
    assert text[:4] == ["config 1", "monitor 2", "gpu0/gi0/access 3", "gpu0/gi0/ci0/access 4"]
    assert "gpu0/gi2/access 21" in text and text[-1] == "gpu31/gi14/ci7/access 4322"
    nodes = sorted(os.listdir(a100.path("/dev/nvidia-caps")))
    # GI 2 (21, ci0 22), GI 4 (39, 40), GI 7 (66, 67), GI 8 (75, 76)
    assert nodes == sorted("nvidia-cap%d" % n for n in (21, 22, 39, 40, 66, 67, 75, 76))
    assert mig.gi_minor(1, 0) == 3 + 135


def test_mode_change_in_use_is_pending_and_takes_effect_at_reboot(h100):
    assert h100.tool("nvidia-smi", "mig", "-dci")[0] == 0
    assert h100.tool("nvidia-smi", "mig", "-dgi")[0] == 0
    pid = h100.mark_in_use("/dev/nvidia0", by="process", name="python3")
    rc, out, _err = h100.tool("nvidia-smi", "-i", "0", "-mig", "0")
    assert rc == 0
    assert out.splitlines()[0] == "Warning: MIG mode is in pending disable state for GPU 00000000:19:00.0:In use by another client"
    assert out.splitlines()[-1] == "All done."
    rc, out, _err = h100.tool("nvidia-smi", "--query-gpu=mig.mode.current,mig.mode.pending", "--format=csv,noheader")
    assert out == "Enabled, Disabled\n"
    h100.release(pid)
    h100.reboot()
    rc, out, _err = h100.tool("nvidia-smi", "--query-gpu=mig.mode.current,mig.mode.pending", "--format=csv,noheader")
    assert out == "Disabled, Disabled\n"
    rc, out, _err = h100.tool("nvidia-smi", "-i", "0", "-mig", "1")
    assert (rc, out) == (0, "Enabled MIG Mode for GPU 00000000:19:00.0\nAll done.\n")


def test_disable_refused_while_instances_exist_and_layout_lost_at_reboot(h100):
    rc, out, _err = h100.tool("nvidia-smi", "-i", "0", "-mig", "0")
    assert (rc, out) == (255, "Unable to disable MIG Mode for GPU 00000000:19:00.0: In use by another client\n")
    h100.reboot()
    rc, out, _err = h100.tool("nvidia-smi", "mig", "-lgi")
    assert (rc, out) == (6, "No GPU instances found: Not Found\n")  # MIG layouts do not survive a reboot
    rc, out, _err = h100.tool("nvidia-smi", "--query-gpu=mig.mode.current", "--format=csv,noheader")
    assert out == "Enabled\n"  # the mode does
    assert not os.path.exists(h100.path("/dev/nvidia-caps"))


def test_not_mig_capable(tmp_path):
    h = render_tree("gpu-vendor-vfio", str(tmp_path / "l40"))
    rc, out, _err = h.tool("nvidia-smi", "-i", "0", "-mig", "1")
    assert (rc, out) == (3, "Unable to enable MIG Mode for GPU 00000000:3B:00.0: Not Supported\n")


def test_free_counts_follow_the_state(h100):
    table = profiles(0x2330)
    assert h100.tool("nvidia-smi", "mig", "-cgi", "19,19", "-C")[0] == 0
    rc, out, _err = h100.tool("nvidia-smi", "mig", "-lgip")
    assert rc == 0 and "MIG 1g.10gb         19     0/7" in out
    assert table[0]["name"] == "1g.10gb"
