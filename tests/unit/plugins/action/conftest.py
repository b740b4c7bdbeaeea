# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The action tests share the record builder in recorded.py: this directory goes on sys.path, and so does the
simulator (the fleet report's model renders a simulated lab)."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIMULATOR = os.path.abspath(os.path.join(HERE, "..", "..", "..", "simulator"))
for _path in (HERE, SIMULATOR):
    if os.path.isdir(_path) and _path not in sys.path:
        sys.path.insert(0, _path)
