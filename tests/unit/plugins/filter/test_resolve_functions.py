# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The resolve_functions filter: the engine's answer, and its errors as AnsibleFilterError."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.filter.resolve_functions import FilterModule

RECORDS = [{"address": "0000:d8:00.0", "family": "nic", "vendor_id": "8086", "device_id": "1572", "physfn": None,
            "sriov": {"totalvfs": 64, "numvfs": 4, "vfs": []}, "units": [{"kind": "device", "in_use": False}]}]


def test_filter_resolves():
    f = FilterModule().filters()["resolve_functions"]
    out = f({"accelerators": RECORDS}, [{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": 4}}])
    assert out["assignments"][0]["address"] == "0000:d8:00.0"
    assert out["assignments"][0]["change_needed"] is False      # numvfs is 4 already, no driver asked


def test_filter_error_names_the_entry():
    f = FilterModule().filters()["resolve_functions"]
    with pytest.raises(AnsibleFilterError, match=r"resolve_functions: accelerator_host_functions\[0\] \(vf\)\.vfs\.count"):
        f(RECORDS, [{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": -1}}])
