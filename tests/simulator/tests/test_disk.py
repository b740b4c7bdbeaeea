"""The host's disk (etc/, var/): real files that can be created through a FUSE mount and survive a reboot;
enabled systemd units run at the simulated boot; the lab's host name in etc/hostname and proc."""

import errno
import os
import subprocess
import sys

import pytest

import accelsim

from .helpers import expect_errno, read, write

PF = "0000:d8:00.0"
SIM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dev(h, bdf, attr=""):
    return os.path.join(h.root, "sys/bus/pci/devices", bdf, attr)


@pytest.mark.fuse
def test_etc_and_var_are_a_disk_through_the_mount(fusehost):
    h = fusehost("gpu-mdev")
    etc = os.path.join(h.root, "etc")
    assert sorted(os.listdir(h.root)) == [".accelsim", "dev", "etc", "proc", "run", "sys", "usr", "var"]
    os.makedirs(os.path.join(etc, "accelops/boot"))
    path = os.path.join(etc, "accelops/boot/x.sh")
    with open(path + ".tmp", "w", encoding="utf-8") as f:      # the modules' write-then-rename
        f.write("echo hello\n")
    os.chmod(path + ".tmp", 0o755)
    os.rename(path + ".tmp", path)
    assert read(path) == "echo hello\n" and os.stat(path).st_mode & 0o777 == 0o755
    with open(path, "a", encoding="utf-8") as f:
        f.write("echo more\n")
    assert read(path) == "echo hello\necho more\n"
    os.symlink(path, os.path.join(etc, "link"))
    assert os.readlink(os.path.join(etc, "link")) == path
    assert read(os.path.join(h.state_dir, "etc/accelops/boot/x.sh")) == "echo hello\necho more\n"
    os.makedirs(os.path.join(h.root, "var/lib/x"))
    open(os.path.join(h.root, "var/lib/x/f"), "w", encoding="utf-8").close()
    # the mdevctl fake's definitions are the host's /etc/mdevctl.d
    assert os.listdir(os.path.join(etc, "mdevctl.d", "0000:18:00.0")) == ["4b20d080-1b54-4048-85b3-a6a62d165c01"]
    # everything else stays kernel-shaped
    expect_errno(errno.EACCES, open, os.path.join(h.root, "sys/newfile"), "w")
    expect_errno(errno.EPERM, os.mkdir, os.path.join(h.root, "run/x"))
    expect_errno(errno.EXDEV, os.rename, path, os.path.join(h.root, "sys/x"))
    h.reboot()
    assert read(path) == "echo hello\necho more\n" and os.path.exists(os.path.join(h.root, "var/lib/x/f"))
    os.unlink(os.path.join(etc, "link"))
    os.unlink(path)
    os.rmdir(os.path.join(etc, "accelops/boot"))
    assert not os.path.exists(os.path.join(h.state_dir, "etc/accelops/boot"))


@pytest.mark.fuse
def test_fault_injection_on_disk_writes(fusehost):
    h = fusehost("nic-sriov")
    h.fail_write("ENOSPC", path="/etc/*")
    fd = os.open(os.path.join(h.root, "etc/x"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        expect_errno(errno.ENOSPC, os.write, fd, b"data")
        assert os.write(fd, b"data") == 4           # times=1: the next write goes through
    finally:
        os.close(fd)
    assert h.writes() == [{"path": "/etc/x", "data": "data", "errno": errno.ENOSPC}, {"path": "/etc/x", "data": "data", "errno": 0}]
    assert read(os.path.join(h.root, "etc/x")) == "data"


@pytest.mark.fuse
def test_reboot_runs_enabled_units_with_retries(fusehost):
    h = fusehost("nic-sriov")
    sysd = os.path.join(h.root, "etc/systemd/system")
    os.makedirs(os.path.join(sysd, "multi-user.target.wants"))
    counter = os.path.join(h.root, "var/tries")
    script = ("n=$(cat %s 2>/dev/null || echo 0); echo $((n+1)) > %s; [ $n -ge 1 ] || exit 1; echo 4 > %s"
              % (counter, counter, dev(h, PF, "sriov_numvfs")))
    with open(os.path.join(sysd, "vfs.service"), "w", encoding="utf-8") as f:
        f.write("[Service]\nType=oneshot\nExecStart=/bin/sh -c '%s'\nRestart=on-failure\n" % script)
    with open(os.path.join(sysd, "off.service"), "w", encoding="utf-8") as f:    # not enabled: not run
        f.write("[Service]\nExecStart=/bin/sh -c 'echo 0 > %s'\n" % dev(h, PF, "sriov_numvfs"))
    os.symlink(os.path.join(sysd, "vfs.service"), os.path.join(sysd, "multi-user.target.wants/vfs.service"))
    res = h.reboot()
    assert [(r["unit"], r["rc"], r["tries"]) for r in res] == [("vfs.service", 0, 2)]
    assert read(dev(h, PF, "sriov_numvfs")) == "4\n"
    assert h.reboot(units=False) == [] and read(dev(h, PF, "sriov_numvfs")) == "0\n"
    env = dict(os.environ, PYTHONPATH=SIM)
    p = subprocess.run([sys.executable, "-m", "accelsim", "reboot", h.root], capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 0 and p.stdout.startswith("vfs.service: exit 0"), p.stdout + p.stderr
    assert read(dev(h, PF, "sriov_numvfs")) == "4\n"


def test_plain_tree_disk_and_hostname(tree):
    h = tree("nic-sriov")
    assert read(os.path.join(h.root, "etc/hostname")) == "sim-nic-sriov\n"
    assert read(os.path.join(h.root, "proc/sys/kernel/hostname")) == "sim-nic-sriov\n"
    assert os.path.realpath(os.path.join(h.state_dir, "etc")) == os.path.join(h.root, "etc")
    assert accelsim.reboot(h.root) == []        # a plain tree runs no units


@pytest.mark.fuse
def test_hostname_through_the_mount(fusehost):
    h = fusehost("lab-all")
    name = accelsim.load_lab("lab-all")["hostname"]
    assert read(os.path.join(h.root, "etc/hostname")) == name + "\n"
    assert read(os.path.join(h.root, "proc/sys/kernel/hostname")) == name + "\n"
    write(os.path.join(h.root, "proc/sys/kernel/hostname"), "other")   # accepted, as sethostname; not modelled
