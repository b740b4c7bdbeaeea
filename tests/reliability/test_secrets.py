# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Secrets and file permissions (docs/reliability.md, "Secrets").

The OpenStack modules get a token or password that only the fault proxy knows how to turn into the real
one; with diff mode, check mode, real runs and failures, the secret must not appear in the module result,
the warnings, or the lines the module sends to the system log (AnsibleModule's invocation line and the
audit lines), nor in ansible-playbook's output at -vvvv with --diff. Files the host modules write
(persistence units and scripts) must not be writable by group or others.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from faultproxy import FaultProxy
from helpers import ansible_playbook, discovery, fpga_record, patch_exits, playbook_env, run_module

import accelsim
from accelsim.testing import require_fuse
from ansible.module_utils import basic

from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_info as info_mod
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_tree as tree_mod
from ansible_collections.accelops.lifecycle.plugins.modules import sriov_vfs

SECRET = "s3cr3t-Zq8vX1-tok"
PASSWORD = "pw-Hn4kR9-secret"
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def gate(placement):
    """A proxy that accepts only SECRET as the token and passes Placement's own token on."""
    def swap(value):
        return placement.token if value == SECRET else "refused-" + value[::-1]
    p = FaultProxy(placement.endpoint, headers_rewrite={"x-auth-token": swap})
    p.start()
    yield p
    p.stop()


@pytest.fixture
def logged(monkeypatch):
    """Every line a module sends to the system log or the journal during the test."""
    lines = []
    import syslog
    monkeypatch.setattr(syslog, "syslog", lambda *a: lines.append(str(a[-1])))
    monkeypatch.setattr(basic, "has_journal", False, raising=False)
    patch_exits(monkeypatch)
    monkeypatch.setenv("ACCELOPS_AUDIT_SYSLOG", "1")
    return lines


def leaks(blob, *secrets):
    return [s for s in secrets if s in blob]


def test_openstack_modules_never_show_the_token(clean_placement, gate, logged):
    pl = clean_placement
    pl.create_provider("cn1.example.org")
    direct = {"auth_type": "admin_token", "auth": {"endpoint": gate.url, "token": SECRET},
              "placement_endpoint_override": gate.url, "placement_api_version": "1.39"}
    disc = discovery("cn1", [fpga_record()])
    runs = []
    # a cloud dict, and the same settings as top-level options (auth is no_log there)
    for style in ("cloud", "options"):
        base = {"cloud": direct} if style == "cloud" else {
            "auth_type": "admin_token", "auth": {"endpoint": gate.url, "token": SECRET},
            "cloud": {"placement_endpoint_override": gate.url, "placement_api_version": "1.39"}}
        if style == "options":
            base = {"auth_type": "admin_token", "auth": {"endpoint": gate.url, "token": SECRET}}
        for check, diff in ((True, True), (False, True), (False, False)):
            runs.append((style, "tree", run_module(tree_mod.main, dict(base, discovery=disc), check=check, diff=diff)))
        runs.append((style, "info", run_module(info_mod.main, dict(base, hosts=["cn1"]), diff=True)))
        # failures: a root that does not exist, a wrong token
        runs.append((style, "tree-fail", run_module(tree_mod.main, dict(base, discovery=discovery("nohost", [])))))
    bad = dict(direct, auth={"endpoint": gate.url, "token": SECRET + "x"})
    runs.append(("cloud", "wrong-token", run_module(tree_mod.main, {"cloud": bad, "discovery": disc})))
    found = []
    for style, what, out in runs:
        assert out.kind != "traceback", out.tb
        blob = json.dumps(out.result, default=str)
        found += ["%s/%s result: %s" % (style, what, s) for s in leaks(blob, SECRET)]
    ok = [w for s, w, o in runs if o.kind == "exit"]
    assert "tree" in ok and "info" in ok, runs   # the secret did authenticate
    assert not found, "\n".join(found)
    # the invocation line of the runs that pass auth as an option masks it
    assert logged and not [line for line in logged if SECRET in line and "cloud={" not in line]


def test_token_in_a_cloud_dict_stays_out_of_the_system_log(clean_placement, gate, logged):
    pl = clean_placement
    pl.create_provider("cn1.example.org")
    cloud = {"auth_type": "admin_token", "auth": {"endpoint": gate.url, "token": SECRET},
             "placement_endpoint_override": gate.url, "placement_api_version": "1.39"}
    out = run_module(tree_mod.main, {"cloud": cloud, "discovery": discovery("cn1", [fpga_record()])}, diff=True)
    assert out.kind == "exit", out
    assert not [line for line in logged if SECRET in line]


def test_password_auth_failure_does_not_show_the_password(logged):
    """Keystone password auth against an endpoint that is not there: the failure names the problem, not
    the password."""
    auth = {"auth_url": "http://127.0.0.1:9/v3", "username": "admin", "password": PASSWORD,
            "project_name": "admin", "user_domain_name": "Default", "project_domain_name": "Default"}
    outs = [run_module(tree_mod.main, {"cloud": {"auth_type": "password", "auth": auth},
                                       "discovery": discovery("cn1", []), "request_retries": 0}, diff=True),
            run_module(tree_mod.main, {"auth_type": "password", "auth": auth, "discovery": discovery("cn1", []),
                                       "request_retries": 0}, diff=True),
            run_module(info_mod.main, {"auth_type": "password", "auth": auth, "request_retries": 0})]
    for out in outs:
        assert out.kind == "fail", out
        assert not leaks(json.dumps(out.result, default=str), PASSWORD), out.result
    # auth as an option: masked in the invocation line (the cloud-dict case is the known leak above)
    assert not [line for line in logged if PASSWORD in line and "cloud={" not in line]


def test_ansible_playbook_output_at_vvvv_with_diff(clean_placement, gate, tmp_path):
    """The real thing: ansible-playbook -vvvv --diff, the secret in the auth option and in a cloud dict."""
    pl = clean_placement
    pl.create_provider("cn1.example.org")
    play = tmp_path / "play.yml"
    cloud = {"auth_type": "admin_token", "auth": {"endpoint": gate.url, "token": SECRET},
             "placement_endpoint_override": gate.url, "placement_api_version": "1.39"}
    tasks = [
        {"name": "tree, auth option", "accelops.lifecycle.placement_provider_tree": {
            "auth_type": "admin_token", "auth": {"endpoint": gate.url, "token": SECRET},
            "discovery": discovery("cn1", [fpga_record()])}, "diff": True},
        {"name": "tree, cloud dict", "accelops.lifecycle.placement_provider_tree": {
            "cloud": cloud, "discovery": discovery("cn1", [fpga_record(afu=None)])}, "diff": True},
        {"name": "info, cloud dict", "accelops.lifecycle.placement_provider_info": {"cloud": cloud, "hosts": ["cn1"]}},
        {"name": "failing, cloud dict", "accelops.lifecycle.placement_provider_info": {
            "cloud": cloud, "hosts": ["nohost"]}, "ignore_errors": True},
    ]
    play.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    env = playbook_env()
    cmd = ansible_playbook(str(play), "-vvvv", "--diff")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=str(tmp_path), check=False)
    out = r.stdout + r.stderr
    assert "ok=4" in out or "ok=3" in out, out[-3000:]
    assert "Traceback" not in out
    where = [line for line in out.splitlines() if SECRET in line]
    assert not where, "the token is in ansible-playbook's output:\n" + "\n".join(x[:300] for x in where[:5])


def _persisted_modes(tmp_path, monkeypatch, umask):
    """Run sriov_vfs with persistence on a FUSE-mounted lab host under ``umask``; the files and directories
    it wrote (symlinks left out: their mode means nothing) that are writable by group or others, or owned by
    another user."""
    require_fuse()
    patch_exits(monkeypatch)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    persist = tmp_path / "persist"
    old = os.umask(umask)
    try:
        with accelsim.mount("nic-sriov", str(mnt), state_dir=str(tmp_path / "state")) as h:
            out = run_module(sriov_vfs.main, {"root": h.root, "address": "0000:d8:00.0", "num_vfs": 2,
                                              "persist_root": str(persist)})
    finally:
        os.umask(old)
    assert out.kind == "exit" and out.result["changed"], out
    written = []
    for dirpath, dirnames, filenames in os.walk(str(persist)):
        for n in dirnames + filenames:
            written.append(os.path.join(dirpath, n))
    assert written, "nothing persisted"
    bad = []
    for p in written:
        st_ = os.lstat(p)
        if stat.S_ISLNK(st_.st_mode):
            continue
        if st_.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or st_.st_uid != os.getuid():
            bad.append("%s %o uid %d" % (os.path.relpath(p, str(persist)), stat.S_IMODE(st_.st_mode), st_.st_uid))
    return bad


def test_persistence_files_are_not_writable_by_others(tmp_path, monkeypatch):
    """The usual umask (022): units 0644, scripts 0755, directories 0755, all owned by the module's user."""
    bad = _persisted_modes(tmp_path, monkeypatch, 0o022)
    assert not bad, "persistence files writable by others: %s" % bad


def test_persistence_modes_do_not_depend_on_the_umask(tmp_path, monkeypatch):
    bad = _persisted_modes(tmp_path, monkeypatch, 0o000)
    assert not bad, "persistence files writable by others under umask 000: %s" % bad
