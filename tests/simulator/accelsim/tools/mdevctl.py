"""mdevctl: ``list``, ``types``, ``start``, ``stop``, ``define``, ``undefine``, ``modify`` with the real
options (-u/--uuid, -p/--parent, -t/--type, -a/--auto, --manual, -d/--defined, --dumpjson). Persistent
definitions live in the state directory's etc/mdevctl.d/<parent>/<uuid>, as the real tool keeps them
in /etc/mdevctl.d; devices defined with start=auto are started at (simulated) boot."""

import json
import sys
import uuid as uuidlib

from ..kernel import Host
from ..model import UUID_RE
from .common import ToolParser, err


def _parser():
    p = ToolParser(prog="mdevctl")
    sub = p.add_subparsers(dest="cmd")
    for name in ("list", "types", "start", "stop", "define", "undefine", "modify"):
        s = sub.add_parser(name)
        s.add_argument("-u", "--uuid")
        s.add_argument("-p", "--parent")
        if name in ("start", "define", "modify"):
            s.add_argument("-t", "--type")
            s.add_argument("--jsonfile")
        if name in ("define", "modify"):
            s.add_argument("-a", "--auto", action="store_true")
        if name == "modify":
            s.add_argument("--manual", action="store_true")
        if name in ("list", "types"):
            s.add_argument("--dumpjson", action="store_true")
            s.add_argument("-v", "--verbose", action="store_true")
        if name == "list":
            s.add_argument("-d", "--defined", action="store_true")
    return p


def main(store, args):
    a = _parser().parse_args(args)
    if a.uuid and not UUID_RE.match(a.uuid.lower()):
        return err(None, "Error: invalid UUID %s" % a.uuid)
    if a.uuid:
        a.uuid = a.uuid.lower()
    if a.cmd == "types":
        return _types(store, a)
    if a.cmd == "list":
        return _list(store, a)
    if a.cmd == "start":
        return _start(store, a)
    if a.cmd == "stop":
        if not a.uuid:
            return err(None, "Error: --uuid is required")
        with store.transaction() as host:
            if a.uuid not in host.state["mdevs"]:
                return err(None, "Error: Device %s is not active" % a.uuid)
            try:
                host.mdev_remove(a.uuid, "1")
            except OSError as e:
                return err(None, "Error: Failed to stop device %s: %s" % (a.uuid, e.strerror))
        return 0
    if a.cmd == "define":
        return _define(store, a)
    if a.cmd == "undefine":
        if not a.uuid or not store.undefine_mdev(a.uuid, a.parent):
            return err(None, "Error: No defined device with uuid %s" % a.uuid)
        return 0
    if a.cmd == "modify":
        defs = {u: (p, t, au) for p, u, t, au in store.mdevctl_definitions()}
        if a.uuid not in defs:
            return err(None, "Error: No defined device with uuid %s" % a.uuid)
        parent, mtype, auto = defs[a.uuid]
        auto = True if a.auto else (False if a.manual else auto)
        store.define_mdev(a.uuid, parent, a.type or mtype, auto)
        return 0
    _parser().print_usage(sys.stderr)
    return 1


def _types(store, a):
    host = Host(store.load())
    parents = [b for b in host.bdfs() if host.mdev_parent(b) and (not a.parent or a.parent == b)]
    if a.dumpjson:
        out = []
        for b in parents:
            types = []
            for t in host.mdev_parent(b)["types"]:
                types.append({t["id"]: {"name": t["name"], "description": t["description"], "device_api": t["device_api"],
                                        "available_instances": host.available_instances(b, t["id"])}})
            out.append({b: types})
        print(json.dumps(out, indent=2))
        return 0
    for b in parents:
        print(b)
        for t in host.mdev_parent(b)["types"]:
            print("  %s" % t["id"])
            print("    Available instances: %d" % host.available_instances(b, t["id"]))
            print("    Device API: %s" % t["device_api"])
            print("    Name: %s" % t["name"])
            print("    Description: %s" % t["description"])
    return 0


def _list(store, a):
    host = Host(store.load())
    defs = {u: (p, t, au) for p, u, t, au in store.mdevctl_definitions()}
    rows = []
    if a.defined:
        for u, (p, t, au) in sorted(defs.items(), key=lambda x: (x[1][0], x[0])):
            if (a.uuid and u != a.uuid) or (a.parent and p != a.parent):
                continue
            active = u in host.state["mdevs"]
            rows.append((u, p, t, au, "(active)" if active else ""))
    else:
        for u, m in sorted(host.state["mdevs"].items(), key=lambda x: (x[1]["parent"], x[0])):
            if (a.uuid and u != a.uuid) or (a.parent and m["parent"] != a.parent):
                continue
            d = defs.get(u)
            rows.append((u, m["parent"], m["type"], d[2] if d else False, "(defined)" if d else ""))
    if a.dumpjson:
        out = {}
        for u, p, t, au, _flag in rows:
            out.setdefault(p, []).append({u: {"mdev_type": t, "start": "auto" if au else "manual", "attrs": []}})
        print(json.dumps([{p: v} for p, v in out.items()], indent=2) if out else "[]")
        return 0
    for u, p, t, au, flag in rows:
        print(" ".join(x for x in (u, p, t, "auto" if au else "manual", flag) if x))
    return 0


def _start(store, a):
    defs = {u: (p, t, au) for p, u, t, au in store.mdevctl_definitions()}
    if a.uuid and a.uuid in defs and not a.type:
        parent, mtype = defs[a.uuid][0], defs[a.uuid][1]
    elif a.parent and a.type:
        parent, mtype = a.parent, a.type
    else:
        return err(None, "Error: Device %s is not defined; --parent and --type are required" % (a.uuid or ""))
    new = a.uuid or str(uuidlib.uuid4())
    with store.transaction() as host:
        try:
            host.mdev_create(parent, mtype, new)
        except OSError as e:
            return err(None, "Error: Failed to start device %s: %s" % (new, e.strerror))
    if not a.uuid:
        print(new)
    return 0


def _define(store, a):
    host = Host(store.load())
    if a.uuid and not a.parent and a.uuid in host.state["mdevs"]:
        m = host.state["mdevs"][a.uuid]
        parent, mtype = m["parent"], a.type or m["type"]
    elif a.parent and a.type:
        parent, mtype = a.parent, a.type
    else:
        return err(None, "Error: --parent and --type are required to define a device that is not active")
    new = a.uuid or str(uuidlib.uuid4())
    if any(u == new for _p, u, _t, _a in store.mdevctl_definitions()):
        return err(None, "Error: Device %s is already defined" % new)
    store.define_mdev(new, parent, mtype, a.auto)
    if not a.uuid:
        print(new)
    return 0
