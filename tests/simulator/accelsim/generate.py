"""Large synthetic hosts for benchmarks: many SR-IOV NIC PFs with VFs enabled, SR-IOV vGPU GPUs with
VFs enabled, DFL FPGAs and QAT endpoints, each card behind its own root port."""

from .kernel import Host, new_state
from .model import format_bdf, normalize_lab
from .render import write_tree
from .store import StateStore


def _root_port(bdf, bus, width=16):
    return {"bdf": bdf, "vendor": 0x8086, "device": 0x2030, "class": 0x060400, "revision": 0x04, "driver": "pcieport",
            "numa_node": bus % 2, "iommu_group": 0, "link": {"speed": "8.0 GT/s PCIe", "width": width}}


def synthetic_lab(pfs=16, vfs=128, gpus=8, fpgas=8, qats=8):
    """A lab dict plus the VF counts to enable: (lab, {pf: numvfs})."""
    if not 0 <= vfs <= 247:
        raise ValueError("--vfs must be between 0 and 247 (VFs share the PF's bus)")
    functions = [
        {"bdf": "0000:00:00.0", "vendor": 0x8086, "device": 0x2020, "subsystem_vendor": 0x15d9, "subsystem_device": 0x095d,
         "class": 0x060000, "revision": 0x04, "numa_node": 0, "iommu_group": 0},
        {"bdf": "0000:00:17.0", "vendor": 0x8086, "device": 0xa182, "subsystem_vendor": 0x15d9, "subsystem_device": 0x095d,
         "class": 0x010601, "revision": 0x09, "driver": "ahci", "numa_node": 0, "iommu_group": 0},
    ]
    enable = {}
    bus = 0x10
    slot = 0
    cards = [("nic", i) for i in range(pfs)] + [("gpu", i) for i in range(gpus)] + [("fpga", i) for i in range(fpgas)] + \
            [("qat", i) for i in range(qats)]
    if len(cards) > 0xEF:
        raise ValueError("too many cards for one PCI segment")
    for kind, i in cards:
        rp = format_bdf(0, 0, 1 + slot // 8, slot % 8)
        slot += 1
        functions.append(_root_port(rp, bus))
        bdf = format_bdf(0, bus, 0, 0)
        f = {"bdf": bdf, "parent": rp, "numa_node": bus % 2, "iommu_group": 0, "irq": 32 + slot,
             "link": {"speed": "16.0 GT/s PCIe", "width": 16}}
        if kind == "nic":
            f.update(vendor=0x8086, device=0x1592, subsystem_vendor=0x8086, subsystem_device=0x0002, class_=0x020000, revision=0x02,
                     driver="ice", net=[{"name": "ens%df0" % (bus,)}],
                     sriov={"totalvfs": 256 if vfs > 0 else 0, "vf_device": 0x1889, "offset": 8, "stride": 1, "vf_driver": "iavf"})
            if vfs:
                f["sriov"]["totalvfs"] = max(vfs, 8)
                enable[bdf] = vfs
        elif kind == "gpu":
            f.update(vendor=0x10de, device=0x26b5, subsystem_vendor=0x10de, subsystem_device=0x169d, class_=0x030200, revision=0xa1,
                     driver="nvidia", sriov={"totalvfs": 32, "vf_device": 0x26b5, "offset": 4, "stride": 1, "vf_driver": "nvidia"},
                     gpu={"name": "NVIDIA L40", "uuid": "GPU-00000000-0000-0000-0000-%012x" % i, "memory_mib": 46068},
                     vgpu={"single_type": True, "types": [{"id": 1140, "name": "NVIDIA L40-1Q", "max_instances": 32},
                                                          {"id": 1145, "name": "NVIDIA L40-8Q", "max_instances": 6}]})
            enable[bdf] = 32
        elif kind == "fpga":
            f.update(vendor=0x8086, device=0x0b2b, subsystem_vendor=0x8086, subsystem_device=0x0000, class_=0x120000, revision=0x01,
                     driver="dfl-pci", sriov={"totalvfs": 1, "vf_device": 0x0b2c, "offset": 1, "stride": 1, "vf_driver": "vfio-pci"},
                     fpga={"layout": "dfl", "index": i, "interface_id": "9346116df8f65a1ba2b6f1ec3a8a0b5e",
                           "afu_id": "9aeffe5f84570612c000c9660d824272"})
            enable[bdf] = 1
        else:
            f.update(vendor=0x8086, device=0x37c8, subsystem_vendor=0x8086, subsystem_device=0x0001, class_=0x0b4000, revision=0x04,
                     driver="c6xx", sriov={"totalvfs": 16, "vf_device": 0x37c9, "offset": 8, "stride": 1, "vf_driver": "c6xxvf"})
            enable[bdf] = 16
        f["class"] = f.pop("class_")
        functions.append(f)
        bus += 1
    for n, f in enumerate(functions):
        f["iommu_group"] = n
    lab = {"name": "synthetic", "description": "synthetic benchmark host", "hostname": "sim-synthetic", "cpus": 128,
           "numa": {0: "0-31,64-95", 1: "32-63,96-127"}, "nvidia": {"driver_version": "550.90.05"}, "functions": functions}
    return normalize_lab(lab), enable


def generate(dest, pfs=16, vfs=128, gpus=8, fpgas=8, qats=8):
    """Render a synthetic host under ``dest``; returns the number of PCI functions."""
    lab, enable = synthetic_lab(pfs, vfs, gpus, fpgas, qats)
    state = new_state(lab)
    host = Host(state)
    for pf, n in enable.items():
        host.set_numvfs(pf, str(n))
    store = StateStore.create(lab, dest.rstrip("/") + "/.accelsim", "tree", dest)
    state["mode"], state["root"] = "tree", store.load()["root"]
    with store._locked():  # pylint: disable=protected-access
        store._save(state)  # pylint: disable=protected-access
    write_tree(host, dest, store.dir)
    return len(host.bdfs())
