"""Entry point of the tool fakes: parse the real tool's command line and act on the simulated host."""

import importlib
import json
import os
import sys

from ..faults import Faults, act_out
from ..store import find_store

# Each tool run is a process of its own: only the fake that runs is imported (the module of each tool name).
TOOLS = {
    "fpgaconf": "fpgaconf",
    "ip": "ip",
    "mdevctl": "mdevctl",
    "nvidia-smi": "nvidia_smi",
    "sriov-manage": "sriov_manage",
    "xbmgmt": "xbmgmt",
}


def tool_main(name):
    """The main(store, args) of the fake of tool ``name`` (a key of TOOLS)."""
    return importlib.import_module("." + TOOLS[name], __package__).main


def main(name, args, root=None, state_dir=None):
    """Run tool ``name`` with ``args`` against the host at ``root`` / ``state_dir`` (or $ACCELSIM_ROOT /
    $ACCELSIM_STATE); returns the exit status. A root built from a capture (accelsim/replay.py) answers every
    tool from it."""
    from .. import replay  # pylint: disable=import-outside-toplevel
    root = root or os.environ.get("ACCELSIM_ROOT")
    if root and replay.is_replay(root):
        return replay.run_tool(root, name, args)
    if name not in TOOLS:
        sys.stderr.write("accelsim: no fake of %r (have: %s)\n" % (name, ", ".join(sorted(TOOLS))))
        return 127
    try:
        store = find_store(root=root, state_dir=state_dir)
    except RuntimeError as e:
        sys.stderr.write("%s: %s\n" % (name, e))
        return 1
    fault = Faults(store.dir).check_tool(name, list(args))
    if fault is not None:
        rc = act_out(fault)
        if rc is not None:
            return rc
    before = _snapshot(store)
    try:
        rc = tool_main(name)(store, list(args))
    except SystemExit as e:  # argparse errors and --help
        rc = e.code if isinstance(e.code, int) else 2
    if _snapshot(store) != before:  # a mutating call: logged, so tests can count changes made through tools
        Faults(store.dir).log_tool_change(name, list(args), rc)
    return rc


def _snapshot(store):
    """What a tool can change: the kernel state and the mdevctl definitions."""
    return json.dumps([store.load(), store.mdevctl_definitions()], sort_keys=True, default=str)
