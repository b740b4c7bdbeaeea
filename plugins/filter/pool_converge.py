# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: pool_converge
short_description: What the function pool keeper converges once the chosen cards are drained
version_added: 0.1.0
description:
  - Takes the keeper's plan (P(accelops.lifecycle.pool_plan#filter)) and the result of draining the chosen cards'
    providers (M(accelops.lifecycle.placement_provider_drain)) and returns the actions still to carry out, the
    declaration of each host to hand to the C(accelops.lifecycle.accelerator_host) role, and the actions skipped
    because the drain refused a provider of their card (an allocation made since the plan's read, or a drain by
    someone else), each with the reason.
options:
  _input:
    description: C(plan) (pool_plan's result), C(functions) (the declaration) and C(drain) (the drain's result).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: What to converge
  ansible.builtin.set_fact:
    todo: "{{ {'plan': plan, 'functions': function_pools_functions, 'drain': drained} | accelops.lifecycle.pool_converge }}"
'''

RETURN = r'''
_value:
  description: C(actions) (kept), C(skipped) (with C(why)), C(declarations) (inventory host to declaration) and
    C(hosts).
  type: dict
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy

_pools = lazy("_pools")


def pool_converge(data):
    if not isinstance(data, Mapping):
        raise AnsibleFilterError("pool_converge expects a dictionary, got %s" % type(data).__name__)
    try:
        return _pools.after_drain(data.get("plan"), data.get("functions"), data.get("drain"))
    except _pools.PoolError as e:
        raise AnsibleFilterError("pool_converge: %s" % e)


class FilterModule(object):
    def filters(self):
        return {"pool_converge": pool_converge}
