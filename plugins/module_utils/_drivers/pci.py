# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generic PCI driver: every function no family driver claims (family ``pci``, fixed function).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Driver, read_mdev, mdev_units

__metaclass__ = type


class PciDriver(Driver):
    name = "pci"
    family = "pci"
    programming_model = "fixed"
    claims_vfs = False

    def claims(self, func, ctx=None):
        return True

    def describe(self, func, ctx):
        out = {}
        if func.has("mdev_supported_types"):
            _types, mdevs = read_mdev(func, ctx)
            out["units"] = mdev_units(func, mdevs)
        return out
