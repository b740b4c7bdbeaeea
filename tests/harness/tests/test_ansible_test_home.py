# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/ansible-test-home.sh: what ansible-test keeps in the home directory is made once, before the gates
start ansible-test, on an empty home and with several callers at once (the integration gate's two jobs used to
both run ssh-keygen on a fresh machine, and one failed at "Overwrite (y/n)?")."""
import os
import stat
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(TOP, "tools", "ansible-test-home.sh")


def _run(home):
    env = dict(os.environ, HOME=str(home))
    return subprocess.Popen([SCRIPT, sys.executable], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _pip_version():
    import ansible_test  # pylint: disable=import-outside-toplevel
    src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")).read()
    return src.split("pip='", 1)[1].split("'", 1)[0]


def _assert_whole_key_pair(test_dir):
    key = os.path.join(test_dir, "id_rsa")
    pub = os.path.join(test_dir, "id_rsa.pub")
    with open(key) as f:
        text = f.read()
    # the header ansible-test writes for paramiko
    assert text.startswith("-----BEGIN RSA PRIVATE KEY-----"), text[:40]
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    derived = subprocess.run(["ssh-keygen", "-y", "-f", key], capture_output=True, text=True, check=True).stdout
    with open(pub) as f:
        assert f.read().split()[:2] == derived.split()[:2], "id_rsa.pub is not the public half of id_rsa"


def test_empty_home_gets_key_pair_and_pip_standin(tmp_path):
    p = _run(tmp_path)
    out = p.communicate(timeout=120)[0]
    assert p.returncode == 0, out
    test_dir = tmp_path / ".ansible" / "test"
    _assert_whole_key_pair(str(test_dir))
    standin = test_dir / "cache" / ("get_pip_%s.py" % _pip_version().replace(".", "_"))
    with open(os.path.join(TOP, "tools", "get_pip_standin.py")) as f:
        assert standin.read_text() == f.read()


def test_second_run_keeps_the_key(tmp_path):
    assert _run(tmp_path).wait(timeout=120) == 0
    key = tmp_path / ".ansible" / "test" / "id_rsa"
    before = key.read_bytes()
    assert _run(tmp_path).wait(timeout=120) == 0
    assert key.read_bytes() == before


def test_callers_at_once_on_an_empty_home_make_one_whole_pair(tmp_path):
    # ansible-test's own way (ssh-keygen on the final path whenever it finds no key) fails here: a second
    # caller is asked "Overwrite (y/n)?" with no terminal and exits 1
    for round_no in range(2):
        home = tmp_path / ("home%d" % round_no)
        home.mkdir()
        procs = [_run(home) for _caller in range(4)]
        outs = [p.communicate(timeout=120)[0] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, outs
        test_dir = home / ".ansible" / "test"
        _assert_whole_key_pair(str(test_dir))
        # no caller's temporary directory is left behind, and nobody was asked to overwrite
        assert not [n for n in os.listdir(str(test_dir)) if n.startswith(".keygen.")]
        assert not [o for o in outs if "Overwrite" in o]
