# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the discovery tests: kernel-shaped host trees built in tmp_path."""

from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from hostbuilder import HostTree  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def host(tmp_path):
    """An empty host tree (HostTree) under tmp_path/root."""
    return HostTree(str(tmp_path / "root"))
