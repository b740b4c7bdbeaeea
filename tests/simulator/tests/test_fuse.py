"""The same kernel behaviours through a FUSE mount: each write() returns the kernel's errno."""

import ctypes
import errno
import fcntl
import os
import subprocess

import pytest

from accelsim.fuse import MountError, mount
from accelsim.gbs import make_gbs
from accelsim.render import render_tree

from .helpers import expect_errno, read, write

pytestmark = pytest.mark.fuse

PF = "0000:d8:00.0"
T4 = "0000:18:00.0"
L40 = "0000:3b:00.0"
UUID0 = "4b20d080-1b54-4048-85b3-a6a62d165c01"
UUID1 = "11111111-2222-3333-4444-555555555555"


def dev(h, bdf, attr=""):
    return os.path.join(h.root, "sys/bus/pci/devices", bdf, attr)


def _snapshot(root):
    out = {}
    for base, dirs, files in os.walk(root):
        rel = os.path.relpath(base, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if d != ".accelsim"]
            files = [f for f in files if f != ".accelsim"]
        for name in dirs + files:
            full = os.path.join(base, name)
            key = os.path.normpath(os.path.join(rel, name))
            if os.path.islink(full):
                out[key] = ("l", os.readlink(full))
                if name in dirs:
                    dirs.remove(name)
            elif os.path.isdir(full):
                out[key] = ("d",)
            else:
                mode = os.stat(full).st_mode & 0o777
                data = b""
                if mode & 0o444:
                    with open(full, "rb") as f:
                        data = f.read()
                out[key] = ("f", mode, data)
    return out


def test_fuse_reads_identical_to_render_tree(fusehost, tmp_path):
    h = fusehost("lab-all")
    plain = render_tree("lab-all", str(tmp_path / "plain"))
    a, b = _snapshot(h.root), _snapshot(plain.root)
    assert set(a) == set(b)
    diff = [k for k in a if a[k] != b[k]]
    assert diff == []
    assert os.readlink(os.path.join(h.root, ".accelsim")) == h.state_dir


def test_sriov_through_fuse(fusehost):
    h = fusehost("nic-sriov")
    numvfs = dev(h, PF, "sriov_numvfs")
    write(numvfs, "4\n")
    assert read(numvfs) == "4\n"
    assert os.readlink(dev(h, PF, "virtfn3")) == "../0000:d8:02.3"
    assert os.readlink(dev(h, "0000:d8:02.3", "physfn")) == "../" + PF
    expect_errno(errno.EBUSY, write, numvfs, "2")
    expect_errno(errno.ERANGE, write, numvfs, "65")
    expect_errno(errno.EINVAL, write, numvfs, "lots")
    expect_errno(errno.EACCES, write, dev(h, PF, "vendor"), "0x1234")
    expect_errno(errno.EACCES, write, dev(h, PF, "sriov_totalvfs"), "8")
    expect_errno(errno.EACCES, os.open, dev(h, PF, "device"), os.O_RDWR)
    with open(numvfs, "w", encoding="utf-8") as f:   # shell-style: O_TRUNC then write
        f.write("0\n")
    assert read(numvfs) == "0\n"
    assert not os.path.lexists(dev(h, "0000:d8:02.0"))
    lspci = subprocess.run(["lspci", "-D", "-n", "-A", "linux-sysfs", "-O", "sysfs.path=%s/sys/bus/pci" % h.root],
                           capture_output=True, text=True, check=True).stdout
    assert lspci.count("8086:1572") == 2


def test_driver_override_bind_unbind_through_fuse(fusehost):
    h = fusehost("nic-sriov")
    write(dev(h, PF, "sriov_drivers_autoprobe"), "0")
    write(dev(h, PF, "sriov_numvfs"), "2")
    vf = "0000:d8:02.0"
    assert not os.path.lexists(dev(h, vf, "driver"))
    write(dev(h, vf, "driver_override"), "vfio-pci")
    write(os.path.join(h.root, "sys/bus/pci/drivers_probe"), vf)
    assert os.readlink(dev(h, vf, "driver")).endswith("drivers/vfio-pci")
    expect_errno(errno.ENODEV, write, os.path.join(h.root, "sys/bus/pci/drivers/iavf/unbind"), vf)
    write(os.path.join(h.root, "sys/bus/pci/drivers/vfio-pci/unbind"), vf)
    write(dev(h, vf, "driver_override"), "\n")
    write(os.path.join(h.root, "sys/bus/pci/drivers/iavf/bind"), vf)
    assert os.readlink(dev(h, vf, "driver")).endswith("drivers/iavf")
    expect_errno(errno.EACCES, os.open, os.path.join(h.root, "sys/bus/pci/drivers/iavf/bind"), os.O_RDONLY)


def test_mdev_through_fuse(fusehost):
    h = fusehost("gpu-mdev")
    t = os.path.join(dev(h, T4), "mdev_supported_types")
    write(os.path.join(t, "nvidia-231/create"), UUID1)
    assert read(os.path.join(t, "nvidia-231/available_instances")) == "6\n"
    assert read(os.path.join(t, "nvidia-230/available_instances")) == "0\n"
    expect_errno(errno.EEXIST, write, os.path.join(t, "nvidia-231/create"), UUID1)
    expect_errno(errno.EINVAL, write, os.path.join(t, "nvidia-231/create"), "garbage")
    expect_errno(errno.EUSERS, write, os.path.join(t, "nvidia-232/create"), "11111111-2222-3333-4444-777777777777")
    expect_errno(errno.EACCES, write, os.path.join(t, "nvidia-231/available_instances"), "9")
    h.mark_in_use(UUID1, by="domain", name="instance-1")
    remove = os.path.join(h.root, "sys/bus/mdev/devices", UUID1, "remove")
    expect_errno(errno.EBUSY, write, remove, "1")
    h.release("instance-1")
    write(remove, "1")
    assert not os.path.lexists(os.path.join(h.root, "sys/bus/mdev/devices", UUID1))
    assert read(os.path.join(t, "nvidia-231/available_instances")) == "7\n"


def test_vendor_vfio_through_fuse_and_real_holder(fusehost):
    h = fusehost("gpu-vendor-vfio")
    rc = subprocess.run([os.path.join(h.root, "usr/lib/nvidia/sriov-manage"), "-e", L40], capture_output=True, check=False).returncode
    assert rc == 0
    vf0, vf1 = "0000:3b:00.4", "0000:3b:00.5"
    cur = dev(h, vf0, "nvidia/current_vgpu_type")
    expect_errno(errno.EINVAL, write, cur, "4242")
    write(cur, "1143")
    assert read(cur) == "1143\n"
    assert read(dev(h, vf1, "nvidia/creatable_vgpu_types")).splitlines() == ["ID    : vGPU Name", "1143  : NVIDIA L40-4Q"]
    holder = h.hold(vf0)     # a real process opens /dev/vfio/<group> through the mount
    try:
        group = os.path.basename(os.readlink(dev(h, vf0, "iommu_group")))
        fds = os.listdir(os.path.join(h.root, "proc", str(holder.pid), "fd"))
        assert [os.readlink(os.path.join(h.root, "proc", str(holder.pid), "fd", fd)) for fd in fds] == ["/dev/vfio/" + group]
        expect_errno(errno.EBUSY, write, cur, "0")
    finally:
        h.unhold(holder)
    assert not os.path.exists(os.path.join(h.root, "proc", str(holder.pid)))
    write(cur, "0")
    assert len(read(dev(h, vf1, "nvidia/creatable_vgpu_types")).splitlines()) == 11


def test_fpgaconf_and_reboot_through_fuse(fusehost, tmp_path):
    h = fusehost("lab-all")
    gbs = make_gbs(str(tmp_path / "a.gbs"), "38558f8b33385e6ba9a5c6ac75f8e59f", "0123456789abcdef0123456789abcdef")
    afu = os.path.join(h.root, "sys/class/fpga/intel-fpga-dev.0/intel-fpga-port.0/afu_id")
    expect_errno(errno.EACCES, write, afu, "00")
    holder = h.hold("/dev/intel-fpga-port.0")
    try:
        p = subprocess.run([os.path.join(h.root, "usr/bin/fpgaconf"), gbs], capture_output=True, text=True, check=False)
        assert p.returncode == 1 and "busy" in p.stderr
    finally:
        h.unhold(holder)
    p = subprocess.run([os.path.join(h.root, "usr/bin/fpgaconf"), gbs], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert read(afu) == "0123456789abcdef0123456789abcdef\n"
    write(dev(h, PF, "sriov_numvfs"), "2")
    h.reboot()
    assert read(afu) == "d8424dc4a4a93c849c1ad7c6d7b3c2a7\n"
    assert read(dev(h, PF, "sriov_numvfs")) == "0\n"
    assert os.listdir(os.path.join(h.root, "sys/bus/mdev/devices")) == [UUID0]


def test_unmount_is_clean_and_errors_are_clear(fusehost, tmp_path):
    h = fusehost("qat")
    root = h.root
    assert os.path.ismount(root)
    h.unmount()
    assert not os.path.ismount(root) and os.listdir(root) == []
    with pytest.raises(MountError, match="not a directory"):
        mount("qat", str(tmp_path / "missing"))
    busy = tmp_path / "busy"
    busy.mkdir()
    with mount("qat", str(busy)) as again:
        with pytest.raises(MountError, match="already a mount point"):
            mount("qat", str(busy))
        assert read(dev(again, "0000:3d:00.0", "sriov_totalvfs")) == "16\n"
    assert not os.path.ismount(str(busy))


def test_posix_and_flock_locks_on_the_mount_and_no_daemon_error(fusehost):
    """Closing a file makes libfuse release the POSIX locks of its owner through the file system's lock operation;
    the daemon has none (the kernel keeps the locks), so a close costs no error and a lock on the mount works."""
    h = fusehost("qat")
    for path in (os.path.join(h.root, "etc/hostname"), dev(h, "0000:3d:00.0", "sriov_totalvfs")):
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH)
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            os.close(fd)
    assert read(dev(h, "0000:3d:00.0", "sriov_totalvfs")) == "16\n"
    with open(os.path.join(h.state_dir, "fuse.log"), encoding="utf-8") as f:
        assert f.read() == ""


class _Dirent(ctypes.Structure):  # glibc's struct dirent on 64-bit Linux
    _fields_ = [("d_ino", ctypes.c_uint64), ("d_off", ctypes.c_int64), ("d_reclen", ctypes.c_ushort),
                ("d_type", ctypes.c_ubyte), ("d_name", ctypes.c_char * 256)]


def _entry_types(path):
    """{name: d_type} of a directory as readdir(3) gives it (Python's os.scandir keeps d_type to itself)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.opendir.restype = ctypes.c_void_p
    libc.opendir.argtypes = [ctypes.c_char_p]
    libc.readdir.restype = ctypes.POINTER(_Dirent)
    libc.readdir.argtypes = [ctypes.c_void_p]
    libc.closedir.argtypes = [ctypes.c_void_p]
    d = libc.opendir(os.fsencode(path))
    assert d, os.strerror(ctypes.get_errno())
    out = {}
    try:
        while True:
            e = libc.readdir(d)
            if not e:
                break
            name = e.contents.d_name.decode()
            if name not in (".", ".."):
                out[name] = e.contents.d_type
    finally:
        libc.closedir(d)
    return out


def test_directory_entries_carry_their_type_as_on_a_disk_tree(fusehost, tmp_path):
    """readdir gives each entry's type (d_type: directory, link, file) as sysfs and a disk file system do, not
    DT_UNKNOWN: a reader that walks a directory (os.scandir, os.walk) needs no lstat() per entry to tell them."""
    h = fusehost("lab-all")
    plain = render_tree("lab-all", str(tmp_path / "plain"))
    dt_dir, dt_reg, dt_lnk = 4, 8, 10
    for rel in ("sys/bus/pci/devices/" + T4, "sys/bus/pci/devices", "sys/class/net", "etc", "sys"):
        got, want = _entry_types(os.path.join(h.root, rel)), _entry_types(os.path.join(plain.root, rel))
        assert got == want, rel
    t4 = _entry_types(dev(h, T4))
    assert (t4["vendor"], t4["driver"], t4["mdev_supported_types"]) == (dt_reg, dt_lnk, dt_dir)
    top = _entry_types(h.root)
    assert top[".accelsim"] == dt_lnk and top["sys"] == top["etc"] == dt_dir
