"""iproute2's ip, the link subset that SR-IOV NICs need:

* ``ip [-d] [-j] [-p] link show [dev] IFNAME`` (or every interface): text or JSON (``-j``) as iproute2 prints
  it, with the PF's ``vfinfo_list`` (one entry per VF: ``vf``, ``address``, ``vlan_list`` when a VLAN is
  set, ``spoofchk``, ``link_state``, ``trust``);
* ``ip link set [dev] IFNAME vf N [mac MAC] [vlan VID [qos Q]] [trust on|off] [spoofchk on|off]``: the PF
  driver's ndo_set_vf_* on the simulated kernel (``Host.set_vf``); a VF that does not exist or a multicast
  MAC is refused with ``RTNETLINK answers: Invalid argument`` (exit 2), a function that cannot configure VFs
  with ``Operation not supported`` (settings before the refused one in the same command stay, as in the
  kernel's do_setvfinfo); the VF's own netdev takes the MAC.
Unknown interfaces: ``Cannot find device "X"`` (exit 1); bad arguments: iproute2's ``Error: argument "V" is
wrong: ...`` (exit 255).
"""

import json
import os
import sys

from ..kernel import Host

USAGE = ("Usage: ip [ OPTIONS ] link { show [ dev ] IFNAME | set [ dev ] IFNAME vf NUM [ mac LLADDR ]\n"
         "                                 [ vlan VLANID [ qos VLAN-QOS ] ] [ trust { on | off } ] [ spoofchk { on | off } ] }\n")


def _fail(msg, rc):
    sys.stderr.write(msg if msg.endswith("\n") else msg + "\n")
    return rc


def _invarg(what, value):
    return _fail('Error: argument "%s" is wrong: %s' % (value, what), 255)


def main(store, args):
    opts = {"details": False, "json": False, "pretty": False}
    while args and args[0].startswith("-"):
        a = args.pop(0)
        if a in ("-d", "-details", "--details"):
            opts["details"] = True
        elif a in ("-j", "-json", "--json"):
            opts["json"] = True
        elif a in ("-p", "-pretty", "--pretty"):
            opts["pretty"] = True
        elif a in ("-s", "-stats", "-statistics"):
            continue
        else:
            return _fail('Option "%s" is unknown, try "ip -help".' % a, 255)
    if not args or args[0] not in ("link", "l", "li", "lin"):
        return _fail(USAGE, 255)
    args = args[1:]
    cmd = args.pop(0) if args else "show"
    if cmd in ("show", "list", "lst", "sh", "ls"):
        return _show(store, args, opts)
    if cmd in ("set", "s", "se"):
        return _set(store, args)
    return _fail('Command "%s" is unknown, try "ip link help".' % cmd, 255)


def _ifname(args):
    if args and args[0] == "dev":
        args.pop(0)
    return args.pop(0) if args else None


def _show(store, args, opts):
    name = _ifname(args)
    host = Host(store.load())
    devs = host.netdevs()
    if name is not None and name not in devs:
        return _fail('Device "%s" does not exist.' % name, 1)
    links = []
    for i, (ifname, (bdf, mac)) in enumerate(sorted(devs.items(), key=lambda x: (x[1][0], x[0]))):
        if name is None or ifname == name:
            links.append(_link(host, i + 2, ifname, bdf, mac, opts["details"]))
    if opts["json"]:
        sys.stdout.write(json.dumps(links, indent=4 if opts["pretty"] else None, separators=None if opts["pretty"] else (",", ":")) + "\n")
        return 0
    for link in links:
        sys.stdout.write(_text(link))
    return 0


def _link(host, ifindex, ifname, bdf, mac, details):
    link = {"ifindex": ifindex, "ifname": ifname, "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
            "qdisc": "mq", "operstate": "UP", "linkmode": "DEFAULT", "group": "default", "txqlen": 1000,
            "link_type": "ether", "address": mac, "broadcast": "ff:ff:ff:ff:ff:ff"}
    if details:
        link.update(promiscuity=0, min_mtu=68, max_mtu=9702, num_tx_queues=64, num_rx_queues=64, parentbus="pci",
                    parentdev=bdf)
    st = host.static(bdf)
    if st.get("sriov") and not st.get("is_vf"):
        link["num_vf"] = host.dyn(bdf)["numvfs"]
        vfs = []
        for i in range(host.dyn(bdf)["numvfs"]):
            info = host.vf_info(bdf, i)
            vf = {"vf": i, "link_type": "ether", "address": info["mac"], "broadcast": "ff:ff:ff:ff:ff:ff"}
            if info["vlan"]:
                v = {"vlan": info["vlan"]}
                if info["qos"]:
                    v["qos"] = info["qos"]
                vf["vlan_list"] = [v]
            vf.update({"rate": {"max_tx": 0, "min_tx": 0}, "spoofchk": info["spoofchk"], "link_state": "auto",
                       "trust": info["trust"], "query_rss_en": False})
            vfs.append(vf)
        if vfs:
            link["vfinfo_list"] = vfs
    return link


def _text(link):
    out = "%d: %s: <%s> mtu %d qdisc %s state %s mode %s group %s qlen %d\n" % (
        link["ifindex"], link["ifname"], ",".join(link["flags"]), link["mtu"], link["qdisc"], link["operstate"],
        link["linkmode"], link["group"], link["txqlen"])
    out += "    link/ether %s brd %s\n" % (link["address"], link["broadcast"])
    for vf in link.get("vfinfo_list", []):
        extra = ""
        if vf.get("vlan_list"):
            extra = ", vlan %d" % vf["vlan_list"][0]["vlan"]
            if vf["vlan_list"][0].get("qos"):
                extra += ", qos %d" % vf["vlan_list"][0]["qos"]
        out += "    vf %d     link/ether %s brd %s%s, spoof checking %s, link-state auto, trust %s\n" % (
            vf["vf"], vf["address"], vf["broadcast"], extra, "on" if vf["spoofchk"] else "off", "on" if vf["trust"] else "off")
    return out


def _onoff(value, what):
    if value == "on":
        return True
    if value == "off":
        return False
    raise ValueError('Invalid "%s" value' % what)


def _set(store, args):
    name = _ifname(args)
    if name is None:
        return _fail('Not enough information: "dev" argument is required.', 255)
    changes = []
    while args:
        word = args.pop(0)
        if word != "vf":
            return _fail('Error: either "dev" is duplicate, or "%s" is a garbage.' % word, 255)
        if not args:
            return _fail('Error: argument "vf" is wrong: Invalid "vf" value', 255)
        num = args.pop(0)
        if not num.isdigit():
            return _invarg('Invalid "vf" value', num)
        index = int(num)
        while args and args[0] != "vf":
            key = args.pop(0)
            if not args:
                return _fail('Command line is not complete. Try option "help"', 255)
            value = args.pop(0)
            try:
                if key == "mac":
                    parts = value.split(":")
                    if len(parts) != 6 or not all(len(x) in (1, 2) and all(c in "0123456789abcdefABCDEF" for c in x) for x in parts):
                        raise ValueError('Invalid "mac" value')
                    changes.append((index, "mac", ":".join(x.zfill(2) for x in parts).lower()))
                elif key == "vlan":
                    if not value.isdigit() or int(value) > 4095:
                        raise ValueError('Invalid "vlan" value')
                    changes.append((index, "vlan", int(value)))
                elif key == "qos":
                    if not value.isdigit():
                        raise ValueError('Invalid "qos" value')
                    changes.append((index, "qos", int(value)))
                elif key in ("trust", "spoofchk"):
                    changes.append((index, key, _onoff(value, key)))
                else:
                    return _fail('Error: either "dev" is duplicate, or "%s" is a garbage.' % key, 255)
            except ValueError as e:
                return _invarg(str(e), value)
    if not changes:
        return 0
    refused = None
    with store.transaction() as host:
        devs = host.netdevs()
        if name not in devs:
            return _fail('Cannot find device "%s"' % name, 1)
        bdf = devs[name][0]
        for index, key, value in changes:
            try:
                host.set_vf(bdf, index, key, value)
            except OSError as e:
                # as the kernel's do_setvfinfo: the settings before the refused one stay applied
                refused = e
                break
    if refused is not None:
        return _fail("RTNETLINK answers: %s" % os.strerror(refused.errno), 2)
    return 0
