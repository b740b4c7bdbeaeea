# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One-time-use devices: the ``one_time_use`` device_spec tag ``_novaconf`` renders (and where it refuses), the
families' reset for the next tenant (``Driver.reuse_reset``) on a simulated host, and how the controller half
reads Nova's providers. The whole cycle, with Nova's own code, is tests/harness/tests/test_nova_boots.py."""

from __future__ import annotations

import json
import os

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _one_time_use as otu  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Refusal  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

MI300X = "0000:83:00.0"
WHOLE = [{"name": "mi300x", "match": {"address": MI300X}, "passthrough": {}},
         {"name": "mi210-vf", "match": {"address": "0000:3b:00.0"}, "vfs": {"count": 1}}]


@pytest.fixture
def amd(tmp_path):
    root = str(tmp_path / "amd")
    accelsim.render_tree("gpu-amd-instinct", root)
    return root, discover(Sysfs(root=root))


def test_the_tag_goes_on_the_whole_device_and_nova_s_trait_is_predicted(amd):
    _root, disc = amd
    r = nc.render(WHOLE, disc, {"host": "cn1", "one_time_use": ["mi300x"]})
    assert r["problems"] == []
    (spec,) = [s for s in r["device_specs"] if s["address"] == MI300X]
    assert spec["one_time_use"] == "true"
    assert "one_time_use" not in json.dumps([s for s in r["device_specs"] if s["address"] != MI300X])
    (p,) = [x for x in nc.nova_expected_providers(WHOLE, disc, {"one_time_use": ["mi300x"]}, "cn1")
            if x["address"] == MI300X]
    assert "HW_PCI_ONE_TIME_USE" in p["traits"]
    # without the option, no tag and no trait
    plain = nc.render(WHOLE, disc, {"host": "cn1"})
    assert "one_time_use" not in plain["nova_conf"]


def test_refused_without_report_in_placement_naming_the_option(amd):
    _root, disc = amd
    with pytest.raises(nc.NovaConfigError, match=r"^one_time_use: needs report_in_placement true"):
        nc.render(WHOLE, disc, {"one_time_use": ["mi300x"], "report_in_placement": False})
    with pytest.raises(nc.NovaConfigError, match=r"^one_time_use: a list of declared function names"):
        nc.render(WHOLE, disc, {"one_time_use": "mi300x"})


def test_vfs_and_unknown_functions_are_problems_and_get_no_tag(amd):
    _root, disc = amd
    r = nc.render(WHOLE, disc, {"one_time_use": ["mi210-vf", "nope"]})
    assert "one_time_use" not in r["nova_conf"]
    assert any(p.startswith("mi210-vf: one_time_use needs the device whole") for p in r["problems"]), r["problems"]
    assert any(p.startswith("one_time_use: nope is not a function") for p in r["problems"]), r["problems"]


def _record(disc, addr):
    return [r for r in disc["accelerators"] if r["address"] == addr][0]


def test_a_gpu_is_reset_by_the_kernel_and_read_back(amd):
    root, disc = amd
    sysfs = Sysfs(root=root)
    rec = _record(disc, MI300X)
    dev = os.path.join(root, "sys/bus/pci/devices", MI300X)
    # the simulated kernel offers no reset method for it: refused, saying so
    with pytest.raises(Refusal, match="the kernel offers no reset for it"):
        for_record(rec).reuse_reset(sysfs, rec, None)
    with open(os.path.join(dev, "reset"), "w"):
        pass
    how = for_record(rec).reuse_reset(sysfs, rec, None)
    assert "reset" in how.description and how.program is None
    assert "answers as 0x1002:0x74a1" in how.run()
    with open(os.path.join(dev, "reset")) as f:
        assert f.read() == "1"
    # a device that does not answer after its reset (all ones: gone from the bus) fails the verification
    with open(os.path.join(dev, "vendor"), "w") as f:
        f.write("0xffff\n")
    with pytest.raises(Refusal, match="after the reset it answers as 0xffff"):
        how.run()


def test_an_fpga_is_reset_by_loading_its_declared_function_again(tmp_path):
    root = str(tmp_path / "alveo")
    accelsim.render_tree("xilinx-alveo", root)
    disc = discover(Sysfs(root=root))
    rec = [r for r in disc["accelerators"] if r.get("family") == "fpga"][0]
    with pytest.raises(Refusal, match="no declared fpga function is assigned"):
        for_record(rec).reuse_reset(Sysfs(root=root), rec, None)
    assignment = {"kind": "fpga", "function": "aes", "module_args": {
        "address": rec["address"], "bitstream": "/srv/aes.xclbin", "sha256": "ab" * 32, "function_id": "x"}}
    how = for_record(rec).reuse_reset(Sysfs(root=root), rec, assignment)
    assert how.run is None
    assert how.program == ("fpga", dict(assignment["module_args"], force=True))


def test_nova_s_provider_names_and_states():
    assert otu.address_of("cn1.example.org_0000:83:00.0", "cn1.example.org") == MI300X
    assert otu.address_of("cn1.example.org_0000:AF:00.1", "cn1.example.org") == "0000:af:00.1"
    assert otu.address_of("cn2_0000:83:00.0", "cn1") is None
    inv = {"CUSTOM_PCI_1002_74A1": {"total": 1, "reserved": 1}}
    assert otu._state(inv, {"CUSTOM_PCI_1002_74A1": 0}) == "to_reset"  # pylint: disable=protected-access
    assert otu._state(inv, {"CUSTOM_PCI_1002_74A1": 1}) == "in_use"  # pylint: disable=protected-access
    assert otu._state({"X": {"total": 1, "reserved": 0}}, {}) == "free"  # pylint: disable=protected-access
