"""Command line: ``python -m accelsim tree|mount|umount|serve|generate|tool|labs ...``."""

import os
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "tool":
        return _tool(argv[1:])
    # not on the tool fakes' path, which is a process per tool run
    import argparse  # pylint: disable=import-outside-toplevel
    p = argparse.ArgumentParser(prog="python -m accelsim", description="Simulated accelerator hosts for tests")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("tree", help="render a lab as a plain directory tree (host root)")
    s.add_argument("lab")
    s.add_argument("dest")
    s = sub.add_parser("mount", help="mount a lab with FUSE (writes react like the kernel)")
    s.add_argument("lab")
    s.add_argument("mountpoint")
    s.add_argument("--state", help="state directory (default: a new temporary directory)")
    s.add_argument("--foreground", action="store_true", help="serve in this process until unmounted")
    s = sub.add_parser("umount", help="unmount a simulated host")
    s.add_argument("mountpoint")
    s = sub.add_parser("serve", help=argparse.SUPPRESS)
    s.add_argument("state")
    s.add_argument("mountpoint")
    s = sub.add_parser("reboot", help="reboot a simulated host (tree or mount; a mount runs its enabled units)")
    s.add_argument("root")
    s.add_argument("--no-units", action="store_true", help="do not run the enabled systemd units (FUSE mounts)")
    s = sub.add_parser("generate", help="render a large synthetic host for benchmarks")
    s.add_argument("--pfs", type=int, default=16, help="SR-IOV NIC PFs (default 16)")
    s.add_argument("--vfs", type=int, default=128, help="VFs enabled per NIC PF (default 128)")
    s.add_argument("--gpus", type=int, default=8, help="SR-IOV vGPU GPUs, 32 VFs each (default 8)")
    s.add_argument("--fpgas", type=int, default=8, help="DFL FPGAs, 1 VF each (default 8)")
    s.add_argument("--qats", type=int, default=8, help="QAT endpoints, 16 VFs each (default 8)")
    s.add_argument("dest")
    s = sub.add_parser("replay", help="build a host root from a capture (tools/capture-host.py) that answers from it")
    s.add_argument("capture")
    s.add_argument("dest")
    s = sub.add_parser("capture", help="capture a lab with tools/capture-host.py (a fixture for tests/captures)")
    s.add_argument("lab")
    s.add_argument("dest")
    sub.add_parser("labs", help="list the shipped labs")
    s = sub.add_parser("fault", help="inject a fault (FUSE writes, tool fakes); list or clear them")
    s.add_argument("root", help="the simulated host root (tree or mount point)")
    fsub = s.add_subparsers(dest="what", required=True)
    w = fsub.add_parser("write", help="make the n-th matching write() through the FUSE mount fail")
    w.add_argument("--errno", required=True, help="errno name or number, e.g. EBUSY")
    w.add_argument("--nth", type=int, default=1, help="fail the n-th matching write from now (default 1)")
    w.add_argument("--path", help="glob on the resolved path under the root, e.g. '*/0000:d8:00.0/sriov_numvfs'")
    w.add_argument("--times", type=int, default=1, help="how many matching writes fail from the n-th on (0: all)")
    t = fsub.add_parser("tool", help="make the n-th run of a tool fake fail or hang")
    t.add_argument("tool", help="fpgaconf, xbmgmt, sriov-manage, mdevctl or nvidia-smi")
    t.add_argument("--rc", type=int, default=1, help="exit status (default 1)")
    t.add_argument("--run", action="store_true", help="run the real fake after --hang instead of exiting with --rc")
    t.add_argument("--stderr", help="what it prints on stderr")
    t.add_argument("--stdout", default="", help="what it prints on stdout")
    t.add_argument("--hang", help="seconds to sleep first, or 'forever' (until killed)")
    t.add_argument("--args", help="only runs whose arguments (joined by spaces) match this glob")
    t.add_argument("--nth", type=int, default=1)
    t.add_argument("--times", type=int, default=1, help="0: every run from the n-th on")
    fsub.add_parser("list", help="print the control file (faults.json) with seen/fired counts")
    fsub.add_parser("clear", help="remove every fault")
    s = sub.add_parser("writes", help="the writes the FUSE daemon served (JSON lines: path, data, errno)")
    s.add_argument("root")
    s.add_argument("--count", action="store_true", help="print only how many")
    a = p.parse_args(argv)
    if a.cmd == "labs":
        from .model import lab_names, load_lab
        for name in lab_names():
            print("%-18s %s" % (name, load_lab(name)["description"]))
        return 0
    if a.cmd == "tree":
        from .render import render_tree
        h = render_tree(a.lab, a.dest)
        print("rendered %s at %s (state %s)" % (a.lab, h.root, h.state_dir))
        return 0
    if a.cmd == "capture":
        import tempfile
        from .replay import capture_lab
        with tempfile.TemporaryDirectory() as work:
            return capture_lab(a.lab, a.dest, work)
    if a.cmd == "replay":
        from .replay import build
        print("replayed %s at %s" % (a.capture, build(a.capture, a.dest)))
        return 0
    if a.cmd == "generate":
        from .generate import generate
        n = generate(os.path.abspath(a.dest), a.pfs, a.vfs, a.gpus, a.fpgas, a.qats)
        print("rendered a synthetic host with %d PCI functions at %s" % (n, os.path.abspath(a.dest)))
        return 0
    if a.cmd == "serve":
        from .fuse import serve
        serve(a.state, a.mountpoint)
        return 0
    if a.cmd == "mount":
        return _mount(a)
    if a.cmd == "umount":
        import shutil
        import subprocess
        return subprocess.call([shutil.which("fusermount3") or "fusermount", "-u", a.mountpoint])
    if a.cmd in ("fault", "writes"):
        return _fault(a)
    if a.cmd == "reboot":
        from . import reboot
        failed = 0
        for r in reboot(a.root, units=not a.no_units):
            print("%s: exit %d after %d run(s)%s" % (r["unit"], r["rc"], r["tries"], (": " + r["output"].strip()) if r["rc"] else ""))
            failed += bool(r["rc"])
        return 1 if failed else 0
    return 2


def _mount(a):
    from .fuse import MountError, fuse_unavailable_reason, mount, serve
    from .model import load_lab
    from .store import StateStore
    if a.foreground:
        why = fuse_unavailable_reason()
        if why:
            sys.stderr.write("accelsim: cannot mount: %s\n" % why)
            return 1
        import tempfile
        state = a.state or tempfile.mkdtemp(prefix="accelsim-state-")
        StateStore.create(load_lab(a.lab), state, "mount", a.mountpoint)
        print("serving %s at %s (state %s); unmount with fusermount3 -u %s" % (a.lab, a.mountpoint, state, a.mountpoint), flush=True)
        serve(state, a.mountpoint)
        return 0
    try:
        h = mount(a.lab, a.mountpoint, state_dir=a.state or None)
    except MountError as e:
        sys.stderr.write("accelsim: cannot mount: %s\n" % e)
        return 1
    h.proc = None  # leave the daemon running after this command exits
    print("mounted %s at %s (state %s, daemon pid %s); unmount with: python -m accelsim umount %s"
          % (a.lab, h.root, h.state_dir, "detached", h.root))
    return 0


def _fault(a):
    import json
    from .faults import Faults
    from .store import find_store
    try:
        faults = Faults(find_store(root=a.root).dir)
    except RuntimeError as e:
        sys.stderr.write("accelsim: %s\n" % e)
        return 1
    try:
        if a.cmd == "writes":
            log = faults.writes()
            print(len(log) if a.count else "\n".join(json.dumps(w, sort_keys=True) for w in log))
        elif a.what == "write":
            print(json.dumps(faults.fail_write(a.errno, nth=a.nth, path=a.path, times=a.times), sort_keys=True))
        elif a.what == "tool":
            hang = a.hang if a.hang in (None, "forever") else float(a.hang)
            print(json.dumps(faults.fail_tool(a.tool, rc=None if a.run else a.rc, stderr=a.stderr, stdout=a.stdout, hang=hang,
                                              nth=a.nth, times=a.times, args=a.args), sort_keys=True))
        elif a.what == "list":
            print(json.dumps(faults.list(), indent=1, sort_keys=True))
        else:
            faults.clear()
    except ValueError as e:
        sys.stderr.write("accelsim fault: %s\n" % e)
        return 2
    return 0


def _tool(argv):
    root = state = None
    while argv and argv[0] in ("--root", "--state"):
        if len(argv) < 2:
            sys.stderr.write("accelsim tool: %s needs a value\n" % argv[0])
            return 2
        if argv[0] == "--root":
            root = argv[1]
        else:
            state = argv[1]
        argv = argv[2:]
    if not argv:
        sys.stderr.write("usage: python -m accelsim tool [--root ROOT|--state DIR] NAME ARGS...\n")
        return 2
    from . import replay
    if root and replay.is_replay(root):
        # a replayed capture answers without the simulator's kernel model (each tool run is a process of its own)
        return replay.run_tool(root, argv[0], argv[1:])
    from .tools.main import main as tool_main
    return tool_main(argv[0], argv[1:], root=root, state_dir=state)
