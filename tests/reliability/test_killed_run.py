# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A converge killed between its drain and its undrain (docs/reliability.md, "Killed runs").

The ``accelerator_host`` role converges a FUSE-mounted X710 host against the real Placement: a first run makes the
providers, an operator drains the second PF's by hand (``reserved = total``, no mark), then a run that changes the
first PF's VFs is killed (``kill -9`` of the ``ansible-playbook`` process group) when the role reaches its report, after
the drain and the change. Its drain is left, with the collection's mark. The rerun must lift it (the card is as
declared, nothing is allocated on it) and say which run left it, and must leave the operator's drain and say so:
drains left = 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

import accelsim
from accelsim.testing import require_fuse
from helpers import ansible_playbook, playbook_env

PF0, PF1 = "0000:d8:00.0", "0000:d8:00.1"
DRAIN_TRAIT = "CUSTOM_ACCELOPS_DRAINED"
KILL_AT = "Report the batch's hosts to Placement"


@pytest.fixture(autouse=True)
def _fuse():
    require_fuse()


def _play(tmp_path, h, placement, node, counts):
    play = [{"hosts": "localhost", "gather_facts": False, "roles": [{"role": "accelops.lifecycle.accelerator_host", "vars": {
        "accelerator_host_root": h.root, "accelerator_host_placement_host": node,
        "accelerator_host_placement_endpoint": placement.endpoint, "accelerator_host_placement_token": placement.token,
        "accelerator_host_lock_dir": str(tmp_path / "lock"),
        "accelerator_host_functions": [
            {"name": "vf-a", "match": {"address": PF0}, "vfs": {"count": counts[0], "driver": "vfio-pci"}},
            {"name": "vf-b", "match": {"address": PF1}, "vfs": {"count": counts[1], "driver": "vfio-pci"}}]}}]}]
    path = tmp_path / ("play-%d-%d.yml" % counts)
    path.write_text(json.dumps(play))
    return str(path)


def _run(tmp_path, play, kill_at=None):
    """(returncode, output) of one ansible-playbook run; with ``kill_at``, its process group is killed (SIGKILL)
    as soon as the task of that name starts."""
    env = playbook_env(PYTHONUNBUFFERED="1")
    cmd = ansible_playbook(play)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,  # pylint: disable=consider-using-with
                            cwd=str(tmp_path), start_new_session=True)
    out = []
    for line in proc.stdout:
        out.append(line)
        if kill_at and line.startswith("TASK [") and kill_at in line:
            os.killpg(proc.pid, signal.SIGKILL)
            break
    rest = proc.communicate(timeout=300)[0]
    return proc.returncode, "".join(out) + (rest or "")


def _providers(placement, root):
    """{PF address: (inventories, traits)} of the host's providers."""
    out = {}
    for p in placement.providers("?in_tree=" + root["uuid"]):
        for pf in (PF0, PF1):
            if p["name"].endswith(pf):
                out[pf] = (placement.inventories(p["uuid"]), placement.traits(p["uuid"]), p)
    return out


def _drained(invs):
    return bool(invs) and all(i["reserved"] >= i["total"] for i in invs.values())


def test_a_rerun_lifts_the_drain_of_a_killed_run_and_leaves_the_operators(tmp_path, clean_placement, figures):
    placement = clean_placement
    node = "killed-%d" % os.getpid()
    root = placement.create_provider(node)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    t0 = time.monotonic()
    with accelsim.mount("nic-sriov", str(mnt), state_dir=str(tmp_path / "state")) as h:
        rc, out = _run(tmp_path, _play(tmp_path, h, placement, node, (4, 2)))
        assert rc == 0, out[-3000:]
        provs = _providers(placement, root)
        assert sorted(provs) == [PF0, PF1] and not any(_drained(v[0]) for v in provs.values())
        # an operator's drain: reserved = total by hand, no mark
        operator = dict((rc_, dict(inv, reserved=inv["total"])) for rc_, inv in provs[PF1][0].items())
        placement.set_inventories(provs[PF1][2]["uuid"], operator)

        rc, out = _run(tmp_path, _play(tmp_path, h, placement, node, (3, 2)), kill_at=KILL_AT)
        assert rc == -signal.SIGKILL, out[-3000:]
        assert h.state()["functions"][PF0]["numvfs"] == 3, "the killed run had not changed the card yet"
        left = _providers(placement, root)
        assert _drained(left[PF0][0]) and DRAIN_TRAIT in left[PF0][1], "the killed run left no marked drain"
        assert DRAIN_TRAIT not in left[PF1][1]

        rc, out = _run(tmp_path, _play(tmp_path, h, placement, node, (3, 2)))
        assert rc == 0, out[-3000:]
        assert "Traceback" not in out
        after = _providers(placement, root)
        assert not _drained(after[PF0][0]) and DRAIN_TRAIT not in after[PF0][1], out[-3000:]
        assert _drained(after[PF1][0]), "the operator's drain was lifted"
        assert "lifted the drain of %s" % after[PF0][2]["name"] in out, out[-3000:]
        assert "left by the run play=" in out
        assert "(an operator's drain): left so" in out
    figures["killed runs"] = {"kills": 1, "reruns": 1, "drains left by the killed run after the rerun": 0,
                              "operator drains kept": 1, "seconds": round(time.monotonic() - t0, 1)}
