# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cyborg device profiles: validation with Cyborg's own rules (and the gaps where Cyborg answers 500 or
accepts what Placement later refuses), the friendlier group form, comparison, Cyborg's error bodies, and
the check of a profile against Placement's allocation candidates.

Controller side. Requests go through the SDK's accelerator proxy (a keystoneauth adapter), one at a
time and counted. See docs/device_profiles.md.
"""

from __future__ import annotations

import json
import re
import time

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    REQUEST_RETRIES, REQUEST_RETRY_DELAY, TRANSIENT_STATUS, ServiceClient, permission_hint)

# Cyborg's API microversion: 2.0 has everything used here (the name filter on the list, POST, DELETE).
MICROVERSION = "2.0"

# -- Cyborg's rules (cyborg/api/controllers/v2/device_profiles.py, 17.0.0) -------------------------------
NAME_RE = re.compile(r"^[a-zA-Z0-9-_]+$")
KEY_PREFIXES = ("resources:", "trait:", "accel:")
CYBORG_RESOURCE_CLASSES = ("FPGA", "GPU", "VGPU", "PGPU")
TRAIT_VALUES = ("required", "forbidden")
# ... and where we are stricter: Cyborg stores these but they break later (MySQL column sizes, Placement's
# name rule for traits and resource classes, a request group without resources, a count of 0).
MAX_NAME = 255
_COUNT_RE = re.compile(r"^[0-9]+$")

# The friendly group form. Its family words, their resource classes, vendor names and the traits a family's vendor
# and function ids become are the families' (their drivers' Cyborg hooks).
FRIENDLY_KEYS = ("family", "resource_class", "count", "vendor", "function", "function_id", "traits",
                 "forbidden_traits", "accel")


class CyborgInputError(ValueError):
    """Bad module input: the message names the option and the accepted form."""


class CyborgHTTPError(Exception):
    def __init__(self, method, path, status, body, operation=None):
        self.method = method
        self.path = path
        self.status = status
        self.body = body
        self.operation = operation
        self.fault = fault_text(body)
        Exception.__init__(self, "Cyborg answered HTTP %s to %s %s: %s" % (status, method, path, self.fault))


def fault_text(body):
    """The message in a Cyborg error body, which is a JSON string inside a JSON object:
    ``{"error_message": "{\\"faultstring\\": \\"...\\", ...}"}``. Any other body is returned stripped."""
    text = body if isinstance(body, str) else json.dumps(body)
    try:
        outer = json.loads(text) if isinstance(body, str) else body
    except ValueError:
        return text.strip()[:500] or "no details"
    if isinstance(outer, dict) and isinstance(outer.get("errors"), list) and outer["errors"]:
        first = outer["errors"][0] if isinstance(outer["errors"][0], dict) else {}
        detail = first.get("detail") or first.get("title")
        if detail:   # Placement's form: the last paragraph of the detail is the message
            return [x for x in str(detail).split("\n") if x.strip()][-1].strip()
    if isinstance(outer, dict):
        inner = outer.get("error_message", outer)
        if isinstance(inner, str):
            try:
                inner = json.loads(inner)
            except ValueError:
                return inner.strip() or "no details"
        if isinstance(inner, dict):
            for key in ("faultstring", "message", "detail", "title"):
                if inner.get(key):
                    return str(inner[key]).strip()
    return text.strip()[:500] or "no details"


# -- validation -----------------------------------------------------------------------------------------------
def check_name(name, option="name"):
    if not isinstance(name, str) or not name:
        raise CyborgInputError("%s: a device profile needs a name (letters, digits, '-' and '_'); Cyborg answers "
                               "HTTP 500 without one" % option)
    if not NAME_RE.match(name):
        raise CyborgInputError("%s: %r is not a valid device profile name: Cyborg accepts only letters, digits, "
                               "'-' and '_' (^[a-zA-Z0-9-_]+$)" % (option, name))
    if len(name) > MAX_NAME:
        raise CyborgInputError("%s: the name is %d characters long; Cyborg's column holds %d"
                               % (option, len(name), MAX_NAME))
    return name


def check_description(description, option="description"):
    if description is None:
        return None
    if not isinstance(description, str):
        raise CyborgInputError("%s: expected a string, got %s" % (option, type(description).__name__))
    return description


def _check_custom(name, what, where):
    if not _naming.is_valid(name):
        raise CyborgInputError("%s: %r is not a valid custom %s: it must be CUSTOM_ followed by upper-case letters, "
                               "digits and '_' (at most 255 characters), e.g. %s"
                               % (where, name, what, _suggest(name)))


def _suggest(name):
    try:
        return _naming.custom(name)
    except ValueError:
        return "CUSTOM_MY_NAME"


def check_resource(key, value, where):
    rc = key[len("resources:"):]
    if rc not in CYBORG_RESOURCE_CLASSES:
        if not rc.startswith("CUSTOM_"):
            raise CyborgInputError("%s: resource class %r is not one Cyborg supports: use %s or a custom class "
                                   "(CUSTOM_...)" % (where, rc, ", ".join(CYBORG_RESOURCE_CLASSES)))
        _check_custom(rc, "resource class", where)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise CyborgInputError("%s: the count of %s must be a whole number (e.g. \"1\"), got %r" % (where, rc, value))
    text = str(value)
    if not _COUNT_RE.match(text):
        raise CyborgInputError("%s: the count of %s must be a whole number written with digits only (e.g. \"1\"), "
                               "got %r" % (where, rc, value))
    if int(text) < 1:
        raise CyborgInputError("%s: the count of %s must be at least 1 (Placement cannot ask for 0 of a class), "
                               "got %r" % (where, rc, value))
    return str(int(text))


def check_trait(key, value, where):
    trait = key[len("trait:"):]
    if not trait.startswith("CUSTOM_"):
        raise CyborgInputError("%s: trait %r must be a custom trait (CUSTOM_...): Cyborg accepts no other"
                               % (where, trait))
    _check_custom(trait, "trait", where)
    if value not in TRAIT_VALUES:
        raise CyborgInputError("%s: the value of %s must be 'required' or 'forbidden' (lower case), got %r"
                               % (where, key, value))
    return value


def check_accel(key, value, where):
    attr = key[len("accel:"):]
    if not attr:
        raise CyborgInputError("%s: %r names no attribute (accel:<attribute>, e.g. accel:bitstream_id)" % (where, key))
    if not isinstance(value, str) or not value:
        raise CyborgInputError("%s: the value of %s must be a non-empty string, got %r" % (where, key, value))
    return value


def check_raw_group(group, where):
    """One group in Cyborg's own form: ``{"resources:FPGA": "1", "trait:CUSTOM_X": "required", ...}``.
    Returns it with every value a string, as Cyborg stores it."""
    if not isinstance(group, dict):
        raise CyborgInputError("%s: a group must be a mapping of resources:/trait:/accel: keys to values, got %s "
                               "(Cyborg answers HTTP 500 to that)" % (where, type(group).__name__))
    if not group:
        raise CyborgInputError("%s: the group is empty: it needs at least one resources:<CLASS> key" % where)
    out = {}
    for key in sorted(group):
        value = group[key]
        if not isinstance(key, str) or not key.startswith(KEY_PREFIXES):
            raise CyborgInputError("%s: key %r must start with resources:, trait: or accel: (Cyborg's rule "
                                   "^(resources:|trait:|accel:))" % (where, key))
        if key.startswith("resources:"):
            out[key] = check_resource(key, value, where)
        elif key.startswith("trait:"):
            out[key] = check_trait(key, value, where)
        else:
            out[key] = check_accel(key, value, where)
    if not any(k.startswith("resources:") for k in out):
        raise CyborgInputError("%s: the group has no resources:<CLASS> key; Placement needs resources in every "
                               "request group (Cyborg stores it, but no server could ever be scheduled)" % where)
    return out


def _str_list(value, where):
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CyborgInputError("%s: expected a list of trait names" % where)
    return value


def _trait_name(text, where):
    if text.startswith("CUSTOM_"):
        _check_custom(text, "trait", where)
        return text
    try:
        return _naming.custom(text)
    except ValueError:
        raise CyborgInputError("%s: %r gives no usable trait name" % (where, text))


def _registry():
    # the drivers' registry, imported on first use: a profile in Cyborg's own form loads no driver
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers  # pylint: disable=import-outside-toplevel
    return _drivers


def friendly_group(group, where):
    """The friendly form of a group, turned into Cyborg's form. Keys:

    - ``family`` (fpga, gpu/pgpu, vgpu, qat) or ``resource_class`` (FPGA, GPU, VGPU, PGPU, CUSTOM_*);
    - ``count`` (default 1);
    - ``function``: ``trait:CUSTOM_FUNCTION_<NAME>`` (what placement_provider_tree publishes for
      ``function_names``); ``function_id`` (FPGAs): Cyborg's ``CUSTOM_FPGA_FUNCTION_ID_<VENDOR>_<ID>``;
    - ``vendor``: for FPGAs Cyborg's ``CUSTOM_FPGA_<VENDOR>``, otherwise ``CUSTOM_VENDOR_<PCI vendor id>``
      (a name such as nvidia is turned into its id, a 4-digit hex id is taken as it is);
    - ``traits`` / ``forbidden_traits``: more traits (names are made CUSTOM_ like _naming does);
    - ``accel``: ``{attribute: value}`` for ``accel:<attribute>`` keys.
    """
    unknown = sorted(k for k in group if k not in FRIENDLY_KEYS)
    if unknown:
        raise CyborgInputError("%s: unknown key(s) %s; the friendly form takes %s, Cyborg's form takes "
                               "resources:/trait:/accel: keys (the two cannot be mixed in one group)"
                               % (where, ", ".join(map(str, unknown)), ", ".join(FRIENDLY_KEYS)))
    family = group.get("family")
    rc = group.get("resource_class")
    if family is not None and rc is not None:
        raise CyborgInputError("%s: give family or resource_class, not both" % where)
    drv = None    # the family's driver: what its vendor names and function ids become
    if family is not None:
        words = _registry().cyborg_profile_families()
        fam = str(family).lower()
        if fam not in words:
            raise CyborgInputError("%s: family %r is not one of %s (or give resource_class)"
                                   % (where, family, ", ".join(sorted(words))))
        drv = words[fam]
        rc = drv.cyborg_profile_classes[fam]
    elif rc is None:
        raise CyborgInputError("%s: the friendly form needs family (%s) or resource_class"
                               % (where, ", ".join(sorted(_registry().cyborg_profile_families()))))
    elif group.get("vendor") is not None or group.get("function_id") is not None:
        drv = next((d for w, d in sorted(_registry().cyborg_profile_families().items())
                    if d.cyborg_profile_classes[w] == str(rc)), None)
    count = group.get("count", 1)
    raw = {"resources:%s" % rc: count}
    vendor = group.get("vendor")
    if vendor is not None:
        v = str(vendor).lower()
        if v.startswith("0x"):
            v = v[2:]
        pci_id = re.match(r"^[0-9a-f]{4}$", v)
        named = drv.cyborg_vendor_trait(v) if drv is not None and not pci_id else None
        if named:
            raw["trait:%s" % named] = "required"
        elif pci_id:
            raw["trait:%s" % _naming.trait("VENDOR", v)] = "required"
        else:
            vendors = _registry().pci_vendors()
            if v not in vendors:
                raise CyborgInputError("%s: vendor %r: give a PCI vendor id (4 hex digits) or one of %s"
                                       % (where, vendor, ", ".join(sorted(vendors))))
            raw["trait:%s" % _naming.trait("VENDOR", vendors[v])] = "required"
    if group.get("function") is not None:
        if not _naming.normalize(str(group["function"])):
            raise CyborgInputError("%s: function %r gives no usable trait name (it needs letters or digits)"
                                   % (where, group["function"]))
        raw["trait:%s" % _naming.function_trait(str(group["function"]))] = "required"
    if group.get("function_id") is not None:
        trait = drv.cyborg_function_trait(str(vendor), str(group["function_id"])) if drv and vendor is not None else None
        if trait is None:
            raise CyborgInputError("%s: function_id is Cyborg's FPGA function id: it needs family fpga and a vendor "
                                   "(for CUSTOM_FPGA_FUNCTION_ID_<VENDOR>_<ID>)" % where)
        raw["trait:%s" % trait] = "required"
    for t in _str_list(group.get("traits"), where + ".traits"):
        raw["trait:%s" % _trait_name(t, where + ".traits")] = "required"
    for t in _str_list(group.get("forbidden_traits"), where + ".forbidden_traits"):
        name = _trait_name(t, where + ".forbidden_traits")
        if raw.get("trait:" + name) == "required":
            raise CyborgInputError("%s: %s is both required and forbidden" % (where, name))
        raw["trait:%s" % name] = "forbidden"
    accel = group.get("accel") or {}
    if not isinstance(accel, dict):
        raise CyborgInputError("%s.accel: expected a mapping of attribute to value, e.g. {bitstream_id: ...}" % where)
    for k, v in accel.items():
        raw["accel:%s" % k] = v
    return check_raw_group(raw, where)


def is_friendly(group):
    """A group is in Cyborg's form as soon as one key has a ':' (resources:, trait:, accel:, or a typo of them)."""
    return isinstance(group, dict) and bool(group) and not any(isinstance(k, str) and ":" in k for k in group)


def normalize_groups(groups, option="groups"):
    """Groups as Cyborg stores them (a list of dicts of strings), from Cyborg's form or the friendly form.
    Raises CyborgInputError naming the group and the accepted form."""
    if not isinstance(groups, list) or not groups:
        raise CyborgInputError("%s: a device profile needs a non-empty list of groups (each a mapping such as "
                               "{\"resources:FPGA\": \"1\", \"trait:CUSTOM_FUNCTION_GZIP\": \"required\"} or "
                               "{family: fpga, function: gzip}); Cyborg answers HTTP 500 without one" % option)
    out = []
    for i, g in enumerate(groups):
        where = "%s[%d]" % (option, i)
        if is_friendly(g):
            out.append(friendly_group(g, where))
        else:
            out.append(check_raw_group(g, where))
    return out


def desired_profile(name, description, groups):
    return {"name": check_name(name), "description": check_description(description),
            "groups": normalize_groups(groups)}


def canonical(profile):
    """The compared part of a profile: name, description ('' and None are the same) and groups (values as
    strings; the order of groups matters, it numbers the ARQs' groups)."""
    groups = []
    for g in profile.get("groups") or []:
        groups.append(dict((str(k), str(v)) for k, v in (g or {}).items()))
    return {"name": profile.get("name"), "description": profile.get("description") or "", "groups": groups}


def differences(current, desired, compare_description=True):
    """Fields that differ (name, description, groups) between a profile in Cyborg and the desired one."""
    a, b = canonical(current), canonical(desired)
    fields = ["groups"] + (["description"] if compare_description else [])
    return [f for f in fields if a[f] != b[f]]


def public(profile):
    """What modules return about a profile."""
    return {"uuid": profile.get("uuid") or profile.get("id"), "name": profile.get("name"),
            "description": profile.get("description"), "groups": canonical(profile)["groups"],
            "created_at": profile.get("created_at"), "updated_at": profile.get("updated_at")}


# -- HTTP -------------------------------------------------------------------------------------------------------
class Client(ServiceClient):
    """Cyborg over the SDK's accelerator proxy, counting requests; errors carry Cyborg's decoded message.

    A request that gets no answer (connection refused or dropped, timeout, version discovery failed) or a
    5xx is repeated up to ``retries`` times with growing pauses when that is safe: GETs; DELETE of a profile
    (a 404 on a repeat means the first one landed). The create (POST) is never blindly repeated: after no
    answer or a 5xx the profile is looked up by name (unique in Cyborg) and used when it is there with the
    wanted groups; only when it is absent is the POST sent again. Once the retries are spent the run fails
    with :class:`ServiceUnavailable` (Cyborg, the operation, the cause, what to do). A 500 that is a database
    constraint (a profile still used by accelerator requests) is not repeated: it will not go away.
    """

    service = "Cyborg"

    def __init__(self, adapter, microversion=MICROVERSION, retries=REQUEST_RETRIES, retry_delay=REQUEST_RETRY_DELAY,
                 sleep=time.sleep):
        ServiceClient.__init__(self, adapter, retries=retries, retry_delay=retry_delay, sleep=sleep)
        self.microversion = microversion

    def fault(self, resp):
        return fault_text(resp.text or "")

    def is_transient(self, status, resp):
        if status not in TRANSIENT_STATUS:
            return False
        text = (resp.text or "").upper()
        return not ("FOREIGN KEY" in text or "INTEGRITYERROR" in text)

    def http_error(self, method, path, status, resp, operation):
        return CyborgHTTPError(method, path, status, resp.text or "", operation)

    def call(self, method, path, body=None, ok=(200,), operation=None, retry=True):
        status, resp = self.send(method, path, body, operation=operation, retry=retry)
        return self.result(method, path, status, resp, ok, operation)

    def profiles(self, name=None):
        path = "/device_profiles" + ("?name=%s" % name if name else "")
        operation = "read device profile %s" % name if name else "list device profiles"
        return (self.call("GET", path, operation=operation) or {}).get("device_profiles") or []

    def profile(self, name):
        found = [p for p in self.profiles(name) if p.get("name") == name]
        return found[0] if found else None

    def create(self, desired):
        """POST the profile. After no answer or a 5xx, the profile is looked up by name before the POST is
        sent again: when it is there with the wanted groups, the lost answer's create landed."""
        body = {"name": desired["name"], "groups": desired["groups"]}
        if desired.get("description") is not None:
            body["description"] = desired["description"]
        operation = "create device profile %s" % desired["name"]
        waited = 0.0
        lost = False
        for attempt in range(len(self.pauses) + 1):
            # never a uuid: Cyborg makes one (a client-chosen one can clash with its table)
            status, resp = self.send_once("POST", "/device_profiles", [body])
            if status is not None and not self.is_transient(status, resp):
                if status == 409 and lost:   # an earlier attempt landed after all
                    found = self._landed(desired, operation)
                    if found is not None:
                        return found
                return self.result("POST", "/device_profiles", status, resp, (201, 200), operation)
            lost = True
            if attempt == len(self.pauses):
                raise self.unavailable(operation, "POST", "/device_profiles", status, resp, attempt + 1, waited)
            self.retried += 1
            self.sleep(self.pauses[attempt])
            waited += self.pauses[attempt]
            found = self._landed(desired, operation)
            if found is not None:
                return found
        raise AssertionError("unreachable")

    def _landed(self, desired, operation):
        """The profile when a create whose answer was lost did land (same name and groups), else None; a
        profile of that name with other groups (made meanwhile by someone else) is a conflict."""
        found = self.profile(desired["name"])
        if found is None:
            return None
        if differences(found, desired, compare_description=desired.get("description") is not None):
            raise CyborgHTTPError("POST", "/device_profiles", 409, json.dumps({"error_message": json.dumps({
                "faultstring": "after a create whose answer was lost, a profile named %s is there with other "
                               "groups or description than this run's" % desired["name"]})}), operation)
        return found

    def delete(self, uuid, name=None):
        """DELETE the profile; 404 (gone already, or a repeat after a lost answer) is success."""
        return self.call("DELETE", "/device_profiles/%s" % uuid, ok=(204, 200, 404),
                         operation="delete device profile %s" % (name or uuid))

    def arqs_using(self, name):
        arqs = (self.call("GET", "/accelerator_requests", operation="list accelerator requests (ARQs)")
                or {}).get("arqs") or []
        return [a for a in arqs if a.get("device_profile_name") == name]


def explain(error, action):
    """A message for a Cyborg error: the service, the operation, what Cyborg said and what it most likely means.
    ``action`` says what the module was doing (e.g. "device profile gzip")."""
    hint = ""
    if error.status == 403:
        hint = (" - %s: Cyborg's policy lets only admins create and delete device profiles "
                "(cyborg:device_profile:create / delete)" % permission_hint("Cyborg", 403))
    elif error.status == 401:
        hint = " - the credentials were not accepted: %s" % permission_hint("Cyborg", 401)
    elif error.status == 409:
        hint = " - a profile with that name exists already (created meanwhile by someone else?)"
    elif error.status == 500 and "FOREIGN KEY" in error.fault.upper():
        hint = " - accelerator requests still use the profile"
    op = " (%s %s, to %s)" % (error.method, error.path, error.operation) if error.operation else ""
    return "%s: Cyborg answered HTTP %s%s: %s%s" % (action, error.status, op, error.fault, hint)


# -- satisfiability ---------------------------------------------------------------------------------------------
def candidate_query(groups, limit=None):
    """Placement's GET /allocation_candidates query for a profile's groups: one numbered request group per
    device profile group (resources + required traits, forbidden as ``!TRAIT``), ``group_policy=none``."""
    parts = []
    for i, g in enumerate(groups, 1):
        res = sorted("%s:%s" % (k[len("resources:"):], v) for k, v in g.items() if k.startswith("resources:"))
        req = sorted(k[len("trait:"):] for k, v in g.items() if k.startswith("trait:") and v == "required")
        forb = sorted("!" + k[len("trait:"):] for k, v in g.items() if k.startswith("trait:") and v == "forbidden")
        parts.append("resources%d=%s" % (i, ",".join(res)))
        if req or forb:
            parts.append("required%d=%s" % (i, ",".join(req + forb)))
    if len(groups) > 1:
        parts.append("group_policy=none")
    if limit:
        parts.append("limit=%d" % int(limit))
    return "/allocation_candidates?" + "&".join(parts)


def satisfiability(placement, groups, names=None, limit=None):
    """Ask Placement (a _placement.Client) for candidates: ``{count, hosts, providers, query}``. ``names`` maps
    provider uuids to names (read once per run by the caller); hosts are the roots' names."""
    query = candidate_query(groups, limit)
    body = placement.get(query) or {}
    reqs = body.get("allocation_requests") or []
    summaries = body.get("provider_summaries") or {}
    names = names or {}
    providers = set()
    for r in reqs:
        providers.update((r.get("allocations") or {}).keys())
    roots = set()
    for p in providers:
        root = (summaries.get(p) or {}).get("root_provider_uuid") or p
        roots.add(root)
    return {"count": len(reqs), "query": query,
            "hosts": sorted(names.get(r, r) for r in roots),
            "providers": sorted(names.get(p, p) for p in providers)}
