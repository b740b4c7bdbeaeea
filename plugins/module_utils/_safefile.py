# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The file rule of the host modules, in one place: every state file a host module reads or writes as root
(host lock, owner record, kept bitstream copy, vGPU type cache) goes through these functions.

- A file is opened without following a link in its last component (``O_NOFOLLOW``) and without blocking
  (``O_NONBLOCK``: a FIFO planted there never hangs the run); after the open, anything but a regular file is
  refused (FIFO, device, socket, directory).
- A new file is created with ``O_EXCL`` under a fresh name, written, given its mode with ``fchmod`` (whatever
  the umask) and renamed over the old one: a link at the final name is replaced, never written through.
- A directory is made with an explicit mode (whatever the umask) and, made or found, checked before use: a
  real directory (not a link), owned by this user, not writable by group or others.
- Reads are bounded in size; a file longer than its bound is refused. Messages name the path and why it was
  refused, never the file's content.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import errno
import os
import stat

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafeFile(OSError):
    """A path refused by the file rule; ``strerror`` says why (a link, a FIFO, too long, wrong owner...)."""

    def __init__(self, err, reason, path):
        super(UnsafeFile, self).__init__(err, reason, path)


def kind(mode):
    """What a file is, in words (``a FIFO``, ``a symbolic link``)."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a directory"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


def describe(e):
    """An OSError as ``<path>: <reason>`` for a message (never a file's content)."""
    path = getattr(e, "filename", None)
    reason = getattr(e, "strerror", None) or str(e)
    return "%s: %s" % (path, reason) if path else reason


def open_regular(path, flags=os.O_RDONLY, mode=0o600, owned=False):
    """``os.open`` under the file rule: no link followed, no blocking open, regular files only (``owned``: and
    owned by this user). Returns the descriptor; raises OSError (:class:`UnsafeFile` when refused)."""
    try:
        fd = os.open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafeFile(errno.ELOOP, "is a symbolic link; state files are never opened through links", path)
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(errno.EINVAL, "is %s, not a regular file; refused" % kind(st.st_mode), path)
        if owned and st.st_uid != os.geteuid():
            raise UnsafeFile(errno.EPERM, "is owned by uid %d, not by this user; refused" % st.st_uid, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path, limit, owned=False):
    """The bytes of a regular file of at most ``limit`` bytes (see :func:`open_regular`); a longer file is
    refused (:class:`UnsafeFile`, ``EFBIG``). A missing file raises the usual FileNotFoundError."""
    fd = open_regular(path, owned=owned)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise UnsafeFile(errno.EFBIG, "is longer than %d bytes; refused" % limit, path)
    return b"".join(chunks)


def read_text(path, limit, owned=False):
    """:func:`read_regular` decoded as UTF-8 (bytes that are not UTF-8 become U+FFFD, never a traceback)."""
    return read_regular(path, limit, owned=owned).decode("utf-8", "replace")


def make_dir(path, mode=0o700):
    """Make ``path`` and its missing parents with ``mode`` (whatever the umask), then check it
    (:func:`check_dir`)."""
    path = os.path.normpath(path)
    missing = []
    p = path
    while p and not os.path.lexists(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(missing):
        try:
            os.mkdir(d, mode)
        except FileExistsError:
            continue
        os.chmod(d, mode)
    check_dir(path)


def check_dir(path):
    """Refuse a directory that another user could change under this run: a link, not a directory, owned by
    another user, or writable by group or others (:class:`UnsafeFile`)."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFile(errno.ENOTDIR, "is %s, not a directory; refused" % kind(st.st_mode), path)
    if st.st_uid != os.geteuid():
        raise UnsafeFile(errno.EPERM, "is owned by uid %d, not by this user; refused" % st.st_uid, path)
    if st.st_mode & 0o022:
        raise UnsafeFile(errno.EPERM, "is writable by group or others (mode %04o); refused"
                         % stat.S_IMODE(st.st_mode), path)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _replace(path, mode, fill):
    """Replace ``path`` with what ``fill(fd)`` writes into a new file made with ``O_EXCL`` beside it (0600 until
    it is complete), given ``mode`` with ``fchmod`` and renamed over ``path`` (a link at ``path`` is replaced,
    not followed); the new file is removed when anything fails."""
    tmp = "%s.%s.tmp" % (path, os.urandom(6).hex())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    try:
        try:
            fill(fd)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except BaseException:
        discard(tmp)
        raise


def write_atomic(path, data, mode=0o600):
    """Replace ``path`` with ``data`` (bytes), as :func:`_replace` does."""
    _replace(path, mode, lambda fd: _write_all(fd, data))


def copy_atomic(src_path, path, mode=0o400):
    """Replace ``path`` with a copy of the regular file ``src_path`` (read under the file rule), as
    :func:`_replace` does."""
    src = open_regular(src_path)

    def fill(fd):
        while True:
            chunk = os.read(src, 1 << 20)
            if not chunk:
                break
            _write_all(fd, chunk)

    try:
        _replace(path, mode, fill)
    finally:
        os.close(src)


def discard(path):
    """Remove a file this run made (a link is removed, never its target); nothing when it is gone."""
    try:
        os.unlink(path)
    except OSError:
        pass
