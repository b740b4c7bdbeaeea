"""Fault injection: the n-th (matching) write through the FUSE mount fails with a given errno; tool fakes fail
or hang; the write log; the same through the command line and the control file."""

import errno
import json
import os
import subprocess
import sys
import time

import pytest

import accelsim
from accelsim.faults import Faults, errno_code
from accelsim.gbs import make_gbs

from .helpers import expect_errno, read, write

PF = "0000:d8:00.0"
OPAE = "0000:5e:00.0"
OPAE_IFACE = "38558f8b33385e6ba9a5c6ac75f8e59f"
AFU_NEW = "11112222333344445555666677778888"
SIM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dev(h, bdf, attr=""):
    return os.path.join(h.root, "sys/bus/pci/devices", bdf, attr)


def cli(*args, timeout=60):
    env = dict(os.environ, PYTHONPATH=SIM)
    p = subprocess.run([sys.executable, "-m", "accelsim"] + list(args), capture_output=True, text=True, env=env,
                       timeout=timeout, check=False)
    return p.returncode, p.stdout, p.stderr


def run(h, path, *args, timeout=None):
    argv = [os.path.join(h.root, path)] + list(args)
    if timeout:
        argv = ["timeout", "-k", "2", str(timeout)] + argv
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def test_errno_names_and_numbers():
    assert errno_code("EBUSY") == errno.EBUSY == errno_code("ebusy") == errno_code(errno.EBUSY) == errno_code("16")
    with pytest.raises(ValueError):
        errno_code("ENOTANERRNO")


@pytest.mark.fuse
def test_nth_write_to_a_path_fails_and_changes_nothing(fusehost):
    h = fusehost("nic-sriov")
    numvfs = dev(h, PF, "sriov_numvfs")
    fault = h.fail_write("EBUSY", nth=2, path="*/%s/sriov_numvfs" % PF)
    assert fault["errno"] == "EBUSY" and fault["nth"] == 2
    write(dev(h, PF, "driver_override"), "ice")       # another path: not counted
    write(numvfs, "4")                                # 1st matching write: passes
    assert read(numvfs) == "4\n"
    stamp = h.store.stamp()
    expect_errno(errno.EBUSY, write, numvfs, "0")     # 2nd: injected
    assert read(numvfs) == "4\n" and h.store.stamp() == stamp, "an injected failure changed the state"
    write(numvfs, "0")                                # times=1: the 3rd passes again
    assert read(numvfs) == "0\n"
    f = h.faults()["writes"][0]
    assert (f["seen"], f["fired"]) == (3, 1)
    log = h.writes()
    assert [(os.path.basename(w["path"]), w["data"], w["errno"]) for w in log] == [
        ("driver_override", "ice", 0), ("sriov_numvfs", "4", 0), ("sriov_numvfs", "0", errno.EBUSY), ("sriov_numvfs", "0", 0)]
    assert log[1]["path"].startswith("/sys/devices/pci0000:") and log[1]["path"].endswith("/%s/sriov_numvfs" % PF)


@pytest.mark.fuse
def test_any_write_times_and_kernel_errors_in_the_log(fusehost):
    h = fusehost("nic-sriov")
    numvfs = dev(h, PF, "sriov_numvfs")
    h.fail_write(errno.EIO, times=2)                  # the next two writes, whatever the path
    expect_errno(errno.EIO, write, numvfs, "2")
    expect_errno(errno.EIO, write, dev(h, PF, "driver_override"), "vfio-pci")
    expect_errno(errno.ERANGE, write, numvfs, "65")   # the kernel's own refusal, logged too
    write(numvfs, "2")
    assert [w["errno"] for w in h.writes()] == [errno.EIO, errno.EIO, errno.ERANGE, 0]
    h.fail_write("ENODEV", nth=1, times=0, path="*/sriov_numvfs")   # every write from now on
    for value in ("0", "0", "3"):
        expect_errno(errno.ENODEV, write, numvfs, value)
    h.clear_faults()
    assert h.faults() == {"writes": [], "tools": []}
    write(numvfs, "0")
    assert read(numvfs) == "0\n"


@pytest.mark.fuse
def test_cli_and_control_file(fusehost):
    h = fusehost("nic-sriov")
    numvfs = dev(h, PF, "sriov_numvfs")
    rc, out, err = cli("fault", h.root, "write", "--errno", "ERANGE", "--nth", "1", "--path", "*/sriov_numvfs")
    assert rc == 0, err
    assert json.loads(out)["errno"] == "ERANGE"
    expect_errno(errno.ERANGE, write, numvfs, "1")
    rc, out, _err = cli("fault", h.root, "list")
    assert json.loads(out)["writes"][0]["fired"] == 1
    rc, out, _err = cli("writes", h.root, "--count")
    assert out.strip() == "1"
    assert cli("fault", h.root, "clear")[0] == 0 and h.faults() == {"writes": [], "tools": []}
    # the control file written by hand (as docs/simulator.md shows)
    with open(os.path.join(h.state_dir, "faults.json"), "w", encoding="utf-8") as f:
        json.dump({"writes": [{"errno": "EINVAL", "nth": 1, "path": "*/driver_override", "times": 1, "seen": 0, "fired": 0}]}, f)
    expect_errno(errno.EINVAL, write, dev(h, PF, "driver_override"), "vfio-pci")
    write(numvfs, "1")
    assert cli("fault", h.root, "write", "--errno", "ENOSUCH")[0] == 2


def test_tool_fails_then_works(tree, tmp_path):
    h = tree("fpga-opae")
    gbs = str(tmp_path / "new.gbs")
    make_gbs(gbs, OPAE_IFACE, AFU_NEW)
    h.fail_tool("fpgaconf", rc=3, stderr="Error: simulated PR failure\n")
    before = h.state()["fpga"][OPAE]["afu_id"]
    rc, _out, err = run(h, "usr/bin/fpgaconf", OPAE, gbs)
    assert (rc, err) == (3, "Error: simulated PR failure\n")
    assert h.state()["fpga"][OPAE]["afu_id"] == before, "a failing tool changed the device"
    rc, _out, err = run(h, "usr/bin/fpgaconf", OPAE, gbs)
    assert rc == 0, err
    assert h.state()["fpga"][OPAE]["afu_id"] == AFU_NEW
    assert h.faults()["tools"][0]["fired"] == 1


def test_tool_hangs_until_killed(tree):
    h = tree("gpu-vendor-vfio")
    h.fail_tool("sriov-manage", hang="forever")
    t = time.monotonic()
    rc, _out, _err = run(h, "usr/lib/nvidia/sriov-manage", "-e", "ALL", timeout=2)
    assert rc == 124 and time.monotonic() - t < 10
    assert all(f["numvfs"] == 0 for f in h.state()["functions"].values()), "a hung tool changed the host"
    # a slow tool (hang, then the real fake runs)
    h.fail_tool("sriov-manage", rc=None, hang=0.5)
    t = time.monotonic()
    rc, _out, err = run(h, "usr/lib/nvidia/sriov-manage", "-e", "ALL")
    assert rc == 0 and time.monotonic() - t >= 0.5, err
    assert any(f["numvfs"] for f in h.state()["functions"].values())


def test_tool_args_filter_nth_and_cli(tree):
    h = tree("gpu-mdev")
    h.fail_tool("mdevctl", args="define *", nth=2, times=0, rc=1, stderr="Error: simulated\n")
    assert h.tool("mdevctl", "list")[0] == 0                       # not matching: not counted
    ok = h.tool("mdevctl", "define", "-u", "11111111-2222-3333-4444-555555555555", "-p", "0000:18:00.0", "-t", "nvidia-231")
    assert ok[0] == 0, ok
    for uuid in ("21111111-2222-3333-4444-555555555555", "31111111-2222-3333-4444-555555555555"):
        rc, _out, err = h.tool("mdevctl", "define", "-u", uuid, "-p", "0000:18:00.0", "-t", "nvidia-231")
        assert (rc, err) == (1, "Error: simulated\n")
    assert [d[1] for d in h.store.mdevctl_definitions()] == ["11111111-2222-3333-4444-555555555555",
                                                             "4b20d080-1b54-4048-85b3-a6a62d165c01"]
    h.clear_faults()
    rc, out, err = cli("fault", h.root, "tool", "xbmgmt", "--rc", "2", "--stderr", "ERROR: simulated", "--args", "program*")
    assert rc == 0, err
    assert Faults(h.state_dir).list()["tools"][0]["tool"] == "xbmgmt"
    rc, out, err = cli("fault", h.root, "tool", "nvidia-smi", "--hang", "0.1", "--run")
    assert rc == 0 and json.loads(out)["rc"] is None


def test_attach_to_an_existing_root(tree):
    h = tree("gpu-mdev")
    other = accelsim.attach(h.root)
    other.fail_tool("mdevctl", rc=5)
    assert h.tool("mdevctl", "list")[0] == 5
    assert h.tool("mdevctl", "list")[0] == 0
