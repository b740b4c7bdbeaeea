"""Lab host descriptions: loading, validation and normalisation of the YAML files under ``labs/``.

A lab is plain data (dicts, lists, ints, strings) so that it can be stored inside the JSON state store
and shared between the FUSE daemon and the tool fakes. See ``docs/simulator.md`` for the schema.
"""

import copy
import errno
import os
import re

LAB_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "labs")

BDF_RE = re.compile(r"^([0-9a-f]{4}):([0-9a-f]{2}):([0-1][0-9a-f])\.([0-7])$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class LabError(ValueError):
    """A lab description is invalid."""


def parse_bdf(bdf):
    m = BDF_RE.match(bdf or "")
    if not m:
        raise LabError("not a PCI address (DDDD:BB:DD.F): %r" % (bdf,))
    return tuple(int(x, 16) for x in m.groups())


def format_bdf(domain, bus, dev, fn):
    return "%04x:%02x:%02x.%x" % (domain, bus, dev, fn)


def routing_id(bdf):
    _dom, bus, dev, fn = parse_bdf(bdf)
    return (bus << 8) | (dev << 3) | fn


def vf_bdf(pf_bdf, offset, stride, index):
    """The address of VF ``index`` (0-based) of a PF: routing id + First VF Offset + index * VF Stride."""
    dom = parse_bdf(pf_bdf)[0]
    rid = routing_id(pf_bdf) + offset + index * stride
    if rid > 0xFFFF:
        raise LabError("VF %d of %s falls outside the bus range" % (index, pf_bdf))
    return format_bdf(dom, rid >> 8, (rid >> 3) & 0x1F, rid & 7)


def _int(value, what):
    if isinstance(value, bool):
        raise LabError("%s: expected a number, got %r" % (what, value))
    if isinstance(value, int):
        return value
    try:
        return int(str(value), 0)
    except ValueError:
        raise LabError("%s: expected a number, got %r" % (what, value)) from None


def _cpulist_to_set(text):
    cpus = set()
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            cpus.update(range(int(lo), int(hi) + 1))
        else:
            cpus.add(int(part))
    return cpus


def cpulist_to_mask(text, ncpus):
    """The kernel's ``local_cpus`` form: comma-separated 32-bit hex words, most significant first."""
    cpus = _cpulist_to_set(text)
    words = max(1, (max(ncpus, max(cpus) + 1 if cpus else 1) + 31) // 32)
    value = 0
    for c in cpus:
        value |= 1 << c
    return ",".join("%08x" % ((value >> (32 * i)) & 0xFFFFFFFF) for i in reversed(range(words)))


def _norm_function(fn, lab):
    f = dict(fn)
    where = "function %s" % f.get("bdf")
    f["bdf"] = str(f.get("bdf", "")).lower()
    parse_bdf(f["bdf"])
    for key in ("vendor", "device", "class"):
        if key not in f:
            raise LabError("%s: missing %s" % (where, key))
        f[key] = _int(f[key], "%s %s" % (where, key))
    f["subsystem_vendor"] = _int(f.get("subsystem_vendor", 0), where)
    f["subsystem_device"] = _int(f.get("subsystem_device", 0), where)
    f["revision"] = _int(f.get("revision", 0), where)
    f.setdefault("driver", None)
    f.setdefault("parent", None)
    if f["parent"]:
        f["parent"] = str(f["parent"]).lower()
    f["numa_node"] = _int(f.get("numa_node", -1), where)
    if "local_cpulist" not in f:
        f["local_cpulist"] = str(lab["numa"].get(f["numa_node"], lab["numa"].get(0, "0")))
    f["local_cpulist"] = str(f["local_cpulist"])
    if "iommu_group" not in f:
        raise LabError("%s: missing iommu_group" % where)
    f["iommu_group"] = _int(f["iommu_group"], where)
    f["irq"] = _int(f.get("irq", 0), where)
    link = f.get("link")
    if link:
        link = dict(link)
        link.setdefault("max_speed", link["speed"])
        link.setdefault("max_width", link["width"])
        link["width"] = _int(link["width"], where)
        link["max_width"] = _int(link["max_width"], where)
        f["link"] = link
    sriov = f.get("sriov")
    if sriov:
        s = dict(sriov)
        s["totalvfs"] = _int(s["totalvfs"], where)
        s["vf_device"] = _int(s.get("vf_device", f["device"]), where)
        s["offset"] = _int(s.get("offset", 1), where)
        s["stride"] = _int(s.get("stride", 1), where)
        s.setdefault("vf_driver", None)
        s["vf_class"] = _int(s.get("vf_class", f["class"]), where)
        s["vf_revision"] = _int(s.get("vf_revision", f["revision"]), where)
        s.setdefault("vf_link", None)
        # False: the PF's driver has no sriov_configure (AMD's gim): sriov_numvfs writes fail with ENOENT
        s["configurable"] = bool(s.get("configurable", True))
        # what the driver's sriov_configure answers instead of enabling VFs (an errno name), or None
        s["configure_errno"] = s.get("configure_errno") or None
        if s["configure_errno"] and not hasattr(errno, s["configure_errno"]):
            raise LabError("%s: sriov.configure_errno %r is no errno name" % (where, s["configure_errno"]))
        # VFs the PF's driver enables itself when it probes the PF at boot (gim's vf_num)
        s["boot_numvfs"] = _int(s.get("boot_numvfs", 0), where)
        if s["boot_numvfs"] > s["totalvfs"]:
            raise LabError("%s: sriov.boot_numvfs %d exceeds totalvfs %d" % (where, s["boot_numvfs"], s["totalvfs"]))
        f["sriov"] = s
    mdev = f.get("mdev")
    if mdev:
        m = dict(mdev)
        m.setdefault("single_type", False)
        m.setdefault("driver", "vfio_mdev")
        types = []
        for t in m.get("types", []):
            t = dict(t)
            t["max_instances"] = _int(t["max_instances"], where)
            t.setdefault("device_api", "vfio-pci")
            t.setdefault("description", "")
            types.append(t)
        m["types"] = types
        f["mdev"] = m
    vgpu = f.get("vgpu")
    if vgpu:
        v = dict(vgpu)
        v.setdefault("single_type", True)
        v["types"] = [dict(t, id=_int(t["id"], where), max_instances=_int(t["max_instances"], where)) for t in v.get("types", [])]
        f["vgpu"] = v
    fpga = f.get("fpga")
    if fpga:
        g = dict(fpga)
        if g.get("layout") not in ("opae", "dfl"):
            raise LabError("%s: fpga.layout must be opae or dfl" % where)
        for key in ("interface_id", "afu_id"):
            g[key] = str(g[key]).replace("-", "").lower()
        g.setdefault("index", 0)
        g.setdefault("bitstream_id", "0x0")
        g.setdefault("bitstream_metadata", "0x0")
        g.setdefault("socket_id", 0)
        # The port is released from the PF at boot (the FME's port-release ioctl, which the DFL and OPAE drivers
        # require before SR-IOV): with a VF enabled the port (its afu_id) is the VF's, not the PF's.
        g["port_released"] = bool(g.get("port_released", False))
        f["fpga"] = g
    alveo = f.get("alveo")
    if alveo:
        a = dict(alveo)
        if a.get("role") not in ("mgmt", "user"):
            raise LabError("%s: alveo.role must be mgmt or user" % where)
        f["alveo"] = a
    iov = f.get("i915_iov")
    if iov:
        if not sriov:
            raise LabError("%s: i915_iov needs sriov" % where)
        v = dict(iov)
        v["card"] = _int(v.get("card", 0), where)
        v["tiles"] = [str(t) for t in v.get("tiles", ["gt"])]
        v["auto_provisioning"] = _int(v.get("auto_provisioning", 1), where)
        v["vfs"] = {str(_int(k, where)): {str(gt): {str(a): _int(x, where) for a, x in attrs.items()}
                                          for gt, attrs in (tiles or {}).items()}
                    for k, tiles in (v.get("vfs") or {}).items()}
        f["i915_iov"] = v
    f["net"] = [dict(n) for n in f.get("net", [])]
    return f


def normalize_lab(data, name=None):
    """Validate a lab description (as loaded from YAML) and fill in defaults."""
    if not isinstance(data, dict):
        raise LabError("a lab description is a mapping")
    lab = copy.deepcopy(data)
    lab["name"] = str(lab.get("name") or name or "lab")
    lab.setdefault("description", "")
    lab.setdefault("hostname", "sim-" + lab["name"])
    lab["cpus"] = _int(lab.get("cpus", 64), "cpus")
    lab["numa"] = {_int(k, "numa node"): str(v) for k, v in (lab.get("numa") or {0: "0-%d" % (lab["cpus"] - 1)}).items()}
    lab.setdefault("nvidia", {})
    functions = [_norm_function(f, lab) for f in lab.get("functions", [])]
    seen = set()
    for f in functions:
        if f["bdf"] in seen:
            raise LabError("duplicate function %s" % f["bdf"])
        seen.add(f["bdf"])
    for f in functions:
        if f["parent"] and f["parent"] not in seen:
            raise LabError("function %s: parent %s is not in the lab" % (f["bdf"], f["parent"]))
    lab["functions"] = functions
    for key in ("mdevs", "mdevctl", "domains", "processes"):
        lab[key] = [dict(x) for x in lab.get(key) or []]
    for m in lab["mdevs"] + lab["mdevctl"]:
        m["uuid"] = str(m["uuid"]).lower()
        if not UUID_RE.match(m["uuid"]):
            raise LabError("bad mdev uuid %r" % m["uuid"])
    return lab


def lab_path(name_or_path):
    if os.path.sep in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        return name_or_path
    return os.path.join(LAB_DIR, name_or_path + ".yaml")


def lab_names():
    """The shipped labs (files starting with ``_`` are fragments for ``include``)."""
    return sorted(n[:-5] for n in os.listdir(LAB_DIR) if n.endswith(".yaml") and not n.startswith("_"))


_LISTS = ("functions", "mdevs", "mdevctl", "domains", "processes")


def _load_raw(name_or_path, seen=()):
    path = lab_path(str(name_or_path))
    if path in seen:
        raise LabError("include loop at %s" % path)
    import yaml  # pylint: disable=import-outside-toplevel  # only labs need it: the tool fakes start faster without
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict):
        raise LabError("%s: not a mapping" % path)
    includes = data.pop("include", None) or []
    if not includes:
        return data, path
    merged = {k: [] for k in _LISTS}
    merged["numa"] = {}
    merged["nvidia"] = {}
    for inc in includes:
        part = _load_raw(inc, seen + (path,))[0]
        _merge(merged, part)
    own = {k: v for k, v in data.items() if k not in _LISTS + ("numa", "nvidia")}
    _merge(merged, data)
    merged.update(own)
    return merged, path


def _merge(into, part):
    bdfs = {f.get("bdf") for f in into["functions"]}
    for f in part.get("functions") or []:
        if f.get("bdf") not in bdfs:  # shared platform functions appear once
            into["functions"].append(f)
            bdfs.add(f.get("bdf"))
    for key in _LISTS[1:]:
        into[key].extend(part.get(key) or [])
    into["numa"].update(part.get("numa") or {})
    into["nvidia"].update(part.get("nvidia") or {})
    for key in ("cpus",):
        if key in part:
            into[key] = part[key]


def load_lab(name_or_path):
    """Load a lab by name (``gpu-mdev``) or by path to a YAML file; returns the normalised lab dict.

    A lab may ``include`` other labs by name: their functions (deduplicated by address), mdevs, domains,
    processes and mdevctl definitions are merged in order, then the lab's own entries."""
    if isinstance(name_or_path, dict):
        return normalize_lab(name_or_path)
    data, path = _load_raw(name_or_path)
    return normalize_lab(data, name=os.path.splitext(os.path.basename(path))[0])
