"""MIG GPU instance profile tables of real cards, keyed by PCI device id (the one place the simulator
keeps them; the fake ``nvidia-smi mig -lgip``/``-lgipp`` answer from them).

Each row: (profile id, name, instances per GPU, memory GiB as ``nvidia-smi`` prints it, SM, DEC, ENC,
CE, JPEG, OFA, placement starts, memory slices). Compute slices are the name's ``<n>g``; a placement is
``start:memory slices`` on the 8 memory slices.

Sources (facts only, no text copied):
- Profile ids, names, instance counts, placements: NVIDIA Multi-Instance GPU User Guide, "Supported MIG
  Profiles" (A100 and H100 tables) and "Getting Started with MIG" (``nvidia-smi mig -lgip`` and
  ``-lgipp`` of an A100-SXM4-40GB), https://docs.nvidia.com/datacenter/tesla/mig-user-guide/ .
- Device ids: the pci.ids database (20b0 A100 SXM4 40GB, 20b1 A100 PCIe 40GB, 20b2 A100 SXM4 80GB, 20b5
  A100 PCIe 80GB, 20f1 A100 PCIe 40GB, 20b7 A30, 2330 H100 SXM5 80GB, 2331 H100 PCIe, 2335 H200 SXM 141GB,
  233b H200 NVL) and NVIDIA/mig-parted's deployments/systemd/config-default.yaml, whose device filters group
  0x20B0/0x20B1/0x20F1 as "A100-40GB", 0x2330/0x2331 as "H100-80GB" and 0x2335/0x233B as "H200 141GB, H200 NVL".
- H200 (2335, 233b): the real capture tests/captures/nvidia-h200-580.159.04 (``nvidia-smi mig -lgip`` and
  ``-lgipp`` of an H200 SXM, driver 580.159.04); mig-parted groups the H200 NVL with it.
- A30 (20b7): 4 memory slices and 4 compute slices (NVIDIA MIG User Guide, "A30 MIG Profiles"); ids, memory,
  engines and placements from a published ``nvidia-smi mig -lgip``/``-lgipp`` capture of an A30 24GB (driver
  535.183.01: 1g.6gb id 14 {0,1,2,3}:1, 1g.6gb+me 21, 2g.12gb 5 {0,2}:2, 2g.12gb+me 6, 4g.24gb 0 {0}:4).
- Memory GiB and engine counts (SM/DEC/ENC/CE/JPEG/OFA) as the driver reports them: the user guide's
  A100-40GB ``-lgip`` listing (R525+ drivers, with 1g.10gb id 15); published ``nvidia-smi mig -lgip``
  captures of an H100 80GB HBM3 (SXM5, 132 SMs) and an H100 PCIe (driver 570.169, 114 SMs) and of an
  A100 80GB. The values move slightly between driver releases (e.g. 9.75 vs 9.62 GiB); tests should
  compare with the table, not with constants of their own.
"""

_A1 = (0, 1, 2, 3, 4, 5, 6)
_A2 = (0, 2, 4, 6)
_B2 = (0, 2, 4)
_A4 = (0, 4)

A100_40GB = (
    (19, "1g.5gb", 7, "4.75", 14, 0, 0, 1, 0, 0, _A1, 1),
    (20, "1g.5gb+me", 1, "4.75", 14, 1, 0, 1, 1, 1, _A1, 1),
    (15, "1g.10gb", 4, "9.62", 14, 1, 0, 1, 0, 0, _A2, 2),
    (14, "2g.10gb", 3, "9.62", 28, 1, 0, 2, 0, 0, _B2, 2),
    (9, "3g.20gb", 2, "19.50", 42, 2, 0, 3, 0, 0, _A4, 4),
    (5, "4g.20gb", 1, "19.50", 56, 2, 0, 4, 0, 0, (0,), 4),
    (0, "7g.40gb", 1, "39.25", 98, 5, 0, 7, 1, 1, (0,), 8),
)

A100_80GB = (
    (19, "1g.10gb", 7, "9.50", 14, 0, 0, 1, 0, 0, _A1, 1),
    (20, "1g.10gb+me", 1, "9.50", 14, 1, 0, 1, 1, 1, _A1, 1),
    (15, "1g.20gb", 4, "19.50", 14, 1, 0, 1, 0, 0, _A2, 2),
    (14, "2g.20gb", 3, "19.50", 28, 1, 0, 2, 0, 0, _B2, 2),
    (9, "3g.40gb", 2, "39.25", 42, 2, 0, 3, 0, 0, _A4, 4),
    (5, "4g.40gb", 1, "39.25", 56, 2, 0, 4, 0, 0, (0,), 4),
    (0, "7g.80gb", 1, "79.00", 98, 5, 0, 7, 1, 1, (0,), 8),
)

H100_SXM5_80GB = (
    (19, "1g.10gb", 7, "9.75", 16, 1, 0, 1, 1, 0, _A1, 1),
    (20, "1g.10gb+me", 1, "9.75", 16, 1, 0, 1, 1, 1, _A1, 1),
    (15, "1g.20gb", 4, "19.62", 26, 1, 0, 1, 1, 0, _A2, 2),
    (14, "2g.20gb", 3, "19.62", 32, 2, 0, 2, 2, 0, _B2, 2),
    (9, "3g.40gb", 2, "39.50", 60, 3, 0, 3, 3, 0, _A4, 4),
    (5, "4g.40gb", 1, "39.50", 64, 4, 0, 4, 4, 0, (0,), 4),
    (0, "7g.80gb", 1, "79.25", 132, 7, 0, 8, 7, 1, (0,), 8),
)

H100_PCIE_80GB = (
    (19, "1g.10gb", 7, "9.75", 14, 1, 0, 1, 1, 0, _A1, 1),
    (20, "1g.10gb+me", 1, "9.75", 14, 1, 0, 1, 1, 1, _A1, 1),
    (15, "1g.20gb", 4, "19.62", 14, 1, 0, 1, 1, 0, _A2, 2),
    (14, "2g.20gb", 3, "19.62", 30, 2, 0, 2, 2, 0, _B2, 2),
    (9, "3g.40gb", 2, "39.50", 46, 3, 0, 3, 3, 0, _A4, 4),
    (5, "4g.40gb", 1, "39.50", 62, 4, 0, 4, 4, 0, (0,), 4),
    (0, "7g.80gb", 1, "79.25", 114, 7, 0, 8, 7, 1, (0,), 8),
)

H200_141GB = (
    (19, "1g.18gb", 7, "16.00", 16, 1, 0, 1, 1, 0, _A1, 1),
    (20, "1g.18gb+me", 1, "16.00", 16, 1, 0, 1, 1, 1, _A1, 1),
    (15, "1g.35gb", 4, "32.50", 26, 1, 0, 1, 1, 0, _A2, 2),
    (14, "2g.35gb", 3, "32.50", 32, 2, 0, 2, 2, 0, _B2, 2),
    (9, "3g.71gb", 2, "69.75", 60, 3, 0, 3, 3, 0, _A4, 4),
    (5, "4g.71gb", 1, "69.75", 64, 4, 0, 4, 4, 0, (0,), 4),
    (0, "7g.141gb", 1, "140.00", 132, 7, 0, 8, 7, 1, (0,), 8),
)

# the A30 splits into 4 memory slices and 4 compute slices (its largest profile, 4g.24gb, takes them all)
A30_24GB = (
    (14, "1g.6gb", 4, "5.81", 14, 1, 0, 1, 0, 0, (0, 1, 2, 3), 1),
    (21, "1g.6gb+me", 1, "5.81", 14, 1, 0, 1, 1, 1, (0, 1, 2, 3), 1),
    (5, "2g.12gb", 2, "11.69", 28, 2, 0, 2, 0, 0, (0, 2), 2),
    (6, "2g.12gb+me", 1, "11.69", 28, 2, 0, 2, 1, 1, (0, 2), 2),
    (0, "4g.24gb", 1, "23.44", 56, 4, 0, 4, 1, 1, (0,), 4),
)

BY_DEVICE = {
    0x20b0: A100_40GB,        # A100 SXM4 40GB
    0x20b1: A100_40GB,        # A100 PCIe 40GB
    0x20f1: A100_40GB,        # A100 PCIe 40GB
    0x20b7: A30_24GB,         # A30
    0x2335: H200_141GB,       # H200 SXM 141GB
    0x233b: H200_141GB,       # H200 NVL
    0x20b2: A100_80GB,        # A100 SXM4 80GB
    0x20b5: A100_80GB,        # A100 PCIe 80GB
    0x2330: H100_SXM5_80GB,   # H100 SXM5 80GB
    0x2331: H100_PCIE_80GB,   # H100 PCIe
}

COMPUTE_SLICES = 7
MEMORY_SLICES = 8


def compute_slices(table):
    """The compute slices of the card: those of its whole-GPU profile (7 on A100/H100/H200, 4 on the A30)."""
    return max(p["compute_slices"] for p in table) if table else COMPUTE_SLICES


def profiles(device_id):
    """The card's profile rows as dicts, or None when the simulator has no table for it."""
    table = BY_DEVICE.get(device_id)
    if table is None:
        return None
    keys = ("id", "name", "total", "memory_gib", "sm", "dec", "enc", "ce", "jpeg", "ofa", "starts", "size")
    out = []
    for row in table:
        p = dict(zip(keys, row))
        p["compute_slices"] = int(p["name"].split("g.", 1)[0])
        out.append(p)
    return out


def _span(placement):
    start, size = (int(x) for x in str(placement).split(":"))
    return set(range(start, start + size))


def free_count(profile, table, gpu_instances):
    """How many more instances of ``profile`` fit beside ``gpu_instances`` ([{profile_id, placement}]):
    its placements whose memory slices are all free, bounded by the compute slices left and by the
    profile's own instance limit (the ``+me`` profiles: one per GPU)."""
    used_mem = set()
    used_compute = 0
    same = 0
    slices = {p["id"]: p["compute_slices"] for p in table}
    for gi in gpu_instances:
        used_mem |= _span(gi["placement"])
        used_compute += slices.get(gi["profile_id"], 0)
        same += gi["profile_id"] == profile["id"]
    fit = sum(1 for s in profile["starts"] if not set(range(s, s + profile["size"])) & used_mem)
    fit = min(fit, (compute_slices(table) - used_compute) // profile["compute_slices"], profile["total"] - same)
    return max(fit, 0)
