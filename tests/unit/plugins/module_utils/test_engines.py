# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The engines' table (``_engines.ENGINES``): every programming module and kind finds its engine there, each module
imports its own engines by an import statement (what ships them), and the converge imports every engine."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers, _engines
from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge

UTILS = "ansible_collections.accelops.lifecycle.plugins.module_utils"
MODULES_DIR = os.path.dirname(os.path.abspath(accelerator_converge.__file__))
ALL = sorted(set(e for engines in _engines.ENGINES.values() for e in engines))


def imported_utils(path):
    """The module_utils names that the file at ``path`` imports by import statement, anywhere in it."""
    with open(path) as f:
        tree = ast.parse(f.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(UTILS):
            rel = node.module[len(UTILS) + 1:]
            out.update((rel + "." + a.name).lstrip(".") for a in node.names)
            out.add(rel)
    return out


def test_every_kind_that_programs_finds_its_engine_in_the_table():
    programmed = [k for k in _drivers.kinds() if k.module]
    assert sorted(k.module.rsplit(".", 1)[-1] for k in programmed) == ["fpga_program", "nvidia_mig", "sriov_vfs", "vgpu"]
    for k in programmed:
        short = k.module.rsplit(".", 1)[-1]
        assert k.program() is _engines.engine(_engines.ENGINES[short][0]).PROGRAM
        assert k.program().name == short
    assert _drivers.kind("passthrough").program() is None


@pytest.mark.parametrize("module", sorted(_engines.ENGINES))
def test_a_programming_module_imports_its_engines(module):
    # an import statement is what makes ansible-core's payload builder ship a module_utils file
    assert set(_engines.ENGINES[module]) <= imported_utils(os.path.join(MODULES_DIR, module + ".py"))


def test_the_converge_imports_every_engine_of_the_table():
    script = ("from %s import _converge\n_converge.host_module()\nimport json, sys\n"
              "print(json.dumps([m for m in sys.modules if m.startswith(%r)]))\n" % (UTILS, UTILS + "._engines."))
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                         capture_output=True, text=True, check=True)
    assert sorted(m[len(UTILS) + 1:] for m in json.loads(out.stdout)) == ALL
    # and by import statement (the payload builder's way), not only through the engines importing each other
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _converge
    assert set(ALL) <= imported_utils(_converge.__file__.replace(".pyc", ".py"))
