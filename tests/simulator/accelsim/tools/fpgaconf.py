"""fpgaconf (OPAE): ``fpgaconf [-hvVn] [--force] [-S <socket>] [--segment <seg>] [-B <bus>] [-D <device>]
[-F <function>] [PCI_ADDR] <gbs>``. Finds the FPGAs whose PR interface id matches the GBS and
partially reconfigures the port with the AFU the GBS names (the port's afu_id changes)."""

import sys

from ..gbs import read_gbs
from ..model import parse_bdf
from .common import ToolParser, err

VERSION = "fpgaconf 2.1.1 (simulated)"


def _int(text):
    return int(text, 0) if not text.startswith("0") or text.startswith("0x") else int(text, 16)


def main(store, args):
    p = ToolParser(prog="fpgaconf", add_help=True)
    p.add_argument("-v", "--version", action="store_true")
    p.add_argument("-V", "--verbose", action="count", default=0)
    p.add_argument("-n", "--dry-run", action="store_true")
    p.add_argument("--force", action="store_true")
    p.add_argument("-S", "--socket-id", "--socket", dest="socket", type=int)
    p.add_argument("--segment", type=lambda s: int(s, 16))
    p.add_argument("-B", "--bus", type=lambda s: int(s, 16))
    p.add_argument("-D", "--device", type=lambda s: int(s, 16))
    p.add_argument("-F", "--function", type=lambda s: int(s, 16))
    p.add_argument("rest", nargs="*")
    a = p.parse_args(args)
    if a.version:
        print(VERSION)
        return 0
    if not a.rest or len(a.rest) > 2:
        p.print_usage(sys.stderr)
        return 1
    gbs = a.rest[-1]
    seg = bus = dev = fn = None
    if len(a.rest) == 2:
        seg, bus, dev, fn = parse_bdf(a.rest[0].lower() if a.rest[0].count(":") == 2 else "0000:" + a.rest[0].lower())
    seg = a.segment if a.segment is not None else seg
    bus = a.bus if a.bus is not None else bus
    dev = a.device if a.device is not None else dev
    fn = a.function if a.function is not None else fn
    try:
        iface, afu, meta = read_gbs(gbs)
    except OSError as e:
        return err(None, "Error: could not open %s: %s" % (gbs, e.strerror))
    except ValueError as e:
        return err(None, "Error: %s: %s" % (gbs, e))
    with store.transaction() as host:
        slots = []
        for bdf in sorted(host.state["fpga"]):
            s, b, d, f = parse_bdf(bdf)
            if any(want is not None and want != have for want, have in ((seg, s), (bus, b), (dev, d), (fn, f))):
                continue
            if a.socket is not None and host.static(bdf)["fpga"]["socket_id"] != a.socket:
                continue
            if host.driver_of(bdf) != host.static(bdf)["driver"]:
                continue
            if host.state["fpga"][bdf]["interface_id"] != iface:
                if a.verbose:
                    print("Skipping %s: PR interface %s does not match %s" % (bdf, host.state["fpga"][bdf]["interface_id"], iface))
                continue
            slots.append(bdf)
        if not slots:
            return err(None, "No suitable slots found.")
        if len(slots) > 1:
            return err(None, "Found more than one suitable slot, please be more specific.")
        bdf = slots[0]
        if a.verbose:
            name = meta["afu-image"]["accelerator-clusters"][0].get("name", "")
            print("Programming %s to %s (AFU %s)" % (gbs, bdf, name))
        if a.dry_run:
            print("Skipped programming (dry run)")
            return 0
        if not a.force:
            why = host.fpga_busy(bdf)
            if why:
                return err(None, "Error: Failed to open accelerator on %s: resource busy (%s)" % (bdf, why))
        try:
            host.fpga_program(bdf, iface, afu)
        except OSError as e:
            return err(None, "Error: Failed to reconfigure slot on %s: %s" % (bdf, e.strerror))
    return 0
