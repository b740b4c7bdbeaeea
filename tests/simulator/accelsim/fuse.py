"""Serve a simulated host through FUSE, so that writes react like the kernel's.

The mount shows a whole host root (sys, proc, dev, run, usr and a ``.accelsim`` link to the state
directory). The daemon runs in a child process (``python -m accelsim serve``); every operation first
reloads the state store if another process (a tool fake, the Python API) changed it, so all of them act
on one state. A write to a writable attribute runs the kernel model inside ``write()`` and returns its
errno. Opening a file under dev/vfio (or an FPGA port node) through the mount is recorded as the calling
process holding it, visible at proc/<pid>/fd/<n>. ``etc/`` and ``var/`` are the host's disk: real files in
the state directory's ``etc/`` and ``var/`` that anything can create, change and remove (mdevctl
definitions, generated systemd units), kept across reboots. After a change only the affected devices' parts of the
tree are rebuilt (``tree.update``), so a write costs about the same on a host with thousands of functions.
"""

import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

from .faults import Faults
from .kernel import Host, add_open_fd, remove_open_fd
from .model import load_lab
from .render import SimHost
from .store import DISK_DIRS, STATE_LINK, StateStore
from .tree import PACKAGE_PARENT, build, dispatch_write, update


class MountError(RuntimeError):
    """The FUSE mount could not be set up."""


def fuse_unavailable_reason():
    """None when FUSE mounts can work here, else why not."""
    if os.geteuid() != 0:
        return "FUSE mounts of the simulator need root"
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse does not exist"
    if not shutil.which("fusermount3") and not shutil.which("fusermount"):
        return "fusermount3 is not installed"
    try:
        import mfusepy  # pylint: disable=unused-import,import-outside-toplevel  # noqa: F401
    except (ImportError, OSError) as e:
        return "mfusepy/libfuse cannot be loaded: %s" % e
    return None


# the file type of a tree node, for a directory entry's d_type
_KIND_MODE = {"d": stat.S_IFDIR, "l": stat.S_IFLNK, "f": stat.S_IFREG}


def _entry_mode(entry):
    """The file type of a disk directory's entry (a FIFO planted there is a FIFO), 0 (unknown) when it went away
    meanwhile."""
    try:
        return stat.S_IFMT(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return 0


def _operations_class():
    import mfusepy  # pylint: disable=import-outside-toplevel

    class SimFS(mfusepy.Operations):
        use_ns = True

        def __init__(self, state_dir):
            self.store = StateStore(state_dir)
            self.faults = Faults(state_dir)
            self.state_dir = os.path.abspath(state_dir)
            self.mutex = threading.RLock()  # not "lock": that name is the FUSE operation for POSIX locks
            self.stamp = None
            self.tree = None
            self.host = None
            self.disk_fds = {}
            self.fh = 0
            self.opens = {}
            self.t0 = int(time.time() * 1e9)

        def _refresh(self):
            stamp = self.store.stamp()
            if stamp != self.stamp:
                host = Host(self.store.load())
                # only the parts of the tree that the change touched are rebuilt (tree.update)
                self.tree = build(host) if self.tree is None else update(self.tree, self.host, host)
                self.host = host
                self.stamp = stamp
            return self.tree

        def _node(self, path):
            with self.mutex:
                node = self._refresh().get(path)
            if node is None:
                raise mfusepy.FuseOSError(errno.ENOENT)
            return node

        # -- etc/ and var/: real files in the state directory (the host's disk; kept across reboots) ------
        def _real(self, path):
            top = path[1:].split("/", 1)[0]
            return os.path.join(self.state_dir, path[1:]) if top in DISK_DIRS else None

        def _disk_attr(self, real):
            st = os.lstat(real)
            return dict(st_mode=st.st_mode, st_nlink=st.st_nlink, st_size=st.st_size, st_uid=st.st_uid, st_gid=st.st_gid,
                        st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)

        def _both_disk(self, old, new):
            a, b = self._real(old), self._real(new)
            if a is None or b is None:
                raise mfusepy.FuseOSError(errno.EXDEV if a or b else errno.EPERM)
            return a, b

        def getattr(self, path, fh=None):
            times = dict(st_atime=self.t0, st_mtime=self.t0, st_ctime=self.t0, st_uid=0, st_gid=0)
            real = self._real(path)
            if real:
                return self._disk_attr(real)
            if path == "/" + STATE_LINK:
                return dict(times, st_mode=stat.S_IFLNK | 0o777, st_nlink=1, st_size=len(self.state_dir))
            node = self._node(path)
            if node.kind == "d":
                return dict(times, st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
            if node.kind == "l":
                return dict(times, st_mode=stat.S_IFLNK | 0o777, st_nlink=1, st_size=len(node.data))
            return dict(times, st_mode=stat.S_IFREG | node.mode, st_nlink=1, st_size=len(node.data))

        def readdir(self, path, fh):
            # Each entry with its type, as sysfs and a disk filesystem give it (d_type): a reader that walks a
            # directory (os.scandir, os.walk) needs no lstat() of each entry to tell a link from a directory.
            real = self._real(path)
            if real:
                with os.scandir(real) as it:
                    disk = [(e.name, {"st_mode": _entry_mode(e)}, 0) for e in it]
                return [".", ".."] + sorted(disk)
            node = self._node(path)
            if node.kind != "d":
                raise mfusepy.FuseOSError(errno.ENOTDIR)
            base = path.rstrip("/") + "/"
            with self.mutex:
                get = self.tree.get
                typed = [(name, {"st_mode": _KIND_MODE.get(getattr(get(base + name), "kind", None), 0)}, 0)
                         for name in self.tree.listdir(path)]
            if path == "/":
                typed = sorted(typed + [(d, {"st_mode": stat.S_IFDIR}, 0) for d in DISK_DIRS]) + \
                    [(STATE_LINK, {"st_mode": stat.S_IFLNK}, 0)]
            return [".", ".."] + typed

        def readlink(self, path):
            real = self._real(path)
            if real:
                return os.readlink(real)
            if path == "/" + STATE_LINK:
                return self.state_dir
            node = self._node(path)
            if node.kind != "l":
                raise mfusepy.FuseOSError(errno.EINVAL)
            return node.data

        def _new_fh(self, disk_fd=None):
            with self.mutex:
                self.fh += 1
                if disk_fd is not None:
                    self.disk_fds[self.fh] = disk_fd
                return self.fh

        def open(self, path, flags):
            real = self._real(path)
            if real:
                return self._new_fh(os.open(real, flags & ~os.O_CREAT))
            node = self._node(path)
            if node.kind != "f":
                raise mfusepy.FuseOSError(errno.EISDIR)
            acc = flags & os.O_ACCMODE
            if acc in (os.O_WRONLY, os.O_RDWR) and node.handler is None:
                raise mfusepy.FuseOSError(errno.EACCES)
            if acc in (os.O_RDONLY, os.O_RDWR) and not node.mode & 0o444:
                raise mfusepy.FuseOSError(errno.EACCES)
            with self.mutex:
                self.fh += 1
                fh = self.fh
                if path.startswith(("/dev/vfio/", "/dev/intel-fpga-port.", "/dev/dfl-port.")) and path != "/dev/vfio/vfio":
                    pid = mfusepy.fuse_get_context()[2]
                    with self.store.transaction() as host:
                        fd = add_open_fd(host.state, pid, _comm(pid), path)
                    self.opens[fh] = (pid, fd)
            return fh

        def read(self, path, size, offset, fh):
            if fh in self.disk_fds:
                return os.pread(self.disk_fds[fh], size, offset)
            node = self._node(path)
            return node.data[offset:offset + size]

        def write(self, path, data, offset, fh):
            data = bytes(data)
            if fh in self.disk_fds:
                with self.mutex:
                    code = self.faults.check_write(path)
                    self.faults.log_write(path, data, code)
                if code:
                    raise mfusepy.FuseOSError(code)
                return os.pwrite(self.disk_fds[fh], data, offset)
            node = self._node(path)
            if node.handler is None:
                raise mfusepy.FuseOSError(errno.EACCES)
            with self.mutex:
                code = self.faults.check_write(path)
                if code is None:
                    try:
                        with self.store.transaction() as host:
                            dispatch_write(host, node.handler, data)
                    except OSError as e:
                        code = e.errno or errno.EIO
                self.faults.log_write(path, data, code)
            if code:
                raise mfusepy.FuseOSError(code)
            return len(data)

        def truncate(self, path, length, fh=None):
            real = self._real(path)
            if real:
                if fh in self.disk_fds:
                    os.ftruncate(self.disk_fds[fh], length)
                else:
                    os.truncate(real, length)
                return 0
            self._node(path)
            return 0

        def release(self, path, fh):
            with self.mutex:
                disk_fd = self.disk_fds.pop(fh, None)
                if disk_fd is not None:
                    os.close(disk_fd)
                    return 0
                held = self.opens.pop(fh, None)
                if held:
                    with self.store.transaction() as host:
                        remove_open_fd(host.state, held[0], held[1])
            return 0

        def flush(self, path, fh):
            return 0

        def fsync(self, path, datasync, fh):
            if fh in self.disk_fds:
                os.fsync(self.disk_fds[fh])
            return 0

        def create(self, path, mode, fi=None):
            real = self._real(path)
            if not real:
                raise mfusepy.FuseOSError(errno.EACCES)
            return self._new_fh(os.open(real, os.O_RDWR | os.O_CREAT | os.O_TRUNC, mode))

        def mkdir(self, path, mode):
            real = self._real(path)
            if not real:
                raise mfusepy.FuseOSError(errno.EPERM)
            os.mkdir(real, mode)

        def rmdir(self, path):
            real = self._real(path)
            if not real or path[1:] in DISK_DIRS:
                raise mfusepy.FuseOSError(errno.EPERM)
            os.rmdir(real)

        def unlink(self, path):
            real = self._real(path)
            if not real:
                raise mfusepy.FuseOSError(errno.EPERM)
            os.unlink(real)

        def rename(self, old, new):
            a, b = self._both_disk(old, new)
            os.rename(a, b)

        def symlink(self, target, source):
            real = self._real(target)
            if not real:
                raise mfusepy.FuseOSError(errno.EPERM)
            os.symlink(source, real)

        def link(self, target, source):
            a, b = self._both_disk(source, target)
            os.link(a, b)

        def chmod(self, path, mode):
            real = self._real(path)
            if not real:
                raise mfusepy.FuseOSError(errno.EPERM)
            os.chmod(real, mode)

        def chown(self, path, uid, gid):
            real = self._real(path)
            if not real:
                raise mfusepy.FuseOSError(errno.EPERM)
            os.lchown(real, uid, gid)

        def utimens(self, path, times=None):
            real = self._real(path)
            if real and times:
                os.utime(real, ns=times, follow_symlinks=False)
            elif real:
                os.utime(real, follow_symlinks=False)
            return 0

        def statfs(self, path):
            return dict(f_bsize=4096, f_frsize=4096, f_namemax=255)

    return SimFS


def _comm(pid):
    try:
        with open("/proc/%d/comm" % pid, encoding="utf-8") as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown"


def serve(state_dir, mountpoint, foreground=True):
    """Run the FUSE loop (blocks until unmounted)."""
    import mfusepy  # pylint: disable=import-outside-toplevel
    ops = _operations_class()(state_dir)
    mfusepy.FUSE(ops, mountpoint, foreground=foreground, nothreads=True, fsname="accelsim", subtype="accelsim",
                 direct_io=True, attr_timeout=0, entry_timeout=0, negative_timeout=0)


class FuseHost(SimHost):
    """A mounted simulated host. Use as a context manager or call ``unmount()``."""

    def __init__(self, root, store, proc, own_state_dir):
        super(FuseHost, self).__init__(root, store)
        self.proc = proc
        self._own_state_dir = own_state_dir

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unmount()

    def hold(self, unit):
        """Start a real child process that opens the unit's /dev/vfio/<group> through the mount and keeps
        it open until ``unhold``; returns the Popen. The FUSE daemon records it under proc/<pid>/fd."""
        if unit.startswith("/dev/"):
            target = unit
        else:
            target = "/dev/vfio/%d" % Host(self.store.load()).group_of(unit)
        path = self.path(target)
        child = subprocess.Popen([sys.executable, "-c", "import sys\nf = open(sys.argv[1], 'rb')\nprint('open', flush=True)\nsys.stdin.read()\n", path],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = child.stdout.readline()
        if line.strip() != b"open":
            child.kill()
            child.wait()
            raise RuntimeError("the holder process could not open %s" % path)
        return child

    @staticmethod
    def unhold(child):
        child.stdin.close()
        child.wait(timeout=10)
        child.stdout.close()

    def unmount(self):
        if self.proc is None:
            return
        tool = shutil.which("fusermount3") or shutil.which("fusermount")
        subprocess.run([tool, "-u", self.root], check=False, stderr=subprocess.DEVNULL)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            subprocess.run([tool, "-uz", self.root], check=False, stderr=subprocess.DEVNULL)
        self.proc = None
        if self._own_state_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)


def mount(lab, mountpoint, state_dir=None, timeout=15):
    """Mount ``lab`` at ``mountpoint``; returns a FuseHost. Raises MountError with the reason when FUSE
    is unavailable or the daemon fails to start."""
    why = fuse_unavailable_reason()
    if why:
        raise MountError(why)
    mountpoint = os.path.abspath(mountpoint)
    if not os.path.isdir(mountpoint):
        raise MountError("mount point %s is not a directory" % mountpoint)
    if os.path.ismount(mountpoint):
        raise MountError("%s is already a mount point" % mountpoint)
    lab = load_lab(lab)
    own = state_dir is None
    state_dir = tempfile.mkdtemp(prefix="accelsim-state-") if own else os.path.abspath(state_dir)
    store = StateStore.create(lab, state_dir, "mount", mountpoint)
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    log = open(os.path.join(state_dir, "fuse.log"), "w+b")  # pylint: disable=consider-using-with
    proc = subprocess.Popen([sys.executable, "-m", "accelsim", "serve", state_dir, mountpoint],  # pylint: disable=consider-using-with
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while not os.path.ismount(mountpoint):
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.seek(0)
            out = log.read().decode("utf-8", "replace").strip()
            log.close()
            if own:
                shutil.rmtree(state_dir, ignore_errors=True)
            raise MountError("the FUSE daemon failed to mount %s (exit %s): %s" % (mountpoint, proc.returncode, out or "no output"))
        time.sleep(0.02)
    log.close()
    return FuseHost(mountpoint, store, proc, own)
