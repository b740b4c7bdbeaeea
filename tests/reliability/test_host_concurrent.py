# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two converges of one host at the same time (docs/reliability.md, "Concurrent converges of one host").

Two ``ansible-playbook`` runs of the ``accelerator_host`` role (through its public variables, Placement off) start
together against one FUSE-mounted host; one declares the VFs of the X710's first PF, the other those of its second
PF, so that every write in the simulator's log can be told to belong to one run or the other. With a long lock wait
both must succeed and the log must show one run's writes, then the other's, never mixed. With a short lock wait one
must fail naming the lock holder and have written nothing (``HOST_FAULTS_FULL=1``; the gate runs the first round
only, the integration target accelerator_host_converge checks the failure naming the holder against a held lock).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

import accelsim
from accelsim.testing import require_fuse
from helpers import ansible_playbook, playbook_env

FULL = os.environ.get("HOST_FAULTS_FULL", "") not in ("", "0")
PF0, PF1 = "0000:d8:00.0", "0000:d8:00.1"
MARKS = {"pf0": ("0000:d8:00.0", "0000:d8:02.", "0000_d8_00_0"), "pf1": ("0000:d8:00.1", "0000:d8:0a.", "0000_d8_00_1")}


@pytest.fixture(autouse=True)
def _fuse():
    require_fuse()


def _play(tmp_path, h, name, address, count, wait):
    play = [{"hosts": "localhost", "gather_facts": False, "roles": [{"role": "accelops.lifecycle.accelerator_host", "vars": {
        "accelerator_host_root": h.root, "accelerator_host_placement": False, "accelerator_host_summary": False,
        "accelerator_host_lock_dir": str(tmp_path / "lock"), "accelerator_host_lock_wait": wait,
        "accelerator_host_functions": [{"name": "vf-" + name, "match": {"address": address},
                                        "vfs": {"count": count, "driver": "vfio-pci"}}]}}]}]
    path = tmp_path / ("%s.yml" % name)
    path.write_text(json.dumps(play))
    return str(path)


def _start(tmp_path, play):
    env = playbook_env()
    cmd = ansible_playbook(play)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,  # pylint: disable=consider-using-with
                            cwd=str(tmp_path))


def _owner(writes):
    """Which run each write belongs to (None: a boot file whose logged start names neither PF)."""
    out = []
    for w in writes:
        text = w["path"] + " " + w["data"]
        who = [k for k, marks in MARKS.items() if any(m in text for m in marks)]
        out.append(who[0] if len(who) == 1 else None)
    return out


def _runs(seq):
    """The attributed writes as runs of one owner: ['pf0', 'pf1'] when never mixed."""
    out = []
    for who in seq:
        if who and (not out or out[-1] != who):
            out.append(who)
    return out


def test_two_converges_of_one_host(tmp_path, figures):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with accelsim.mount("nic-sriov", str(mnt), state_dir=str(tmp_path / "state")) as h:
        rounds = []
        # round 1: both wait for the lock; round 2 (other counts, so both have work again): one gives up after 1 s
        plan = ((120, (4, 3)), (1, (2, 5))) if FULL else ((120, (4, 3)),)
        for wait, counts in plan:
            w0 = len(h.writes())
            t0 = time.monotonic()
            procs = {"pf0": _start(tmp_path, _play(tmp_path, h, "pf0", PF0, counts[0], wait)),
                     "pf1": _start(tmp_path, _play(tmp_path, h, "pf1", PF1, counts[1], wait))}
            outs = dict((k, p.communicate(timeout=540)[0]) for k, p in procs.items())
            rcs = dict((k, p.returncode) for k, p in procs.items())
            elapsed = time.monotonic() - t0
            writes = h.writes()[w0:]
            assert not any(w["errno"] for w in writes), writes
            for k, out in outs.items():
                assert "Traceback" not in out, out[-3000:]
            seq = _runs(_owner(writes))
            numvfs = dict((k, h.state()["functions"][a]["numvfs"]) for k, a in (("pf0", PF0), ("pf1", PF1)))
            if wait > 1:
                assert rcs == {"pf0": 0, "pf1": 0}, outs
                assert sorted(seq) == ["pf0", "pf1"], "the two converges' writes interleave: %s" % _owner(writes)
                assert numvfs == {"pf0": counts[0], "pf1": counts[1]}
            else:
                failed = [k for k, rc in rcs.items() if rc != 0]
                assert len(failed) == 1, (rcs, outs)
                loser, winner = failed[0], [k for k in rcs if k not in failed][0]
                assert "locked by another converge" in outs[loser] and "token=" in outs[loser], outs[loser][-3000:]
                assert seq == [winner], "the run that did not get the lock wrote: %s" % _owner(writes)
                assert numvfs[winner] == counts[("pf0", "pf1").index(winner)]
            rounds.append({"lock_wait": wait, "returncodes": rcs, "writes": len(writes), "write_runs": seq,
                           "seconds": round(elapsed, 1)})
        figures["host concurrent converges"] = rounds
