# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The resolve_functions action: the engine's answer on the controller, its errors as the task's message naming the
option or the declaration's entry, never a traceback."""

from __future__ import annotations

import re

import pytest

from ansible_collections.accelops.lifecycle.plugins.action.resolve_functions import ActionModule
from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import resolve
from ansible_collections.accelops.lifecycle.tests.unit.plugins.action.controller_run import refused_type, run_action

RECORDS = [{"address": "0000:d8:00.0", "family": "nic", "vendor_id": "8086", "device_id": "1572", "physfn": None,
            "sriov": {"totalvfs": 64, "numvfs": 4, "vfs": []}, "units": [{"kind": "device", "in_use": False}]}]
DECLARATION = [{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": 4}}]


@pytest.mark.parametrize("check_mode", [False, True])
def test_the_action_resolves_the_same_in_check_mode(check_mode):
    out = run_action(ActionModule, {"discovery": {"accelerators": RECORDS}, "functions": DECLARATION},
                     check_mode=check_mode)
    assert not out.get("failed") and out["changed"] is False
    assert out["resolution"]["assignments"][0]["address"] == "0000:d8:00.0"
    assert out["resolution"]["assignments"][0]["change_needed"] is False   # numvfs is 4 already, no driver asked
    assert out["resolution"] == resolve(DECLARATION, {"accelerators": RECORDS})


@pytest.mark.parametrize("args, msg", [
    ({"functions": DECLARATION}, r"^missing required arguments: discovery$"),
    ({"discovery": RECORDS, "functions": DECLARATION, "host": "h1"},
     r"^Unsupported parameters for \(accelops\.lifecycle\.resolve_functions\) module: host\. Supported parameters include: "),
    ({"discovery": RECORDS, "functions": "vf"}, r"^" + refused_type('functions', 'str', elements=True)),
    # what the spec cannot say: the declaration's and the discovery's own checks, naming the entry and key
    ({"discovery": RECORDS, "functions": [{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": -1}}]},
     r"^accelerator_host_functions\[0\] \(vf\)\.vfs\.count"),
])
def test_bad_arguments_fail_naming_the_option(args, msg):
    out = run_action(ActionModule, args)
    assert out["failed"] is True and "exception" not in out
    assert re.search(msg, out["msg"]), out["msg"]


@pytest.mark.parametrize("address", [{}, [None], [], 7, None])
def test_a_record_address_that_is_not_a_string_is_refused(address):
    # was: TypeError: unhashable type: 'dict' in _declaration._cards (records are keyed by address)
    records = [{"address": "0000:d8:00.0", "family": "nic", "physfn": None, "units": []},
               {"address": address, "family": "nic", "physfn": None, "units": []}]
    out = run_action(ActionModule, {"discovery": {"accelerators": records}, "functions": DECLARATION})
    assert out["failed"] is True and "exception" not in out
    assert re.match(r"discovery: expected a list of accelerator_info records \(mappings with 'address', a PCI "
                    r"address string, and 'physfn', null or the PF's PCI address string\)", out["msg"]), out["msg"]
