# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter inputs found by tests/reliability/test_hostile_input.py (issue 21) that ended in a traceback."""

from __future__ import annotations

import copy

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.action.provision_plan import ActionModule as ProvisionPlan
from ansible_collections.accelops.lifecycle.plugins.filter.accelerator_summary import accelerator_summary
from ansible_collections.accelops.lifecycle.plugins.filter.hostdev_units import hostdev_units
from ansible_collections.accelops.lifecycle.plugins.filter.hostdev_xml import hostdev_xml
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import FleetReportError
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._fleet_report import build as fleet_report
from ansible_collections.accelops.lifecycle.plugins.plugin_utils._host_report import host_report
from ansible_collections.accelops.lifecycle.tests.unit.plugins.action.controller_run import refused_type, run_action


def changed(base, path, value):
    """A deep copy of ``base`` with the node at ``path`` (keys and indexes) set to ``value``, or removed when value
    is DROP."""
    out = copy.deepcopy(base)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is DROP:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


DROP = object()
FPGA = "0000:5e:00.0"
FPGA_RECORD = {"address": FPGA, "family": "fpga", "physfn": None, "driver": "dfl-pci",
               "function": {"id": "ab" * 16, "name": "gzip"},
               "units": [{"kind": "device", "id": FPGA, "in_use": True,
                          "in_use_by": [{"kind": "domain", "name": "instance-1"}]}]}
NIC_RECORD = {"address": "0000:d8:00.0", "family": "nic", "physfn": None, "driver": "i40e",
              "sriov": {"numvfs": 0, "vfs": [], "vf_units": []},
              "units": [{"kind": "device", "id": "0000:d8:00.0", "in_use": False, "in_use_by": []}]}


# -- provision_plan (was: AttributeError, TypeError, IndexError in module_utils/_provision.py) ---------------------
class Refused(Exception):
    """The provision_plan task failed: its message."""


def provision(profiles, functions, hosts, providers=None):
    """The provision_plan action's choice (the positional order of the filter it replaced)."""
    args = {"profiles": profiles, "functions": functions, "hosts": hosts}
    if providers is not None:
        args["providers"] = providers
    out = run_action(ProvisionPlan, args)
    if out.get("failed"):
        assert "exception" not in out, out
        raise Refused(out["msg"])
    return out["plan"]


GZIP = {"bitstream": "/srv/gzip.gbs", "sha256": "ab" * 32, "function_id": "cd" * 16}
PROFILE = {"name": "gzip", "groups": [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required"}]}
PROVISION = [[PROFILE, dict(PROFILE, name="zz-gzip")], {"gzip": GZIP},
             {"h1": {"accelerators": [dict(FPGA_RECORD, function=None, units=[])]}},
             [{"name": "h1_" + FPGA, "in_use": False}]]


def test_provision_baseline_chooses_the_card():
    assert [(a["host"], a["address"]) for a in provision(*copy.deepcopy(PROVISION))["actions"]] == [("h1", FPGA)]


@pytest.mark.parametrize("path,value,message", [
    # AttributeError: 'NoneType' object has no attribute 'get' (sorting the profiles by name)
    ((0, 0), None, refused_type('profiles', 'NoneType', 'dict', elements=True)),
    # TypeError: 'int' object is not iterable
    ((0,), 7, refused_type('profiles', 'str', 'dict', elements=True)),
    # TypeError: '<' not supported between a profile name that is a list and one that is a string
    ((0, 1, "name"), ["gzip"], r"profiles\[1\]\.name: expected a string, got list"),
    # AttributeError: 'tuple' object has no attribute 'items'
    ((0, 0, "groups", 0), (1, 2), r"profiles\[0\]\.groups\[0\]: expected a request group"),
    # TypeError: int() argument must be ... not 'tuple'
    ((0, 0, "groups", 0, "resources:FPGA"), (1, 2),
     r"profiles\[0\]\.groups\[0\]\.resources:FPGA: expected a count \(a string or a whole number\), got tuple"),
    # TypeError: '<' not supported between instances of 'int' and 'str' (sorting the host names)
    ((2, 7), [], r"hosts key 7: expected a host name \(a string\), got int"),
    # TypeError: 'int' object is not iterable
    ((2, "h1", "accelerators"), -1, r"hosts\.h1\.accelerators: expected a list of accelerator_info records"),
    # AttributeError: 'tuple' object has no attribute 'get'
    ((2, "h1", "accelerators", 0), ({}, {}), r"hosts\.h1\.accelerators\[0\]: expected an accelerator_info record"),
    # TypeError: unhashable type (the card's address keys the cards already taken)
    ((2, "h1", "accelerators", 0, "address"), [FPGA],
     r"hosts\.h1\.accelerators\[0\]\.address: expected a PCI address string, got list"),
    # AttributeError: 'str' object has no attribute 'get' (in_use_by of a unit)
    ((2, "h1", "accelerators", 0, "units"), [{"kind": "device", "id": FPGA, "in_use": True, "in_use_by": ["x"]}],
     r"hosts\.h1\.accelerators\[0\]\.units\[0\]\.in_use_by\[0\]: expected a mapping with kind and name"),
    # TypeError: 'int' object is not iterable
    ((3,), 5, refused_type('providers', 'str', 'dict', elements=True)),
    # AttributeError: 'list' object has no attribute 'get'
    ((3, 0), [], refused_type('providers', 'list', 'dict', elements=True)),
])
def test_provision_wrong_shape(path, value, message):
    args = changed(PROVISION, path, value)
    with pytest.raises(Refused, match=r"^" + message):
        provision(*args)


def test_provision_hosts_not_a_mapping():
    # was: TypeError: unhashable type: 'list' (a list of lists), IndexError (a list of numbers)
    for hosts in ([[1], [2]], [2147483648]):
        with pytest.raises(Refused, match=r"^" + refused_type('hosts', 'list', 'dict')):
            provision([PROFILE], {"gzip": GZIP}, hosts)


# -- host_report (plugin_utils/_host_report.py; was: KeyError, TypeError, AttributeError) ------------------------------------------------
RECORDED = {"host": "h1", "root": "/", "plan_only": False, "placement": True, "placement_host": "cn1",
            "fail_on_drift": False, "problems": [],
            "planned": {FPGA: {"changed": True, "steps": ["load gzip"]}, "0000:5f:00.0": {"changed": False},
                        "0000:61:00.0": {"changed": True, "steps": ["load gzip"]}},
            "applied": {FPGA: {"changed": True, "applied": ["loaded gzip"]},
                        "0000:61:00.0": {"changed": True, "applied": ["loaded gzip"]}},
            "verify": {FPGA: True, "0000:61:00.0": False},
            "cards": [{"address": FPGA, "function": "gzip", "kind": "fpga", "status": "todo", "reason": "free card",
                       "loaded": None, "module": "accelops.lifecycle.fpga_program", "in_use_by": []},
                      {"address": "0000:5f:00.0", "function": "gzip", "kind": "fpga", "status": "todo",
                       "reason": "free card", "loaded": "ab" * 16, "module": "accelops.lifecycle.fpga_program",
                       "in_use_by": []},
                      {"address": "0000:60:00.0", "function": "gzip", "kind": "fpga", "status": "blocked",
                       "reason": "in use", "loaded": None, "module": "accelops.lifecycle.fpga_program",
                       "in_use_by": ["domain instance-1"]},
                      {"address": "0000:61:00.0", "function": "gzip", "kind": "fpga", "status": "todo",
                       "reason": "free card", "loaded": None, "module": "accelops.lifecycle.fpga_program",
                       "in_use_by": []}],
            "drained": [FPGA], "kept_drained": [], "drift": [], "error": None, "reported": True,
            "placement_share": {"summary": {"updated": 1}, "drained": [{"name": "cn1_x", "address": "0000:5f:00.0"}]}}


def test_converge_report_baseline():
    r = host_report(copy.deepcopy(RECORDED))
    assert [(c["address"], c["status"]) for c in r["cards"]] == [
        (FPGA, "changed"), ("0000:5f:00.0", "ok"), ("0000:60:00.0", "blocked"), ("0000:61:00.0", "failed")]
    assert r["placement"]["already_drained"] == ["cn1_x"]


@pytest.mark.parametrize("path,value,message", [
    (("cards", 0, "address"), DROP, r"cards\[0\]\.address: expected a PCI address string, got NoneType"),  # KeyError
    (("cards", 0), ("x", "y"), r"cards\[0\]: expected a card record"),        # TypeError: tuple indices
    (("cards", 1, "module"), ("a", "b"), r"cards\[1\]\.module: expected a module name"),  # not all arguments converted
    (("cards", 0, "loaded"), ("a", "b"), r"cards\[0\]\.loaded: expected the loaded function's id"),
    (("cards", 2, "in_use_by"), [None], r"cards\[2\]\.in_use_by\[0\]: expected a string"),  # sequence item 0
    (("planned",), [[1, 2]], r"planned: expected a mapping of card address"),  # 'list' object has no attribute 'get'
    (("planned", FPGA), (1, 2), r"planned\.0000:5e:00\.0: expected a module result"),
    (("applied",), (-1, -1), r"applied: expected a mapping of card address"),
    (("applied", "0000:61:00.0", "applied"), [{}], r"applied\.0000:61:00\.0\.applied\[0\]: expected a string"),
    (("applied", "0000:61:00.0"), {"failed": True, "msg": "EIO", "state": ("a", "b")},
     r"applied\.0000:61:00\.0\.state: expected a string"),
    (("verify",), [2], r"verify: expected a mapping of card address"),
    (("drained", 0), {"a": 1}, r"drained\[0\]: expected a string"),          # sequence item 0: expected str
    (("kept_drained",), -2, r"kept_drained: expected a list of strings"),       # 'int' object is not iterable
    (("drift",), 3, r"drift: expected a list of strings"),
    (("problems",), [("a", "b")], r"problems\[0\]: expected a string"),      # not all arguments converted
    (("error",), {"why": 1}, r"error: expected a string \(why the run failed\) or null, got dict"),
    (("error",), ("a", "b"), r"error: expected a string"),
    (("placement_share", "summary"), ([], {}), r"placement_share\.summary: expected a mapping"),
    (("placement_share", "drained", 0), ["x"], r"placement_share\.drained\[0\]: expected a provider"),
    (("placement_share", "drained", 0, "name"), None, r"placement_share\.drained\[0\]\.name: expected the "
                                                      r"provider's name"),
])
def test_converge_report_wrong_shape(path, value, message):
    with pytest.raises(ValueError, match=r"^" + message):
        host_report(changed(RECORDED, path, value))


# -- accelerator_summary (was: AttributeError, TypeError) ------------------------------------------------------
@pytest.mark.parametrize("path,value,message", [
    ((0, "function"), 1, r"accelerators\[0\]\.function: expected a mapping with id and name"),
    ((0, "function", "name"), ("", ""), r"accelerators\[0\]\.function\.name: expected a string"),
    ((0, "warnings"), 2, r"accelerators\[0\]\.warnings: expected a list of warnings or null, got int"),
    ((0, "driver"), ("a", "b"), r"accelerators\[0\]\.driver: expected a driver name"),
    ((0, "units", 0), 7, r"accelerators\[0\]\.units\[0\]: expected a unit"),
    ((1, "sriov", "vf_units"), (-1, "x"), r"accelerators\[1\]\.sriov\.vf_units: expected a list of units"),
])
def test_accelerator_summary_wrong_shape(path, value, message):
    records = [dict(FPGA_RECORD, function=dict(FPGA_RECORD["function"])), NIC_RECORD]
    assert accelerator_summary(copy.deepcopy(records))[0].startswith(FPGA + " fpga")
    with pytest.raises(AnsibleFilterError, match=r"^accelerator_summary: " + message):
        accelerator_summary(changed(records, path, value))


# -- hostdev_units, hostdev_xml (module_utils/_hostdev.py; was: TypeError) ----------------------------------------
@pytest.mark.parametrize("path,value,message", [
    # not all arguments converted during string formatting (the record's name in messages)
    ((1, "address"), (None, " "), r"record 1: address: expected a PCI address .* or null, got tuple"),
    # '>' not supported between instances of 'list' and 'int'
    ((1, "sriov", "numvfs"), [1], r"record 0000:d8:00\.0: sriov\.numvfs: expected a whole number or null, got list"),
    ((1, "sriov"), ["x"], r"record 0000:d8:00\.0: sriov: expected a mapping"),
    ((1, "units", 0, "in_use_by"), 5,
     r"record 0000:d8:00\.0: units\[0\]: in_use_by: expected a list of in-use evidence or null, got int"),
])
def test_hostdev_filters_wrong_shape(path, value, message):
    data = {"accelerators": [FPGA_RECORD, NIC_RECORD]}
    assert [u["id"] for u in hostdev_units(copy.deepcopy(data), assignable_only=False)] == [FPGA, "0000:d8:00.0"]
    bad = changed(data, ("accelerators",) + path, value)
    for name, fn in (("hostdev_units", hostdev_units), ("hostdev_xml", hostdev_xml)):
        with pytest.raises(AnsibleFilterError, match=r"^%s: %s" % (name, message)):
            fn(copy.deepcopy(bad))


# -- fleet_report (was: TypeError, KeyError, AttributeError) ---------------------------------------------------
FLEET = {"names": ["h1"], "hosts": [{"name": "h1", "placement_host": "h1", "functions": [],
                                     "discovery": {"accelerators": [FPGA_RECORD, NIC_RECORD]}}],
         "placement": [{"changed": False, "providers": [
             {"name": "h1_" + FPGA, "host": "h1", "traits": ["CUSTOM_FUNCTION_GZIP"],
              "inventories": {"FPGA": {"total": 1, "reserved": 0}}, "usages": {"FPGA": 1},
              "allocations": {"c1": {"resources": {"FPGA": 1}}}}]}],
         "profiles": [{"name": "gzip", "groups": [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required"}],
                       "candidates": {"count": 0, "hosts": [], "providers": []}, "satisfiable": False}]}


def test_fleet_report_baseline():
    r = fleet_report(copy.deepcopy(FLEET))
    assert r["unsatisfiable"] == ["gzip"] and [c["address"] for c in r["hosts"][0]["cards"]] == [FPGA, "0000:d8:00.0"]


@pytest.mark.parametrize("path,value,message", [
    # TypeError: unhashable type: 'list' (the host's Placement errors are keyed by it)
    (("hosts", 0, "placement_host"), [" "], r"hosts\[0\]\.placement_host: expected its compute node provider's name"),
    # KeyError: 'physfn' (a record without an address counted as a card of address None)
    (("hosts", 0, "discovery", "accelerators", 1), {"family": "nic"},
     r"hosts\[0\]\.discovery\.accelerators\[1\]\.address: expected a PCI address string, got NoneType"),
    # AttributeError: 'int' object has no attribute 'startswith'
    (("profiles", 0, "groups", 0), {7: "x"}, r"profiles\[0\]\.groups\[0\] key 7: expected a string"),
    # TypeError: unhashable type: 'list' / '<' not supported between 'float' and 'str'
    (("profiles", 0, "candidates", "hosts"), [[1]], r"profiles\[0\]\.candidates\.hosts\[0\]: expected a string"),
    (("profiles", 0, "candidates", "hosts"), ["", float("-inf")],
     r"profiles\[0\]\.candidates\.hosts\[1\]: expected a string"),
    # TypeError: 'int' object is not iterable
    (("placement",), -3, r"placement: expected a list of placement_provider_info results"),
    (("profiles",), -1, r"profiles: expected a list of device profiles"),
    (("names",), 1, r"names: expected a list of host names"),
    # AttributeError / TypeError inside the provider's inventories and allocations
    (("placement", 0, "providers", 0, "inventories", "FPGA"), 3,
     r"placement\[0\]\.providers\[0\]\.inventories\.FPGA: expected an inventory"),
    (("placement", 0, "providers", 0, "traits"), [None],
     r"placement\[0\]\.providers\[0\]\.traits\[0\]: expected a string"),
])
def test_fleet_report_wrong_shape(path, value, message):
    with pytest.raises(FleetReportError, match=r"^fleet_report: " + message):
        fleet_report(changed(FLEET, path, value))
