# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The file rule (_safefile.py) and the host lock (_converge.HostLock) on a hostile lock directory: planted links,
FIFOs, /dev/zero, non-UTF-8 records, a world-writable directory. Real files, real flock."""

from __future__ import annotations

import fcntl
import os
import stat
import threading

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _safefile
from ansible_collections.accelops.lifecycle.plugins.module_utils._converge import ConvergeRefused, HostLock


@pytest.fixture
def victim(tmp_path):
    v = tmp_path / "victim"
    v.write_text("SECRET-CONTENT\n")
    os.chmod(str(v), 0o600)
    return v


@pytest.fixture
def lock_dir(tmp_path):
    d = tmp_path / "lock"
    d.mkdir(mode=0o700)
    return d


def _refused(lock):
    with pytest.raises(ConvergeRefused) as e:
        lock.acquire()
    return str(e.value)


def test_lock_directory_is_made_0700_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        lock = HostLock(str(tmp_path / "a" / "b"), 1)
        lock.acquire()
        lock.release()
    finally:
        os.umask(old)
    for d in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(os.lstat(str(d)).st_mode) == 0o700


def test_a_world_writable_lock_directory_is_refused(lock_dir):
    os.chmod(str(lock_dir), 0o777)
    assert "writable by group or others" in _refused(HostLock(str(lock_dir), 1))


def test_a_link_at_the_lock_file_is_refused_not_followed(lock_dir, victim):
    os.symlink(str(victim), str(lock_dir / "converge.lock"))
    msg = _refused(HostLock(str(lock_dir), 1))
    assert "symbolic link" in msg and "nothing was changed" in msg
    assert victim.read_text() == "SECRET-CONTENT\n"


def test_a_link_at_the_owner_temp_name_is_not_written_through(lock_dir, victim):
    os.symlink(str(victim), str(lock_dir / "converge.owner.new"))
    lock = HostLock(str(lock_dir), 1, owner="run-a")
    lock.acquire()
    lock.release()
    assert victim.read_text() == "SECRET-CONTENT\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600


def test_a_link_at_the_owner_record_is_replaced_not_written_through(lock_dir, victim):
    os.symlink(str(victim), str(lock_dir / "converge.owner"))
    lock = HostLock(str(lock_dir), 1, owner="run-a")
    lock.acquire()
    assert not os.path.islink(str(lock_dir / "converge.owner"))
    lock.release()
    assert victim.read_text() == "SECRET-CONTENT\n"


def _held(lock_dir):
    fd = os.open(str(lock_dir / "converge.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_waiter_never_prints_the_content_of_a_linked_owner_record(lock_dir, victim):
    fd = _held(lock_dir)
    os.symlink(str(victim), str(lock_dir / "converge.owner"))
    try:
        msg = _refused(HostLock(str(lock_dir), 0.1))
    finally:
        os.close(fd)
    assert "SECRET" not in msg and "locked by another converge" in msg and "symbolic link" in msg


@pytest.mark.parametrize("plant", ["fifo", "devzero", "latin1"])
def test_a_hostile_owner_record_gives_a_message_in_time(lock_dir, plant):
    fd = _held(lock_dir)
    owner = str(lock_dir / "converge.owner")
    if plant == "fifo":
        os.mkfifo(owner)
    elif plant == "devzero":
        os.symlink("/dev/zero", owner)
    else:
        with open(owner, "wb") as f:
            f.write(b"pid=1\nowner=caf\xe9\nPASSWORD=x\n")
    result = {}

    def wait():
        try:
            HostLock(str(lock_dir), 0.1).acquire()
        except ConvergeRefused as e:
            result["msg"] = str(e)

    t = threading.Thread(target=wait)
    t.daemon = True
    t.start()
    t.join(5)
    os.close(fd)
    assert not t.is_alive(), "the waiter hung on %s" % plant
    assert "locked by another converge" in result["msg"] and "PASSWORD" not in result["msg"]


def test_a_fifo_at_the_lock_file_is_refused(lock_dir):
    os.mkfifo(str(lock_dir / "converge.lock"))
    assert "a FIFO, not a regular file" in _refused(HostLock(str(lock_dir), 1))


def test_an_owner_with_a_lone_surrogate_is_recorded(lock_dir):
    lock = HostLock(str(lock_dir), 1, owner="op\udcff\nx")
    lock.acquire()
    text = (lock_dir / "converge.owner").read_bytes().decode("utf-8")
    lock.release()
    assert "owner=op\\udcff\\x0ax" in text


def test_read_regular_is_bounded_and_refuses_links(tmp_path, victim):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 10)
    with pytest.raises(_safefile.UnsafeFile) as e:
        _safefile.read_regular(str(big), 9)
    assert "longer than 9 bytes" in str(e.value)
    assert _safefile.read_regular(str(big), 10) == b"x" * 10
    os.symlink(str(victim), str(tmp_path / "link"))
    with pytest.raises(_safefile.UnsafeFile):
        _safefile.read_regular(str(tmp_path / "link"), 100)


def test_write_atomic_gives_its_mode_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        _safefile.write_atomic(str(tmp_path / "f"), b"data", 0o644)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o644 and (tmp_path / "f").read_bytes() == b"data"
    assert sorted(os.listdir(str(tmp_path))) == ["f"]
