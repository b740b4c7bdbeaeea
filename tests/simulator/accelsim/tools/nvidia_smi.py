"""nvidia-smi, the read-only query subset, with the real tool's output layouts:

- ``-L``; ``--query-gpu=<fields> --format=csv[,noheader][,nounits]`` with ``-i <index|bus id|uuid>``;
- ``mig -lgip`` / ``mig -lgipp`` (``-i ID``): the GPU instance profiles (free/total counted from the instances
  that exist) and their possible placements, from the card's real table (accelsim/mig_profiles.py, keyed by
  the PCI device id);
- ``mig -lgi`` / ``mig -lci`` (``-i ID``, ``-gi ID``): the GPU and compute instance tables, or the
  real messages ``No MIG-enabled devices found.`` / ``No GPU instances found: Not Found`` / ``No compute
  instances found: Not Found`` (exit status 6, NVML's NOT_FOUND);
- ``vgpu -s`` / ``vgpu -c`` (``-v``, ``-i ID``): supported and creatable vGPU types per GPU, names only or,
  with ``-v``, one ``vGPU Type ID : 0x...`` block per type.

Lab keys read (``functions[].gpu``): ``name``, ``uuid``, ``serial``, ``memory_mib``, ``vbios``, and for MIG
``mig: {mode: Enabled|Disabled, pending: <mode>, gpu_instances: [{id, profile_id, name, placement,
compute_instances: [{id, profile_id, name, placement}]}]}`` (``name`` is the profile name without ``MIG``,
e.g. ``1g.10gb``; ``placement`` is ``start:size``). The older ``mig_mode: Enabled`` key sets both modes and no
instances. A GPU without either is not MIG capable (``[N/A]``). vGPU types come from the function's
``vgpu`` (vendor-specific VFIO, numeric ids) or ``mdev`` (``nvidia-<id>`` types) section.
"""

import re
import sys

from ..mig_profiles import free_count, profiles as mig_profiles

FIELDS = {
    "index": ("index", None),
    "count": ("count", None),
    "pci.bus_id": ("pci.bus_id", None),
    "gpu_bus_id": ("pci.bus_id", None),
    "name": ("name", None),
    "gpu_name": ("name", None),
    "uuid": ("uuid", None),
    "gpu_uuid": ("uuid", None),
    "serial": ("serial", None),
    "memory.total": ("memory.total [MiB]", "MiB"),
    "driver_version": ("driver_version", None),
    "vbios_version": ("vbios_version", None),
    "mig.mode.current": ("mig.mode.current", None),
    "mig.mode.pending": ("mig.mode.pending", None),
    "pci.device_id": ("pci.device_id", None),
    "pci.sub_device_id": ("pci.sub_device_id", None),
}


def gpus(host):
    return [b for b in host.bdfs() if host.static(b).get("gpu") and host.driver_of(b) == "nvidia"]


def _bus_id(bdf):
    dom, rest = bdf.split(":", 1)
    return ("0000%s:%s" % (dom, rest)).upper()


def _value(host, index, bdf, field, total):
    st = host.static(bdf)
    g = st["gpu"]
    if field == "index":
        return str(index)
    if field == "count":
        return str(total)
    if field in ("pci.bus_id", "gpu_bus_id"):
        return _bus_id(bdf)
    if field in ("name", "gpu_name"):
        return g["name"]
    if field in ("uuid", "gpu_uuid"):
        return g["uuid"]
    if field == "serial":
        return g.get("serial", "[N/A]")
    if field == "memory.total":
        return str(g["memory_mib"])
    if field == "driver_version":
        return host.lab["nvidia"].get("driver_version", "[N/A]")
    if field == "vbios_version":
        return g.get("vbios", "[N/A]")
    if field.startswith("mig.mode."):
        mig = _mig(g)
        if mig is None:
            return "[N/A]"
        return mig["mode"] if field == "mig.mode.current" else mig["pending"]
    if field == "pci.device_id":
        return "0x%04X%04X" % (st["device"], st["vendor"])
    if field == "pci.sub_device_id":
        return "0x%04X%04X" % (st["subsystem_device"], st["subsystem_vendor"])
    raise KeyError(field)


def _mig(g):
    """The GPU's MIG state, or None when it is not MIG capable."""
    if isinstance(g.get("mig"), dict):
        m = g["mig"]
        mode = m.get("mode", "Disabled")
        return {"mode": mode, "pending": m.get("pending", mode), "gpu_instances": m.get("gpu_instances") or []}
    if g.get("mig_mode"):
        return {"mode": g["mig_mode"], "pending": g["mig_mode"], "gpu_instances": []}
    return None


NOT_FOUND = 6  # NVML_ERROR_NOT_FOUND: what nvidia-smi exits with when there is nothing to list

GI_TABLE = ("+---------------------------------------------------------+",
            "| GPU instances:                                          |",
            "| GPU   Name               Profile  Instance   Placement  |",
            "|                            ID       ID       Start:Size |",
            "|=========================================================|")
CI_TABLE = ("+--------------------------------------------------------------------+",
            "| Compute instances:                                                 |",
            "| GPU     GPU       Name             Profile   Instance   Placement  |",
            "|       Instance                       ID        ID       Start:Size |",
            "|         ID                                                         |",
            "|====================================================================|")


def _gi_row(index, gi):
    return "|%4d  %-16s%8d%9d%13s     |" % (index, "MIG " + gi["name"], gi["profile_id"], gi["id"], gi["placement"])


def _ci_row(index, gi, ci):
    values = (index, gi["id"], "MIG " + ci["name"], ci["profile_id"], ci["id"], ci["placement"])
    return "|%4d%7d       %-16s%6d%10d%13s     |" % values


GIP_TABLE = ("+-------------------------------------------------------------------------------+",
             "| GPU instance profiles:                                                        |",
             "| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |",
             "|                                Free/Total   GiB              CE    JPEG  OFA  |",
             "|===============================================================================|")


def _gip_rows(index, p, free):
    values = (index, "MIG " + p["name"], p["id"], "%d/%d" % (free, p["total"]), p["memory_gib"], "No",
              p["sm"], p["dec"], p["enc"])
    return ["|%4d  %-19s%3d     %-11s%-11s%-7s%-7s%-6s%-4s|" % values,
            "|%62s%2s%5s%-6s%-4s|" % ("", p["ce"], "", p["jpeg"], p["ofa"])]


def _gipp_row(index, p):
    starts = p["starts"]
    return "GPU %2d Profile ID %2d Placement%s: {%s}:%d" % (
        index, p["id"], "s" if len(starts) > 1 else " ", ",".join(str(s) for s in starts), p["size"])


def _profile_listing(host, enabled, what):
    """``-lgip`` / ``-lgipp`` output lines for the MIG-enabled GPUs ``enabled``; None when the simulator
    has no profile table for one of them (a lab error, not something the real tool says)."""
    out = list(GIP_TABLE) if what == "gip" else []
    for i, b, m in enabled:
        table = mig_profiles(host.static(b)["device"])
        if table is None:
            sys.stderr.write("accelsim: no MIG profile table for device 0x%04x (accelsim/mig_profiles.py)\n"
                             % host.static(b)["device"])
            return None
        for p in table:
            if what == "gipp":
                out.append(_gipp_row(i, p))
                continue
            out.extend(_gip_rows(i, p, free_count(p, table, m["gpu_instances"])))
            out.append(GIP_TABLE[0])
    return out


def _select(host, found, select):
    indexed = list(enumerate(found))
    if select is None:
        return indexed
    return [(i, b) for i, b in indexed if select in (str(i), host.static(b)["gpu"]["uuid"], _bus_id(b), b)]


def mig_main(host, found, args):
    """``nvidia-smi mig -lgi|-lci|-lgip|-lgipp [-i ID] [-gi ID]`` (read-only listings)."""
    what = select = gi_filter = None
    it = iter(args)
    for arg in it:
        if arg in ("-lgi", "--list-gpu-instances"):
            what = "gi"
        elif arg in ("-lci", "--list-compute-instances"):
            what = "ci"
        elif arg in ("-lgip", "--list-gpu-instance-profiles"):
            what = "gip"
        elif arg in ("-lgipp", "--list-gpu-instance-possible-placements"):
            what = "gipp"
        elif arg in ("-i", "--id"):
            select = next(it, "")
        elif arg in ("-gi", "--gpu-instance-id"):
            gi_filter = next(it, "")
        else:
            sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi mig -h' for help.\n")
            return 2
    if what is None:
        sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi mig -h' for help.\n")
        return 2
    indexed = _select(host, found, select)
    if select is not None and not indexed:
        sys.stdout.write("No devices were found\n")
        return NOT_FOUND
    enabled = [(i, b, _mig(host.static(b)["gpu"])) for i, b in indexed]
    enabled = [(i, b, m) for i, b, m in enabled if m is not None and m["mode"] == "Enabled"]
    if not enabled:
        sys.stdout.write("No MIG-enabled devices found.\n")
        return NOT_FOUND
    if what in ("gip", "gipp"):
        lines = _profile_listing(host, enabled, what)
        if lines is None:
            return 2
        print("\n".join(lines))
        return 0
    rows = []
    for i, _b, m in enabled:
        for gi in m["gpu_instances"]:
            if gi_filter is not None and str(gi["id"]) != gi_filter:
                continue
            if what == "gi":
                rows.append(_gi_row(i, gi))
            else:
                rows.extend(_ci_row(i, gi, ci) for ci in gi.get("compute_instances") or [])
    if not rows:
        sys.stdout.write("No GPU instances found: Not Found\n" if what == "gi" else
                         "No compute instances found: Not Found\n")
        return NOT_FOUND
    table = GI_TABLE if what == "gi" else CI_TABLE
    out = list(table)
    for r in rows:
        out.append(r)
        out.append(table[0])
    print("\n".join(out))
    return 0


def _type_id(tid):
    if isinstance(tid, int):
        return tid
    m = re.match(r"^nvidia-(\d+)$", str(tid))
    return int(m.group(1)) if m else None


def vgpu_types(host, bdf, creatable):
    """[(numeric id, name, max instances)] the GPU supports (or can create now)."""
    st = host.static(bdf)
    out = []
    if st.get("vgpu"):
        if creatable:
            ids = set()
            for vf in host.vfs(bdf):
                ids.update(t["id"] for t in host.creatable_vgpu_types(vf))
            types = [t for t in st["vgpu"]["types"] if t["id"] in ids]
        else:
            types = st["vgpu"]["types"]
        out = [(t["id"], t["name"], t["max_instances"]) for t in types]
    elif host.mdev_parent(bdf):
        for t in host.mdev_parent(bdf)["types"]:
            tid = _type_id(t["id"])
            if tid is None or (creatable and host.available_instances(bdf, t["id"]) <= 0):
                continue
            out.append((tid, t["name"], t["max_instances"]))
    return out


def vgpu_main(host, found, args):
    """``nvidia-smi vgpu -s|-c [-v] [-i ID]``: supported / creatable vGPU types per GPU."""
    what = select = None
    verbose = False
    it = iter(args)
    for arg in it:
        if arg in ("-s", "--supported"):
            what = "s"
        elif arg in ("-c", "--creatable"):
            what = "c"
        elif arg in ("-v", "--verbose"):
            verbose = True
        elif arg in ("-i", "--id"):
            select = next(it, "")
        else:
            sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi vgpu -h' for help.\n")
            return 2
    if what is None:
        sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi vgpu -h' for help.\n")
        return 2
    indexed = _select(host, found, select)
    if select is not None and not indexed:
        sys.stdout.write("No devices were found\n")
        return NOT_FOUND
    out = []
    for _i, bdf in indexed:
        out.append("GPU %s" % _bus_id(bdf))
        for tid, name, max_inst in vgpu_types(host, bdf, what == "c"):
            if not verbose:
                out.append("    %s" % name)
                continue
            out.append("    %-38s: 0x%x" % ("vGPU Type ID", tid))
            out.append("        %-34s: %s" % ("Name", name))
            out.append("        %-34s: %s" % ("GPU Instance Profile ID", "N/A"))
            out.append("        %-34s: %d" % ("Max Instances", max_inst))
    print("\n".join(out))
    return 0


def main(store, args):
    if args and args[0] in ("mig", "vgpu"):
        host = store_host(store)
        found = gpus(host)
        if not found:
            sys.stdout.write("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                             "Make sure that the latest NVIDIA driver is installed and running.\n\n")
            return 9
        return (mig_main if args[0] == "mig" else vgpu_main)(host, found, args[1:])
    query = fmt = select = None
    listing = False
    it = iter(args)
    for arg in it:
        if arg in ("-L", "--list-gpus"):
            listing = True
        elif arg.startswith("--query-gpu="):
            query = arg.split("=", 1)[1]
        elif arg == "--query-gpu":
            query = next(it, "")
        elif arg.startswith("--format="):
            fmt = arg.split("=", 1)[1]
        elif arg == "--format":
            fmt = next(it, "")
        elif arg in ("-i", "--id"):
            select = next(it, "")
        elif arg.startswith("--id="):
            select = arg.split("=", 1)[1]
        else:
            sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n")
            return 2
    host = store_host(store)
    found = gpus(host)
    if not found:
        sys.stdout.write("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                         "Make sure that the latest NVIDIA driver is installed and running.\n\n")
        return 9
    indexed = list(enumerate(found))
    if select is not None:
        indexed = [(i, b) for i, b in indexed if select in (str(i), host.static(b)["gpu"]["uuid"], _bus_id(b), b)]
        if not indexed:
            sys.stdout.write("No devices were found\n")
            return 6
    if listing:
        for i, bdf in indexed:
            g = host.static(bdf)["gpu"]
            print("GPU %d: %s (UUID: %s)" % (i, g["name"], g["uuid"]))
        return 0
    if query is None:
        sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n")
        return 2
    opts = (fmt or "").split(",")
    if "csv" not in opts:
        sys.stdout.write('"--format" must be specified when using "--query-gpu".\n')
        return 2
    fields = [f.strip() for f in query.split(",") if f.strip()]
    for f in fields:
        if f not in FIELDS:
            sys.stdout.write('Field "%s" is not a valid field to query.\n\n' % f)
            return 2
    if "noheader" not in opts:
        print(", ".join(FIELDS[f][0] for f in fields))
    for i, bdf in indexed:
        row = []
        for f in fields:
            v = _value(host, i, bdf, f, len(found))
            unit = FIELDS[f][1]
            if unit and "nounits" not in opts and not v.startswith("["):
                v = "%s %s" % (v, unit)
            row.append(v)
        print(", ".join(row))
    return 0


def store_host(store):
    from ..kernel import Host  # pylint: disable=import-outside-toplevel
    return Host(store.load())
