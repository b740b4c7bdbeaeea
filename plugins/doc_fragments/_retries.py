# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):
    # The retry options of the OpenStack API modules (plugins/module_utils/_openstack.py ServiceClient, which the
    # Placement, Cyborg and Ironic clients share). What each module repeats, and how it avoids duplicates, is in
    # the module's own notes.
    DOCUMENTATION = r'''
options:
  request_retries:
    description:
      - How many times a request that got no answer (connection refused or dropped, timeout) or an HTTP 5xx is
        repeated, with pauses of O(request_retry_delay) seconds doubled each time (at most 8 s each), before the
        run fails with a message that names the service, the operation and the cause.
      - Only requests that are safe to repeat are repeated (the module's notes say which). V(0) fails at the first
        such error.
      - Requests without an answer time out after O(api_timeout) seconds, or 60 s when that is not set.
    type: int
    default: 4
  request_retry_delay:
    description:
      - The first pause between retries, in seconds (see O(request_retries)).
    type: float
    default: 0.5
'''
