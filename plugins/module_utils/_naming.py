# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Names in Placement form: custom traits and resource classes.

Placement accepts custom traits and resource classes matching ``^CUSTOM_[A-Z0-9_]+$`` of at most
255 characters. Everything here is deterministic: the same input always gives the same name, so
host-side discovery and controller-side Placement code agree without talking to each other.

Standard library only, Python 3.9+ (used on managed hosts and on the controller).
"""

from __future__ import annotations

import hashlib
import re

__metaclass__ = type

PREFIX = "CUSTOM_"
MAX_LENGTH = 255

_BAD = re.compile(r"[^A-Z0-9_]+")
_REPEAT = re.compile(r"_{2,}")
_VALID = re.compile(r"^CUSTOM_[A-Z0-9_]+$")


def normalize(text):
    """Upper-case ``text`` and turn every run of characters outside [A-Z0-9_] into one ``_``;
    repeated ``_`` collapse and leading/trailing ``_`` go. ``None`` gives ``""``."""
    if text is None:
        return ""
    s = _BAD.sub("_", ("%s" % (text,)).upper())
    return _REPEAT.sub("_", s).strip("_")


def _fit(name):
    """Keep a name within Placement's 255 characters; a too-long name is cut and given a short hash
    of the whole name, so two long names that share a prefix stay distinct."""
    if len(name) <= MAX_LENGTH:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8].upper()
    return name[:MAX_LENGTH - 9].rstrip("_") + "_" + digest


def custom(*parts):
    """``CUSTOM_`` + the normalised parts joined by ``_`` (empty parts dropped). A first part that
    already starts with ``CUSTOM_`` is not prefixed twice. Raises ValueError when nothing is left."""
    norm = [normalize(p) for p in parts]
    norm = [p for p in norm if p]
    if norm and norm[0].startswith(PREFIX):
        norm[0] = norm[0][len(PREFIX):]
        norm = [p for p in norm if p]
    if not norm:
        raise ValueError("no usable characters in %r for a Placement name" % (parts,))
    return _fit(PREFIX + "_".join(norm))


def is_valid(name):
    """True when ``name`` is a valid custom trait / resource class name."""
    return isinstance(name, str) and len(name) <= MAX_LENGTH and bool(_VALID.match(name))


def trait(*parts):
    """A custom trait from parts: ``trait('fpga', 'intel', 'pac arria10')`` ->
    ``CUSTOM_FPGA_INTEL_PAC_ARRIA10``."""
    return custom(*parts)


def function_trait(name):
    """The trait for a loaded function: ``CUSTOM_FUNCTION_<NAME>``. Raises ValueError when ``name`` has no
    ASCII letter or digit: the bare ``CUSTOM_FUNCTION`` would not be a function's trait, and falls outside the
    ``CUSTOM_FUNCTION_`` prefix that says which traits the collection manages (it would never be removed)."""
    if not normalize(name):
        raise ValueError("function name %r has no ASCII letter or digit to make a trait name from" % (name,))
    return custom("FUNCTION", name)


def discovered_function_trait(*candidates):
    """The function trait of the first candidate (a name read from the device, then its id...) that gives
    one; None when none does. For names the hardware or a tool reported, which nobody validated."""
    for name in candidates:
        if name is not None and normalize(name):
            return function_trait(name)
    return None


def fpga_function_trait(vendor, function_id):
    """Cyborg-compatible FPGA function trait: ``CUSTOM_FPGA_FUNCTION_ID_<VENDOR>_<ID>`` (the id, an
    AFU or xclbin UUID, upper-cased and without dashes)."""
    fid = ("%s" % (function_id,)).replace("-", "")
    return custom("FPGA_FUNCTION_ID", vendor, fid)


def fpga_region_trait(vendor, interface_id):
    """Cyborg-compatible FPGA region trait: ``CUSTOM_FPGA_REGION_<VENDOR>_<INTERFACE_ID>``."""
    iid = ("%s" % (interface_id,)).replace("-", "")
    return custom("FPGA_REGION", vendor, iid)


def family_trait(family):
    """``CUSTOM_ACCELERATOR_<FAMILY>`` (gpu, fpga, nic, qat, pci)."""
    return custom("ACCELERATOR", family)


def programming_model_trait(model):
    """``CUSTOM_PROGRAMMING_<MODEL>`` (dynamic, single, fixed)."""
    return custom("PROGRAMMING", model)


def resource_class(*parts):
    """A custom resource class from parts (same rules as traits)."""
    return custom(*parts)


def pci_resource_class(vendor_id, device_id):
    """Nova's PCI-in-Placement resource class: ``CUSTOM_PCI_<VID>_<PID>`` (4 hex digits each)."""
    def _h(v):
        v = ("%s" % (v,)).lower()
        if v.startswith("0x"):
            v = v[2:]
        if not re.match(r"^[0-9a-f]{1,4}$", v):
            raise ValueError("not a PCI id: %r (expected up to 4 hex digits)" % (v,))
        return v.zfill(4).upper()
    return "%sPCI_%s_%s" % (PREFIX, _h(vendor_id), _h(device_id))


def safe_trait(name, *fallback_parts):
    """``name`` when valid, else the normalised custom trait built from ``fallback_parts`` (or ``name``)."""
    if isinstance(name, str) and is_valid(name):
        return name
    parts = fallback_parts or (name,)
    return custom(*parts)
