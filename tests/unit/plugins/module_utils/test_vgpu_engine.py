# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The vGPU engine (_vgpu.py) on its own: identities, type parsing and resolution, backend choice, and plans built
on plain simulator trees (inspected, not run: a plain tree has no kernel behind its files)."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia import parse_vgpu_types as parse_types
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import Files
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import HostOps, ProgrammingError
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.nvidia_vgpu import TYPE_CACHE, TypeResolver, read_vendor_vfs
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.vgpu import (
    VgpuDesired, choose_backend, host_name, mdev_uuid, plan_vgpu, read_mdev_card, resolve_mdev_type)

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

T4 = "0000:18:00.0"
L40 = "0000:3b:00.0"
LAB_MDEV = "4b20d080-1b54-4048-85b3-a6a62d165c01"


@pytest.fixture
def t4(tmp_path):
    return accelsim.render_tree("gpu-mdev", str(tmp_path / "t4"))


@pytest.fixture
def l40(tmp_path):
    return accelsim.render_tree("gpu-vendor-vfio", str(tmp_path / "l40"))


def _no_mdevctl(h):
    return HostOps(Sysfs(root=h.root), tool_paths={"mdevctl": None, "sriov-manage": None})


def _descs(plan):
    return [s.description for s in plan.steps]


def test_identities_are_deterministic():
    a = mdev_uuid("compute-1", T4, "nvidia-231", 0)
    assert a == mdev_uuid("compute-1", T4, "nvidia-231", 0)
    assert len({a, mdev_uuid("compute-2", T4, "nvidia-231", 0), mdev_uuid("compute-1", "0000:19:00.0", "nvidia-231", 0),
                mdev_uuid("compute-1", T4, "nvidia-232", 0), mdev_uuid("compute-1", T4, "nvidia-231", 1)}) == 5
    assert a[14] == "5", "a name-based (version 5) UUID"
    # fixed forever: a changed namespace or recipe would rename every vGPU of every host
    assert mdev_uuid("compute-1", T4, "nvidia-231", 0) == "%s" % a


def test_host_name_from_the_lab(t4):
    assert host_name(Sysfs(root=t4.root)) == accelsim.load_lab("gpu-mdev")["hostname"]


def test_parse_types():
    text = "ID    : vGPU Name\n1140  : NVIDIA L40-1Q\n1145  : NVIDIA L40-8Q\n\ngarbage\n 7 :\n"
    assert parse_types(text) == [{"id": "1140", "name": "NVIDIA L40-1Q"}, {"id": "1145", "name": "NVIDIA L40-8Q"},
                                 {"id": "7", "name": None}]
    assert parse_types(None) == [] and parse_types("ID    : vGPU Name\n") == []


def test_read_mdev_card_and_resolve_type(t4):
    types, mdevs = read_mdev_card(Sysfs(root=t4.root), T4)
    by_id = {t["id"]: t for t in types}
    assert by_id["nvidia-231"] == {"id": "nvidia-231", "name": "GRID T4-2Q", "available": 7, "max": 8}
    assert by_id["nvidia-230"]["available"] == 0, "single type per card: another type is running"
    assert list(mdevs) == [LAB_MDEV] and mdevs[LAB_MDEV]["type"] == "nvidia-231"
    assert resolve_mdev_type(types, "grid t4-1q", T4)["id"] == "nvidia-230"
    assert resolve_mdev_type(types, "nvidia-222", T4)["name"] == "GRID T4-1B"
    with pytest.raises(ProgrammingError, match="offers no vGPU type 'GRID T4-9Q'; it offers: nvidia-222 \\(GRID T4-1B\\)"):
        resolve_mdev_type(types, "GRID T4-9Q", T4)


def test_choose_backend(t4, l40):
    s = Sysfs(root=t4.root)
    assert choose_backend(s, T4, "auto") == "mdev"
    with pytest.raises(ProgrammingError, match="not an SR-IOV NVIDIA GPU"):
        choose_backend(s, T4, "vendor_vfio")
    with pytest.raises(ProgrammingError, match="offers no vGPUs"):
        choose_backend(s, "0000:00:17.0", "auto")
    s = Sysfs(root=l40.root)
    assert choose_backend(s, L40, "auto") == "vendor_vfio"
    with pytest.raises(ProgrammingError, match="not an mdev parent"):
        choose_backend(s, L40, "mdev")
    with l40.transaction() as host:
        host.set_numvfs(L40, "2")
    with pytest.raises(ProgrammingError, match="0000:3b:00.4 is a VF"):
        choose_backend(s, "0000:3b:00.4", "auto")


def test_plan_mdev_with_boot_unit(t4, tmp_path):
    ops = _no_mdevctl(t4)
    files = Files(ops.sysfs, str(tmp_path / "persist"))
    plan, cards = plan_vgpu(ops, [T4], VgpuDesired("GRID T4-2Q", 2, hostname="compute-1"), files=files)
    want = [mdev_uuid("compute-1", T4, "nvidia-231", i) for i in range(2)]
    c = cards[0]
    assert (c["backend"], c["type"], c["type_name"], c["vgpus"], c["removed"], c["whole_card_change"]) == (
        "mdev", "nvidia-231", "GRID T4-2Q", want, [LAB_MDEV], False)
    d = _descs(plan)
    assert d[0] == "remove vGPU %s (type nvidia-231) from %s" % (LAB_MDEV, T4)
    assert d[1:3] == ["create vGPU %s (nvidia-231, GRID T4-2Q #%d) on %s" % (u, i, T4) for i, u in enumerate(want)]
    assert [x.split()[0] for x in d[3:]] == ["create", "create", "enable"]


def test_plan_mdev_whole_card_and_limits(t4):
    ops = _no_mdevctl(t4)
    _plan, cards = plan_vgpu(ops, [T4], VgpuDesired("GRID T4-1Q", 1, hostname="h"))
    assert cards[0]["whole_card_change"] is True and cards[0]["removed"] == [LAB_MDEV]
    with pytest.raises(ProgrammingError, match="offers at most 8 vGPUs of type nvidia-231"):
        plan_vgpu(ops, [T4], VgpuDesired("GRID T4-2Q", 9))
    t4.mark_in_use(LAB_MDEV, by="domain", name="instance-00000001")
    with pytest.raises(ProgrammingError, match="whole-card change.*instance-00000001"):
        plan_vgpu(HostOps(Sysfs(root=t4.root), tool_paths={"mdevctl": None}), [T4], VgpuDesired("GRID T4-1Q", 1, hostname="h"))


def test_a_count_past_the_capacity_is_refused_before_any_uuid_is_built(t4, monkeypatch):
    from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import vgpu as _vgpu
    built = []
    real = _vgpu.mdev_uuid
    monkeypatch.setattr(_vgpu, "mdev_uuid", lambda *a: built.append(a) or real(*a))
    with pytest.raises(ProgrammingError, match="offers at most 8 vGPUs of type nvidia-231"):
        plan_vgpu(_no_mdevctl(t4), [T4], VgpuDesired("GRID T4-2Q", 4000))
    assert built == []


@pytest.mark.parametrize("desired,addresses,why", [
    (VgpuDesired("GRID T4-2Q", -1), [T4], "count: -1 must be an integer from 0 to 4096"),
    (VgpuDesired("GRID T4-2Q", 10 ** 8), [T4], "count: 100000000 must be an integer from 0 to 4096"),
    (VgpuDesired("GRID T4-2Q", 10 ** 5000), [T4], "count: an integer of about 5000 digits must be"),
    (VgpuDesired("GRID T4-2Q", True), [T4], "count: True must be an integer"),
    (VgpuDesired(None, 2), [T4], "a vGPU type .* is needed"),
    (VgpuDesired("GRID T4-2Q", 1), [T4, "18:00.0"], "listed twice"),
    (VgpuDesired("GRID T4-2Q", 1), ["0000:99:00.0"], "no PCI device 0000:99:00.0"),
])
def test_plan_bad_input(t4, desired, addresses, why):
    with pytest.raises(ProgrammingError, match=why):
        plan_vgpu(_no_mdevctl(t4), addresses, desired)


def test_plan_mdev_with_mdevctl_definitions(t4):
    calls = []

    def run(argv):
        calls.append(argv[argv.index(t4.root + "/usr/bin/mdevctl"):])
        return 0, json.dumps([{T4: [{LAB_MDEV: {"mdev_type": "nvidia-231", "start": "auto", "attrs": []}}]}]), ""
    ops = HostOps(Sysfs(root=t4.root), run=run)
    plan, _cards = plan_vgpu(ops, [T4], VgpuDesired("GRID T4-2Q", 1, hostname="compute-1"))
    u = mdev_uuid("compute-1", T4, "nvidia-231", 0)
    assert calls == [[t4.root + "/usr/bin/mdevctl", "list", "-d", "--dumpjson"]]
    assert _descs(plan)[-2:] == ["mdevctl undefine %s" % LAB_MDEV, "mdevctl define --auto %s (nvidia-231 on %s)" % (u, T4)]

    def bad(argv):
        return 0, "not json", ""
    with pytest.raises(ProgrammingError, match="not mdevctl's JSON"):
        plan_vgpu(HostOps(Sysfs(root=t4.root), run=bad), [T4], VgpuDesired("GRID T4-2Q", 1))


def test_vendor_plan_before_and_after_the_vfs(l40, tmp_path):
    ops = _no_mdevctl(l40)
    files = Files(ops.sysfs, str(tmp_path / "persist"))
    # VFs not enabled: the type id is not listed yet (resolved while running), count is checked against totalvfs
    plan, cards = plan_vgpu(ops, [L40], VgpuDesired("NVIDIA L40-8Q", 2), files=files)
    assert _descs(plan)[0] == "enable the 32 VFs of %s (sriov_numvfs)" % L40
    assert _descs(plan)[1:] == ["set vGPU type NVIDIA L40-8Q on VF 0000:3b:00.%d" % i for i in (4, 5)]
    assert cards[0]["type"] is None
    with pytest.raises(ProgrammingError, match="at most 32 vGPUs"):
        plan_vgpu(ops, [L40], VgpuDesired("NVIDIA L40-1Q", 33))
    with l40.transaction() as host:
        host.set_numvfs(L40, "32")
        host.set_vgpu_type("0000:3b:00.4", "1145")
    vfs = read_vendor_vfs(ops.sysfs, ["0000:3b:00.4", "0000:3b:00.5"])
    assert vfs[0]["current"] == "1145" and vfs[0]["creatable"] == []
    assert vfs[1]["creatable"] == [{"id": "1145", "name": "NVIDIA L40-8Q"}], "single type per card"
    plan, cards = plan_vgpu(ops, [L40], VgpuDesired("NVIDIA L40-8Q", 2), files=files)
    assert cards[0]["type"] == "1145" and cards[0]["vgpus"] == ["0000:3b:00.4", "0000:3b:00.5"]
    assert _descs(plan)[0] == "set vGPU type 1145 on VF 0000:3b:00.5"
    # a name the full-ish card does not list while it runs another type: a whole-card change whose type id is
    # resolved while running (after the clear, the card lists every type; an unknown one then fails and rolls back)
    plan, cards = plan_vgpu(ops, [L40], VgpuDesired("NVIDIA L40-5Q", 1), files=files)
    assert cards[0]["whole_card_change"] and cards[0]["type"] is None and cards[0]["removed"] == ["0000:3b:00.4"]
    assert _descs(plan)[:2] == ["clear vGPU type 1145 of VF 0000:3b:00.4", "set vGPU type NVIDIA L40-5Q on VF 0000:3b:00.4"]


def test_type_resolver_cache(l40, tmp_path):
    sysfs = Sysfs(root=l40.root)
    files = Files(sysfs, str(tmp_path / "persist"))
    r = TypeResolver(sysfs, files, L40, "NVIDIA L40-2Q", check_mode=False)
    assert r.model == "10de:26b5" and r.resolve() is None
    r.learn([{"creatable": [{"id": "1141", "name": "NVIDIA L40-2Q"}], "supported": []}])
    assert r.resolve() == "1141"
    r.save()
    with open(files.real(TYPE_CACHE)) as f:
        assert json.load(f) == {"10de:26b5": {"1141": "NVIDIA L40-2Q"}}
    assert TypeResolver(sysfs, files, L40, "nvidia l40-2q", check_mode=True).resolve() == "1141", "remembered per card model"
    assert TypeResolver(sysfs, files, L40, "1145", check_mode=True).resolve() == "1145", "an id is taken as it is"


# -- hostile hosts: the type cache under the file rule (_safefile) -----------------------------------------------
def test_type_cache_is_not_written_through_a_link_and_gets_its_mode_whatever_the_umask(l40, tmp_path):
    sysfs = Sysfs(root=l40.root)
    files = Files(sysfs, str(tmp_path / "persist"))
    cache = files.real(TYPE_CACHE)
    victim = tmp_path / "victim"
    victim.write_text("root only\n")
    os.makedirs(os.path.dirname(cache), 0o755)
    os.symlink(str(victim), cache)
    old = os.umask(0)
    try:
        r = TypeResolver(sysfs, files, L40, "NVIDIA L40-2Q", check_mode=False)
        r.learn([{"creatable": [{"id": "1141", "name": "NVIDIA L40-2Q"}], "supported": []}])
        r.save()
    finally:
        os.umask(old)
    assert victim.read_text() == "root only\n" and not os.path.islink(cache)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o644


def test_type_cache_directory_open_to_others_is_not_used(l40, tmp_path):
    sysfs = Sysfs(root=l40.root)
    files = Files(sysfs, str(tmp_path / "persist"))
    cache = files.real(TYPE_CACHE)
    os.makedirs(os.path.dirname(cache))
    os.chmod(os.path.dirname(cache), 0o777)
    r = TypeResolver(sysfs, files, L40, "NVIDIA L40-2Q", check_mode=False)
    r.learn([{"creatable": [{"id": "1141", "name": "NVIDIA L40-2Q"}], "supported": []}])
    r.save()
    assert not os.path.lexists(cache)


@pytest.mark.parametrize("content", ['{"10de:26b5": ["1141"]}', '{"10de:26b5": {"x": 1, "\u00b2": "a"}}', "[]", "\xff"])
def test_type_cache_of_another_shape_counts_as_empty(l40, tmp_path, content):
    sysfs = Sysfs(root=l40.root)
    files = Files(sysfs, str(tmp_path / "persist"))
    cache = files.real(TYPE_CACHE)
    os.makedirs(os.path.dirname(cache), 0o755)
    with open(cache, "w", encoding="latin-1") as f:
        f.write(content)
    r = TypeResolver(sysfs, files, L40, "NVIDIA L40-2Q", check_mode=True)
    assert r.resolve() is None and "none" in str(r.unknown())
    assert TypeResolver(sysfs, files, L40, "\u00b2", check_mode=True).resolve() is None


def test_a_fifo_at_the_type_cache_never_hangs(l40, tmp_path):
    sysfs = Sysfs(root=l40.root)
    files = Files(sysfs, str(tmp_path / "persist"))
    cache = files.real(TYPE_CACHE)
    os.makedirs(os.path.dirname(cache), 0o755)
    os.mkfifo(cache)
    out = {}
    t = threading.Thread(target=lambda: out.update(r=TypeResolver(sysfs, files, L40, "NVIDIA L40-2Q", check_mode=True)))
    t.daemon = True
    t.start()
    t.join(5)
    assert not t.is_alive(), "the type cache FIFO hung the run"
    assert out["r"].resolve() is None
