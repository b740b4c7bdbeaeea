# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A converge killed inside its apply, between the steps of its cards (docs/reliability.md, "Killed runs").

The ``accelerator_host`` role converges a FUSE-mounted X710 host against the real Placement (4 and 2 VFs), then a
run that changes both PFs (3 VFs each, PF1's VF 0 trusted) is killed (``kill -9`` of ``ansible-playbook`` and
every process below it: the module runs in a session of its own) while ``accelerator_converge`` applies: the
simulator's ``ip`` fake hangs at the first ``ip link set`` (the trust of PF1's VF, a step of the second card's
apply), and the kill comes once that run of ``ip`` has started. The host is left half-applied and its cards
drained. The rerun must report the cut run from the journal (its owner, its cards, what it had finished), converge
both PFs, and leave no drain: drains left = 0. (That the record is reported once is the unit test's,
tests/unit/plugins/modules/test_converge_run_record.py.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

import accelsim
from accelsim.testing import require_fuse
from helpers import ansible_playbook, playbook_env
from test_killed_run import PF0, PF1, _drained, _play, _providers, _run

DRAIN_TRAIT = "CUSTOM_ACCELOPS_DRAINED"


@pytest.fixture(autouse=True)
def _fuse():
    require_fuse()


def _with_trust(tmp_path, h, placement, node):
    """The play of (3, 3) VFs with PF1's VF 0 trusted (an ``ip link set`` in PF1's apply)."""
    path = _play(tmp_path, h, placement, node, (3, 3))
    text = open(path, encoding="utf-8").read()
    marker = '"match": {"address": "%s"}, "vfs": {"count": 3, "driver": "vfio-pci"' % PF1
    assert marker in text
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(marker, marker + ', "vfs": [{"index": 0, "trust": true}]'))
    return path


def _tree(pid):
    """``pid`` and every process below it (ansible-core runs a module in a session of its own, so the play's
    process group does not reach it: the tree is walked through /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, encoding="utf-8", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _kill_tree(pid):
    for p in _tree(pid):  # the whole tree is listed before the first kill: nothing is reparented away from it
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _kill_when_ip_hangs(tmp_path, h, play):
    """Run ``play``; SIGKILL it with every process below it (the module, the hanging ``ip``) once the hanging
    ``ip link set`` has started. (rc, output, processes killed)."""
    env = playbook_env(PYTHONUNBUFFERED="1")
    cmd = ansible_playbook(play)
    log = tmp_path / "killed.log"
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,  # pylint: disable=consider-using-with
                                cwd=str(tmp_path), start_new_session=True)
        deadline = time.monotonic() + 240
        killed = []
        while time.monotonic() < deadline and proc.poll() is None:
            if any(f["fired"] for f in h.faults()["tools"]):
                killed = _tree(proc.pid)
                _kill_tree(proc.pid)
                break
            time.sleep(0.05)
        else:
            _kill_tree(proc.pid)
        proc.wait(timeout=60)
    time.sleep(0.5)
    assert not [p for p in killed if os.path.exists("/proc/%d" % p) and _state(p) != "Z"], "a process survived"
    return proc.returncode, log.read_text(encoding="utf-8"), len(killed)


def _state(pid):
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_rerun_reports_a_run_killed_mid_apply_and_converges(tmp_path, clean_placement, figures):
    placement = clean_placement
    node = "killed-apply-%d" % os.getpid()
    root = placement.create_provider(node)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    t0 = time.monotonic()
    with accelsim.mount("nic-sriov", str(mnt), state_dir=str(tmp_path / "state")) as h:
        rc, out = _run(tmp_path, _play(tmp_path, h, placement, node, (4, 2)))
        assert rc == 0, out[-3000:]

        h.fail_tool("ip", rc=None, hang="forever", args="link set *")
        play = _with_trust(tmp_path, h, placement, node)
        rc, out, processes = _kill_when_ip_hangs(tmp_path, h, play)
        assert rc == -signal.SIGKILL, "the run ended before the kill: " + out[-3000:]
        h.clear_faults()
        journal = (tmp_path / "lock" / "converge.journal").read_text(encoding="utf-8")
        assert "phase=apply" in journal, journal
        left = _providers(placement, root)
        assert any(_drained(v[0]) and DRAIN_TRAIT in v[1] for v in left.values()), left
        # cut inside the second card: the first finished, the second not
        assert "applied=%s: remove the 4 VFs" % PF0 in journal and "applied=%s" % PF1 not in journal, journal
        state = h.state()["functions"]
        cut_at = (state[PF0]["numvfs"], state[PF1]["numvfs"])

        rc, out = _run(tmp_path, play)
        assert rc == 0, out[-3000:]
        assert "Traceback" not in out
        assert "was cut during apply (cards %s, %s): %s: remove the 4 VFs" % (PF0, PF1, PF0) in out, out[-3000:]
        state = h.state()["functions"]
        assert (state[PF0]["numvfs"], state[PF1]["numvfs"]) == (3, 3)
        after = _providers(placement, root)
        assert not [pf for pf, v in after.items() if _drained(v[0]) or DRAIN_TRAIT in v[1]], out[-3000:]

    figures["killed mid-apply"] = {"kills": 1, "processes killed": processes, "reruns": 1, "cut at (PF0, PF1 VFs)": list(cut_at),
                                   "drains left after the rerun": 0, "seconds": round(time.monotonic() - t0, 1)}
