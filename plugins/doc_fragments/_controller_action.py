# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):
    # The attributes of a controller action (plugins/action/, base plugin_utils/_action.py): it decides from its
    # arguments alone on the controller and changes nothing. A module's own attribute entries override these.
    DOCUMENTATION = r'''
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    details: Decides from its arguments alone and changes nothing; runs the same in check mode.
  diff_mode:
    support: none
  idempotent:
    description: The same arguments give the same result; it changes nothing.
    support: full
  platform:
    platforms: all
    details: Runs on the controller; reads nothing but its arguments.
'''
