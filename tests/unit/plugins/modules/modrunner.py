# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run a module's main() in-process: exit_json/fail_json raise :class:`Exit` carrying the result."""

from __future__ import annotations

import shutil
import tempfile

import pytest

from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19: the module arguments as the documented unit-test recipe sets them
    import contextlib
    import json
    from unittest import mock

    @contextlib.contextmanager
    def patch_module_args(args=None):
        """Expose ``args`` to the AnsibleModule instances created in this context."""
        data = json.dumps({"ANSIBLE_MODULE_ARGS": args or {}}).encode("utf-8", "surrogateescape")
        with mock.patch.object(basic, "_ANSIBLE_ARGS", data):
            yield


class Exit(Exception):
    """How a module run ended: ``kind`` is "exit" or "fail", ``result`` what it returned."""

    def __init__(self, kind, result):
        super(Exit, self).__init__(kind)
        self.kind = kind
        self.result = result


def patch_exits(monkeypatch):
    """Make exit_json/fail_json raise :class:`Exit`, and keep audit lines out of the system log."""
    def exit_json(self, **kw):
        raise Exit("exit", kw)

    def fail_json(self, msg, **kw):
        kw["msg"] = msg
        raise Exit("fail", kw)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    monkeypatch.setenv("ACCELOPS_AUDIT_SYSLOG", "0")


def run_module(main, args, check=False, diff=False):
    """Run ``main`` with ``args`` (plus check/diff mode) and return the :class:`Exit` it ended with."""
    a = dict(args)
    a["_ansible_check_mode"] = check
    a["_ansible_diff"] = diff
    # the module's temporary directory goes under one removed here, not by the module's atexit hook (keep remote
    # files): under ansible-test each test runs in a forked process that ends without running atexit hooks, and
    # under plain pytest the hook would run at the end, on a directory already removed
    remote_tmp = tempfile.mkdtemp(prefix="accelops-modrunner-")
    a["_ansible_remote_tmp"] = remote_tmp
    a["_ansible_keep_remote_files"] = True
    try:
        with patch_module_args(a):
            with pytest.raises(Exit) as e:
                main()
    finally:
        shutil.rmtree(remote_tmp, ignore_errors=True)
    return e.value
