"""Write a lab host to disk as a plain directory tree (no root needed)."""

import os
import shutil

from .kernel import Host
from .model import load_lab
from .store import STATE_LINK, StateStore
from .tree import build

TOP_LEVEL = ("sys", "proc", "dev", "run", "usr")


def write_tree(host, dest, state_dir=None):
    """(Re)write everything the tree shows for ``host`` under ``dest``."""
    tree = build(host)
    os.makedirs(dest, exist_ok=True)
    for top in TOP_LEVEL:
        path = os.path.join(dest, top)
        if os.path.lexists(path):
            _make_writable(path)
            shutil.rmtree(path)
    for path in sorted(tree.nodes):
        if not path:
            continue
        node = tree.nodes[path]
        full = os.path.join(dest, path)
        if node.kind == "d":
            os.makedirs(full, exist_ok=True)
        elif node.kind == "l":
            os.symlink(node.data, full)
        else:
            with open(full, "wb") as f:
                f.write(node.data)
            os.chmod(full, node.mode)
    if state_dir and os.path.abspath(state_dir) != os.path.abspath(os.path.join(dest, STATE_LINK)):
        link = os.path.join(dest, STATE_LINK)
        if os.path.lexists(link) and os.path.islink(link):
            os.unlink(link)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(state_dir), link)
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

    def reboot(self):
        """Power-cycle: transient state (VFs, mdevs, vGPU types, overrides, PR-loaded AFUs, xclbins,
        running domains, processes) is lost; flash contents and etc/ (mdevctl definitions) are kept and
        auto-start mdevctl definitions are started."""
        self.store.reboot()

    def mark_in_use(self, unit, by="domain", name=None):
        from .inuse import mark_in_use
        return mark_in_use(self, unit, by=by, name=name)

    def release(self, name):
        from .inuse import release
        release(self, name)

    def tool(self, name, *args):
        from .tools import run_tool
        return run_tool(name, list(args), root=self.root)


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
