# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests against real services: the harness itself and the Placement modules.
Run: .venv/bin/python -m pytest tests/harness/tests (needs .venv-services: tests/harness/setup-venv.sh)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fixtures import clean_placement, placement, put_collection_on_path  # noqa: E402,F401  pylint: disable=unused-import

put_collection_on_path()
