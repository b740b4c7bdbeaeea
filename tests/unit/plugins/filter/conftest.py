# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter tests import ansible (not allowed in module_utils tests under ansible-test units) and may render simulator
labs: the simulator goes on sys.path here."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIMULATOR = os.path.abspath(os.path.join(HERE, "..", "..", "..", "simulator"))
if os.path.isdir(SIMULATOR) and SIMULATOR not in sys.path:
    sys.path.insert(0, SIMULATOR)
