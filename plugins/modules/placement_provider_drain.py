#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: placement_provider_drain
short_description: Drain free Placement resource providers race-safely, or release them
version_added: 0.1.0
description:
  - Drains (C(reserved = total) on every inventory) the resource providers given, only when they have no
    allocation, and so that an allocation made at any time before the drain is seen - the check and the drain are
    one read-modify-write under the provider generation. Once a provider is drained nothing more can be
    allocated on it, so the card behind it can be reprogrammed safely.
  - For each provider, the module reads its allocations with the provider generation, refuses it when it has any,
    and writes the drained inventories with that generation; when Placement answers that the generation moved
    (an allocation, a trait or an inventory write happened in between), it reads the allocations again and
    decides again, up to O(conflict_retries) times.
  - O(providers[].generation) is the generation an earlier read (the plan) saw; a provider whose generation moved
    since is checked again as above and reported with C(moved=true).
  - A provider someone else drained before this run is refused (it is in someone's maintenance), not taken over.
  - A drain this module makes carries the collection's mark, the trait C(CUSTOM_ACCELOPS_DRAINED), written right after
    the drain (a unit Nova or Cyborg reports is marked by its hold consumer instead); a release takes the mark away
    before it sets C(reserved = 0). A drain without the mark is an operator's and is never lifted. A run cut between
    the drain and the mark leaves a drain without it, which stays (the safe side); a release cut between the two
    leaves one too.
  - O(state=lifted) lifts the drains that an earlier run killed before its release left (see C(docs/reliability.md),
    "Killed runs"). A provider given is lifted only when its drain carries the mark (or is a hold), the caller says
    its card is as declared (O(providers[].as_declared)) and nothing else is allocated on it; otherwise it is left
    and reported with the reason. The decision is the one the C(accelerator_host) role makes for its own drains.
  - Providers with the same O(providers[].card) go together - when one of them is refused, the others this run
    drained are released again, so a card is drained whole or not at all.
  - A provider that Nova or Cyborg reports (C(OWNER_NOVA), or Cyborg's name and uuid) is drained by a hold
    instead, an allocation of all its units by the provider's own drain consumer, because Nova rewrites its
    inventories, C(reserved) included, on every periodic update; Placement refuses the hold when an allocation
    came in since the read, and the provider is read again. See C(docs/placement.md), "Reporters".
  - O(state=released) sets C(reserved = 0) on drained providers (those this run's caller drained and did not hand
    over to a converge), and deletes the hold of one that Nova or Cyborg reports.
  - The function pool keeper (role C(accelops.lifecycle.function_pools)) drains every card it reprograms with this
    module before the converge role programs it.
extends_documentation_fragment:
  - accelops.lifecycle._openstack
  - accelops.lifecycle._retries
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the allocations and reports what it would do, writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: all
    details: Runs on the controller (or wherever C(delegate_to) points); needs openstacksdk.
options:
  providers:
    description: The providers to drain or release.
    type: list
    elements: dict
    required: true
    suboptions:
      uuid:
        description: The provider's uuid.
        type: str
        required: true
      name:
        description: Its name (for messages).
        type: str
      generation:
        description: The provider generation an earlier read saw (the plan's); a provider that moved since is
          checked again and reported with C(moved=true).
        type: int
      card:
        description: Providers with the same card are drained all or none.
        type: str
      as_declared:
        description: With O(state=lifted), whether the provider's card is as declared (it carries its function and
          is not being changed by this run); a drain on a card that is not is left.
        type: bool
        default: false
  state:
    description: V(drained) drains free providers; V(released) sets C(reserved = 0) on drained ones; V(lifted)
      releases the drains a killed run of the collection left (see above) and leaves every other drain.
    type: str
    choices: [drained, released, lifted]
    default: drained
  conflict_retries:
    description: How many times a generation conflict is resolved by reading again.
    type: int
    default: 5
notes:
  - "Retries (O(request_retries)): reads are repeated; an inventory PUT carries the generation it read, so a
    repeat of one that was applied meets a generation conflict and is decided again from a fresh read."
author:
  - accelops.lifecycle contributors (@accelops)
'''

EXAMPLES = r'''
- name: Drain the providers of the cards about to be reprogrammed, only if nothing is allocated on them
  accelops.lifecycle.placement_provider_drain:
    cloud: mycloud
    providers:
      - {uuid: 6a4c2e8d-0a53-3b1c-9c55-1b0f3c7c9d11, name: "compute1_0000:86:00.0", generation: 7, card: "compute1 0000:86:00.0"}
  register: drained

- name: Release what was drained but not reprogrammed
  accelops.lifecycle.placement_provider_drain:
    cloud: mycloud
    providers: "{{ drained.providers | selectattr('action', 'eq', 'drained') | list }}"
    state: released

- name: Lift the drains a killed run left on cards that are as declared (an operator's drain is left)
  accelops.lifecycle.placement_provider_drain:
    cloud: mycloud
    providers:
      - {uuid: 6a4c2e8d-0a53-3b1c-9c55-1b0f3c7c9d11, name: "compute1_0000:86:00.0", as_declared: true}
    state: lifted
'''

RETURN = r'''
providers:
  description: One entry per provider given, in order.
  returned: always
  type: list
  elements: dict
  contains:
    uuid:
      description: The provider's uuid.
      type: str
    name:
      description: Its name as given (or read).
      type: str
    card:
      description: The card as given.
      type: str
    action:
      description:
        - V(drained) (this run drained it), V(refused) (it has allocations, or it was drained already - by someone
          else, or by an earlier run; not touched), V(undone) (drained, then released
          again because a provider of the same card was refused), V(released), V(unchanged) (nothing to release or
          lift), V(empty) (no inventory, so nothing can be allocated on it and there is nothing to drain),
          V(lifted) (with O(state=lifted), the collection's drain a killed run left, released), V(left) (with
          O(state=lifted), a drain left as it is, the reason says why).
      type: str
    reason:
      description: Why it was refused, lifted or left, or null.
      type: str
    moved:
      description: Whether the provider generation differed from O(providers[].generation).
      type: bool
    generation:
      description: The provider generation after this run.
      type: int
    allocations:
      description: The consumers holding resources on it when it was refused.
      type: list
      elements: str
    held:
      description: For a provider Nova or Cyborg reports, the units its drain hold allocates, by resource class;
        else null.
      type: dict
drained:
  description: Names of the providers drained by this run (and not undone).
  returned: always
  type: list
  elements: str
refused:
  description: Names of the providers refused, each with its reason.
  returned: always
  type: list
  elements: str
lifted:
  description: With O(state=lifted), names of the providers whose drain (a killed run's) was lifted; else empty.
  returned: always
  type: list
  elements: str
left:
  description: With O(state=lifted), names of the drained providers left drained, each with its reason (an
    operator's drain, a card not as declared, an allocation on it); else empty.
  returned: always
  type: list
  elements: str
requests:
  description: HTTP requests sent to Placement.
  returned: always
  type: int
'''

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    RETRY_ARGUMENT_SPEC, OpenStackModule, ServiceUnavailable)
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P


def _drained_invs(invs):
    out = {}
    for rc, inv in invs.items():
        inv = dict(inv)
        inv["reserved"] = inv["total"]
        out[rc] = inv
    return out


def _read_inventories(client, uuid):
    """The provider's inventories, each checked for the fields the drain reads (a 200 of another shape is
    refused with a message, never a KeyError)."""
    path = "/resource_providers/%s/inventories" % uuid
    cur = client.read(path, resource_provider_generation=int, inventories=dict)
    for rc, inv in cur["inventories"].items():
        P.shaped(inv, "GET", path + " (%s)" % rc, total=int)
    return cur


def _read_traits(client, uuid):
    path = "/resource_providers/%s/traits" % uuid
    return client.read(path, resource_provider_generation=int, traits=list)


def _set_mark(client, uuid, marked, retries):
    """Put the collection's drain mark on the provider (``marked``) or take it away, under the provider generation
    (a conflict re-reads the traits: another writer's trait is never lost). The generation after it."""
    for _attempt in range(retries + 1):
        cur = _read_traits(client, uuid)
        traits = [t for t in cur["traits"] if t != P.DRAIN_TRAIT] + ([P.DRAIN_TRAIT] if marked else [])
        if sorted(traits) == sorted(cur["traits"]):
            return cur["resource_provider_generation"]
        if marked:  # a custom trait exists before a provider can carry it (PUT of a trait name is idempotent)
            client.call("PUT", "/traits/" + P.DRAIN_TRAIT, ok=(201, 204))
        path = "/resource_providers/%s/traits" % uuid
        try:
            r = client.call("PUT", path, {"traits": sorted(traits),
                                          "resource_provider_generation": cur["resource_provider_generation"]})
        except P.PlacementHTTPError as e:
            if e.status == 409 and e.code == "placement.concurrent_update":
                continue
            raise
        return P.shaped(r, "PUT", path, resource_provider_generation=int)["resource_provider_generation"]
    raise P.PlacementInputError("Placement: the drain mark of provider %s could not be %s: its generation kept "
                                "moving (%d conflicts); run again" % (uuid, "set" if marked else "taken away",
                                                                      retries + 1))


def drain_one(client, item, retries, check_mode):
    """Drain one provider under its generation, refusing it when it has allocations."""
    u = item["uuid"]
    out = {"uuid": u, "name": item.get("name") or u, "card": item.get("card"), "action": None, "reason": None,
           "moved": False, "generation": None, "allocations": [], "held": None}
    for _attempt in range(retries + 1):
        allocs = client.read("/resource_providers/%s/allocations" % u, resource_provider_generation=int, allocations=dict)
        gen = allocs["resource_provider_generation"]
        out["generation"] = gen
        if item.get("generation") is not None and gen != item["generation"]:
            out["moved"] = True
        if list(allocs["allocations"]) == [P.hold_consumer(u)]:
            out.update(action="refused", reason="drained by someone else (held): left alone")
            return out
        if allocs["allocations"]:
            consumers = sorted(allocs["allocations"])
            since = " (made since the plan's read)" if out["moved"] else ""
            out.update(action="refused", allocations=consumers,
                       reason="has allocations of %s%s" % (", ".join(consumers), since))
            return out
        cur = _read_inventories(client, u)
        if cur["resource_provider_generation"] != gen:
            continue  # moved between the two reads: decide again
        invs = cur["inventories"]
        if not invs:
            out["action"] = "empty"
            return out
        if P.is_drained(invs):
            if P.DRAIN_TRAIT in _read_traits(client, u)["traits"]:
                out.update(action="refused", reason="drained by an earlier run of the collection (its mark): left "
                                                    "alone until a run lifts it (state=lifted)")
            else:
                out.update(action="refused", reason="drained by someone else: left alone")
            return out
        if P.is_reported_elsewhere(client, u):
            # Nova or Cyborg rewrites its inventories (reserved too): every unit is held by an allocation instead,
            # which Placement refuses when an allocation was made since the read above
            units = dict((rc, int((inv["total"] - inv.get("reserved", 0)) * inv.get("allocation_ratio", 1.0)))
                         for rc, inv in invs.items())
            units = dict((rc, n) for rc, n in units.items() if n > 0)
            out["held"] = units
            if check_mode or not units:
                out["action"] = "drained" if units else "empty"
                return out
            try:
                P.put_hold(client, u, units)
            except P.PlacementHTTPError as e:
                if e.status == 409:
                    out["moved"] = True
                    continue  # an allocation (or a hold) came in between: read again
                raise
            out["action"] = "drained"
            return out
        if check_mode:
            out["action"] = "drained"
            return out
        try:
            r = client.call("PUT", "/resource_providers/%s/inventories" % u,
                            {"inventories": _drained_invs(invs), "resource_provider_generation": gen})
        except P.PlacementHTTPError as e:
            if e.status == 409 and e.code == "placement.concurrent_update":
                out["moved"] = True
                continue  # something was written in between (an allocation?): read again
            raise
        P.shaped(r, "PUT", "/resource_providers/%s/inventories" % u, resource_provider_generation=int)
        # the mark right after the drain: a run killed in between leaves an unmarked drain, which is never lifted
        out.update(action="drained", generation=_set_mark(client, u, True, retries))
        return out
    out.update(action="refused", reason="its generation kept moving (%d conflicts): left alone" % (retries + 1))
    return out


def release_one(client, item, retries, check_mode):
    u = item["uuid"]
    out = {"uuid": u, "name": item.get("name") or u, "card": item.get("card"), "action": "unchanged", "reason": None,
           "moved": False, "generation": None, "allocations": [], "held": None}
    if P.read_hold(client, u)["resources"]:  # a unit Nova or Cyborg reports, drained by a hold
        if not check_mode:
            P.release_hold(client, u)
        out["action"] = "released"
        return out
    for _attempt in range(retries + 1):
        cur = _read_inventories(client, u)
        out["generation"] = cur["resource_provider_generation"]
        invs = cur["inventories"]
        if not P.is_drained(invs):
            return out
        if check_mode:
            out["action"] = "released"
            return out
        # the mark goes first: a run killed before the undrain leaves an unmarked drain (never lifted by a run),
        # not a marked provider that an operator's later drain would inherit the mark of
        if _set_mark(client, u, False, retries) != cur["resource_provider_generation"]:
            continue  # the traits write moved the generation: read the inventories again
        new = {}
        for rc, inv in invs.items():
            new[rc] = dict(inv, reserved=0)
        try:
            r = client.call("PUT", "/resource_providers/%s/inventories" % u,
                            {"inventories": new, "resource_provider_generation": cur["resource_provider_generation"]})
        except P.PlacementHTTPError as e:
            if e.status == 409 and e.code == "placement.concurrent_update":
                continue
            raise
        path = "/resource_providers/%s/inventories" % u
        out.update(action="released", generation=P.shaped(r, "PUT", path, resource_provider_generation=int)[
            "resource_provider_generation"])
        return out
    out.update(reason="its generation kept moving: left drained")
    return out


def lift_one(client, item, retries, check_mode):
    """Lift the drain a killed run of the collection left on one provider, or leave it and say why
    (model.left_drain decides, as for the accelerator_host role's own drains)."""
    u = item["uuid"]
    out = {"uuid": u, "name": item.get("name") or u, "card": item.get("card"), "action": "unchanged", "reason": None,
           "moved": False, "generation": None, "allocations": [], "held": None}
    held = P.read_hold(client, u)["resources"]
    allocs = client.read("/resource_providers/%s/allocations" % u, resource_provider_generation=int, allocations=dict)
    others = sorted(c for c in allocs["allocations"] if c != P.hold_consumer(u))
    invs = _read_inventories(client, u)["inventories"]
    traits = _read_traits(client, u)
    out.update(generation=traits["resource_provider_generation"], held=held or None, allocations=others)
    decided = P.left_drain({"drained": bool(held) or P.is_drained(invs), "traits": traits["traits"], "held": held,
                            "in_use": bool(others)}, item.get("as_declared"))
    if decided is None:
        return out
    if decided[0] == "left":
        out.update(action="left", reason=decided[1])
        return out
    back = release_one(client, item, retries, check_mode)
    if back["action"] != "released":
        out.update(action="left", reason=back["reason"] or "not drained any more")
        return out
    out.update(action="lifted", reason=decided[1], generation=back["generation"])
    return out


class PlacementProviderDrainModule(OpenStackModule):
    argument_spec = dict(
        providers=dict(type="list", elements="dict", required=True, options=dict(
            uuid=dict(type="str", required=True), name=dict(type="str"), generation=dict(type="int"),
            card=dict(type="str"), as_declared=dict(type="bool", default=False))),
        state=dict(type="str", choices=["drained", "released", "lifted"], default="drained"),
        conflict_retries=dict(type="int", default=5),
        **RETRY_ARGUMENT_SPEC
    )
    module_kwargs = dict(supports_check_mode=True,
                         ranges={"conflict_retries": (0, 100), "providers.generation": (0, None)})

    def run(self):
        p = self.params
        try:
            adapter = P.discover(self.conn, p["request_retries"], p["request_retry_delay"])[0]
            client = P.Client(adapter, read_only=self.ansible.check_mode, retries=p["request_retries"],
                              retry_delay=p["request_retry_delay"])
            one = {"drained": drain_one, "released": release_one, "lifted": lift_one}[p["state"]]
            results = [one(client, item, p["conflict_retries"], self.ansible.check_mode) for item in p["providers"]]
            if p["state"] == "drained":
                refused_cards = set(r["card"] for r in results if r["action"] == "refused" and r["card"])
                for r in results:
                    if r["card"] in refused_cards and r["action"] == "drained":
                        back = release_one(client, r, p["conflict_retries"], self.ansible.check_mode)
                        r.update(action="undone", generation=back["generation"],
                                 reason="another provider of card %s was refused" % r["card"])
        except (P.PlacementInputError, P.PlacementHTTPError, ServiceUnavailable) as e:
            self.ansible.fail_json(msg=str(e))
        changed = any(r["action"] in ("drained", "released", "undone", "lifted") for r in results)
        self.ansible.exit_json(
            changed=changed, providers=results,
            drained=[r["name"] for r in results if r["action"] == "drained"],
            refused=["%s: %s" % (r["name"], r["reason"]) for r in results if r["action"] == "refused"],
            lifted=[r["name"] for r in results if r["action"] == "lifted"],
            left=["%s: %s" % (r["name"], r["reason"]) for r in results if r["action"] == "left"],
            requests=client.requests)


def main():
    PlacementProviderDrainModule()()


if __name__ == "__main__":
    main()
