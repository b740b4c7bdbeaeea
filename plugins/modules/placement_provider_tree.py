#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: placement_provider_tree
short_description: Report accelerators to OpenStack Placement as child resource providers
version_added: 0.1.0
description:
  - Converges Placement to the accelerators that discovery (M(accelops.lifecycle.accelerator_info)) found on one
    host or on many hosts in one call.
  - Finds each host's compute node provider (the root) by name, trying the host name, its short name and any
    FQDN with the same short name; a clear error names what was tried when none exists.
  - Creates or updates one child provider per assignable unit or pool that this collection reports (O(reporter)),
    named C(<root>_accelops_<address>) with the uuid C(uuid3(NAMESPACE_DNS, name)); for devices that Nova or
    Cyborg reports, adds the function traits to their providers instead (O(reporter)).
  - Sets inventories (FPGA, PGPU, VGPU, SRIOV_NET_VF, CUSTOM_QAT, CUSTOM_PCI_<VID>_<PID>) and traits (owner,
    family, vendor, product, programming model, NUMA node, FPGA region, loaded function), creating the custom
    traits and resource classes they need.
  - A single-program card with no function loaded gets a provider without inventory (it cannot be scheduled);
    once programmed, its inventory and function trait appear together. Each dynamic FPGA region is schedulable
    on its own and carries its own function trait.
  - Providers this module creates carry C(CUSTOM_OWNER_ACCELOPS). Providers it does not own are never
    rewritten or removed; on providers owned by Cyborg or Nova (C(OWNER_CYBORG), C(OWNER_NOVA)) it can add and
    remove the function traits only (O(foreign_providers=function_traits)).
  - Providers it owns that the host no longer has are deleted, but only when they carry no allocations
    (otherwise they are kept, with a warning).
  - Writes carry the provider generation; a concurrent writer (HTTP 409 C(placement.concurrent_update)) makes
    it re-read and re-apply only its own change, so the other writer's traits survive.
  - See C(docs/placement.md) in the collection for the model and the request budget.
extends_documentation_fragment:
  - accelops.lifecycle._openstack
  - accelops.lifecycle._retries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads Placement and reports the plan; sends no request that writes.
  diff_mode:
    support: full
    details: Before and after (traits and inventories) of every provider created, updated or pruned.
  platform:
    platforms: all
    details: Runs on the controller (or wherever C(delegate_to) points); needs openstacksdk.
options:
  discovery:
    description:
      - One host's discovery result (what M(accelops.lifecycle.accelerator_info) returns, or its C(accelerators)
        list). Use O(hosts) instead for several hosts.
    type: raw
  host:
    description:
      - The host that O(discovery) describes, as the compute node provider is named. Defaults to the host name
        inside O(discovery) (C(host.hostname)).
    type: str
  root_provider:
    description:
      - Name or uuid of the compute node provider of O(host), when it is not named after the host.
    type: str
  name_prefix:
    description:
      - What child provider names start with (C(<name_prefix>_accelops_<address>), and Cyborg's
        C(<name_prefix>_<address>)). Defaults to the name of the compute node provider found for the host, as Nova
        names a compute node's children, so that C(cn1) and C(cn1.example.org) report the same children. Set it to
        what Cyborg's agent uses on that host (its C(socket.gethostname())) when Cyborg reports the devices.
    type: str
  hosts:
    description:
      - Several hosts in one call (fleets, or one C(serial) batch of a play). Each item has C(discovery) and
        optionally C(host), C(root_provider), C(name_prefix), C(function_names), C(overrides), C(drain) and
        C(undrain), with the meanings of the options of the same names, for that host only.
      - An item's C(function_names) and C(overrides) are laid over the module-wide O(function_names) and
        O(overrides) (the item wins for a key both name); its C(drain) and C(undrain) lists add to O(drain) and
        O(undrain).
    type: list
    elements: dict
    suboptions:
      discovery:
        description:
          - The host's discovery result, as O(discovery).
        type: raw
        required: true
      host:
        description:
          - The host, as O(host).
        type: str
      root_provider:
        description:
          - Its compute node provider, as O(root_provider).
        type: str
      name_prefix:
        description:
          - What its child provider names start with, as O(name_prefix).
        type: str
      function_names:
        description:
          - Friendly function names for this host, laid over O(function_names).
        type: dict
      overrides:
        description:
          - Settings per address for this host, laid over O(overrides).
        type: dict
      drain:
        description:
          - Addresses or provider names of this host to drain, added to O(drain).
        type: list
        elements: str
      undrain:
        description:
          - Addresses or provider names of this host to undrain, added to O(undrain).
        type: list
        elements: str
      reporters:
        description:
          - Who reports each device of this host, by card or unit address, laid over O(reporters).
        type: dict
  reporter:
    description:
      - Who reports the devices to Placement (one reporter per device; see C(docs/placement.md), "Reporters").
      - V(accelops) (this collection) writes its own provider per unit, named C(<root>_accelops_<address>) so that
        the name never equals what Nova (C(<root>_<ADDRESS>), C(<root>_pci_<...>)) or Cyborg (C(<host>_<address>))
        gives the same device, even ignoring case. A run that would write one for a device Nova or Cyborg already
        reports fails, naming both providers. A provider this collection wrote under its old name
        (C(<root>_<address>)) is renamed in place (its uuid and allocations stay).
      - V(cyborg) writes no provider; it adds the function traits to the provider Cyborg's agent made for the unit
        (C(<name_prefix>_<address>), O(name_prefix) being the host name Cyborg's agent uses) and removes stale ones.
      - V(nova) writes no provider; on Nova's vGPU provider of an mdev GPU (C(<root>_pci_0000_84_00_0)) it adds
        the function traits (Nova keeps traits added from outside there); Nova's PCI providers
        (C(<root>_<ADDRESS>)) are read back only, since Nova writes their traits from the C(device_spec)
        C(traits) tag (the C(accelops.lifecycle.nova_compute_config) role renders it) and removes any other.
      - Until Nova or Cyborg has made its provider, the unit is reported with the action C(awaiting).
    type: str
    choices: [accelops, cyborg, nova]
    default: accelops
  reporters:
    description:
      - Reporter per card or unit address (C(0000:3b:00.0)), for devices whose reporter differs from O(reporter).
    type: dict
    default: {}
  function_names:
    description:
      - Friendly names for loaded functions, keyed by function id (AFU or xclbin uuid, vGPU type) or name. A named
        function also gets the trait C(CUSTOM_FUNCTION_<NAME>).
    type: dict
    default: {}
  overrides:
    description:
      - Per PCI address (or unit address) settings that replace the defaults. Keys of each value are
        C(resource_class), C(reserved), C(min_unit), C(max_unit), C(step_size), C(allocation_ratio) and
        C(traits) (a list added to the unit's traits).
    type: dict
    default: {}
  extra_traits:
    description:
      - Traits added to every provider this module owns.
    type: list
    elements: str
    default: []
  drain:
    description:
      - Addresses or provider names (or C(all)) whose inventory gets C(reserved = total), so the scheduler stops
        placing work there while allocations drain (before reprogramming). Run again without them to restore.
    type: list
    elements: str
    default: []
  keep_drained:
    description:
      - Providers that Placement has drained (every inventory at C(reserved >= total)) when this module writes
        stay drained, whoever drained them, unless O(undrain) lists them. Without it, a provider not in
        O(drain) gets its planned C(reserved) back.
      - This is race-safe. The inventories are written with the provider generation they were read at; when
        another writer changed them in between (HTTP 409), they are read again and the drained state is decided
        from what Placement has then, so a drain made between this module's read and its write is not undone.
    type: bool
    default: false
  undrain:
    description:
      - With O(keep_drained), addresses or provider names (or C(all)) that get their planned C(reserved) back
        even when Placement has them drained (for example the cards this run drained itself before
        reprogramming them). O(drain) wins over O(undrain).
    type: list
    elements: str
    default: []
  prune:
    description:
      - Delete owned providers of the listed hosts that discovery no longer reports (never when allocated).
    type: bool
    default: true
  adopt:
    description:
      - Manage an existing provider with this module's name that carries no owner trait (for example one
        created by hand). Providers owned by Cyborg or Nova are never adopted.
    type: bool
    default: false
  foreign_providers:
    description:
      - What to do with a unit whose provider Cyborg or Nova owns.
      - C(skip) leaves it alone; C(function_traits) adds the loaded function's traits and removes stale
        function traits (C(CUSTOM_FUNCTION_*), C(CUSTOM_FPGA_FUNCTION_ID_*)), nothing else.
    type: str
    choices: [skip, function_traits]
    default: skip
  conflict_retries:
    description:
      - How many times a write that lost a generation race is re-read and retried (V(0) to V(100)).
    type: int
    default: 5
  generation_cache:
    description:
      - File where the controller remembers each provider's traits and inventories with its generation, so a
        rerun that changes nothing reads only the provider list (one request). Defaults to a file per endpoint
        under C($XDG_CACHE_HOME/accelops.lifecycle) (C(~/.cache)).
      - An entry is used only while the provider's generation, name, parent and root are unchanged, which
        Placement guarantees means unchanged content.
    type: path
  use_generation_cache:
    description:
      - Set to V(false) to read every provider's traits and inventories each run.
    type: bool
    default: true
notes:
  - "Retries (O(request_retries)): only requests that are safe to repeat are repeated; a provider create whose
    answer was lost is looked up by its uuid before it is sent again, so it is never duplicated."
  - Needs Placement microversion 1.26 or later (the module sends 1.39).
  - Child providers are direct children of the compute node provider, as Cyborg creates them.
seealso:
  - module: accelops.lifecycle.placement_provider_info
  - module: accelops.lifecycle.accelerator_info
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Discover the accelerators of each compute host
  accelops.lifecycle.accelerator_info:
  register: found

- name: Report them to Placement (one call for the whole fleet, from the controller)
  accelops.lifecycle.placement_provider_tree:
    cloud: mycloud
    hosts: "{{ ansible_play_hosts | map('extract', hostvars, 'found')
               | map('community.general.dict_kv', 'discovery') | list }}"
    function_names:
      "d8424dc4-a4a1-c3d4-3213-4b09c1d7f2a2": gzip
  run_once: true
  delegate_to: localhost

- name: Drain one card before reprogramming it
  accelops.lifecycle.placement_provider_tree:
    cloud: mycloud
    discovery: "{{ found }}"
    drain: ["0000:3b:00.0"]
  delegate_to: localhost

- name: Report one serial batch in one call, each host with its own declaration; drains made by others stay
  accelops.lifecycle.placement_provider_tree:
    cloud: mycloud
    hosts:
      - discovery: "{{ hostvars['compute1'].found }}"
        function_names: {"d8424dc4-a4a1-c3d4-3213-4b09c1d7f2a2": gzip}
      - discovery: "{{ hostvars['compute2'].found }}"
        overrides: {"0000:3b:00.0": {traits: [CUSTOM_GOLD]}}
        undrain: ["0000:3b:00.0"]
    keep_drained: true
  run_once: true
  delegate_to: localhost

- name: Only set the function trait on providers Cyborg owns
  accelops.lifecycle.placement_provider_tree:
    cloud: mycloud
    discovery: "{{ found }}"
    host: compute1.example.org
    foreign_providers: function_traits
  delegate_to: localhost
'''

RETURN = r'''
providers:
  description: Every provider the run looked at, with what it did and the state after the run.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Provider name (C(<root>_accelops_<address>) for this collection's own).
      type: str
    uuid:
      description: Provider uuid.
      type: str
    host:
      description: The host it belongs to.
      type: str
    address:
      description: The PCI (or unit) address it stands for; null for a pruned provider.
      type: str
    root_provider_uuid:
      description: The compute node provider.
      type: str
    action:
      description: created, updated, unchanged, pruned, kept (gone from the host but allocated), foreign (owned
        by someone else, left alone, or read back) or awaiting (its reporter, Nova or Cyborg, has not made it
        yet). In check mode, what the real run would do.
      type: str
    owner:
      description: accelops, cyborg, nova or null.
      type: str
    reporter:
      description: Who reports the unit (O(reporter)).
      type: str
    renamed_from:
      description: The old name of this collection's provider, renamed in place to its new name; else null.
      type: str
    missing_traits:
      description: For a Nova PCI provider (read back, never written), the function traits it lacks; Nova writes
        them from the C(device_spec) C(traits) tag.
      type: list
      elements: str
    resource_class:
      description: The resource class of its inventory, null when it has none.
      type: str
    traits:
      description: Its traits after the run.
      type: list
      elements: str
    inventories:
      description: Its inventories after the run, by resource class.
      type: dict
    drained:
      description: Whether it is drained after the run (it has inventory and every class has C(reserved >= total),
        or, for a unit Nova or Cyborg reports, this run holds its free units).
      type: bool
    held:
      description: For a unit Nova or Cyborg reports that this run drained, the units its hold allocates by resource
        class; else null.
      type: dict
    note:
      description: Why a provider has no inventory, when it has none.
      type: str
  sample:
    - name: compute1_accelops_0000:3b:00.0
      uuid: 6a4c2e8d-0a53-3b1c-9c55-1b0f3c7c9d11
      host: compute1
      address: "0000:3b:00.0"
      root_provider_uuid: 4e8e5957-649f-477b-9e5b-f1f75b21c03c
      action: created
      owner: accelops
      reporter: accelops
      renamed_from: null
      resource_class: FPGA
      traits: [CUSTOM_ACCELERATOR_FPGA, CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A1C3D432134B09C1D7F2A2,
               CUSTOM_FPGA_INTEL, CUSTOM_OWNER_ACCELOPS]
      inventories: {FPGA: {total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0}}
      drained: false
      held: null
      missing_traits: []
      note: null
summary:
  description: How many providers got each action.
  returned: always
  type: dict
  sample: {created: 16, updated: 0, unchanged: 0, pruned: 0, kept: 0, foreign: 0, awaiting: 0}
by_host:
  description:
    - Per host of the run (by its name, as in RV(providers[].host)), its share of RV(summary) and its drained
      providers, so that one host's outcome can be read without the whole RV(providers) list (the
      C(accelops.lifecycle.accelerator_host) role reports a batch of hosts in one call and summarises each host
      from this).
  returned: always
  type: dict
  sample:
    compute1:
      summary: {created: 0, updated: 1, unchanged: 3, pruned: 0, kept: 0, foreign: 0, awaiting: 0}
      drained: [{name: "compute1_accelops_0000:3b:00.0", address: "0000:3b:00.0"}]
requests:
  description: HTTP requests this run sent to Placement (C(total), C(writes)), generation conflicts it
    resolved (C(conflicts_resolved)) and requests it repeated after no answer or a 5xx (C(retried)).
  returned: always
  type: dict
  sample: {total: 50, writes: 49, conflicts_resolved: 0, retried: 0}
'''

import math

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.accelops.lifecycle.plugins.module_utils._module import number_problem, show, unconvertible_int
from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P

# One value of overrides (the keys of overrides are the user's addresses, so options= cannot describe that
# dict itself: each value is checked against this spec, the rest of the checks are in _overrides).
OVERRIDE_SPEC = dict(
    resource_class=dict(type="str"),
    reserved=dict(type="int"),
    min_unit=dict(type="int"),
    max_unit=dict(type="int"),
    step_size=dict(type="int"),
    allocation_ratio=dict(type="float"),
    traits=dict(type="list", elements="str"),
)
OVERRIDE_RANGES = {"reserved": (0, None), "min_unit": (1, None), "max_unit": (1, None), "step_size": (1, None)}

HOST_SPEC = dict(
    discovery=dict(type="raw", required=True),
    host=dict(type="str"),
    root_provider=dict(type="str"),
    name_prefix=dict(type="str"),
    function_names=dict(type="dict"),
    overrides=dict(type="dict"),
    drain=dict(type="list", elements="str"),
    undrain=dict(type="list", elements="str"),
    reporters=dict(type="dict"),
)


def _overrides(value, option):
    """``overrides`` (module-wide or of one host): each address's settings through OVERRIDE_SPEC, then what a
    spec cannot say (ranges, resource class and trait names). Returns them without the unset keys."""
    overrides = {}
    for addr, ov in value.items():
        where = "%s[%s]" % (option, addr)
        if not isinstance(ov, dict):
            raise P.PlacementInputError("%s: expected a dict with any of %s" % (where, ", ".join(OVERRIDE_SPEC)))
        bad = sorted(str(k) for k in set(ov) - set(OVERRIDE_SPEC))
        if bad:
            raise P.PlacementInputError("%s: unknown key(s) %s; accepted: %s"
                                        % (where, ", ".join(bad), ", ".join(OVERRIDE_SPEC)))
        checked = {}
        for k, v in ov.items():
            if v is None:
                continue
            if OVERRIDE_SPEC[k]["type"] == "int" and unconvertible_int(v):
                # ansible-core's int conversion would raise or run for minutes on these
                raise P.PlacementInputError("%s.%s: must be a whole number, got %s (%s)"
                                            % (where, k, show(v), unconvertible_int(v)))
            result = ArgumentSpecValidator({k: OVERRIDE_SPEC[k]}).validate({k: v})
            if result.error_messages:
                raise P.PlacementInputError("%s.%s: %s" % (where, k, result.error_messages[0]))
            checked[k] = result.validated_parameters[k]
        for k, bounds in OVERRIDE_RANGES.items():
            why = number_problem("int", checked[k], bounds) if k in checked else None
            if why:
                raise P.PlacementInputError("%s.%s: must be %s, got %s" % (where, k, why, show(checked[k])))
        ratio = checked.get("allocation_ratio")
        if ratio is not None and (isinstance(ratio, bool) or not math.isfinite(ratio) or ratio <= 0):
            raise P.PlacementInputError("%s.allocation_ratio: must be a number more than 0, got %s"
                                        % (where, show(ratio)))
        if checked.get("resource_class") is not None:
            P.check_resource_class(checked["resource_class"], where + ".resource_class")
        for t in checked.get("traits") or []:
            P.check_trait(t, where + ".traits")
        overrides[addr] = checked
    return overrides


def _function_names(value, option):
    """``function_names``: each friendly name must give a trait name (letters or digits)."""
    names = {}
    for fid, name in value.items():
        try:
            P._naming.function_trait(name)
        except (ValueError, TypeError):
            raise P.PlacementInputError("%s[%s]: %r gives no usable trait name (need letters or digits)"
                                        % (option, fid, name))
        names[str(fid)] = str(name)
    return names


def _reporters(value, option):
    """``reporters``: card or unit address to one of the reporters."""
    out = {}
    for addr, rep in value.items():
        if rep not in P.REPORTERS:
            raise P.PlacementInputError("%s[%s]: expected one of %s, got %r" % (option, addr, ", ".join(P.REPORTERS), rep))
        out[str(addr)] = rep
    return out


class PlacementProviderTreeModule(OpenStackModule):
    argument_spec = dict(
        discovery=dict(type="raw"),
        host=dict(type="str"),
        root_provider=dict(type="str"),
        name_prefix=dict(type="str"),
        hosts=dict(type="list", elements="dict", options=HOST_SPEC),
        function_names=dict(type="dict", default={}),
        overrides=dict(type="dict", default={}),
        extra_traits=dict(type="list", elements="str", default=[]),
        drain=dict(type="list", elements="str", default=[]),
        keep_drained=dict(type="bool", default=False),
        undrain=dict(type="list", elements="str", default=[]),
        prune=dict(type="bool", default=True),
        adopt=dict(type="bool", default=False),
        foreign_providers=dict(type="str", choices=["skip", "function_traits"], default="skip"),
        reporter=dict(type="str", choices=list(P.REPORTERS), default="accelops"),
        reporters=dict(type="dict", default={}),
        conflict_retries=dict(type="int", default=5),
        generation_cache=dict(type="path"),
        use_generation_cache=dict(type="bool", default=True),
        **RETRY_ARGUMENT_SPEC
    )
    module_kwargs = dict(
        supports_check_mode=True,
        ranges={"conflict_retries": (0, 100)},
        mutually_exclusive=[("hosts", "discovery"), ("hosts", "host"), ("hosts", "root_provider"),
                            ("hosts", "name_prefix")],
        required_one_of=[("hosts", "discovery")],
    )

    def _validate(self):
        """The argument spec has checked types, keys, ranges and choices; what is left is the content of the
        dicts keyed by the user (overrides, function_names), names Placement must accept, and the discovery."""
        p = self.params
        overrides = _overrides(p["overrides"], "overrides")
        for t in p["extra_traits"]:
            P.check_trait(t, "extra_traits")
        names = _function_names(p["function_names"], "function_names")
        if p["hosts"] is not None:
            items = [(h, "hosts[%d]" % i) for i, h in enumerate(p["hosts"])]
        else:
            items = [({"discovery": p["discovery"], "host": p["host"], "root_provider": p["root_provider"],
                       "name_prefix": p["name_prefix"]}, "discovery")]
        hosts = []
        seen = set()
        for h, opt in items:
            dopt = opt + (".discovery" if opt != "discovery" else "")
            P._records(h["discovery"], dopt)
            host = h.get("host") or P.discovery_hostname(h["discovery"])
            if not host:
                raise P.PlacementInputError("%s: the discovery result names no host (host.hostname): set host" % opt)
            if host in seen:
                raise P.PlacementInputError("%s: host %r is listed twice" % (opt, host))
            seen.add(host)
            # a hosts item's own function_names and overrides are laid over the module-wide ones; its drain and
            # undrain lists add to them
            h_names = dict(names)
            h_names.update(_function_names(h.get("function_names") or {}, opt + ".function_names"))
            h_over = dict(overrides)
            h_over.update(_overrides(h.get("overrides") or {}, opt + ".overrides"))
            h_reporters = _reporters(p["reporters"], "reporters")
            h_reporters.update(_reporters(h.get("reporters") or {}, opt + ".reporters"))
            drain = p["drain"] + (h.get("drain") or [])
            undrain = p["undrain"] + (h.get("undrain") or [])
            provs = P.desired_providers(host, h["discovery"], option=dopt, prefix=h.get("name_prefix"),
                                        function_names=h_names, overrides=h_over, drain=drain,
                                        extra_traits=p["extra_traits"], keep_drained=p["keep_drained"],
                                        undrain=undrain, reporter=p["reporter"], reporters=h_reporters)
            hosts.append({"host": host, "root_provider": h.get("root_provider"), "name_prefix": h.get("name_prefix"),
                          "providers": provs})
        return hosts, {"function_names": names, "extra_traits": p["extra_traits"], "prune": p["prune"],
                       "adopt": p["adopt"], "foreign_providers": p["foreign_providers"],
                       "conflict_retries": p["conflict_retries"], "request_retries": p["request_retries"],
                       "request_retry_delay": p["request_retry_delay"]}

    def run(self):
        try:
            hosts, options = self._validate()
        except P.PlacementInputError as e:
            self.ansible.fail_json(msg=str(e))
        try:
            adapter, endpoint = P.discover(self.conn, self.params["request_retries"], self.params["request_retry_delay"])
        except ServiceUnavailable as e:
            self.ansible.fail_json(msg=str(e))
        cache_path = None
        if self.params["use_generation_cache"]:
            cache_path = self.params["generation_cache"] or P.default_cache_path(endpoint or "")
        try:
            result = P.converge(adapter, hosts, options, check_mode=self.ansible.check_mode, cache_path=cache_path,
                                endpoint=endpoint)
        except P.PlacementInputError as e:
            self.ansible.fail_json(msg=str(e))
        except (P.PlacementHTTPError, ServiceUnavailable) as e:
            self.ansible.fail_json(msg=str(e))
        for w in result.pop("warnings"):
            self.ansible.warn(w)
        diff = result.pop("diff")
        if self.ansible._diff:
            result["diff"] = diff
        self.ansible.exit_json(**result)


def main():
    PlacementProviderTreeModule()()


if __name__ == "__main__":
    main()
