# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: pool_report
short_description: Each function pool before and after a keeper run, and what became of each planned card
version_added: 0.1.0
description:
  - The function pool keeper's report. From the plan (P(accelops.lifecycle.pool_plan#filter)), the drain's result
    (M(accelops.lifecycle.placement_provider_drain)), each converged host's C(accelerator_host_report) and a
    Placement read after the run, it says for each pool its free units before and after against its minimum (and
    by how much it is short), and for each planned card whether it was changed, reported, skipped (with the
    drain's reason), failed or not converged.
  - C(release) lists the providers this run drained whose card the converge did not take over (its host failed
    before draining it) - the keeper releases them. A card the converge left drained (it did not verify) stays so.
options:
  _input:
    description: C(plan), C(providers) (a Placement read after the run, or null before it), C(hosts) (as for
      pool_plan), C(drain), C(converge) (inventory host to its accelerator_host_report), C(apply) (whether
      anything was carried out) and C(fail_on_shortfall).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Report
  ansible.builtin.set_fact:
    pools_report: >-
      {{ {'plan': plan, 'providers': after.providers, 'hosts': hosts, 'drain': drained, 'converge': reports,
          'apply': true} | accelops.lifecycle.pool_report }}
'''

RETURN = r'''
_value:
  description: C(pools) (name, function, min_free, max_free, before, after, planned, shortfall, used_after),
    C(actions) (the plan's, each with C(outcome) and C(why)), C(release), C(lines) (the plan's unsatisfiable profiles
    that no pool can serve among them) and C(failure) (null, or why the run fails - with C(fail_on_shortfall), a
    pool that stays short or such a profile).
  type: dict
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy

_pools = lazy("_pools")


def pool_report(data):
    if not isinstance(data, Mapping):
        raise AnsibleFilterError("pool_report expects a dictionary, got %s" % type(data).__name__)
    try:
        return _pools.report(data.get("plan"), data.get("providers"), data.get("hosts"), data.get("drain"),
                             data.get("converge"), applied=bool(data.get("apply")),
                             fail_on_shortfall=bool(data.get("fail_on_shortfall")))
    except _pools.PoolError as e:
        raise AnsibleFilterError("pool_report: %s" % e)


class FilterModule(object):
    def filters(self):
        return {"pool_report": pool_report}
