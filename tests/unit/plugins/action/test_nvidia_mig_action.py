# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nvidia_mig action's reading of a mig-parted config file (on the controller, with PyYAML's safe loader). The
whole action, reading a file on the host through slurp: tests/integration/targets/nvidia_mig."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.action.nvidia_mig import MAX_BYTES, parse_config

# the forms mig-parted's own config files use (https://github.com/NVIDIA/mig-parted, examples/config.yaml): block and
# flow sequences, a sequence at its key's indent, quoted keys, comments, an empty flow mapping
CONFIG = b"""# mig-parted config
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


def test_a_mig_parted_file_is_read_as_mig_parted_reads_it():
    data = parse_config(CONFIG, "/etc/nvidia-mig-manager/config.yaml")
    assert data["version"] == "v1"
    cfg = data["mig-configs"]
    assert cfg["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    assert cfg["all-1g.10gb"] == [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]
    assert cfg["custom-config"][0] == {"devices": [0, 1, 2, 3], "mig-enabled": False}
    assert cfg["custom-config"][1]["mig-devices"] == {"1g.10gb": 2, "2g.20gb": 1}
    assert cfg["custom-config"][2] == {"device-filter": "0x233010DE", "devices": [5, 6], "mig-enabled": True,
                                       "mig-devices": {}}
    # JSON is YAML too
    assert parse_config(b'{"version": "v1", "mig-configs": {}}', "c.json") == {"version": "v1", "mig-configs": {}}


@pytest.mark.parametrize("data", [b"a: 1\n   b: 2\n", b"just text\n", b"[a]: b\n: {x: 1}\n", b"- a\n- b\n", b"",
                                  b"a: *nowhere\n"])
def test_what_is_not_a_yaml_mapping_is_refused_naming_the_option_and_the_file(data):
    with pytest.raises(ValueError, match=r"^mig_parted_config: /etc/c.yaml is not a mig-parted config file \("):
        parse_config(data, "/etc/c.yaml")


def test_a_file_past_the_size_limit_is_refused():
    with pytest.raises(ValueError, match=r"^mig_parted_config: /etc/c.yaml is larger than 1048576 bytes"):
        parse_config(b"#" * (MAX_BYTES + 1), "/etc/c.yaml")
