# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: converge_refusal
short_description: Why the accelerator_host role must refuse a host before reading or changing anything
version_added: 0.1.0
description:
  - The first check of the C(accelops.lifecycle.accelerator_host) role, worked out in Python in the role's first
    task (one task per host instead of an C(assert) and an allow-list C(include_tasks)).
  - Returns V(null) when the role may go on, otherwise the message the host fails with. Two checks, in order.
  - B(Settings.) C(functions) must be a list, C(mode) V(converge) or V(plan), C(allowed_functions) null or a list,
    and with C(placement) true either C(placement_endpoint) and C(placement_token), or C(cloud), or C(auth).
  - B(Allow-list.) With C(allowed_functions) set, every declared entry's name must be listed (case-insensitive) and
    an FPGA entry's C(fpga.sha256) and C(fpga.rollback_sha256) too (items of 64 hex digits, optionally
    C(sha256:), are checksums; the rest are names). Every entry outside the list is named in the message.
options:
  _input:
    description:
      - The role's settings, a dictionary with the keys C(host) (the inventory name, for the message),
        C(functions), C(mode), C(allowed_functions), C(placement) (a boolean), C(placement_endpoint),
        C(placement_token), C(cloud) and C(auth).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Refuse before anything is read
  ansible.builtin.set_fact:
    refusal: >-
      {{ {'host': inventory_hostname, 'functions': accelerator_host_functions, 'mode': accelerator_host_mode,
          'allowed_functions': accelerator_host_allowed_functions, 'placement': accelerator_host_placement | bool,
          'placement_endpoint': accelerator_host_placement_endpoint, 'placement_token': accelerator_host_placement_token,
          'cloud': accelerator_host_cloud, 'auth': accelerator_host_auth} | accelops.lifecycle.converge_refusal }}
'''

RETURN = r'''
_value:
  description: V(null) when the host may be converged, else the reason it is refused.
  type: str
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import allow_list_refusal

SETTINGS_MSG = (
    "accelerator_host: accelerator_host_functions must be a list, accelerator_host_mode converge or plan, "
    "accelerator_host_allowed_functions null or a list, and with accelerator_host_placement true either "
    "accelerator_host_placement_endpoint + accelerator_host_placement_token or openstack.cloud-style settings "
    "(accelerator_host_cloud, or accelerator_host_auth with accelerator_host_auth_type ...) are needed "
    "(set accelerator_host_placement to false to converge the host only)")


def _is_list(value):
    return isinstance(value, (list, tuple))


def _settings_ok(s):
    if not _is_list(s.get("functions")):
        return False
    if s.get("mode") not in ("converge", "plan"):
        return False
    allowed = s.get("allowed_functions")
    if allowed is not None and not _is_list(allowed):
        return False
    if s.get("placement"):
        token_form = bool(s.get("placement_endpoint")) and bool(s.get("placement_token"))
        if not (token_form or s.get("cloud") or s.get("auth")):
            return False
    return True


def converge_refusal(settings):
    if not isinstance(settings, Mapping):
        raise AnsibleFilterError("converge_refusal expects a dictionary of the role's settings, got %s"
                                 % type(settings).__name__)
    if not _settings_ok(settings):
        return SETTINGS_MSG
    return allow_list_refusal(settings.get("host"), settings["functions"], settings.get("allowed_functions"))


class FilterModule(object):
    def filters(self):
        return {"converge_refusal": converge_refusal}
