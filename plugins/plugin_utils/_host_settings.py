# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Why the accelerator_host role must refuse a host before reading or changing anything (the settings of the
wrong form, a declaration outside the allow-list): the first decision of the role, made on the controller."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import allow_list_refusal

SETTINGS_MSG = (
    "accelerator_host: accelerator_host_functions must be a list, accelerator_host_mode converge or plan, "
    "accelerator_host_allowed_functions null or a list, and with accelerator_host_placement true either "
    "accelerator_host_placement_endpoint + accelerator_host_placement_token or openstack.cloud-style settings "
    "(accelerator_host_cloud, or accelerator_host_auth with accelerator_host_auth_type ...) are needed "
    "(set accelerator_host_placement to false to converge the host only)")


def _is_list(value):
    return isinstance(value, (list, tuple))


def _settings_ok(s):
    if not _is_list(s.get("functions")):
        return False
    if s.get("mode") not in ("converge", "plan"):
        return False
    allowed = s.get("allowed_functions")
    if allowed is not None and not _is_list(allowed):
        return False
    if s.get("placement"):
        token_form = bool(s.get("placement_endpoint")) and bool(s.get("placement_token"))
        if not (token_form or s.get("cloud") or s.get("auth")):
            return False
    return True


def refusal(settings):
    """None when the role may go on with the host, otherwise the message it fails with. ``settings``: the keys
    ``host`` (the inventory name, for the message), ``functions``, ``mode``, ``allowed_functions``, ``placement``
    (a boolean), ``placement_endpoint``, ``placement_token``, ``cloud`` and ``auth``."""
    if not _settings_ok(settings):
        return SETTINGS_MSG
    return allow_list_refusal(settings.get("host"), settings["functions"], settings.get("allowed_functions"))
