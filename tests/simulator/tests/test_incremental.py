"""The FUSE daemon's incremental rebuild (tree.update) gives exactly the tree a full build gives, after every
kind of state change: VFs coming and going, bindings, overrides, mdevs, vGPU types, FPGA/Alveo programming,
domains and processes, reboot."""

import copy

import pytest

from accelsim.generate import synthetic_lab
from accelsim.kernel import Host, domain_xml, new_state
from accelsim.model import load_lab
from accelsim.tree import build, update

T4 = "0000:18:00.0"
L40 = "0000:3b:00.0"
NIC = "0000:d8:00.0"
NIC1 = "0000:d8:00.1"
UUID1 = "11111111-2222-3333-4444-555555555555"
UUID2 = "21111111-2222-3333-4444-555555555555"


def _same(a, b):
    """Assert two trees are identical: paths, kinds, bytes, modes, write handlers, directory listings."""
    assert set(a.nodes) == set(b.nodes), (sorted(set(a.nodes) - set(b.nodes))[:5], sorted(set(b.nodes) - set(a.nodes))[:5])
    for path, n in a.nodes.items():
        m = b.nodes[path]
        assert (n.kind, n.data, n.mode, n.handler) == (m.kind, m.data, m.mode, m.handler), path
    assert {k: v for k, v in a.children.items() if k in a.nodes and a.nodes[k].kind == "d"} == \
        {k: v for k, v in b.children.items() if k in b.nodes and b.nodes[k].kind == "d"}


class Stepper(object):
    """Applies kernel operations to a state and checks the incrementally updated tree after each."""

    def __init__(self, lab):
        self.state = new_state(lab)
        self.tree = build(Host(self.state))
        self.steps = 0

    def __call__(self, op):
        old = Host(copy.deepcopy(self.state))
        op(Host(self.state))
        new = Host(copy.deepcopy(self.state))
        self.tree = update(self.tree, old, new)
        _same(self.tree, build(new))
        self.steps += 1


def test_lab_all_every_kind_of_change():
    s = Stepper(load_lab("lab-all"))
    s(lambda h: h.set_numvfs(NIC, "8"))
    s(lambda h: h.set_numvfs(NIC1, "4"))                       # VFs of two PFs interleave in slots
    s(lambda h: h.set_vf(NIC, 1, "mac", "52:54:00:00:00:01"))    # the VF's netdev takes the MAC
    s(lambda h: h.set_vf(NIC, 1, "trust", True))
    s(lambda h: h.set_driver_override("0000:d8:02.1", "vfio-pci"))
    s(lambda h: h.unbind("iavf", "0000:d8:02.1"))
    s(lambda h: h.drivers_probe("0000:d8:02.1"))
    s(lambda h: h.set_numvfs(NIC, "0"))
    s(lambda h: h.mdev_create(T4, "nvidia-231", UUID1))
    s(lambda h: h.mdev_create(T4, "nvidia-231", UUID2))
    s(lambda h: h.mdev_remove(UUID1, "1"))
    s(lambda h: h.set_numvfs(L40, "32"))
    s(lambda h: h.set_vgpu_type("0000:3b:00.4", "1145"))        # single type: the other VFs' creatable types change
    s(lambda h: h.set_vgpu_type("0000:3b:00.5", "1145"))
    s(lambda h: h.set_vgpu_type("0000:3b:00.4", "0"))
    s(lambda h: h.add_domain("instance-1", domain_xml("instance-1", [{"pci": "0000:d8:02.1"}, {"mdev": UUID2}])))
    s(lambda h: h.add_process("qemu-kvm", ["/dev/vfio/300"]))
    s(lambda h: h.remove_domain("instance-1"))
    fpga = sorted(Host(s.state).state["fpga"])[0]
    iface = Host(s.state).state["fpga"][fpga]["interface_id"]
    s(lambda h: h.fpga_program(fpga, iface, "11112222333344445555666677778888"))
    mgmt = sorted(Host(s.state).state["alveo"])[0]
    a = Host(s.state).state["alveo"][mgmt]
    s(lambda h: h.alveo_load_xclbin(mgmt, a["interface_uuid"], "12345678-1234-1234-1234-123456789abc"))
    s(lambda h: h.unbind(h.driver_of(T4), T4))                  # an mdev parent goes away with its mdevs
    s(lambda h: h.reboot())
    s(lambda h: h.set_numvfs(L40, "32"))
    assert s.steps == 23


@pytest.mark.parametrize("pfs,vfs", [(2, 16)])
def test_synthetic_nic_converge(pfs, vfs):
    lab, _enable = synthetic_lab(pfs=pfs, vfs=vfs, gpus=1, fpgas=1, qats=1)
    s = Stepper(lab)
    pf = [f["bdf"] for f in lab["functions"] if f.get("net")][0]
    s(lambda h: h.set_numvfs(pf, str(vfs)))
    for vf in Host(s.state).vfs(pf)[:3]:
        s(lambda h, vf=vf: h.set_driver_override(vf, "vfio-pci"))
        s(lambda h, vf=vf: h.unbind("iavf", vf))
        s(lambda h, vf=vf: h.drivers_probe(vf))
    s(lambda h: h.set_numvfs(pf, "0"))


def test_no_change_keeps_the_tree():
    state = new_state(load_lab("nic-sriov"))
    tree = build(Host(state))
    assert update(tree, Host(copy.deepcopy(state)), Host(state)) is tree


def test_vfs_on_the_next_bus_change_the_bridge():
    """VFs past the PF's bus widen the root port's subordinate bus number (its config space changes)."""
    lab, _enable = synthetic_lab(pfs=1, vfs=8, gpus=0, fpgas=0, qats=0)
    nic = [f for f in lab["functions"] if f.get("net")][0]
    nic["sriov"].update(totalvfs=200, offset=128)
    s = Stepper(load_lab(lab))
    s(lambda h: h.set_numvfs(nic["bdf"], "200"))
    assert max(Host(s.state).vfs(nic["bdf"]))[5:7] != nic["bdf"][5:7]
    s(lambda h: h.set_numvfs(nic["bdf"], "0"))
