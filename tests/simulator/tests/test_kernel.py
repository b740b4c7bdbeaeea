"""The kernel model's semantics, asserted on the state and on the rendered tree (no root needed).
test_fuse.py asserts the same behaviours through write() on a FUSE mount."""

import errno
import os

import pytest

from accelsim.kernel import Host, domain_xml, new_state
from accelsim.model import load_lab

from .helpers import expect_errno, read

PF = "0000:d8:00.0"
T4 = "0000:18:00.0"
L40 = "0000:3b:00.0"
UUID1 = "11111111-2222-3333-4444-555555555555"
UUID2 = "11111111-2222-3333-4444-666666666666"
LAB = load_lab("lab-all")


@pytest.fixture
def host():
    return Host(new_state(LAB))


def dev(h, bdf, attr=""):
    return os.path.join(h.root, "sys/bus/pci/devices", bdf, attr)


# -- SR-IOV ------------------------------------------------------------------------------------
def test_numvfs_creates_vfs_with_links_groups_and_drivers(tree):
    h = tree("nic-sriov")
    groups_before = set(os.listdir(os.path.join(h.root, "sys/kernel/iommu_groups")))
    with h.transaction() as host:
        host.set_numvfs(PF, "4\n")
    assert read(dev(h, PF, "sriov_numvfs")) == "4\n"
    vfs = ["0000:d8:02.0", "0000:d8:02.1", "0000:d8:02.2", "0000:d8:02.3"]  # routing id + offset 16 + i * stride 1
    for i, vf in enumerate(vfs):
        assert os.readlink(dev(h, PF, "virtfn%d" % i)) == "../" + vf
        assert os.readlink(dev(h, vf, "physfn")) == "../" + PF
        assert os.path.realpath(dev(h, vf)) == os.path.join(os.path.realpath(dev(h, PF)).rsplit("/", 1)[0], vf)
        assert read(dev(h, vf, "device")) == "0x154c\n"
        assert os.path.basename(os.readlink(dev(h, vf, "driver"))) == "iavf"
        assert os.path.exists(os.path.join(h.root, "sys/bus/pci/drivers/iavf", vf))
        group = os.path.basename(os.readlink(dev(h, vf, "iommu_group")))
        assert group not in groups_before
        assert os.listdir(os.path.join(h.root, "sys/kernel/iommu_groups", group, "devices")) == [vf]
    assert os.path.exists(os.path.join(h.root, "sys/class/net/enp216s0f0v3/address"))
    with h.transaction() as host:
        host.set_numvfs(PF, "0")
    assert read(dev(h, PF, "sriov_numvfs")) == "0\n"
    assert not any(n.startswith("virtfn") for n in os.listdir(dev(h, PF)))
    assert not os.path.lexists(dev(h, vfs[0]))


def test_numvfs_errors(host):
    host.set_numvfs(PF, "2")
    expect_errno(errno.EBUSY, host.set_numvfs, PF, "3")      # non-zero to another non-zero
    host.set_numvfs(PF, "2")                                  # same value: accepted, no change
    host.set_numvfs(PF, "0")
    expect_errno(errno.ERANGE, host.set_numvfs, PF, "65")    # above sriov_totalvfs (64)
    expect_errno(errno.EINVAL, host.set_numvfs, PF, "four")
    expect_errno(errno.EINVAL, host.set_numvfs, PF, "-1")
    expect_errno(errno.EINVAL, host.set_numvfs, PF, "")
    assert host.dyn(PF)["numvfs"] == 0
    host.unbind("i40e", PF)
    expect_errno(errno.ENOENT, host.set_numvfs, PF, "1")      # no driver bound


def test_vf_removal_refused_while_in_use(host):
    host.set_numvfs(PF, "2")
    host.add_domain("vm1", domain_xml("vm1", [{"pci": "0000:d8:02.1"}]))
    expect_errno(errno.EBUSY, host.set_numvfs, PF, "0")
    host.remove_domain("vm1")
    host.set_numvfs(PF, "0")


def test_autoprobe_off_leaves_vfs_unbound_and_override_binds_on_probe(host):
    host.set_autoprobe(PF, "0")
    host.set_numvfs(PF, "2")
    vf = "0000:d8:02.0"
    assert host.driver_of(vf) is None
    host.set_driver_override(vf, "vfio-pci\n")
    host.drivers_probe(vf + "\n")
    assert host.driver_of(vf) == "vfio-pci"
    other = "0000:d8:02.1"
    host.drivers_probe(other)          # no override: the VF's own driver
    assert host.driver_of(other) == "iavf"


def test_driver_override_bind_unbind(tree):
    h = tree("nic-sriov")
    with h.transaction() as host:
        host.set_numvfs(PF, "1")
    vf = "0000:d8:02.0"
    assert read(dev(h, vf, "driver_override")) == "(null)\n"
    with h.transaction() as host:
        expect_errno(errno.ENODEV, host.unbind, "vfio-pci", vf)   # not bound to that driver
        host.set_driver_override(vf, "vfio-pci")
        host.unbind("iavf", vf)
        expect_errno(errno.ENODEV, host.bind, "iavf", vf)         # override names another driver
        host.bind("vfio-pci", vf)
        expect_errno(errno.ENODEV, host.bind, "vfio-pci", vf)     # already bound
    assert read(dev(h, vf, "driver_override")) == "vfio-pci\n"
    assert os.readlink(dev(h, vf, "driver")).endswith("/bus/pci/drivers/vfio-pci")
    group = os.path.basename(os.readlink(dev(h, vf, "iommu_group")))
    assert os.path.exists(os.path.join(h.root, "dev/vfio", group))
    assert not os.path.exists(os.path.join(h.root, "sys/class/net/enp216s0f0v0"))
    with h.transaction() as host:
        host.set_driver_override(vf, "\n")
    assert read(dev(h, vf, "driver_override")) == "(null)\n"


def test_unbind_refused_while_in_use(host):
    host.set_numvfs(PF, "1")
    vf = "0000:d8:02.0"
    host.add_process("qemu-kvm", ["/dev/vfio/%d" % host.group_of(vf)])
    expect_errno(errno.EBUSY, host.unbind, "iavf", vf)


# -- mdev --------------------------------------------------------------------------------------
def test_mdev_create_remove_and_available_instances(tree):
    h = tree("gpu-mdev")
    types = os.path.join(dev(h, T4), "mdev_supported_types")
    # the lab has one GRID T4-2Q running: 7 of 8 left, every other type 0 (time-sliced, one type per GPU)
    assert read(os.path.join(types, "nvidia-231/available_instances")) == "7\n"
    assert read(os.path.join(types, "nvidia-230/available_instances")) == "0\n"
    assert read(os.path.join(types, "nvidia-231/name")) == "GRID T4-2Q\n"
    assert read(os.path.join(types, "nvidia-231/device_api")) == "vfio-pci\n"
    assert "framebuffer=2048M" in read(os.path.join(types, "nvidia-231/description"))
    assert os.readlink(os.path.join(h.root, "sys/class/mdev_bus", T4)).endswith("/" + T4)
    with h.transaction() as host:
        host.mdev_create(T4, "nvidia-231", UUID1 + "\n")
    assert read(os.path.join(types, "nvidia-231/available_instances")) == "6\n"
    mdev = os.path.join(h.root, "sys/bus/mdev/devices", UUID1)
    assert os.path.realpath(mdev) == os.path.join(os.path.realpath(dev(h, T4)), UUID1)
    assert os.path.basename(os.readlink(os.path.join(mdev, "mdev_type"))) == "nvidia-231"
    assert os.path.exists(os.path.join(types, "nvidia-231/devices", UUID1))
    group = os.path.basename(os.readlink(os.path.join(mdev, "iommu_group")))
    assert os.listdir(os.path.join(h.root, "sys/kernel/iommu_groups", group, "devices")) == [UUID1]
    assert os.path.exists(os.path.join(h.root, "dev/vfio", group))
    with h.transaction() as host:
        host.mdev_remove(UUID1, "1\n")
    assert not os.path.lexists(mdev)
    assert read(os.path.join(types, "nvidia-231/available_instances")) == "7\n"


def test_mdev_errors(host):
    expect_errno(errno.EINVAL, host.mdev_create, T4, "nvidia-231", "not-a-uuid")
    expect_errno(errno.EEXIST, host.mdev_create, T4, "nvidia-231", "4b20d080-1b54-4048-85b3-a6a62d165c01")
    for i in range(7):
        host.mdev_create(T4, "nvidia-231", "00000000-0000-0000-0000-%012d" % i)
    assert host.available_instances(T4, "nvidia-231") == 0
    expect_errno(errno.EUSERS, host.mdev_create, T4, "nvidia-231", UUID1)
    expect_errno(errno.ENODEV, host.mdev_remove, UUID1, "1")
    expect_errno(errno.EINVAL, host.mdev_remove, "00000000-0000-0000-0000-000000000000", "yes")


def test_single_type_rule_and_shares(host):
    uuid0 = "4b20d080-1b54-4048-85b3-a6a62d165c01"
    expect_errno(errno.EUSERS, host.mdev_create, T4, "nvidia-232", UUID1)  # other type while a 2Q exists
    host.mdev_remove(uuid0, "1")
    assert host.available_instances(T4, "nvidia-232") == 4
    assert host.available_instances(T4, "nvidia-230") == 16
    host.mdev_create(T4, "nvidia-232", UUID1)
    assert host.available_instances(T4, "nvidia-232") == 3
    assert host.available_instances(T4, "nvidia-230") == 0


def test_mdev_remove_refused_while_in_use(host):
    uuid0 = "4b20d080-1b54-4048-85b3-a6a62d165c01"
    host.add_domain("instance-1", domain_xml("instance-1", [{"mdev": uuid0}]))
    expect_errno(errno.EBUSY, host.mdev_remove, uuid0, "1")
    host.remove_domain("instance-1")
    pid = host.add_process("qemu-kvm", ["/dev/vfio/%d" % host.group_of(uuid0)])
    expect_errno(errno.EBUSY, host.mdev_remove, uuid0, "1")
    host.remove_process(pid)
    host.mdev_remove(uuid0, "1")


# -- NVIDIA vendor-specific VFIO -----------------------------------------------------------------
def test_vgpu_types_on_vfs(tree):
    h = tree("gpu-vendor-vfio")
    with h.transaction() as host:
        host.set_numvfs(L40, "32")
    vf0, vf1 = "0000:3b:00.4", "0000:3b:00.5"
    creatable = read(dev(h, vf1, "nvidia/creatable_vgpu_types")).splitlines()
    assert creatable[0] == "ID    : vGPU Name"
    assert "1145  : NVIDIA L40-8Q" in creatable and len(creatable) == 11
    assert read(dev(h, vf0, "nvidia/current_vgpu_type")) == "0\n"
    with h.transaction() as host:
        host.set_vgpu_type(vf0, "1145\n")
    assert read(dev(h, vf0, "nvidia/current_vgpu_type")) == "1145\n"
    assert read(dev(h, vf0, "nvidia/creatable_vgpu_types")) == "ID    : vGPU Name\n"
    assert read(dev(h, vf1, "nvidia/creatable_vgpu_types")).splitlines()[1:] == ["1145  : NVIDIA L40-8Q"]
    with h.transaction() as host:
        for vf in ["0000:3b:00.5", "0000:3b:00.6", "0000:3b:00.7", "0000:3b:01.0", "0000:3b:01.1"]:
            host.set_vgpu_type(vf, "1145")
    # six 8Q vGPUs fill the 48 GB card: nothing is creatable any more
    assert read(dev(h, "0000:3b:01.2", "nvidia/creatable_vgpu_types")) == "ID    : vGPU Name\n"
    with h.transaction() as host:
        for vf in ["0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6", "0000:3b:00.7", "0000:3b:01.0", "0000:3b:01.1"]:
            host.set_vgpu_type(vf, "0")
    assert len(read(dev(h, "0000:3b:01.2", "nvidia/creatable_vgpu_types")).splitlines()) == 11


def test_vgpu_type_errors(host):
    host.set_numvfs(L40, "4")
    vf = "0000:3b:00.4"
    expect_errno(errno.EINVAL, host.set_vgpu_type, vf, "9999")
    expect_errno(errno.EINVAL, host.set_vgpu_type, vf, "L40-8Q")
    host.set_vgpu_type(vf, "1141")
    expect_errno(errno.EINVAL, host.set_vgpu_type, "0000:3b:00.5", "1145")   # another type: single type per card
    expect_errno(errno.EBUSY, host.set_vgpu_type, vf, "1140")                # must clear to 0 first
    host.add_process("qemu-kvm", ["/dev/vfio/%d" % host.group_of(vf)])
    expect_errno(errno.EBUSY, host.set_vgpu_type, vf, "0")                   # in use
    expect_errno(errno.EBUSY, host.set_numvfs, L40, "0")


# -- FPGA and Alveo ------------------------------------------------------------------------------
def test_fpga_layouts(tree):
    h = tree("lab-all")
    opae = os.path.join(h.root, "sys/class/fpga/intel-fpga-dev.0")
    assert read(os.path.join(opae, "intel-fpga-fme.0/pr/interface_id")) == "38558f8b33385e6ba9a5c6ac75f8e59f\n"
    assert read(os.path.join(opae, "intel-fpga-port.0/afu_id")) == "d8424dc4a4a93c849c1ad7c6d7b3c2a7\n"
    assert os.path.realpath(opae).startswith(os.path.realpath(dev(h, "0000:5e:00.0")))
    dfl = os.path.join(h.root, "sys/class/fpga_region/region0")
    assert read(os.path.join(dfl, "dfl-port.0/afu_id")) == "9aeffe5f84570612c000c9660d824272\n"
    assert read(os.path.join(h.root, "sys/class/fpga_region/region1/compat_id")) == "9346116df8f65a1ba2b6f1ec3a8a0b5e\n"
    assert read(os.path.join(h.root, "sys/class/fpga_manager/fpga0/state")) == "operating\n"
    assert os.path.realpath(os.path.join(h.root, "sys/bus/dfl/devices/dfl-fme.0")).startswith(os.path.realpath(dev(h, "0000:86:00.0")))
    assert os.path.exists(os.path.join(h.root, "dev/dfl-port.0")) and os.path.exists(os.path.join(h.root, "dev/intel-fpga-port.0"))
    assert (os.stat(os.path.join(opae, "intel-fpga-port.0/afu_id")).st_mode & 0o777) == 0o444


def test_fpga_program_and_busy(host):
    pf = "0000:5e:00.0"
    iface = "38558f8b33385e6ba9a5c6ac75f8e59f"
    expect_errno(errno.EINVAL, host.fpga_program, pf, "00" * 16, "ab" * 16)
    pid = host.add_process("afu-app", ["/dev/intel-fpga-port.0"])
    expect_errno(errno.EBUSY, host.fpga_program, pf, iface, "ab" * 16)
    host.remove_process(pid)
    host.fpga_program(pf, iface, "ab" * 16)
    assert host.state["fpga"][pf]["afu_id"] == "ab" * 16


def test_alveo_pair(tree):
    h = tree("xilinx-alveo")
    assert read(dev(h, "0000:af:00.0", "logic_uuids")) == "5dc1c8d8d5c48f6dba2fef1a7a6a9e32\n"
    assert read(dev(h, "0000:af:00.1", "xclbinuuid")) == "00000000000000000000000000000000\n"
    assert os.path.basename(os.readlink(dev(h, "0000:af:00.0", "driver"))) == "xclmgmt"
    assert os.path.basename(os.readlink(dev(h, "0000:af:00.1", "driver"))) == "xocl"


# -- layout details ----------------------------------------------------------------------------
def test_function_attributes(tree):
    h = tree("lab-all")
    assert read(dev(h, T4, "vendor")) == "0x10de\n"
    assert read(dev(h, T4, "class")) == "0x030200\n"
    assert read(dev(h, T4, "current_link_speed")) == "8.0 GT/s PCIe\n"
    assert read(dev(h, L40, "max_link_speed")) == "16.0 GT/s PCIe\n"
    assert read(dev(h, T4, "local_cpulist")) == "0-19,40-59\n"
    assert read(dev(h, PF, "sriov_totalvfs")) == "64\n"
    assert read(dev(h, PF, "sriov_vf_device")) == "154c\n"
    with open(dev(h, T4, "config"), "rb") as f:
        cfg = f.read()
    assert len(cfg) == 256 and cfg[:4] == bytes.fromhex("de10b81e")
    assert os.readlink(dev(h, T4, "iommu_group")) == "../../../../kernel/iommu_groups/21"
    assert os.readlink(os.path.join(h.root, "sys/bus/pci/devices", T4)) == "../../../devices/pci0000:17/0000:17:00.0/0000:18:00.0"
    assert read(os.path.join(h.root, "sys/class/net/enp216s0f1/address")) == "3c:fd:fe:a1:b2:c1\n"
    for ro in ("vendor", "device", "sriov_totalvfs"):
        assert (os.stat(dev(h, PF, ro)).st_mode & 0o777) == 0o444
    assert (os.stat(dev(h, PF, "sriov_numvfs")).st_mode & 0o777) == 0o664


def test_local_cpus_mask(tree):
    h = tree("gpu-mdev")
    # cpus 0-19 and 40-59 of 80: bits 0..19 and 40..59
    value = sum(1 << c for c in list(range(0, 20)) + list(range(40, 60)))
    words = ",".join("%08x" % ((value >> (32 * i)) & 0xFFFFFFFF) for i in reversed(range(3)))
    assert read(dev(h, T4, "local_cpus")) == words + "\n"


def test_fpga_port_released_to_its_vf(tree):
    """fpga-opae-vf: the port released from the PF at boot; with SR-IOV on, the VF bound to intel-fpga-pci shows
    it (its own intel-fpga-dev, listed in sys/class/fpga with device/physfn) and the PF keeps only the FME."""
    h = tree("fpga-opae-vf")
    pf, vf = "0000:5e:00.0", "0000:5e:00.1"
    assert os.path.exists(dev(h, pf, "fpga/intel-fpga-dev.0/intel-fpga-fme.0/pr/interface_id"))
    assert not os.path.exists(dev(h, pf, "fpga/intel-fpga-dev.0/intel-fpga-port.0"))
    with h.transaction() as k:
        k.set_numvfs(pf, "1")
        assert k.fpga_port_vf(pf) == vf and k.fpga_ports(pf)[-1] == "/dev/intel-fpga-port.1"
    assert read(dev(h, vf, "fpga/intel-fpga-dev.1/intel-fpga-port.1/afu_id")) == "d8424dc4a4a93c849c1ad7c6d7b3c2a7\n"
    cls = os.path.join(h.root, "sys/class/fpga/intel-fpga-dev.1")
    assert os.path.realpath(cls).startswith(os.path.realpath(dev(h, vf)))
    # what Cyborg's intel driver globs to find VF FPGAs: /sys/class/fpga/*/device/physfn
    assert os.path.realpath(os.path.join(cls, "device/physfn")) == os.path.realpath(dev(h, pf))
    assert os.path.exists(os.path.join(h.root, "dev/intel-fpga-port.1"))
    assert not os.path.exists(dev(h, pf, "fpga/intel-fpga-dev.0/intel-fpga-port.0"))
    with h.transaction() as k:  # programming (through the PF's FME) shows on the VF's port
        k.fpga_program(pf, "38558f8b33385e6ba9a5c6ac75f8e59f", "ab" * 16)
    assert read(dev(h, vf, "fpga/intel-fpga-dev.1/intel-fpga-port.1/afu_id")) == "ab" * 16 + "\n"


def test_fpga_port_release_and_assign(host):
    pf = "0000:5e:00.0"
    expect_errno(errno.EINVAL, host.fpga_assign_port, pf)          # not released
    host.fpga_release_port(pf)
    expect_errno(errno.EBUSY, host.fpga_release_port, pf)          # released already
    host.set_numvfs(pf, "1")
    assert host.fpga_port_vf(pf) is None, "a VF bound to vfio-pci shows no port to the host"
    expect_errno(errno.EBUSY, host.fpga_assign_port, pf)           # SR-IOV on
    host.set_numvfs(pf, "0")
    host.fpga_assign_port(pf)
    assert host.fpga_port_on_pf(pf)
