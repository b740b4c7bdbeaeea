# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A collection module_utils file imported on first use, by name.

- The filter plugins: ansible-core imports every filter file of a collection in each forked worker that templates
  any one of its filters (a role task that uses ``converge_report`` pays for ``fleet_report``'s Placement package
  too). A filter file that names its engine ``lazy("_pools")`` instead of importing it costs that worker nothing
  until the filter runs.
(The declaration kinds' engines are imported by name the same way, through ``_engines.ENGINES``.)
"""

from __future__ import annotations

import importlib

PACKAGE = "ansible_collections.accelops.lifecycle.plugins.module_utils."


class LazyModule(object):
    """Stands for ``module_utils.<name>``; the first attribute read imports it."""

    def __init__(self, name):
        self._lazy_name = name
        self._lazy_module = None

    def __getattr__(self, attr):
        if attr.startswith("_lazy_"):
            raise AttributeError(attr)
        if self._lazy_module is None:
            self._lazy_module = importlib.import_module(PACKAGE + self._lazy_name)
        return getattr(self._lazy_module, attr)


def lazy(name):
    return LazyModule(name)
