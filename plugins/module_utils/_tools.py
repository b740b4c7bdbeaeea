# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host tools (vendor and system commands): where they are and how they are run, for every host-side module.

- :func:`find_tool`: with the host root ``/``, ``PATH`` and then :data:`TOOL_DIRS`; under a simulated root only
  ``<root>`` + :data:`TOOL_DIRS` (the simulated host's own tools, never this machine's).
- :class:`ToolRunner`: runs a tool under coreutils ``timeout`` (a hung tool is stopped and reported, never waited
  on) through a ``run(argv) -> (rc, stdout, stderr)`` callable (``AnsibleModule.run_command``), or
  :func:`run_captured` when there is none; every run is kept in ``calls``. Failures raise :class:`ToolError` with
  one wording: ``X is not installed (looked in ...)``, ``X did not finish within N s and was stopped (timeout)``,
  ``X failed (exit N): ...``, ``X failed to start: ...``.
- :func:`run_captured`: a read-only query with a time limit and no module (discovery).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import os
import shutil
import subprocess

# /usr/lib/nvidia: NVIDIA's sriov-manage lives there and nowhere on PATH.
TOOL_DIRS = ("/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/lib/nvidia")
KILL_AFTER = 10       # seconds a tool may take to exit after SIGTERM before it is killed
TIMED_OUT = (124, 137)  # coreutils timeout: 124 stopped by SIGTERM, 137 killed after KILL_AFTER


class ToolError(Exception):
    """A tool is missing, failed, could not start or ran out of time; the message names the command and the
    cause. ``timed_out`` tells the last apart (callers add what that means for the device)."""

    def __init__(self, message, timed_out=False):
        super(ToolError, self).__init__(message)
        self.timed_out = timed_out


def _executable(path):
    return bool(path) and os.access(path, os.X_OK) and not os.path.isdir(path)


def find_tool(sysfs, name, dirs=TOOL_DIRS):
    """The path of tool ``name`` on this machine, or None. ``sysfs`` gives the host root (``.root``,
    ``.real()``)."""
    if sysfs.root == "/":
        candidates = [os.path.join(d, name) for d in os.environ.get("PATH", "").split(os.pathsep) + list(dirs) if d]
    else:
        candidates = [sysfs.real(d + "/" + name) for d in dirs]
    for path in candidates:
        if _executable(path):
            return path
    return None


def looked_in(sysfs, dirs=TOOL_DIRS):
    """Where :func:`find_tool` looked, for a message."""
    return "%s%s" % (", ".join(dirs), "" if sysfs.root == "/" else " under %s" % sysfs.root)


def not_installed(sysfs, name, dirs=TOOL_DIRS):
    return ToolError("%s is not installed (looked in %s)" % (name, looked_in(sysfs, dirs)))


def run_captured(argv, timeout=None, env=None):
    """Run ``argv`` without a module (stdin closed, output captured, ``LC_ALL=C``): ``(rc, stdout, stderr)``.
    Raises :class:`ToolError` when it cannot start or does not finish within ``timeout`` seconds (then it is
    killed)."""
    environ = dict(os.environ if env is None else env)
    environ["LC_ALL"] = "C"
    try:
        # Not AnsibleModule.run_command: it has no time limit, and a hung tool must not hang the module.
        p = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,  # pylint: disable=ansible-bad-function
                             stdin=subprocess.DEVNULL, env=environ)
    except (IOError, OSError) as e:
        raise ToolError("%s failed to start: %s" % (" ".join(argv), e))
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise ToolError("%s did not finish within %d s and was stopped (timeout)" % (" ".join(argv), timeout), timed_out=True)
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


class ToolRunner(object):
    """Finds and runs the tools of one module run.

    ``run``: ``run(argv) -> (rc, out, err)`` (None: :func:`run_captured`); ``timeout``: default seconds per run
    (0 or None: no limit); ``tool_paths``: ``{name: path or None}`` that replace the search (tests);
    ``timeout_bin``: coreutils ``timeout`` (default: found on this machine); ``require_limit``: refuse to run
    when there is no ``timeout`` to enforce the limit (a tool that can half-program a device).
    """

    def __init__(self, sysfs, run=None, timeout=60, tool_paths=None, timeout_bin=None, require_limit=False):
        self.sysfs = sysfs
        self._run = run
        self.timeout = timeout
        self.tool_paths = dict(tool_paths or {})
        self.timeout_bin = timeout_bin
        self.require_limit = require_limit
        self.calls = []

    def find(self, name):
        if name in self.tool_paths:
            p = self.tool_paths[name]
            return p if p and os.access(p, os.X_OK) else None
        return find_tool(self.sysfs, name)

    def _limit(self):
        if self.timeout_bin is None:
            self.timeout_bin = shutil.which("timeout") or ""
        return self.timeout_bin or None

    def command(self, argv, timeout):
        """``argv`` prefixed with ``timeout`` when there is a limit and the binary (the exact line run)."""
        limit = self._limit() if timeout else None
        if timeout and limit is None and self.require_limit:
            raise ToolError("coreutils timeout is not installed; it is needed to stop a vendor tool that hangs")
        if limit:
            return [limit, "--kill-after=%d" % KILL_AFTER, "%ds" % timeout] + list(argv), True
        return list(argv), False

    def run(self, name, args, check=True, timeout=None):
        """Run tool ``name`` (a name looked up with :meth:`find`, or an absolute path) with ``args``. Returns
        ``(rc, out, err)``; raises :class:`ToolError` when it is missing, cannot start or runs out of time, and
        with ``check`` when it exits non-zero."""
        path = name if os.path.isabs(name) else self.find(name)
        if path is None:
            raise not_installed(self.sysfs, name)
        argv = [path] + list(args)
        limit = self.timeout if timeout is None else timeout
        full, limited = self.command(argv, limit)
        shown = " ".join(argv)
        try:
            if self._run is None:
                rc, out, err = run_captured(full)
            else:
                rc, out, err = self._run(full)
        except ToolError:
            raise
        except Exception as e:  # pylint: disable=broad-except
            raise ToolError("%s failed to start: %s" % (shown, e))
        self.calls.append({"argv": argv, "rc": rc, "stdout": out, "stderr": err})
        if limited and rc in TIMED_OUT:
            raise ToolError("%s did not finish within %d s and was stopped (timeout)" % (shown, limit), timed_out=True)
        if check and rc != 0:
            said = (err or "").strip() or (out or "").strip() or "no output"
            raise ToolError("%s failed (exit %s): %s" % (shown, rc, said[-800:]))
        return rc, out, err
