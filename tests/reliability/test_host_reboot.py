# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A reboot in the middle of a converge (docs/reliability.md, "Reboot in the middle of a converge").

A host converged to declaration A (with its boot files) is converged to B; the power goes after k of the
converge's writes (every write from the (k+1)-th on fails, the rollback's too, as nothing reaches a host without
power), then the simulated host reboots and runs its enabled systemd units. For every k, the host must come back
in the state A's boot files give, or B's (never a mix, and every unit must succeed), and a rerun of B must converge
and a second one change nothing.

``HOST_FAULTS_FULL=1``: every k; the gate takes the first, the middle and the last.
"""

from __future__ import annotations

import os

import pytest

import accelsim
from accelsim.testing import require_fuse
from helpers import patch_exits
from hostfaults_helpers import L40A, Checkpoint, host_view, run_steps, view_diff, write_multi_gpu_lab

from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge, fpga_program, sriov_vfs, vgpu

FULL = os.environ.get("HOST_FAULTS_FULL", "") not in ("", "0")
PF0 = "0000:d8:00.0"
DFL = "0000:86:00.0"
DFL_IFACE = "9346116df8f65a1ba2b6f1ec3a8a0b5e"


@pytest.fixture(autouse=True)
def _exits(monkeypatch):
    require_fuse()
    patch_exits(monkeypatch)


def _sriov(h, tmp):
    a = {"root": h.root, "address": PF0, "num_vfs": 2, "vf_driver": "vfio-pci"}
    b = {"root": h.root, "address": PF0, "num_vfs": 3, "vf_driver": "vfio-pci", "vfs": [{"index": 2, "vlan": 12}]}
    return [("a", sriov_vfs.main, a)], [("b", sriov_vfs.main, b)]


def _vendor(h, tmp):
    a = {"root": h.root, "addresses": [L40A], "type": "NVIDIA L40-8Q", "count": 2}
    return [("a", vgpu.main, a)], [("b", vgpu.main, dict(a, type="NVIDIA L40-4Q", count=3))]


def _vendor_count(h, tmp):
    """The vendor-VFIO count change (2 -> 3 of the same type): a change of type on a card that has vGPUs is not
    one a declaration can ask for (the card no longer offers the other types while it has any)."""
    a = {"root": h.root, "addresses": [L40A], "type": "NVIDIA L40-8Q", "count": 2}
    return [("a", vgpu.main, a)], [("b", vgpu.main, dict(a, count=3))]


def _fpga(h, tmp):
    def gbs(name, afu):
        p = accelsim.make_gbs(os.path.join(tmp, name), DFL_IFACE, afu)
        import hashlib  # pylint: disable=import-outside-toplevel
        with open(p, "rb") as f:
            return p, hashlib.sha256(f.read()).hexdigest()
    afu_a, afu_b = "11112222333344445555666677778888", "aaaabbbbccccddddeeeeffff00001111"
    a, asha = gbs("a.gbs", afu_a)
    b, bsha = gbs("b.gbs", afu_b)
    base = {"root": h.root, "address": DFL, "persistent": True}
    return ([("a", fpga_program.main, dict(base, bitstream=a, sha256=asha, function_id=afu_a))],
            [("b", fpga_program.main, dict(base, bitstream=b, sha256=bsha, function_id=afu_b))])


def _as_converge(scenario):
    """The same converges through accelerator_converge: each module invocation becomes the declaration of one
    function on that card."""
    def entry(main, a):
        if main is sriov_vfs.main:
            return {"name": "vfs", "match": {"address": a["address"]},
                    "vfs": {"count": a["num_vfs"], "driver": a.get("vf_driver"), "vfs": a.get("vfs", [])}}
        if main is vgpu.main:
            return {"name": "vgpu", "match": {"address": a["addresses"][0]}, "vgpu": {"type": a["type"], "count": a["count"]}}
        return {"name": "afu", "match": {"address": a["address"]},
                "fpga": {"bitstream": a["bitstream"], "sha256": a["sha256"], "function_id": a["function_id"]}}

    def converge(h, tmp):
        out = []
        for steps in scenario(h, tmp):
            out.append([("converge " + label, accelerator_converge.main, {
                "root": h.root, "functions": [entry(main, a)], "lock_dir": os.path.join(tmp, "lock"),
                "persistent": a.get("persistent", True)}) for label, main, a in steps])
        return out
    return converge


SCENARIOS = {"sriov_vfs": ("nic-sriov", _sriov), "vgpu-vendor": ("multi-gpu", _vendor), "fpga_program": ("fpga-dfl", _fpga),
             "accelerator_converge-sriov": ("nic-sriov", _as_converge(_sriov)),
             "accelerator_converge-vgpu-vendor": ("multi-gpu", _as_converge(_vendor_count)),
             "accelerator_converge-fpga": ("fpga-dfl", _as_converge(_fpga))}


def _kernel(h):
    return {"kernel": host_view(h)["kernel"], "disk": {}}


def _reboot(h, label):
    ran = h.reboot()
    assert ran and all(r["rc"] == 0 for r in ran), "%s: a boot unit failed: %r" % (label, ran)
    return _kernel(h)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_power_loss_mid_converge_then_reboot(name, tmp_path, figures):
    lab_name, scenario = SCENARIOS[name]
    lab = write_multi_gpu_lab(tmp_path) if lab_name == "multi-gpu" else lab_name
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with accelsim.mount(lab, str(mnt), state_dir=str(tmp_path / "state")) as h:
        a, b = scenario(h, str(tmp_path))
        assert [o.kind for o in run_steps(a)] == ["exit"]
        start = Checkpoint(h)
        try:
            # references: A's boot files after a reboot, B converged, B's boot files after a reboot
            booted_a = _reboot(h, "A")
            start.restore()
            w0 = len(h.writes())
            assert [o.kind for o in run_steps(b)] == ["exit"]
            n = len(h.writes()) - w0
            converged_b = host_view(h)
            booted_b = _reboot(h, "B")
            assert booted_a != booted_b
            ks = list(range(n)) if FULL else sorted({0, n // 2, n - 1})
            came_back = {"A": 0, "B": 0}
            for k in ks:
                label = "%s: power lost after %d of %d writes" % (name, k, n)
                start.restore()
                h.fail_write("EIO", nth=k + 1, times=0)
                out = run_steps(b)
                assert out[-1].kind == "fail", "%s: %r" % (label, out[-1])
                h.clear_faults()
                now = _reboot(h, label)
                assert now in (booted_a, booted_b), "%s: after the reboot the host is neither A nor B:\nvs A:\n%s\nvs B:\n%s" % (
                    label, view_diff(booted_a, now), view_diff(booted_b, now))
                came_back["A" if now == booted_a else "B"] += 1
                again = run_steps(b)
                assert again[-1].kind == "exit", "%s: the rerun failed: %r" % (label, again[-1])
                assert host_view(h)["kernel"] == converged_b["kernel"], "%s: the rerun did not converge" % label
                w = len(h.writes())
                third = run_steps(b)
                assert not third[-1].result["changed"] and len(h.writes()) == w, label
            figures["host reboot mid-converge: %s" % name] = {
                "writes": n, "cut_points": len(ks), "came_back_as": came_back, "reruns_converged": "%d/%d" % (len(ks), len(ks))}
        finally:
            start.close()
