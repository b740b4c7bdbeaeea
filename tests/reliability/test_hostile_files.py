# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A hostile host: links and FIFOs planted at every state file a host module reads or writes as root, hostile
sysfs shapes, declarations that used to crash or hang. Each case runs the real code (the module or its engine) on
a rendered simulator tree, in a thread with a deadline: a case that does not end is a hang.

Figures (``hostile_files``, ``hostile_sysfs_shapes``, ``hostile_declarations``): links planted, FIFOs planted,
victims changed (0), hangs (0), tracebacks (0). The file rule they check is in docs/reliability.md."""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
import threading
import traceback

import pytest

from helpers import patch_exits, run_module

import accelsim
from ansible_collections.accelops.lifecycle.plugins.module_utils import _inuse
from ansible_collections.accelops.lifecycle.plugins.module_utils._converge import ConvergeRefused, HostLock
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.nvidia_vgpu import TYPE_CACHE, TypeResolver
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import Files
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

DEADLINE = 15.0
VICTIM_TEXT = b"root:only:victim\n"
PLANTS = ("link", "fifo", "devzero")


def _in_time(fn):
    """``(kind, value)`` of ``fn()`` run in a thread: ``ok``, ``refused`` (an expected refusal), ``traceback``,
    or ``hang`` when it did not end within DEADLINE."""
    out = {}

    def target():
        try:
            out["r"] = ("ok", fn())
        except ConvergeRefused as e:
            out["r"] = ("refused", str(e))
        except Exception:  # pylint: disable=broad-except
            out["r"] = ("traceback", traceback.format_exc())
    t = threading.Thread(target=target)
    t.daemon = True
    t.start()
    t.join(DEADLINE)
    return out.get("r", ("hang", None))


def _plant(path, kind, victim):
    if os.path.lexists(path):
        os.unlink(path)
    if kind == "link":
        os.symlink(victim, path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)


def _victim(d):
    v = os.path.join(d, "victim")
    with open(v, "wb") as f:
        f.write(VICTIM_TEXT)
    os.chmod(v, 0o600)
    return v


def _victim_intact(v):
    with open(v, "rb") as f:
        return f.read() == VICTIM_TEXT and stat.S_IMODE(os.stat(v).st_mode) == 0o600


# -- the cases: (name, prepare(d) -> path to plant at, run(d) -> result) ---------------------------------------------
def _lock_dir(d):
    p = os.path.join(d, "lock")
    os.makedirs(p, 0o700, exist_ok=True)
    return p


def _acquire(d):
    lock = HostLock(_lock_dir(d), 0.2, owner="reliability")
    lock.acquire()
    lock.release()


def _wait_on_held(d):
    fd = os.open(os.path.join(_lock_dir(d), "converge.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        return HostLock(_lock_dir(d), 0.2).acquire()
    finally:
        os.close(fd)


def _type_cache(d, check_mode):
    sysfs = Sysfs(root=os.path.join(d, "root"))
    files = Files(sysfs, os.path.join(d, "persist"))
    r = TypeResolver(sysfs, files, "0000:3b:00.0", "NVIDIA L40-2Q", check_mode=check_mode)
    r.learn([{"creatable": [{"id": "1141", "name": "NVIDIA L40-2Q"}], "supported": []}])
    r.save()
    return r.resolve()


def _cache_path(d):
    p = os.path.join(d, "persist", TYPE_CACHE.lstrip("/"))
    os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
    return p


def _domains(d):
    return _inuse.collect(Sysfs(root=os.path.join(d, "root"))).warnings


def _xml_path(d):
    p = os.path.join(d, "root", "run/libvirt/qemu/instance-1.xml")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


CASES = {
    "lock file": (lambda d: os.path.join(_lock_dir(d), "converge.lock"), _acquire),
    "owner record temp name": (lambda d: os.path.join(_lock_dir(d), "converge.owner.new"), _acquire),
    "owner record (writer)": (lambda d: os.path.join(_lock_dir(d), "converge.owner"), _acquire),
    "owner record (waiter)": (lambda d: os.path.join(_lock_dir(d), "converge.owner"), _wait_on_held),
    "vGPU type cache (read)": (_cache_path, lambda d: _type_cache(d, True)),
    "vGPU type cache (write)": (_cache_path, lambda d: _type_cache(d, False)),
    "libvirt domain XML": (_xml_path, _domains),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_planted_links_and_fifos_at_state_files(case, figures, tmp_path):
    where, run = CASES[case]
    fig = figures.setdefault("hostile_files", {"links": 0, "fifos": 0, "cases": 0, "victims_changed": 0,
                                               "hangs": 0, "tracebacks": 0})
    problems = []
    for kind in PLANTS:
        d = str(tmp_path / kind)
        os.mkdir(d, 0o700)
        victim = _victim(d)
        _plant(where(d), kind, victim)
        fig["fifos" if kind == "fifo" else "links"] += 1
        fig["cases"] += 1
        result, value = _in_time(lambda: run(d))
        if result == "hang":
            fig["hangs"] += 1
            problems.append("%s, %s planted: hung past %s s" % (case, kind, DEADLINE))
        elif result == "traceback":
            fig["tracebacks"] += 1
            problems.append("%s, %s planted: traceback\n%s" % (case, kind, value))
        elif result == "refused" and VICTIM_TEXT.decode().strip() in value:
            problems.append("%s, %s planted: the message shows the victim's content" % (case, kind))
        if not _victim_intact(victim):
            fig["victims_changed"] += 1
            problems.append("%s, %s planted: the victim was changed" % (case, kind))
    assert not problems, "\n".join(problems)


# -- the kept bitstream copy, through the fpga_program module ---------------------------------------------------------
DFL = "0000:86:00.0"
DFL_IFACE = "9346116df8f65a1ba2b6f1ec3a8a0b5e"   # the fpga-dfl lab's FME interface id


@pytest.mark.parametrize("at", ["kept copy", "kept copy temp name"])
def test_planted_links_and_fifos_at_the_kept_bitstream(at, monkeypatch, figures, tmp_path):
    from ansible_collections.accelops.lifecycle.plugins.modules import fpga_program
    patch_exits(monkeypatch)
    fig = figures.setdefault("hostile_files", {"links": 0, "fifos": 0, "cases": 0, "victims_changed": 0,
                                               "hangs": 0, "tracebacks": 0})
    problems = []
    for kind in PLANTS:
        d = str(tmp_path / kind)
        h = accelsim.render_tree("fpga-dfl", os.path.join(d, "host"))
        gbs = accelsim.make_gbs(os.path.join(d, "a.gbs"), DFL_IFACE, "aaaabbbbccccddddeeeeffff00001111")
        with open(gbs, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        state = os.path.join(h.root, "var/lib/accelops/fpga")
        os.makedirs(state, 0o700)
        victim = _victim(d)
        target = os.path.join(state, digest + ".gbs" + (".tmp" if at.endswith("temp name") else ""))
        _plant(target, kind, victim)
        fig["fifos" if kind == "fifo" else "links"] += 1
        fig["cases"] += 1
        args = {"root": h.root, "address": DFL, "bitstream": gbs, "sha256": digest, "persistent": True}
        for check in (True, False):
            result, out = _in_time(lambda: run_module(fpga_program.main, args, check))
            if result == "hang":
                fig["hangs"] += 1
                problems.append("%s, %s planted, check=%s: hung" % (at, kind, check))
            elif result == "traceback" or out.kind == "traceback":
                fig["tracebacks"] += 1
                problems.append("%s, %s planted: traceback\n%s" % (at, kind, out if result == "traceback" else out.tb))
        if not _victim_intact(victim):
            fig["victims_changed"] += 1
            problems.append("%s, %s planted: the victim was changed" % (at, kind))
    assert not problems, "\n".join(problems)


# -- hostile sysfs shapes ---------------------------------------------------------------------------------------------
PF = "0000:d8:00.0"
NUMVFS = ("1_0", "\u0663", "+4", "1e5", "100000", "16000", "1000000000", "-1", "4 4", "0x4", "\u00b2")


def test_hostile_sysfs_shapes(monkeypatch, figures, tmp_path):
    """sriov_numvfs values the kernel never prints (through sriov_vfs in check mode), a FIFO at an attribute and a
    physfn cycle (through accelerator_info): a message or a warning, in time, no write."""
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _sysfs
    from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_info, sriov_vfs
    patch_exits(monkeypatch)
    writes = []
    monkeypatch.setattr(_sysfs.Sysfs, "write", lambda self, path, value: writes.append(path))
    stats = {"numvfs_values": 0, "fifo_attributes": 0, "physfn_cycles": 0, "hangs": 0, "tracebacks": 0,
             "trusted": 0}
    problems = []
    h = accelsim.render_tree("nic-sriov", str(tmp_path / "nic"))
    attr = os.path.join(h.root, "sys/bus/pci/devices", PF, "sriov_numvfs")
    for value in NUMVFS:
        with open(attr, "w") as f:
            f.write(value + "\n")
        stats["numvfs_values"] += 1
        result, out = _in_time(lambda: run_module(sriov_vfs.main, {"root": h.root, "address": PF, "num_vfs": 2},
                                                  True))
        if result != "ok" or out.kind == "traceback":
            stats["hangs" if result == "hang" else "tracebacks"] += 1
            problems.append("sriov_numvfs %r: %s" % (value, result if result != "ok" else out.tb))
        elif out.kind != "fail" or "not a VF count" not in out.msg:
            stats["trusted"] += 1
            problems.append("sriov_numvfs %r was taken: %s" % (value, out.result))
    os.unlink(attr)
    os.mkfifo(attr)
    stats["fifo_attributes"] += 1
    for main, args in ((sriov_vfs.main, {"root": h.root, "address": PF, "num_vfs": 2}),
                       (accelerator_info.main, {"root": h.root, "nvidia_smi": "never", "include_all": True})):
        result, out = _in_time(lambda: run_module(main, args, True))
        if result != "ok" or out.kind == "traceback":
            stats["hangs" if result == "hang" else "tracebacks"] += 1
            problems.append("FIFO at sriov_numvfs: %s" % result)
    amd = accelsim.render_tree("gpu-amd-instinct", str(tmp_path / "amd"))
    dev = os.path.join(amd.root, "sys/bus/pci/devices")
    vf = sorted(n for n in os.listdir(dev) if os.path.islink(os.path.join(dev, n, "physfn")))[0]
    pf = os.path.basename(os.readlink(os.path.join(dev, vf, "physfn")))
    os.symlink("../" + vf, os.path.join(dev, pf, "physfn"))
    stats["physfn_cycles"] += 1
    result, out = _in_time(lambda: run_module(accelerator_info.main, {"root": amd.root, "nvidia_smi": "never",
                                                                      "include_all": True}, True))
    if result != "ok" or out.kind != "exit":
        stats["hangs" if result == "hang" else "tracebacks"] += 1
        problems.append("physfn cycle: %s %s" % (result, getattr(out, "tb", None) or getattr(out, "msg", None)))
    figures["hostile_sysfs_shapes"] = stats
    assert not writes, writes[:5]
    assert not problems, "\n".join(problems)


# -- hostile declarations ---------------------------------------------------------------------------------------------
NIC_MATCH = {"family": "nic"}
DECLARATIONS = [
    ([{"name": "x", "match": NIC_MATCH, "vfs": {"count": "\u00b2"}}], "vfs.count: must be an integer"),
    ([{"name": "x", "match": NIC_MATCH, "vfs": {"count": "\u00b3"}}], "vfs.count: must be an integer"),
    ([{"name": "x", "match": NIC_MATCH, "vfs": {"count": "9" * 5001}}], "vfs.count: must be an integer"),
    ([{"name": "x", "match": {"family": "gpu"}, "vgpu": {"type": "GRID T4-2Q", "count": 10 ** 8}}],
     "vgpu.count: must be an integer from 1 to 65535"),
    ([{"name": "fast-net", "match": {"address": "0000:d8:00.0"}, "vfs": {"count": 2}},
      {"name": "fast_net", "match": {"address": "0000:d8:00.1"}, "vfs": {"count": 2}}],
     "both become the trait CUSTOM_FUNCTION_FAST_NET"),
]


def test_hostile_declarations(monkeypatch, figures, tmp_path):
    from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge
    patch_exits(monkeypatch)
    h = accelsim.render_tree("nic-sriov", str(tmp_path / "nic"))
    stats = {"declarations": 0, "refused_naming_key": 0, "hangs": 0, "tracebacks": 0}
    problems = []
    for functions, words in DECLARATIONS:
        stats["declarations"] += 1
        args = {"root": h.root, "functions": functions, "persist_root": str(tmp_path / "persist"),
                "lock_dir": str(tmp_path / "lock")}
        result, out = _in_time(lambda: run_module(accelerator_converge.main, args, True))
        if result != "ok" or out.kind == "traceback":
            stats["hangs" if result == "hang" else "tracebacks"] += 1
            problems.append("%r: %s" % (functions, result if result != "ok" else out.tb))
        elif words in (out.result.get("msg") or ""):
            stats["refused_naming_key"] += 1
        else:
            problems.append("%r: %s" % (str(functions)[:200], out.result.get("msg")))
    figures["hostile_declarations"] = stats
    assert not problems, "\n".join(problems)
