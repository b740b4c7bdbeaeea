#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: device_profile
short_description: Create, replace and delete OpenStack Cyborg device profiles
version_added: 0.1.0
description:
  - Makes a Cyborg device profile (name, description, groups) present or absent.
  - Validates the profile locally with the rules Cyborg applies, and with the ones it misses (where Cyborg
    answers HTTP 500 or stores what Placement later refuses), so a bad profile fails with a message naming the
    group and the accepted form before anything is sent.
  - Groups are given in Cyborg's form (C(resources:<CLASS>), C(trait:CUSTOM_*), C(accel:<attribute>) keys) or in a
    friendlier form (C(family), C(count), C(function), C(vendor), ...) that becomes the same keys, with trait
    names as M(accelops.lifecycle.placement_provider_tree) publishes them.
  - Only name, description and groups are compared; Cyborg chooses the uuid (none is ever sent).
  - Device profiles are immutable in Cyborg. When the groups (or the description) differ, the profile is replaced
    (deleted and created again) only with O(replace=true), and only when no accelerator request (ARQ) uses it;
    otherwise the module fails and names the requests that hold it. Deleting follows the same rule.
  - See C(docs/device_profiles.md) in the collection.
extends_documentation_fragment:
  - accelops.lifecycle._openstack
  - accelops.lifecycle._retries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads Cyborg and reports what it would do; sends no request that writes.
  diff_mode:
    support: full
    details: The profile before and after (name, description, groups).
  platform:
    platforms: all
    details: Runs on the controller (or wherever C(delegate_to) points); needs openstacksdk.
options:
  name:
    description:
      - The profile's name (letters, digits, C(-) and C(_); at most 255 characters).
    type: str
    required: true
  description:
    description:
      - A description. When not given, the description of an existing profile is not compared.
    type: str
  groups:
    description:
      - The request groups, in order (the order numbers the groups of the accelerator requests made from it).
      - "Cyborg's form: a mapping such as C({\"resources:FPGA\": \"1\", \"trait:CUSTOM_FUNCTION_GZIP\": \"required\"}).
        Keys start with C(resources:) (class C(FPGA), C(GPU), C(VGPU), C(PGPU) or C(CUSTOM_*), count a whole number
        of at least 1), C(trait:) (a C(CUSTOM_*) trait, value C(required) or C(forbidden)) or C(accel:) (an
        attribute such as C(accel:bitstream_id)). Every group needs at least one C(resources:) key."
      - "The friendly form: a mapping with C(family) (C(fpga), C(gpu), C(pgpu), C(vgpu), C(qat)) or
        C(resource_class); C(count) (default 1); C(function) (becomes C(CUSTOM_FUNCTION_<NAME>), as
        M(accelops.lifecycle.placement_provider_tree) publishes for O(accelops.lifecycle.placement_provider_tree#module:function_names));
        C(vendor) (FPGAs C(CUSTOM_FPGA_<VENDOR>), others C(CUSTOM_VENDOR_<PCI vendor id>)); C(function_id)
        (FPGAs, Cyborg's C(CUSTOM_FPGA_FUNCTION_ID_<VENDOR>_<ID>)); C(traits) and C(forbidden_traits) (lists);
        C(accel) (a mapping of C(accel:) attributes)."
      - Required when O(state=present).
    type: list
    elements: raw
  state:
    description:
      - Whether the profile should exist.
    type: str
    choices: [present, absent]
    default: present
  replace:
    description:
      - Allow replacing an existing profile whose groups or description differ (Cyborg has no update, so the
        profile is deleted and created again, with a new uuid).
      - Refused while accelerator requests use the profile; they are named in the failure.
    type: bool
    default: false
notes:
  - "Retries (O(request_retries)): a create whose answer was lost is looked up by name before it is sent again, so a
    profile is never duplicated; a delete repeated after a lost answer accepts HTTP 404."
author:
  - accelops.lifecycle contributors (@accelops)
seealso:
  - module: accelops.lifecycle.device_profile_info
  - module: accelops.lifecycle.placement_provider_tree
'''

EXAMPLES = r'''
- name: A gzip FPGA profile, in the friendly form
  accelops.lifecycle.device_profile:
    cloud: mycloud
    name: fpga-gzip
    description: One FPGA slot with the gzip function
    groups:
      - family: fpga
        vendor: intel
        function: gzip
  delegate_to: localhost

- name: The same in Cyborg's own form
  accelops.lifecycle.device_profile:
    cloud: mycloud
    name: fpga-gzip
    groups:
      - resources:FPGA: "1"
        trait:CUSTOM_FPGA_INTEL: required
        trait:CUSTOM_FUNCTION_GZIP: required
  delegate_to: localhost

- name: Change a profile (only while no accelerator request uses it)
  accelops.lifecycle.device_profile:
    cloud: mycloud
    name: fpga-gzip
    groups:
      - {family: fpga, function: gzip, count: 2}
    replace: true
  delegate_to: localhost

- name: Remove it
  accelops.lifecycle.device_profile:
    cloud: mycloud
    name: fpga-gzip
    state: absent
  delegate_to: localhost
'''

RETURN = r'''
action:
  description: What was done (or would be, in check mode).
  returned: always
  type: str
  choices: [created, replaced, deleted, unchanged, absent]
  sample: created
profile:
  description: The profile as Cyborg has it after the run (in check mode, as it would be; no uuid for one not yet
    created). Null when absent.
  returned: always
  type: dict
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
  sample:
    uuid: 4aca5a90-2c49-47c8-9c15-37c70e60923c
    name: fpga-gzip
    description: One FPGA slot with the gzip function
    groups: [{"resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": required, "trait:CUSTOM_FUNCTION_GZIP": required}]
differences:
  description: The fields that differed from the existing profile (C(groups), C(description)).
  returned: always
  type: list
  elements: str
requests:
  description: HTTP requests sent to Cyborg.
  returned: always
  type: int
'''

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable, check_retry_options, service_proxy)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _cyborg as C


class DeviceProfileModule(OpenStackModule):
    argument_spec = dict(
        name=dict(type="str", required=True),
        description=dict(type="str"),
        groups=dict(type="list", elements="raw"),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        replace=dict(type="bool", default=False),
        **RETRY_ARGUMENT_SPEC
    )
    module_kwargs = dict(supports_check_mode=True, required_if=[("state", "present", ("groups",))])

    def fail(self, msg, client=None, **kwargs):
        self.ansible.fail_json(msg=msg, requests=client.requests if client else 0, **kwargs)

    def run(self):
        p = self.params
        desired = None
        try:
            check_retry_options(p["request_retries"], p["request_retry_delay"])
            C.check_name(p["name"])
            if p["state"] == "present":
                desired = C.desired_profile(p["name"], p["description"], p["groups"])
        except ValueError as e:   # CyborgInputError included
            self.fail(str(e))
        retries = dict(retries=p["request_retries"], delay=p["request_retry_delay"])
        client = C.Client(service_proxy(lambda: self.conn.accelerator, "Cyborg", **retries),
                          retries=p["request_retries"], retry_delay=p["request_retry_delay"])
        check = self.ansible.check_mode
        result = {"changed": False, "differences": [], "profile": None}
        try:
            current = client.profile(p["name"])
            before = C.canonical(current) if current else None
            after = None
            if p["state"] == "absent":
                if current is None:
                    result["action"] = "absent"
                else:
                    self._refuse_if_used(client, current, "delete")
                    if not check:
                        client.delete(current["uuid"], current["name"])
                    result.update(changed=True, action="deleted")
            elif current is None:
                created = desired if check else client.create(desired)
                result.update(changed=True, action="created", profile=C.public(created))
                after = C.canonical(desired)
            else:
                diffs = C.differences(current, desired, compare_description=p["description"] is not None)
                result["differences"] = diffs
                if not diffs:
                    result.update(action="unchanged", profile=C.public(current))
                    after = before
                else:
                    if not p["replace"]:
                        self.fail("device profile %s exists with different %s; Cyborg cannot change a profile, "
                                  "only delete it and create it again: set replace: true to do that (allowed only "
                                  "while no accelerator request uses it)" % (p["name"], " and ".join(diffs)),
                                  client, differences=diffs, profile=C.public(current))
                    if p["description"] is None and current.get("description"):
                        desired["description"] = current["description"]   # keep it across the replacement
                    self._refuse_if_used(client, current, "replace")
                    if check:
                        created = dict(desired)
                    else:
                        client.delete(current["uuid"], current["name"])
                        gone = ("device profile %s was deleted to be replaced, but creating it again failed (it is now "
                                "absent; run again to create it)" % p["name"])
                        try:
                            created = client.create(desired)
                        except C.CyborgHTTPError as e:
                            self.fail(C.explain(e, gone), client)
                        except ServiceUnavailable as e:
                            self.fail("%s: %s" % (gone, e), client)
                    result.update(changed=True, action="replaced", profile=C.public(created))
                    after = C.canonical(desired)
        except C.CyborgHTTPError as e:
            self.fail(C.explain(e, "device profile %s" % p["name"]), client)
        except ServiceUnavailable as e:
            self.fail(str(e), client)
        result["requests"] = client.requests
        if self.ansible._diff:
            result["diff"] = {"before": before or {}, "after": after or {}}
        self.ansible.exit_json(**result)

    def _refuse_if_used(self, client, current, what):
        arqs = client.arqs_using(current["name"])
        if arqs:
            held = ["%s (state %s%s)" % (a.get("uuid"), a.get("state"),
                                         ", instance %s" % a["instance_uuid"] if a.get("instance_uuid") else "")
                    for a in arqs]
            self.fail("cannot %s device profile %s: %d accelerator request(s) use it: %s; delete them (or the "
                      "servers they belong to) first" % (what, current["name"], len(arqs), ", ".join(held)),
                      client, accelerator_requests=[a.get("uuid") for a in arqs], profile=C.public(current))


def main():
    DeviceProfileModule()()


if __name__ == "__main__":
    main()
