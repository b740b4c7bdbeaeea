"""nvidia-smi, the query subset: ``-L``, ``--query-gpu=<fields> --format=csv[,noheader][,nounits]``
with ``-i <index|bus id|uuid>``."""

import sys

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
        return g.get("mig_mode", "[N/A]")
    if field == "pci.device_id":
        return "0x%04X%04X" % (st["device"], st["vendor"])
    if field == "pci.sub_device_id":
        return "0x%04X%04X" % (st["subsystem_device"], st["subsystem_vendor"])
    raise KeyError(field)


def main(store, args):
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
