# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):
    # Options of the host-side programming modules built on plugins/module_utils/_plan.py: where the in-use
    # evidence that blocks a plan is read from. (Their shared RETURN keys stay in each module: ansible-doc and
    # validate-modules do not merge RETURN from module doc fragments.)
    DOCUMENTATION = r'''
options:
  libvirt_run_dir:
    description:
      - The directory (a host path, read under O(root)) where libvirt keeps the status XML of running domains.
    type: str
    default: /run/libvirt/qemu
'''
