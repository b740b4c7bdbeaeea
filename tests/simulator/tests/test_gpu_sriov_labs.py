"""The AMD Instinct (GIM) and Intel Data Center GPU labs: what their kernel drivers do that the kernel model must
show (GIM's VFs at probe and its ENOENT for sriov_numvfs, i915's VFs with the PF's id and its prelim_iov tree)."""

import errno
import os

import pytest

from accelsim.kernel import Host, new_state
from accelsim.model import LabError, load_lab, normalize_lab

from .helpers import expect_errno, read, write

MI300X, MI300X_VF = "0000:83:00.0", "0000:83:02.0"
FLEX, MAX = "0000:4d:00.0", "0000:99:00.0"


def dev(h, bdf, attr=""):
    return os.path.join(h.root, "sys/bus/pci/devices", bdf, attr)


def test_gim_enables_its_vfs_at_boot_and_refuses_sriov_numvfs():
    h = Host(new_state(load_lab("gpu-amd-instinct")))
    assert h.vfs(MI300X) == [MI300X_VF] and h.static(MI300X_VF)["device"] == 0x74b5
    assert h.driver_of(MI300X_VF) is None          # no host driver claims the VF
    expect_errno(errno.ENOENT, h.set_numvfs, MI300X, "0")
    expect_errno(errno.ENOENT, h.set_numvfs, MI300X, "2")
    assert h.vfs(MI300X) == [MI300X_VF]
    # the VF is bound like any other: driver_override + drivers_probe
    h.set_driver_override(MI300X_VF, "vfio-pci")
    h.drivers_probe(MI300X_VF)
    assert h.driver_of(MI300X_VF) == "vfio-pci"
    h.reboot()
    assert h.vfs(MI300X) == [MI300X_VF] and h.driver_of(MI300X_VF) is None


def test_sriov_numvfs_store_checks_in_the_kernels_order():
    """drivers/pci/iov.c sriov_numvfs_store: ERANGE first, the current count succeeds, ENOENT (no sriov_configure)
    only after both."""
    h = Host(new_state(load_lab("gpu-amd-instinct")))
    expect_errno(errno.ERANGE, h.set_numvfs, MI300X, "9")      # totalvfs 8
    h.set_numvfs(MI300X, "1")                                   # GIM's count: nothing to do, no error
    expect_errno(errno.ENOENT, h.set_numvfs, MI300X, "8")
    assert h.vfs(MI300X) == [MI300X_VF]


def test_max_1550_lab_uses_the_max_1550_profile():
    """Intel's resource driver gives the Max 1550 (0bd5/0bd6) the max_128g_* profiles (62 VFs at most); max_48g_c63
    is the Max 1100's."""
    lab = load_lab("gpu-intel-flex")
    mx = [f for f in lab["functions"] if f["bdf"] == MAX][0]
    assert mx["device"] == 0x0bd5 and mx["sriov"]["totalvfs"] == 62
    want = {"contexts_quota": 1024, "doorbells_quota": 7, "exec_quantum_ms": 4, "ggtt_quota": 64880640,
            "lmem_quota": 1038090240, "preempt_timeout_us": 8000}
    assert mx["i915_iov"]["vfs"]["2"]["gt0"] == want


def test_boot_numvfs_is_checked():
    lab = load_lab("gpu-amd-instinct")
    raw = {"functions": [dict(f, sriov=dict(f["sriov"], boot_numvfs=99)) if f.get("sriov") else f
                         for f in lab["functions"]]}
    with pytest.raises(LabError, match="boot_numvfs 99 exceeds totalvfs"):
        normalize_lab(raw)


def test_i915_vfs_share_the_pf_id_and_go_through_zero(tree):
    t = tree("gpu-intel-flex")
    with t.transaction() as h:
        h.set_numvfs(FLEX, "4")
        vfs = h.vfs(FLEX)
        assert vfs == ["0000:4d:00.1", "0000:4d:00.2", "0000:4d:00.3", "0000:4d:00.4"]
        assert all(h.static(v)["device"] == 0x56c0 and h.driver_of(v) == "i915" for v in vfs)
        expect_errno(errno.EBUSY, h.set_numvfs, FLEX, "2")
    assert read(dev(t, "0000:4d:00.1", "device")).strip() == "0x56c0"


def test_i915_prelim_iov_tree(tree):
    t = tree("gpu-intel-flex")
    card0 = dev(t, FLEX, "drm/card0/prelim_iov")
    assert read(card0 + "/pf/auto_provisioning").strip() == "1"
    assert sorted(os.listdir(card0)) == ["pf"] + sorted("vf%d" % k for k in range(1, 17))
    assert sorted(os.listdir(card0 + "/vf16/gt")) == sorted(
        ["contexts_quota", "doorbells_quota", "exec_quantum_ms", "ggtt_quota", "lmem_quota", "preempt_timeout_us"])
    card1 = dev(t, MAX, "drm/card1/prelim_iov")
    assert read(card1 + "/pf/auto_provisioning").strip() == "0"
    assert sorted(os.listdir(card1 + "/vf2")) == ["gt0", "gt1"]
    assert read(card1 + "/vf2/gt1/lmem_quota").strip() == "1038090240"
    assert read(card1 + "/vf1/gt0/lmem_quota").strip() == "0"
    assert os.path.realpath(os.path.join(t.root, "sys/class/drm/card1")) == os.path.realpath(dev(t, MAX, "drm/card1"))


@pytest.mark.fuse
def test_gim_sriov_numvfs_through_fuse(fusehost):
    h = fusehost("gpu-amd-instinct")
    assert read(dev(h, MI300X, "sriov_numvfs")).strip() == "1"
    expect_errno(errno.ENOENT, write, dev(h, MI300X, "sriov_numvfs"), "0")
    assert os.path.basename(os.readlink(dev(h, MI300X, "virtfn0"))) == MI300X_VF
