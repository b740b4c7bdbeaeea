# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):
    # Options of every host-side module (see plugins/module_utils/_host.py).
    DOCUMENTATION = r'''
options:
  root:
    description:
      - The host root under which C(/sys), C(/proc), C(/dev) and C(/run) are read and written.
      - Leave the default on a real host. Point it at a simulated lab host (a rendered tree or a FUSE mount)
        to run the same code against test hardware.
    type: path
    default: /
'''
