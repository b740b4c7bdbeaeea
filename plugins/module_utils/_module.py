# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The AnsibleModule every module of the collection is built on: option values ansible-core cannot take end
in a failure that names the option and the accepted form, never a traceback.

- **Logging.** ansible-core logs each invocation to the system log before the module runs. A NUL character
  makes ``syslog.syslog`` raise ("Failed to log to syslog (embedded null character)", naming no option) and a
  lone surrogate (a non-UTF-8 byte decoded with ``surrogateescape``) makes the UTF-8 encoding of the line
  raise ``UnicodeEncodeError``. The logged line carries them escaped (``\\x00``, ``\\udcff``) instead.
- **Numbers.** ansible-core converts an ``int`` option through ``decimal``: an infinity (YAML ``.inf``, the
  string ``inf``) raises ``OverflowError`` inside its argument validation, and a string such as ``1e99999999``
  builds an integer of a hundred million digits (minutes of CPU). Such values are refused before that
  conversion. After it, every ``int`` and ``float`` option (suboptions too) must be finite and within the
  range the module declares (``ranges``).
- **Paths.** Every ``path`` option, and the ``str`` options the module names in ``paths``, must be text the
  kernel can take as a path: no NUL, valid UTF-8 (the path also goes into generated UTF-8 files and JSON), at
  most 4095 bytes, each name at most 255 bytes. Whether it must be absolute or exist is the module's check.

Standard library only, Python 3.9+ (runs on managed hosts).
"""

from __future__ import annotations

import decimal
import math

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.validation import check_type_dict, check_type_list

# Linux's PATH_MAX (with the terminating NUL) and NAME_MAX.
PATH_MAX_BYTES = 4095
NAME_MAX_BYTES = 255
PATH_FORM = ("a path: UTF-8 text without NUL characters, at most %d bytes, each name at most %d bytes"
             % (PATH_MAX_BYTES, NAME_MAX_BYTES))
# A whole number written with a larger exponent than this is refused before ansible-core turns it into an int
# (every range declared here is far below 10**18).
_MAX_EXPONENT = 18


def show(value, limit=80):
    """``repr`` of an option value for a message, shortened; never raises (an int of more than 4300 digits
    cannot be turned into text on Python 3.11+)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return "a %d-bit integer" % value.bit_length()
    try:
        text = repr(value)
    except Exception:  # pylint: disable=broad-except
        return "a %s" % type(value).__name__
    return text if len(text) <= limit else text[:limit] + "...(%d characters)" % len(text)


def path_problem(value):
    """Why ``value`` cannot be a path (a phrase), or None when it can."""
    if not isinstance(value, str):
        return "got %s" % type(value).__name__
    if not value:
        return "got an empty string"
    if "\x00" in value:
        return "it holds a NUL character"
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid UTF-8 text"
    if len(raw) > PATH_MAX_BYTES:
        return "it is %d bytes long" % len(raw)
    longest = max(len(part) for part in raw.split(b"/"))
    if longest > NAME_MAX_BYTES:
        return "it has a name of %d bytes" % longest
    return None


def check_path(option, value, secret=False):
    """ValueError naming ``option`` and the accepted form when ``value`` cannot be a path."""
    problem = path_problem(value)
    if problem:
        raise ValueError("%s: must be %s; %s%s" % (option, PATH_FORM, problem, "" if secret else ": %s" % show(value)))


def _form(kind, bounds):
    lo, hi = bounds[0], bounds[1]
    unit = bounds[2] if len(bounds) > 2 else None
    noun = "a whole number" if kind == "int" else "a number"
    if unit:
        noun += " of " + unit
    if lo is not None and hi is not None:
        return "%s between %s and %s" % (noun, lo, hi)
    if lo is not None:
        return "%s of at least %s" % (noun, lo)
    if hi is not None:
        return "%s of at most %s" % (noun, hi)
    return "a finite " + noun[2:] if noun.startswith("a ") else noun


def number_problem(kind, value, bounds=(None, None)):
    """Why ``value`` (already converted by ansible-core to ``kind``, int or float) is not accepted, as the
    accepted form, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _form(kind, bounds)
    if kind == "float" and not math.isfinite(value):
        return _form(kind, bounds)
    lo, hi = bounds[0], bounds[1]
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        return _form(kind, bounds)
    return None


def unconvertible_int(value):
    """Why ansible-core's int conversion cannot be given ``value`` (it would raise OverflowError or run for
    minutes), or None when ansible-core can judge it itself."""
    if isinstance(value, float):
        return None if math.isfinite(value) else "not a finite number"
    if not isinstance(value, str):
        return None
    try:
        number = decimal.Decimal(value)
    except (decimal.DecimalException, ValueError, TypeError):
        return None  # ansible-core says it cannot be converted
    if not number.is_finite():
        return "not a finite number"
    if number.adjusted() > _MAX_EXPONENT:
        return "far too large"
    return None


def _walk(spec, params, shown="", key=""):
    """``(shown name, range key, spec entry, value)`` of every option set in ``params`` (validated: canonical
    names), suboptions included; ``vfs[3].vlan`` is shown, ``vfs.vlan`` is the key ranges are declared under."""
    if not isinstance(params, dict):
        return
    for name, entry in spec.items():
        value = params.get(name)
        if value is None:
            continue
        yield shown + name, key + name, entry, value
        options = entry.get("options")
        if options and entry.get("type") == "list" and isinstance(value, list):
            for i, element in enumerate(value):
                yield from _walk(options, element, "%s%s[%d]." % (shown, name, i), key + name + ".")
        elif options and isinstance(value, dict):
            yield from _walk(options, value, shown + name + ".", key + name + ".")


def _raw_ints(spec, params, shown="", key=""):
    """``(shown name, range key, container, index)`` of every value not yet validated that ansible-core will
    convert to an int: int options and list elements, under any alias, suboptions included."""
    if not isinstance(params, dict):
        return
    for name, entry in spec.items():
        for given in [name] + list(entry.get("aliases") or []):
            value = params.get(given)
            if given not in params:
                continue
            if entry.get("type") == "int":
                yield shown + given, key + name, params, given
            elif entry.get("type") == "list" and isinstance(value, list):
                for i, element in enumerate(value):
                    if entry.get("elements") == "int":
                        yield "%s%s[%d]" % (shown, given, i), key + name, value, i
                    elif entry.get("options"):
                        yield from _raw_ints(entry["options"], element, "%s%s[%d]." % (shown, given, i),
                                             key + name + ".")
            elif entry.get("options") and isinstance(value, dict):
                yield from _raw_ints(entry["options"], value, shown + given + ".", key + name + ".")


def _raw_dicts(spec, params, shown=""):
    """``(shown name, spec entry, value)`` of every value not yet validated that ansible-core will turn into a
    dict (dict options, elements of lists of dicts), top level and one level of suboptions."""
    if not isinstance(params, dict):
        return
    for name, entry in spec.items():
        for given in [name] + list(entry.get("aliases") or []):
            value = params.get(given)
            if value is None:
                continue
            if entry.get("type") == "dict":
                yield shown + given, entry, value
            elif entry.get("type") == "list" and entry.get("elements") == "dict":
                try:
                    elements = check_type_list(value)   # a string is split at commas, as ansible-core does
                except Exception:  # pylint: disable=broad-except
                    continue   # ansible-core's message names the option
                for i, element in enumerate(elements):
                    yield "%s%s[%d]" % (shown, given, i), entry, element


def _not_a_dict(entry, value):
    """The accepted form when ansible-core cannot make a dict of ``value`` (its own message names no option),
    or None."""
    if isinstance(value, dict):
        return None
    try:
        check_type_dict(value)
        return None
    except Exception:  # pylint: disable=broad-except
        keys = sorted(entry.get("options") or ())
        return "a dictionary" + (" with the keys %s" % ", ".join(keys) if keys else "")


def _loggable(value):
    """``value`` with NULs and lone surrogates escaped, so the invocation line can be logged."""
    if isinstance(value, str):
        value = value.replace("\x00", "\\x00")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


class AccelopsModule(AnsibleModule):
    """AnsibleModule that logs any option value and refuses, naming the option and the accepted form, the
    numbers and paths ansible-core cannot take or the module cannot use.

    ``ranges``: ``{option: (minimum, maximum[, unit])}`` (None: unbounded; a suboption as ``vfs.vlan``) for the
    ``int`` and ``float`` options; ``paths``: names of ``str`` options that hold paths (``path`` options are
    checked anyway).
    """

    def __init__(self, argument_spec, ranges=None, paths=(), **kwargs):
        self._accelops_problems = []
        self._accelops_validating = True
        self.accelops_ranges = dict(ranges or {})
        self.accelops_paths = tuple(paths)
        super(AccelopsModule, self).__init__(argument_spec, **kwargs)
        self._accelops_validating = False
        problems = self._accelops_problems + self._check_values()
        if problems:
            self.fail_json(msg=problems[0])

    def fail_json(self, msg, **kwargs):
        # ansible-core's own refusal of a value found unusable before its validation (a list element that is
        # not a dict: "unable to evaluate string as dictionary") names no option: say which and why instead
        if getattr(self, "_accelops_validating", False) and self._accelops_problems:
            msg = self._accelops_problems[0]
        super(AccelopsModule, self).fail_json(msg=msg, **kwargs)

    def _load_params(self):
        super(AccelopsModule, self)._load_params()
        # before ansible-core's validation: a value its int conversion cannot take is replaced by 0 (an int it
        # accepts) and refused once the validation has run
        for shown, key, container, index in list(_raw_ints(self.argument_spec, self.params)):
            why = unconvertible_int(container[index])
            if why:
                self._accelops_problems.append("%s: must be %s, got %s (%s)" % (
                    shown, _form("int", self.accelops_ranges.get(key, (None, None))), show(container[index]), why))
                container[index] = 0
        for shown, entry, value in list(_raw_dicts(self.argument_spec, self.params)):
            form = _not_a_dict(entry, value)
            if form:
                self._accelops_problems.append("%s: must be %s, got %s" % (shown, form, show(value)))

    def _check_values(self):
        problems = []
        for shown, key, entry, value in _walk(self.argument_spec, self.params):
            kind = entry.get("type", "str")
            if kind in ("int", "float"):
                why = number_problem(kind, value, self.accelops_ranges.get(key, (None, None)))
                if why:
                    problems.append("%s: must be %s, got %s" % (shown, why, show(value)))
            elif kind == "path" or (kind == "str" and key in self.accelops_paths):
                try:
                    check_path(shown, value, secret=bool(entry.get("no_log")))
                except ValueError as e:
                    problems.append(str(e))
            elif kind == "list" and entry.get("elements") in ("int", "float") and isinstance(value, list):
                for i, element in enumerate(value):
                    why = number_problem(entry["elements"], element, self.accelops_ranges.get(key, (None, None)))
                    if why:
                        problems.append("%s[%d]: must be %s, got %s" % (shown, i, why, show(element)))
        return problems

    def _log_invocation(self):
        # the line is built from self.params: log escaped copies, keep the values the module uses
        params, secrets = self.params, self.no_log_values
        self.params = dict((k, _loggable(v)) for k, v in params.items())
        self.no_log_values = secrets | set(_loggable(v) for v in secrets)
        try:
            super(AccelopsModule, self)._log_invocation()
        finally:
            self.params, self.no_log_values = params, secrets

    def _log_to_syslog(self, msg):
        super(AccelopsModule, self)._log_to_syslog(_loggable(msg))
