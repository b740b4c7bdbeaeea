# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a module ships in its AnsiballZ payload.

ansible-core puts into a module's payload every module_utils file that the module's import statements reach,
imports inside function bodies included, following the files it adds in the same way. The files are found
here the same way from the source, with ``ast`` (``payload_files``), not with ansible-core's private payload
builder. The programming engines (``_engines``' ``ENGINES`` table: ``_engines.fpga``, ``_engines.vgpu``,
``_engines.sriov``, ``_engines.nvidia_mig``; ``_engines.nvidia_vgpu``, NVIDIA's vGPU backend) are imported by name by the declaration's kinds
(``kind.program()``) and by the NVIDIA driver (``vendor_vfio_backend``), which no import statement shows: a
module ships an engine only when it imports it itself. ``accelerator_converge`` programs through every kind and
must ship them all; a module that only discovers or reads (``accelerator_info``, ``device_profile``, the
Placement modules) must ship none.

(What a no-op converge imports: tests/unit/plugins/modules/test_converge_loads.py.)
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers
from ansible_collections.accelops.lifecycle.plugins.module_utils import _engines
from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge

PLUGINS = "ansible_collections.accelops.lifecycle.plugins"
UTILS = PLUGINS + ".module_utils"
MODULES_DIR = os.path.dirname(os.path.abspath(accelerator_converge.__file__))
UTILS_DIR = os.path.join(os.path.dirname(MODULES_DIR), "module_utils")
NOT_PROGRAMMING = ("accelerator_info", "device_profile", "device_profile_info", "placement_provider_tree",
                   "placement_provider_info", "placement_provider_drain", "placement_aggregate_info",
                   "baremetal_node_accelerators", "placement_one_time_use")
_CACHE = {}


def _source_of(name, utils_dir):
    """The file of module_utils module ``name`` (``_drivers.nvidia``; a package: its ``__init__.py``), or None."""
    base = os.path.join(utils_dir, *name.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def _imported(path, utils_dir):
    """The module_utils modules the import statements of the file at ``path`` name (anywhere in it), with the
    packages above them: ``from X import Y`` names ``X.Y`` when that is a module, else ``X``."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            candidates = [node.module] + ["%s.%s" % (node.module, a.name) for a in node.names]
        else:
            continue
        for full in candidates:
            if not full.startswith(UTILS + "."):
                continue
            parts = full[len(UTILS) + 1:].split(".")
            for i in range(1, len(parts) + 1):
                if _source_of(".".join(parts[:i]), utils_dir):
                    names.add(".".join(parts[:i]))
    return names


def payload_files(module_path, utils_dir=UTILS_DIR):
    """{module_utils module (``_fpga``, ``_drivers.nvidia``; a package by its name): its file} of everything the
    module at ``module_path`` ships: what its imports reach, and theirs, transitively."""
    files = {}
    todo = sorted(_imported(module_path, utils_dir))
    while todo:
        name = todo.pop()
        if name in files:
            continue
        files[name] = _source_of(name, utils_dir)
        todo.extend(sorted(_imported(files[name], utils_dir) - set(files)))
    return files


def shipped(module):
    """The collection's module_utils in ``module``'s payload, by name relative to module_utils (``_engines.fpga``,
    ``_drivers.nvidia``)."""
    if module not in _CACHE:
        _CACHE[module] = set(payload_files(os.path.join(MODULES_DIR, module + ".py")))
    return _CACHE[module]


def test_the_walker_sees_what_a_module_imports():
    # a module's own imports are in it, the files they import too, engines of other modules are not
    assert {"_discovery", "_drivers", "_drivers.nvidia", "_module"} <= shipped("accelerator_info")
    assert {"_engines.sriov", "_hostmodule"} <= shipped("sriov_vfs") and "_engines.fpga" not in shipped("sriov_vfs")


def test_the_walker_sees_every_module_a_module_loads():
    """Each module, imported by a fresh interpreter, loads only module_utils modules the walker says it ships (a
    missed import would be a file missing from the payload on a host)."""
    modules = sorted(n[:-3] for n in os.listdir(MODULES_DIR) if n.endswith(".py") and not n.startswith("_"))
    script = ("import importlib, json, sys\n"
              "out = {}\n"
              "for m in %r:\n"
              "    before = set(sys.modules)\n"
              "    importlib.import_module(%r + '.modules.' + m)\n"
              "    out[m] = sorted(n for n in set(sys.modules) - before if n.startswith(%r + '.'))\n"
              "    for n in set(sys.modules) - before:\n"
              "        if n.startswith('ansible_collections.'):\n"
              "            del sys.modules[n]\n"
              "print(json.dumps(out))\n" % (modules, PLUGINS, UTILS))
    loaded = json.loads(subprocess.run([sys.executable, "-c", script], check=True, stdout=subprocess.PIPE,
                                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))).stdout)
    assert set(loaded) == set(modules)
    missed = dict((m, sorted(set(n[len(UTILS) + 1:] for n in names) - shipped(m))) for m, names in loaded.items())
    assert len(loaded["accelerator_info"]) > 5
    assert not any(missed.values()), missed


@pytest.mark.parametrize("module", NOT_PROGRAMMING)
@pytest.mark.parametrize("engine", ["_engines.fpga", "_engines.vgpu", "_engines.nvidia_vgpu"])
def test_a_module_that_does_not_program_ships_no_engine(module, engine):
    assert engine not in shipped(module)


@pytest.mark.parametrize("module", NOT_PROGRAMMING)
def test_a_module_that_does_not_program_ships_no_mig_engine(module):
    assert shipped(module) & {"_engines.nvidia_mig", "_engines.sriov", "_hostmodule"} == set()


def engine_of(program):
    """The module_utils module whose ``PROGRAM`` is ``program``."""
    return [name[len(PLUGINS + ".module_utils."):] for name, mod in list(sys.modules.items())
            if name.startswith(PLUGINS + ".module_utils.") and getattr(mod, "PROGRAM", None) is program]


@pytest.mark.parametrize("kind", [k for k in _drivers.KIND_NAMES if _drivers.kind(k).module])
def test_accelerator_converge_ships_the_engine_of_every_kind(kind):
    engines = engine_of(_drivers.kind(kind).program())
    assert len(engines) == 1 and engines[0] in shipped("accelerator_converge")


@pytest.mark.parametrize("module", ["accelerator_converge", "baremetal_node_accelerators"])
@pytest.mark.parametrize("kind", _drivers.KIND_NAMES)
def test_a_module_that_reads_declarations_ships_every_kind(module, kind):
    # the declaration asks the registry for an entry's kind: every kind object lives in a family's driver file, which
    # a module that reads declarations ships (whether it programs or not), and its engine is imported by name
    assert type(_drivers.kind(kind)).__module__[len(PLUGINS + ".module_utils."):] in shipped(module)


@pytest.mark.parametrize("module, engine", sorted((m, e) for m, engines in _engines.ENGINES.items() for e in engines))
def test_a_programming_module_ships_its_engine(module, engine):
    # the engine table is what the kinds' program() and the converge read: each module ships what it lists
    assert engine in shipped(module)


@pytest.mark.parametrize("engine", sorted(set(e for engines in _engines.ENGINES.values() for e in engines)))
def test_accelerator_converge_ships_every_engine_of_the_table(engine):
    assert engine in shipped("accelerator_converge")
