#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: device_profile_info
short_description: Read OpenStack Cyborg device profiles and whether Placement can satisfy them
version_added: 0.1.0
description:
  - Lists Cyborg device profiles, or reads some by name.
  - With O(check_candidates=true), asks Placement for allocation candidates for each profile (each group as
    resources plus required and forbidden traits, C(GET /allocation_candidates)) and reports how many
    candidates exist and on which hosts, so profiles that no host can serve are found before a server asks.
  - Read-only.
  - See C(docs/device_profiles.md) in the collection.
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
  names:
    description:
      - Names of the profiles to return. Without it, every profile is returned.
      - A name that does not exist is reported in RV(missing), not as a failure.
    type: list
    elements: str
    aliases: [name]
  check_candidates:
    description:
      - Ask Placement for each profile's allocation candidates (one request per profile, plus one to name the
        providers).
    type: bool
    default: false
  candidate_limit:
    description:
      - The most candidates Placement should return per profile (its C(limit) parameter); the count is then
        at most this. From V(1) to V(100000).
    type: int
notes:
  - Retries (O(request_retries)) apply to Cyborg and, with O(check_candidates), to Placement; every request of this
    module is a read, safe to repeat.
author:
  - accelops.lifecycle contributors (@accelops)
seealso:
  - module: accelops.lifecycle.device_profile
  - module: accelops.lifecycle.placement_provider_info
'''

EXAMPLES = r'''
- name: Which device profiles can no host serve right now?
  accelops.lifecycle.device_profile_info:
    cloud: mycloud
    check_candidates: true
  register: profiles
  delegate_to: localhost

- name: Show them
  ansible.builtin.debug:
    msg: "{{ profiles.unsatisfiable }}"
'''

RETURN = r'''
profiles:
  description: The profiles, sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    uuid:
      description: Cyborg's uuid.
      type: str
    name:
      description: Name.
      type: str
    description:
      description: Description.
      type: str
    groups:
      description: The groups in Cyborg's form.
      type: list
      elements: dict
    candidates:
      description:
        - With O(check_candidates=true) only. C(count) (allocation candidates), C(hosts) (the root providers'
          names), C(providers) (the providers that would be allocated from), C(query) (the request sent), and
          C(reason) when Placement cannot even be asked (a trait or resource class it does not know, which means
          no provider has it) or refused the query.
      type: dict
    satisfiable:
      description: With O(check_candidates=true) only. Whether at least one candidate exists.
      type: bool
  sample:
    - uuid: 4aca5a90-2c49-47c8-9c15-37c70e60923c
      name: fpga-gzip
      description: null
      groups: [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": required}]
      candidates: {count: 2, hosts: [compute1, compute2], providers: ["compute1_0000:3b:00.0", "compute2_0000:3b:00.0"]}
      satisfiable: true
unsatisfiable:
  description: Names of the profiles with no candidate (with O(check_candidates=true); else empty).
  returned: always
  type: list
  elements: str
missing:
  description: Names asked for in O(names) that Cyborg does not have.
  returned: always
  type: list
  elements: str
requests:
  description: HTTP requests sent (Cyborg and Placement together).
  returned: always
  type: int
'''

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable, check_retry_options, service_proxy)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _cyborg as C
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P


class DeviceProfileInfoModule(OpenStackModule):
    argument_spec = dict(
        names=dict(type="list", elements="str", aliases=["name"]),
        check_candidates=dict(type="bool", default=False),
        candidate_limit=dict(type="int"),
        **RETRY_ARGUMENT_SPEC
    )
    module_kwargs = dict(supports_check_mode=True, ranges={"candidate_limit": (1, 100000)})

    def run(self):
        p = self.params
        if p["candidate_limit"] is not None and p["candidate_limit"] < 1:
            self.ansible.fail_json(msg="candidate_limit: must be at least 1, got %d" % p["candidate_limit"])
        try:
            check_retry_options(p["request_retries"], p["request_retry_delay"])
        except ValueError as e:
            self.ansible.fail_json(msg=str(e))
        retries = dict(retries=p["request_retries"], retry_delay=p["request_retry_delay"])
        client = C.Client(service_proxy(lambda: self.conn.accelerator, "Cyborg", p["request_retries"],
                                        p["request_retry_delay"]), **retries)
        missing = []
        try:
            if p["names"]:
                profiles = []
                for n in p["names"]:
                    found = client.profile(n)
                    if found:
                        profiles.append(found)
                    else:
                        missing.append(n)
            else:
                profiles = client.profiles()
        except C.CyborgHTTPError as e:
            self.ansible.fail_json(msg=C.explain(e, "reading device profiles"), requests=client.requests)
        except ServiceUnavailable as e:
            self.ansible.fail_json(msg=str(e), requests=client.requests)
        out = sorted((C.public(x) for x in profiles), key=lambda x: x["name"] or "")
        unsatisfiable = []
        placement_requests = 0
        if p["check_candidates"] and out:
            placement = None
            try:
                adapter = service_proxy(lambda: self.conn.placement, "Placement", p["request_retries"],
                                        p["request_retry_delay"])
                placement = P.Client(adapter, read_only=True, **retries)
                names = dict((x["uuid"], x["name"]) for x in placement.get("/resource_providers")["resource_providers"])
                for prof in out:
                    prof["candidates"] = self._candidates(placement, prof, names)
                    prof["satisfiable"] = prof["candidates"]["count"] > 0
                    if not prof["satisfiable"]:
                        unsatisfiable.append(prof["name"])
            except (P.PlacementHTTPError, ServiceUnavailable) as e:
                self.ansible.fail_json(msg="asking Placement for allocation candidates: %s" % e,
                                       requests=client.requests + (placement.requests if placement else 0))
            placement_requests = placement.requests
        self.ansible.exit_json(changed=False, profiles=out, unsatisfiable=unsatisfiable, missing=missing,
                               requests=client.requests + placement_requests)

    def _candidates(self, placement, prof, names):
        try:
            groups = C.normalize_groups(prof["groups"])
        except C.CyborgInputError as e:
            # a profile stored in Cyborg that its own checks let through but Placement cannot be asked for
            return {"count": 0, "hosts": [], "providers": [], "query": None,
                    "reason": "the profile cannot be scheduled as stored: %s" % e}
        try:
            return C.satisfiability(placement, groups, names, self.params["candidate_limit"])
        except P.PlacementHTTPError as e:
            if e.status != 400:
                raise
            return {"count": 0, "hosts": [], "providers": [], "query": C.candidate_query(groups),
                    "reason": "Placement refused the query (%s): no provider has that trait or resource class"
                              % C.fault_text(e.body) if _unknown_name(e.body) else
                              "Placement refused the query: %s" % C.fault_text(e.body)}


def _unknown_name(body):
    text = str(body)
    return "No such trait" in text or "Invalid resource class" in text or "No such resource class" in text


def main():
    DeviceProfileInfoModule()()


if __name__ == "__main__":
    main()
