# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a module ships in its AnsiballZ payload.

The payload is built here by ansible-core's own builder (``module_common.recursive_finder``: every module_utils file
the module's imports reach, imports inside function bodies included). The programming engines (``_engines.fpga``,
``_engines.vgpu``, ``_engines.sriov``, ``_engines.nvidia_mig``; ``_engines.nvidia_vgpu``, NVIDIA's vGPU backend) are imported by
name by the declaration's kinds (``kind.program()``) and by the NVIDIA driver (``vendor_vfio_backend``), which the
builder does not follow: a module ships an engine only when it imports it itself. ``accelerator_converge``
programs through every kind and must ship them all; a module that only discovers or reads (``accelerator_info``,
``device_profile``, the Placement modules) must ship none.

(Here, not beside the module tests: ansible-test runs those without ansible-core's controller code, and the
payload builder is controller code. What a no-op converge imports: tests/unit/plugins/modules/test_converge_loads.py.)
"""

from __future__ import annotations

import datetime
import io
import os
import sys
import zipfile

import pytest

from ansible.executor import module_common

from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers
from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge

PLUGINS = "ansible_collections.accelops.lifecycle.plugins"
UTILS_DIR = "ansible_collections/accelops/lifecycle/plugins/module_utils/"
MODULES_DIR = os.path.dirname(os.path.abspath(accelerator_converge.__file__))
NOT_PROGRAMMING = ("accelerator_info", "device_profile", "device_profile_info", "placement_provider_tree",
                   "placement_provider_info", "placement_provider_drain", "placement_aggregate_info",
                   "baremetal_node_accelerators", "placement_one_time_use")
_CACHE = {}


def shipped(module):
    """The collection's module_utils in ``module``'s payload, by name relative to module_utils (``_engines.fpga``,
    ``_drivers.nvidia``)."""
    if module not in _CACHE:
        with open(os.path.join(MODULES_DIR, module + ".py"), "rb") as f:
            data = f.read()
        with zipfile.ZipFile(io.BytesIO(), "w") as zf:
            module_common.recursive_finder(module, "%s.modules.%s" % (PLUGINS, module), data, zf,
                                           datetime.datetime.now(datetime.timezone.utc),
                                           module_common._builder.ExtensionManager.create(task_vars={}))
            names = zf.namelist()
        files = [n[len(UTILS_DIR):-len(".py")] for n in names if n.startswith(UTILS_DIR) and n.endswith(".py")]
        # a package by its name (_drivers/__init__.py: _drivers); module_utils' own __init__ is not a file of ours
        _CACHE[module] = set(f[:-len("/__init__")].replace("/", ".") if f.endswith("/__init__") else f.replace("/", ".")
                             for f in files if f != "__init__")
    return _CACHE[module]


def test_the_builder_sees_what_a_module_imports():
    # the helper above reads real payloads: a module's own imports are in it, engines of other modules are not
    assert {"_discovery", "_drivers", "_drivers.nvidia", "_module"} <= shipped("accelerator_info")
    assert {"_engines.sriov", "_hostmodule"} <= shipped("sriov_vfs") and "_engines.fpga" not in shipped("sriov_vfs")


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


@pytest.mark.parametrize("module, engine", [("sriov_vfs", "_engines.sriov"), ("vgpu", "_engines.vgpu"), ("fpga_program", "_engines.fpga"),
                                            ("nvidia_mig", "_engines.nvidia_mig"),
                                            ("vgpu", "_engines.nvidia_vgpu"),
                                            ("accelerator_converge", "_engines.nvidia_vgpu"),
                                            ("one_time_use_reset", "_engines.fpga")])
def test_a_programming_module_ships_its_engine(module, engine):
    assert engine in shipped(module)
