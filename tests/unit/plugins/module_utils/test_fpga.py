# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure logic of the FPGA programming engine: bitstream headers, ids, staging, tool command lines, plans."""

from __future__ import annotations

import hashlib
import json
import os
import struct

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.intel_fpga import GBS_GUID, IntelFpgaDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.xilinx import XilinxFpgaDriver
from ansible_collections.accelops.lifecycle.plugins.module_utils import _fpga, _tools
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import PlanFailed, execute

IFACE = "38558f8b33385e6ba9a5c6ac75f8e59f"
AFU = "11112222333344445555666677778888"


def gbs_bytes(meta, length=None, payload=b"\0" * 8):
    blob = json.dumps(meta).encode() if not isinstance(meta, bytes) else meta
    return GBS_GUID + struct.pack("<I", len(blob) if length is None else length) + blob + payload


def meta(iface=IFACE, afu=AFU):
    return {"version": 640, "platform-name": "PAC_A10",
            "afu-image": {"interface-uuid": _fpga.dashed(iface),
                          "accelerator-clusters": [{"name": "nlb", "accelerator-type-uuid": _fpga.dashed(afu)}]}}


def axlf(iface, xid, vbnv=b"xilinx_u250_gen3x16_base_4"):
    """A real-layout xclbin2 header (struct axlf): magic, signature length, reserved, key block, unique id, header."""
    head = b"xclbin2\0" + struct.pack("<i", -1) + b"\xff" * 28 + b"\0" * 256 + struct.pack("<Q", 7)
    hdr = struct.pack("<QQQHBBHH", 4096, 0, 0, 0, 2, 1, 0, 0) + bytes.fromhex(iface) + vbnv.ljust(64, b"\0") \
        + bytes.fromhex(xid) + b"\0" * 16 + struct.pack("<I", 0) + b"\0" * 4
    assert len(hdr) == 152
    return head + hdr


# -- ids ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,want", [
    ("D8424DC4-A4A9-3C84-9C1A-D7C6D7B3C2A7", "d8424dc4a4a93c849c1ad7c6d7b3c2a7"),
    ("0xd8424dc4a4a93c849c1ad7c6d7b3c2a7", "d8424dc4a4a93c849c1ad7c6d7b3c2a7"),
    ("{d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7}", "d8424dc4a4a93c849c1ad7c6d7b3c2a7"),
    ("", None), (None, None),
])
def test_normalize_id(text, want):
    assert _fpga.normalize_id(text) == want


def test_dashed():
    assert _fpga.dashed(AFU) == "11112222-3333-4444-5555-666677778888"
    assert _fpga.dashed("short") == "short"


# -- bitstream headers ------------------------------------------------------------------------------------
def test_parse_gbs():
    info = _fpga.parse_bitstream(gbs_bytes(meta()))
    assert info == {"format": "gbs", "interface_id": IFACE, "function_id": AFU, "name": "nlb", "platform": "PAC_A10"}


@pytest.mark.parametrize("data,words", [
    (GBS_GUID + b"\1", "truncated"),
    (gbs_bytes(meta(), length=10 ** 6), "does not fit"),
    (gbs_bytes(b"{not json"), "not valid"),
    (gbs_bytes({"afu-image": {"interface-uuid": IFACE}}), "not valid"),
    (gbs_bytes({"afu-image": {"interface-uuid": "nope", "accelerator-clusters": [{"accelerator-type-uuid": AFU}]}}),
     "interface-uuid is not a UUID"),
    (b"\x00" * 64, "not a bitstream"),
])
def test_parse_gbs_broken(data, words):
    with pytest.raises(_fpga.FpgaError, match=words):
        _fpga.parse_bitstream(data)


def test_parse_xclbin_real_layout_and_simulated():
    iface, xid = "0b2dd2bacdd03ee80c1b6d1a8ebcd9b7", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
    info = _fpga.parse_bitstream(axlf(iface, xid))
    assert info["format"] == "xclbin" and info["interface_id"] == iface and info["function_id"] == xid
    assert info["platform"] == "xilinx_u250_gen3x16_base_4"
    hdr = json.dumps({"uuid": _fpga.dashed(xid), "interface_uuid": _fpga.dashed(iface), "platform_vbnv": "p"}).encode()
    info = _fpga.parse_bitstream(b"xclbin2\0" + struct.pack("<I", len(hdr)) + hdr)
    assert (info["interface_id"], info["function_id"], info["platform"]) == (iface, xid, "p")
    with pytest.raises(_fpga.FpgaError, match="truncated"):
        _fpga.parse_bitstream(axlf(iface, xid)[:200])
    with pytest.raises(_fpga.FpgaError, match="uuid is missing"):
        _fpga.parse_bitstream(axlf(iface, "0" * 32))


# -- staging -----------------------------------------------------------------------------------------------
def test_stage_copies_verified_bytes(tmp_path):
    src = tmp_path / "a.gbs"
    data = gbs_bytes(meta())
    src.write_bytes(data)
    work = tmp_path / "work"
    work.mkdir()
    digest = hashlib.sha256(data).hexdigest()
    info = _fpga.stage_bitstream(str(src), "sha256:" + digest.upper(), str(work))
    assert info["sha256"] == digest and info["size"] == len(data) and not info["symlink"]
    assert open(info["staged"], "rb").read() == data and os.path.dirname(info["staged"]) == str(work)
    # changing the source afterwards does not change what the tool gets
    src.write_bytes(b"evil")
    assert open(info["staged"], "rb").read() == data
    link = tmp_path / "link.gbs"
    link.symlink_to(work / os.path.basename(info["staged"]))
    again = _fpga.stage_bitstream(str(link), digest, str(work))
    assert again["symlink"] and again["resolved"] == info["staged"]


def test_stage_wrong_checksum_leaves_nothing(tmp_path):
    src = tmp_path / "a.gbs"
    src.write_bytes(gbs_bytes(meta()))
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(_fpga.FpgaError, match="not the pinned") as e:
        _fpga.stage_bitstream(str(src), "a" * 64, str(work))
    assert os.listdir(str(work)) == [] and e.value.extra["bitstream"]["sha256"]
    with pytest.raises(_fpga.FpgaError, match="64 hex digits"):
        _fpga.stage_bitstream(str(src), "abc", str(work))


# -- tool command lines ----------------------------------------------------------------------------------------
def _target(vendor, address, port=None, mgmt=None):
    # the card's family driver knows its tool's command line and its bitstream format
    driver = IntelFpgaDriver() if vendor == "intel" else XilinxFpgaDriver()
    t = _fpga.Target(address, vendor, driver.programming_model, "dfl", port, driver.tool, {}, driver=driver)
    t.management = mgmt
    return t


def test_tool_args():
    assert _fpga.tool_args(_target("intel", "0000:5e:00.0", "dfl-port.0"), "/t/x") == \
        ["-B", "0x5e", "-D", "0x00", "-F", "0x0", "/t/x"]
    assert _fpga.tool_args(_target("intel", "0001:5e:01.2", "dfl-port.0"), "/t/x")[:2] == ["--segment", "0x0001"]
    assert _fpga.tool_args(_target("xilinx", "0000:af:00.1", mgmt="0000:af:00.0"), "/t/x") == \
        ["program", "--device", "0000:af:00.0", "--user", "/t/x"]


# -- plans ---------------------------------------------------------------------------------------------
class FakeSysfs(object):
    root = "/"

    def __init__(self, value):
        self.value = value

    def read(self, path, default=None, limit=None):
        return self.value

    def exists(self, path):
        return True


class FakeRunner(_tools.ToolRunner):
    """The shared tool runner with a fake command: each load makes the function read back the next of ``loads``."""

    def __init__(self, sysfs, loads, rc=0):
        self.sysfs, self.loads, self.rc = sysfs, list(loads), rc
        super(FakeRunner, self).__init__(sysfs, run=self._fake, timeout_bin="/usr/bin/timeout", require_limit=True)

    def _fake(self, argv):
        assert argv[:3] == ["/usr/bin/timeout", "--kill-after=10", "5s"], argv
        if self.rc == 0 and self.loads:
            self.sysfs.value = self.loads.pop(0)
        return self.rc, "", "boom" if self.rc else ""


def _plan(current, loads, rollback=True, rc=0, force=False):
    sysfs = FakeSysfs(current)
    t = _target("intel", "0000:5e:00.0", "dfl-port.0")
    t.function_path = "/sys/x/afu_id"
    runner = FakeRunner(sysfs, loads, rc)
    rb = {"staged": "/w/prev", "function_id": current, "resolved": "/p", "sha256": "0" * 64} if rollback else None
    bit = {"staged": "/w/new", "function_id": AFU, "resolved": "/n.gbs", "sha256": "1" * 64}
    return _fpga.build_plan(sysfs, runner, t, "/usr/bin/fpgaconf", bit, _fpga.normalize_id(current), 5,
                            force=force, rollback=rb), runner, sysfs


def test_plan_nothing_when_loaded_unless_forced():
    assert not _plan(AFU, [])[0]
    assert len(_plan(AFU, [], force=True)[0]) == 2


def test_plan_check_mode_runs_nothing():
    plan, runner, _s = _plan("d8424dc4a4a93c849c1ad7c6d7b3c2a7", [AFU])
    res = execute(plan, check_mode=True)
    assert res["changed"] and runner.calls == [] and len(res["applied"]) == 2
    assert plan.steps[0].before == "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7" and plan.steps[0].after == _fpga.dashed(AFU)


def test_plan_wrong_readback_rolls_back():
    prev = "d8424dc4a4a93c849c1ad7c6d7b3c2a7"
    plan, runner, sysfs = _plan(prev, ["ffff" * 8, prev])
    with pytest.raises(PlanFailed) as e:
        execute(plan)
    assert e.value.result["state"] == "unchanged" and len(runner.calls) == 2
    assert runner.calls[1]["argv"][-1] == "/w/prev" and sysfs.value == prev


def test_plan_wrong_readback_without_rollback_is_partial():
    plan, _r, _s = _plan("d8424dc4a4a93c849c1ad7c6d7b3c2a7", ["ffff" * 8], rollback=False)
    with pytest.raises(PlanFailed) as e:
        execute(plan)
    assert e.value.result["state"] == "partial" and "STILL IN EFFECT" in str(e.value)


def test_plan_tool_timeout_message():
    plan, _r, _s = _plan("d8424dc4a4a93c849c1ad7c6d7b3c2a7", [], rc=124)
    with pytest.raises(PlanFailed, match="did not finish within 5 s"):
        execute(plan)


def test_unit_name():
    """The boot unit has the one naming scheme of _persist; the old name is kept only to retire old units."""
    assert _fpga.unit_name(_target("intel", "0000:5e:00.0", "dfl-port.0")) == "accelops-fpga-0000_5e_00_0-dfl_port_0.service"
    assert _fpga.unit_name(_target("xilinx", "0000:af:00.1")) == "accelops-fpga-0000_af_00_1.service"
    assert _fpga.legacy_unit_name(_target("intel", "0000:5e:00.0", "dfl-port.0")) == "accelops-fpga-0000-5e-00-0-dfl-port-0.service"
    assert _fpga.legacy_unit_name(_target("xilinx", "0000:af:00.1")) == "accelops-fpga-0000-af-00-1.service"


def test_the_management_pfs_users_are_read_from_the_run_dir_the_module_was_given(host):
    from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs
    host.add_domain("on-mgmt", hostdevs=["0000:af:00.0"], run_dir="/srv/libvirt/qemu")
    host.add_domain("default-dir", hostdevs=["0000:af:00.0"])
    t = _target("xilinx", "0000:af:00.1", mgmt="0000:af:00.0")
    t.result = {"accelerators": [], "host": {"libvirt_run_dir": "/srv/libvirt/qemu"}}
    assert [u["name"] for u in _fpga.in_use(Sysfs(host.root), t)] == ["on-mgmt"]
    t.result["host"]["libvirt_run_dir"] = None      # libvirt_run_dir "" (no domain scan)
    assert _fpga.in_use(Sysfs(host.root), t) == []
