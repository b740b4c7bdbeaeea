"""Fault injection: make the n-th write through the FUSE mount fail with an errno, make a tool fake fail or
hang, and a log of every write the FUSE daemon served.

The control file is ``faults.json`` in the state directory (any process may write it; the FUSE daemon and the
tool fakes read it on every write / run)::

    {"writes": [{"errno": "EBUSY", "nth": 2, "path": "*/sriov_numvfs", "times": 1, "seen": 0, "fired": 0}],
     "tools":  [{"tool": "fpgaconf", "rc": 1, "stderr": "...", "stdout": "", "hang": null, "args": null,
                 "nth": 1, "times": 1, "seen": 0, "fired": 0}]}

A write fault counts the ``write()`` calls whose path (as the daemon sees it, the resolved path under the
host root, e.g. ``/sys/devices/pci0000:d7/0000:d7:00.0/0000:d8:00.0/sriov_numvfs``) matches the glob
``path`` (``*`` also matches ``/``; no ``path``: every write) from the moment the fault was added; the
``nth`` one and the ``times - 1`` after it (``times: 0``: every one from the ``nth`` on) fail with ``errno``
and change nothing. A tool fault does the same for runs of a tool fake (optionally only those whose
arguments, joined by spaces, match the glob ``args``): it sleeps ``hang`` seconds first (``"forever"``: until
killed, what a hung tool does to its caller's timeout), then prints ``stdout``/``stderr`` and exits with
``rc``, or runs the real fake when ``rc`` is null (a slow tool).

``writes.log`` (state directory) has one JSON line per write the FUSE daemon served: ``{"path", "data",
"errno"}`` (``errno`` 0 when the write succeeded, the kernel's or the injected errno otherwise).
"""

import contextlib
import errno as errnolib
import fcntl
import fnmatch
import json
import os
import sys
import time

FAULTS_FILE = "faults.json"
WRITES_LOG = "writes.log"
# The runs of tool fakes that changed the simulated host (its kernel state or its mdevctl definitions).
TOOL_LOG = "tools.log"
FOREVER = "forever"


def errno_code(value):
    """An errno number from a number or a name such as ``"EBUSY"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    code = getattr(errnolib, text.upper(), None)
    if not isinstance(code, int):
        raise ValueError("unknown errno %r (use a number or a name such as EBUSY)" % (value,))
    return code


def _errno_name(code):
    return errnolib.errorcode.get(code, str(code))


class Faults(object):
    """The fault control file and write log of one state directory."""

    def __init__(self, state_dir):
        self.dir = os.path.abspath(state_dir)
        self.path = os.path.join(self.dir, FAULTS_FILE)
        self.log_path = os.path.join(self.dir, WRITES_LOG)

    @contextlib.contextmanager
    def _locked(self):
        # A lock file of its own: the FUSE daemon checks faults outside the state store's lock.
        with open(os.path.join(self.dir, "faults.lock"), "a") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lk, fcntl.LOCK_UN)

    def _load(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            data = {}
        data.setdefault("writes", [])
        data.setdefault("tools", [])
        return data

    def _save(self, data):
        if not data["writes"] and not data["tools"]:
            if os.path.exists(self.path):
                os.unlink(self.path)
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    # -- setting up ------------------------------------------------------------------------------------
    def fail_write(self, errno, nth=1, path=None, times=1):
        """The ``nth`` write (from now) to a path matching ``path`` fails with ``errno``, ``times`` times."""
        fault = {"errno": _errno_name(errno_code(errno)), "nth": _positive(nth, "nth"), "path": path,
                 "times": _count(times), "seen": 0, "fired": 0}
        with self._locked():
            data = self._load()
            data["writes"].append(fault)
            self._save(data)
        return fault

    def fail_tool(self, tool, rc=1, stderr=None, stdout="", hang=None, nth=1, times=1, args=None):
        """The ``nth`` run (from now) of tool fake ``tool`` fails: optional ``hang`` seconds (or "forever")
        first, then ``stdout``/``stderr`` and exit status ``rc`` (None: run the real fake)."""
        if hang is not None and hang != FOREVER:
            hang = float(hang)
            if hang < 0:
                raise ValueError("hang must be >= 0 seconds or %r" % FOREVER)
        if rc is not None:
            rc = int(rc)
        if stderr is None and rc:
            stderr = "%s: simulated failure (accelsim fault injection)\n" % tool
        fault = {"tool": tool, "rc": rc, "stderr": stderr or "", "stdout": stdout or "", "hang": hang, "args": args,
                 "nth": _positive(nth, "nth"), "times": _count(times), "seen": 0, "fired": 0}
        with self._locked():
            data = self._load()
            data["tools"].append(fault)
            self._save(data)
        return fault

    def clear(self):
        with self._locked():
            self._save({"writes": [], "tools": []})

    def list(self):
        with self._locked():
            return self._load()

    # -- checking (FUSE daemon, tool fakes) ------------------------------------------------------------
    def check_write(self, path):
        """The errno number the write to ``path`` must fail with, or None (counts the write)."""
        if not os.path.exists(self.path):
            return None
        with self._locked():
            data = self._load()
            hit = None
            counted = False
            for f in data["writes"]:
                if f["path"] and not fnmatch.fnmatchcase(path, f["path"]):
                    continue
                counted = True
                f["seen"] += 1
                if hit is None and _due(f):
                    f["fired"] += 1
                    hit = errno_code(f["errno"])
            if counted:
                self._save(data)
        return hit

    def check_tool(self, tool, args):
        """The fault that this run of ``tool`` must act out, or None (counts the run)."""
        if not os.path.exists(self.path):
            return None
        joined = " ".join(args)
        with self._locked():
            data = self._load()
            hit = None
            counted = False
            for f in data["tools"]:
                if f["tool"] != tool or (f["args"] and not fnmatch.fnmatchcase(joined, f["args"])):
                    continue
                counted = True
                f["seen"] += 1
                if hit is None and _due(f):
                    f["fired"] += 1
                    hit = dict(f)
            if counted:
                self._save(data)
        return hit

    # -- the write log ---------------------------------------------------------------------------------
    def log_write(self, path, data, code):
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": path, "data": data.decode("utf-8", "replace")[:256], "errno": code or 0}) + "\n")

    def log_tool_change(self, tool, args, rc):
        with open(os.path.join(self.dir, TOOL_LOG), "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "args": [str(a)[:256] for a in args], "rc": rc}) + "\n")

    def tool_changes(self):
        """Every run of a tool fake that changed the host so far: [{"tool", "args", "rc"}]."""
        try:
            with open(os.path.join(self.dir, TOOL_LOG), encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def writes(self):
        """Every write the FUSE daemon served so far: [{"path", "data", "errno"}]."""
        try:
            with open(self.log_path, encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []


def _positive(value, what):
    value = int(value)
    if value < 1:
        raise ValueError("%s must be >= 1" % what)
    return value


def _count(value):
    value = int(value or 0)
    if value < 0:
        raise ValueError("times must be >= 0 (0: every time)")
    return value


def _due(f):
    return f["seen"] >= f["nth"] and (f["times"] == 0 or f["fired"] < f["times"])


def act_out(fault):
    """What a faulty tool does: hang, then print and return its exit status (None: run the real fake)."""
    hang = fault.get("hang")
    if hang == FOREVER:
        while True:
            time.sleep(3600)
    elif hang:
        time.sleep(hang)
    if fault.get("rc") is None:
        return None
    sys.stdout.write(fault.get("stdout") or "")
    sys.stderr.write(fault.get("stderr") or "")
    return fault["rc"]
