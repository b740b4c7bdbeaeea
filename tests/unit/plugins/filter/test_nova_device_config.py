# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nova_device_config filter: the engine's answer through Jinja-style arguments, errors as AnsibleFilterError."""

from __future__ import annotations

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.filter.nova_device_config import FilterModule

PF = {"address": "0000:d8:00.0", "family": "nic", "vendor_id": "8086", "device_id": "1572", "physfn": None,
      "handler": "nic", "numa_node": 1, "sriov": {"totalvfs": 64, "numvfs": 0, "vf_device_id": "154c", "vfs": []},
      "units": [{"kind": "device", "in_use": False}]}
DECL = [{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": 4}, "nova": {"numa_policy": "required"}}]


def nova_device_config():
    return FilterModule().filters()["nova_device_config"]


def test_filter_renders_the_pf_spec_and_alias():
    out = nova_device_config()({"accelerators": [PF], "host": {"hostname": "cn1"}}, DECL)
    assert out["problems"] == []
    assert out["device_specs"] == [{"address": "0000:d8:00.0", "product_id": "154c", "vendor_id": "8086",
                                    "traits": "CUSTOM_FUNCTION_VF"}]
    assert out["aliases"] == [{"name": "vf", "device_type": "type-VF", "vendor_id": "8086", "product_id": "154c",
                               "numa_policy": "required", "traits": "CUSTOM_FUNCTION_VF"}]
    lines = out["nova_conf"].splitlines()
    assert lines[1] == "# host: cn1"
    assert 'device_spec = {"address": "0000:d8:00.0", "product_id": "154c", "traits": "CUSTOM_FUNCTION_VF", ' \
           '"vendor_id": "8086"}' in lines
    assert json.loads(lines[-1].split(" = ", 1)[1]) == out["aliases"][0]


def test_filter_keyword_options():
    out = nova_device_config()([PF], DECL, report_in_placement=False, physical_networks={"vf": "physnet2"}, host="x")
    assert out["device_specs"][0]["physical_network"] == "physnet2" and out["aliases"] == []
    assert "report_in_placement" not in out["nova_conf"] and "# host: x" in out["nova_conf"]


def test_filter_declaration_error():
    with pytest.raises(AnsibleFilterError, match=r"nova_device_config: accelerator_host_functions\[0\] \(vf\)\.vfs\.count"):
        nova_device_config()([PF], [{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": -1}}])


def test_filter_option_error():
    with pytest.raises(AnsibleFilterError, match=r"nova_device_config: cyborg_families: a list of families"):
        nova_device_config()([PF], DECL, cyborg_families=["tpu"])


@pytest.mark.parametrize("physfn", [({}, None), ["0000:d8:00.0"], {"address": "0000:d8:00.0"}])
def test_a_record_whose_physfn_is_not_an_address_is_refused(physfn):
    """Found by the hostile-input sweep at 3x: a VF record's physfn of another shape reached a set of PF addresses
    (TypeError: unhashable type)."""
    vf = {"address": "0000:d8:02.0", "family": "nic", "vendor_id": "8086", "device_id": "154c", "physfn": physfn,
          "units": [{"kind": "device", "in_use": False}]}
    with pytest.raises(AnsibleFilterError, match=r"^nova_device_config: discovery: expected a list of accelerator_info "
                                                 r"records .*'physfn', null or the PF's PCI address string"):
        nova_device_config()([PF, vf], DECL)
