# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""accelerator_converge's run record (issue 34, item 5): an apply cut between two cards leaves a record that says so
and what was done; the next plan under the lock returns it once; an apply that ends marks it done."""

from __future__ import annotations

import pytest

from modrunner import patch_exits, run_module  # noqa: E402  pylint: disable=wrong-import-position

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")
from accelsim.testing import require_fuse  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.module_utils import _hostmodule  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge  # noqa: E402

NIC, NIC1 = "0000:d8:00.0", "0000:d8:00.1"


class Killed(BaseException):
    """What the death of the process is to the code after it: nothing more runs (not an Exception: no handler)."""


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    require_fuse()
    patch_exits(monkeypatch)


def test_an_apply_cut_between_two_cards_is_returned_by_the_next_plan(tmp_path, monkeypatch):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    a = {"functions": [{"name": "vf-a", "match": {"address": NIC}, "vfs": {"count": 3, "driver": "vfio-pci"}},
                       {"name": "vf-b", "match": {"address": NIC1}, "vfs": {"count": 2, "driver": "vfio-pci"}}],
         "lock_dir": str(tmp_path / "lock"), "lock_owner": "play=p user=u"}
    with accelsim.mount("nic-sriov", str(mnt), state_dir=str(tmp_path / "state")) as h:
        a["root"] = h.root
        real = _hostmodule.execute_job
        done = []

        def cut_after_one(card_host, job):
            if done:
                raise Killed()
            done.append(real(card_host, job))
            return done[-1]

        monkeypatch.setattr(_hostmodule, "execute_job", cut_after_one)
        with pytest.raises(Killed):
            run_module(accelerator_converge.main, a, False)
        monkeypatch.setattr(_hostmodule, "execute_job", real)

        plan = run_module(accelerator_converge.main, dict(a, lock=True), True).result
        last = plan["last_run"]
        assert last["phase"] == "apply" and last["owner"] == "play=p user=u" and last["cards"] == [NIC, NIC1]
        assert len(last["applied"]) == 1 and last["applied"][0].startswith(NIC + ": create 3 VFs"), last
        assert run_module(accelerator_converge.main, dict(a, lock=True), True).result["last_run"] is None  # once

        run_module(accelerator_converge.main, a, False)
        ended = run_module(accelerator_converge.main, dict(a, lock=True), True).result["last_run"]
        assert ended["phase"] == "done" and ended["cards"] == [NIC1]
