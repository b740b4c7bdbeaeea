"""MIG-backed vGPU on the gpu-mig-vgpu lab (H100 80GB, vendor-specific VFIO): the VFs' creatable types follow the
free GPU instances, a type takes one GI and 0 frees it, the MIG side sees the GI as in use, and nvidia-smi vgpu
shows which GI each vGPU runs on."""

import errno
import os

import pytest

from accelsim.render import render_tree
from accelsim.kernel import domain_xml

from .helpers import expect_errno

PF = "0000:1b:00.0"
VF0, VF1, VF2 = "0000:1b:00.4", "0000:1b:00.5", "0000:1b:00.6"
T_1_10C, T_3_40C, T_7_80C, T_TIME_SLICED = 1100, 1104, 1106, 1113


@pytest.fixture
def lab(tmp_path):
    """The lab with its VFs on and its layout destroyed (each test makes the one it needs)."""
    h = render_tree("gpu-mig-vgpu", str(tmp_path / "h"))
    rc, out, err = h.tool("sriov-manage", "-e", PF)
    assert rc == 0, out + err
    for what in ("-dci", "-dgi"):
        rc, out, _err = h.tool("nvidia-smi", "mig", what, "-i", "0")
        assert rc == 0, out
    return h


def creatable(h, vf):
    with open(os.path.join(h.root, "sys/bus/pci/devices/%s/nvidia/creatable_vgpu_types" % vf)) as f:
        lines = f.read().splitlines()
    assert lines[0] == "ID    : vGPU Name"
    return [int(x.split(":")[0]) for x in lines[1:]]


def layout(h, profiles):
    rc, out, _err = h.tool("nvidia-smi", "mig", "-cgi", profiles, "-C", "-i", "0")
    assert rc == 0, out


def backing(h):
    return dict((gi["id"], gi.get("vgpu_vf")) for gi in h.state()["mig"][PF]["gpu_instances"])


def gi_ids(h, name):
    """The ids the simulated driver chose for the GIs of profile ``name`` (read back, never predicted)."""
    return sorted(gi["id"] for gi in h.state()["mig"][PF]["gpu_instances"] if gi["name"] == name)


def test_creatable_types_follow_the_free_gpu_instances(lab):
    assert creatable(lab, VF0) == [], "MIG mode on and no GPU instance: nothing is creatable, time-sliced types neither"
    layout(lab, "3g.40gb,1g.10gb,1g.10gb")
    assert creatable(lab, VF0) == [T_1_10C, T_3_40C]
    with lab.transaction() as host:
        host.set_vgpu_type(VF0, "%d" % T_3_40C)
    assert creatable(lab, VF0) == [], "a VF with a type lists nothing"
    assert creatable(lab, VF1) == [T_1_10C], "the one 3g.40gb instance backs VF0's vGPU"
    (g3,), (g1a, g1b) = gi_ids(lab, "3g.40gb"), gi_ids(lab, "1g.10gb")
    assert backing(lab) == {g3: VF0, g1a: None, g1b: None}
    with lab.transaction() as host:
        host.set_vgpu_type(VF1, "%d" % T_1_10C)
        host.set_vgpu_type(VF2, "%d" % T_1_10C)
    assert backing(lab) == {g3: VF0, g1a: VF1, g1b: VF2}
    assert creatable(lab, "0000:1b:00.7") == []
    with lab.transaction() as host:
        host.set_vgpu_type(VF1, "0")
    assert backing(lab)[g1a] is None and creatable(lab, "0000:1b:00.7") == [T_1_10C], "writing 0 frees the GI"


def test_the_kernel_refuses_what_is_not_creatable(lab):
    with lab.transaction() as host:
        expect_errno(errno.EINVAL, host.set_vgpu_type, VF0, "%d" % T_1_10C)  # no GI at all yet
    layout(lab, "1g.10gb")
    with lab.transaction() as host:
        expect_errno(errno.EINVAL, host.set_vgpu_type, VF0, "%d" % T_TIME_SLICED)
        expect_errno(errno.EINVAL, host.set_vgpu_type, VF0, "%d" % T_7_80C)
        host.set_vgpu_type(VF0, "%d" % T_1_10C)
        expect_errno(errno.EBUSY, host.set_vgpu_type, VF0, "%d" % T_3_40C)  # a type already: 0 first
        expect_errno(errno.EINVAL, host.set_vgpu_type, VF1, "%d" % T_1_10C)  # the one 1g.10gb is taken
    with lab.transaction() as host:
        try:
            host.set_vgpu_type(VF1, "%d" % T_1_10C)
        except OSError as e:
            assert "no free GPU instance of profile 1g.10gb" in str(e)
        else:
            pytest.fail("a second 1g.10gb vGPU on one 1g.10gb instance was accepted")


def test_a_gpu_instance_backing_a_vgpu_cannot_be_destroyed(lab):
    layout(lab, "3g.40gb,1g.10gb")
    with lab.transaction() as host:
        host.set_vgpu_type(VF0, "%d" % T_1_10C)
    (g1,) = gi_ids(lab, "1g.10gb")
    rc, out, _err = lab.tool("nvidia-smi", "mig", "-dci", "-i", "0", "-gi", str(g1))
    assert rc == 255
    assert ("Unable to destroy compute instance ID  0 from GPU  0 GPU instance ID %2d: In use by another client" % g1) in out
    rc, out, _err = lab.tool("nvidia-smi", "mig", "-dgi", "-i", "0")
    assert rc == 255
    assert ("Unable to destroy GPU instance ID %2d from GPU  0: In use by another client" % g1) in out.splitlines()
    assert "Successfully destroyed" not in out, "the 3g.40gb GI still has its compute instance"
    rc, out, _err = lab.tool("nvidia-smi", "-i", "0", "-mig", "0")
    assert rc == 255 and "Unable to disable MIG Mode" in out
    with lab.transaction() as host:
        host.set_vgpu_type(VF0, "0")
    rc, out, _err = lab.tool("nvidia-smi", "mig", "-dci", "-i", "0", "-gi", str(g1))
    assert rc == 0, out
    rc, out, _err = lab.tool("nvidia-smi", "mig", "-dgi", "-i", "0", "-gi", str(g1))
    assert rc == 0 and out.strip() == "Successfully destroyed GPU instance ID %2d from GPU  0" % g1


def test_nvidia_smi_vgpu_shows_the_gpu_instance_of_each_vgpu(lab):
    layout(lab, "3g.40gb,1g.10gb")
    rc, out, _err = lab.tool("nvidia-smi", "vgpu", "-c", "-v", "-i", "0")
    assert rc == 0
    assert "        GPU Instance Profile ID           : 9" in out.splitlines()
    assert "NVIDIA H100XM-3-40C" in out and "NVIDIA H100XM-2-20C" not in out
    with lab.transaction() as host:
        host.set_vgpu_type(VF1, "%d" % T_3_40C)
    rc, out, _err = lab.tool("nvidia-smi", "vgpu", "-q")
    assert rc == 0
    lines = out.splitlines()
    assert lines[:2] == ["GPU 00000000:1B:00.0", "    Active vGPUs                          : 1"]
    assert "        vGPU Name                         : NVIDIA H100XM-3-40C" in lines
    assert "        GPU Instance ID                   : %d" % gi_ids(lab, "3g.40gb")[0] in lines
    # the Bus Id is the vGPU's address inside the guest, not the host VF 0000:1b:00.5 (driver 580.x captures)
    assert "            Bus Id                        : 00000000:00:00.0" in lines
    assert "        VM Name                           : N/A" in lines
    with lab.transaction() as host:
        host.add_domain("instance-00000001", domain_xml("instance-00000001", [{"pci": VF1}]))
    lines = lab.tool("nvidia-smi", "vgpu", "-q")[1].splitlines()
    assert "        VM Name                           : instance-00000001" in lines
    assert "            Bus Id                        : 00000000:00:05.0" in lines


def test_vgpus_and_their_gpu_instances_are_gone_after_a_reboot(lab):
    layout(lab, "1g.10gb")
    with lab.transaction() as host:
        host.set_vgpu_type(VF0, "%d" % T_1_10C)
        host.reboot()
    st = lab.state()
    assert st["vgpu"] == {} and st["mig"][PF] == {"mode": "Enabled", "pending": "Enabled", "gpu_instances": []}


def test_disabling_the_vfs_frees_the_gpu_instances(lab):
    layout(lab, "1g.10gb")
    with lab.transaction() as host:
        host.set_vgpu_type(VF0, "%d" % T_1_10C)
    rc, _out, err = lab.tool("sriov-manage", "-d", PF)
    assert rc == 0, err
    assert list(backing(lab).values()) == [None]


def test_boot_order_follows_after_and_before(tmp_path):
    from accelsim.boot import boot_order

    def unit(name, text):
        path = tmp_path / name
        path.write_text("[Unit]\n" + text + "\n[Service]\nExecStart=/bin/true\n")
        return (name, str(path))
    # name order would run a-vgpu first; its After= and z-mig's Before= both put z-mig before it
    units = [unit("a-vgpu.service", "After=z-mig.service"), unit("m-other.service", ""),
             unit("z-mig.service", "Before=libvirtd.service")]
    assert [n for n, _p in boot_order(units)] == ["m-other.service", "z-mig.service", "a-vgpu.service"]
    units = [unit("a-vgpu.service", ""), unit("z-mig.service", "Before=a-vgpu.service")]
    assert [n for n, _p in boot_order(units)] == ["z-mig.service", "a-vgpu.service"]
    cycle = [unit("a.service", "After=b.service"), unit("b.service", "After=a.service")]
    assert [n for n, _p in boot_order(cycle)] == ["a.service", "b.service"]
