"""The state store: one host's state as JSON in a state directory, shared by the FUSE daemon, the tool
fakes and the Python API, with an flock around every read-modify-write.

Layout of a state directory::

    state.json            transient + persistent host state (see kernel.new_state)
    lock                  flock target
    etc/, var/            the host's disk (a FUSE mount shows them at etc/ and var/; for a plain tree they are
                          links to the tree's etc/ and var/): etc/hostname, etc/mdevctl.d/<parent>/<uuid>
                          (persistent mdevctl definitions, JSON as mdevctl writes them), generated units...
"""

import contextlib
import fcntl
import json
import os

from .kernel import Host, new_state

ENV_STATE = "ACCELSIM_STATE"
ENV_ROOT = "ACCELSIM_ROOT"
STATE_LINK = ".accelsim"
DISK_DIRS = ("etc", "var")   # the host's disk: kept across reboots; real directories in both modes


class StateStore(object):
    def __init__(self, state_dir):
        self.dir = os.path.abspath(state_dir)
        self.path = os.path.join(self.dir, "state.json")
        self.etc = os.path.join(self.dir, "etc")
        self.after_commit = None

    @classmethod
    def create(cls, lab, state_dir, mode, root):
        os.makedirs(state_dir, exist_ok=True)
        store = cls(state_dir)
        for name in DISK_DIRS:
            inside = os.path.join(store.dir, name)
            if mode == "tree":   # the plain tree's own etc/ and var/ are the disk
                real = os.path.join(os.path.abspath(root), name)
                os.makedirs(real, exist_ok=True)
                if os.path.abspath(real) != inside and not os.path.lexists(inside):
                    os.symlink(real, inside)
            else:
                os.makedirs(inside, exist_ok=True)
        with open(os.path.join(store.etc, "hostname"), "w", encoding="utf-8") as f:
            f.write(lab["hostname"] + "\n")
        state = new_state(lab)
        state["mode"] = mode
        state["root"] = os.path.abspath(root)
        with store._locked():
            store._save(state)
        store.seed_mdevctl(lab)
        return store

    @contextlib.contextmanager
    def _locked(self):
        with open(os.path.join(self.dir, "lock"), "a") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lk, fcntl.LOCK_UN)

    def _save(self, state):
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state, f, sort_keys=True)
        os.replace(tmp, self.path)

    def load(self):
        with open(self.path, encoding="utf-8") as f:
            return json.load(f)

    def stamp(self):
        """Changes whenever the state file is replaced."""
        st = os.stat(self.path)
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    @contextlib.contextmanager
    def transaction(self):
        """Yield a Host on the current state; the state is saved when the block ends without error
        (a kernel write that fails changes nothing)."""
        with self._locked():
            state = self.load()
            before = json.dumps(state, sort_keys=True)
            host = Host(state)
            yield host
            if json.dumps(state, sort_keys=True) != before:
                self._save(state)
                changed = True
            else:
                changed = False
        if changed and state.get("mode") == "tree":
            from .render import write_tree  # late import: render imports this module
            write_tree(Host(state), state["root"], self.dir)

    # -- persistent mdevctl definitions ------------------------------------------------------
    def mdevctl_dir(self):
        return os.path.join(self.etc, "mdevctl.d")

    def define_mdev(self, uuid, parent, mtype, auto):
        d = os.path.join(self.mdevctl_dir(), parent)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, uuid), "w", encoding="utf-8") as f:
            json.dump({"mdev_type": mtype, "start": "auto" if auto else "manual", "attrs": []}, f, indent=2)
            f.write("\n")

    def undefine_mdev(self, uuid, parent=None):
        found = False
        for p, u, _t, _a in self.mdevctl_definitions():
            if u == uuid and (parent is None or p == parent):
                os.unlink(os.path.join(self.mdevctl_dir(), p, u))
                found = True
        return found

    def mdevctl_definitions(self):
        """[(parent, uuid, type, auto)] sorted."""
        out = []
        base = self.mdevctl_dir()
        if not os.path.isdir(base):
            return out
        for parent in sorted(os.listdir(base)):
            for uuid in sorted(os.listdir(os.path.join(base, parent))):
                with open(os.path.join(base, parent, uuid), encoding="utf-8") as f:
                    cfg = json.load(f)
                out.append((parent, uuid, cfg.get("mdev_type"), cfg.get("start") == "auto"))
        return out

    def seed_mdevctl(self, lab):
        for m in lab.get("mdevctl", []):
            self.define_mdev(m["uuid"], m["parent"], m["type"], m.get("auto", False))

    def reboot(self):
        with self.transaction() as host:
            host.reboot([(u, p, t, a) for p, u, t, a in self.mdevctl_definitions()])


def find_store(root=None, state_dir=None):
    """The state store for a simulated host: an explicit state dir, ``$ACCELSIM_STATE``, or the
    ``.accelsim`` entry at the top of a simulated host root (``root`` or ``$ACCELSIM_ROOT``)."""
    state_dir = state_dir or os.environ.get(ENV_STATE)
    if not state_dir:
        root = root or os.environ.get(ENV_ROOT)
        if not root:
            raise RuntimeError("no simulated host: pass --root/--state or set %s or %s" % (ENV_ROOT, ENV_STATE))
        state_dir = os.path.realpath(os.path.join(root, STATE_LINK))
    if not os.path.exists(os.path.join(state_dir, "state.json")):
        raise RuntimeError("%s is not an accelsim state directory" % state_dir)
    return StateStore(state_dir)
