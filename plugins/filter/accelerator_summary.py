# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: accelerator_summary
short_description: One readable line per accelerator from a discovery result
version_added: 0.1.0
description:
  - Turns the RV(accelops.lifecycle.accelerator_info#module:accelerators) list returned by
    M(accelops.lifecycle.accelerator_info) into one line per device, for playbook output and reports.
  - Each line shows the address, family, names, driver, the function loaded, and the assignable units with how
    many of them are in use (for a PF, also the units of the VFs folded into its record by
    C(vf_detail=summary)).
options:
  _input:
    description: The C(accelerators) list of a discovery result.
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Print what a host has
  ansible.builtin.debug:
    msg: "{{ discovery.accelerators | accelops.lifecycle.accelerator_summary }}"
'''

RETURN = r'''
_value:
  description: One line per device, in the order of the input.
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import record_units


def _name(dev):
    names = [dev.get("vendor_name") or dev.get("vendor_id"), dev.get("device_name") or dev.get("device_id")]
    return " ".join(str(n) for n in names if n)


def _expect(ok, where, form, value):
    if not ok:
        raise AnsibleFilterError("accelerator_summary: %s: expected %s, got %s" % (where, form, type(value).__name__))


def _check_units(units, where):
    _expect(not units or isinstance(units, list), where, "a list of units (mappings with kind, id, in_use) or null",
            units)
    for i, u in enumerate(units or []):
        _expect(isinstance(u, dict), "%s[%d]" % (where, i), "a unit (a mapping with kind, id, in_use)", u)


def _check(dev, index):
    """AnsibleFilterError naming the record's key and the accepted form when a record has a shape the line
    cannot be made from (only the keys the line reads are checked)."""
    if not isinstance(dev, dict):
        raise AnsibleFilterError("accelerator_summary expects a list of discovery records (dicts), got an item of "
                                 "type %s" % type(dev).__name__)
    where = "accelerators[%d]" % index
    _expect(not dev.get("driver") or isinstance(dev["driver"], str), where + ".driver", "a driver name (a string) "
            "or null", dev.get("driver"))
    _expect(not dev.get("function") or isinstance(dev["function"], dict), where + ".function",
            "a mapping with id and name (the loaded function) or null", dev.get("function"))
    for key in ("name", "id"):
        value = (dev.get("function") or {}).get(key)
        _expect(value is None or isinstance(value, (str, int, float)), "%s.function.%s" % (where, key),
                "a string (or a number) or null", value)
    _check_units(dev.get("units"), where + ".units")
    if isinstance(dev.get("sriov"), dict):
        _check_units(dev["sriov"].get("vf_units"), where + ".sriov.vf_units")
    _expect(not dev.get("warnings") or isinstance(dev["warnings"], list), where + ".warnings",
            "a list of warnings or null", dev.get("warnings"))


def _line(dev):
    parts = ["%s %s %s" % (dev.get("address", "?"), dev.get("family", "?"), _name(dev))]
    parts.append("driver=%s" % (dev.get("driver") or "none"))
    function = dev.get("function") or {}
    if function:
        parts.append("function=%s" % (function.get("name") or function.get("id")))
    units = record_units(dev)
    if units:
        busy = sum(1 for u in units if u.get("in_use"))
        parts.append("units=%d (%d in use)" % (len(units), busy))
    warnings = dev.get("warnings") or []
    if warnings:
        parts.append("warnings=%d" % len(warnings))
    return " ".join(parts)


def accelerator_summary(accelerators):
    if not isinstance(accelerators, list):
        raise AnsibleFilterError("accelerator_summary expects the accelerators list of a discovery result, got %s"
                                 % type(accelerators).__name__)
    for index, dev in enumerate(accelerators):
        _check(dev, index)
    return [_line(dev) for dev in accelerators]


class FilterModule(object):
    def filters(self):
        return {"accelerator_summary": accelerator_summary}
