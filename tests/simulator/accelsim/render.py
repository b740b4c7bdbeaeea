"""Write a lab host to disk as a plain directory tree (no root needed)."""

import json
import os
import shutil
import zlib

from .faults import Faults
from .kernel import Host
from .model import load_lab
from .store import STATE_LINK, StateStore
from .tree import build

TOP_LEVEL = ("sys", "proc", "dev", "run", "usr")
MANIFEST = "rendered.json"


def write_tree(host, dest, state_dir=None):
    """(Re)write everything the tree shows for ``host`` under ``dest``. When the state directory holds
    the manifest of the previous rendering, only the differences are applied."""
    tree = build(host)
    os.makedirs(dest, exist_ok=True)
    new = {}
    for path, node in tree.nodes.items():
        if path:
            data = node.data if node.kind == "f" else (node.data or "").encode()
            new[path] = [node.kind, "%08x:%d" % (zlib.crc32(data or b""), len(data or b"")), node.mode]
    manifest = os.path.join(state_dir, MANIFEST) if state_dir else None
    old = None
    if manifest and os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as f:
            old = json.load(f)
    if old is None:
        for top in TOP_LEVEL:
            path = os.path.join(dest, top)
            if os.path.lexists(path):
                _make_writable(path)
                shutil.rmtree(path)
        old = {}
    gone = [p for p in old if p not in new or old[p][0] != new[p][0] or (old[p][0] == "l" and old[p] != new[p])]
    for path in sorted(gone, key=len, reverse=True):
        full = os.path.join(dest, path)
        if old[path][0] == "d":
            if os.path.isdir(full) and not os.path.islink(full):
                os.rmdir(full)
        elif os.path.lexists(full):
            os.unlink(full)
    gone = set(gone)
    for path in sorted(new):
        node = tree.nodes[path]
        if path in old and path not in gone and old[path] == new[path]:
            continue
        full = os.path.join(dest, path)
        if node.kind == "d":
            os.makedirs(full, exist_ok=True)
        elif node.kind == "l":
            os.symlink(node.data, full)
        else:
            if os.path.lexists(full):
                os.chmod(full, 0o644)
            with open(full, "wb") as f:
                f.write(node.data)
            os.chmod(full, node.mode)
    if state_dir and os.path.abspath(state_dir) != os.path.abspath(os.path.join(dest, STATE_LINK)):
        link = os.path.join(dest, STATE_LINK)
        if os.path.lexists(link) and os.path.islink(link):
            os.unlink(link)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(state_dir), link)
    if manifest:
        tmp = manifest + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(new, f)
        os.replace(tmp, manifest)
    return tree


def _make_writable(path):
    for base, dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(base, name)
            if not os.path.islink(full):
                os.chmod(full, 0o644)
        for name in dirs:
            full = os.path.join(base, name)
            if not os.path.islink(full):
                os.chmod(full, 0o755)


class SimHost(object):
    """A simulated host (a plain tree or a FUSE mount) and its state store."""

    def __init__(self, root, store):
        self.root = os.path.abspath(root)
        self.store = store
        self.state_dir = store.dir

    def state(self):
        return self.store.load()

    def transaction(self):
        return self.store.transaction()

    def path(self, host_path):
        """The path on this machine of a host path such as /sys/bus/pci/devices."""
        return os.path.join(self.root, host_path.lstrip("/"))

    def reboot(self, units=True):
        """Power-cycle: transient state (VFs, mdevs, vGPU types, overrides, PR-loaded AFUs, xclbins,
        running domains, processes) is lost; flash contents and the disk (etc/, var/: mdevctl definitions,
        generated units) are kept; auto-start mdevctl definitions are started and, on a FUSE mount, the
        systemd services enabled under etc/systemd/system/*.target.wants are run (``units=False``: not).
        Returns what the units did: [{"unit", "rc", "tries", "output"}]."""
        self.store.reboot()
        if units and self.store.load().get("mode") == "mount":
            from .boot import run_units
            return run_units(self.root, self.state_dir)
        return []

    def mark_in_use(self, unit, by="domain", name=None):
        from .inuse import mark_in_use
        return mark_in_use(self, unit, by=by, name=name)

    def release(self, name):
        from .inuse import release
        release(self, name)

    def tool(self, name, *args):
        from .tools import run_tool
        return run_tool(name, list(args), root=self.root)

    # -- fault injection (faults.py; the control file is <state_dir>/faults.json) -------------------------
    def fail_write(self, errno, nth=1, path=None, times=1):
        """FUSE mounts: the ``nth`` write() from now (to a path matching the glob ``path``, matched against
        the resolved path under the root such as ``/sys/devices/.../0000:d8:00.0/sriov_numvfs``; ``*``
        matches ``/`` too) fails with ``errno`` (a number or a name such as "EBUSY"), ``times`` times in a row
        (0: every matching write from then on). Returns the fault as stored."""
        return Faults(self.state_dir).fail_write(errno, nth=nth, path=path, times=times)

    def fail_tool(self, tool, rc=1, stderr=None, stdout="", hang=None, nth=1, times=1, args=None):
        """The ``nth`` run from now of the tool fake ``tool`` (fpgaconf, xbmgmt, sriov-manage, mdevctl,
        nvidia-smi; only runs whose arguments match the glob ``args``) sleeps ``hang`` seconds ("forever":
        until killed), then prints ``stdout``/``stderr`` and exits with ``rc`` (None: runs the real fake
        after the hang), ``times`` times (0: every run)."""
        return Faults(self.state_dir).fail_tool(tool, rc=rc, stderr=stderr, stdout=stdout, hang=hang, nth=nth,
                                                times=times, args=args)

    def clear_faults(self):
        Faults(self.state_dir).clear()

    def faults(self):
        """The control file: {"writes": [...], "tools": [...]} with each fault's ``seen``/``fired`` counts."""
        return Faults(self.state_dir).list()

    def writes(self):
        """FUSE mounts: every write the daemon served, [{"path", "data", "errno"}] (0: it succeeded)."""
        return Faults(self.state_dir).writes()

    def tool_changes(self):
        """Every run of a tool fake (nvidia-smi, mdevctl, ...) that changed the host: [{"tool", "args", "rc"}]."""
        return Faults(self.state_dir).tool_changes()


class TreeHost(SimHost):
    """A plain directory tree: reads are plain files; changes go through the API or the tool fakes, which
    re-render the tree."""


def render_tree(lab, dest, state_dir=None):
    """Render ``lab`` (a name, path or loaded lab) as a host root under ``dest``; returns a TreeHost.

    The state store lives in ``dest/.accelsim`` unless ``state_dir`` is given (then ``dest/.accelsim``
    is a symlink to it)."""
    lab = load_lab(lab)
    dest = os.path.abspath(dest)
    os.makedirs(dest, exist_ok=True)
    state_dir = os.path.abspath(state_dir) if state_dir else os.path.join(dest, STATE_LINK)
    store = StateStore.create(lab, state_dir, "tree", dest)
    write_tree(Host(store.load()), dest, state_dir)
    return TreeHost(dest, store)
