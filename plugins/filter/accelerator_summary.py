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


def _name(dev):
    names = [dev.get("vendor_name") or dev.get("vendor_id"), dev.get("device_name") or dev.get("device_id")]
    return " ".join(str(n) for n in names if n)


def _line(dev):
    if not isinstance(dev, dict):
        raise AnsibleFilterError("accelerator_summary expects a list of discovery records (dicts), got an item of "
                                 "type %s" % type(dev).__name__)
    parts = ["%s %s %s" % (dev.get("address", "?"), dev.get("family", "?"), _name(dev))]
    parts.append("driver=%s" % (dev.get("driver") or "none"))
    function = dev.get("function") or {}
    if function:
        parts.append("function=%s" % (function.get("name") or function.get("id")))
    units = list(dev.get("units") or [])
    sriov = dev.get("sriov")
    if isinstance(sriov, dict):
        units.extend(sriov.get("vf_units") or [])  # VFs folded into their PF (vf_detail: summary)
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
    return [_line(dev) for dev in accelerators]


class FilterModule(object):
    def filters(self):
        return {"accelerator_summary": accelerator_summary}
