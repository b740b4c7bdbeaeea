# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""libvirt ``<hostdev>`` snippets for the assignable units of a discovery result.

The XML has the structure Nova's libvirt driver writes (``mode``/``type``/``managed``, a ``<source>`` with
the host PCI address in hex, or ``type='mdev' managed='no' model='vfio-pci'`` with the mdev UUID), in the
form libvirt itself formats it (single quotes, two-space indent, libvirt's attribute and element order),
so a snippet is byte-for-byte what ``virsh dumpxml`` shows for it.

Input is discovery data (schema_version 1 of ``accelerator_info``): a result, a list of records, one
record, one unit, or a plain PCI address / mdev UUID. Everything is checked; bad input raises
``HostdevError`` whose message names the value and the accepted form.

Standard library only, Python 3.9+ (usable by host-side modules and by controller-side filters).
"""

from __future__ import annotations

import fnmatch
import re

from ansible_collections.accelops.lifecycle.plugins.module_utils import _vocab
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import (
    FAMILIES,
    PCI_FORM,
    PCI_SHAPE_RE,
    UUID_FORM,
    UUID_RE,
    format_pci_address,
    mdev_uuid,
)

__metaclass__ = type

KINDS = ("device", "vf", "mdev")
OPTIONS = ("managed", "guest_address", "rom_bar", "rom_file", "display", "ramfb")

INPUT_FORM = ("a discovery result (with accelerators), a list of discovery records, one record (with units), "
              "one unit (with kind and id), or a string that is %s or %s" % (PCI_FORM, UUID_FORM))

_PATTERN_CHARS = "*?["
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


class HostdevError(ValueError):
    """Bad input: the message names what is wrong and the accepted form."""


# VFIO gives a guest an IOMMU group only when the group is viable: since Linux 5.19 the IOMMU core refuses
# the group's DMA ownership (iommu_group_claim_dma_owner, -EPERM) while any member is bound to a driver
# without driver_managed_dma (pci_dma_configure counts those); the drivers that set it are vfio-pci and its
# variant drivers (mlx5_vfio_pci, xe-vfio-pci, ...), pci-stub and pcieport. Before 5.19 vfio_group_viable()
# allowed vfio drivers, pci-stub (vfio_driver_allowed), no driver and any bridge header. The intersection,
# below, holds on both. Sources in docs/libvirt.md.
_GROUP_SAFE_DRIVERS = ("pci-stub", "pcieport")


def group_safe_driver(driver):
    """Whether a group member bound to ``driver`` (None: no driver) leaves the group viable for VFIO."""
    return driver is None or driver in _GROUP_SAFE_DRIVERS or "vfio" in driver


# ---------------------------------------------------------------------------------------------- values

def parse_pci_address(text, what="address"):
    """``(domain, bus, slot, function)`` ints from ``DDDD:BB:SS.F`` or ``BB:SS.F``; HostdevError otherwise."""
    try:
        return _vocab.parse_pci_address(text)
    except ValueError as e:
        raise HostdevError("%s: %s; expected %s" % (what, e, PCI_FORM))


def normalize_pci_address(text, what="address"):
    """``0000:3b:00.4`` form (lower case, 4-digit domain at least) of a PCI address."""
    return format_pci_address(parse_pci_address(text, what))


def is_pci_address(text):
    try:
        parse_pci_address(text)
    except HostdevError:
        return False
    return True


def normalize_uuid(text, what="uuid"):
    uid = mdev_uuid(text)
    if uid is None:
        raise HostdevError("%s: %r is not an mdev UUID; expected %s" % (what, text, UUID_FORM))
    return uid


def _switch(value, option, words):
    """Normalise a two-state option (booleans allowed) to ``words[0]`` (true) or ``words[1]`` (false)."""
    if value is True:
        return words[0]
    if value is False:
        return words[1]
    if isinstance(value, str) and value.strip().lower() in words:
        return value.strip().lower()
    raise HostdevError("%s: expected %s or %s (or a boolean), got %r" % (option, words[0], words[1], value))


def _managed(value):
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return "auto"
    try:
        return _switch(value, "managed", ("yes", "no"))
    except HostdevError:
        raise HostdevError("managed: expected auto, yes or no (or a boolean), got %r" % (value,))


def _guest_address(value):
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"domain", "bus", "slot", "function"})
        if unknown:
            raise HostdevError("guest_address: unknown keys %s; expected a dict with domain, bus, slot, function "
                               "or %s" % (", ".join(unknown), PCI_FORM))
        limits = {"domain": 0xFFFFFFFF, "bus": 0xFF, "slot": 0x1F, "function": 7}
        parts = []
        for key in ("domain", "bus", "slot", "function"):
            item = value.get(key, 0)
            try:
                number = item if isinstance(item, int) and not isinstance(item, bool) else int(str(item), 16)
            except ValueError:
                number = -1
            if not 0 <= number <= limits[key]:
                raise HostdevError("guest_address: %s %r is not a number from 0 to 0x%x; expected a dict with "
                                   "domain, bus, slot, function (ints or hex strings) or %s"
                                   % (key, item, limits[key], PCI_FORM))
            parts.append(number)
        return tuple(parts)
    return parse_pci_address(value, "guest_address")


def _rom_file(value):
    if not isinstance(value, str) or not value.startswith("/") or len(value) < 2 or _CONTROL_RE.search(value):
        raise HostdevError("rom_file: expected an absolute path on the host (e.g. /usr/share/kvm/vbios.rom) "
                           "without control characters, got %r" % (value,))
    return value


def check_options(options):
    """Validated, normalised rendering options (unknown names and values refused)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise HostdevError("unknown option%s %s; accepted options: %s"
                           % ("s" if len(unknown) > 1 else "", ", ".join(unknown), ", ".join(OPTIONS)))
    out = {"managed": _managed(options.get("managed"))}
    out["guest_address"] = None if options.get("guest_address") is None else _guest_address(options["guest_address"])
    out["rom_bar"] = None if options.get("rom_bar") is None else _switch(options["rom_bar"], "rom_bar", ("on", "off"))
    out["rom_file"] = None if options.get("rom_file") is None else _rom_file(options["rom_file"])
    out["display"] = None if options.get("display") is None else _switch(options["display"], "display", ("on", "off"))
    out["ramfb"] = None if options.get("ramfb") is None else _switch(options["ramfb"], "ramfb", ("on", "off"))
    if out["ramfb"] == "on" and out["display"] != "on":
        raise HostdevError("ramfb: on needs display: on (the boot framebuffer is shown through the vGPU's display); "
                           "got display %s" % (out["display"] or "unset"))
    return out


# ---------------------------------------------------------------------------------------------- units

def _unit_from_string(text):
    if not isinstance(text, str):
        raise HostdevError("expected %s; got %s" % (INPUT_FORM, type(text).__name__))
    low = text.strip().lower()
    if UUID_RE.match(low):
        return _hostdev_unit("mdev", low, None, None)
    if PCI_SHAPE_RE.match(low):
        address = normalize_pci_address(low)
        return _hostdev_unit("device", address, address, None)
    raise HostdevError("%r is neither %s nor %s" % (text, PCI_FORM, UUID_FORM))


def _vendor_vfio_driver(vendor_id):
    """The family driver whose vendor-specific VFIO rules apply to a unit marked ``vendor_vfio``: the one of the card's
    vendor, else (a unit given without its card) the first whose GPUs have such VFs."""
    # imported on first use: input with no vendor-VFIO unit never loads the family drivers
    from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import gpu  # pylint: disable=import-outside-toplevel
    return gpu.vendor_vfio_driver(vendor_id) or gpu.vendor_vfio_drivers()[0]


def _unmanaged(unit):
    """``(what the unit is, why)`` when libvirt must not rebind a PCI unit (its vendor's host driver serves it), else None."""
    return _vendor_vfio_driver(None).vendor_vfio_unmanaged() if unit["vendor_vfio"] else None


def _hostdev_unit(kind, uid, address, record, raw=None):
    """The unit as hostdev_units returns it: the discovery unit's keys plus what rendering needs."""
    raw = raw or {}
    record = record or {}
    gpu = record.get("gpu") or {}
    vgpu = gpu.get("vgpu") if isinstance(gpu, dict) else None
    vendor_vfio = bool(raw.get("vendor_vfio")) or (kind == "vf" and isinstance(vgpu, dict))
    vgpu_type = raw.get("vgpu_type")
    if vgpu_type is None and vendor_vfio:
        current = (vgpu or {}).get("current_type") or {}
        vgpu_type = current.get("id") or raw.get("type")
    sriov = record.get("sriov") or {}
    group_drivers = raw.get("iommu_group_drivers", record.get("iommu_group_drivers"))
    children = []
    if kind == "device":
        children = [u.get("id") for u in record.get("units") or [] if isinstance(u, dict) and u.get("kind") == "mdev"]
    why_not = raw.get("why_not")
    if "why_not" not in raw:
        if kind == "device" and str(record.get("class_id") or "").startswith("06"):
            # host, ISA and PCI-to-PCI bridges (class 06xx, pcieport) carry the devices behind them
            why_not = "PCI bridge (class %s): bridges are never assignable" % record.get("class_id")
        elif kind == "device" and children:
            why_not = "parent of mdevs %s" % ", ".join(str(c) for c in children)
        elif kind == "device" and (sriov.get("numvfs") or 0) > 0:
            why_not = "parent of %d VFs" % sriov.get("numvfs")
        else:
            if vendor_vfio:
                why_not = _vendor_vfio_driver(record.get("vendor_id")).vendor_vfio_why_not({"vgpu_type": vgpu_type})
            if why_not is None and kind != "mdev":
                # an mdev has an IOMMU group of its own (made by the mdev core), a PCI unit shares its function's
                why_not = _group_why_not(raw.get("iommu_group"), group_blockers(uid, group_drivers))
    name = ("mdev_" + uid.replace("-", "_")) if kind == "mdev" else "pci_" + re.sub(r"[:.]", "_", uid)
    function = record.get("function") or {}
    return {
        "id": uid,
        "kind": kind,
        "address": address,
        "type": raw.get("type"),
        "family": raw.get("family", record.get("family")),
        "device": raw.get("device", record.get("address")),
        "physfn": raw.get("physfn", record.get("physfn")),
        "function": raw.get("function", function.get("id") if isinstance(function, dict) else None),
        "vendor_vfio": vendor_vfio,
        "vgpu_type": vgpu_type,
        "iommu_group": raw.get("iommu_group"),
        "iommu_group_members": raw.get("iommu_group_members", record.get("iommu_group_members") or []),
        "iommu_group_drivers": group_drivers,
        "in_use": bool(raw.get("in_use")),
        "in_use_by": list(raw.get("in_use_by") or []),
        "assignable": why_not is None,
        "why_not": why_not,
        "name": name,
    }


def group_blockers(uid, group_drivers):
    """``[(address, driver)]`` of the other members of a PCI unit's IOMMU group that make the group not viable
    (bound to a driver group_safe_driver refuses). Empty when the drivers are not known (records of an older
    accelerator_info): those keep the answer they had."""
    if group_drivers is None:
        return []
    return [(address, driver) for address, driver in sorted(group_drivers.items())
            if address != uid and not group_safe_driver(driver)]


def _group_why_not(group, blockers):
    if not blockers:
        return None
    held = ", ".join("%s bound to %s" % pair for pair in blockers)
    them = blockers[0][0] if len(blockers) == 1 else "them"
    return ("IOMMU group %s is not viable: it also holds %s, and VFIO gives a guest a group only when every "
            "member is bound to vfio-pci, pci-stub or no driver; bind %s to vfio-pci or pass %s with this unit"
            % (group, held, them, them))


def _check_group_drivers(value, where):
    """HostdevError unless ``value`` is null or a mapping of PCI address -> driver name or null."""
    if value is None:
        return
    form = "a mapping of PCI address to driver name or null (accelerator_info's iommu_group_drivers) or null"
    if not isinstance(value, dict):
        raise HostdevError("%s: iommu_group_drivers: expected %s, got %s" % (where, form, _describe(value)))
    for address, driver in value.items():
        if not isinstance(address, str) or not is_pci_address(address) or \
                (driver is not None and not isinstance(driver, str)):
            raise HostdevError("%s: iommu_group_drivers: %r: %r is not a PCI address with a driver name or null; "
                               "expected %s" % (where, address, driver, form))


def _unit_from_dict(unit, record, where):
    if unit.get("in_use_by") and not isinstance(unit["in_use_by"], list):
        raise HostdevError("%s: in_use_by: expected a list of in-use evidence or null, got %s"
                           % (where, _describe(unit["in_use_by"])))
    _check_group_drivers(unit.get("iommu_group_drivers"), where)
    kind = unit.get("kind")
    if kind not in KINDS:
        raise HostdevError("%s: kind %r is not a unit kind; expected one of %s" % (where, kind, ", ".join(KINDS)))
    if kind == "mdev":
        uid = normalize_uuid(unit.get("id"), "%s: id" % where)
        address = unit.get("address")
        address = None if address is None else normalize_pci_address(address, "%s: address" % where)
    else:
        uid = normalize_pci_address(unit.get("id"), "%s: id" % where)
        address = uid
    return _hostdev_unit(kind, uid, address, record, unit)


def _check_record(record, fallback):
    """The record's name in messages (``record <address>``), after checking the keys a unit is made from:
    HostdevError naming the key and the accepted form."""
    address = record.get("address")
    if address is not None and not isinstance(address, str):
        raise HostdevError("record%s: address: expected %s or null, got %s"
                           % ("" if fallback is None else " %s" % fallback, PCI_FORM, _describe(address)))
    where = "record %s" % (record.get("address", fallback),)
    sriov = record.get("sriov")
    if sriov and not isinstance(sriov, dict):
        raise HostdevError("%s: sriov: expected a mapping (with numvfs) or null, got %s" % (where, _describe(sriov)))
    numvfs = (sriov or {}).get("numvfs")
    if numvfs is not None and (isinstance(numvfs, bool) or not isinstance(numvfs, int)):
        raise HostdevError("%s: sriov.numvfs: expected a whole number or null, got %s" % (where, _describe(numvfs)))
    gpu = record.get("gpu")
    vgpu = gpu.get("vgpu") if isinstance(gpu, dict) else None
    if vgpu and not isinstance(vgpu, dict):
        raise HostdevError("%s: gpu.vgpu: expected a mapping (with current_type) or null, got %s"
                           % (where, _describe(vgpu)))
    current = (vgpu or {}).get("current_type")
    if current and not isinstance(current, dict):
        raise HostdevError("%s: gpu.vgpu.current_type: expected a mapping (with id) or null, got %s"
                           % (where, _describe(current)))
    _check_group_drivers(record.get("iommu_group_drivers"), where)
    return where


def _units_of_record(record, fallback):
    where = _check_record(record, fallback)
    units = record.get("units")
    if not isinstance(units, list):
        raise HostdevError("%s: units must be a list of units, got %s" % (where, type(units).__name__))
    out = []
    for index, unit in enumerate(units):
        if not isinstance(unit, dict):
            raise HostdevError("%s: units[%d] must be a dict with kind and id, got %s"
                               % (where, index, type(unit).__name__))
        out.append(_unit_from_dict(unit, record, "%s: units[%d]" % (where, index)))
    folded = (record.get("sriov") or {}).get("vf_units")
    if folded:
        # accelerator_info's default (vf_detail: summary): the VFs' units sit in the PF's record
        if not isinstance(folded, list):
            raise HostdevError("%s: sriov.vf_units must be a list of units, got %s" % (where, type(folded).__name__))
        full = _vocab.record_units({"sriov": record["sriov"]})
        for index, unit in enumerate(full):
            if not isinstance(unit, dict):
                raise HostdevError("%s: sriov.vf_units[%d] must be a dict with kind and address, got %s"
                                   % (where, index, type(unit).__name__))
            out.append(_unit_from_dict(unit, folded_vf_record(record, unit.get("address")),
                                       "%s: sriov.vf_units[%d]" % (where, index)))
    return out


def folded_vf_record(pf, address):
    """What a VF folded into the summary record ``pf`` has of its own full record that a unit is made from: its
    address, the PF's family and vendor, the PF as ``physfn`` and the vGPU type the PF's ``gpu.vgpu_vfs`` gives it.
    Its IOMMU group's members are not in the summary: the unit keeps the answer a record of an older
    accelerator_info has (no group blockers)."""
    record = {"address": address, "family": pf.get("family"), "vendor_id": pf.get("vendor_id"),
              "physfn": pf.get("address")}
    gpu = pf.get("gpu")
    for vf in (gpu.get("vgpu_vfs") or []) if isinstance(gpu, dict) else []:
        if isinstance(vf, dict) and vf.get("address") == address:
            record["gpu"] = {"vgpu": {"current_type": vf.get("current_type")}}
    return record


def _describe(value):
    if isinstance(value, dict):
        return "a dict with keys " + ", ".join(sorted(str(k) for k in value))
    return type(value).__name__


def is_unit(item):
    return isinstance(item, dict) and "kind" in item and "id" in item and "units" not in item


def collect_units(data, assignable_only=False):
    """Every unit in ``data`` (see INPUT_FORM), as hostdev units, in input order, without duplicates.

    With ``assignable_only``, units that come from records (not those given one by one) are kept only when a
    guest can be given them now.
    """
    if assignable_only:
        given = collect_units(data)
        if isinstance(data, str) or is_unit(data):
            return given
        direct = set()
        for item in data if isinstance(data, (list, tuple)) else []:
            if isinstance(item, str) or is_unit(item):
                direct.update(u["id"] for u in collect_units(item))
        return [u for u in given if u["assignable"] or u["id"] in direct]
    if isinstance(data, str):
        items = [_unit_from_string(data)]
    elif is_unit(data):
        items = [_unit_from_dict(data, None, "unit")]
    elif isinstance(data, dict) and "units" in data:
        items = _units_of_record(data, None)
    elif isinstance(data, dict) and "accelerators" in data:
        if not isinstance(data["accelerators"], list):
            raise HostdevError("accelerators must be a list of discovery records, got %s"
                               % type(data["accelerators"]).__name__)
        items = collect_units(data["accelerators"]) if data["accelerators"] else []
    elif isinstance(data, (list, tuple)):
        items = []
        for index, item in enumerate(data):
            if isinstance(item, str):
                items.append(_unit_from_string(item))
            elif is_unit(item):
                items.append(_unit_from_dict(item, None, "item %d" % index))
            elif isinstance(item, dict) and "units" in item:
                items.extend(_units_of_record(item, index))
            else:
                raise HostdevError("item %d: expected a discovery record (with units), a unit (with kind and id), "
                                   "a PCI address or an mdev UUID; got %s" % (index, _describe(item)))
    else:
        raise HostdevError("expected %s; got %s" % (INPUT_FORM, _describe(data)))
    seen = set()
    out = []
    for unit in items:
        if unit["id"] not in seen:
            seen.add(unit["id"])
            out.append(unit)
    return out


def _id_key(text, what):
    """A unit id in its normal form (PCI address or UUID), or HostdevError naming both forms."""
    if isinstance(text, str):
        low = text.strip().lower()
        if UUID_RE.match(low):
            return low
        if PCI_SHAPE_RE.match(low):
            return normalize_pci_address(low, what)
    raise HostdevError("%s: %r is not a unit id; expected %s or %s" % (what, text, PCI_FORM, UUID_FORM))


def find_unit(units, uid, what="unit"):
    key = _id_key(uid, what)
    for unit in units:
        if unit["id"] == key:
            return unit
    known = ", ".join(u["id"] for u in units[:12]) + (", ..." if len(units) > 12 else "")
    raise HostdevError("%s: %s is not a unit of the given discovery data (its units: %s)"
                       % (what, key, known or "none"))


def _as_list(value, option):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise HostdevError("%s: expected a list of strings, got %s" % (option, type(value).__name__))


def _address_patterns(values):
    out = []
    for value in _as_list(values, "addresses"):
        if not isinstance(value, str):
            raise HostdevError("addresses: %r is not a string; expected %s or a shell pattern such as 0000:3b:*"
                               % (value, PCI_FORM))
        low = value.strip().lower()
        if any(c in low for c in _PATTERN_CHARS):
            out.append(low if low.count(":") >= 2 else "0000:" + low)
        else:
            out.append(normalize_pci_address(low, "addresses"))
    return out


def select_units(units, ids=None, addresses=None, families=None, kinds=None, functions=None, assignable_only=True):
    """The units that match every selector given.

    ``ids`` must all exist (else HostdevError). ``addresses`` (PCI addresses or shell patterns) match a unit's
    PCI address, its record's address or its PF (a PF selects its VFs and the mdevs on them). ``functions``
    match the record's function id, the mdev type or the vGPU type id. ``assignable_only`` drops units that
    cannot be given to a guest now (bridges, parents of mdevs or VFs, vendor-VFIO VFs without a vGPU type, units
    whose IOMMU group is not viable), except those named in ``ids``. A unit held back only by members of its
    IOMMU group that are selected too by ``ids`` or ``addresses`` (and assignable with it) is assignable: they are
    passed together.
    """
    id_list = [_id_key(i, "ids") for i in _as_list(ids, "ids")]
    for uid in id_list:
        find_unit(units, uid, "ids")
    patterns = _address_patterns(addresses)
    family_list = _as_list(families, "families")
    for family in family_list:
        if family not in FAMILIES:
            raise HostdevError("families: %r is not a family; expected some of %s" % (family, ", ".join(FAMILIES)))
    kind_list = _as_list(kinds, "kinds")
    for kind in kind_list:
        if kind not in KINDS:
            raise HostdevError("kinds: %r is not a unit kind; expected some of %s" % (kind, ", ".join(KINDS)))
    function_list = [str(f) for f in _as_list(functions, "functions")]
    matched = []
    for unit in units:
        if id_list and unit["id"] not in id_list:
            continue
        if patterns:
            where = [a for a in (unit["address"], unit["device"], unit["physfn"]) if a]
            if not any(fnmatch.fnmatchcase(a, p) for a in where for p in patterns):
                continue
        if family_list and unit["family"] not in family_list:
            continue
        if kind_list and unit["kind"] not in kind_list:
            continue
        if function_list:
            names = [str(v) for v in (unit["function"], unit["type"], unit["vgpu_type"]) if v is not None]
            if not set(names) & set(function_list):
                continue
        matched.append(unit)
    # Only units the caller names (ids, addresses) are passed together; a selection by family, kind or function,
    # or of everything, gives each unit's snippet on its own (libvirt_hostdev writes a file per unit).
    passed = _passed_together(matched) if id_list or patterns else set()
    out = []
    for unit in matched:
        if not unit["assignable"] and unit["id"] in passed:
            unit = dict(unit, assignable=True, why_not=None)
        if assignable_only and not unit["assignable"] and unit["id"] not in id_list:
            continue
        out.append(unit)
    return out


def _passed_together(units):
    """The ids of ``units`` a guest can be given together: each is assignable, or held back only by members of
    its IOMMU group that are themselves in this set (a member passed with it makes no difference to viability).
    """
    held = {}  # id -> addresses of the members that stand in its way
    for unit in units:
        blockers = group_blockers(unit["id"], unit.get("iommu_group_drivers")) if unit["kind"] != "mdev" else []
        if unit["assignable"]:
            held[unit["id"]] = set()
        elif blockers and unit["why_not"] == _group_why_not(unit["iommu_group"], blockers):
            # its only reason is the group (the group check comes last in _hostdev_unit)
            held[unit["id"]] = set(address for address, _driver in blockers)
    changed = True
    while changed:  # drop units whose blockers are not all in the set, until none is dropped
        changed = False
        for uid in list(held):
            if not held[uid] <= set(held):
                del held[uid]
                changed = True
    return set(held)


# ---------------------------------------------------------------------------------------------- XML

def _quote(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("'", "&apos;").replace('"', "&quot;"))


def _attrs(pairs):
    return "".join(" %s='%s'" % (k, _quote(v)) for k, v in pairs if v is not None)


def _pci_attrs(parts):
    domain, bus, slot, function = parts
    return [("domain", "0x%04x" % domain), ("bus", "0x%02x" % bus), ("slot", "0x%02x" % slot),
            ("function", "0x%x" % function)]


def check_applicable(units, options):
    """Refuse options that fit none of ``units`` or cannot hold for one of them."""
    pci = [u for u in units if u["kind"] != "mdev"]
    mdev = [u for u in units if u["kind"] == "mdev"]
    if options["guest_address"] is not None and len(units) != 1:
        raise HostdevError("guest_address: a guest PCI address fits one unit; got %d units (select one, e.g. "
                           "with the unit option)" % len(units))
    for name in ("rom_bar", "rom_file"):
        if options[name] is not None and not pci:
            raise HostdevError("%s: applies to PCI units (kind device or vf); got only mdevs (%s)"
                               % (name, ", ".join(u["id"] for u in mdev)))
    for name in ("display", "ramfb"):
        if options[name] is not None and not mdev:
            raise HostdevError("%s: applies to mdev units; got only PCI units (%s)"
                               % (name, ", ".join(u["id"] for u in pci)))
    if options["managed"] != "auto" and not pci:
        raise HostdevError("managed: applies to PCI units; mdev hostdevs are always managed='no' "
                           "(got only mdevs: %s)" % ", ".join(u["id"] for u in mdev))
    if options["managed"] == "yes":
        unmanaged = {}
        for u in pci:
            held = _unmanaged(u)
            if held:
                unmanaged.setdefault(held, []).append(u["id"])
        for (what, why), ids in unmanaged.items():
            raise HostdevError("managed: yes is not possible for %s%s %s: %s; use managed: auto or no"
                               % (what, "s" if len(ids) > 1 else "", ", ".join(ids), why))


def render(unit, options):
    """The ``<hostdev>`` element of one hostdev unit (options from check_options), no trailing newline."""
    if unit["kind"] == "mdev":
        head = _attrs([("mode", "subsystem"), ("type", "mdev"), ("managed", "no"), ("model", "vfio-pci"),
                       ("display", options["display"]), ("ramfb", options["ramfb"])])
        source = "<address%s/>" % _attrs([("uuid", unit["id"])])
        rom = None
    else:
        if options["managed"] == "auto":
            managed = "no" if _unmanaged(unit) else "yes"
        else:
            managed = options["managed"]
        head = _attrs([("mode", "subsystem"), ("type", "pci"), ("managed", managed)])
        source = "<address%s/>" % _attrs(_pci_attrs(parse_pci_address(unit["id"])))
        rom = None
        if options["rom_bar"] is not None or options["rom_file"] is not None:
            rom = "<rom%s/>" % _attrs([("bar", options["rom_bar"]), ("file", options["rom_file"])])
    lines = ["<hostdev%s>" % head, "  <source>", "    " + source, "  </source>"]
    if rom:
        lines.append("  " + rom)
    if options["guest_address"] is not None:
        lines.append("  <address%s/>" % _attrs([("type", "pci")] + _pci_attrs(options["guest_address"])))
    lines.append("</hostdev>")
    return "\n".join(lines)


def render_units(units, options):
    """Snippets for ``units`` after checking ``options`` (a dict of OPTIONS) against them."""
    checked = check_options(options)
    check_applicable(units, checked)
    return [render(unit, checked) for unit in units]
