# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_compile_once: a file imported from a zip (as a module's files are, from its AnsiballZ payload) is compiled
once, and imports the same as without it."""

from __future__ import annotations

import sys
import zipfile
import zipimport

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _compile_once

SOURCES = {
    "zpkg/__init__.py": "NAME = 'package'\n",
    "zpkg/one.py": "from zpkg.two import TWO\nONE = 1 + TWO\n",
    "zpkg/two.py": "TWO = 2\n",
}


@pytest.fixture
def archive(tmp_path, monkeypatch):
    """A zip of a small package on sys.path, with every source compile counted by module name."""
    path = str(tmp_path / "payload.zip")
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in SOURCES.items():
            zf.writestr(name, text)
    compiled = []
    module_code = zipimport._get_module_code

    def counting(importer, fullname):
        compiled.append(fullname)
        return module_code(importer, fullname)
    # the zip importer as it was, restored after the test (install() replaces both)
    monkeypatch.setattr(zipimport, "_get_module_code", counting)
    monkeypatch.setattr(zipimport.zipimporter, "get_filename", zipimport.zipimporter.get_filename)
    monkeypatch.syspath_prepend(path)
    for name in ("zpkg", "zpkg.one", "zpkg.two"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return path, compiled


def test_each_file_is_compiled_once(archive):
    path, compiled = archive
    _compile_once.install()
    import zpkg.one  # pylint: disable=import-error,import-outside-toplevel
    assert zpkg.one.ONE == 3 and sys.modules["zpkg"].NAME == "package"
    assert sorted(compiled) == ["zpkg", "zpkg.one", "zpkg.two"]
    # what a traceback and __file__ name: the file inside the zip, as without the change
    assert zpkg.one.__file__ == path + "/zpkg/one.py" and zpkg.one.__spec__.origin == zpkg.one.__file__


def test_without_it_python_compiles_each_file_twice(archive):
    # the cost it removes (python/cpython issue 141276); when Python stops paying it, install() changes nothing
    _path, compiled = archive
    import zpkg.one  # noqa: F401 pylint: disable=import-error,import-outside-toplevel,unused-import
    if len(compiled) == 3:
        pytest.skip("this Python compiles a file from a zip once")
    assert sorted(compiled) == ["zpkg", "zpkg", "zpkg.one", "zpkg.one", "zpkg.two", "zpkg.two"]


def test_installing_twice_wraps_once(archive):
    _path, compiled = archive
    _compile_once.install()
    wrapped = zipimport.zipimporter.get_filename
    _compile_once.install()
    assert zipimport.zipimporter.get_filename is wrapped
    import zpkg.two  # noqa: F401 pylint: disable=import-error,import-outside-toplevel,unused-import
    assert compiled == ["zpkg", "zpkg.two"]


def test_a_file_imported_from_a_directory_changes_nothing():
    # imported the usual way (from files, as in these tests and on the controller) the module installs nothing
    assert not getattr(zipimport.zipimporter.get_filename, "compiles_once", False)
