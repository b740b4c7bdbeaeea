# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one_time_use_reset module on simulated hosts: an FPGA reset by loading its declared function again (the
simulator's vendor tool fake), a GPU by the kernel's function reset, check mode as the plan, and the devices it keeps
with the reason."""

from __future__ import annotations

import hashlib
import os
import sys

import pytest

from ansible_collections.accelops.lifecycle.plugins.modules import fpga_program, one_time_use_reset

SIMULATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "simulator")
if os.path.isdir(SIMULATOR) and SIMULATOR not in sys.path:
    sys.path.insert(0, SIMULATOR)
from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

PAC = "0000:5e:00.0"
IFACE = "38558f8b33385e6ba9a5c6ac75f8e59f"
AFU = "11112222333344445555666677778888"
MI300X = "0000:83:00.0"


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    patch_exits(monkeypatch)


def test_an_fpga_gets_its_declared_function_loaded_again(tmp_path):
    h = accelsim.render_tree("fpga-opae", str(tmp_path / "host"))
    path = accelsim.make_gbs(str(tmp_path / "gzip.gbs"), IFACE, AFU)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    args = {"root": h.root, "address": PAC, "bitstream": path, "sha256": digest, "persistent": False}
    assert run_module(fpga_program.main, args, False, False).kind == "exit"
    functions = [{"name": "gzip", "match": {"address": PAC},
                  "fpga": {"bitstream": path, "sha256": digest, "function_id": AFU}}]
    reset = {"root": h.root, "devices": [PAC], "functions": functions}

    plan = run_module(one_time_use_reset.main, reset, True, False)
    assert plan.kind == "exit", plan.result.get("msg")
    assert plan.result["reset"] == [PAC] and plan.result["audit"] == [] and plan.result["changed"] is True
    assert "load gzip again" in plan.result["plan"][0]["description"]

    r = run_module(one_time_use_reset.main, reset, False, False)
    assert r.kind == "exit", r.result.get("msg")
    assert r.result["reset"] == [PAC] and r.result["kept"] == [] and r.result["changed"] is True, r.result
    # the vendor tool ran (force: the function was already loaded) and the function was read back
    assert any("fpga_program" in line for line in r.result["audit"]), r.result["audit"]
    assert any("read back function 11112222-3333-4444-5555-666677778888" in line for line in r.result["audit"]), \
        r.result["audit"]

    # without the declaration there is nothing to load again: kept, saying why
    k = run_module(one_time_use_reset.main, dict(reset, functions=[]), False, False)
    assert k.result["reset"] == [] and "no declared fpga function" in k.result["kept"][0]["reason"], k.result


def test_a_gpu_is_reset_by_the_kernel_or_kept_when_the_kernel_offers_no_reset(tmp_path):
    h = accelsim.render_tree("gpu-amd-instinct", str(tmp_path / "host"))
    args = {"root": h.root, "devices": [MI300X, "0000:ee:00.0"]}
    r = run_module(one_time_use_reset.main, args, False, False)
    assert r.kind == "exit" and r.result["reset"] == [] and r.result["changed"] is False
    kept = dict((k["address"], k["reason"]) for k in r.result["kept"])
    assert "the kernel offers no reset" in kept[MI300X] and "not found" in kept["0000:ee:00.0"], kept
    with open(os.path.join(h.root, "sys/bus/pci/devices", MI300X, "reset"), "w"):
        pass
    r = run_module(one_time_use_reset.main, dict(args, devices=[MI300X]), False, False)
    assert r.result["reset"] == [MI300X] and r.result["changed"] is True, r.result
    with open(os.path.join(h.root, "sys/bus/pci/devices", MI300X, "reset")) as f:
        assert f.read() == "1"


def test_a_device_that_is_not_an_address_fails_naming_the_option(tmp_path):
    h = accelsim.render_tree("gpu-amd-instinct", str(tmp_path / "host"))
    r = run_module(one_time_use_reset.main, {"root": h.root, "devices": ["gpu0"]}, False, False)
    assert r.kind == "fail" and r.result["msg"].startswith("devices: 'gpu0' is not a PCI address"), r.result


@pytest.mark.parametrize("functions", [[{}], [{"name": "gzip"}], [{"name": 7, "match": {"address": MI300X}}]])
def test_a_declaration_that_does_not_validate_fails_naming_the_option(tmp_path, functions):
    """Found by the hostile-input sweep at 3x: a declaration entry without a name raised DeclarationError out of the
    module (a traceback) instead of failing it."""
    h = accelsim.render_tree("gpu-amd-instinct", str(tmp_path / "host"))
    r = run_module(one_time_use_reset.main, {"root": h.root, "devices": [MI300X], "functions": functions}, False, False)
    assert r.kind == "fail" and r.result["msg"].startswith("functions[0]"), r
