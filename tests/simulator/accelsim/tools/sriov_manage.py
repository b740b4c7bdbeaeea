"""NVIDIA's /usr/lib/nvidia/sriov-manage: ``sriov-manage -e|-d <ssss:bb:dd.f>|ALL`` enables (all
sriov_totalvfs VFs) or disables the virtual functions of NVIDIA GPUs."""

import sys

from ..model import BDF_RE

USAGE = "Usage: sriov-manage <-e|-d> <ssss:bb:dd.f|ALL>\n"


def _gpus(host):
    return [b for b in host.bdfs() if host.static(b)["vendor"] == 0x10DE and host.static(b).get("sriov") and not host.static(b).get("is_vf")]


def main(store, args):
    if len(args) != 2 or args[0] not in ("-e", "-d") or not (args[1] == "ALL" or BDF_RE.match(args[1].lower())):
        sys.stderr.write(USAGE)
        return 1
    enable = args[0] == "-e"
    rc = 0
    with store.transaction() as host:
        targets = _gpus(host) if args[1] == "ALL" else [args[1].lower()]
        for bdf in targets:
            if not host.exists(bdf) or bdf not in _gpus(host):
                sys.stderr.write("%s is not an SR-IOV capable NVIDIA GPU\n" % bdf)
                rc = 1
                continue
            total = host.static(bdf)["sriov"]["totalvfs"]
            if enable:
                print("Enabling VFs on %s" % bdf)
                if host.dyn(bdf)["numvfs"] == total:
                    continue
                value = str(total)
            else:
                print("Disabling VFs on %s" % bdf)
                value = "0"
            try:
                host.set_numvfs(bdf, value)
            except OSError as e:
                sys.stderr.write("Cannot %s VFs on %s: %s\n" % ("enable" if enable else "disable", bdf, e.strerror))
                rc = 1
    return rc
