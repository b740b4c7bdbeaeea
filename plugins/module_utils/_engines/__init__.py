# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The programming engines: each plans, applies, rolls back and verifies one kind of change on a host.

:data:`ENGINES` is the one table of which module programs through which engine. A declaration kind names its module
(``Kind.module``) and finds the engine here (:func:`program`); ``_converge.host_module`` imports every engine of the
table, and the payload test checks that each module ships the engines listed for it.

The engines are imported by name here (importlib), not by an import statement: ansible-core's payload builder follows
import statements only, so a module that asks the driver registry about kinds does not ship any engine. A module that
programs imports its engine itself (an import statement), which is what ships it.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import importlib

__metaclass__ = type

# module (short name) -> the engines it programs through, by module_utils name; the first holds its ``PROGRAM``.
# The vgpu module's second engine is NVIDIA's ``vendor_vfio`` backend, which the GPU family hands out
# (``Driver.vendor_vfio_backend``); one_time_use_reset reloads an FPGA's declared function with fpga_program's engine.
ENGINES = {
    "sriov_vfs": ("_engines.sriov",),
    "vgpu": ("_engines.vgpu", "_engines.nvidia_vgpu"),
    "fpga_program": ("_engines.fpga",),
    "nvidia_mig": ("_engines.nvidia_mig",),
    "one_time_use_reset": ("_engines.fpga",),
}

_PACKAGE = "ansible_collections.accelops.lifecycle.plugins.module_utils."


def engine(name):
    """The engine module ``name`` (a module_utils name of :data:`ENGINES`), imported now."""
    return importlib.import_module(_PACKAGE + name)


def program(module):
    """The :class:`_hostmodule.Program` of ``module`` (``accelops.lifecycle.sriov_vfs`` or ``sriov_vfs``), its engine
    imported now."""
    return engine(ENGINES[module.rsplit(".", 1)[-1]][0]).PROGRAM
