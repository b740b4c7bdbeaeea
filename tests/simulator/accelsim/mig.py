"""MIG state of the simulated NVIDIA GPUs: mode (current, pending), GPU instances (GIs) and their compute
instances (CIs), and the rules the driver applies when ``nvidia-smi mig`` creates or destroys them.

State: ``state["mig"][bdf] = {"mode", "pending", "gpu_instances": [{id, profile_id, name, placement,
compute_instances: [{id, profile_id, name, placement}]}]}``, transient. At the first boot it is the lab's
``gpu.mig`` (what ran when the lab was captured); at every later boot MIG mode is the pending mode of the boot
before (the mode is kept by the GPU across reboots, a pending change takes effect at the next GPU reset) and no
instance exists (the layout does not survive a reboot; something must recreate it, as mig-parted's
``nvidia-mig-manager.service`` does). Kept across boots in ``state["persist"]["mig_mode"]``.

Rules (sources: NVIDIA Multi-Instance GPU User Guide, docs.nvidia.com/datacenter/tesla/mig-user-guide/:
"Supported MIG Profiles", "Getting Started with MIG", "Device Nodes and Capabilities"; NVIDIA/mig-parted's
README and pkg/mig/mode, for the pending/reset behaviour; facts only):

- a GI of a profile takes ``size`` memory slices at one of the profile's placement starts (accelsim/
  mig_profiles.py) and its ``<n>g`` compute slices out of 7; creation fails with ``Insufficient Resources``
  when no start is free or the compute slices or the profile's instance limit are used up;
- which free start the driver picks is its own choice and varies between driver releases (an order the user
  guide shows, ``-cgi 19,19,14,9``, fails on real hardware): the simulator takes the highest free start for
  the half-GPU and larger profiles (4 or more memory slices: real captures show a 3g at 4:4 first, DCGM issue
  138) and a seeded choice among the free starts for the smaller ones, so code that predicts placements
  instead of reading them back (``-lgi``) fails here as it would on a real GPU;
- GI ids are the driver's choice too, not a function of the placement: real captures show a 3g at 4:4 as GI 1
  and a 1g at 3:1 as GI 14 (DCGM issue 138), seven 1g on an H100 PCIe as GIs 7, 8, 9, 11, 12, 13, 14, and on an
  A30 1g at 0:1 as GI 3, 1g at 1:1 as GI 4 and 2g at 2:2 as GI 2 (a published A30 capture, driver 535.183.01).
  The simulator gives the whole-GPU profile GI 0 and every other GI a seeded choice among the free ids 1-14
  (seeded by the GPU's uuid, the boot and how many GIs it made), so two GPUs given the same layout get
  different ids and reruns of a lab the same ones;
- the default CI of a GI (``-C``, or ``-cci`` without a profile) spans all its compute slices; its CI profile id
  is that of the ``<n>c`` profile (1c 0, 2c 1, 3c 2, 4c 3, 7c 4) and its id 0;
- a GI that still has CIs, a CI or GI whose capability device a process holds, cannot be destroyed (``In use
  by another client``);
- device minors of the capability nodes (``/proc/driver/nvidia-caps/mig-minors``): ``config`` 1, ``monitor``
  2, then per GPU (15 GIs x (1 access + 8 CIs)): ``gpuG/giI/access`` = 3 + 135 G + 9 I and
  ``gpuG/giI/ciC/access`` = that + 1 + C (the user guide's listing ends with gpu31/gi14/ci7/access 4322);
- MIG-backed vGPU (NVIDIA Virtual GPU Software User Guide, "Virtual GPU Types for Supported GPUs" (the C-series
  MIG-backed types, ``A100-1-5C`` on a 1g.5gb instance, ``H100-1-10C`` on 1g.10gb), "Configuring a GPU for
  MIG-Backed vGPUs" and "Creating an NVIDIA vGPU that Supports SR-IOV on a Linux with KVM Hypervisor" (the
  vendor-specific VFIO framework: ``sriov-manage -e``, ``nvidia/creatable_vgpu_types``, ``echo <id> >
  nvidia/current_vgpu_type``, ``echo 0`` to remove): on a GPU in MIG mode a VF lists only the MIG-backed types
  whose GI profile has an instance not yet backing a vGPU; setting the type takes one such GI (the simulator
  takes the lowest GI id: which one the real driver picks is not documented, and discovery reads it back from
  ``nvidia-smi vgpu -q``'s ``GPU Instance ID``); writing 0 frees it. A GI backing a vGPU cannot be destroyed
  (``In use by another client``), as a GI a process holds;
- MIG mode changes go pending while a process holds the GPU's ``/dev/nvidiaN`` or a running domain has the GPU
  or one of its vGPUs; otherwise the driver resets the GPU and the change takes effect at once. MIG mode
  cannot be disabled while GPU instances exist.
"""

import copy

from .mig_profiles import compute_slices, profiles as profile_table

CI_PROFILE_BY_SLICES = {1: 0, 2: 1, 3: 2, 4: 3, 7: 4}
GIS_PER_GPU = 15
CIS_PER_GI = 8
MINORS_PER_GPU = GIS_PER_GPU * (1 + CIS_PER_GI)
MAX_GPUS = 32


class MigError(Exception):
    """A request the driver refuses: ``reason`` is NVML's error string (``Insufficient Resources``, ``In use by
    another client``, ``Not Found``, ``Invalid Argument``)."""

    def __init__(self, reason, rc):
        super(MigError, self).__init__(reason)
        self.reason = reason
        self.rc = rc


def lab_mig(g):
    """The lab's MIG description of a GPU (``functions[].gpu``), or None when it is not MIG capable."""
    if isinstance(g.get("mig"), dict):
        m = g["mig"]
        mode = m.get("mode", "Disabled")
        return {"mode": mode, "pending": m.get("pending", mode),
                "gpu_instances": copy.deepcopy(m.get("gpu_instances") or [])}
    if g.get("mig_mode"):
        return {"mode": g["mig_mode"], "pending": g["mig_mode"], "gpu_instances": []}
    return None


def boot(host):
    """Called by Host.boot: the MIG state after power-on."""
    st = host.state
    kept = st["persist"].setdefault("mig_mode", {})
    st["mig"] = {}
    for f in host.lab["functions"]:
        g = f.get("gpu")
        m = lab_mig(g) if g else None
        if m is None:
            continue
        if st["boot"] > 1:
            mode = kept.get(f["bdf"], m["pending"])
            m = {"mode": mode, "pending": mode, "gpu_instances": []}
        kept[f["bdf"]] = m["pending"]
        st["mig"][f["bdf"]] = m


def state_of(host, bdf):
    """The MIG state of GPU ``bdf`` (None: not MIG capable)."""
    return host.state.get("mig", {}).get(bdf)


def _span(start, size):
    return set(range(start, start + size))


def _placement(text):
    start, size = (int(x) for x in str(text).split(":"))
    return start, size


def gi_minor(index, gi):
    return 3 + MINORS_PER_GPU * index + (1 + CIS_PER_GI) * gi


def ci_minor(index, gi, ci):
    return gi_minor(index, gi) + 1 + ci


_MINORS = []


def mig_minors_text():
    if _MINORS:
        return _MINORS[0]
    lines = ["config 1", "monitor 2"]
    for g in range(MAX_GPUS):
        for i in range(GIS_PER_GPU):
            lines.append("gpu%d/gi%d/access %d" % (g, i, gi_minor(g, i)))
            for c in range(CIS_PER_GI):
                lines.append("gpu%d/gi%d/ci%d/access %d" % (g, i, c, ci_minor(g, i, c)))
    _MINORS.append("\n".join(lines) + "\n")
    return _MINORS[0]


def find_profile(table, token):
    """A GI profile by id (``9``) or name (``3g.20gb``, ``MIG 3g.20gb``); None when the card has no such one."""
    token = token.strip()
    if token.upper().startswith("MIG "):
        token = token[4:].strip()
    for p in table:
        if token.isdigit() and p["id"] == int(token):
            return p
        if p["name"] == token:
            return p
    return None


def create_gi(m, table, profile, seed=""):
    """Create one GI of ``profile`` in ``m`` (a GPU's MIG state); returns it or raises MigError. ``seed`` (the
    GPU's uuid and boot) makes the driver's choices of placement and id repeatable for a lab."""
    used = set()
    compute = 0
    same = 0
    slices = {p["id"]: p["compute_slices"] for p in table}
    for gi in m["gpu_instances"]:
        used |= _span(*_placement(gi["placement"]))
        compute += slices.get(gi["profile_id"], 0)
        same += gi["profile_id"] == profile["id"]
    free = [s for s in profile["starts"] if not _span(s, profile["size"]) & used]
    if not free or compute + profile["compute_slices"] > compute_slices(table) or same >= profile["total"]:
        raise MigError("Insufficient Resources", 255)
    m["made"] = m.get("made", 0) + 1
    import random  # pylint: disable=import-outside-toplevel  # only a MIG create needs it, not every tool run
    rng = random.Random("%s/%d" % (seed, m["made"]))
    start = max(free) if profile["size"] >= 4 else rng.choice(free)
    whole = profile["compute_slices"] == compute_slices(table)
    taken = set(gi["id"] for gi in m["gpu_instances"])
    gid = 0 if whole else rng.choice([i for i in range(1, GIS_PER_GPU) if i not in taken])
    gi = {"id": gid, "profile_id": profile["id"], "name": profile["name"],
          "placement": "%d:%d" % (start, profile["size"]), "compute_instances": []}
    m["gpu_instances"].append(gi)
    m["gpu_instances"].sort(key=lambda x: x["id"])
    return gi


def create_default_ci(gi):
    """The default CI of ``gi`` (all its compute slices); raises MigError when one exists already."""
    if gi["compute_instances"]:
        raise MigError("Insufficient Resources", 255)
    n = int(gi["name"].split("g.", 1)[0])
    ci = {"id": 0, "profile_id": CI_PROFILE_BY_SLICES[n], "name": gi["name"].split("+", 1)[0],
          "placement": "0:%d" % n}
    gi["compute_instances"].append(ci)
    return ci


def held_minors(host):
    """{minor: pid} of the capability nodes processes hold open."""
    out = {}
    for path, pid in host.held_paths().items():
        if path.startswith("/dev/nvidia-caps/nvidia-cap"):
            rest = path[len("/dev/nvidia-caps/nvidia-cap"):]
            if rest.isdigit():
                out.setdefault(int(rest), pid)
    return out


def free_vgpu_gi(m, profile_name):
    """The GIs of ``profile_name`` in ``m`` (a GPU's MIG state) that back no vGPU, lowest id first."""
    return sorted((gi for gi in m["gpu_instances"] if gi["name"] == profile_name and not gi.get("vgpu_vf")),
                  key=lambda gi: gi["id"])


def gi_busy(host, index, gi):
    """Why ``gi`` cannot go: it backs a vGPU, or a process holds its (or one of its CIs') capability node; None
    otherwise."""
    if gi.get("vgpu_vf"):
        return "backs the vGPU of VF %s" % gi["vgpu_vf"]
    held = held_minors(host)
    for minor in [gi_minor(index, gi["id"])] + [ci_minor(index, gi["id"], c) for c in range(CIS_PER_GI)]:
        if minor in held:
            return "pid %s holds /dev/nvidia-caps/nvidia-cap%d" % (held[minor], minor)
    return None


def ci_busy(host, index, gi, ci):
    """A CI cannot go while a process holds its node or its GI backs a vGPU (the vGPU runs on the GI's CIs)."""
    held = held_minors(host)
    return bool(gi.get("vgpu_vf")) or ci_minor(index, gi["id"], ci["id"]) in held


def gpu_busy(host, index, bdf):
    """Why a MIG mode change on GPU ``bdf`` must wait for a reset: a process holds /dev/nvidia<index>, or a
    running domain has the GPU or one of its vGPUs (mdevs on it, its VFs); None when it can be reset now."""
    holder = host.held_paths().get("/dev/nvidia%d" % index)
    if holder:
        return "In use by another client"
    units = [bdf] + host.vfs(bdf) if (host.static(bdf).get("sriov")) else [bdf]
    units += [u for u, m in host.state["mdevs"].items() if m["parent"] in units]
    for u in units:
        why = host.in_use(u)
        if why and "domain" in why:
            return "In use by another client"
    return None


def set_mode(host, index, bdf, enable):
    """``-mig 0|1``: returns None (in effect now) or the reason it is pending; raises MigError."""
    m = state_of(host, bdf)
    want = "Enabled" if enable else "Disabled"
    if not enable and m["gpu_instances"] and m["mode"] == "Enabled":
        raise MigError("In use by another client", 255)
    m["pending"] = want
    host.state["persist"].setdefault("mig_mode", {})[bdf] = want
    if m["mode"] == want:
        return None
    why = gpu_busy(host, index, bdf)
    if why:
        return why
    m["mode"] = want
    return None


def nvidia_gpus(host):
    """The GPUs nvidia-smi sees, in its index order (PCI order)."""
    return [b for b in host.bdfs() if host.static(b).get("gpu") and host.driver_of(b) == "nvidia"]


def render(t, host):
    """/proc/driver/nvidia-caps/mig-minors (when a GPU is MIG capable) and a /dev/nvidia-caps/nvidia-capN node
    per existing GI and CI (the driver's capability devices, created as nvidia-modprobe does)."""
    if not host.state.get("mig"):
        return
    t.file("proc/driver/nvidia-caps/mig-minors", mig_minors_text(), 0o444)
    for index, bdf in enumerate(nvidia_gpus(host)):
        g = host.static(bdf)["gpu"]
        # the driver's per-GPU information file (the fields of the R5xx drivers; Device Minor: /dev/nvidia<N>)
        t.file("proc/driver/nvidia/gpus/%s/information" % bdf,
               "Model: \t\t %s\nIRQ:   \t\t 0\nGPU UUID: \t %s\nVideo BIOS: \t %s\nBus Type: \t PCIe\n"
               "DMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\nBus Location: \t %s\nDevice Minor: \t %d\n"
               "GPU Firmware: \t N/A\nGPU Excluded:\t No\n"
               % (g["name"], g["uuid"], g.get("vbios", "??.??.??.??.??"), bdf, index), 0o444)
        m = state_of(host, bdf)
        if not m or m["mode"] != "Enabled":
            continue
        for gi in m["gpu_instances"]:
            t.file("dev/nvidia-caps/nvidia-cap%d" % gi_minor(index, gi["id"]), b"", 0o444)
            for ci in gi.get("compute_instances") or []:
                t.file("dev/nvidia-caps/nvidia-cap%d" % ci_minor(index, gi["id"], ci["id"]), b"", 0o444)


def table_of(host, bdf):
    return profile_table(host.static(bdf)["device"])
