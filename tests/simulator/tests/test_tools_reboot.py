"""Tool fakes, in-use marking and reboot on a plain tree (the fakes act on the state store and the
tree is re-rendered)."""

import os
import subprocess

import accelsim
from accelsim.gbs import make_gbs, make_xclbin, read_gbs

from .helpers import read

T4 = "0000:18:00.0"
L40 = "0000:3b:00.0"
UUID0 = "4b20d080-1b54-4048-85b3-a6a62d165c01"
UUID1 = "11111111-2222-3333-4444-555555555555"


def dev(h, bdf, attr=""):
    return os.path.join(h.root, "sys/bus/pci/devices", bdf, attr)


def run(h, path, *args):
    """Run a generated wrapper script from the tree, as a host module would run the real tool."""
    p = subprocess.run([os.path.join(h.root, path)] + list(args), capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def test_mdevctl(tree):
    h = tree("gpu-mdev")
    rc, out, _err = h.tool("mdevctl", "list")
    assert rc == 0 and out == "%s %s nvidia-231 auto (defined)\n" % (UUID0, T4)
    rc, out, _err = h.tool("mdevctl", "types", "-p", T4)
    assert out.startswith(T4 + "\n  nvidia-222\n    Available instances: 0\n    Device API: vfio-pci\n    Name: GRID T4-1B\n")
    assert "  nvidia-231\n    Available instances: 7\n" in out
    rc, _out, _err = h.tool("mdevctl", "start", "-u", UUID1, "-p", T4, "--type", "nvidia-231")
    assert rc == 0
    assert read(os.path.join(dev(h, T4), "mdev_supported_types/nvidia-231/available_instances")) == "6\n"
    rc, out, _err = h.tool("mdevctl", "list")
    assert "%s %s nvidia-231 manual\n" % (UUID1, T4) in out
    rc, _out, err = h.tool("mdevctl", "start", "-u", UUID1, "-p", T4, "-t", "nvidia-231")
    assert rc == 1 and "File exists" in err
    rc, _out, err = h.tool("mdevctl", "start", "-p", T4, "-t", "nvidia-232")
    assert rc == 1 and "Too many users" in err        # EUSERS: another type while 2Q vGPUs exist
    assert h.tool("mdevctl", "define", "-u", UUID1)[0] == 0
    rc, out, _err = h.tool("mdevctl", "list", "--defined")
    assert "%s %s nvidia-231 manual (active)\n" % (UUID1, T4) in out
    assert h.tool("mdevctl", "stop", "-u", UUID1)[0] == 0
    assert not os.path.lexists(os.path.join(h.root, "sys/bus/mdev/devices", UUID1))
    assert h.tool("mdevctl", "undefine", "-u", UUID1)[0] == 0
    assert UUID1 not in h.tool("mdevctl", "list", "-d")[1]


def test_nvidia_smi_and_sriov_manage(tree):
    h = tree("lab-all")
    rc, out, _err = run(h, "usr/bin/nvidia-smi", "-L")
    assert rc == 0 and out == ("GPU 0: Tesla T4 (UUID: GPU-5c4fb7d7-2a7a-1a0e-6e1b-0c2f4a3d9b11)\n"
                               "GPU 1: NVIDIA L40 (UUID: GPU-9f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b)\n")
    query = "--query-gpu=index,pci.bus_id,name,memory.total,driver_version,mig.mode.current"
    rc, out, _err = run(h, "usr/bin/nvidia-smi", query, "--format=csv,noheader,nounits", "-i", "1")
    assert out == "1, 00000000:3B:00.0, NVIDIA L40, 46068, 550.90.05, [N/A]\n"
    rc, out, _err = run(h, "usr/bin/nvidia-smi", "--query-gpu=name,bogus", "--format=csv")
    assert rc == 2 and 'Field "bogus" is not a valid field to query.' in out
    rc, out, _err = run(h, "usr/lib/nvidia/sriov-manage", "-e", "ALL")
    assert rc == 0 and out == "Enabling VFs on %s\n" % L40
    assert read(dev(h, L40, "sriov_numvfs")) == "32\n"
    assert os.path.exists(dev(h, "0000:3b:04.3", "nvidia/creatable_vgpu_types"))
    rc, out, _err = run(h, "usr/lib/nvidia/sriov-manage", "-d", L40)
    assert rc == 0 and read(dev(h, L40, "sriov_numvfs")) == "0\n"
    rc, _out, err = run(h, "usr/lib/nvidia/sriov-manage", "-x")
    assert rc == 1 and err.startswith("Usage: sriov-manage")


def test_fpgaconf(tree, tmp_path):
    h = tree("fpga-dfl")
    port = os.path.join(h.root, "sys/class/fpga_region/region0/dfl-port.0/afu_id")
    good = make_gbs(str(tmp_path / "nlb.gbs"), "9346116d-f8f6-5a1b-a2b6-f1ec3a8a0b5e", "c000c966-0d82-4272-9aef-fe5f84570612")
    assert read_gbs(good)[:2] == ("9346116df8f65a1ba2b6f1ec3a8a0b5e", "c000c9660d8242729aeffe5f84570612")
    wrong = make_gbs(str(tmp_path / "other.gbs"), "00000000-0000-0000-0000-000000000001", "c000c966-0d82-4272-9aef-fe5f84570612")
    rc, _out, err = run(h, "usr/bin/fpgaconf", wrong)
    assert rc == 1 and "No suitable slots found." in err
    pid = h.mark_in_use("/dev/dfl-port.0", by="process", name="afu-app")
    assert os.readlink(os.path.join(h.root, "proc", pid, "fd", "10")) == "/dev/dfl-port.0"
    rc, _out, err = run(h, "usr/bin/fpgaconf", "-B", "0x86", good)
    assert rc == 1 and "busy" in err
    assert read(port) == "9aeffe5f84570612c000c9660d824272\n"
    h.release(pid)
    rc, _out, err = run(h, "usr/bin/fpgaconf", "0000:86:00.0", good)
    assert rc == 0, err
    assert read(port) == "c000c9660d8242729aeffe5f84570612\n"
    h.reboot()   # a PR-loaded AFU is lost at power-off; the flash's default AFU comes back
    assert read(port) == "9aeffe5f84570612c000c9660d824272\n"


def test_xbmgmt(tree, tmp_path):
    h = tree("xilinx-alveo")
    rc, out, _err = run(h, "usr/bin/xbmgmt", "examine")
    assert rc == 0 and "[0000:af:00.0]  :  xilinx_u250_gen3x16_base_4" in out
    xcl = make_xclbin(str(tmp_path / "k.xclbin"), "0b2dd2ba-cdd0-3ee8-0c1b-6d1a8ebcd9b7", "a1b2c3d4-0000-4000-8000-000000000001")
    bad = make_xclbin(str(tmp_path / "bad.xclbin"), "00000000-0000-0000-0000-000000000001", "a1b2c3d4-0000-4000-8000-000000000002")
    rc, _out, err = run(h, "usr/bin/xbmgmt", "program", "--device", "0000:af:00.0", "--user", bad)
    assert rc == 1 and "does not match" in err
    rc, out, err = run(h, "usr/bin/xbmgmt", "program", "-d", "af:00.0", "-u", xcl)
    assert rc == 0, err
    assert read(dev(h, "0000:af:00.1", "xclbinuuid")) == "a1b2c3d4000040008000000000000001\n"
    rc, out, _err = run(h, "usr/bin/xbmgmt", "program", "-d", "0000:af:00.0", "--base", "--image", "xilinx_u250_gen3x16_base_5")
    assert rc == 0 and "Cold reboot machine to load the new image" in out
    assert "base_4" in run(h, "usr/bin/xbmgmt", "examine")[1].split("WARNING")[0]
    h.reboot()
    out = run(h, "usr/bin/xbmgmt", "examine")[1]
    assert "xilinx_u250_gen3x16_base_5" in out
    assert read(dev(h, "0000:af:00.1", "xclbinuuid")) == "00000000000000000000000000000000\n"   # xclbin lost


def test_mark_in_use_domain_and_process(tree):
    h = tree("lab-all")
    name = accelsim.mark_in_use(h.root, UUID0, by="domain", name="instance-00000001")
    xml = read(os.path.join(h.root, "run/libvirt/qemu/instance-00000001.xml"))
    assert "<hostdev mode=\"subsystem\" type=\"mdev\"" in xml and 'uuid="%s"' % UUID0 in xml
    rc, _out, err = h.tool("mdevctl", "stop", "-u", UUID0)
    assert rc == 1 and "busy" in err
    accelsim.release(h.root, name)
    assert not os.path.exists(os.path.join(h.root, "run/libvirt/qemu/instance-00000001.xml"))
    with h.transaction() as host:
        host.set_numvfs("0000:d8:00.0", "1")
    pid = h.mark_in_use("0000:d8:02.0", by="process")
    link = os.readlink(os.path.join(h.root, "proc", pid, "fd", "10"))
    group = os.path.basename(os.readlink(dev(h, "0000:d8:02.0", "iommu_group")))
    assert link == "/dev/vfio/" + group
    assert read(os.path.join(h.root, "proc", pid, "comm")) == "qemu-system-x86\n"
    dom = h.mark_in_use("0000:d8:02.0", by="domain")
    assert "<address domain=\"0x0000\" bus=\"0xd8\" slot=\"0x02\" function=\"0x0\" />" in read(
        os.path.join(h.root, "run/libvirt/qemu/%s.xml" % dom))


def test_reboot_drops_transient_keeps_persistent(tree):
    h = tree("lab-all")
    with h.transaction() as host:
        host.set_numvfs("0000:d8:00.0", "8")
        host.set_driver_override("0000:d8:00.1", "vfio-pci")
        host.set_numvfs(L40, "4")
        host.set_vgpu_type("0000:3b:00.4", "1140")
        host.mdev_create(T4, "nvidia-231", UUID1)
    h.mark_in_use("0000:d8:02.0", by="domain", name="vm")
    assert h.tool("mdevctl", "define", "-u", UUID1)[0] == 0     # manual: not started at boot
    h.reboot()
    assert read(dev(h, "0000:d8:00.0", "sriov_numvfs")) == "0\n"
    assert read(dev(h, "0000:d8:00.1", "driver_override")) == "(null)\n"
    assert not os.path.lexists(dev(h, "0000:3b:00.4"))
    assert os.listdir(os.path.join(h.root, "run/libvirt/qemu")) == []
    assert sorted(os.listdir(os.path.join(h.root, "sys/bus/mdev/devices"))) == [UUID0]   # auto definition started
    assert os.path.exists(os.path.join(h.state_dir, "etc/mdevctl.d", T4, UUID1))       # persistent config kept
    assert h.state()["boot"] == 2
