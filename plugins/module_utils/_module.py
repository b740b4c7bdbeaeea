# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The AnsibleModule every module of the collection is built on.

ansible-core logs each invocation to the system log before the module runs. An option value holding a NUL
character makes ``syslog.syslog`` raise, and ansible-core then fails the whole module with "Failed to log to
syslog (embedded null character)", a message that names no option. Here the logged line carries a NUL as the
four characters ``\\x00`` instead, so the module goes on to its own validation, which names the option and the
accepted form.

Standard library only, Python 3.9+ (runs on managed hosts).
"""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule


class AccelopsModule(AnsibleModule):
    """AnsibleModule whose invocation log line survives any option value."""

    def _log_to_syslog(self, msg):
        if isinstance(msg, str):
            msg = msg.replace("\x00", "\\x00")
        super(AccelopsModule, self)._log_to_syslog(msg)
