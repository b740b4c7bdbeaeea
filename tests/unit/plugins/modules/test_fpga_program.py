# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fpga_program module against simulated lab hosts.

Plain trees (the simulator's tool fakes re-render them) for the matrix, faults and persistence; FUSE mounts (root,
/dev/fuse) for the same load through a host that reacts like the kernel, a real process holding the port open and
a file the kernel refuses to read.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import subprocess
import sys
import threading

import pytest


from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs
from ansible_collections.accelops.lifecycle.plugins.modules import fpga_program

SIMULATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "simulator")
if os.path.isdir(SIMULATOR) and SIMULATOR not in sys.path:
    sys.path.insert(0, SIMULATOR)
from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")
from accelsim.testing import mounts  # noqa: E402  pylint: disable=wrong-import-position

OPAE = {"lab": "fpga-opae", "address": "0000:5e:00.0", "iface": "38558f8b33385e6ba9a5c6ac75f8e59f",
        "default": "d8424dc4a4a93c849c1ad7c6d7b3c2a7", "port": "intel-fpga-port.0", "vf": "0000:5e:00.1"}
DFL = {"lab": "fpga-dfl", "address": "0000:86:00.0", "iface": "9346116df8f65a1ba2b6f1ec3a8a0b5e",
       "default": "9aeffe5f84570612c000c9660d824272", "port": "dfl-port.0", "vf": "0000:86:00.1"}
ALVEO = {"lab": "xilinx-alveo", "mgmt": "0000:af:00.0", "user": "0000:af:00.1",
         "iface": "0b2dd2ba-cdd0-3ee8-0c1b-6d1a8ebcd9b7"}
AFU_A = "11112222333344445555666677778888"
AFU_B = "aaaabbbbccccddddeeeeffff00001111"
XCLBIN_A = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    patch_exits(monkeypatch)


def run(args, check=False, diff=False):
    return run_module(fpga_program.main, args, check, diff)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def afu(root, lab):
    """The AFU id as discovery reads it (independent of the module's read-back)."""
    rec = discover(Sysfs(root=root), families=["fpga"], addresses=[lab["address"]], nvidia_smi="never")["accelerators"][0]
    return rec["fpga"]["ports"][0]["afu_id"]


def gbs(tmp_path, lab, afu_id=AFU_A, iface=None, name="a.gbs"):
    p = accelsim.make_gbs(str(tmp_path / name), iface or lab["iface"], afu_id)
    return p, sha(p)


def replace_tool(root, name, script):
    """Put a fake vendor tool in the simulated host's usr/bin (the original is kept as <name>.real)."""
    path = os.path.join(root, "usr/bin", name)
    real = path + ".real"
    if not os.path.exists(real):
        os.rename(path, real)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + script.replace("@REAL@", real) + "\n")
    os.chmod(path, 0o755)
    return path


@pytest.fixture(params=[OPAE, DFL], ids=["opae", "dfl"])
def intel(request, tmp_path):
    lab = request.param
    h = accelsim.render_tree(lab["lab"], str(tmp_path / "host"))
    return h, lab


# -- the matrix ----------------------------------------------------------------------------------------
def test_check_real_verify_idempotent(intel, tmp_path):
    h, lab = intel
    path, digest = gbs(tmp_path, lab)
    args = {"root": h.root, "address": lab["address"], "bitstream": path, "sha256": digest,
            "function_id": "{%s}" % AFU_A.upper()}
    c = run(args, check=True, diff=True)
    assert c.kind == "exit", c.result.get("msg")
    assert c.result["changed"] and c.result["tool"]["runs"] == [] and c.result["audit"] == []
    assert c.result["before"]["function"].replace("-", "") == lab["default"]
    assert c.result["after"]["function"].replace("-", "") == AFU_A
    assert afu(h.root, lab) == lab["default"], "check mode changed the device"
    assert lab["default"][:8] in c.result["diff"]["before"] and AFU_A[:8] in c.result["diff"]["after"]

    r = run(args, diff=True)
    assert r.kind == "exit", r.result.get("msg")
    assert r.result["changed"] and r.result["plan"] == c.result["plan"]
    assert r.result["applied"] == c.result["applied"]
    assert afu(h.root, lab) == AFU_A
    run_argv = r.result["tool"]["runs"][0]["argv"]
    assert run_argv[0] == os.path.join(h.root, "usr/bin/fpgaconf")
    bus, dev = lab["address"][5:7], lab["address"][8:10]
    assert run_argv[1:7] == ["-B", "0x" + bus, "-D", "0x" + dev, "-F", "0x0"]
    assert run_argv[-1] != path, "the tool must get the verified private copy"
    assert len(r.result["audit"]) == 1
    line = r.result["audit"][0]
    assert "load fpga function" in line and lab["address"] in line and "new=11112222-" in line and "user=" in line

    for check in (True, False):
        again = run(args, check=check)
        assert again.kind == "exit" and not again.result["changed"]
        assert again.result["tool"]["runs"] == [] and again.result["plan"] == [] and again.result["audit"] == []


def test_force_reloads_but_never_past_in_use(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE, afu_id=OPAE["default"])
    args = {"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest}
    assert not run(args).result["changed"]
    forced = run(dict(args, force=True))
    assert forced.kind == "exit" and forced.result["changed"] and len(forced.result["tool"]["runs"]) == 1
    h.mark_in_use(OPAE["address"], by="domain", name="instance-00000001")
    refused = run(dict(args, force=True))
    assert refused.kind == "fail" and "in use" in refused.result["msg"] and "instance-00000001" in refused.result["msg"]


def test_alveo_whole_card(tmp_path):
    h = accelsim.render_tree("xilinx-alveo", str(tmp_path / "host"))
    path = accelsim.make_xclbin(str(tmp_path / "vadd.xclbin"), ALVEO["iface"], XCLBIN_A)
    args = {"root": h.root, "address": ALVEO["mgmt"], "bitstream": path, "sha256": sha(path)}
    c = run(args, check=True)
    assert c.kind == "exit" and c.result["changed"], c.result.get("msg")
    assert c.result["target"]["programming_model"] == "single" and c.result["target"]["slots"] == [ALVEO["user"]]
    r = run(args)
    assert r.kind == "exit" and r.result["changed"], r.result.get("msg")
    assert r.result["tool"]["runs"][0]["argv"][1:5] == ["program", "--device", ALVEO["mgmt"], "--user"]
    rec = discover(Sysfs(root=h.root), families=["fpga"], nvidia_smi="never")["accelerators"][0]
    assert rec["function"]["id"].replace("-", "") == XCLBIN_A.replace("-", "")
    assert not run(dict(args, address=ALVEO["user"])).result["changed"]
    # a port makes no sense on a single-program card
    bad = run(dict(args, port="0"))
    assert bad.kind == "fail" and "single-program" in bad.result["msg"]
    # in use: every slot of the card is refused, with the evidence
    other = accelsim.make_xclbin(str(tmp_path / "other.xclbin"), ALVEO["iface"], "99999999-2222-3333-4444-555555555555")
    h.mark_in_use(ALVEO["user"], by="domain", name="instance-000000aa")
    busy = run(dict(args, bitstream=other, sha256=sha(other)))
    assert busy.kind == "fail" and "instance-000000aa" in busy.result["msg"] and busy.result["in_use_by"]
    # wrong shell interface
    h.release("instance-000000aa")
    wrong = accelsim.make_xclbin(str(tmp_path / "wrong.xclbin"), "11111111-0000-0000-0000-000000000001", XCLBIN_A)
    w = run(dict(args, bitstream=wrong, sha256=sha(wrong)))
    assert w.kind == "fail" and "built for interface 11111111-" in w.result["msg"]


# -- refusals -----------------------------------------------------------------------------------------------
def test_in_use_port_vf_and_pf(tmp_path):
    h = accelsim.render_tree("fpga-dfl", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, DFL)
    args = {"root": h.root, "address": DFL["address"], "bitstream": path, "sha256": digest}
    pid = h.mark_in_use("/dev/dfl-port.0", by="process", name="afu-app")
    r = run(args)
    assert r.kind == "fail" and "/dev/dfl-port.0" in r.result["msg"] and "afu-app" in r.result["msg"]
    assert r.result["in_use_by"][0]["pid"] == int(pid)
    assert afu(h.root, DFL) == DFL["default"] and r.result["audit"] == []
    h.release(pid)
    with h.transaction() as k:
        k.set_numvfs(DFL["address"], "1")
    h.mark_in_use(DFL["vf"], by="domain", name="instance-0000vf01")
    r = run(args, check=True)
    assert r.kind == "fail" and "instance-0000vf01" in r.result["msg"], "check mode refuses too"
    h.release("instance-0000vf01")
    assert run(args).result["changed"]


def test_wrong_checksum_and_interface(intel, tmp_path):
    h, lab = intel
    path, digest = gbs(tmp_path, lab)
    r = run({"root": h.root, "address": lab["address"], "bitstream": path, "sha256": "0" * 64})
    assert r.kind == "fail" and "not the pinned" in r.result["msg"] and digest in r.result["msg"]
    r = run({"root": h.root, "address": lab["address"], "bitstream": path, "sha256": "xyz"})
    assert r.kind == "fail" and r.result["msg"].startswith("sha256 must be 64 hex digits")
    other, odigest = gbs(tmp_path, lab, iface="ffffeeeeddddccccbbbbaaaa99998888", name="other.gbs")
    r = run({"root": h.root, "address": lab["address"], "bitstream": other, "sha256": odigest})
    assert r.kind == "fail" and "built for interface ffffeeee-" in r.result["msg"] and lab["address"] in r.result["msg"]
    r = run({"root": h.root, "address": lab["address"], "bitstream": path, "sha256": digest, "function_id": AFU_B})
    assert r.kind == "fail" and "not function_id" in r.result["msg"]
    assert afu(h.root, lab) == lab["default"]


def test_bad_paths(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    base = {"root": h.root, "address": OPAE["address"], "sha256": digest}
    r = run(dict(base, bitstream=str(tmp_path / "missing.gbs")))
    assert r.kind == "fail" and "missing.gbs" in r.result["msg"] and "No such file" in r.result["msg"]
    r = run(dict(base, bitstream=str(tmp_path)))
    assert r.kind == "fail" and "not a regular file (a directory)" in r.result["msg"]
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    r = run(dict(base, bitstream=fifo))
    assert r.kind == "fail" and "a FIFO" in r.result["msg"]
    r = run(dict(base, bitstream="/dev/null"))
    assert r.kind == "fail" and "a character device" in r.result["msg"]
    link = str(tmp_path / "current.gbs")
    os.symlink(path, link)
    ok = run(dict(base, bitstream=link), check=True)
    assert ok.kind == "exit" and ok.result["bitstream"]["symlink"] and ok.result["bitstream"]["resolved"] == path
    r = run(dict(base, bitstream="relative.gbs"))
    assert r.kind == "fail" and "absolute" in r.result["msg"]
    junk = tmp_path / "junk.gbs"
    junk.write_bytes(b"not a bitstream at all")
    r = run(dict(base, bitstream=str(junk), sha256=sha(str(junk))))
    assert r.kind == "fail" and "not a bitstream" in r.result["msg"]
    xcl = accelsim.make_xclbin(str(tmp_path / "a.xclbin"), ALVEO["iface"], XCLBIN_A)
    r = run(dict(base, bitstream=xcl, sha256=sha(xcl)))
    assert r.kind == "fail" and "takes gbs files" in r.result["msg"]


def test_bad_addresses(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    base = {"root": h.root, "bitstream": path, "sha256": digest}
    r = run(dict(base, address="0000:99:00.0"))
    assert r.kind == "fail" and "0000:99:00.0: no such PCI device" in r.result["msg"]
    r = run(dict(base, address="card0"))
    assert r.kind == "fail" and r.result["msg"].startswith("address must be a PCI address")
    r = run(dict(base, address="0000:5d:00.0"))  # the root port above the card
    assert r.kind == "fail" and "not an FPGA" in r.result["msg"]
    with h.transaction() as k:
        k.set_numvfs(OPAE["address"], "1")
    r = run(dict(base, address=OPAE["vf"]))
    assert r.kind == "fail" and "virtual function" in r.result["msg"] and OPAE["address"] in r.result["msg"]
    r = run(dict(base, address=OPAE["address"], port="7"))
    assert r.kind == "fail" and "no port '7'" in r.result["msg"]
    assert run(dict(base, address="5e:00.0", port="0"), check=True).result["changed"]
    r = run(dict(base, address=OPAE["address"], timeout=0))
    assert r.kind == "fail" and "timeout" in r.result["msg"]


# -- tool faults ----------------------------------------------------------------------------------------------
def test_tool_fails(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    replace_tool(h.root, "fpgaconf", "echo 'Error: Failed to reconfigure slot: I/O error' >&2\nexit 1")
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest})
    assert r.kind == "fail"
    msg = r.result["msg"]
    assert "/usr/bin/fpgaconf -B 0x5e " in msg and OPAE["address"] in msg
    assert "failed (exit 1): Error: Failed to reconfigure slot: I/O error" in msg
    assert r.result["state"] == "unchanged" and r.result["observed_function"].replace("-", "") == OPAE["default"]
    assert r.result["audit"] == []


def test_tool_missing(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    os.unlink(os.path.join(h.root, "usr/bin/fpgaconf"))
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest})
    assert r.kind == "fail" and "fpgaconf is not installed" in r.result["msg"]
    # already loaded: no tool needed, unless a boot unit must run it
    loaded, ldigest = gbs(tmp_path, OPAE, afu_id=OPAE["default"], name="loaded.gbs")
    assert not run({"root": h.root, "address": OPAE["address"], "bitstream": loaded, "sha256": ldigest}).result["changed"]
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": loaded, "sha256": ldigest, "persistent": True})
    assert r.kind == "fail" and "fpgaconf is not installed" in r.result["msg"]


def test_tool_hangs(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    replace_tool(h.root, "fpgaconf", "exec sleep 60")
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest, "timeout": 1})
    assert r.kind == "fail"
    assert "did not finish within 1 s" in r.result["msg"] and "timeout" in r.result["msg"]
    assert OPAE["address"] in r.result["msg"] and "now shows function d8424dc4" in r.result["msg"]


def test_readback_wrong_without_rollback_reports_state(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    bad, _bad_digest = gbs(tmp_path, OPAE, afu_id=AFU_B, name="bad.gbs")
    replace_tool(h.root, "fpgaconf", 'exec @REAL@ -B 0x5e "%s"' % bad)   # loads another AFU than asked
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest})
    assert r.kind == "fail"
    msg = r.result["msg"]
    assert "read back function aaaabbbb-" in msg and "not the requested 11112222-" in msg
    assert "STILL IN EFFECT" in msg and r.result["state"] == "partial"
    assert r.result["observed_function"].replace("-", "") == AFU_B
    assert len(r.result["audit"]) == 1, "the load that happened is audited"


def test_readback_wrong_rolls_back(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    bad, _bad_digest = gbs(tmp_path, OPAE, afu_id=AFU_B, name="bad.gbs")
    prev, prev_digest = gbs(tmp_path, OPAE, afu_id=OPAE["default"], name="prev.gbs")
    marker = str(tmp_path / "first-run-done")
    # the first load goes wrong (another AFU), the rollback load works
    replace_tool(h.root, "fpgaconf", 'if [ ! -e %s ]; then touch %s; exec @REAL@ -B 0x5e "%s"; fi\nexec @REAL@ "$@"'
                 % (marker, marker, bad))
    args = {"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest,
            "rollback_bitstream": prev, "rollback_sha256": prev_digest}
    r = run(args)
    assert r.kind == "fail" and r.result["state"] == "unchanged", r.result["msg"]
    assert "rolled back" in r.result["msg"] and "as it was before" in r.result["msg"]
    assert afu(h.root, OPAE) == OPAE["default"]
    assert len(r.result["tool"]["runs"]) == 2 and r.result["tool"]["runs"][1]["argv"][-1] != prev
    assert [a.split(" action=")[1].split('"')[1] for a in r.result["audit"]] == ["load fpga function", "rollback fpga function"]


def test_rollback_must_restore_the_current_function(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    notprev, npd = gbs(tmp_path, OPAE, afu_id=AFU_B, name="np.gbs")
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest,
             "rollback_bitstream": notprev, "rollback_sha256": npd})
    assert r.kind == "fail" and "would not restore" in r.result["msg"]
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest,
             "rollback_bitstream": notprev, "rollback_sha256": "1" * 64})
    assert r.kind == "fail" and r.result["msg"].startswith("rollback_bitstream")


def test_device_vanishes_mid_change(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, OPAE)
    fpga_dir = os.path.join(h.root, "sys/bus/pci/devices", OPAE["address"], "fpga")
    # the tool loads, then the card drops off the bus (surprise removal) before the read-back
    replace_tool(h.root, "fpgaconf", '@REAL@ "$@" && rm -rf "%s/"' % fpga_dir)
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest})
    assert r.kind == "fail"
    msg = r.result["msg"]
    assert OPAE["address"] in msg and "cannot read the loaded function back" in msg
    assert "STILL IN EFFECT" in msg and "unknown (" in r.result["observed_function"]
    assert r.result["state"] == "partial"


# -- persistence ----------------------------------------------------------------------------------------------
def _exec_start(unit_path):
    with open(unit_path) as f:
        for line in f:
            if line.startswith("ExecStart="):
                return shlex.split(line.split("=", 1)[1])
    raise AssertionError("no ExecStart in %s" % unit_path)


def test_persistent_unit_survives_reboot(tmp_path):
    h = accelsim.render_tree("fpga-dfl", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, DFL)
    args = {"root": h.root, "address": DFL["address"], "bitstream": path, "sha256": digest, "persistent": True}
    c = run(args, check=True)
    assert c.kind == "exit" and c.result["changed"], c.result.get("msg")
    unit = os.path.join(h.root, "etc/systemd/system", c.result["persistent"]["unit"])
    assert not os.path.exists(unit)
    r = run(args)
    assert r.kind == "exit" and r.result["changed"], r.result.get("msg")
    text = open(unit).read()
    assert "Before=libvirtd.service virtqemud.service nova-compute.service\n" in text and "Type=oneshot" in text
    assert "After=systemd-udev-settle.service systemd-modules-load.service local-fs.target\n" in text
    assert "Restart=" not in text, "the loader retries itself; a sha256 mismatch must not be restarted"
    assert os.readlink(os.path.join(h.root, "etc/systemd/system/multi-user.target.wants", os.path.basename(unit))) == unit
    kept = os.path.join(h.root, "var/lib/accelops/fpga", digest + ".gbs")
    assert sha(kept) == digest and stat.S_IMODE(os.stat(kept).st_mode) == 0o400
    assert len(r.result["audit"]) == 5   # the load and four boot files
    assert not run(args).result["changed"]

    h.reboot()
    assert afu(h.root, DFL) == DFL["default"], "a PR-loaded AFU is lost on reboot"
    argv = _exec_start(unit)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    assert afu(h.root, DFL) == AFU_A
    assert not run(args).result["changed"]

    # a tampered copy is not loaded at boot
    h.reboot()
    os.chmod(kept, 0o600)
    with open(kept, "ab") as f:
        f.write(b"x")
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2 and "does not match sha256" in p.stderr
    assert afu(h.root, DFL) == DFL["default"]

    # persistent: false removes the unit and its link
    off = run(dict(args, persistent=False))
    assert off.kind == "exit" and off.result["changed"]
    assert not os.path.exists(unit) and not os.path.lexists(
        os.path.join(h.root, "etc/systemd/system/multi-user.target.wants", os.path.basename(unit)))


def _old_release_files(root, afu_id, bitstream_copy):
    """The boot files a release before the shared boot units wrote for the DFL card's port: another unit name, the
    loader in /var/lib/accelops/fpga, a relative wants link."""
    name = "accelops-fpga-0000-86-00-0-dfl-port-0"
    script = os.path.join(root, "var/lib/accelops/fpga", name + ".sh")
    os.makedirs(os.path.dirname(script), exist_ok=True)
    with open(script, "w") as f:
        f.write("#!/bin/sh\n# Written by accelops.lifecycle.fpga_program\nexec true %s %s\n" % (bitstream_copy, afu_id))
    unit = os.path.join(root, "etc/systemd/system", name + ".service")
    os.makedirs(os.path.join(root, "etc/systemd/system/multi-user.target.wants"), exist_ok=True)
    with open(unit, "w") as f:
        f.write("# Written by accelops.lifecycle.fpga_program; do not edit.\n[Unit]\n"
                "Before=libvirtd.service nova-compute.service\n\n[Service]\nType=oneshot\nExecStart=/bin/sh %s\n"
                "\n[Install]\nWantedBy=multi-user.target\n" % script)
    link = os.path.join(root, "etc/systemd/system/multi-user.target.wants", name + ".service")
    os.symlink("../" + name + ".service", link)
    return unit, link, script


@pytest.mark.parametrize("persistent", [True, False], ids=["kept", "dropped"])
def test_unit_of_an_older_release_is_retired(tmp_path, persistent):
    """A host persisted by a release with the old unit name converges to the one naming scheme without a stale unit
    (two enabled units would load twice at boot, one of them a function the declaration no longer names)."""
    h = accelsim.render_tree("fpga-dfl", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, DFL)
    args = {"root": h.root, "address": DFL["address"], "bitstream": path, "sha256": digest, "persistent": True}
    assert run(args).kind == "exit"
    new_unit = os.path.join(h.root, "etc/systemd/system", "accelops-fpga-0000_86_00_0-dfl_port_0.service")
    new_link = os.path.join(h.root, "etc/systemd/system/multi-user.target.wants", os.path.basename(new_unit))
    os.unlink(new_link)
    os.unlink(new_unit)
    os.unlink(os.path.join(h.root, "etc/accelops/boot", "accelops-fpga-0000_86_00_0-dfl_port_0.sh"))
    old = _old_release_files(h.root, AFU_A, os.path.join(h.root, "var/lib/accelops/fpga", digest + ".gbs"))
    check = run(dict(args, persistent=persistent), check=True)
    assert check.kind == "exit" and check.result["changed"] and all(os.path.lexists(p) for p in old)
    removed = [s["target"] for s in check.result["plan"] if s["after"] == "absent"]
    assert sorted(removed) == sorted(["/etc/systemd/system/multi-user.target.wants/" + os.path.basename(old[0]),
                                      "/etc/systemd/system/" + os.path.basename(old[0]),
                                      "/var/lib/accelops/fpga/" + os.path.basename(old[2])]), check.result["plan"]
    r = run(dict(args, persistent=persistent))
    assert r.kind == "exit" and r.result["changed"], r.result.get("msg")
    assert not any(os.path.lexists(p) for p in old), "the old unit, its link and its loader are gone"
    assert os.path.exists(new_unit) == persistent and os.path.lexists(new_link) == persistent
    wants = os.listdir(os.path.join(h.root, "etc/systemd/system/multi-user.target.wants"))
    assert wants == ([os.path.basename(new_unit)] if persistent else []), wants
    assert not run(dict(args, persistent=persistent)).result["changed"]
    if persistent:
        h.reboot()
        p = subprocess.run(_exec_start(new_unit), capture_output=True, text=True, timeout=120, check=False)
        assert p.returncode == 0 and afu(h.root, DFL) == AFU_A, p.stderr


# -- FUSE: the kernel model, a real holder, a file the kernel refuses -----------------------------------------
@pytest.fixture
def fuse_lab(tmp_path):
    with mounts(tmp_path) as make:
        yield make


@pytest.mark.parametrize("lab", [OPAE, DFL], ids=["opae", "dfl"])
def test_fuse_matrix(fuse_lab, tmp_path, lab):
    h = fuse_lab(lab["lab"])
    path, digest = gbs(tmp_path, lab)
    args = {"root": h.root, "address": lab["address"], "bitstream": path, "sha256": digest}
    c = run(args, check=True)
    assert c.kind == "exit" and c.result["changed"] and afu(h.root, lab) == lab["default"], c.result.get("msg")
    r = run(args)
    assert r.kind == "exit" and r.result["changed"], r.result.get("msg")
    assert h.state()["fpga"][lab["address"]]["afu_id"] == AFU_A
    with open(os.path.join(h.root, r.result["target"]["function_path"].lstrip("/"))) as f:
        assert f.read().strip() == AFU_A
    assert not run(args, check=True).result["changed"] and not run(args).result["changed"]

    other, odigest = gbs(tmp_path, lab, afu_id=AFU_B, name="b.gbs")
    holder = h.hold("/dev/%s" % lab["port"])
    try:
        busy = run(dict(args, bitstream=other, sha256=odigest))
    finally:
        h.unhold(holder)
    assert busy.kind == "fail" and "in use" in busy.result["msg"] and str(holder.pid) in busy.result["msg"]
    assert afu(h.root, lab) == AFU_A
    wrong = run(dict(args, bitstream=other, sha256="f" * 64))
    assert wrong.kind == "fail" and "not the pinned" in wrong.result["msg"]
    iface, idigest = gbs(tmp_path, lab, iface="ffffeeeeddddccccbbbbaaaa99998888", name="i.gbs")
    wi = run(dict(args, bitstream=iface, sha256=idigest))
    assert wi.kind == "fail" and "built for interface" in wi.result["msg"]
    assert run(dict(args, bitstream=other, sha256=odigest)).result["changed"]
    assert afu(h.root, lab) == AFU_B


def test_fuse_unreadable_bitstream(fuse_lab):
    h = fuse_lab("fpga-opae")
    # a write-only attribute: opening it for reading fails with EACCES even for root, as kernfs does
    path = os.path.join(h.root, "sys/bus/pci/drivers_probe")
    r = run({"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": "0" * 64})
    assert r.kind == "fail" and "cannot be read" in r.result["msg"] and "drivers_probe" in r.result["msg"]


def test_fuse_alveo(fuse_lab, tmp_path):
    h = fuse_lab("xilinx-alveo")
    path = accelsim.make_xclbin(str(tmp_path / "vadd.xclbin"), ALVEO["iface"], XCLBIN_A)
    args = {"root": h.root, "address": ALVEO["user"], "bitstream": path, "sha256": sha(path)}
    r = run(args)
    assert r.kind == "exit" and r.result["changed"], r.result.get("msg")
    assert h.state()["alveo"][ALVEO["mgmt"]]["xclbin_uuid"].replace("-", "") == XCLBIN_A.replace("-", "")
    assert not run(args).result["changed"]


@pytest.mark.parametrize("path", ["*/etc/systemd/system/*", "*/etc/accelops/boot/*.tmp"], ids=["unit", "script"])
def test_fuse_boot_file_failure_rolls_back_cleanly(fuse_lab, tmp_path, path):
    """Regression (host-fault sweep): with rollback_bitstream, a boot file that cannot be written undoes the load and
    reports the host unchanged (the read-back step was counted as an irreversible change still in effect), and
    leaves no temporary file behind."""
    h = fuse_lab(DFL["lab"])
    a, asha = gbs(tmp_path, DFL)
    b, bsha = gbs(tmp_path, DFL, afu_id=AFU_B, name="b.gbs")
    assert run({"root": h.root, "address": DFL["address"], "bitstream": a, "sha256": asha, "persistent": True}).kind == "exit"
    h.fail_write("EIO", path=path)
    r = run({"root": h.root, "address": DFL["address"], "bitstream": b, "sha256": bsha, "persistent": True,
             "rollback_bitstream": a, "rollback_sha256": asha})
    assert r.kind == "fail" and r.result["state"] == "unchanged" and not r.result["still_applied"], r.result
    assert h.state()["fpga"][DFL["address"]]["afu_id"] == AFU_A
    left = [n for d in ("etc/systemd/system", "var/lib/accelops/fpga", "etc/accelops/boot")
            for n in os.listdir(os.path.join(h.state_dir, d)) if n.endswith(".tmp") or n.startswith(".accelops-")]
    assert left == []


def test_persist_root_puts_the_boot_files_elsewhere(tmp_path):
    """persist_root, as sriov_vfs and vgpu have it: the unit, script and bitstream copy under that directory (none
    under root); the script still reads the function from the host's sysfs and reloads it after a reboot."""
    h = accelsim.render_tree("fpga-dfl", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, DFL)
    proot = str(tmp_path / "persist")
    args = {"root": h.root, "address": DFL["address"], "bitstream": path, "sha256": digest, "persistent": True,
            "persist_root": proot}
    r = run(args)
    assert r.kind == "exit" and r.result["changed"], r.result.get("msg")
    unit = os.path.join(proot, "etc/systemd/system", r.result["persistent"]["unit"])
    assert os.path.exists(unit) and not os.path.exists(os.path.join(h.root, "etc/systemd/system", os.path.basename(unit)))
    assert sha(os.path.join(proot, "var/lib/accelops/fpga", digest + ".gbs")) == digest
    assert not os.path.exists(os.path.join(h.root, "var/lib/accelops/fpga"))
    assert not run(args).result["changed"]
    h.reboot()
    p = subprocess.run(_exec_start(unit), capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    assert afu(h.root, DFL) == AFU_A
    off = run(dict(args, persistent=False))
    assert off.kind == "exit" and off.result["changed"] and not os.path.exists(unit)


def test_fuse_boot_unit_stays_loadable_when_a_rollback_write_fails(fuse_lab, tmp_path):
    """Regression (reboot in the middle of a converge): the unit write fails and so does the undo of the script
    (every write from the third on fails, as after a power loss); the undo of the bitstream copy must then keep the
    copy the script names, so that the boot unit loads a verified file at the next boot instead of failing."""
    h = fuse_lab(DFL["lab"])
    a, asha = gbs(tmp_path, DFL)
    b, bsha = gbs(tmp_path, DFL, afu_id=AFU_B, name="b.gbs")
    base = {"root": h.root, "address": DFL["address"], "persistent": True}
    assert run(dict(base, bitstream=a, sha256=asha)).kind == "exit"
    h.fail_write("EIO", nth=3, times=0)
    r = run(dict(base, bitstream=b, sha256=bsha))
    assert r.kind == "fail" and r.result["state"] == "partial", r.result
    h.clear_faults()
    assert os.path.exists(os.path.join(h.state_dir, "var/lib/accelops/fpga", bsha + ".gbs"))
    ran = h.reboot()
    assert [x["rc"] for x in ran] == [0], ran
    assert h.state()["fpga"][DFL["address"]]["afu_id"] == AFU_B
    assert run(dict(base, bitstream=b, sha256=bsha)).kind == "exit"


def test_a_pac_whose_port_was_given_to_its_vf_is_programmed_through_the_pf(tmp_path):
    # fpga-opae-vf with SR-IOV on: the PF keeps the FME (the region), its VF shows the port and the loaded AFU
    h = accelsim.render_tree("fpga-opae-vf", str(tmp_path / "host"))
    with h.transaction() as k:
        k.set_numvfs(OPAE["address"], "1")
    vf = "0000:5e:00.1"
    path, digest = gbs(tmp_path, OPAE)
    args = {"root": h.root, "address": OPAE["address"], "bitstream": path, "sha256": digest, "persistent": True}
    r = run(args)
    assert r.kind == "exit" and r.result["changed"], r.result.get("msg")
    # the tool is pointed at the PF (its FME reconfigures the region); the function is read back on the VF's port
    assert r.result["tool"]["runs"][0]["argv"][1:7] == ["-B", "0x5e", "-D", "0x00", "-F", "0x0"]
    rec = discover(Sysfs(root=h.root), families=["fpga"], addresses=[vf], nvidia_smi="never")["accelerators"][0]
    assert rec["address"] == vf and rec["fpga"]["ports"][0]["afu_id"] == AFU_A
    # at boot the load waits for the PF's SR-IOV unit, which makes the VF that the function is read back on
    with open(os.path.join(h.root, "etc/systemd/system", r.result["persistent"]["unit"])) as f:
        after = [line for line in f.read().splitlines() if line.startswith("After=")]
    assert after and "accelops-sriov-0000_5e_00_0.service" in after[0].split("=", 1)[1].split(), after
    assert not run(args).result["changed"]
    # an instance on the VF makes the card in use
    h.mark_in_use(vf, by="domain", name="instance-0000000a")
    refused = run(dict(args, force=True))
    assert refused.kind == "fail" and "instance-0000000a" in refused.result["msg"]


# -- hostile hosts: the file rule (_safefile) --------------------------------------------------------------------
def test_a_link_planted_at_the_kept_copy_temp_name_is_not_written_through(tmp_path):
    """The kept copy is made under a fresh O_EXCL name and renamed: links planted at the old fixed temp name and at
    the kept name itself leave their targets as they were (content and mode)."""
    h = accelsim.render_tree("fpga-dfl", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, DFL)
    victim = tmp_path / "victim"
    victim.write_text("root only\n")
    os.chmod(str(victim), 0o600)
    state = os.path.join(h.root, "var/lib/accelops/fpga")
    os.makedirs(state, 0o700)
    os.symlink(str(victim), os.path.join(state, digest + ".gbs.tmp"))
    os.symlink(str(victim), os.path.join(state, digest + ".gbs"))
    r = run({"root": h.root, "address": DFL["address"], "bitstream": path, "sha256": digest, "persistent": True})
    assert r.kind == "exit", r.result.get("msg")
    assert victim.read_text() == "root only\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    kept = os.path.join(state, digest + ".gbs")
    assert not os.path.islink(kept) and sha(kept) == digest


def test_a_fifo_at_the_kept_copy_never_hangs_check_mode(tmp_path):
    h = accelsim.render_tree("fpga-dfl", str(tmp_path / "host"))
    path, digest = gbs(tmp_path, DFL)
    state = os.path.join(h.root, "var/lib/accelops/fpga")
    os.makedirs(state, 0o700)
    os.mkfifo(os.path.join(state, digest + ".gbs"))
    out = {}
    args = {"root": h.root, "address": DFL["address"], "bitstream": path, "sha256": digest, "persistent": True}
    t = threading.Thread(target=lambda: out.update(r=run(args, check=True)))
    t.daemon = True
    t.start()
    t.join(20)
    assert not t.is_alive(), "check mode hung on a FIFO at the kept copy"
    assert out["r"].kind == "exit" and out["r"].result["changed"]   # the FIFO is not the copy: the plan replaces it


def test_a_path_to_a_file_that_is_not_a_bitstream_reports_no_hash_of_it(tmp_path):
    """The bitstream rule: only a file that starts as a bitstream of a family the collection loads is read through
    and hashed; a traversal path to another root-readable file gets neither its sha256 nor its size back."""
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$salt$hash:19000:0:99999:7:::\n")
    os.chmod(str(secret), 0o600)
    want = sha(str(secret))
    r = run({"root": h.root, "address": OPAE["address"], "sha256": "a" * 64,
             "bitstream": str(tmp_path / "x" / ".." / "shadow")})
    assert r.kind == "fail" and "not a bitstream this module loads" in r.result["msg"]
    assert want not in json.dumps(r.result) and "size" not in (r.result.get("bitstream") or {})
