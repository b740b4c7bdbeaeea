"""accelsim: a simulated Linux host for accelerator lifecycle tests.

Two ways to use one lab description (``labs/<name>.yaml``):

* ``render_tree(lab, dest)`` writes a plain directory tree (no root needed) for read-only tests;
* ``mount(lab, mountpoint)`` serves the same tree through FUSE, where writes react like the kernel.

See docs/simulator.md.
"""

import importlib

# Names are imported on first use (PEP 562): the tool fakes run as ``python -m accelsim tool ...`` for every
# command a module runs, and importing everything up front (YAML, the tree builder, ...) was most of their cost.
_LAZY = {
    "Faults": "faults", "make_gbs": "gbs", "make_xclbin": "gbs", "read_gbs": "gbs", "read_xclbin": "gbs",
    "mark_in_use": "inuse", "release": "inuse", "Host": "kernel", "LabError": "model", "lab_names": "model",
    "load_lab": "model", "SimHost": "render", "TreeHost": "render", "render_tree": "render", "StateStore": "store",
    "find_store": "store",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module("." + _LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


# pylint: disable=undefined-all-variable  # the names in __all__ come from __getattr__ above
__all__ = ["Faults", "Host", "LabError", "SimHost", "StateStore", "TreeHost", "attach", "find_store", "lab_names", "load_lab", "make_gbs",
           "make_xclbin", "mark_in_use", "mount", "read_gbs", "read_xclbin", "reboot", "release", "render_tree"]
# pylint: enable=undefined-all-variable


def mount(lab, mountpoint, state_dir=None, **kwargs):
    """Mount ``lab`` with FUSE at ``mountpoint`` (a whole host root: sys, proc, dev, run, usr); returns a
    FuseHost (a context manager; ``unmount()`` when done)."""
    from .fuse import mount as _mount
    return _mount(lab, mountpoint, state_dir=state_dir, **kwargs)


def attach(root):
    """A handle (SimHost) on an existing simulated host root, plain tree or FUSE mount, e.g. one that another
    process rendered or mounted: ``accelsim.attach(root).fail_write("EIO", path="*/sriov_numvfs")``."""
    from .render import SimHost  # pylint: disable=import-outside-toplevel
    from .store import find_store  # pylint: disable=import-outside-toplevel
    return SimHost(root, find_store(root=root))


def reboot(root_or_host, units=True):
    """Reboot a simulated host given its handle or its root path (see ``SimHost.reboot``)."""
    from .render import SimHost  # pylint: disable=import-outside-toplevel
    if isinstance(root_or_host, SimHost):
        return root_or_host.reboot(units=units)
    return attach(root_or_host).reboot(units=units)
