# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The MIG layout grammar: a layout as a declaration and the ``nvidia_mig`` module take it (a list, a mapping of profile
name to count, or a string such as ``3g.40gb + 2 x 1g.10gb``), normalised to a sorted list of GPU instance profile
names; how a layout is written back in messages; and what a discovery record says the GPU carries.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import re

from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import ProgrammingError

__metaclass__ = type

# MIG layouts as a declaration and nvidia_mig give them
# a GI profile name with its media-engine suffix, as `nvidia-smi mig -lgip` lists them: ``+me`` (one media engine),
# ``+me.all`` (all of them), ``-me`` (none), ``+gfx`` (graphics) (NVIDIA MIG User Guide, "Supported MIG Profiles";
# mig-parted's config-default.yaml uses all four)
PROFILE_RE = re.compile(r"^(?:MIG\s+)?(\d+g\.\d+gb(?:\+me\.all|\+me|-me|\+gfx)?)$", re.I)
# the word that asks for no GPU instance at all (an empty value never means "destroy every instance")
NO_INSTANCES = "none"
TERM_RE = re.compile(r"^(?:(\d+)\s*[x*]\s*)?(\S.*)$", re.I)


# -- the declared layout ---------------------------------------------------------------------------------------
def _profile_token(token, option):
    t = ("%s" % (token,)).strip()
    m = PROFILE_RE.match(t)
    if not m:
        raise ProgrammingError("%s: %r is not a MIG profile name (accepted: names such as 1g.10gb, 3g.40gb, "
                               "1g.10gb+me, 1g.24gb+me.all, 1g.24gb-me, 1g.24gb+gfx)" % (option, token))
    return m.group(1).lower()


def parse_layout(value, option="layout", empty_means_none=False):
    """A layout as a sorted list of profile names, from ``[{profile: 1g.10gb, count: 7}]``, ``["3g.40gb", ...]``,
    ``{"1g.10gb": 7}`` (mig-parted's ``mig-devices``) or ``"2 x 3g.40gb + 1 x 1g.10gb"``; ``none``: no instances.

    A layout that destroys every GPU instance must say so in the word ``none``: a blank string (``""``, ``"\\n"``,
    ``['']``), an empty list or mapping, and ``None`` in any other case (what a template renders for a missing
    value) are refused. ``empty_means_none`` admits an empty mapping, as mig-parted's own ``mig-devices: {}``."""
    out = []
    if value is None:
        return None
    if isinstance(value, (dict, list)) and not value and not empty_means_none:
        raise ProgrammingError("%s: an empty %s is refused; write %s for no GPU instance (every instance is destroyed)"
                               % (option, "mapping" if isinstance(value, dict) else "list", NO_INSTANCES))
    if isinstance(value, dict):
        value = [{"profile": k, "count": v} for k, v in value.items()]
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise ProgrammingError("%s: an empty layout is refused; write %s for no GPU instance (every instance is "
                                   "destroyed) or terms like \"2 x 3g.40gb + 1 x 1g.10gb\"" % (option, NO_INSTANCES))
        if text == NO_INSTANCES:
            return []
        if text.lower() == NO_INSTANCES:
            raise ProgrammingError("%s: %r is refused (a template renders a missing value as None); write %s, in lower "
                                   "case, for no GPU instance (every instance is destroyed)" % (option, text, NO_INSTANCES))
        # "+" joins terms, except in a profile name's "+me"/"+gfx" suffix
        terms = [t.strip() for t in re.split(r",|\+(?![A-Za-z])", text)]
        for term in terms:
            m = TERM_RE.match(term) if term else None
            if not m:
                raise ProgrammingError("%s: %r: expected terms like \"2 x 3g.40gb\" joined with +" % (option, term))
            out.extend([_profile_token(m.group(2), option)] * int(m.group(1) or 1))
        return sorted(out)
    if not isinstance(value, list):
        raise ProgrammingError("%s: expected a list of {profile, count}, a list of profile names or a string such as "
                               "\"2 x 3g.40gb + 1 x 1g.10gb\"; got %s" % (option, type(value).__name__))
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.extend(parse_layout(item, "%s[%d]" % (option, i)))
            continue
        if not isinstance(item, dict) or "profile" not in item:
            raise ProgrammingError("%s[%d]: expected {profile: NAME, count: N} or a profile name" % (option, i))
        unknown = sorted(set(item) - {"profile", "count"})
        if unknown:
            raise ProgrammingError("%s[%d]: unknown key(s) %s (accepted: profile, count)" % (option, i, ", ".join(unknown)))
        count = item.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int):
            try:
                count = int("%s" % count)
            except ValueError:
                raise ProgrammingError("%s[%d].count: %r is not a whole number" % (option, i, count))
        if count < 0 or count > 7:
            raise ProgrammingError("%s[%d].count: %d is out of range (0 to 7 instances of a profile per GPU)" % (option, i, count))
        out.extend([_profile_token(item["profile"], "%s[%d].profile" % (option, i))] * count)
    return sorted(out)


def layout_text(names):
    """``2 x 3g.40gb + 1 x 1g.10gb`` (largest first); ``none`` for no instances."""
    if not names:
        return "none"
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    order = sorted(counts, key=lambda n: (-profile_slices(n), n))
    return " + ".join("%d x %s" % (counts[n], n) for n in order)


def profile_slices(name):
    try:
        return int(name.split("g.", 1)[0])
    except ValueError:
        return 0


def record_layout(record):
    """A discovery record's MIG state as ``(mode, layout names, complete)``: mode ``Enabled``/``Disabled``/None (not
    MIG capable or nvidia-smi not run), the sorted profile names of its GPU instances, and whether each has a compute
    instance. What a declaration compares with the layout it asks for (see :func:`carries_layout`)."""
    mig = (record.get("gpu") or {}).get("mig")
    if not mig:
        return None, [], False
    gis = mig.get("gpu_instances") or []
    with_ci = set(c.get("gpu_instance_id") for c in mig.get("compute_instances") or [])
    return mig.get("mode_current"), sorted(g.get("name") for g in gis), all(g.get("id") in with_ci for g in gis)


def carries_layout(record, mode, names):
    """Whether the GPU of discovery ``record`` runs MIG ``mode`` (enabled/disabled) with exactly the layout ``names``
    (profile names, as :func:`parse_layout` gives them; None: any layout): nothing for ``nvidia_mig`` to do. A mode
    change that is only pending does not count as carried."""
    cur, have, complete = record_layout(record)
    mig = (record.get("gpu") or {}).get("mig") or {}
    if mode == "disabled":
        return cur == "Disabled" and mig.get("mode_pending") in (None, "Disabled")
    if cur != "Enabled" or mig.get("mode_pending") not in (None, "Enabled"):
        return False
    return names is None or (have == sorted(names) and complete)
