# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The MIG engine's pure parts: layouts in their three forms, mig-parted's config mapping (its file
is parsed by the action: tests/unit/plugins/action), the entry chosen per GPU, and the fit check against an H100 80GB's profile table."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import nvidia_mig
from ansible_collections.accelops.lifecycle.plugins.module_utils._engines.sriov import ProgrammingError

# H100 80GB (nvidia-smi mig -lgip / -lgipp; NVIDIA MIG user guide, H100 table)
H100 = {
    "1g.10gb": {"id": 19, "total": 7, "compute": 1, "size": 1, "starts": [0, 1, 2, 3, 4, 5, 6]},
    "1g.10gb+me": {"id": 20, "total": 1, "compute": 1, "size": 1, "starts": [0, 1, 2, 3, 4, 5, 6]},
    "1g.20gb": {"id": 15, "total": 4, "compute": 1, "size": 2, "starts": [0, 2, 4, 6]},
    "2g.20gb": {"id": 14, "total": 3, "compute": 2, "size": 2, "starts": [0, 2, 4]},
    "3g.40gb": {"id": 9, "total": 2, "compute": 3, "size": 4, "starts": [0, 4]},
    "4g.40gb": {"id": 5, "total": 1, "compute": 4, "size": 4, "starts": [0]},
    "7g.80gb": {"id": 0, "total": 1, "compute": 7, "size": 8, "starts": [0]},
}


@pytest.mark.parametrize("value,expected", [
    ("7 x 1g.10gb", ["1g.10gb"] * 7),
    ("2 x 2g.20gb + 1 x 3g.40gb", ["2g.20gb", "2g.20gb", "3g.40gb"]),
    ("3g.40gb, MIG 1g.10gb+me", ["1g.10gb+me", "3g.40gb"]),
    ("2*1g.20gb", ["1g.20gb", "1g.20gb"]),
    ("none", []),
    (" none\n", []),
    (["none"], []),
    # media-engine suffixes as mig-parted's config-default.yaml and nvidia-smi mig -lgip write them
    ("1 x 1g.24gb+me.all + 1g.24gb-me + 2 x 1g.24gb+gfx", ["1g.24gb+gfx", "1g.24gb+gfx", "1g.24gb+me.all", "1g.24gb-me"]),
    ({"2g.48gb+gfx": 1, "1g.24gb-me": 2}, ["1g.24gb-me", "1g.24gb-me", "2g.48gb+gfx"]),
    ([{"profile": "1g.10gb", "count": 2}, "3g.40gb"], ["1g.10gb", "1g.10gb", "3g.40gb"]),
    ([{"profile": "1g.10gb", "count": "0"}], []),
    ({"1g.10gb": 2, "2g.20gb": 1}, ["1g.10gb", "1g.10gb", "2g.20gb"]),
])
def test_parse_layout_forms(value, expected):
    assert nvidia_mig.parse_layout(value) == expected


@pytest.mark.parametrize("value,needle", [
    ("7 x one-g", "layout: 'one-g' is not a MIG profile name"),
    (7, "layout: expected a list of {profile, count}"),
    ([{"profile": "1g.10gb", "count": -1}], "layout[0].count: -1 is out of range"),
    ([{"profile": "1g.10gb", "count": "many"}], "layout[0].count: 'many' is not a whole number"),
    ([{"profile": "1g.10gb", "size": 1}], "layout[0]: unknown key(s) size"),
    ("1g.10gb+foo", "layout: '1g.10gb+foo' is not a MIG profile name"),
    # issue 34 #8: a blank layout never means "destroy every GPU instance"
    ("", "layout: an empty layout is refused; write none for no GPU instance"),
    ("\n", "layout: an empty layout is refused; write none"),
    ("  \t", "layout: an empty layout is refused"),
    ([""], "layout[0]: an empty layout is refused; write none"),
    # found by the sweep at 3x: an empty mapping and "None" (a template's rendering of a missing value) destroyed
    # every GPU instance
    ([], "layout: an empty list is refused; write none"),
    ({}, "layout: an empty mapping is refused; write none"),
    ("None", "layout: 'None' is refused (a template renders a missing value as None); write none, in lower case"),
    (" NONE ", "layout: 'NONE' is refused"),
])
def test_parse_layout_errors(value, needle):
    with pytest.raises(ProgrammingError) as e:
        nvidia_mig.parse_layout(value)
    assert needle in str(e.value)


def test_mig_parted_empty_mig_devices_means_no_instance():
    """mig-parted's own form for MIG on without GPU instances (its all-enabled entry) stays accepted."""
    assert nvidia_mig.parse_layout({}, "mig_parted_config: mig-configs.x[0].mig-devices", empty_means_none=True) == []


def test_layout_text_largest_first():
    assert nvidia_mig.layout_text(["1g.10gb", "3g.40gb", "1g.10gb"]) == "1 x 3g.40gb + 2 x 1g.10gb"
    assert nvidia_mig.layout_text([]) == "none"


CONFIG = """# mig-parted config (its format: https://github.com/NVIDIA/mig-parted, examples/config.yaml)
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  all-1g.10gb:
  - devices: all
    mig-enabled: true
    mig-devices:
      "1g.10gb": 7
  custom-config:
    - devices: [0,1,2,3]
      mig-enabled: false
    - devices: [4]
      mig-enabled: true
      mig-devices:
        '1g.10gb': 2   # two small
        "2g.20gb": 1
    - device-filter: "0x233010DE"
      devices: [5, 6]
      mig-enabled: true
      mig-devices: {}
"""


def test_the_module_takes_the_mapping_and_leaves_a_path_to_the_action():
    assert nvidia_mig.load_mig_parted(yaml.safe_load(CONFIG))["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    with pytest.raises(ProgrammingError, match=r"^mig_parted_config: the module takes the parsed mapping; a file's path "
                                               r"\(/etc/x.yaml\) is read by the task's action"):
        nvidia_mig.load_mig_parted("/etc/x.yaml")
    with pytest.raises(ProgrammingError, match="^mig_parted_config: expected mig-parted's format"):
        nvidia_mig.load_mig_parted({"version": "v1"})


def test_mig_parted_entry_per_gpu():
    cfg = yaml.safe_load(CONFIG)["mig-configs"]
    assert nvidia_mig.mig_parted_entry(cfg, "all-1g.10gb", 3, "0x20B010DE")[:2] == ("enabled", ["1g.10gb"] * 7)
    assert nvidia_mig.mig_parted_entry(cfg, "custom-config", 2, "0x20B010DE")[:2] == ("disabled", [])
    assert nvidia_mig.mig_parted_entry(cfg, "custom-config", 4, "0x20B010DE")[:2] == ("enabled", ["1g.10gb", "1g.10gb", "2g.20gb"])
    assert nvidia_mig.mig_parted_entry(cfg, "custom-config", 5, "0x233010DE")[:2] == ("enabled", [])
    with pytest.raises(ProgrammingError) as e:
        nvidia_mig.mig_parted_entry(cfg, "custom-config", 5, "0x20B010DE")  # the device filter leaves no entry
    assert "has no entry for GPU 5" in str(e.value)


def test_mig_parted_applies_every_matching_entry_in_order():
    """mig-parted walks the entries in order and applies each one that matches the GPU (WalkSelectedMigConfigForEachGPU):
    the last matching entry decides the GPU's state; several matches are not an error."""
    cfg = {"x": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
                 {"devices": [0], "mig-enabled": False},
                 {"devices": [1], "device-filter": "0x20B010DE", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}]}
    assert nvidia_mig.mig_parted_entry(cfg, "x", 0, "0x20B010DE") == ("disabled", [], [0, 1])
    assert nvidia_mig.mig_parted_entry(cfg, "x", 1, "0x20B010DE") == ("enabled", ["3g.40gb", "3g.40gb"], [0, 2])
    assert nvidia_mig.mig_parted_entry(cfg, "x", 1, "0x233010DE") == ("enabled", ["1g.10gb"] * 7, [0])


def test_mig_parted_subsystem_qualified_device_filter():
    """``0x233010DE:0x16C010DE`` matches only the board with that subsystem (mig-parted's DeviceID.Matches)."""
    cfg = {"x": [{"devices": "all", "device-filter": ["0x233010DE:0x16C010DE"], "mig-enabled": True,
                  "mig-devices": {"1g.10gb+me.all": 1, "1g.10gb-me": 2}},
                 {"devices": "all", "device-filter": "0x233510DE", "mig-enabled": True, "mig-devices": {"7g.141gb": 1}}]}
    assert nvidia_mig.mig_parted_entry(cfg, "x", 0, "0x233010DE", "0x16C010DE") == (
        "enabled", ["1g.10gb+me.all", "1g.10gb-me", "1g.10gb-me"], [0])
    with pytest.raises(ProgrammingError) as e:
        nvidia_mig.mig_parted_entry(cfg, "x", 0, "0x233010DE", "0x17A610DE")  # another H100 SXM5 board
    assert "has no entry for GPU 0 (device id 0x233010DE, subsystem 0x17A610DE)" in str(e.value)
    assert nvidia_mig.mig_parted_entry(cfg, "x", 0, "0x233510DE", "0x18BF10DE")[:2] == ("enabled", ["7g.141gb"])
    with pytest.raises(ProgrammingError) as e:
        nvidia_mig.mig_parted_entry({"x": [{"devices": "all", "device-filter": "H100", "mig-enabled": False}]}, "x", 0,
                                    "0x233510DE", "0x18BF10DE")
    assert "mig-configs.x[0].device-filter: 'H100' is not a PCI id like 0x233510DE" in str(e.value)


@pytest.mark.parametrize("kept,wanted,ok", [
    ([], ["1g.10gb"] * 7, True),
    ([], ["3g.40gb", "3g.40gb"], True),
    ([], ["3g.40gb", "3g.40gb", "1g.10gb"], False),  # 8 memory slices taken by the two 3g
    ([], ["4g.40gb", "3g.40gb"], True),
    ([], ["1g.10gb"] * 8, False),  # 7 compute slices
    ([], ["1g.10gb+me", "1g.10gb+me"], False),  # one +me per GPU
    ([{"name": "1g.10gb", "placement": "0:1"}], ["4g.40gb"], False),  # 4g only at 0
    ([{"name": "1g.10gb", "placement": "0:1"}], ["3g.40gb", "2g.20gb"], True),
    ([{"name": "2g.20gb", "placement": "2:2"}], ["1g.20gb", "1g.20gb", "1g.20gb"], True),
])
def test_fits(kept, wanted, ok):
    assert nvidia_mig.fits(H100, kept, wanted) is ok


def test_choose_kept_prefers_instances_in_use():
    gis = [{"id": 7, "name": "1g.10gb"}, {"id": 8, "name": "1g.10gb"}, {"id": 2, "name": "3g.40gb"}]
    kept, rest = nvidia_mig.choose_kept(gis, ["1g.10gb", "2g.20gb"], {8: [{"kind": "process"}]})
    assert [g["id"] for g in kept] == [8] and rest == ["2g.20gb"]


def _record(mode="Enabled", pending=None, gis=(), cis=()):
    return {"gpu": {"mig": {"mode_current": mode, "mode_pending": pending or mode,
                            "gpu_instances": [{"id": i, "name": n} for i, n in gis],
                            "compute_instances": [{"gpu_instance_id": i, "id": 0} for i in cis]}}}


def test_carries_layout_for_the_declaration():
    rec = _record(gis=[(2, "3g.40gb"), (7, "1g.10gb")], cis=[2, 7])
    assert nvidia_mig.carries_layout(rec, "enabled", ["1g.10gb", "3g.40gb"])
    assert nvidia_mig.carries_layout(rec, "enabled", None)
    assert not nvidia_mig.carries_layout(rec, "enabled", ["1g.10gb"] * 7)
    assert not nvidia_mig.carries_layout(_record(gis=[(2, "3g.40gb")]), "enabled", ["3g.40gb"])  # no compute instance
    assert not nvidia_mig.carries_layout(_record("Disabled", "Enabled"), "enabled", [])  # pending is not carried
    assert nvidia_mig.carries_layout(_record("Disabled"), "disabled", None)
    assert not nvidia_mig.carries_layout(_record("Enabled", "Disabled"), "disabled", None)
    assert not nvidia_mig.carries_layout({"gpu": {"mig": None}}, "enabled", [])
    assert nvidia_mig.record_layout(rec) == ("Enabled", ["1g.10gb", "3g.40gb"], True)
