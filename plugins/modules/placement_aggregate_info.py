#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: placement_aggregate_info
short_description: Read which resource providers are members of Placement aggregates
version_added: 0.1.0
description:
  - Returns, for each aggregate uuid given, the resource providers that are members of it
    (C(GET /resource_providers?member_of=<uuid>)). Nova mirrors its host aggregates onto the compute node providers,
    so the members are usually compute nodes; the function pool keeper (role C(accelops.lifecycle.function_pools))
    uses this to count a pool over an aggregate.
  - Read-only.
extends_documentation_fragment:
  - accelops.lifecycle._openstack
  - accelops.lifecycle._retries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Read-only; runs the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: all
    details: Runs on the controller (or wherever C(delegate_to) points); needs openstacksdk.
options:
  aggregates:
    description: Aggregate uuids.
    type: list
    elements: str
    required: true
notes:
  - "Retries (O(request_retries)): every request of this module is a read, safe to repeat."
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Which compute nodes are in the aggregate
  accelops.lifecycle.placement_aggregate_info:
    cloud: mycloud
    aggregates: [6f1c0a4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f]
  register: agg
'''

RETURN = r'''
aggregates:
  description: Aggregate uuid to its member providers, each with C(name), C(uuid) and C(root_provider_uuid); an
    aggregate without members maps to an empty list.
  returned: always
  type: dict
  sample:
    6f1c0a4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f:
      - {name: compute1, uuid: 4e8e5957-649f-477b-9e5b-f1f75b21c03c, root_provider_uuid: 4e8e5957-649f-477b-9e5b-f1f75b21c03c}
requests:
  description: HTTP requests sent to Placement.
  returned: always
  type: int
'''

import re

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P

UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


class PlacementAggregateInfoModule(OpenStackModule):
    argument_spec = dict(
        aggregates=dict(type="list", elements="str", required=True),
        **RETRY_ARGUMENT_SPEC
    )
    module_kwargs = dict(supports_check_mode=True)

    def run(self):
        p = self.params
        bad = [a for a in p["aggregates"] if not UUID_RE.match(a)]
        if bad:
            self.ansible.fail_json(msg="aggregates: %s is not a uuid; Placement aggregates are uuids (Nova's host "
                                       "aggregate uuid)" % ", ".join(bad))
        try:
            adapter = P.discover(self.conn, p["request_retries"], p["request_retry_delay"])[0]
            client = P.Client(adapter, read_only=True, retries=p["request_retries"],
                              retry_delay=p["request_retry_delay"])
            out = {}
            for agg in p["aggregates"]:
                listed = client.get("/resource_providers?member_of=%s" % agg)["resource_providers"]
                out[agg] = [{"name": rp["name"], "uuid": rp["uuid"], "root_provider_uuid": rp.get("root_provider_uuid")}
                            for rp in sorted(listed, key=lambda r: r["name"])]
        except (P.PlacementInputError, P.PlacementHTTPError, ServiceUnavailable) as e:
            self.ansible.fail_json(msg=str(e))
        self.ansible.exit_json(changed=False, aggregates=out, requests=client.requests)


def main():
    PlacementAggregateInfoModule()()


if __name__ == "__main__":
    main()
