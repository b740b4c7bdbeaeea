# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one layer through which host-side code touches sysfs, procfs and /dev.

Every path handed to this layer is an absolute *host* path (``/sys/bus/pci/devices``); the layer maps it
under a configurable root, so the same code reads the real host (roots ``/``) or a simulated lab tree.
Nothing else in the collection opens device paths.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import errno
import os
import re
import stat

# Sysfs attributes are at most one page; anything longer is not an attribute the kernel wrote.
ATTR_LIMIT = 4096

# What the kernel prints for an integer attribute (%d / %u): ASCII digits, a minus for a negative value, nothing
# else (no "+4", no "1_0", no other script's digits, which int() would all take).
_KERNEL_DECIMAL = re.compile(r"-?[0-9]{1,20}\Z")
# Opened without blocking: a FIFO planted in a tree is read as empty, never waited on (regular files, sysfs and
# procfs attributes ignore the flag).
_O_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def kernel_int(text, low=None, high=None):
    """An integer attribute as the kernel prints it, or None: not kernel decimal (``1_0``, ``+4``, Arabic-Indic
    digits, ``1e5``), or outside ``[low, high]`` (the bounds the device itself gives)."""
    if text is None:
        return None
    text = text.strip() if isinstance(text, str) else text
    if not isinstance(text, str) or not _KERNEL_DECIMAL.match(text):
        return None
    value = int(text)
    if (low is not None and value < low) or (high is not None and value > high):
        return None
    return value


# Kernel errno values that sysfs writes return, with what they mean for an operator.
_ERRNO_HINTS = {
    errno.EBUSY: "the device is busy (in use, or the kernel needs the value reset to 0 first)",
    errno.ERANGE: "the value is out of the range the device supports",
    errno.EINVAL: "the kernel rejected the value as invalid",
    errno.EEXIST: "an object with that identity already exists",
    errno.EUSERS: "no instances of that type are left on the device",
    errno.EACCES: "the attribute is not writable",
    errno.EPERM: "the operation is not permitted (root is needed)",
    errno.ENOENT: "the attribute does not exist",
    errno.ENODEV: "the device has gone away",
    errno.ENOSPC: "no space left for that object on the device",
}


class SysfsError(Exception):
    """A sysfs/procfs access failed; the message names the host path and the kernel's reason."""

    def __init__(self, op, path, err):
        self.op = op
        self.path = path
        self.errno = getattr(err, "errno", None)
        reason = getattr(err, "strerror", None) or str(err)
        hint = _ERRNO_HINTS.get(self.errno)
        msg = "%s %s failed: %s" % (op, path, reason)
        if hint:
            msg += " (%s)" % hint
        super(SysfsError, self).__init__(msg)


class Sysfs(object):
    """Read and write host files under configurable roots.

    ``sys_root`` replaces ``/sys``, ``proc_root`` replaces ``/proc``, ``dev_root`` replaces ``/dev`` and
    ``run_root`` replaces ``/run``. Any other absolute path is mapped under ``root`` (default ``/``).
    """

    def __init__(self, root="/", sys_root=None, proc_root=None, dev_root=None, run_root=None):
        self.root = os.path.abspath(root or "/")
        self._prefixes = (
            ("/sys", os.path.abspath(sys_root) if sys_root else self._under_root("/sys")),
            ("/proc", os.path.abspath(proc_root) if proc_root else self._under_root("/proc")),
            ("/dev", os.path.abspath(dev_root) if dev_root else self._under_root("/dev")),
            ("/run", os.path.abspath(run_root) if run_root else self._under_root("/run")),
        )

    def _under_root(self, path):
        if self.root == "/":
            return path
        return os.path.join(self.root, path.lstrip("/"))

    # -- path mapping -------------------------------------------------------------------------
    def real(self, path):
        """Map an absolute host path to the path on this machine."""
        path = os.path.normpath("/" + path.lstrip("/"))
        for prefix, real in self._prefixes:
            if path == prefix or path.startswith(prefix + "/"):
                return real + path[len(prefix):]
        return self._under_root(path)

    def host(self, real_path):
        """Map a path on this machine back to the host path (inverse of :meth:`real`)."""
        real_path = os.path.normpath(real_path)
        for prefix, real in self._prefixes:
            if real_path == real or real_path.startswith(real.rstrip("/") + "/"):
                return prefix + real_path[len(real.rstrip("/")):] if real != "/" else real_path
        if self.root != "/" and real_path.startswith(self.root + "/"):
            return real_path[len(self.root):]
        return real_path

    # -- reads --------------------------------------------------------------------------------
    def exists(self, path):
        return os.path.lexists(self.real(path))

    def isdir(self, path):
        return os.path.isdir(self.real(path))

    def read_bytes(self, path, limit=1 << 20):
        """Read at most ``limit`` bytes (sysfs attributes are one page; never read a huge file whole)."""
        try:
            fd = os.open(self.real(path), _O_READ)
        except (IOError, OSError) as e:
            raise SysfsError("read", path, e)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                # a FIFO, a device or a socket where an attribute should be: refused, never waited on
                raise SysfsError("read", path, OSError(errno.EINVAL, "not a regular file"))
            chunks, size = [], 0
            while size < limit:
                chunk = os.read(fd, limit - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            return b"".join(chunks)
        except (IOError, OSError) as e:
            raise SysfsError("read", path, e)
        finally:
            os.close(fd)

    def read(self, path, default=None, limit=1 << 20):
        """Read a text attribute, stripped of the trailing newline. ``default`` is returned when the file
        is missing or unreadable; when ``default`` is None, errors raise :class:`SysfsError`."""
        try:
            data = self.read_bytes(path, limit)
        except SysfsError:
            if default is not None:
                return default
            raise
        return data.decode("utf-8", "replace").strip()

    def read_optional(self, path):
        """Read a text attribute, or None when it is missing or unreadable."""
        try:
            return self.read(path)
        except SysfsError:
            return None

    def listdir(self, path):
        """Sorted entries of a directory; an empty list when it is missing."""
        try:
            return sorted(os.listdir(self.real(path)))
        except (IOError, OSError) as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR):
                return []
            raise SysfsError("list", path, e)

    def readlink(self, path):
        """The target of a symlink as the kernel wrote it (relative), or None when it is not a link."""
        try:
            return os.readlink(self.real(path))
        except (IOError, OSError):
            return None

    def link_name(self, path):
        """The last component of a symlink's target (``driver`` -> ``vfio-pci``), or None."""
        target = self.readlink(path)
        return os.path.basename(target.rstrip("/")) if target else None

    def resolve(self, path):
        """The host path a symlink chain ends at, resolved inside the mapped roots, or None when the
        link dangles or loops."""
        # os.path.realpath(strict=True) is Python 3.10+; managed hosts may run 3.9.
        try:
            real = os.path.realpath(self.real(path))
            os.stat(real)
        except (IOError, OSError, RuntimeError, ValueError):
            return None
        return self.host(real)

    # -- fast bulk reads (scanners) ----------------------------------------------------------
    # Scanners that touch thousands of attributes map a base directory once with :meth:`real` and
    # then use these helpers on the machine paths below it: one open/read/close per attribute, no
    # buffering objects, no per-call path normalisation.
    def scandir(self, path):
        """Entries of a directory as ``(name, is_dir, is_link)`` tuples in directory order, an empty
        list when it is missing or not a directory. ``is_dir`` does not follow symlinks."""
        return scan_real(self.real(path))

    def attr(self, path, limit=ATTR_LIMIT):
        """One attribute as text (see :func:`read_attr_real`); ``(None, errno)`` when unreadable."""
        return read_attr_real(self.real(path), limit)

    # -- writes -------------------------------------------------------------------------------
    def write(self, path, value):
        """Write one value to an attribute in a single ``write()`` call, as the kernel expects.

        Raises :class:`SysfsError` carrying the kernel's errno and an operator-readable reason."""
        data = value if isinstance(value, bytes) else ("%s" % value).encode("utf-8")
        try:
            fd = os.open(self.real(path), os.O_WRONLY)
        except (IOError, OSError) as e:
            raise SysfsError("open for write", path, e)
        try:
            os.write(fd, data)
        except (IOError, OSError) as e:
            raise SysfsError("write %r to" % data.decode("utf-8", "replace"), path, e)
        finally:
            os.close(fd)


_open, _read, _close = os.open, os.read, os.close


class AttrTooLarge(Exception):
    """Raised by :func:`read_raw` when a file is longer than the limit asked for."""


def read_raw(real_path, limit=ATTR_LIMIT):
    """Read a small file in one ``read()``: bytes, or raise OSError / :class:`AttrTooLarge`."""
    fd = os.open(real_path, _O_READ)
    try:
        data = os.read(fd, limit)
        if len(data) == limit and os.read(fd, 1):
            raise AttrTooLarge(real_path)
    finally:
        os.close(fd)
    return data


def read_attr_real(real_path, limit=ATTR_LIMIT):
    """Read an attribute at a machine path: ``(text, None)`` on success (stripped), ``(None, errno)``
    when it cannot be read (``errno.EFBIG`` when longer than ``limit``, ``errno.EILSEQ`` when it is
    not UTF-8 text). This is the scanners' hot path: one open, one read, one close."""
    try:
        fd = _open(real_path, _O_READ)
    except OSError as e:
        return None, e.errno or errno.EIO
    try:
        data = _read(fd, limit)
        if len(data) == limit and _read(fd, 1):
            return None, errno.EFBIG
    except OSError as e:
        return None, e.errno or errno.EIO
    finally:
        _close(fd)
    try:
        return data.decode("utf-8").strip(), None
    except UnicodeDecodeError:
        return None, errno.EILSEQ


def readlink_real(real_path):
    """The target of a symlink at a machine path, or None (missing, not a link, unreadable)."""
    try:
        return os.readlink(real_path)
    except (IOError, OSError, ValueError):
        return None


def _open_dir(base):
    """``(fd, None)`` for a machine directory opened to read its entries relative to it, or ``(None, errno)``."""
    try:
        return _open(base, _O_DIR), None
    except OSError as e:
        return None, e.errno or errno.EIO
    except ValueError:  # a NUL in the path
        return None, errno.EINVAL


def read_attrs_real(base, names, limit=ATTR_LIMIT):
    """Several attributes of one machine directory in one call: ``[(text, errno), ...]`` in the order of
    ``names``, each as :func:`read_attr_real` gives it. ``base`` is the directory's machine path ending in
    ``/``. The scanners read a function's attributes with it (one Python call instead of one per file). The
    directory is looked up once and each attribute opened relative to it: a path lookup walks every component,
    and each step of the walk is a request on a FUSE-backed tree."""
    dfd, err = _open_dir(base)
    if dfd is None:
        return [(None, err)] * len(names)
    out = []
    append = out.append
    try:
        for name in names:
            try:
                fd = _open(name, _O_READ, dir_fd=dfd)
            except OSError as e:
                append((None, e.errno or errno.EIO))
                continue
            try:
                data = _read(fd, limit)
                if len(data) == limit and _read(fd, 1):
                    append((None, errno.EFBIG))
                    continue
            except OSError as e:
                append((None, e.errno or errno.EIO))
                continue
            finally:
                _close(fd)
            try:
                append((data.decode("utf-8").strip(), None))
            except UnicodeDecodeError:
                append((None, errno.EILSEQ))
    finally:
        _close(dfd)
    return out


def readlinks_real(base, names):
    """The targets of several symlinks of one machine directory (``base`` ending in ``/``), in the order of
    ``names``; None for each that is missing, not a link or unreadable (as :func:`readlink_real`), read relative
    to the directory, looked up once (as :func:`read_attrs_real`)."""
    dfd, _err = _open_dir(base)
    if dfd is None:
        return [None] * len(names)
    out = []
    append = out.append
    readlink = os.readlink
    try:
        for name in names:
            try:
                append(readlink(name, dir_fd=dfd))
            except (OSError, ValueError):
                append(None)
    finally:
        _close(dfd)
    return out


_ACCESS_EFFECTIVE = os.access in os.supports_effective_ids


def isdir_real(real_path):
    """True when a machine path is a directory, following symlinks (as ``os.path.isdir``), checked with one
    ``access()`` of ``<path>/.`` instead of a ``stat()`` whose result Python would build and discard."""
    try:
        return os.access(real_path + "/.", os.F_OK, effective_ids=_ACCESS_EFFECTIVE)
    except (OSError, ValueError, TypeError):
        return False


def scan_real(real_path):
    """``(name, is_dir, is_link)`` for the entries of a machine directory; [] when it is missing."""
    out = []
    try:
        it = os.scandir(real_path)
    except (IOError, OSError, ValueError):
        return out
    try:
        for e in it:
            try:
                is_link = e.is_symlink()
                out.append((e.name, (not is_link) and e.is_dir(follow_symlinks=False), is_link))
            except (IOError, OSError):
                continue
    except (IOError, OSError):
        pass
    finally:
        it.close()
    return out


def errno_text(err):
    """A short operator-readable reason for an errno value."""
    if err == errno.EFBIG:
        return "longer than a sysfs attribute can be"
    if err == errno.EILSEQ:
        return "not UTF-8 text"
    try:
        return os.strerror(err)
    except (TypeError, ValueError):
        return "error %r" % (err,)
