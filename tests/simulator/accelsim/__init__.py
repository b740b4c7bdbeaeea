"""accelsim: a simulated Linux host for accelerator lifecycle tests.

Two ways to use one lab description (``labs/<name>.yaml``):

* ``render_tree(lab, dest)`` writes a plain directory tree (no root needed) for read-only tests;
* ``mount(lab, mountpoint)`` serves the same tree through FUSE, where writes react like the kernel.

See docs/simulator.md.
"""

from .faults import Faults
from .gbs import make_gbs, make_xclbin, read_gbs, read_xclbin
from .inuse import mark_in_use, release
from .kernel import Host
from .model import LabError, lab_names, load_lab
from .render import SimHost, TreeHost, render_tree
from .store import StateStore, find_store

__all__ = ["Faults", "Host", "LabError", "SimHost", "StateStore", "TreeHost", "attach", "find_store", "lab_names", "load_lab", "make_gbs",
           "make_xclbin", "mark_in_use", "mount", "read_gbs", "read_xclbin", "reboot", "release", "render_tree"]


def mount(lab, mountpoint, state_dir=None, **kwargs):
    """Mount ``lab`` with FUSE at ``mountpoint`` (a whole host root: sys, proc, dev, run, usr); returns a
    FuseHost (a context manager; ``unmount()`` when done)."""
    from .fuse import mount as _mount
    return _mount(lab, mountpoint, state_dir=state_dir, **kwargs)


def attach(root):
    """A handle (SimHost) on an existing simulated host root, plain tree or FUSE mount, e.g. one that another
    process rendered or mounted: ``accelsim.attach(root).fail_write("EIO", path="*/sriov_numvfs")``."""
    return SimHost(root, find_store(root=root))


def reboot(root_or_host, units=True):
    """Reboot a simulated host given its handle or its root path (see ``SimHost.reboot``)."""
    if isinstance(root_or_host, SimHost):
        return root_or_host.reboot(units=units)
    return attach(root_or_host).reboot(units=units)
