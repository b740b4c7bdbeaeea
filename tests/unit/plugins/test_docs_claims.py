# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the Markdown docs (README.md, docs/**/*.md, the roles' READMEs) name must exist and hold: the role variables
they mention are options of the role, a default they quote (in a table's "default" column, or as "`key: value`, the
default") is the option's default in the role's argument spec or the module's DOCUMENTATION, the playbooks they name
exist, and the example inventory sets no variable documented as deprecated. (tools/gates.sh, gate "docs", also runs
ansible-playbook --syntax-check on every playbook.)"""

from __future__ import annotations

import ast
import glob
import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ROLE_PREFIXES = ("accelerator_host", "function_pools", "device_profiles", "nova_compute_config", "libvirt_hostdev",
                 "ironic_accelerators")


def _docs():
    paths = [os.path.join(ROOT, "README.md")]
    paths += sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    paths += sorted(glob.glob(os.path.join(ROOT, "roles", "*", "README.md")))
    return [p for p in paths if os.path.isfile(p)]


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _role_specs():
    """Role name to {option: its spec}, from every entry point of meta/argument_specs.yml."""
    out = {}
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")):
        role = path.split(os.sep)[-3]
        options = {}
        for entry in (yaml.safe_load(_read(path)).get("argument_specs") or {}).values():
            options.update(entry.get("options") or {})
        out[role] = options
    return out


def _module_options():
    """Module name to {option: its documented spec}, from each module's DOCUMENTATION."""
    out = {}
    for path in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py")):
        tree = ast.parse(_read(path))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
                doc = yaml.safe_load(node.value.value)
                out[os.path.basename(path)[:-3]] = doc.get("options") or {}
    return out


def _role_defaults():
    """Role name to its defaults/main.yml (what a default really is; templated defaults stay templates)."""
    out = {}
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "defaults", "main.yml")):
        out[path.split(os.sep)[-3]] = yaml.safe_load(_read(path)) or {}
    return out


ROLES = _role_specs()
DEFAULTS = _role_defaults()
MODULES = _module_options()
TARGETS = set(os.listdir(os.path.join(ROOT, "tests", "integration", "targets")))


def _role_of(name):
    for prefix in ROLE_PREFIXES:
        if name.startswith(prefix + "_"):
            return prefix
    return None


def _role_mentions(role):
    """Every word in the role's files: the variables it sets as facts and reads besides its options."""
    words = set()
    for path in glob.glob(os.path.join(ROOT, "roles", role, "**", "*"), recursive=True):
        if os.path.isfile(path) and not path.endswith("README.md"):
            words.update(re.findall(r"\w+", _read(path)))
    return words


def _same(quoted, default):
    """Whether a default quoted in the docs is ``default``."""
    text = quoted.strip()
    if text in ('""', "''"):
        text = ""
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        value = text
    if value == default or text == str(default):
        return True
    if default is None and value in ("null", None):
        return True
    # a templated default: quoted by the variable it follows ("{{ accelerator_host_functions }}" as
    # accelerator_host_functions), or described with a placeholder ("<root>/run/accelops")
    if isinstance(default, str) and "{{" in default:
        return (re.fullmatch(r"\w+", text) is not None and text in default) or "<" in text
    return False


def _defaults_quoted(path):
    """(line number, option, quoted default) from the Markdown tables with a "default" column and from prose of the
    form "`key: value`, the default" / "`key: value` (the default)"."""
    out = []
    header = None
    for n, line in enumerate(_read(path).splitlines(), 1):
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set(line) <= set("|-: "):
            continue
        if "default" in header and len(cells) == len(header):
            name = re.fullmatch(r"`(\w+)`", cells[0])
            quoted = re.fullmatch(r"`([^`]*)`", cells[header.index("default")])
            if name and quoted:
                out.append((n, name.group(1), quoted.group(1)))
    for n, line in enumerate(_read(path).splitlines(), 1):
        for m in re.finditer(r"`(\w+): ([^`]+)`,? \(?the default", line):
            out.append((n, m.group(1), m.group(2)))
    return out


def _option_defaults(name, page):
    """The defaults ``name`` has: the role's option, or the options of that name of the modules the page names."""
    role = _role_of(name)
    if role and name in DEFAULTS.get(role, {}):
        return [DEFAULTS[role][name]]
    if role and name in ROLES.get(role, {}):
        return [ROLES[role][name].get("default")]
    named = [m for m in MODULES if re.search(r"\b%s\b" % m, page)]
    return [MODULES[m][name].get("default") for m in named if name in MODULES[m]]


CASES = [(os.path.relpath(p, ROOT), p) for p in _docs()]


@pytest.mark.parametrize("rel,path", CASES, ids=[c[0] for c in CASES])
def test_the_role_variables_a_page_names_exist(rel, path):
    page = _read(path)
    missing = []
    for name in sorted(set(re.findall(r"`(\w+)", page))):
        role = _role_of(name)
        # (a name ending in "_" is a prefix, as in `accelerator_host_*`; integration targets share the prefixes)
        if not role or name in ROLES.get(role, {}) or name.endswith("_") or name in TARGETS:
            continue
        if name not in _role_mentions(role):
            missing.append(name)
    assert not missing, "%s names role variables that no role has: %s" % (rel, ", ".join(missing))


@pytest.mark.parametrize("rel,path", CASES, ids=[c[0] for c in CASES])
def test_the_defaults_a_page_quotes_are_the_defaults(rel, path):
    page = _read(path)
    wrong = []
    for line, name, quoted in _defaults_quoted(path):
        defaults = _option_defaults(name, page)
        if defaults and not any(_same(quoted, d) for d in defaults):
            wrong.append("line %d: %s quoted as %r, the default is %r" % (line, name, quoted, defaults[0]))
    assert not wrong, "%s: %s" % (rel, "; ".join(wrong))


@pytest.mark.parametrize("rel,path", CASES, ids=[c[0] for c in CASES])
def test_the_playbooks_a_page_names_exist(rel, path):
    page = _read(path)
    named = set(re.findall(r"playbooks/(\w+\.yml)", page))
    named.update(m + ".yml" for m in re.findall(r"accelops\.lifecycle\.(\w+)", page)
                 if os.path.isfile(os.path.join(ROOT, "playbooks", m + ".yml")) or m in ("converge", "plan", "report"))
    missing = sorted(n for n in named if not os.path.isfile(os.path.join(ROOT, "playbooks", n)))
    assert not missing, "%s names playbooks that do not exist: %s" % (rel, ", ".join(missing))


def test_the_example_inventory_sets_only_live_options():
    """Every role variable the example inventory sets is an option of its role, and none is documented as
    deprecated or without effect."""
    bad = []
    for path in glob.glob(os.path.join(ROOT, "playbooks", "inventory-example", "**", "*.yml"), recursive=True):
        for name in (yaml.safe_load(_read(path)) or {}):
            role = _role_of(name)
            if not role:
                continue
            spec = ROLES.get(role, {}).get(name)
            text = " ".join(spec.get("description") or []) if isinstance((spec or {}).get("description"), list) \
                else str((spec or {}).get("description") or "")
            if spec is None:
                bad.append("%s: %s is not an option of %s" % (os.path.relpath(path, ROOT), name, role))
            elif re.search(r"deprecated|no effect", text, re.I):
                bad.append("%s: %s is deprecated (%s)" % (os.path.relpath(path, ROOT), name, text))
    assert not bad, "; ".join(bad)
