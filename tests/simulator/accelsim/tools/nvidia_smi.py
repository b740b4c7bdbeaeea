"""nvidia-smi, the query subset and MIG management, with the real tool's output layouts:

- ``-L``; ``--query-gpu=<fields> --format=csv[,noheader][,nounits]`` with ``-i <index|bus id|uuid>``;
- ``mig -lgip`` / ``mig -lgipp`` (``-i ID``): the GPU instance profiles (free/total counted from the instances
  that exist) and their possible placements, from the card's real table (accelsim/mig_profiles.py, keyed by
  the PCI device id), for every MIG-capable GPU, MIG mode enabled or not (a real H200 with MIG disabled lists
  them, exit 0: tests/captures/nvidia-h200-580.159.04);
- ``mig -lgi`` / ``mig -lci`` (``-i ID``, ``-gi ID``): the GPU and compute instance tables; with MIG disabled
  on every selected GPU ``No MIG-enabled devices found.`` on stdout and exit 0 (the real H200 capture); with MIG
  enabled and nothing to list ``No GPU instances found: Not Found`` / ``No compute instances found: Not Found``
  on stdout and a non-zero exit (public captures show the messages and a failing status; NVIDIA does not
  publish the code: the simulator uses 6, NVML's NOT_FOUND);
- ``mig -cgi <ids or names>[ -C]``, ``mig -cci``, ``mig -dci``, ``mig -dgi`` (``-i ID``, ``-gi ID``, ``-ci ID``)
  and ``-i ID -mig 0|1``: MIG changes, with the real messages (``Successfully created GPU instance ID  2 on GPU
  0 using profile MIG 3g.20gb (ID  9)``, ``Unable to destroy ...: In use by another client``, ``Insufficient
  Resources``, the pending-mode warning) and the driver's rules (accelsim/mig.py, with sources);
- ``vgpu -s`` / ``vgpu -c`` (``-v``, ``-i ID``): supported and creatable vGPU types per GPU, names only or,
  with ``-v``, one ``vGPU Type ID : 0x...`` block per type (``GPU Instance Profile ID`` of a MIG-backed type);
- ``vgpu -q`` (``-i ID``): the vGPUs that exist, each with its ``GPU Instance ID`` (NVIDIA Virtual GPU Software
  User Guide, "Getting vGPU Details": the ``nvidia-smi vgpu -q`` example);
- every ``vgpu`` listing on GPUs without the vGPU manager: ``No supported devices in vGPU mode`` on stdout, exit 0
  (the real H200 capture, tests/captures/nvidia-h200-580.159.04).

Lab keys read (``functions[].gpu``): ``name``, ``uuid``, ``serial``, ``memory_mib``, ``vbios``, and for MIG
``mig: {mode: Enabled|Disabled, pending: <mode>, gpu_instances: [{id, profile_id, name, placement,
compute_instances: [{id, profile_id, name, placement}]}]}`` (the state at the lab's first boot; MIG state then
lives in the host state, see accelsim/mig.py) (``name`` is the profile name without ``MIG``,
e.g. ``1g.10gb``; ``placement`` is ``start:size``). The older ``mig_mode: Enabled`` key sets both modes and no
instances. A GPU without either is not MIG capable (``[N/A]``). vGPU types come from the function's
``vgpu`` (vendor-specific VFIO, numeric ids) or ``mdev`` (``nvidia-<id>`` types) section.
"""

import re
import sys

from .. import mig as migstate
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
    return migstate.nvidia_gpus(host)


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
        mig = _mig(host, bdf)
        if mig is None:
            return "[N/A]"
        return mig["mode"] if field == "mig.mode.current" else mig["pending"]
    if field == "pci.device_id":
        return "0x%04X%04X" % (st["device"], st["vendor"])
    if field == "pci.sub_device_id":
        return "0x%04X%04X" % (st["subsystem_device"], st["subsystem_vendor"])
    raise KeyError(field)


def _mig(host, bdf):
    """The GPU's MIG state (accelsim/mig.py), or None when it is not MIG capable."""
    return migstate.state_of(host, bdf)


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


def _selected_gpus(host, select):
    """``(found, indexed, None)``, or ``(None, None, exit status)`` after nvidia-smi's own message when the driver
    shows no GPU or ``-i`` names none of them."""
    found = gpus(host)
    if not found:
        sys.stdout.write(NO_DRIVER)
        return None, None, 9
    indexed = _select(host, found, select)
    if select is not None and not indexed:
        sys.stdout.write("No devices were found\n")
        return None, None, NOT_FOUND
    return found, indexed, None


MIG_USAGE = "Invalid combination of input arguments. Please run 'nvidia-smi mig -h' for help.\n"
OTHER_ERROR = 255  # nvidia-smi's "Other error or internal driver error occurred" (In use, Insufficient Resources)


def _ids(text):
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def mig_main(store, args):
    """``nvidia-smi mig``: the listings (-lgi, -lci, -lgip, -lgipp) and the changes (-cgi LIST [-C], -cci [LIST],
    -dci, -dgi), each with ``-i ID`` (GPU), ``-gi ID[,ID]`` and ``-ci ID[,ID]`` filters. ``-cci`` makes the default
    compute instance only (CI profiles other than the GI-wide one are not modelled)."""
    what = select = gi_filter = ci_filter = None
    profiles_arg = None
    default_ci = False
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
        elif arg in ("-cgi", "--create-gpu-instance"):
            what = "cgi"
            profiles_arg = next(it, "")
        elif arg in ("-cci", "--create-compute-instance"):
            what = "cci"
        elif arg in ("-dci", "--destroy-compute-instance"):
            what = "dci"
        elif arg in ("-dgi", "--destroy-gpu-instance"):
            what = "dgi"
        elif arg in ("-C", "--default-compute-instance"):
            default_ci = True
        elif arg in ("-i", "--id"):
            select = next(it, "")
        elif arg in ("-gi", "--gpu-instance-id"):
            gi_filter = _ids(next(it, ""))
        elif arg in ("-ci", "--compute-instance-id"):
            ci_filter = _ids(next(it, ""))
        elif what == "cci" and profiles_arg is None and not arg.startswith("-"):
            profiles_arg = arg
        else:
            sys.stdout.write(MIG_USAGE)
            return 2
    if what is None or (default_ci and what != "cgi") or (what == "cgi" and not _ids(profiles_arg)):
        sys.stdout.write(MIG_USAGE)
        return 2
    host = store_host(store)
    found, indexed, rc = _selected_gpus(host, select)
    if rc is not None:
        return rc
    enabled = [(i, b) for i, b in indexed if (_mig(host, b) or {}).get("mode") == "Enabled"]
    capable = [(i, b) for i, b in indexed if _mig(host, b) is not None]
    if what in ("gip", "gipp") and capable:
        # listed with MIG mode disabled too (a GPU with MIG disabled has all of its profiles free)
        lines = _profile_listing(host, [(i, b, _mig(host, b) if (i, b) in enabled else {"gpu_instances": []})
                                        for i, b in capable], what)
        if lines is None:
            return 2
        print("\n".join(lines))
        return 0
    if not enabled:
        sys.stdout.write("No MIG-enabled devices found.\n")
        return 0 if what in ("gi", "ci") else NOT_FOUND
    if what in ("gi", "ci"):
        return _listing(host, enabled, what, gi_filter)
    with store.transaction() as host:
        return _change(host, list(enabled), what, profiles_arg, default_ci, gi_filter, ci_filter)


def _listing(host, enabled, what, gi_filter):
    rows = []
    for i, b in enabled:
        for gi in _mig(host, b)["gpu_instances"]:
            if gi_filter is not None and str(gi["id"]) not in gi_filter:
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


def _change(host, enabled, what, profiles_arg, default_ci, gi_filter, ci_filter):
    """-cgi/-cci/-dci/-dgi on the MIG-enabled GPUs ``enabled``: one line per instance, as the real tool prints
    them; on the first refusal a ``Failed to ...`` line and OTHER_ERROR (what was done before it stays done,
    the real tool does not undo it)."""
    out = []
    failure = None
    for i, b in enabled:
        m = _mig(host, b)
        table = migstate.table_of(host, b)
        if what == "cgi":
            for token in _ids(profiles_arg):
                p = migstate.find_profile(table or [], token)
                if p is None:
                    out.append("Unable to create a GPU instance on GPU %2d using profile %s: Not Found" % (i, token))
                    failure = failure or ("Failed to create GPU instances: Not Found", NOT_FOUND)
                    break
                try:
                    gi = migstate.create_gi(m, table, p, "%s/%d" % (host.static(b)["gpu"]["uuid"], host.state["boot"]))
                except migstate.MigError as e:
                    out.append("Unable to create a GPU instance on GPU %2d using profile %s: %s" % (i, token, e.reason))
                    failure = failure or ("Failed to create GPU instances: %s" % e.reason, e.rc)
                    break
                out.append("Successfully created GPU instance ID %2d on GPU %2d using profile MIG %s (ID %2d)"
                           % (gi["id"], i, gi["name"], gi["profile_id"]))
                if default_ci:
                    ci = migstate.create_default_ci(gi)
                    out.append(_ci_created(i, gi, ci))
            continue
        gis = [gi for gi in m["gpu_instances"] if gi_filter is None or str(gi["id"]) in gi_filter]
        if what == "cci":
            for gi in gis:
                try:
                    ci = migstate.create_default_ci(gi)
                except migstate.MigError as e:
                    out.append("Unable to create a compute instance on GPU %2d GPU instance ID %2d using profile %s: %s"
                               % (i, gi["id"], profiles_arg or "default", e.reason))
                    failure = failure or ("Failed to create compute instances: %s" % e.reason, e.rc)
                    continue
                out.append(_ci_created(i, gi, ci))
        elif what == "dci":
            for gi in gis:
                for ci in list(gi["compute_instances"]):
                    if ci_filter is not None and str(ci["id"]) not in ci_filter:
                        continue
                    if migstate.ci_busy(host, i, gi, ci):
                        out.append("Unable to destroy compute instance ID %2d from GPU %2d GPU instance ID %2d: In use by "
                                   "another client" % (ci["id"], i, gi["id"]))
                        failure = failure or ("Failed to destroy compute instances: In use by another client", OTHER_ERROR)
                        continue
                    gi["compute_instances"].remove(ci)
                    out.append("Successfully destroyed compute instance ID %2d from GPU %2d GPU instance ID %2d"
                               % (ci["id"], i, gi["id"]))
        elif what == "dgi":
            for gi in gis:
                if gi["compute_instances"] or migstate.gi_busy(host, i, gi):
                    out.append("Unable to destroy GPU instance ID %2d from GPU %2d: In use by another client" % (gi["id"], i))
                    failure = failure or ("Failed to destroy GPU instances: In use by another client", OTHER_ERROR)
                    continue
                m["gpu_instances"].remove(gi)
                out.append("Successfully destroyed GPU instance ID %2d from GPU %2d" % (gi["id"], i))
    if not out and what in ("dci", "dgi", "cci"):
        sys.stdout.write("No compute instances found: Not Found\n" if what != "dgi" else "No GPU instances found: Not Found\n")
        return NOT_FOUND
    if failure:
        out.append(failure[0])
    print("\n".join(out))
    return failure[1] if failure else 0


def _ci_created(i, gi, ci):
    return ("Successfully created compute instance ID %2d on GPU %2d GPU instance ID %2d using profile MIG %s (ID %2d)"
            % (ci["id"], i, gi["id"], ci["name"], ci["profile_id"]))


NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
             "Make sure that the latest NVIDIA driver is installed and running.\n\n")


def mig_mode(store, select, value):
    """``nvidia-smi [-i ID] -mig 0|1``: per GPU ``Enabled MIG Mode for GPU <bus id>`` (in effect now), or the
    pending warning when the GPU is in use (the change waits for a GPU reset or a reboot), then ``All done.``"""
    if value not in ("0", "1"):
        sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n")
        return 2
    enable = value == "1"
    word = "enable" if enable else "disable"
    with store.transaction() as host:
        found, indexed, rc = _selected_gpus(host, select)
        if rc is not None:
            return rc
        out = []
        rc = 0
        for i, b in indexed:
            bus = _bus_id(b)
            if _mig(host, b) is None:
                out.append("Unable to %s MIG Mode for GPU %s: Not Supported" % (word, bus))
                rc = 3
                continue
            try:
                why = migstate.set_mode(host, i, b, enable)
            except migstate.MigError as e:
                out.append("Unable to %s MIG Mode for GPU %s: %s" % (word, bus, e.reason))
                rc = OTHER_ERROR
                continue
            if why:
                out.append("Warning: MIG mode is in pending %s state for GPU %s:%s" % (word, bus, why))
                out.append("%s is currently being used by one or more other processes (e.g. CUDA application or a "
                           "monitoring application such as another instance of nvidia-smi). Please first kill all "
                           "processes using the device and retry the command or reboot the system to make MIG mode "
                           "effective." % bus)
            else:
                out.append("%sd MIG Mode for GPU %s" % (word.capitalize(), bus))
        if rc == 0:
            out.append("All done.")
    print("\n".join(out))
    return rc


def _type_id(tid):
    if isinstance(tid, int):
        return tid
    m = re.match(r"^nvidia-(\d+)$", str(tid))
    return int(m.group(1)) if m else None


def vgpu_types(host, bdf, creatable):
    """[(numeric id, name, max instances, GPU instance profile id or None)] the GPU supports (or can create now);
    the profile id is that of the GI profile a MIG-backed type runs on."""
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
        table = migstate.table_of(host, bdf) or []
        for t in types:
            p = migstate.find_profile(table, t["gi_profile"]) if t.get("gi_profile") else None
            out.append((t["id"], t["name"], t["max_instances"], p["id"] if p else None))
    elif host.mdev_parent(bdf):
        for t in host.mdev_parent(bdf)["types"]:
            tid = _type_id(t["id"])
            if tid is None or (creatable and host.available_instances(bdf, t["id"]) <= 0):
                continue
            out.append((tid, t["name"], t["max_instances"], None))
    return out


def _domain_of(host, vf):
    """The running domain that has VF ``vf`` (None when none has it)."""
    why = host.in_use(vf) or ""
    return why[len("assigned to running domain "):] if why.startswith("assigned to running domain ") else None


def vgpu_query(host, bdf):
    """``nvidia-smi vgpu -q`` for one GPU: ``Active vGPUs`` and a block per vGPU with the fields of the user guide's
    example (``VM Name``: the domain running it, ``vGPU Name``, ``vGPU Type``, ``GPU Instance ID``: the GI a
    MIG-backed vGPU runs on, ``N/A`` for a time-sliced one). A vendor-specific VFIO vGPU is listed from the write to
    its VF's ``current_vgpu_type`` on; its ``PCI`` / ``Bus Id`` is the vGPU's address inside the guest, not the host
    VF: ``00000000:00:00.0`` until a guest has it, then the guest's slot (driver 580.x captures show
    ``00000000:00:00.0`` and ``00000000:00:05.0``); the ``vGPU ID`` is derived from the VF's index."""
    st = host.static(bdf)
    if not st.get("vgpu"):
        return ["    %-38s: 0" % "Active vGPUs"]
    names = dict((t["id"], t["name"]) for t in st["vgpu"]["types"])
    gi_of = {}
    for gi in (_mig(host, bdf) or {}).get("gpu_instances", []):
        if gi.get("vgpu_vf"):
            gi_of[gi["vgpu_vf"]] = gi["id"]
    vgpus = [(vf, host.state["vgpu"][vf]) for vf in host.vfs(bdf) if host.state["vgpu"].get(vf)]
    out = ["    %-38s: %d" % ("Active vGPUs", len(vgpus))]
    for vf, tid in vgpus:
        domain = _domain_of(host, vf)
        out.append("    %-38s: %d" % ("vGPU ID", 3251634176 + host.static(vf)["vf_index"]))
        out.append("        %-34s: %s" % ("VM UUID", "N/A"))
        out.append("        %-34s: %s" % ("VM Name", domain or "N/A"))
        out.append("        %-34s: %s" % ("vGPU Name", names.get(tid, "N/A")))
        out.append("        %-34s: %d" % ("vGPU Type", tid))
        out.append("        %-34s: %s" % ("GPU Instance ID", gi_of.get(vf, "N/A")))
        out.append("        %-34s" % "PCI")
        out.append("            %-30s: %s" % ("Bus Id", "00000000:00:05.0" if domain else "00000000:00:00.0"))
    return out


def vgpu_main(host, found, args):
    """``nvidia-smi vgpu -s|-c [-v] [-i ID]``: supported / creatable vGPU types per GPU; ``vgpu -q [-i ID]``: the
    vGPUs that exist."""
    what = select = None
    verbose = False
    it = iter(args)
    for arg in it:
        if arg in ("-s", "--supported"):
            what = "s"
        elif arg in ("-c", "--creatable"):
            what = "c"
        elif arg in ("-q", "--query"):
            what = "q"
        elif arg in ("-v", "--verbose"):
            verbose = True
        elif arg in ("-i", "--id"):
            select = next(it, "")
        else:
            sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi vgpu -h' for help.\n")
            return 2
    indexed = _select(host, found, select)
    if select is not None and not indexed:
        sys.stdout.write("No devices were found\n")
        return NOT_FOUND
    if not any(host.static(b).get("vgpu") or host.mdev_parent(b) for _i, b in indexed):
        # no vGPU manager for these GPUs: every listing says so, exit 0 (the real H200 capture)
        sys.stdout.write("No supported devices in vGPU mode\n")
        return 0
    if what is None:
        sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi vgpu -h' for help.\n")
        return 2
    out = []
    for _i, bdf in indexed:
        out.append("GPU %s" % _bus_id(bdf))
        if what == "q":
            out.extend(vgpu_query(host, bdf))
            continue
        for tid, name, max_inst, profile_id in vgpu_types(host, bdf, what == "c"):
            if not verbose:
                out.append("    %s" % name)
                continue
            out.append("    %-38s: 0x%x" % ("vGPU Type ID", tid))
            out.append("        %-34s: %s" % ("Name", name))
            out.append("        %-34s: %s" % ("GPU Instance Profile ID", "N/A" if profile_id is None else profile_id))
            out.append("        %-34s: %d" % ("Max Instances", max_inst))
    print("\n".join(out))
    return 0


def main(store, args):
    if args and args[0] == "mig":
        return mig_main(store, args[1:])
    if args and args[0] == "vgpu":
        host = store_host(store)
        found = gpus(host)
        if not found:
            sys.stdout.write(NO_DRIVER)
            return 9
        return vgpu_main(host, found, args[1:])
    query = fmt = select = mig_value = None
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
        elif arg in ("-mig", "--multi-instance-gpu"):
            mig_value = next(it, "")
        elif arg.startswith("--multi-instance-gpu="):
            mig_value = arg.split("=", 1)[1]
        else:
            sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n")
            return 2
    if mig_value is not None:
        if listing or query is not None:
            sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n")
            return 2
        return mig_mode(store, select, mig_value)
    host = store_host(store)
    found, indexed, rc = _selected_gpus(host, select)
    if rc is not None:
        return rc
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
