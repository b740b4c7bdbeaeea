# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What an ``accelerator_converge`` run imports: a host whose cards carry their functions is planned without the
programming engines or the host-module machinery (each file a module imports is compiled on every run, since a
module runs from a zip: bench/BENCHMARKS.md). What each module ships: tests/unit/plugins/test_module_payloads.py.
"""

from __future__ import annotations

import sys

import pytest

from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge

UTILS = "ansible_collections.accelops.lifecycle.plugins.module_utils."
ENGINES = ("_engines.fpga", "_engines.vgpu", "_engines.sriov", "_engines.nvidia_mig", "_engines.nvidia_vgpu", "_hostmodule",
           "_persist", "_audit")
AFU = "9aeffe5f84570612c000c9660d824272"   # the function loaded on lab fpga-dfl's D5005


def test_a_no_op_converge_loads_no_engine(tmp_path, monkeypatch):
    """A host whose cards carry their functions is planned without importing an engine or the host-module
    machinery (each costs the module compile time on every run: bench/BENCHMARKS.md)."""
    render = pytest.importorskip("accelsim.render", reason="the simulator (tests/simulator/accelsim) is not available")
    host = render.render_tree("fpga-dfl", str(tmp_path / "host"))
    patch_exits(monkeypatch)
    for name in ENGINES:   # as in a fresh module process (restored after the test)
        monkeypatch.delitem(sys.modules, UTILS + name, raising=False)
        # and the attribute the import sets on its package: restored too, so that a later test in this process
        # imports the module objects it patches (`from ..module_utils import _hostmodule` reads the attribute)
        package, attr = (UTILS + name).rsplit(".", 1)
        if package in sys.modules:
            monkeypatch.delattr(sys.modules[package], attr, raising=False)
    entry = {"name": "nlb", "match": {"address": "0000:86:00.0"},
             "fpga": {"bitstream": "/lib/firmware/nlb.gbs", "sha256": "0" * 64, "function_id": AFU}}
    done = run_module(accelerator_converge.main, {"root": host.root, "functions": [entry],
                                                  "lock_dir": str(tmp_path / "lock")}, check=True)
    assert done.kind == "exit" and not done.result["changed"]
    assert [c["status"] for c in done.result["cards"]] == ["ok"]
    assert [n for n in ENGINES if UTILS + n in sys.modules] == []

    # and a card to change loads them (the test above would pass if nothing ever did)
    entry["fpga"]["function_id"] = "aaaabbbbccccddddeeeeffff00001111"
    planned = run_module(accelerator_converge.main, {"root": host.root, "functions": [entry],
                                                     "lock_dir": str(tmp_path / "lock")}, check=True)
    assert [c["status"] for c in planned.result["cards"]] == ["todo"]
    assert (UTILS + "_engines.fpga") in sys.modules and (UTILS + "_hostmodule") in sys.modules
