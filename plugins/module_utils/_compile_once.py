# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Imported first by a module: every file the module imports after it from its AnsiballZ payload is compiled once,
not twice.

A module runs from a zip (the AnsiballZ payload), where Python keeps no bytecode, so each file it imports is compiled
from source on every run. CPython's zipimport compiles it twice besides: the import asks the loader for the file's
name (``zipimporter.get_filename``), which compiles the source to learn it, then for its code (``get_code``), which
compiles it again (python/cpython issue 141276, open for 3.13 to 3.15). For ``accelerator_converge`` that was 45 ms
of CPU on each run out of about 100 ms of imports (bench/BENCHMARKS.md, "compiled once"). Here the code made for the
name is kept until the same import asks for it, then handed over and dropped.

Only a module's own process is changed (the file does nothing unless it was itself imported from a zip), and only
imports from a zip. A Python whose zipimport has no ``_get_module_code`` is left as it is.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import zipimport


def install():
    """Make the zip importer hand the code it compiled for ``get_filename`` to the ``get_code`` of the same import."""
    module_code = getattr(zipimport, "_get_module_code", None)
    importer = zipimport.zipimporter
    if module_code is None or getattr(importer.get_filename, "compiles_once", False):
        return
    made = {}

    def get_filename(self, fullname):
        code, is_package, path = module_code(self, fullname)
        made[(self.archive, self.prefix, fullname)] = (code, is_package, path)
        return path

    def get_module_code(self, fullname):
        return made.pop((self.archive, self.prefix, fullname), None) or module_code(self, fullname)

    get_filename.compiles_once = True
    importer.get_filename = get_filename
    zipimport._get_module_code = get_module_code


if isinstance(globals().get("__loader__"), zipimport.zipimporter):
    install()
