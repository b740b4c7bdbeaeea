# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.accelops.lifecycle.plugins.filter.accelerator_summary import accelerator_summary


def test_line_names_device_function_and_busy_units():
    lines = accelerator_summary([{
        "address": "0000:3b:00.0", "family": "gpu", "vendor_name": "NVIDIA Corporation", "device_name": "GA102GL [A40]",
        "driver": "nvidia", "function": {"id": "nvidia-558", "name": "NVIDIA A40-12Q"},
        "units": [{"kind": "mdev", "in_use": True}, {"kind": "mdev", "in_use": False}]}])
    assert lines == ["0000:3b:00.0 gpu NVIDIA Corporation GA102GL [A40] driver=nvidia function=NVIDIA A40-12Q "
                     "units=2 (1 in use)"]


def test_missing_names_fall_back_to_ids():
    assert accelerator_summary([{"address": "0000:00:1f.2", "family": "pci", "vendor_id": "8086",
                                 "device_id": "a102", "driver": None}]) == ["0000:00:1f.2 pci 8086 a102 driver=none"]


@pytest.mark.parametrize("bad", ["text", [1]])
def test_wrong_input_fails_clearly(bad):
    with pytest.raises(AnsibleFilterError, match="accelerator_summary expects"):
        accelerator_summary(bad)
