# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by the module tests: this directory on sys.path (the simulator: tests/unit/conftest.py), and a sysfs
write counter."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _sysfs

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture
def writes(monkeypatch):
    """Every sysfs write of the run, as (host path, value)."""
    log = []
    orig = _sysfs.Sysfs.write

    def counting(self, path, value):
        log.append((path, value))
        return orig(self, path, value)
    monkeypatch.setattr(_sysfs.Sysfs, "write", counting)
    return log
