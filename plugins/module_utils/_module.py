# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The AnsibleModule every module of the collection is built on: option values ansible-core cannot take end
in a failure that names the option and the accepted form, never a traceback.

- **Logging.** ansible-core logs each invocation to the system log before the module runs. A NUL character
  makes ``syslog.syslog`` raise ("Failed to log to syslog (embedded null character)", naming no option): the
  line (``log``) carries it escaped (``\\x00``). ansible-core encodes each text option as UTF-8 to build the
  line, which raises ``UnicodeEncodeError`` on a lone surrogate (a non-UTF-8 byte decoded with
  ``surrogateescape``): such a top-level text option is refused, naming it.
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

import copy
import decimal
import math

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.common.validation import check_type_dict, check_type_int, check_type_list

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
    """``value`` with NULs and lone surrogates escaped, so that it can go into a logged line."""
    if isinstance(value, bytes):
        return value.replace(b"\x00", b"\\x00")
    if isinstance(value, str):
        value = value.replace("\x00", "\\x00")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _not_utf8(value):
    """True when ``value`` is text that cannot be written as UTF-8 (it holds a lone surrogate: a byte that was not
    UTF-8, decoded with ``surrogateescape``)."""
    try:
        value.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


class SpecType(str):
    """An argument spec ``type`` given as a callable, which ansible-core's validation calls instead of its own
    conversion (the documented form of a custom type). It is also the name of the type it converts to, so that
    what reads the spec as a name (ansible-core's own rules for ``dict`` and ``list`` suboptions, ansible-test's
    comparison with the documented type) reads the same type. ``check(value)`` sees the value before the
    conversion; ``convert`` is ansible-core's public converter of that type."""

    def __new__(cls, name, convert, check):
        self = str.__new__(cls, name)
        self.__name__ = name   # ansible-core names the type with this in its messages
        self.convert = convert
        self.check = check
        return self

    def __call__(self, value):
        self.check(value)
        return self.convert(value)


def _refuse_unconvertible_int(value):
    why = unconvertible_int(value)
    if why:
        raise ValueError(why)


class AccelopsModule(AnsibleModule):
    """AnsibleModule that logs any option value and refuses, naming the option and the accepted form, the
    numbers and paths ansible-core cannot take or the module cannot use.

    ``ranges``: ``{option: (minimum, maximum[, unit])}`` (None: unbounded; a suboption as ``vfs.vlan``) for the
    ``int`` and ``float`` options; ``paths``: names of ``str`` options that hold paths (``path`` options are
    checked anyway).

    Only ansible-core's public interface is used: the ``int`` options' type and the top-level list and dict
    options' type are ``SpecType`` callables (the first refuses what ansible-core's int conversion cannot take,
    the second keeps the value as given, so that a refused list element can be named), ``fail_json`` replaces
    ansible-core's message about such a value by one naming the option, and ``log`` escapes what the system log
    cannot take.
    """

    def __init__(self, argument_spec, ranges=None, paths=(), **kwargs):
        self._accelops_given = {}
        self._accelops_validating = True
        self.accelops_ranges = dict(ranges or {})
        self.accelops_paths = tuple(paths)
        try:
            super(AccelopsModule, self).__init__(self._checked_spec(argument_spec), **kwargs)
        except UnicodeEncodeError:
            # ansible-core encodes each text option as UTF-8 to log the invocation (after its validation); a lone
            # surrogate makes that raise: refused below, naming the option
            pass
        self._accelops_validating = False
        problems = self._check_values()
        if problems:
            self.fail_json(msg=problems[0])

    def _checked_spec(self, spec, top=True):
        """A copy of ``spec`` whose ``int`` types (suboptions too) refuse what ansible-core's int conversion
        cannot take, and whose top-level lists and dicts keep the value as given (in ``_accelops_given``)."""
        checked = {}
        for name, entry in spec.items():
            entry = dict(entry)
            kind = entry.get("type", "str")
            if kind == "int":
                entry["type"] = SpecType("int", check_type_int, _refuse_unconvertible_int)
            elif top and kind in ("list", "dict"):
                entry["type"] = SpecType(kind, check_type_list if kind == "list" else check_type_dict,
                                         self._keeper(name))
            if entry.get("elements") == "int":
                entry["elements"] = SpecType("int", check_type_int, _refuse_unconvertible_int)
            if entry.get("options"):
                entry["options"] = self._checked_spec(entry["options"], top=False)
            checked[name] = entry
        return checked

    def _keeper(self, name):
        def keep(value):
            self._accelops_given[name] = copy.deepcopy(value)
        return keep

    def _unusable_given(self):
        """The values ansible-core's validation refused as they were given (a failed conversion keeps the value;
        a refused list element is dropped, so lists and dicts are read as given)."""
        given = dict(self.params)
        given.update(self._accelops_given)
        problems = []
        for shown, key, container, index in _raw_ints(self.argument_spec, given):
            why = unconvertible_int(container[index])
            if why:
                problems.append("%s: must be %s, got %s (%s)" % (
                    shown, _form("int", self.accelops_ranges.get(key, (None, None))), show(container[index]), why))
        for shown, entry, value in _raw_dicts(self.argument_spec, given):
            form = _not_a_dict(entry, value)
            if form:
                problems.append("%s: must be %s, got %s" % (shown, form, show(value)))
        return problems

    def fail_json(self, msg, **kwargs):
        if getattr(self, "_accelops_validating", False):
            # ansible-core's refusal of a value it cannot convert ("unable to evaluate string as dictionary", an
            # infinity for an int) names the option only in its own words, or none: say which and why
            problems = self._unusable_given()
            if problems:
                msg = problems[0]
        super(AccelopsModule, self).fail_json(msg=msg, **kwargs)

    def log(self, msg, log_args=None):
        # the system log refuses a NUL and the journal and syslog write UTF-8: the line and its fields are logged
        # with them escaped, and the escaped form of a secret is masked like the secret
        self.no_log_values.update([_loggable(v) for v in self.no_log_values if isinstance(v, str)])
        fields = dict((k, _loggable(remove_values(v, self.no_log_values))) for k, v in (log_args or {}).items())
        super(AccelopsModule, self).log(_loggable(msg), log_args=fields)

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
            elif isinstance(value, str) and "." not in key and _not_utf8(value):
                # ansible-core cannot log the invocation with it (it encodes each option's text as UTF-8)
                problems.append("%s: must be UTF-8 text; it holds a character that is not (a byte that was not "
                                "UTF-8)%s" % (shown, "" if entry.get("no_log") else ": %s" % show(value)))
            elif kind == "list" and entry.get("elements") in ("int", "float") and isinstance(value, list):
                for i, element in enumerate(value):
                    why = number_problem(entry["elements"], element, self.accelops_ranges.get(key, (None, None)))
                    if why:
                        problems.append("%s[%d]: must be %s, got %s" % (shown, i, why, show(element)))
        return problems
