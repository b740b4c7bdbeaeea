# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Boot files (_persist.py) under planted links and FIFOs (docs/reliability.md, "Secrets and files").

The boot units and scripts are written as root through ``_safefile``: a file at a boot file's path is read without
following a link and without blocking; anything but a regular file is not taken for the file, and the new file is
made with ``O_EXCL``, given its mode with ``fchmod`` (whatever the umask) and renamed over the path, so a planted
link is replaced, never written or read through. A link in place of the boot directory is refused. Plain files
in a temporary root; each case has a deadline, so a hang fails the test instead of stopping the suite.
"""

from __future__ import annotations

import os
import threading

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import Files
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan, PlanFailed, execute
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

UNIT = "/etc/systemd/system/accelops-sriov-0000_d8_00_0.service"
SCRIPT = "/etc/accelops/boot/accelops-sriov-0000_d8_00_0.sh"
CONTENT = "[Unit]\nDescription=x\n"


def _wrap(fn, *_a, **_k):
    return fn


def _within(seconds, fn):
    """fn()'s result, or a failure when it does not return within ``seconds`` (a blocking open of a FIFO)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as e:  # pylint: disable=broad-except
            out["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        pytest.fail("hung for %d s" % seconds)
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "root").mkdir()
    f = Files(Sysfs(root=str(tmp_path / "root")), str(tmp_path / "persist"))
    for host_path in (UNIT, SCRIPT):
        os.makedirs(os.path.dirname(f.real(host_path)), exist_ok=True)
    return f


def _write(files, host_path, content, mode=0o644):
    plan = Plan()
    planned = files.file_steps(plan, _wrap, host_path, content, mode)
    execute(plan)
    return planned


def test_a_link_at_a_boot_file_to_a_file_with_its_content_is_replaced_not_trusted(files, tmp_path):
    """A link to a file another user controls, holding the unit's exact content: the code before read through
    it, found the content right and left the link (the unit systemd starts as root would follow that file)."""
    victim = tmp_path / "victim"
    victim.write_text(CONTENT)
    victim.chmod(0o600)
    real = files.real(UNIT)
    os.symlink(str(victim), real)
    assert _within(10, lambda: _write(files, UNIT, CONTENT)) is True, "the link was taken for the unit"
    assert not os.path.islink(real) and open(real).read() == CONTENT
    assert os.stat(real).st_mode & 0o777 == 0o644
    assert victim.read_text() == CONTENT and victim.stat().st_mode & 0o777 == 0o600, "the victim changed"


@pytest.mark.parametrize("planted", ["fifo", "dev-zero", "victim"])
def test_a_planted_file_at_a_boot_file_is_replaced_without_a_hang_or_a_write_through(files, tmp_path, planted):
    victim = tmp_path / "victim"
    victim.write_text("root only\n")
    victim.chmod(0o600)
    real = files.real(SCRIPT)
    if planted == "fifo":
        os.mkfifo(real)
    else:
        os.symlink("/dev/zero" if planted == "dev-zero" else str(victim), real)
    old_umask = os.umask(0)
    try:
        assert _within(10, lambda: _write(files, SCRIPT, "#!/bin/sh\ntrue\n", 0o755)) is True
    finally:
        os.umask(old_umask)
    assert not os.path.islink(real) and os.path.isfile(real) and open(real).read() == "#!/bin/sh\ntrue\n"
    assert os.stat(real).st_mode & 0o777 == 0o755, "the mode depends on the umask"
    assert victim.read_text() == "root only\n" and victim.stat().st_mode & 0o777 == 0o600
    assert not [n for n in os.listdir(os.path.dirname(real)) if n.endswith(".tmp")], "a temporary file was left"


def test_a_link_in_place_of_the_boot_directory_is_refused(files, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    d = os.path.dirname(files.real(SCRIPT))
    os.rmdir(d)
    os.symlink(str(elsewhere), d)
    with pytest.raises(PlanFailed, match=r"is a symbolic link; boot files are never written through links: '.*/etc/accelops/boot'; the host is as it was"):
        _within(10, lambda: _write(files, SCRIPT, "#!/bin/sh\ntrue\n", 0o755))
    assert os.listdir(str(elsewhere)) == [], "written through the linked directory"


def test_directories_made_get_their_mode_whatever_the_umask(tmp_path):
    (tmp_path / "root").mkdir()
    f = Files(Sysfs(root=str(tmp_path / "root")), str(tmp_path / "persist"))
    old_umask = os.umask(0)
    try:
        _write(f, SCRIPT, "#!/bin/sh\n", 0o755)
    finally:
        os.umask(old_umask)
    for d in ("etc", "etc/accelops", "etc/accelops/boot"):
        assert os.stat(str(tmp_path / "persist" / d)).st_mode & 0o777 == 0o755, d
