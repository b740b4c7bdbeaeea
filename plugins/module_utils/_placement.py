# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Placement for accelerators: from discovery records to a desired provider tree, and a converger that
writes only the difference, with ownership, drain, pruning and generation-conflict handling.

Controller side (runs where openstacksdk runs). The HTTP calls go through the SDK's Placement proxy
(a keystoneauth adapter), one request at a time, each counted, so callers can report how many requests a
run cost. See docs/placement.md for the model and the request budget.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import tempfile
import time
import uuid as uuidlib

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming

MICROVERSION = "1.39"          # the newest Placement 16.0.0 serves; 1.26 (reserved == total) is the minimum
MIN_MICROVERSION = (1, 26)
OWNER_TRAIT = "CUSTOM_OWNER_ACCELOPS"
FOREIGN_OWNER_TRAITS = ("OWNER_CYBORG", "OWNER_NOVA")
# Traits this module manages on providers it owns: what it sets now, and what it set before and must be
# able to take away (a function that changed, a NUMA node that moved). Everything else on its providers
# (an operator's CUSTOM_GOLD, a standard trait added by hand) is left as it is.
MANAGED_TRAIT_PREFIXES = (OWNER_TRAIT, "CUSTOM_ACCELERATOR_", "CUSTOM_VENDOR_", "CUSTOM_PRODUCT_",
                          "CUSTOM_PROGRAMMING_", "CUSTOM_NUMA_NODE_", "CUSTOM_FPGA_", "CUSTOM_FUNCTION_")
# The function traits: what the programming side may add or remove on a provider Cyborg or Nova owns.
FUNCTION_TRAIT_PREFIXES = ("CUSTOM_FUNCTION_", "CUSTOM_FPGA_FUNCTION_ID_")

STANDARD_RESOURCE_CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB", "PCI_DEVICE", "SRIOV_NET_VF", "NUMA_SOCKET",
                             "NUMA_CORE", "NUMA_THREAD", "NUMA_MEMORY_MB", "IPV4_ADDRESS", "VGPU",
                             "VGPU_DISPLAY_HEAD", "NET_BW_EGR_KILOBIT_PER_SEC", "NET_BW_IGR_KILOBIT_PER_SEC",
                             "PCPU", "MEM_ENCRYPTION_CONTEXT", "FPGA", "PGPU", "NET_PACKET_RATE_KILOPACKET_PER_SEC",
                             "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC", "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC")
try:  # the authoritative lists when the controller has them (requirements.txt lists both)
    import os_resource_classes as _orc
    STANDARD_RESOURCE_CLASSES = tuple(_orc.STANDARDS)
except ImportError:  # pragma: no cover
    pass
try:
    import os_traits as _os_traits
    STANDARD_TRAITS = frozenset(_os_traits.get_traits())
except ImportError:  # pragma: no cover
    STANDARD_TRAITS = None

try:  # keystoneauth (openstacksdk's HTTP layer): the errors that mean "no answer came back"
    from keystoneauth1 import exceptions as _ksa_exc
    _NO_ANSWER_ERRORS = (_ksa_exc.ConnectFailure, _ksa_exc.ConnectTimeout, _ksa_exc.UnknownConnectionError,
                         _ksa_exc.DiscoveryFailure)
    _NOT_TRANSIENT = (_ksa_exc.SSLError,)
except ImportError:  # pragma: no cover
    _NO_ANSWER_ERRORS = ()
    _NOT_TRANSIENT = ()

# Bounded retries of requests that got no answer or a 5xx (docs/placement.md, "Faults"): the defaults give
# up after 4 retries, 0.5 + 1 + 2 + 4 = 7.5 s of waiting, which covers a Placement restart.
REQUEST_RETRIES = 4
REQUEST_RETRY_DELAY = 0.5
RETRY_DELAY_CAP = 8.0
TRANSIENT_STATUS = (500, 502, 503, 504)
# A request with no answer for this long is given up (and retried) when the connection sets no api_timeout.
REQUEST_TIMEOUT = 60.0

INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
_STANDARD_TRAIT_FORM = re.compile(r"^[A-Z][A-Z0-9_]*$")


class PlacementInputError(ValueError):
    """Bad module input: the message names the option and the accepted form."""


class PlacementHTTPError(Exception):
    def __init__(self, method, path, status, body):
        self.method, self.path, self.status, self.body = method, path, status, body
        self.code = None
        detail = body
        try:
            err = json.loads(body)["errors"][0]
            self.code = err.get("code")
            detail = (err.get("detail") or err.get("title") or body).strip().replace("\n\n", " ").replace("\n", " ")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            pass
        if status == 401:
            hint = " (authentication failed: Placement did not accept the credentials; check auth and auth_type)"
        elif status == 403:
            hint = (" (permission denied: the identity lacks the role Placement's policy requires; use credentials "
                    "with the admin role)")
        else:
            hint = ""
        Exception.__init__(self, "Placement %s %s: HTTP %s%s%s: %s" % (
            method, path, status, " " + self.code if self.code else "", hint, detail[:500]))


class PlacementConnectionError(Exception):
    """Placement did not answer (connection refused or dropped, timed out) or kept answering 5xx, after the
    bounded retries. The message names Placement, the request, the cause and how long it tried."""

    def __init__(self, method, path, cause, attempts, waited):
        self.method, self.path, self.cause, self.attempts = method, path, cause, attempts
        Exception.__init__(self, "Placement %s %s: %s (%d attempt%s, %.1f s of retries); check that Placement is "
                                 "running and reachable, then run again: the run is safe to repeat"
                           % (method, path, cause, attempts, "" if attempts == 1 else "s", waited))


def check_retry_options(retries, delay):
    """request_retries and request_retry_delay: bounded, so a run always ends."""
    if not 0 <= retries <= 20:
        raise PlacementInputError("request_retries: must be between 0 and 20, got %r" % retries)
    if not 0 <= delay <= 60:  # NaN compares false: refused too
        raise PlacementInputError("request_retry_delay: must be a number of seconds between 0 and 60, got %r" % delay)


def retry_delays(retries, delay):
    """The pauses between attempts: ``delay`` doubled each time, at most RETRY_DELAY_CAP each."""
    return [min(delay * (2 ** i), RETRY_DELAY_CAP) for i in range(max(retries, 0))]


def no_answer_cause(error):
    """A one-line cause when ``error`` means that no answer came back (else None)."""
    if _NO_ANSWER_ERRORS and isinstance(error, _NO_ANSWER_ERRORS) and not isinstance(error, _NOT_TRANSIENT):
        text = str(error).strip().replace("\n", " ")
        return "no answer: %s: %s" % (type(error).__name__, text[:300])
    return None


def discover(conn, retries=REQUEST_RETRIES, delay=REQUEST_RETRY_DELAY, sleep=time.sleep):
    """The SDK's Placement proxy and its endpoint (version discovery: ``GET /``), retried like a request;
    PlacementConnectionError when Placement cannot be reached."""
    pauses = retry_delays(retries, delay)
    waited = 0.0
    for attempt in range(len(pauses) + 1):
        try:
            adapter = conn.placement
            return adapter, adapter.get_endpoint()
        except Exception as e:  # pylint: disable=broad-except
            cause = no_answer_cause(e)
            if cause is None:
                raise
            if attempt == len(pauses):
                raise PlacementConnectionError("GET", "/ (version discovery)", cause, attempt + 1, waited)
            sleep(pauses[attempt])
            waited += pauses[attempt]
    raise AssertionError("unreachable")


# -- names and validation --------------------------------------------------------------------------------
def provider_name(host, address):
    """Cyborg's naming: ``<host>_<address>``."""
    return "%s_%s" % (host, address)


def provider_uuid(name):
    """Cyborg's provider uuid: ``uuid3(NAMESPACE_DNS, name)``."""
    return str(uuidlib.uuid3(uuidlib.NAMESPACE_DNS, name))


def check_trait(name, option):
    """A trait name Placement accepts: a standard trait (os-traits) or ``CUSTOM_[A-Z0-9_]+`` (255 max)."""
    if not isinstance(name, str) or not name:
        raise PlacementInputError("%s: a trait must be a non-empty string, got %r" % (option, name))
    if _naming.is_valid(name):
        return name
    if not name.startswith(_naming.PREFIX) and _STANDARD_TRAIT_FORM.match(name) and \
            (STANDARD_TRAITS is None or name in STANDARD_TRAITS):
        return name
    try:
        suggestion = _naming.custom(name)
    except ValueError:
        suggestion = None
    raise PlacementInputError(
        "%s: %r is not a valid trait: use a standard trait (os-traits) or CUSTOM_ followed by upper-case "
        "letters, digits and underscores, at most %d characters%s"
        % (option, name, _naming.MAX_LENGTH, " (for example %s)" % suggestion if suggestion else ""))


def check_resource_class(name, option):
    """A standard resource class (os-resource-classes) or ``CUSTOM_[A-Z0-9_]+``."""
    if isinstance(name, str) and (name in STANDARD_RESOURCE_CLASSES or _naming.is_valid(name)):
        return name
    try:
        suggestion = _naming.custom(name) if isinstance(name, str) else None
    except ValueError:
        suggestion = None
    raise PlacementInputError(
        "%s: %r is not a resource class Placement knows: use a standard class (FPGA, PGPU, VGPU, SRIOV_NET_VF, "
        "PCI_DEVICE, ...) or CUSTOM_ followed by upper-case letters, digits and underscores%s"
        % (option, name, " (for example %s)" % suggestion if suggestion else ""))


def safe_trait(name, *fallback_parts):
    """``name`` when valid, else the normalised custom trait built from ``fallback_parts`` (or ``name``)."""
    if isinstance(name, str) and _naming.is_valid(name):
        return name
    parts = fallback_parts or (name,)
    return _naming.custom(*parts)


def is_managed_trait(trait, extra=()):
    return trait in extra or any(trait == p or (p.endswith("_") and trait.startswith(p))
                                 for p in MANAGED_TRAIT_PREFIXES)


def is_function_trait(trait):
    return any(trait.startswith(p) for p in FUNCTION_TRAIT_PREFIXES)


def inventory(total, reserved=0, min_unit=1, max_unit=None, step_size=1, allocation_ratio=1.0):
    total = int(total)
    return {"total": total, "reserved": int(reserved), "min_unit": int(min_unit),
            "max_unit": int(max_unit if max_unit is not None else max(total, 1)), "step_size": int(step_size),
            "allocation_ratio": float(allocation_ratio)}


def same_inventories(a, b):
    if set(a) != set(b):
        return False
    for rc in a:
        for f in INVENTORY_FIELDS:
            x, y = a[rc].get(f), b[rc].get(f)
            if f == "allocation_ratio":
                if abs(float(x if x is not None else 1.0) - float(y if y is not None else 1.0)) > 1e-6:
                    return False
            elif x != y:
                return False
    return True


def is_drained(invs):
    """Drained: it has inventory and every class has ``reserved >= total`` (nothing can be scheduled)."""
    return bool(invs) and all(i.get("reserved", 0) >= i.get("total", 0) for i in invs.values())


def keep_drain(current, wanted):
    """``wanted`` with ``reserved = total`` on every class when ``current`` (what Placement has now) is
    drained: someone drained the provider (an operator, another run) and the write must not undo it."""
    if not wanted or not is_drained(current):
        return wanted
    out = copy.deepcopy(wanted)
    for inv in out.values():
        inv["reserved"] = inv["total"]
    return out


# -- from discovery records to desired providers -----------------------------------------------------------
def _records(discovery, option):
    if isinstance(discovery, list):
        return discovery
    if isinstance(discovery, dict):
        recs = discovery.get("accelerators")
        if isinstance(recs, list):
            return recs
    raise PlacementInputError("%s: expected the result of accelerator_info (a dict with an 'accelerators' list) "
                              "or a list of discovery records" % option)


def discovery_hostname(discovery):
    if isinstance(discovery, dict):
        host = discovery.get("host")
        if isinstance(host, dict):
            return host.get("hostname")
    return None


def _function_traits(rec, fn, function_names):
    """The traits of a loaded function: the discovery's own trait (made valid), and the friendly
    ``CUSTOM_FUNCTION_<NAME>`` when the declaration names the function id."""
    if not fn:
        return []
    out = []
    fid = fn.get("id")
    vendor = ((rec.get("fpga") or {}).get("vendor") or rec.get("vendor_id") or "")
    if fn.get("trait"):
        out.append(safe_trait(fn["trait"]))
    elif fid and rec.get("family") == "fpga":
        out.append(_naming.fpga_function_trait(vendor, fid))
    elif _naming.discovered_function_trait(fn.get("name"), fid):
        out.append(_naming.discovered_function_trait(fn.get("name"), fid))
    friendly = None
    if function_names:
        for key in (fid, fn.get("name")):
            if key is not None and str(key) in function_names:
                friendly = function_names[str(key)]
                break
    if friendly:
        out.append(_naming.function_trait(friendly))
    return out


def _common_traits(rec):
    t = [OWNER_TRAIT]
    fam = rec.get("family")
    if fam:
        t.append(_naming.family_trait(fam))
    vid, did = rec.get("vendor_id"), rec.get("device_id")
    if vid:
        t.append(_naming.trait("VENDOR", vid))
        if did:
            t.append(_naming.trait("PRODUCT", vid, did))
    if rec.get("programming_model"):
        t.append(_naming.programming_model_trait(rec["programming_model"]))
    numa = rec.get("numa_node")
    if isinstance(numa, int) and numa >= 0:
        t.append(_naming.trait("NUMA_NODE", str(numa)))
    fpga = rec.get("fpga") or {}
    if fam == "fpga" and fpga.get("vendor"):
        t.append(_naming.trait("FPGA", fpga["vendor"]))  # Cyborg's CUSTOM_FPGA_INTEL / CUSTOM_FPGA_XILINX
    return t


def _units_of_type(rec, kind, utype=None):
    return [u for u in rec.get("units") or [] if u.get("kind") == kind and (utype is None or u.get("type") == utype)]


def _device_specs(rec, addresses, function_names):
    """[(address, resource_class or None, total, traits, note)] for one discovery record."""
    fam = rec.get("family")
    addr = rec.get("address")
    physfn = rec.get("physfn")
    model = rec.get("programming_model")
    fn = rec.get("function")
    sriov = rec.get("sriov") or {}
    base = _common_traits(rec)
    ftraits = _function_traits(rec, fn, function_names)
    if fam in ("nic", "qat", "gpu") and physfn and physfn in addresses:
        return []  # a VF of a PF that is itself reported: the PF's provider is the pool
    if fam == "gpu":
        gpu = rec.get("gpu") or {}
        types = gpu.get("mdev_types") or []
        vgpu_vfs = gpu.get("vgpu_vfs") or []
        if types or vgpu_vfs or (gpu.get("vgpu") is not None) or model == "single":
            if not fn:
                return [(addr, None, 0, base, "single-program card with no vGPU type chosen: no inventory")]
            fid = fn.get("id")
            if vgpu_vfs:
                total = sum(1 for v in vgpu_vfs if (v.get("current_type") or {}).get("id") == fid)
            elif gpu.get("vgpu") is not None:
                total = 1
            else:
                avail = sum(int(t.get("available_instances") or 0) for t in types if t.get("id") == fid)
                total = avail + len(_units_of_type(rec, "mdev", fid))
            return [(addr, "VGPU", total, base + ftraits, None)]
        return [(addr, "PGPU", 1, base, None)]
    if fam == "fpga":
        fpga = rec.get("fpga") or {}
        regions = fpga.get("regions") or []
        ports = fpga.get("ports") or []
        if model == "dynamic":
            # each partial-reconfiguration region is schedulable on its own, programmed or not
            if len(regions) <= 1:
                rtraits = [safe_trait(r["trait"]) for r in regions if r.get("trait")]
                return [(addr, "FPGA", 1, base + rtraits + ftraits, None)]
            out = []
            for i, r in enumerate(regions):
                rfn = None
                if i < len(ports) and ports[i].get("afu_id"):
                    rfn = {"id": ports[i]["afu_id"]}
                rt = [safe_trait(r["trait"])] if r.get("trait") else []
                out.append(("%s_%s" % (addr, _naming.normalize(r.get("id") or str(i)).lower()), "FPGA", 1,
                            base + rt + _function_traits(rec, rfn, function_names), None))
            return out
        rtraits = [safe_trait(r["trait"]) for r in regions if r.get("trait")]
        if not fn:
            return [(addr, None, 0, base + rtraits, "single-program card with no function loaded: no inventory")]
        slots = fpga.get("slots") or 1
        return [(addr, "FPGA", int(slots), base + rtraits + ftraits, None)]
    if fam == "nic":
        n = int(sriov.get("numvfs") or 0)
        if physfn:
            n = 1
        if n <= 0:
            return [(addr, None, 0, base, "no VFs created: no inventory")]
        return [(addr, "SRIOV_NET_VF", n, base, None)]
    if fam == "qat":
        if model == "single" and not fn:
            return [(addr, None, 0, base, "no services configured: no inventory")]
        n = int(sriov.get("numvfs") or 0) if not physfn else 1
        return [(addr, "CUSTOM_QAT", n if n > 0 else 1, base + ftraits, None)]
    # generic passthrough: Nova's own class form
    try:
        rc = _naming.pci_resource_class(rec.get("vendor_id"), rec.get("device_id"))
    except ValueError:
        return [(addr, None, 0, base, "no usable PCI ids: no inventory")]
    return [(addr, rc, 1, base, None)]


def _listed_in(names, unit_addr, card_addr, provider):
    return unit_addr in names or card_addr in names or provider in names or "all" in names


def desired_providers(host, discovery, option="discovery", prefix=None, function_names=None, overrides=None,
                      drain=None, extra_traits=(), keep_drained=False, undrain=None):
    """The providers one host should have: a list of dicts ``{name, uuid, address, resource_class,
    inventories, traits, note, keep_drained}`` (``inventories`` empty when the unit cannot be scheduled;
    ``keep_drained``: a provider Placement has drained at write time stays drained, see :func:`keep_drain`)."""
    recs = _records(discovery, option)
    prefix = prefix or host
    addresses = set(r.get("address") for r in recs if isinstance(r, dict))
    overrides = overrides or {}
    drain = set(drain or ())
    undrain = set(undrain or ())
    out = []
    for i, rec in enumerate(recs):
        if not isinstance(rec, dict) or not rec.get("address"):
            raise PlacementInputError("%s: record %d has no 'address'; expected discovery records as "
                                      "accelerator_info returns them" % (option, i))
        for unit_addr, rc, total, traits, note in _device_specs(rec, addresses, function_names or {}):
            name = provider_name(prefix, unit_addr)
            ov = overrides.get(unit_addr) or overrides.get(rec["address"]) or {}
            if ov.get("resource_class"):
                rc = ov["resource_class"]
            traits = list(traits) + list(extra_traits) + list(ov.get("traits") or [])
            invs = {}
            if rc and total > 0:
                inv = inventory(total, reserved=ov.get("reserved", 0), min_unit=ov.get("min_unit", 1),
                                max_unit=ov.get("max_unit"), step_size=ov.get("step_size", 1),
                                allocation_ratio=ov.get("allocation_ratio", 1.0))
                if inv["reserved"] > inv["total"]:
                    raise PlacementInputError("overrides: reserved (%d) of %s is more than its total (%d)"
                                              % (inv["reserved"], unit_addr, inv["total"]))
                if _listed_in(drain, unit_addr, rec["address"], name):
                    inv["reserved"] = inv["total"]
                invs[rc] = inv
            keep = bool(keep_drained) and not _listed_in(undrain, unit_addr, rec["address"], name)
            out.append({"name": name, "uuid": provider_uuid(name), "address": unit_addr, "resource_class": rc,
                        "inventories": invs, "traits": sorted(set(traits)), "note": note, "host": host,
                        "keep_drained": keep})
    names = [p["name"] for p in out]
    dup = sorted(set(n for n in names if names.count(n) > 1))
    if dup:
        raise PlacementInputError("%s: the same unit is reported twice (%s)" % (option, ", ".join(dup)))
    return out


# -- HTTP ------------------------------------------------------------------------------------------------
class Client(object):
    """Placement over the SDK's proxy (a keystoneauth adapter), counting every request.

    A request that gets no answer (connection refused or dropped, timeout) or a 5xx is retried up to
    ``retries`` times with growing pauses, when repeating it is safe: every request this module sends is
    idempotent (GET; PUT of a whole trait or inventory set with the generation it read, which a repeat
    turns into a generation conflict that the converger resolves by re-reading; PUT of a trait or resource
    class name; DELETE, where 404 is fine) except POST, which the converger recovers itself
    (:meth:`Converger.create`)."""

    def __init__(self, adapter, microversion=MICROVERSION, read_only=False, retries=REQUEST_RETRIES,
                 retry_delay=REQUEST_RETRY_DELAY, sleep=time.sleep):
        self.adapter = adapter
        self.microversion = microversion
        self.read_only = read_only
        self.pauses = retry_delays(retries, retry_delay)
        self.sleep = sleep
        self.requests = 0
        self.writes = 0
        self.retried = 0
        self.log = []
        session = getattr(adapter, "session", None)
        self.timeout = None if getattr(session, "timeout", None) else REQUEST_TIMEOUT

    def _send(self, method, path, body):
        """One attempt: (status, response) or (None, cause) when no answer came back."""
        self.requests += 1
        if method != "GET":
            self.writes += 1
        kwargs = {"microversion": self.microversion, "raise_exc": False, "connect_retries": 0,
                  "headers": {"Accept": "application/json"}}
        if self.timeout:
            kwargs["timeout"] = self.timeout
        if body is not None:
            kwargs["json"] = body
        try:
            resp = self.adapter.request(path, method, **kwargs)
        except Exception as e:  # pylint: disable=broad-except
            cause = no_answer_cause(e)
            if cause is None:
                raise
            self.log.append("%s %s no-answer" % (method, path))
            return None, cause
        self.log.append("%s %s %s" % (method, path, resp.status_code))
        return resp.status_code, resp

    def call(self, method, path, body=None, ok=(200,), retry=None):
        """Send a request; the parsed JSON body (None when empty). ``retry`` (default: not for POST)
        repeats it after no answer or a 5xx."""
        if method != "GET" and self.read_only:
            raise RuntimeError("a write request (%s %s) in check mode: this is a bug" % (method, path))
        if retry is None:
            retry = method != "POST"
        pauses = self.pauses if retry else []
        waited = 0.0
        for attempt in range(len(pauses) + 1):
            status, resp = self._send(method, path, body)
            transient = status is None or status in TRANSIENT_STATUS
            if transient and attempt < len(pauses):
                self.retried += 1
                self.sleep(pauses[attempt])
                waited += pauses[attempt]
                continue
            if status is None:
                raise PlacementConnectionError(method, path, resp, attempt + 1, waited)
            break
        if status not in ok:
            raise PlacementHTTPError(method, path, status, resp.text or "")
        if status == 204 or not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            return None

    def get(self, path):
        return self.call("GET", path)


# -- the generation cache ----------------------------------------------------------------------------------
class GenerationCache(object):
    """What this controller last read or wrote per provider, valid while the provider's generation (and
    name, parent, root) is unchanged: Placement bumps a provider's generation on every change to its
    inventories, traits, aggregates or allocations, so an unchanged generation proves unchanged content."""

    def __init__(self, path, endpoint):
        self.path = path
        self.key = hashlib.sha256((endpoint or "").encode()).hexdigest()[:16]
        self.entries = {}
        self.dirty = False
        if path:
            try:
                with open(path) as f:
                    data = json.load(f)
                if isinstance(data, dict) and data.get("endpoint_key") == self.key:
                    self.entries = data.get("providers") or {}
            except (OSError, ValueError):
                self.entries = {}

    @staticmethod
    def _ident(p):
        return [p["generation"], p["name"], p.get("parent_provider_uuid"), p.get("root_provider_uuid")]

    def lookup(self, listed):
        e = self.entries.get(listed["uuid"])
        if e and e.get("ident") == self._ident(listed):
            return copy.deepcopy(e["traits"]), copy.deepcopy(e["inventories"])
        return None

    def store(self, listed, generation, traits, inventories):
        p = dict(listed, generation=generation)
        self.entries[listed["uuid"]] = {"ident": self._ident(p), "traits": sorted(traits),
                                        "inventories": inventories}
        self.dirty = True

    def drop(self, uuid):
        if self.entries.pop(uuid, None) is not None:
            self.dirty = True

    def save(self):
        if not self.path or not self.dirty:
            return
        d = os.path.dirname(self.path)
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".gen-")
        with os.fdopen(fd, "w") as f:
            json.dump({"endpoint_key": self.key, "providers": self.entries}, f)
        os.replace(tmp, self.path)


def default_cache_path(endpoint):
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "accelops.lifecycle", "placement-%s.json"
                        % hashlib.sha256((endpoint or "").encode()).hexdigest()[:16])


# -- reading -----------------------------------------------------------------------------------------------
def owner_of(traits):
    if OWNER_TRAIT in traits:
        return "accelops"
    if "OWNER_CYBORG" in traits:
        return "cyborg"
    if "OWNER_NOVA" in traits:
        return "nova"
    return None


def short_name(host):
    return host.split(".", 1)[0] if host and not _looks_like_ip(host) else host


def _looks_like_ip(s):
    return bool(re.match(r"^[0-9.]+$", s or "")) or ":" in (s or "")


def find_root(all_providers, host, explicit=None):
    """The compute node provider of ``host`` among ``all_providers`` (from GET /resource_providers): by
    ``explicit`` (name or uuid) when given, else by the host name, its short name, or a FQDN whose short
    name matches. Returns (provider, None) or (None, message)."""
    roots = [p for p in all_providers if not p.get("parent_provider_uuid")]
    if explicit:
        for p in roots:
            if explicit in (p["name"], p["uuid"]):
                return p, None
        return None, ("root_provider: no root resource provider named (or with uuid) %r; the compute node's "
                      "provider is named after the hypervisor host name (see `openstack resource provider list`)"
                      % explicit)
    tried = [host]
    by_name = dict((p["name"], p) for p in roots)
    if host in by_name:
        return by_name[host], None
    short = short_name(host)
    if short != host:
        tried.append(short)
        if short in by_name:
            return by_name[short], None
    matches = [p for p in roots if short_name(p["name"]) == short and p["name"] not in tried]
    if len(matches) == 1:
        return matches[0], None
    if len(matches) > 1:
        return None, ("host %r: several root providers match its short name (%s); set root_provider to the one "
                      "to use" % (host, ", ".join(sorted(p["name"] for p in matches))))
    return None, ("host %r: no compute node resource provider found (tried %s and any FQDN of %r); is nova-compute "
                  "running there, or is the provider named differently? Set root_provider to its name"
                  % (host, ", ".join(repr(t) for t in tried), short))


class TreeState(object):
    """The providers Placement has, read once per run."""

    def __init__(self, client, cache):
        self.client = client
        self.cache = cache
        self.all = client.get("/resource_providers")["resource_providers"]
        self.by_uuid = dict((p["uuid"], p) for p in self.all)
        self.by_name = dict((p["name"], p) for p in self.all)
        self._details = {}

    def details(self, p):
        """(traits, inventories) of a listed provider: from the cache when its generation proves them
        current, else two GETs."""
        u = p["uuid"]
        if u in self._details:
            return self._details[u]
        hit = self.cache.lookup(p) if self.cache else None
        if hit is None:
            t = self.client.get("/resource_providers/%s/traits" % u)
            i = self.client.get("/resource_providers/%s/inventories" % u)
            traits, invs = sorted(t["traits"]), i["inventories"]
            gen = i["resource_provider_generation"]
            if gen != t["resource_provider_generation"]:  # changed between the two reads: read again later
                p["generation"] = -1
            else:
                p["generation"] = gen
                if self.cache:
                    self.cache.store(p, gen, traits, invs)
            hit = (traits, invs)
        self._details[u] = hit
        return hit

    def children_of(self, root_uuid):
        return [p for p in self.all if p.get("root_provider_uuid") == root_uuid and p["uuid"] != root_uuid]


# -- the plan --------------------------------------------------------------------------------------------------
def merge_traits(current, desired, managed_extra=(), function_only=False):
    """The traits to write: the current ones, less the managed ones not desired, plus the desired ones.
    With ``function_only`` only function traits are added or removed (providers someone else owns)."""
    cur = set(current)
    if function_only:
        keep = set(t for t in cur if not is_function_trait(t))
        want = set(t for t in desired if is_function_trait(t))
    else:
        keep = set(t for t in cur if not is_managed_trait(t, managed_extra))
        want = set(desired)
    return sorted(keep | want)


def named_after_root(host_spec, root):
    """The host's desired providers named ``<root name>_<address>`` (as Nova names the children of a compute
    node) whatever spelling of the host found the root: reported once as ``cn1`` and once as ``cn1.example.org``,
    a host keeps the same children, instead of a second set beside (or in place of) the first. An explicit
    ``name_prefix`` is kept."""
    desired = host_spec["providers"]
    if host_spec.get("name_prefix") or root["name"] == host_spec["host"]:
        return desired
    out = []
    for d in desired:
        name = provider_name(root["name"], d["address"])
        out.append(dict(d, name=name, uuid=provider_uuid(name)))
    return out


def plan_host(state, host_spec, options):
    """Compare one host's desired providers with ``state``; returns (actions, warnings, root)."""
    warnings = []
    root, err = find_root(state.all, host_spec["host"], host_spec.get("root_provider"))
    if root is None:
        raise PlacementInputError(err)
    actions = []
    desired = named_after_root(host_spec, root)
    desired_names = set(d["name"] for d in desired)
    extra = set(options.get("extra_traits") or ())
    for d in desired:
        cur = state.by_name.get(d["name"]) or state.by_uuid.get(d["uuid"])
        act = {"name": d["name"], "uuid": d["uuid"], "host": host_spec["host"], "address": d["address"],
               "root_uuid": root["uuid"], "desired": d, "note": d.get("note")}
        if cur is None:
            act.update(kind="create", before=None, traits=d["traits"], inventories=d["inventories"])
            actions.append(act)
            continue
        act["uuid"] = cur["uuid"]
        traits, invs = state.details(cur)
        act["before"] = {"traits": traits, "inventories": invs, "generation": cur["generation"]}
        act["listed"] = cur
        if cur.get("root_provider_uuid") != root["uuid"]:
            act.update(kind="foreign", owner=owner_of(traits))
            warnings.append("provider %s exists in another tree (root %s): left alone"
                            % (d["name"], cur.get("root_provider_uuid")))
            actions.append(act)
            continue
        owner = owner_of(traits)
        if owner is None and not traits and not invs and cur["uuid"] == d["uuid"] and \
                cur.get("parent_provider_uuid") == root["uuid"]:
            # exactly what a create cut off after its POST leaves: this module's name and uuid, under the
            # root, no trait, no inventory. Finish it (it cannot be anyone's work in progress but a create
            # by the same rule: Cyborg's, whose own run then sets its owner trait and wins).
            act["note"] = ((act.get("note") or "") + " resumed an interrupted create").strip()
            owner = "accelops"
        if owner == "accelops" or (owner is None and options.get("adopt")):
            new_traits = merge_traits(traits, d["traits"], extra)
            want_invs = keep_drain(invs, d["inventories"]) if d.get("keep_drained") else d["inventories"]
            act.update(kind="update", owner="accelops",
                       traits=new_traits if new_traits != sorted(traits) else None,
                       inventories=None if same_inventories(invs, want_invs) else want_invs)
            if act["traits"] is None and act["inventories"] is None:
                act["kind"] = "unchanged"
        elif owner in ("cyborg", "nova") and options.get("foreign_providers") == "function_traits":
            new_traits = merge_traits(traits, d["traits"], function_only=True)
            act.update(kind="update" if new_traits != sorted(traits) else "unchanged", owner=owner,
                       traits=new_traits if new_traits != sorted(traits) else None, inventories=None,
                       function_only=True)
        else:
            act.update(kind="foreign", owner=owner)
            if owner is None:
                warnings.append("provider %s exists without an owner trait: left alone (set adopt=true to manage it)"
                                % d["name"])
        actions.append(act)
    if options.get("prune", True):
        for p in state.children_of(root["uuid"]):
            if p["name"] in desired_names:
                continue
            traits, invs = state.details(p)
            if owner_of(traits) != "accelops":
                continue
            act = {"kind": "prune", "name": p["name"], "uuid": p["uuid"], "host": host_spec["host"],
                   "address": None, "root_uuid": root["uuid"], "listed": p,
                   "before": {"traits": traits, "inventories": invs, "generation": p["generation"]}}
            allocs = state.client.get("/resource_providers/%s/allocations" % p["uuid"])["allocations"]
            if allocs:
                act["kind"] = "kept"
                warnings.append("provider %s is gone from host %s but still has allocations (consumers %s): kept; "
                                "it is pruned on a later run once they are gone"
                                % (p["name"], host_spec["host"], ", ".join(sorted(allocs))))
            actions.append(act)
    return actions, warnings, root


def required_custom_names(actions):
    traits, rcs = set(), set()
    for a in actions:
        if a["kind"] in ("create", "update"):
            for t in a.get("traits") or []:
                if t.startswith("CUSTOM_"):
                    traits.add(t)
            for rc in a.get("inventories") or {}:
                if rc.startswith("CUSTOM_"):
                    rcs.add(rc)
    return traits, rcs


# -- applying ----------------------------------------------------------------------------------------------
class Converger(object):
    """Applies a plan. ``before_write`` (tests) is called with (action, what) right before each provider
    write, so a test can play a concurrent writer between this module's read and its write."""

    def __init__(self, client, state, cache=None, retries=5, before_write=None):
        self.client = client
        self.state = state
        self.cache = cache
        self.retries = retries
        self.before_write = before_write
        self.warnings = []
        self.conflicts = 0

    def ensure_names(self, traits, rcs):
        if traits:
            names = sorted(traits)
            existing = set()
            for i in range(0, len(names), 100):
                chunk = names[i:i + 100]
                existing.update(self.client.get("/traits?name=in:" + ",".join(chunk))["traits"])
            for t in names:
                if t not in existing:
                    self.client.call("PUT", "/traits/" + t, ok=(201, 204))
        if rcs:
            existing = set(r["name"] for r in self.client.get("/resource_classes")["resource_classes"])
            for rc in sorted(rcs):
                if rc not in existing:
                    self.client.call("PUT", "/resource_classes/" + rc, ok=(201, 204))

    def _hook(self, action, what):
        if self.before_write:
            self.before_write(action, what)

    def _put_inventories(self, action, gen, invs, reread=False):
        """PUT the inventories with ``gen``; on a generation conflict read them again and retry. With
        ``keep_drained`` the inventories to write are worked out again from each read (a drain made by
        someone else since this run's read stays: read-modify-write under the provider generation), and
        ``reread`` reads them first (what was read before is stale). Returns (generation, inventories,
        whether a conflict was met)."""
        u = action["uuid"]
        keep = (action.get("desired") or {}).get("keep_drained")
        base = (action.get("desired") or {}).get("inventories", invs) if keep else invs
        conflicted = False
        cur = None
        if reread:
            cur = self.client.get("/resource_providers/%s/inventories" % u)
        for attempt in range(self.retries + 1):
            if cur is not None:
                gen = cur["resource_provider_generation"]
                if keep:
                    invs = keep_drain(cur["inventories"], base)
                if same_inventories(cur["inventories"], invs):
                    return gen, cur["inventories"], conflicted
            self._hook(action, "inventories")
            try:
                r = self.client.call("PUT", "/resource_providers/%s/inventories" % u,
                                     {"inventories": invs, "resource_provider_generation": gen})
                return r["resource_provider_generation"], r["inventories"], conflicted
            except PlacementHTTPError as e:
                if e.status != 409 or e.code != "placement.concurrent_update" or attempt == self.retries:
                    raise
                self.conflicts += 1
                conflicted = True
                cur = self.client.get("/resource_providers/%s/inventories" % u)
        raise AssertionError("unreachable")

    def _put_traits(self, action, gen, traits, desired, function_only=False, extra=()):
        """PUT the traits with ``gen``; on a generation conflict read them again and redo only this module's
        change on top of what is there now. Returns (generation, traits, whether a conflict was met)."""
        u = action["uuid"]
        conflicted = False
        for attempt in range(self.retries + 1):
            self._hook(action, "traits")
            try:
                r = self.client.call("PUT", "/resource_providers/%s/traits" % u,
                                     {"traits": traits, "resource_provider_generation": gen})
                return r["resource_provider_generation"], sorted(r["traits"]), conflicted
            except PlacementHTTPError as e:
                if e.status != 409 or e.code != "placement.concurrent_update" or attempt == self.retries:
                    raise
                # someone else wrote in between: re-read, re-apply only this module's change on top of theirs
                self.conflicts += 1
                conflicted = True
                cur = self.client.get("/resource_providers/%s/traits" % u)
                gen = cur["resource_provider_generation"]
                traits = merge_traits(cur["traits"], desired, extra, function_only=function_only)
                if traits == sorted(cur["traits"]):
                    return gen, traits, conflicted
        raise AssertionError("unreachable")

    def _remember(self, listed, gen, traits, invs, conflicted):
        """Cache what was written; after a conflict one of the two may be older than ``gen``: forget the
        provider instead, so the next run reads it."""
        if not self.cache:
            return
        if conflicted:
            self.cache.drop(listed["uuid"])
        else:
            self.cache.store(listed, gen, traits, invs)

    def _ours(self, action):
        """The provider with the planned uuid when it is the one this run means to create (same name and
        parent), else None."""
        found = self.client.call("GET", "/resource_providers/" + action["uuid"], ok=(200, 404))
        if isinstance(found, dict) and found.get("name") == action["name"] and \
                found.get("parent_provider_uuid") == action["root_uuid"]:
            return found
        return None

    def create(self, action):
        """POST the provider. POST is the one request that is not idempotent, so after no answer or a 5xx
        the provider is looked up by its (deterministic) uuid before the POST is repeated: a create whose
        answer was lost is found and used, never duplicated."""
        body = {"name": action["name"], "uuid": action["uuid"], "parent_provider_uuid": action["root_uuid"]}
        pauses = self.client.pauses
        for attempt in range(len(pauses) + 1):
            try:
                return self.client.call("POST", "/resource_providers", body, retry=False)
            except PlacementConnectionError:
                if attempt == len(pauses):
                    raise
            except PlacementHTTPError as e:
                if attempt > 0 and e.status == 409:  # an earlier attempt created it after all
                    found = self._ours(action)
                    if found is not None:
                        return found
                if e.status not in TRANSIENT_STATUS or attempt == len(pauses):
                    raise
            self.client.retried += 1
            self.client.sleep(pauses[attempt])
            found = self._ours(action)
            if found is not None:
                return found
        raise AssertionError("unreachable")

    def apply(self, action, extra_traits=()):
        kind = action["kind"]
        if kind == "create":
            self._hook(action, "create")
            p = self.create(action)
            gen = p["generation"]
            invs = {}
            # traits first: the owner trait marks the provider as this module's at once, so a run cut off
            # before the inventory still leaves a provider the next run recognises and completes
            gen, traits, c1 = self._put_traits(action, gen, action["traits"], action["desired"]["traits"],
                                               extra=extra_traits)
            c2 = False
            if action["inventories"]:
                gen, invs, c2 = self._put_inventories(action, gen, action["inventories"])
            self._remember(p, gen, traits, invs, c1 or c2)
            action["after"] = {"traits": traits, "inventories": invs}
        elif kind == "update":
            listed = action["listed"]
            gen = listed["generation"]
            traits, invs = action["before"]["traits"], action["before"]["inventories"]
            function_only = action.get("function_only", False)
            desired = action["desired"]["traits"]
            # what was read is only good at the generation it was read at: after a conflict (or when the
            # provider changed between the two reads) the traits are read again before this module's change
            # is applied on top of them, or another writer's trait change would be overwritten
            stale = gen < 0
            keep = action["desired"].get("keep_drained")
            if stale and not (keep and action.get("inventories") is not None):
                gen = self.client.get("/resource_providers/%s" % action["uuid"])["generation"]
            if action.get("inventories") is not None:
                # with keep_drained and a stale read, the inventories are read again (with the generation)
                gen, invs, c = self._put_inventories(action, gen, action["inventories"], reread=stale and keep)
                stale = stale or c
            want = action.get("traits")
            if stale:
                cur = self.client.get("/resource_providers/%s/traits" % action["uuid"])
                gen, traits = cur["resource_provider_generation"], sorted(cur["traits"])
                want = merge_traits(traits, desired, extra_traits, function_only=function_only)
                if want == traits:
                    want = None
            if want is not None:
                gen, traits, c = self._put_traits(action, gen, want, desired, function_only=function_only,
                                                  extra=extra_traits)
                stale = stale or c
            self._remember(listed, gen, traits, invs, stale)
            action["after"] = {"traits": traits, "inventories": invs}
        elif kind == "prune":
            try:
                self.client.call("DELETE", "/resource_providers/" + action["uuid"], ok=(204, 404))
            except PlacementHTTPError as e:
                if e.status != 409:
                    raise
                action["kind"] = "kept"
                action["after"] = action["before"]
                self.warnings.append("provider %s could not be deleted (%s): kept" % (action["name"], e))
                return
            if self.cache:
                self.cache.drop(action["uuid"])
            action["after"] = None


# -- one run -------------------------------------------------------------------------------------------------
_PAST = {"create": "created", "update": "updated", "unchanged": "unchanged", "prune": "pruned", "kept": "kept",
         "foreign": "foreign"}


def converge(adapter, hosts, options, check_mode=False, cache_path=None, endpoint=None, before_write=None):
    """Converge Placement to the providers of ``hosts`` (``[{host, root_provider, providers}]``, the
    providers from :func:`desired_providers`). Returns a result dict (see the module's RETURN)."""
    client = Client(adapter, read_only=check_mode, retries=options.get("request_retries", REQUEST_RETRIES),
                    retry_delay=options.get("request_retry_delay", REQUEST_RETRY_DELAY))
    cache = GenerationCache(cache_path, endpoint) if cache_path else None
    state = TreeState(client, cache)
    actions, warnings = [], []
    seen_roots = {}
    for h in hosts:
        acts, warns, root = plan_host(state, h, options)
        if root["uuid"] in seen_roots:
            raise PlacementInputError("hosts: %r and %r resolve to the same compute node provider %s; list each host "
                                      "once" % (seen_roots[root["uuid"]], h["host"], root["name"]))
        seen_roots[root["uuid"]] = h["host"]
        actions.extend(acts)
        warnings.extend(warns)
    extra = tuple(options.get("extra_traits") or ())
    conv = Converger(client, state, cache, retries=options.get("conflict_retries", 5), before_write=before_write)
    writes = [a for a in actions if a["kind"] in ("create", "update", "prune")]
    if not check_mode and writes:
        traits, rcs = required_custom_names(writes)
        conv.ensure_names(traits, rcs)
        for a in writes:
            conv.apply(a, extra)
    else:
        for a in writes:  # what the real run would write
            if a["kind"] == "prune":
                a["after"] = None
            else:
                b = a.get("before") or {"traits": [], "inventories": {}}
                a["after"] = {"traits": a["traits"] if a.get("traits") is not None else b["traits"],
                              "inventories": a["inventories"] if a.get("inventories") is not None
                              else b["inventories"]}
    warnings.extend(conv.warnings)
    if cache is not None and not check_mode:
        try:
            cache.save()
        except OSError as e:
            warnings.append("generation_cache: could not write %s: %s" % (cache_path, e))
    providers, before, after = [], {}, {}
    for a in actions:
        kind = a["kind"]
        b = a.get("before")
        aft = a.get("after", b)
        d = a.get("desired") or {}
        shown = aft if aft is not None else b
        providers.append({
            "name": a["name"], "uuid": a["uuid"], "host": a["host"], "address": a.get("address"),
            "root_provider_uuid": a["root_uuid"], "action": _PAST[kind], "owner": a.get("owner", "accelops"),
            "resource_class": d.get("resource_class"),
            "traits": (shown or {}).get("traits", []), "inventories": (shown or {}).get("inventories", {}),
            "drained": is_drained((shown or {}).get("inventories", {})), "note": a.get("note"),
        })
        if kind in ("create", "update", "prune"):
            before[a["name"]] = None if b is None else {"traits": b["traits"], "inventories": b["inventories"]}
            after[a["name"]] = aft
    changed = any(a["kind"] in ("create", "prune") or (a["kind"] == "update") for a in actions)
    return {
        "changed": changed,
        "providers": providers,
        "warnings": warnings,
        "diff": {"before": before, "after": after},
        "requests": {"total": client.requests, "writes": client.writes, "conflicts_resolved": conv.conflicts,
                     "retried": client.retried},
        "summary": _counts(providers),
        "by_host": by_host(providers),
    }


ACTIONS = ("created", "updated", "unchanged", "pruned", "kept", "foreign")


def _counts(providers):
    return dict((k, sum(1 for p in providers if p["action"] == k)) for k in ACTIONS)


def by_host(providers):
    """Per host: its providers' action counts and its drained providers (name, address). A caller that reports
    many hosts in one run (the converge role's batch report) reads one host's share without the whole list."""
    grouped = {}
    for p in providers:
        grouped.setdefault(p["host"], []).append(p)
    return dict((host, {"summary": _counts(provs),
                        "drained": [{"name": p["name"], "address": p["address"]} for p in provs if p["drained"]]})
                for host, provs in grouped.items())


# -- the info side -----------------------------------------------------------------------------------------
def read_providers(adapter, hosts=None, root_provider=None, owned_only=False, include_allocations=True,
                   retries=REQUEST_RETRIES, retry_delay=REQUEST_RETRY_DELAY):
    """Providers with traits, inventories, usages (and allocations): of the trees of ``hosts`` or
    ``root_provider``, or every provider this collection owns when neither is given."""
    client = Client(adapter, read_only=True, retries=retries, retry_delay=retry_delay)
    if hosts or root_provider:
        listed = client.get("/resource_providers")["resource_providers"]
        chosen = []
        for h in (hosts or [None]):
            root, err = find_root(listed, h, root_provider if h is None else None)
            if root is None:
                raise PlacementInputError(("hosts: " if h is not None else "") + err)
            chosen.extend((h, p) for p in listed if p.get("root_provider_uuid") == root["uuid"])
    else:
        owned_only = True
        listed = client.get("/resource_providers?required=" + OWNER_TRAIT)["resource_providers"]
        chosen = [(None, p) for p in listed]
    out = []
    for host, p in chosen:
        u = p["uuid"]
        traits = sorted(client.get("/resource_providers/%s/traits" % u)["traits"])
        if owned_only and OWNER_TRAIT not in traits:
            continue
        invs = client.get("/resource_providers/%s/inventories" % u)["inventories"]
        usages = client.get("/resource_providers/%s/usages" % u)["usages"]
        allocs = client.get("/resource_providers/%s/allocations" % u)["allocations"] if include_allocations else {}
        out.append({
            "name": p["name"], "uuid": u, "generation": p["generation"],
            "parent_provider_uuid": p.get("parent_provider_uuid"), "root_provider_uuid": p.get("root_provider_uuid"),
            "host": host, "owner": owner_of(traits), "traits": traits, "inventories": invs, "usages": usages,
            "allocations": allocs, "in_use": any(v > 0 for v in usages.values()),
            "drained": bool(invs) and all(i["reserved"] >= i["total"] for i in invs.values()),
        })
    return {"providers": out, "requests": client.requests}
