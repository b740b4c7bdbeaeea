"""xbmgmt (XRT, next-generation syntax): ``examine [-d <bdf>]`` and ``program -d <bdf> (--user|-u) <xclbin>``
or ``program -d <bdf> --base [--image <shell>]`` (flashes the base shell; active after a cold reboot)."""

import uuid as uuidlib

from ..gbs import read_xclbin
from ..kernel import Host
from .common import ToolParser, err


def _cards(host):
    return sorted(host.state["alveo"])


def _match(host, device):
    if device is None:
        cards = _cards(host)
        return cards if len(cards) == 1 else None
    dev = device.lower()
    if dev.count(":") == 1:
        dev = "0000:" + dev
    for mgmt in _cards(host):
        if dev in (mgmt, host.alveo_user_of(mgmt)):
            return [mgmt]
    return []


def main(store, args):
    p = ToolParser(prog="xbmgmt")
    sub = p.add_subparsers(dest="cmd")
    ex = sub.add_parser("examine")
    ex.add_argument("-d", "--device")
    ex.add_argument("-r", "--report", action="append")
    pr = sub.add_parser("program")
    pr.add_argument("-d", "--device")
    pr.add_argument("-u", "--user")
    pr.add_argument("-b", "--base", action="store_true")
    pr.add_argument("-i", "--image")
    pr.add_argument("-y", "--force", action="store_true")
    a = p.parse_args(args)
    if a.cmd == "examine":
        host = Host(store.load())
        cards = _match(host, a.device) if a.device else _cards(host)
        if not cards:
            return err(None, "ERROR: No devices found matching %s" % a.device)
        print("System Configuration")
        print("  Hostname             : %s" % host.lab["hostname"])
        print()
        print("Devices present")
        print("BDF             :  Shell                            Logic UUID                            Device ID         Device Ready*")
        print("-" * 120)
        for mgmt in cards:
            cur = host.state["alveo"][mgmt]
            inst = int(mgmt.split(":")[1], 16) * 256
            print("[%s]  :  %-31s  %-36s  mgmt(inst=%d)  Yes" % (mgmt, cur["shell"], cur["logic_uuid"].upper(), inst))
        pending = host.state["persist"]["alveo_flash"]
        for mgmt in cards:
            if mgmt in pending and pending[mgmt]["shell"] != host.state["alveo"][mgmt]["shell"]:
                print("\nWARNING: %s: base shell %s is flashed; cold reboot to activate it" % (mgmt, pending[mgmt]["shell"]))
        print("\n* Devices that are not ready will have reduced functionality when using XRT tools")
        return 0
    if a.cmd == "program":
        with store.transaction() as host:
            cards = _match(host, a.device)
            if not cards:
                return err(None, "ERROR: Please specify a single device using --device option" if cards is None
                           else "ERROR: No devices found matching %s" % a.device)
            mgmt = cards[0]
            if a.user:
                try:
                    iface, xuuid, _hdr = read_xclbin(a.user)
                except OSError as e:
                    return err(None, "ERROR: Could not open %s: %s" % (a.user, e.strerror))
                except ValueError as e:
                    return err(None, "ERROR: %s: %s" % (a.user, e))
                try:
                    host.alveo_load_xclbin(mgmt, iface, xuuid)
                except OSError as e:
                    return err(None, "ERROR: Failed to program xclbin on %s: %s" % (mgmt, e.strerror))
                print("INFO: xbmgmt will program %s with %s" % (mgmt, a.user))
                print("xclbin %s loaded successfully." % xuuid)
                return 0
            if a.base:
                shell = a.image or host.static(mgmt)["alveo"]["shell"]
                if shell == host.static(mgmt)["alveo"]["shell"]:
                    iface, logic = host.static(mgmt)["alveo"]["interface_uuid"], host.static(mgmt)["alveo"]["logic_uuid"]
                else:
                    iface = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, "interface/" + shell))
                    logic = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, "logic/" + shell))
                host.alveo_flash_shell(mgmt, shell, iface, logic)
                print("[%s] : Updating base (e.g., shell) flash image..." % mgmt)
                print("1 Card(s) flashed successfully.")
                print("Cold reboot machine to load the new image on card(s).")
                return 0
            return err(None, "ERROR: Please specify --user <xclbin> or --base")
    p.print_usage()
    return 1
