# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Audit lines for every change a programming module makes on a host.

One line per change: what was done, to which device, the old and the new value, and who ran it. The
line goes to the system log (stdlib ``syslog``, facility AUTHPRIV where the platform has it, ident
``accelops.lifecycle``) and is also returned, so modules put the lines in their result (``audit``)::

    from ansible_collections.accelops.lifecycle.plugins.module_utils._audit import Auditor

    auditor = Auditor(module, "sriov_vfs")          # module may be None (tests, engines without one)
    auditor.record("set sriov_numvfs", "0000:d8:00.0", old="0", new="8")
    result["audit"] = auditor.lines                 # the lines written, in order

or one-shot: ``audit(module_or_none, action, device, old, new, module_name="fpga_program")`` returns the line.

Line format (one line, ``key=value`` pairs)::

    accelops.lifecycle sriov_vfs: action="set sriov_numvfs" device=0000:d8:00.0 old=0 new=8 user=root uid=0 root=/

A value is either a plain token (letters, digits and ``_.:/@+,=-``), ``null``, or one JSON value: a string
that needs quoting (spaces, quotes, newlines...) is one JSON string literal; a list or a dict is its compact
JSON, encoded once (``old=["nvidia-231","nvidia-232"]``, never a JSON string of JSON). ``parse_line``
reads a line back into a dict.

Logging never fails a module: when syslog is unavailable (not POSIX, no /dev/log) the line is only
returned. ``ACCELOPS_AUDIT_SYSLOG=0`` in the environment turns the syslog write off (tests).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import json
import os
import re

try:
    import syslog as _syslog
except ImportError:  # pragma: no cover - not POSIX
    _syslog = None

try:
    import pwd as _pwd
except ImportError:  # pragma: no cover - not POSIX
    _pwd = None

IDENT = "accelops.lifecycle"
_PLAIN = re.compile(r"^[A-Za-z0-9_.:/@+,=-]+$")


def who():
    """``user=<name> uid=<n>`` of the process, plus ``sudo_user`` when run through sudo."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    name = None
    if _pwd is not None and uid is not None:
        try:
            name = _pwd.getpwuid(uid).pw_name
        except KeyError:
            name = None
    parts = ["user=%s" % _value(name or os.environ.get("USER") or "?"), "uid=%s" % (uid if uid is not None else "?")]
    sudo = os.environ.get("SUDO_USER")
    if sudo:
        parts.append("sudo_user=%s" % _value(sudo))
    return " ".join(parts)


def _value(v):
    """One value of the line: a plain token, ``null``, or a single JSON encoding (see the module docstring)."""
    if v is None:
        return "null"
    if isinstance(v, bool) or not isinstance(v, str):
        # numbers, booleans, lists, dicts: their JSON, once (ensure_ascii keeps the line plain ASCII)
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    if v and _PLAIN.match(v) and v != "null":
        return v
    return json.dumps(v)


def parse_line(line):
    """Read an audit line back: ``{"module": name, "action": ..., "device": ..., "old": ..., "new": ..., ...}``.
    Plain tokens come back as strings, JSON values decoded (``null`` as None)."""
    prefix = IDENT + " "
    if not line.startswith(prefix) or ": " not in line:
        raise ValueError("not an audit line: %r" % (line,))
    name, rest = line[len(prefix):].split(": ", 1)
    out = {"module": name}
    decoder = json.JSONDecoder()
    i = 0
    while i < len(rest):
        if rest[i] == " ":
            i += 1
            continue
        eq = rest.index("=", i)
        key = rest[i:eq]
        i = eq + 1
        if i < len(rest) and rest[i] in "\"[{":
            value, i = decoder.raw_decode(rest, i)
        else:
            end = rest.find(" ", i)
            end = len(rest) if end < 0 else end
            value = rest[i:end]
            i = end
            if value == "null":
                value = None
        out[key] = value
    return out


def format_line(module_name, action, device, old, new, root=None, extra=None):
    """The audit line (without the syslog prefix)."""
    line = "%s %s: action=%s device=%s old=%s new=%s %s" % (
        IDENT, module_name or "-", _value(action), _value(device), _value(old), _value(new), who())
    if root and root != "/":
        line += " root=%s" % _value(root)
    for k in sorted(extra or {}):
        line += " %s=%s" % (k, _value(extra[k]))
    return line


def write_syslog(line):
    """Send one line to the system log; False when that is not possible (never raises)."""
    if _syslog is None or os.environ.get("ACCELOPS_AUDIT_SYSLOG", "1") == "0":
        return False
    try:
        facility = getattr(_syslog, "LOG_AUTHPRIV", _syslog.LOG_USER)
        _syslog.openlog(IDENT, 0, facility)
        _syslog.syslog(_syslog.LOG_NOTICE, line)
        _syslog.closelog()
    except Exception:  # pylint: disable=broad-except
        return False
    return True


def _module_name(module):
    name = getattr(module, "_name", None) or ""
    return name.rsplit(".", 1)[-1] or None


def _root(module):
    params = getattr(module, "params", None) or {}
    return params.get("root")


def audit(module, action, device, old, new, module_name=None, extra=None):
    """Write one audit line to syslog and return it. ``module`` may be None."""
    line = format_line(module_name or _module_name(module), action, device, old, new, root=_root(module), extra=extra)
    write_syslog(line)
    return line


class Auditor(object):
    """Collects the audit lines of one module run (``lines``) while writing each to syslog."""

    def __init__(self, module=None, module_name=None):
        self.module = module
        self.module_name = module_name or _module_name(module)
        self.lines = []

    def record(self, action, device, old=None, new=None, extra=None):
        line = audit(self.module, action, device, old, new, module_name=self.module_name, extra=extra)
        self.lines.append(line)
        return line

    def wrap(self, fn, action, device, old=None, new=None):
        """A callable that runs ``fn`` and, when it succeeds, records the change (for plan steps)."""
        def run():
            out = fn()
            self.record(action, device, old, new)
            return out
        return run
