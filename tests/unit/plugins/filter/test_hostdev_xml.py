# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""hostdev_xml and hostdev_units filters on real discovery of simulated lab hosts (mdev GPU, NVIDIA
vendor-VFIO GPU, SR-IOV NIC); every snippet validated by libvirt's schema and test driver."""

from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
for _path in (os.path.join(HERE, "..", "module_utils"), os.path.join(HERE, "..", "..", "..", "simulator")):
    if os.path.abspath(_path) not in sys.path:
        sys.path.insert(0, os.path.abspath(_path))

from libvirt_xml import assert_libvirt_keeps, assert_valid  # noqa: E402  pylint: disable=wrong-import-position

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.filter.hostdev_units import hostdev_units  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.filter.hostdev_xml import hostdev_xml  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

MDEV = "4b20d080-1b54-4048-85b3-a6a62d165c01"


def _discover(root):
    return discover(Sysfs(root=root), families=None, vendor_ids=None, addresses=None, include_all=False,
                    libvirt_run_dir="/run/libvirt/qemu", nvidia_smi="never", pci_ids_path=None, in_use=True,
                    registry=None)


@pytest.fixture(scope="module")
def labs(fork_shared):
    return fork_shared("hostdev-xml-labs", _discover_labs)


def _discover_labs(where):
    mdev = accelsim.render_tree("gpu-mdev", os.path.join(where, "mdev"))
    vendor = accelsim.render_tree("gpu-vendor-vfio", os.path.join(where, "vendor"))
    with vendor.transaction() as host:
        host.set_numvfs("0000:3b:00.0", "32")
    with vendor.transaction() as host:
        for vf in ("0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6"):
            host.set_vgpu_type(vf, "1141")
    nic = accelsim.render_tree("nic-sriov", os.path.join(where, "nic"))
    with nic.transaction() as host:
        host.set_numvfs("0000:d8:00.0", "2")
        host.set_numvfs("0000:d8:00.1", "2")
    return {"mdev": _discover(mdev.root), "vendor": _discover(vendor.root), "nic": _discover(nic.root)}


def test_a_result_gives_one_snippet_per_assignable_unit(labs, tmp_path):
    snippets = hostdev_xml(labs["mdev"])
    assert snippets == [hostdev_xml(MDEV)]  # the T4 itself hosts the vGPU: not assignable
    vendor = hostdev_xml(labs["vendor"])
    assert len(vendor) == 3 and all("managed='no'" in s for s in vendor)
    nic = hostdev_xml(labs["nic"]["accelerators"])
    assert len(nic) == 4 and all("type='pci' managed='yes'" in s for s in nic)
    everything = snippets + vendor + nic
    assert_valid(everything, tmp_path)
    assert_libvirt_keeps(everything, tmp_path)


def test_input_forms_and_return_types(labs):
    records = labs["vendor"]["accelerators"]
    vf = [r for r in records if r["address"] == "0000:3b:00.5"][0]
    one = hostdev_xml(labs["vendor"], unit="0000:3b:00.5")
    assert isinstance(one, str) and one.startswith("<hostdev ") and one.endswith("</hostdev>")
    assert hostdev_xml(vf) == [one]  # a record gives a list
    assert hostdev_xml(records, unit="3B:00.5") == one
    listed = hostdev_units(labs["vendor"], ids=["0000:3b:00.5"])[0]
    assert hostdev_xml(listed) == one  # a listed unit keeps what rendering needs (vendor VFIO)
    assert hostdev_xml(vf["units"][0]) == one.replace("managed='no'", "managed='yes'")  # a bare unit cannot know
    assert hostdev_xml("0000:3b:00.5", managed="no") == one


def test_unit_picks_any_unit_even_a_parent(labs, tmp_path):
    t4 = hostdev_xml(labs["mdev"], unit="0000:18:00.0", managed=True, rom_bar="off",
                     guest_address="0000:00:05.0")
    assert "managed='yes'" in t4 and "<rom bar='off'/>" in t4
    mdev = hostdev_xml(labs["mdev"], unit=MDEV.upper(), display="on", ramfb="on")
    assert "display='on' ramfb='on'" in mdev
    assert_valid([t4, mdev], tmp_path)
    assert_libvirt_keeps([t4, mdev], tmp_path)


def test_hostdev_units_selects_and_names(labs):
    vfs = hostdev_units(labs["nic"], addresses=["0000:d8:00.1"])
    assert [(u["id"], u["kind"], u["name"]) for u in vfs] == [
        ("0000:d8:0a.0", "vf", "pci_0000_d8_0a_0"), ("0000:d8:0a.1", "vf", "pci_0000_d8_0a_1")]
    assert [u["id"] for u in hostdev_units(labs["vendor"], functions=["1141"], kinds=["vf"])] == \
        ["0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6"]
    parents = hostdev_units(labs["nic"], kinds=["device"], assignable_only=False)
    assert [u["why_not"] for u in parents] == ["parent of 2 VFs", "parent of 2 VFs"]
    assert hostdev_units(labs["mdev"], families=["nic"]) == []


@pytest.mark.parametrize("data_key, call, message", [
    (None, lambda d: hostdev_xml("0000:3b:00.9"), "hostdev_xml: address: '0000:3b:00.9' has function 9, above 7; "
                                                  "expected a PCI address DDDD:BB:SS.F"),
    (None, lambda d: hostdev_xml("enp216s0f0"), "'enp216s0f0' is neither a PCI address"),
    ("nic", lambda d: hostdev_xml(d, unit="0000:d8:0b.0"),
     "hostdev_xml: unit: 0000:d8:0b.0 is not a unit of the given discovery data (its units: 0000:d8:00.0"),
    ("mdev", lambda d: hostdev_xml(d, unit="0000:18:00"), "unit: '0000:18:00' is not a unit id; expected a PCI"),
    ("nic", lambda d: hostdev_xml(d, rom_bar="disabled"), "hostdev_xml: rom_bar: expected on or off"),
    ("nic", lambda d: hostdev_xml(d, guest_adress="00:05.0"), "hostdev_xml: unknown option guest_adress; accepted "
                                                              "options: unit, managed"),
    ("vendor", lambda d: hostdev_xml(d, unit="0000:3b:00.4", managed="yes"), "managed: yes is not possible for "
                                                                             "NVIDIA vendor-VFIO VF 0000:3b:00.4"),
    ("mdev", lambda d: hostdev_xml(d, display="sometimes"), "display: expected on or off"),
    ("nic", lambda d: hostdev_xml(d, display="on"), "display: applies to mdev units"),
    (None, lambda d: hostdev_xml(12), "hostdev_xml: expected a discovery result"),
    ("nic", lambda d: hostdev_units(d, ids=["0000:d8:0b.0"]), "hostdev_units: ids: 0000:d8:0b.0 is not a unit"),
    ("nic", lambda d: hostdev_units(d, addresses=["d8:00"]), "hostdev_units: addresses: 'd8:00' is not a PCI"),
    ("nic", lambda d: hostdev_units(d, families=["nics"]), "families: 'nics' is not a family"),
    ("nic", lambda d: hostdev_units(d, assignable_only="no"), "assignable_only: expected a boolean"),
    ("nic", lambda d: hostdev_units(d, kind=["vf"]), "hostdev_units: unknown option kind; accepted options: ids"),
])
def test_bad_input_is_refused_clearly(labs, data_key, call, message):
    with pytest.raises(AnsibleFilterError) as e:
        call(labs[data_key] if data_key else None)
    assert message in str(e.value)


def test_a_list_of_units_is_rendered_as_selected(labs, tmp_path):
    chosen = hostdev_units(labs["mdev"], assignable_only=False)
    snippets = hostdev_xml(chosen, rom_bar="off", display="on")
    assert [s.split("'")[3] for s in snippets] == ["pci", "mdev"]  # the parent too: it was asked for
    assert "<rom bar='off'/>" in snippets[0] and "display='on'" in snippets[1]
    assert_valid(snippets, tmp_path)
    assert_libvirt_keeps(snippets, tmp_path)
