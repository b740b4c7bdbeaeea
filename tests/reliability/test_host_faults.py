# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host-side faults at every step of a multi-step plan (docs/reliability.md, "Host-side faults").

For each programming module, a converge of several cards (a sequence of module invocations, as the role runs
them) on a FUSE-mounted simulated host is run once to count its sysfs/disk writes and tool runs. Then, from the
same starting point (a checkpoint of the kernel state and the disk), the n-th write fails with a kernel errno, or
the n-th run of a tool fails, for every n. Each case must:

- end in a clear failure (no traceback; the message names the kernel's or the tool's words), or succeed when the
  fault hit something the module does not need (counted as absorbed);
- leave the host as it was before the failing invocation (``state: unchanged``, compared with the simulator's
  state and disk), or say which steps are still in effect (``state: partial``) and the host must show them;
- leave every unit in use as it was (state and no write naming it);
- converge on a clean rerun (the host then equals the fault-free converge), and a second rerun reports no change
  and makes no write.

``HOST_FAULTS_FULL=1``: every errno at every write position and a failure of every tool run; the gate faults the
first write of each kind and the last one (rotating the errnos) and the first and last run of each tool.
"""

from __future__ import annotations

import errno
import os
import re

import pytest

import accelsim
from accelsim.testing import require_fuse
from helpers import patch_exits
from hostfaults_helpers import (
    L40A,
    L40B,
    T4A,
    T4B,
    Checkpoint,
    count_tool_runs,
    host_view,
    run_steps,
    tool_runs,
    view_diff,
    write_multi_gpu_lab,
    write_two_fpga_lab,
)

from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.vgpu import mdev_uuid
from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge, fpga_program, sriov_vfs, vgpu

ERRNOS = ("EBUSY", "EIO", "ENODEV", "EINVAL")
FULL = os.environ.get("HOST_FAULTS_FULL", "") not in ("", "0")
PF0, PF1 = "0000:d8:00.0", "0000:d8:00.1"
PF1_VF1 = "0000:d8:0a.1"           # offset 79 from d8:00.1
DFL, OPAE = "0000:86:00.0", "0000:5e:00.0"
DFL_IFACE = "9346116df8f65a1ba2b6f1ec3a8a0b5e"
AFU_A = "11112222333344445555666677778888"
AFU_B = "aaaabbbbccccddddeeeeffff00001111"


@pytest.fixture(autouse=True)
def _exits(monkeypatch):
    require_fuse()
    patch_exits(monkeypatch)


# -- scenarios: (lab, set-up, the converge's invocations, units in use, tools) ------------------------------
def _sriov(h, tmp):
    """Two PFs: PF0 2 -> 4 VFs on vfio-pci with MAC/VLAN/trust of two VFs (the VFs are removed and recreated:
    the undo of the removal restores the old VFs and their binding); PF1 keeps 2 VFs, VF0 gets a MAC and VLAN
    while VF1 is in a running domain (untouched)."""
    setup = [("pf0", sriov_vfs.main, {"root": h.root, "address": PF0, "num_vfs": 2, "vf_driver": "vfio-pci",
                                      "vfs": [{"index": 1, "mac": "52:54:00:00:00:11", "vlan": 7}]}),
             ("pf1", sriov_vfs.main, {"root": h.root, "address": PF1, "num_vfs": 2,
                                      "vfs": [{"index": 1, "mac": "52:54:00:00:01:01"}]})]
    steps = [("sriov_vfs " + PF0, sriov_vfs.main,
              {"root": h.root, "address": PF0, "num_vfs": 4, "vf_driver": "vfio-pci", "tool_timeout": 20,
               "vfs": [{"index": 0, "mac": "52:54:00:00:00:01"}, {"index": 1, "mac": "52:54:00:00:00:11", "vlan": 7},
                       {"index": 3, "trust": True}]}),
             ("sriov_vfs " + PF1, sriov_vfs.main,
              {"root": h.root, "address": PF1, "num_vfs": 2, "tool_timeout": 20,
               "vfs": [{"index": 0, "mac": "52:54:00:00:01:00", "vlan": 5}, {"index": 1, "mac": "52:54:00:00:01:01"}]})]
    return setup, steps, [PF1_VF1], ("ip",)


def _vgpu_mdev(h, tmp):
    """Two T4: T4A keeps two 2Q vGPUs (the first in a running domain) and gets a third; T4B goes from one 4Q to
    three 2Q (a whole-card type change: remove, undefine, create, define)."""
    host = "sim-multi-gpu"
    setup = [("t4a", vgpu.main, {"root": h.root, "addresses": [T4A], "type": "GRID T4-2Q", "count": 2}),
             ("t4b", vgpu.main, {"root": h.root, "addresses": [T4B], "type": "GRID T4-4Q", "count": 1})]
    steps = [("vgpu mdev", vgpu.main, {"root": h.root, "addresses": [T4A, T4B], "type": "GRID T4-2Q", "count": 3,
                                       "tool_timeout": 20})]
    return setup, steps, [mdev_uuid(host, T4A, "nvidia-231", 0)], ("mdevctl",)


def _vgpu_vendor(h, tmp):
    """Two L40: L40B from VFs off (sriov-manage -e, three 8Q types, boot unit; its type id is learnt only while
    running, so its boot files come from the module's second plan), L40A from two 8Q (the first VF in a running
    domain) to three."""
    setup = [("l40a", vgpu.main, {"root": h.root, "addresses": [L40A], "type": "NVIDIA L40-8Q", "count": 2})]
    steps = [("vgpu vendor", vgpu.main, {"root": h.root, "addresses": [L40B, L40A], "type": "NVIDIA L40-8Q",
                                         "count": 3, "tool_timeout": 20})]
    return setup, steps, ["0000:3b:00.4"], ("sriov-manage",)


def _fpga(rollback):
    def scenario(h, tmp):
        """D5005 (DFL) from AFU A to AFU B with its boot files (bitstream copy, script, unit, link), the other
        card's port held by a process. With ``rollback``, the load can be undone (A is loaded again)."""
        a = accelsim.make_gbs(os.path.join(tmp, "a.gbs"), DFL_IFACE, AFU_A)
        b = accelsim.make_gbs(os.path.join(tmp, "b.gbs"), DFL_IFACE, AFU_B)
        sha = dict((p, _sha(p)) for p in (a, b))
        setup = [("dfl a", fpga_program.main, {"root": h.root, "address": DFL, "bitstream": a, "sha256": sha[a],
                                               "persistent": True})]
        args = {"root": h.root, "address": DFL, "bitstream": b, "sha256": sha[b], "persistent": True, "timeout": 20}
        if rollback:
            args.update(rollback_bitstream=a, rollback_sha256=sha[a])
        return setup, [("fpga_program " + DFL, fpga_program.main, args)], ["/dev/intel-fpga-port.0"], ("fpgaconf",)
    return scenario


def _sha(path):
    import hashlib  # pylint: disable=import-outside-toplevel
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# -- the same converges through accelerator_converge (one card per invocation, as the role's apply runs a card's
# plan on its own: a fault in one card leaves the others as they are) ------------------------------------------
def _converge_args(h, tmp, entry, **extra):
    args = {"root": h.root, "functions": [entry], "safe_mode": False, "lock_dir": os.path.join(tmp, "lock"),
            "tool_timeout": 20}
    args.update(extra)
    return args


def _converge_sriov(h, tmp):
    """As ``_sriov``'s PF0 (2 -> 4 VFs on vfio-pci with MAC/VLAN/trust), declared as a function. (PF1's change, VF
    settings alone on a PF whose count and driver match, is not one the declaration sees: the resolution compares
    the VF count and driver only.)"""
    setup, steps, in_use, tools = _sriov(h, tmp)
    converge = []
    for label, _main, args in steps[:1]:
        entry = {"name": "vf-" + args["address"][-4:].replace(":", "").replace(".", ""),
                 "match": {"address": args["address"]},
                 "vfs": {"count": args["num_vfs"], "driver": args.get("vf_driver"), "vfs": args["vfs"]}}
        converge.append(("converge " + label, accelerator_converge.main, _converge_args(h, tmp, entry)))
    return setup, converge, in_use, tools


def _converge_vgpu_mdev(h, tmp):
    """As ``_vgpu_mdev``, one converge per GPU."""
    setup, steps, in_use, tools = _vgpu_mdev(h, tmp)
    args = steps[0][2]
    converge = [("converge vgpu " + a, accelerator_converge.main, _converge_args(
        h, tmp, {"name": "t4-2q", "match": {"address": a}, "vgpu": {"type": args["type"], "count": args["count"]}}))
        for a in args["addresses"]]
    return setup, converge, in_use, tools


def _converge_fpga(h, tmp):
    """As ``_fpga(True)``: AFU A -> B with a rollback bitstream, through the declaration."""
    setup, steps, in_use, tools = _fpga(True)(h, tmp)
    a = steps[0][2]
    entry = {"name": "afu-b", "match": {"address": DFL},
             "fpga": {"bitstream": a["bitstream"], "sha256": a["sha256"], "function_id": AFU_B,
                      "rollback_bitstream": a["rollback_bitstream"], "rollback_sha256": a["rollback_sha256"]}}
    return setup, [("converge fpga " + DFL, accelerator_converge.main,
                    _converge_args(h, tmp, entry, persistent=True, fpga_timeout=20))], in_use, tools


SCENARIOS = {
    "sriov_vfs-2pf": ("nic-sriov", _sriov),
    "vgpu-mdev-2gpu": ("multi-gpu", _vgpu_mdev),
    "vgpu-vendor-2gpu": ("multi-gpu", _vgpu_vendor),
    "fpga_program-rollback": ("two-fpga", _fpga(True)),
    "fpga_program-no-rollback": ("two-fpga", _fpga(False)),
    "accelerator_converge-sriov-2pf": ("nic-sriov", _converge_sriov),
    "accelerator_converge-vgpu-mdev-2gpu": ("multi-gpu", _converge_vgpu_mdev),
    "accelerator_converge-fpga-rollback": ("two-fpga", _converge_fpga),
}


def _in_use_view(view, units):
    """What the simulator holds for the units in use: the function or mdev state, vGPU type and VF settings."""
    k = view["kernel"]
    out = {}
    for u in units:
        card = OPAE if u.startswith("/dev/") else u
        out[u] = (k["functions"].get(card), k["mdevs"].get(u), k["vgpu"].get(u), k["fpga"].get(card),
                  k["vfinfo"].get(PF1, {}).get("1") if u == PF1_VF1 else None)
    out["domains"] = k["domains"]
    out["processes"] = k["processes"]
    return out


def _writes_naming(writes, units):
    return [w for w in writes if any(u in w["path"] or u in w["data"] for u in units if not u.startswith("/dev/"))]


def _mark_in_use(h, units):
    for u in units:
        if u.startswith("/dev/"):
            h.mark_in_use(u, by="process", name="qemu-kvm")
        else:
            h.mark_in_use(u, by="domain")


def _kind_of_write(path):
    """The kind of a write: its path with PCI addresses, uuids and temporary names made generic."""
    p = re.sub(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", "BDF", path)
    p = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID", p)
    return re.sub(r"/\.accelops-[^/]*$", "/TMP", p)


def _positions(writes):
    """Which write positions (1-based) to fault: all with HOST_FAULTS_FULL, else the first write of each kind (the
    same kind of write on another VF or mdev takes the same path through the code) and the last write."""
    if FULL:
        return list(range(1, len(writes) + 1))
    seen, out = set(), set()
    for i, w in enumerate(writes, 1):
        k = _kind_of_write(w["path"])
        if k not in seen:
            seen.add(k)
            out.add(i)
    out.add(len(writes))
    return sorted(out)


def _check_described(o, before, now, label):
    """A failed invocation whose result says what it left: ``unchanged`` must mean the host is as before it;
    ``partial`` must list what is still in effect, and the host must differ from before. For
    accelerator_converge, the failed card's result (its ``applied`` entry) says it."""
    r = o.result
    if isinstance(r.get("applied"), dict) and "cards" in r:
        failed = [c for c in r["applied"].values() if c.get("failed")]
        assert len(failed) == 1 or r.get("error"), (label, r)
        r = failed[0] if failed else r
    state = r.get("state")
    if state == "partial":
        assert r.get("still_applied") and "STILL IN EFFECT" in o.msg, (label, r)
        assert now != before, "%s: the result says partial but nothing changed" % label
        if "observed_function" in r:   # fpga_program: the function the device shows, as the simulator has it
            assert r["observed_function"].replace("-", "") == now["kernel"]["fpga"][DFL]["afu_id"], (label, r)
        return "described"
    assert state in (None, "unchanged"), (label, r)
    assert now == before, "%s: the result says %s but the host changed:\n%s\n%s" % (
        label, state or "nothing (failed before any change)", view_diff(before, now), o.msg)
    return "rolled back" if r.get("rolled_back") else "nothing applied"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fault_at_every_step(name, tmp_path, figures):
    lab_name, scenario = SCENARIOS[name]
    lab = {"multi-gpu": write_multi_gpu_lab, "two-fpga": write_two_fpga_lab}.get(lab_name, lambda d: lab_name)(tmp_path)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with accelsim.mount(lab, str(mnt), state_dir=str(tmp_path / "state")) as h:
        setup, steps, in_use, tools = scenario(h, str(tmp_path))
        for o in run_steps(setup):
            assert o.kind == "exit", o
        if name == "vgpu-vendor-2gpu":
            os.unlink(os.path.join(h.state_dir, "var/lib/accelops/vgpu-types.json"))  # L40B's type id: unknown
        _mark_in_use(h, in_use)
        start = Checkpoint(h)
        try:
            _sweep(name, h, start, steps, in_use, tools, figures)
        finally:
            start.close()


def _sweep(name, h, start, steps, in_use, tools, figures):
    # the fault-free converge: the writes and tool runs to fault, the host before each invocation and at the end
    before_step = []
    count_tool_runs(h, tools)
    w0 = len(h.writes())
    for label, main, args in steps:
        before_step.append(host_view(h))
        o = run_steps([(label, main, args)])[0]
        assert o.kind == "exit" and o.result["changed"], o
    final = host_view(h)
    all_writes = h.writes()[w0:]
    n_writes = len(all_writes)
    n_tools = tool_runs(h)
    in_use_start = _in_use_view(before_step[0], in_use)
    assert n_writes >= 3, "the converge should have several writes"

    cases = []
    for n in _positions(all_writes):
        codes = ERRNOS if FULL else (ERRNOS[(n - 1) % len(ERRNOS)],)
        for code in codes:
            cases.append(("write", n, code))
    for tool in tools:
        runs = n_tools.get(tool, 0)
        for n in (range(1, runs + 1) if FULL else sorted({1, runs} - {0})):   # the gate: the first and the last run
            cases.append(("tool", n, tool))
    outcomes = {}
    converged = 0
    for kind, n, what in cases:
        label = "%s: %s fault #%d (%s)" % (name, kind, n, what)
        start.restore()
        w_start = len(h.writes())
        if kind == "write":
            h.fail_write(what, nth=n)
        else:
            h.fail_tool(what, rc=1, stderr="%s: simulated failure (accelsim fault injection)\n" % what, nth=n)
        results = run_steps(steps)
        fired = sum(f["fired"] for f in h.faults()["writes"] + h.faults()["tools"])
        assert fired == 1, "%s: the fault did not fire (%r)" % (label, h.faults())
        last = results[-1]
        assert last.kind in ("exit", "fail"), "%s: %r" % (label, last)
        now = host_view(h)
        if last.kind == "fail":
            assert last.msg and "Traceback" not in last.msg, (label, last.msg)
            cause = os.strerror(getattr(errno, what)) if kind == "write" else "simulated failure"
            assert cause in last.msg, "%s: the message does not give the cause (%s): %s" % (label, cause, last.msg)
            outcome = _check_described(last, before_step[len(results) - 1], now, label)
        else:
            outcome = "absorbed"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if os.environ.get("HOST_FAULTS_VERBOSE"):
            print("%s -> %s: %s" % (label, outcome, last.msg[:300]))
        assert _in_use_view(now, in_use) == in_use_start, "%s: a unit in use changed" % label
        assert not _writes_naming(h.writes()[w_start:], in_use), "%s: a write named a unit in use" % label
        # a clean rerun converges; a second one changes nothing and writes nothing
        h.clear_faults()
        again = run_steps(steps)
        assert [o.kind for o in again] == ["exit"] * len(steps), "%s: the rerun failed: %r" % (label, again)
        after = host_view(h)
        assert after == final, "%s: the rerun did not converge:\n%s" % (label, view_diff(final, after))
        w = len(h.writes())
        third = run_steps(steps)
        assert [o.kind for o in third] == ["exit"] * len(steps) and not any(o.result["changed"] for o in third), \
            "%s: the second rerun changed something: %r" % (label, third)
        assert len(h.writes()) == w, "%s: the second rerun wrote" % label
        converged += 1
    figures["host faults: %s" % name] = {
        "writes": n_writes, "write_positions_faulted": len(set(n for k, n, _w in cases if k == "write")),
        "tool_runs_faulted": len([c for c in cases if c[0] == "tool"]), "tool_runs": n_tools, "faults_injected": len(cases), "outcomes": outcomes,
        "reruns_converged": "%d/%d" % (converged, len(cases))}
