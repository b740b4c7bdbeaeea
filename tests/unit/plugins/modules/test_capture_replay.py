# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every capture under tests/captures/ (tools/capture-host.py), replayed (accelsim/replay.py): discovery
(accelerator_info) and a check-mode plan for a function each card could carry (a VF count, a vGPU type, a MIG
layout, an FPGA load) succeed without a write and without a command the capture lacks. Where the capture holds what
accelerator_info returned on the host (``real-discovery-<vf_detail>.json``), discovery on the replay returns the
same records. A capture dropped into tests/captures/ is picked up with no code change (docs/simulator.md,
"Contribute a capture")."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from accelsim import replay  # noqa: E402  pylint: disable=wrong-import-position
from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.modules import (  # noqa: E402  pylint: disable=wrong-import-position
    accelerator_info, fpga_program, nvidia_mig, sriov_vfs, vgpu)

CAPTURES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "captures"))
NAMES = sorted(n for n in os.listdir(CAPTURES) if os.path.isfile(os.path.join(CAPTURES, n, "capture.json"))) \
    if os.path.isdir(CAPTURES) else []
# What differs between the captured host and its replay for reasons of place, not of the devices: where the root
# and nvidia-smi are, and the pci.ids file (this machine's, or none on the captured host), which names come from.
HOST_FIELDS_EXCLUDED = ("root", "nvidia_smi", "pci_ids")
RECORD_FIELDS_EXCLUDED = ("vendor_name", "device_name", "subsystem_name", "class_name")


@pytest.fixture(autouse=True)
def _exits(monkeypatch):
    patch_exits(monkeypatch)


# the captures that hold what discovery returned on the captured host itself
REAL = [n for n in NAMES if any(f.startswith("real-discovery-") for f in os.listdir(os.path.join(CAPTURES, n)))]


def build(name, tmp_path):
    """(capture folder, replay root)."""
    capture = os.path.join(CAPTURES, name)
    return capture, replay.build(capture, str(tmp_path / "root"))


def tree_digest(root):
    """A digest of every file, link and folder under ``root`` but what the replay itself logs."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(folder, root)
        if rel.startswith(replay.MARK):
            continue
        h.update(rel.encode())
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            path = os.path.join(folder, name)
            h.update(name.encode())
            if os.path.islink(path):
                h.update(os.readlink(path).encode())
            else:
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def discovery(root, vf_detail="full"):
    e = run_module(accelerator_info.main, {"root": root, "vf_detail": vf_detail})
    assert e.kind == "exit", e.result.get("msg")
    assert replay.missing(root) == [], "the capture lacks these command lines: %s" % replay.missing(root)
    return e.result


def plans(root, found, tmp_path):
    """``(what, module main, args)``: a check-mode change each card of the discovery could be given."""
    persist = str(tmp_path / "persist")
    out = []
    for r in found["accelerators"]:
        if r.get("physfn"):
            continue
        addr, gpu, sriov, fpga = r["address"], r.get("gpu") or {}, r.get("sriov") or {}, r.get("fpga")
        in_use = any(u.get("in_use") for u in r.get("units") or []) or any(
            v.get("in_use") for v in sriov.get("vf_units") or [])
        if sriov.get("totalvfs"):
            numvfs = sriov.get("numvfs") or 0
            if not (gpu.get("iov") or {}).get("vf_count_programmable", True) or in_use:
                want = numvfs            # GIM's own count, or VFs in use: no count change, the VFs' driver only
            else:
                want = 0 if numvfs else min(2, sriov["totalvfs"])
            args = {"root": root, "address": addr, "num_vfs": want, "persist_root": persist}
            if want:
                args["vf_driver"] = "vfio-pci"
            out.append(("VF count %d -> %d" % (numvfs, want), sriov_vfs.main, args))
        mig = gpu.get("mig")
        if mig is not None and mig.get("mode_current") != "Enabled":
            out.append(("MIG mode on, no GPU instance", nvidia_mig.main,
                        {"root": root, "address": addr, "mode": "enabled", "layout": "none", "persist_root": persist}))
        elif mig is not None:
            # the layout there now when a GPU instance is in use, else one instance of the smallest profile
            if any(gi.get("in_use") for gi in mig.get("gpu_instances") or []) or not mig.get("profiles"):
                layout = [{"profile": gi["name"]} for gi in mig.get("gpu_instances") or []] or "none"
            else:
                layout = [{"profile": sorted(mig["profiles"], key=lambda p: p["memory_slices"])[0]["name"]}]
            out.append(("MIG layout %s" % layout, nvidia_mig.main,
                        {"root": root, "address": addr, "layout": layout, "persist_root": persist}))
        types = [t for t in gpu.get("mdev_types") or [] if t.get("available_instances") or t.get("mdevs")]
        types += gpu.get("vgpu_types") or []
        if types and not in_use:
            out.append(("vGPU type %s" % types[0]["id"], vgpu.main,
                        {"root": root, "addresses": [addr], "type": types[0]["id"], "count": 1,
                         "persist_root": persist, "hostname": "compute-1"}))
        if fpga and fpga.get("regions") and not in_use:
            iface = fpga["regions"][0]["interface_id"]
            if fpga["vendor"] == "xilinx":
                path = accelsim.make_xclbin(str(tmp_path / "f.xclbin"), iface, "99999999-2222-3333-4444-555555555555")
                addr = fpga.get("management_address") or addr
            else:
                path = accelsim.make_gbs(str(tmp_path / "f.gbs"), iface, "11111111222233334444555555555555")
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            out.append(("FPGA load on %s" % iface, fpga_program.main,
                        {"root": root, "address": addr, "bitstream": path, "sha256": digest, "persist_root": persist}))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_discovery_and_check_mode_plans_without_a_write(name, tmp_path, writes):
    _capture, root = build(name, tmp_path)
    before = tree_digest(root)
    found = discovery(root)
    assert found["accelerators"], "the capture holds no accelerator"
    discovery(root, vf_detail="summary")
    todo = plans(root, found, tmp_path)
    assert todo, "no card of the capture could be given a function"
    for what, main, args in todo:
        e = run_module(main, args, check=True, diff=True)
        assert e.kind == "exit", "%s on %s: %s" % (what, args["root"], e.result.get("msg"))
        assert e.result["changed"], "%s: planned no change" % what
        assert replay.missing(root) == [], "%s: the capture lacks these command lines: %s" % (what, replay.missing(root))
    assert writes == [] and tree_digest(root) == before


@pytest.mark.parametrize("name", REAL)
def test_replayed_discovery_is_what_the_host_returned(name, tmp_path):
    capture, root = build(name, tmp_path)
    real = sorted(n for n in os.listdir(capture) if n.startswith("real-discovery-") and n.endswith(".json"))
    for name in real:
        with open(os.path.join(capture, name)) as f:
            want = json.load(f)
        got = discovery(root, vf_detail=want["host"]["vf_detail"])
        assert strip(got["accelerators"]) == strip(want["accelerators"]), name
        host = dict((k, v) for k, v in got["host"].items() if k not in HOST_FIELDS_EXCLUDED)
        assert host == dict((k, v) for k, v in want["host"].items() if k not in HOST_FIELDS_EXCLUDED), name


def strip(records):
    return [dict((k, v) for k, v in r.items() if k not in RECORD_FIELDS_EXCLUDED) for r in records]


def test_a_command_line_not_captured_is_reported(tmp_path):
    """The replayed tool fails like an unknown option, and the replay lists what was asked."""
    capture = os.path.join(CAPTURES, NAMES[0])
    root = replay.build(capture, str(tmp_path / "root"))
    tool = [c["argv"][0] for c in replay.load(capture)["commands"] if c.get("found")][0]
    import subprocess
    p = subprocess.run([os.path.join(root, "usr/bin", tool), "--no-such-option"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert p.returncode == 2 and "not captured" in p.stderr
    assert replay.missing(root) == [[tool, "--no-such-option"]]


def _disabled_mig_gpus(name, tmp_path):
    """(replay root, [(address, profile names the GPU lists)]) of the capture's GPUs whose MIG mode is Disabled."""
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.nvidia_smi import parse_mig_gip
    capture, root = build(name, tmp_path)
    found = discovery(root)
    listed = dict((tuple(c["argv"]), c.get("stdout") or "") for c in replay.load(capture)["commands"] if c.get("found"))
    gpus = []
    for r in found["accelerators"]:
        mig = (r.get("gpu") or {}).get("mig")
        if mig and mig.get("mode_current") == "Disabled":
            text = listed.get(("nvidia-smi", "mig", "-lgip", "-i", str(mig["index"])), "")
            gpus.append((r["address"], [p["name"] for p in parse_mig_gip(text).get(mig["index"], [])]))
    return root, gpus


@pytest.mark.parametrize("name", [n for n in REAL if n.startswith("nvidia-")])
def test_a_layout_asked_with_mig_disabled_is_checked_against_the_profiles_listed(name, tmp_path, writes):
    """Real H100 and H200 list their GPU-instance profiles with MIG disabled: a check-mode plan that turns MIG on
    with a layout refuses a profile the card does not offer before the mode changes (it used to be accepted as
    'created once MIG mode is in effect'), and plans one it offers."""
    root, gpus = _disabled_mig_gpus(name, tmp_path)
    assert gpus and all(offered for _a, offered in gpus), "the capture has no MIG-capable GPU listing profiles"
    for address, offered in gpus:
        args = {"root": root, "address": address, "mode": "enabled", "persist_root": str(tmp_path / "persist")}
        foreign = "1g.18gb" if "1g.18gb" not in offered else "1g.10gb"
        e = run_module(nvidia_mig.main, dict(args, layout=foreign), check=True)
        assert e.kind == "fail", e.result
        assert "offers no MIG profile %s" % foreign in e.result["msg"] and offered[0] in e.result["msg"]
        e = run_module(nvidia_mig.main, dict(args, layout=offered[0]), check=True)
        assert e.kind == "exit" and e.result["changed"], e.result.get("msg")
        assert "is created once MIG mode is in effect" in e.result["pending"]
    assert writes == []
