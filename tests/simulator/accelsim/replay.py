"""Replay a capture (``tools/capture-host.py``) as a simulated host: a plain tree built from the captured files,
links and /dev listings, and vendor tools that answer with the captured stdout, stderr and exit status of the
same command line.

``build(capture_dir, dest)`` writes the host root (no root privileges needed); ``python -m accelsim replay
CAPTURE DEST`` does the same from a shell. The tools are the simulator's wrappers (``usr/bin/<tool>``), which
``accelsim tool`` sends here when the root holds a replay (:func:`is_replay`). A command line the capture does not
hold fails like an option the tool does not know (exit 2, a message on stderr) and is listed by :func:`missing`,
so that a test can say which command the capture lacks.

Nothing here knows a device family: what discovery makes of the tree is the collection's business.
"""

import json
import os
import sys

MARK = ".accelsim-replay"          # under the root: the capture's own files and what the replay saw
MISSING = "missing.jsonl"          # one JSON argv per command line asked for and not captured
# where a captured tool is put under the root (the collection looks in these, in this order)
TOOL_DIRS = {"sriov-manage": "usr/lib/nvidia"}
DEFAULT_TOOL_DIR = "usr/bin"


class ReplayError(Exception):
    """The capture cannot be replayed (no capture.json, an unknown format, a path out of the root)."""


def load(capture_dir):
    """The capture's ``capture.json``."""
    path = os.path.join(capture_dir, "capture.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (IOError, OSError, ValueError) as e:
        raise ReplayError("%s: not a capture (%s)" % (capture_dir, e))
    if doc.get("format") != 1 or not isinstance(doc.get("files"), dict):
        raise ReplayError("%s: capture format %r; this replay reads format 1 (one capture.json with the file texts and "
                          "each tool's streams inline)" % (capture_dir, doc.get("format")))
    return doc


def _under(root, path):
    """``path`` (absolute, on the captured host) under ``root``, refusing any that leads out of it."""
    full = os.path.normpath(os.path.join(root, path.lstrip("/")))
    if full != root and not full.startswith(root + os.sep):
        raise ReplayError("captured path %r leads out of the replay root" % path)
    return full


def _uname_release(capture_dir, doc):
    """The kernel release from the captured ``uname -srvm`` (its second word), or None."""
    for c in doc.get("commands") or []:
        if c.get("argv", [None])[0] == "uname" and c.get("rc") == 0 and c.get("stdout"):
            words = c["stdout"].split()
            return words[1] if len(words) > 1 else None
    return None


def build(capture_dir, dest):
    """Write the host root of the capture at ``capture_dir`` under ``dest`` (created; must be empty or absent).
    Returns ``dest`` as an absolute path."""
    from .tree import wrapper_script  # pylint: disable=import-outside-toplevel
    capture_dir = os.path.abspath(capture_dir)
    root = os.path.abspath(dest)
    doc = load(capture_dir)
    if os.path.isdir(root) and os.listdir(root):
        raise ReplayError("%s is not empty" % root)
    os.makedirs(root, exist_ok=True)
    for path in doc.get("dirs") or []:
        os.makedirs(_under(root, path), exist_ok=True)
    for path, text in sorted(doc["files"].items()):
        target = _under(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    for path, target in sorted((doc.get("links") or {}).items()):
        where = _under(root, path)
        os.makedirs(os.path.dirname(where), exist_ok=True)
        if os.path.lexists(where):
            continue
        # as captured: sysfs links are relative; an absolute one (/proc/<pid>/fd/<n> -> /dev/...) is read, never
        # followed, and discovery compares its text with the host's paths
        os.symlink(target, where)
    for base, entries in sorted((doc.get("dev") or {}).items()):
        os.makedirs(_under(root, base), exist_ok=True)
        for name, entry in sorted(entries.items()):
            where = _under(root, base + "/" + name)
            if entry.get("type") == "dir":
                os.makedirs(where, exist_ok=True)
            elif not os.path.lexists(where):
                # device nodes become empty files: discovery lists them, never opens them
                with open(where, "w", encoding="utf-8"):
                    pass
    # what discovery reads of the host itself, where the capture has it only as a tool's output
    for path, value in (("/proc/sys/kernel/osrelease", _uname_release(capture_dir, doc)),
                        ("/proc/sys/kernel/hostname", "capture-host")):
        where = _under(root, path)
        if value and not os.path.exists(where):
            os.makedirs(os.path.dirname(where), exist_ok=True)
            with open(where, "w", encoding="utf-8") as f:
                f.write(value + "\n")
    tools = {c["argv"][0] for c in doc.get("commands") or [] if c.get("found") and c.get("argv")}
    tools.update(name for name, path in (doc.get("tools") or {}).items() if path)
    tools = sorted(t for t in tools if "/" not in t)
    for tool in tools:
        rel = "%s/%s" % (TOOL_DIRS.get(tool, DEFAULT_TOOL_DIR), tool)
        where = _under(root, rel)
        os.makedirs(os.path.dirname(where), exist_ok=True)
        with open(where, "w", encoding="utf-8") as f:
            f.write(wrapper_script(tool, rel.count("/")))
        os.chmod(where, 0o755)
    mark = os.path.join(root, MARK)
    os.makedirs(mark)
    # what the tools answer: the commands alone (the file texts are in the tree)
    with open(os.path.join(mark, "capture.json"), "w", encoding="utf-8") as f:
        json.dump({"format": doc["format"], "commands": doc.get("commands") or []}, f)
    return root


def is_replay(root):
    """Whether the host root ``root`` was built by :func:`build`."""
    return bool(root) and os.path.isfile(os.path.join(root, MARK, "capture.json"))


def run_tool(root, name, args, out=None, err=None):
    """Answer ``name args`` from the capture replayed at ``root``: its streams written to ``out``/``err`` (default
    this process's), its exit status returned. A command line not captured: exit 2 and a line in :func:`missing`."""
    out = out or sys.stdout
    err = err or sys.stderr
    mark = os.path.join(root, MARK)
    with open(os.path.join(mark, "capture.json"), encoding="utf-8") as f:
        doc = json.load(f)
    argv = [name] + list(args)
    for c in doc.get("commands") or []:
        if c.get("found") and c.get("argv") == argv and c.get("rc") is not None:
            for stream, fh in (("stdout", out), ("stderr", err)):
                fh.write(c.get(stream) or "")
            out.flush()
            err.flush()
            return int(c["rc"])
    with open(os.path.join(mark, MISSING), "a", encoding="utf-8") as f:
        f.write(json.dumps(argv) + "\n")
    err.write("%s: this command line was not captured on the replayed host (accelsim replay): %s\n"
              % (name, " ".join(argv)))
    return 2


def missing(root):
    """The command lines (argv lists) asked of the replay at ``root`` that its capture does not hold, in order,
    without repeats."""
    seen, out = set(), []
    try:
        with open(os.path.join(root, MARK, MISSING), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (IOError, OSError):
        return []
    for line in lines:
        argv = json.loads(line)
        if tuple(argv) not in seen:
            seen.add(tuple(argv))
            out.append(argv)
    return out


def capture_lab(lab, dest, workdir):
    """Capture the simulator's lab ``lab`` the way an operator captures a host: render it under ``workdir`` and run
    ``tools/capture-host.py --root`` against it (the lab's tool fakes answer, as the host's tools would), into
    ``dest``. Returns capture-host.py's exit status."""
    import subprocess  # pylint: disable=import-outside-toplevel
    from .render import render_tree  # pylint: disable=import-outside-toplevel
    here = os.path.dirname(os.path.abspath(__file__))
    tool = os.path.normpath(os.path.join(here, "..", "..", "..", "tools", "capture-host.py"))
    host = render_tree(lab, os.path.join(workdir, lab))
    return subprocess.call([sys.executable, tool, dest, "--root", host.root])
