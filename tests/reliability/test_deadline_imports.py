# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The OpenStack modules' request deadline (``_openstack.deadline``, a SIGALRM timer; docs/reliability.md) never
fires inside an import: one that falls there waits for the import to end and fires in the code that follows, so no
module is left half-initialised (the SDK imports lazily, on its first request)."""

from __future__ import annotations

import sys
import time

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import DeadlineExceeded, deadline


def test_a_deadline_inside_an_import_fires_after_it(tmp_path, monkeypatch):
    (tmp_path / "accelops_slow_import.py").write_text("import time\ntime.sleep(0.6)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "accelops_slow_import", raising=False)
    seen = []
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="slow path: no answer within 0.2 s"):
        with deadline(0.2, "slow path"):
            import accelops_slow_import  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
            seen.append(sys.modules["accelops_slow_import"].DONE)
            time.sleep(5)  # the deadline, past during the import, fires here
    waited = time.monotonic() - t0
    assert seen == [True], "the deadline fired inside the import"
    assert 0.6 <= waited < 2.0, waited


def test_a_deadline_outside_an_import_fires_on_time():
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        with deadline(0.2, "plain"):
            time.sleep(5)
    assert time.monotonic() - t0 < 1.5
