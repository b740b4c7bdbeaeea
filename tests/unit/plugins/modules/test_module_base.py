# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's AnsibleModule: a NUL in an option value reaches the module's own validation."""

from __future__ import annotations

import os
import sys
import syslog

import pytest

from ansible.module_utils import basic

from ansible_collections.accelops.lifecycle.plugins.module_utils._module import AccelopsModule
from ansible_collections.accelops.lifecycle.plugins.modules import sriov_vfs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from modrunner import Exit, patch_exits, patch_module_args, run_module  # noqa: E402  pylint: disable=wrong-import-position

NUL_VALUE = "a\x00b"


@pytest.fixture
def logged(monkeypatch):
    """What would reach syslog; syslog.syslog refuses NULs as the real one does."""
    lines = []

    def fake_syslog(priority, msg):
        if "\x00" in msg:
            raise ValueError("embedded null character")
        lines.append(msg)
    monkeypatch.setattr(syslog, "syslog", fake_syslog)
    monkeypatch.setattr(syslog, "openlog", lambda *a, **k: None)
    monkeypatch.setattr(basic, "HAS_SYSLOG", True)
    monkeypatch.setattr(basic, "has_journal", False)
    return lines


def test_plain_ansiblemodule_fails_without_naming_the_option(logged, monkeypatch):
    # The behaviour worked around: ansible-core's own module stops at the log line.
    patch_exits(monkeypatch)
    with patch_module_args({"name": NUL_VALUE}):
        with pytest.raises(Exit) as e:
            basic.AnsibleModule(argument_spec={"name": {"type": "str"}})
    assert "Failed to log to syslog" in e.value.result["msg"]


def test_nul_is_logged_escaped_and_the_value_kept(logged):
    with patch_module_args({"name": NUL_VALUE}):
        module = AccelopsModule(argument_spec={"name": {"type": "str"}})
    assert module.params["name"] == NUL_VALUE
    assert any("a\\x00b" in line for line in logged)


def test_module_names_the_option_holding_a_nul(logged, monkeypatch):
    patch_exits(monkeypatch)
    out = run_module(sriov_vfs.main, {"address": NUL_VALUE, "num_vfs": 1})
    assert out.kind == "fail"
    assert "address" in out.result["msg"]
    assert "Failed to log to syslog" not in out.result["msg"]
