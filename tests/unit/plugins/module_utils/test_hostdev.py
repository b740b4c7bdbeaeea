# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_hostdev: units from real discovery of a simulated lab host, selection, and XML that libvirt accepts.

Every rendered snippet is validated against libvirt's RelaxNG schema and defined in libvirt's test driver,
which must format it back unchanged (libvirt_xml.py; the tools are required, not optional).
"""

from __future__ import annotations

import os

import pytest

from libvirt_xml import assert_libvirt_keeps, assert_valid, define, relaxng_errors

from ansible_collections.accelops.lifecycle.plugins.module_utils import _hostdev
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

T4 = "0000:18:00.0"
T4_MDEV = "4b20d080-1b54-4048-85b3-a6a62d165c01"
L40 = "0000:3b:00.0"
X710 = "0000:d8:00.0"


@pytest.fixture(scope="module")
def lab(fork_shared):
    """Discovery of lab-all with 4 X710 VFs (vfio-pci), the L40's 32 VFs, two of them with vGPU type 1145."""
    return fork_shared("hostdev-lab-all", _lab_all_discovered)


def _lab_all_discovered(where):
    h = accelsim.render_tree("lab-all", os.path.join(where, "root"))
    with h.transaction() as host:
        host.set_numvfs(X710, "4")
        host.set_numvfs(L40, "32")
    with h.transaction() as host:
        host.set_vgpu_type("0000:3b:00.4", "1145")
        host.set_vgpu_type("0000:3b:00.5", "1145")
    return discover(Sysfs(root=h.root), families=None, vendor_ids=None, addresses=None, include_all=False,
                    libvirt_run_dir="/run/libvirt/qemu", nvidia_smi="never", pci_ids_path=None, in_use=True,
                    registry=None)


@pytest.fixture
def units(lab):
    return _hostdev.collect_units(lab)


def by_id(units, uid):
    return [u for u in units if u["id"] == uid][0]


def render_one(unit, **options):
    return _hostdev.render_units([unit], options)[0]


# ------------------------------------------------------------------------------------------ values

@pytest.mark.parametrize("text, expected", [
    ("0000:3b:00.4", (0, 0x3B, 0, 4)),
    ("3b:00.4", (0, 0x3B, 0, 4)),
    (" 0000:3B:1F.7 ", (0, 0x3B, 0x1F, 7)),
    ("10000:01:00.0", (0x10000, 1, 0, 0)),
])
def test_pci_addresses_parse(text, expected):
    assert _hostdev.parse_pci_address(text) == expected


@pytest.mark.parametrize("text, why", [
    ("0000:3b:00.8", "function 8, above 7"),
    ("0000:3b:20.0", "slot 0x20, above 0x1f"),
    ("0000:3b:00", "is not a PCI address"),
    ("eth0", "is not a PCI address"),
    ("0000:3g:00.0", "is not a PCI address"),
    ("123456789:00:00.0", "is not a PCI address"),
    (None, "got NoneType"),
])
def test_bad_pci_addresses_are_refused_with_the_form(text, why):
    with pytest.raises(_hostdev.HostdevError) as e:
        _hostdev.parse_pci_address(text, "address")
    assert why in str(e.value)
    assert "DDDD:BB:SS.F" in str(e.value) and str(e.value).startswith("address:")


def test_uuids_normalise_and_bad_ones_name_the_form():
    assert _hostdev.normalize_uuid(T4_MDEV.upper()) == T4_MDEV
    with pytest.raises(_hostdev.HostdevError, match="not an mdev UUID; expected an mdev UUID .8-4-4-4-12"):
        _hostdev.normalize_uuid("4b20d080-1b54-4048-85b3")


def test_options_normalise():
    got = _hostdev.check_options({"managed": False, "rom_bar": True, "display": "ON", "ramfb": "on",
                                  "guest_address": {"bus": "0x01", "slot": 5}, "rom_file": "/x.rom"})
    assert got == {"managed": "no", "rom_bar": "on", "display": "on", "ramfb": "on", "guest_address": (0, 1, 5, 0),
                   "rom_file": "/x.rom"}
    assert _hostdev.check_options({})["managed"] == "auto"


@pytest.mark.parametrize("options, message", [
    ({"manged": "yes"}, "unknown option manged; accepted options: managed, guest_address"),
    ({"managed": "maybe"}, "managed: expected auto, yes or no (or a boolean), got 'maybe'"),
    ({"rom_bar": "disabled"}, "rom_bar: expected on or off (or a boolean), got 'disabled'"),
    ({"display": 1}, "display: expected on or off (or a boolean), got 1"),
    ({"ramfb": "on"}, "ramfb: on needs display: on"),
    ({"ramfb": "on", "display": "off"}, "got display off"),
    ({"rom_file": "vbios.rom"}, "rom_file: expected an absolute path"),
    ({"rom_file": "/a\nb"}, "without control characters"),
    ({"guest_address": "00:05"}, "guest_address: '00:05' is not a PCI address"),
    ({"guest_address": {"slot": 32}}, "guest_address: slot 32 is not a number from 0 to 0x1f"),
    ({"guest_address": {"bus": "zz"}}, "guest_address: bus 'zz' is not a number"),
    ({"guest_address": {"port": 1}}, "guest_address: unknown keys port"),
])
def test_bad_options_are_refused(options, message):
    with pytest.raises(_hostdev.HostdevError) as e:
        _hostdev.check_options(options)
    assert message in str(e.value)


# ------------------------------------------------------------------------------------------ units

def test_units_of_the_lab_carry_kind_family_and_flags(units):
    t4, mdev = by_id(units, T4), by_id(units, T4_MDEV)
    assert (t4["kind"], t4["family"], t4["assignable"]) == ("device", "gpu", False)
    assert t4["why_not"] == "parent of mdevs " + T4_MDEV
    assert (mdev["kind"], mdev["address"], mdev["type"], mdev["assignable"]) == ("mdev", T4, "nvidia-231", True)
    assert mdev["name"] == "mdev_4b20d080_1b54_4048_85b3_a6a62d165c01"
    assert by_id(units, X710)["why_not"] == "parent of 4 VFs"
    assert by_id(units, L40)["why_not"] == "parent of 32 VFs"
    vf = by_id(units, "0000:d8:02.0")
    assert (vf["kind"], vf["physfn"], vf["vendor_vfio"], vf["assignable"]) == ("vf", X710, False, True)
    typed, untyped = by_id(units, "0000:3b:00.4"), by_id(units, "0000:3b:00.6")
    assert (typed["vendor_vfio"], typed["vgpu_type"], typed["assignable"]) == (True, "1145", True)
    assert typed["name"] == "pci_0000_3b_00_4"
    assert (untyped["vendor_vfio"], untyped["vgpu_type"]) == (True, None)
    assert untyped["why_not"] == "NVIDIA vendor-VFIO VF without a vGPU type"


def test_every_input_form_gives_the_same_units(lab, units):
    records = lab["accelerators"]
    assert _hostdev.collect_units(records) == units
    t4 = [r for r in records if r["address"] == T4][0]
    assert _hostdev.collect_units(t4) == [by_id(units, T4), by_id(units, T4_MDEV)]
    assert _hostdev.collect_units([t4, t4]) == _hostdev.collect_units(t4)  # no duplicates
    assert _hostdev.collect_units(by_id(units, "0000:3b:00.4")) == [by_id(units, "0000:3b:00.4")]
    assert _hostdev.collect_units("3B:00.4")[0]["id"] == "0000:3b:00.4"
    assert _hostdev.collect_units(T4_MDEV.upper())[0]["kind"] == "mdev"
    assert _hostdev.collect_units({"accelerators": []}) == []


@pytest.mark.parametrize("data, message", [
    (42, "expected a discovery result (with accelerators), a list of discovery records"),
    ({"name": "x"}, "got a dict with keys name"),
    ("eth0", "'eth0' is neither a PCI address"),
    ([{"kind": "vf", "id": "0000:3b:00.9"}], "item 0: id: '0000:3b:00.9' has function 9"),
    ([{"kind": "pf", "id": "0000:3b:00.1"}], "item 0: kind 'pf' is not a unit kind; expected one of device, vf"),
    ({"address": "0000:3b:00.0", "units": [{"kind": "mdev", "id": "nope"}]},
     "record 0000:3b:00.0: units[0]: id: 'nope' is not an mdev UUID"),
    ({"address": "0000:3b:00.0", "units": "x"}, "record 0000:3b:00.0: units must be a list"),
    ([3], "item 0: expected a discovery record (with units), a unit (with kind and id)"),
])
def test_bad_data_is_refused(data, message):
    with pytest.raises(_hostdev.HostdevError) as e:
        _hostdev.collect_units(data)
    assert message in str(e.value)


def test_selection(units):
    ids = [u["id"] for u in _hostdev.select_units(units)]
    assert T4 not in ids and X710 not in ids and L40 not in ids and "0000:3b:00.6" not in ids
    assert T4_MDEV in ids and "0000:3b:00.4" in ids and "0000:d8:02.3" in ids
    vfs = _hostdev.select_units(units, addresses=[X710])
    assert [u["id"] for u in vfs] == ["0000:d8:02.0", "0000:d8:02.1", "0000:d8:02.2", "0000:d8:02.3"]
    assert _hostdev.select_units(units, addresses=["d8:02.*"]) == vfs
    assert [u["id"] for u in _hostdev.select_units(units, addresses=[T4])] == [T4_MDEV]
    assert [u["id"] for u in _hostdev.select_units(units, families=["gpu"], kinds=["vf"])] == \
        ["0000:3b:00.4", "0000:3b:00.5"]
    assert [u["id"] for u in _hostdev.select_units(units, functions=["1145", "nvidia-231"])] == \
        [T4_MDEV, "0000:3b:00.4", "0000:3b:00.5"]
    # named ids are listed even when not assignable now
    assert [u["id"] for u in _hostdev.select_units(units, ids=[T4.upper(), "3b:00.6"])] == [T4, "0000:3b:00.6"]
    everything = _hostdev.select_units(units, assignable_only=False)
    assert everything == units


@pytest.mark.parametrize("selector, message", [
    ({"ids": ["0000:3b:09.0"]}, "ids: 0000:3b:09.0 is not a unit of the given discovery data (its units: "),
    ({"ids": ["eth0"]}, "ids: 'eth0' is not a unit id; expected a PCI address"),
    ({"ids": [T4_MDEV.replace("4b", "5b")]}, "is not a unit of the given discovery data"),
    ({"addresses": ["0000:3b:00"]}, "addresses: '0000:3b:00' is not a PCI address"),
    ({"families": ["tpu"]}, "families: 'tpu' is not a family; expected some of gpu, fpga, nic, qat, pci"),
    ({"kinds": ["pf"]}, "kinds: 'pf' is not a unit kind"),
    ({"functions": 3}, "functions: expected a list of strings, got int"),
])
def test_bad_selection_is_refused(units, selector, message):
    with pytest.raises(_hostdev.HostdevError) as e:
        _hostdev.select_units(units, **selector)
    assert message in str(e.value)


# ------------------------------------------------------------------------------------------ XML

def test_pci_and_mdev_have_novas_structure_in_libvirts_form(units):
    assert render_one(by_id(units, "0000:d8:02.1")) == (
        "<hostdev mode='subsystem' type='pci' managed='yes'>\n"
        "  <source>\n"
        "    <address domain='0x0000' bus='0xd8' slot='0x02' function='0x1'/>\n"
        "  </source>\n"
        "</hostdev>")
    assert render_one(by_id(units, T4_MDEV)) == (
        "<hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci'>\n"
        "  <source>\n"
        "    <address uuid='4b20d080-1b54-4048-85b3-a6a62d165c01'/>\n"
        "  </source>\n"
        "</hostdev>")


def test_vendor_vfio_vfs_are_unmanaged(units):
    assert "managed='no'" in render_one(by_id(units, "0000:3b:00.4"))
    assert "managed='no'" in render_one(by_id(units, "0000:3b:00.4"), managed="no")
    with pytest.raises(_hostdev.HostdevError, match="managed: yes is not possible for NVIDIA vendor-VFIO VF "
                                                    "0000:3b:00.4"):
        render_one(by_id(units, "0000:3b:00.4"), managed="yes")


def test_every_unit_of_the_lab_is_valid_and_kept_by_libvirt(units, tmp_path):
    snippets = _hostdev.render_units(units, {})
    assert len(snippets) == len(units) > 40
    assert_valid(snippets, tmp_path)
    assert_libvirt_keeps(snippets, tmp_path)


VARIANTS = [
    ("0000:d8:02.0", {"managed": "no"}),
    ("0000:d8:02.0", {"managed": "yes", "guest_address": "0000:00:05.0"}),
    ("0000:d8:02.0", {"rom_bar": "off"}),
    ("0000:d8:02.0", {"rom_bar": "on", "rom_file": "/usr/share/kvm/it's & <odd>.rom"}),
    ("0000:d8:02.0", {"rom_file": "/srv/roms/x710.rom", "guest_address": {"bus": 1, "slot": 0x1F, "function": 7}}),
    ("0000:3b:00.4", {"rom_bar": False, "guest_address": "00:06.0"}),
    (T4, {"managed": "yes"}),
    (T4_MDEV, {"display": "on"}),
    (T4_MDEV, {"display": "on", "ramfb": "on"}),
    (T4_MDEV, {"display": "off", "guest_address": "0000:00:07.0"}),
    ("0000:5e:00.0", {"rom_bar": "off"}),  # an FPGA
    ("0000:3d:00.0", {}),  # a QAT endpoint
]


@pytest.mark.parametrize("uid, options", VARIANTS)
def test_options_give_valid_xml_that_libvirt_keeps(units, tmp_path, uid, options):
    snippet = render_one(by_id(units, uid), **options)
    assert_valid([snippet], tmp_path)
    assert_libvirt_keeps([snippet], tmp_path)
    if "guest_address" in options:
        assert "  <address type='pci' domain='0x0000'" in snippet
    if options.get("rom_file"):
        assert "file='" in snippet and "&apos;" not in options["rom_file"]


def test_the_checks_catch_broken_xml(tmp_path):
    """Negative control: the validators used above do reject what libvirt rejects."""
    broken = ("<hostdev mode='subsystem' type='pci' managed='maybe'>\n  <source>\n"
              "    <address domain='0x0000' bus='0x3b' slot='0x20' function='0x0'/>\n  </source>\n</hostdev>")
    assert relaxng_errors([broken], tmp_path) != []
    out, err = define([broken.replace("maybe", "yes")], tmp_path)
    assert "Invalid PCI address slot='0x20'" in err and out == ""
    assert relaxng_errors(["<hostdev mode='subsystem' type='mdev'><source><address uuid='x'/></source></hostdev>"],
                          tmp_path) != []


@pytest.mark.parametrize("uids, options, message", [
    ([T4_MDEV], {"rom_bar": "off"}, "rom_bar: applies to PCI units (kind device or vf); got only mdevs"),
    (["0000:d8:02.0"], {"display": "on"}, "display: applies to mdev units; got only PCI units (0000:d8:02.0)"),
    ([T4_MDEV], {"managed": "no"}, "managed: applies to PCI units; mdev hostdevs are always managed='no'"),
    (["0000:d8:02.0", "0000:d8:02.1"], {"guest_address": "00:05.0"}, "guest_address: a guest PCI address fits one "
                                                                     "unit; got 2 units"),
])
def test_options_that_do_not_fit_the_units_are_refused(units, uids, options, message):
    with pytest.raises(_hostdev.HostdevError) as e:
        _hostdev.render_units([by_id(units, u) for u in uids], options)
    assert message in str(e.value)


def test_options_apply_to_the_units_they_fit_in_a_mixed_list(units, tmp_path):
    snippets = _hostdev.render_units([by_id(units, T4_MDEV), by_id(units, "0000:d8:02.0")],
                                     {"rom_bar": "off", "display": "on", "managed": "no"})
    assert "display='on'" in snippets[0] and "<rom" not in snippets[0]
    assert "<rom bar='off'/>" in snippets[1] and "managed='no'" in snippets[1] and "display" not in snippets[1]
    assert_valid(snippets, tmp_path)
    assert_libvirt_keeps(snippets, tmp_path)


def test_bridges_are_never_assignable(tmp_path):
    # with include_all every function lspci lists has a record, the root ports and bridges too
    h = accelsim.render_tree("lab-all", str(tmp_path / "root"))
    every = discover(Sysfs(root=h.root), families=None, vendor_ids=None, addresses=None, include_all=True,
                     libvirt_run_dir="/run/libvirt/qemu", nvidia_smi="never", pci_ids_path=None, in_use=True,
                     registry=None)
    bridges = [r["address"] for r in every["accelerators"] if str(r.get("class_id") or "").startswith("06")]
    assert bridges, "the lab has root ports"
    units = _hostdev.collect_units(every)
    for address in bridges:
        unit = by_id(units, address)
        assert not unit["assignable"] and unit["why_not"].startswith("PCI bridge (class 06"), unit
    kept = _hostdev.select_units(units)
    assert not [u for u in kept if u["id"] in bridges]
    assert [u for u in kept if u["kind"] == "device"], "other devices stay assignable"


def test_folded_vfs_are_units_of_the_default_discovery(lab):
    """accelerator_info's default (vf_detail: summary) folds VFs into their PF's record: each folded VF is a unit,
    as from the full form (the PF as physfn), not a refusal and not left out."""
    summary = discover(Sysfs(root=lab["host"]["root"]), nvidia_smi="never", vf_detail="summary")
    folded = [r for r in summary["accelerators"] if (r["sriov"] or {}).get("vf_units")]
    assert folded
    units = _hostdev.collect_units(summary)
    full = dict((u["id"], u) for u in _hostdev.collect_units(lab))
    vfs = [(r["address"], u["address"]) for r in folded for u in r["sriov"]["vf_units"] if u["kind"] == "vf"]
    for pf, vf in vfs:
        unit = by_id(units, vf)
        assert unit["physfn"] == pf == full[vf]["physfn"] and unit["assignable"] == full[vf]["assignable"]


# ------------------------------------------------------------------------------------------ IOMMU group viability

ALVEO_USER = "0000:af:00.1"
ALVEO_MGMT = "0000:af:00.0"


def _discover_lab(lab, root, include_all=False):
    h = accelsim.render_tree(lab, str(root))
    return discover(Sysfs(root=h.root), include_all=include_all, nvidia_smi="never", vf_detail="full")


def _alveo(root, mgmt_driver="xclmgmt"):
    """The xilinx-alveo lab with both PFs in one IOMMU group (no ACS between the functions of the card, as on
    hosts where VFIO refuses the user PF alone), the management PF bound to ``mgmt_driver``."""
    lab = accelsim.load_lab("xilinx-alveo")
    for f in lab["functions"]:
        if f["bdf"] in (ALVEO_USER, ALVEO_MGMT):
            f["iommu_group"] = 62
        if f["bdf"] == ALVEO_MGMT:
            f["driver"] = mgmt_driver
    return _discover_lab(lab, root)


def test_discovery_records_the_driver_of_every_group_member(tmp_path):
    found = _alveo(tmp_path / "root")
    user = [r for r in found["accelerators"] if r["address"] == ALVEO_USER][0]
    assert user["iommu_group_members"] == [ALVEO_MGMT, ALVEO_USER]
    assert user["iommu_group_drivers"] == {ALVEO_MGMT: "xclmgmt", ALVEO_USER: "xocl"}
    assert list(user)[list(user).index("iommu_group_members") + 1] == "iommu_group_drivers"


def test_an_alveo_user_pf_beside_its_xclmgmt_management_pf_is_not_assignable(tmp_path):
    units = _hostdev.collect_units(_alveo(tmp_path / "root"))
    user = by_id(units, ALVEO_USER)
    assert user["assignable"] is False
    assert user["why_not"] == (
        "IOMMU group 62 is not viable: it also holds 0000:af:00.0 bound to xclmgmt, and VFIO gives a guest a group "
        "only when every member is bound to vfio-pci, pci-stub or no driver; bind 0000:af:00.0 to vfio-pci or pass "
        "0000:af:00.0 with this unit")
    assert user["iommu_group_drivers"] == {ALVEO_MGMT: "xclmgmt", ALVEO_USER: "xocl"}
    assert _hostdev.select_units(units) == []
    # named, it is listed, with the reason
    assert _hostdev.select_units(units, ids=[ALVEO_USER]) == [user]


@pytest.mark.parametrize("driver", ["vfio-pci", "pci-stub", None, "mlx5_vfio_pci", "pcieport"])
def test_a_member_bound_to_a_vfio_driver_pci_stub_or_nothing_leaves_the_group_viable(tmp_path, driver):
    units = _hostdev.collect_units(_alveo(tmp_path / "root", mgmt_driver=driver))
    user = by_id(units, ALVEO_USER)
    assert (user["assignable"], user["why_not"]) == (True, None)
    assert ALVEO_USER in [u["id"] for u in _hostdev.select_units(units)]


def test_units_whose_group_members_are_selected_too_are_passed_together(tmp_path):
    """A GPU and its HDMI audio function share a group: neither alone, both together."""
    lab = accelsim.load_lab("xilinx-alveo")
    gpu = {"bdf": "0000:3b:00.0", "vendor": 0x10DE, "device": 0x1EB8, "class": 0x030000, "driver": "nvidia",
           "iommu_group": 80, "numa_node": 0}
    audio = {"bdf": "0000:3b:00.1", "vendor": 0x10DE, "device": 0x10F8, "class": 0x040300,
             "driver": "snd_hda_intel", "iommu_group": 80, "numa_node": 0}
    lab["functions"] += [gpu, audio]
    units = _hostdev.collect_units(_discover_lab(lab, tmp_path / "root", include_all=True))
    alone = by_id(units, "0000:3b:00.0")
    assert not alone["assignable"] and "0000:3b:00.1 bound to snd_hda_intel" in alone["why_not"]
    assert "0000:3b:00.0 bound to nvidia" in by_id(units, "0000:3b:00.1")["why_not"]
    # the GPUs alone (the audio function is family pci): held back
    assert not [u for u in _hostdev.select_units(units, families=["gpu"]) if u["id"].startswith("0000:3b:")]
    # every unit of the host, unnamed: each snippet stands alone, so the pair is held back
    assert not [u for u in _hostdev.select_units(units) if u["id"].startswith("0000:3b:")]
    both = _hostdev.select_units(units, addresses=["0000:3b:00.*"])
    assert [(u["id"], u["assignable"], u["why_not"]) for u in both] == \
        [("0000:3b:00.0", True, None), ("0000:3b:00.1", True, None)]
    assert [u["id"] for u in _hostdev.select_units(units, ids=["0000:3b:00.0", "0000:3b:00.1"])] == \
        ["0000:3b:00.0", "0000:3b:00.1"]
    # one of them only: still held back by the other, listed only when named
    assert _hostdev.select_units(units, addresses=["0000:3b:00.0"]) == []
    named = _hostdev.select_units(units, ids=["0000:3b:00.0"])
    assert named == [alone]
    # a member that is selected but cannot be passed itself does not count
    parent = dict(by_id(units, "0000:3b:00.1"), assignable=False, why_not="parent of 4 VFs")
    assert [u["assignable"] for u in _hostdev.select_units([alone, parent], assignable_only=False)] == [False, False]
    # the snippets of the pair are valid and kept by libvirt
    snippets = _hostdev.render_units(both, {})
    assert_valid(snippets, tmp_path)
    assert_libvirt_keeps(snippets, tmp_path)


def test_records_without_group_drivers_keep_the_old_answer(tmp_path):
    found = _alveo(tmp_path / "root")
    for record in found["accelerators"]:
        del record["iommu_group_drivers"]  # as accelerator_info recorded them before the key existed
    user = by_id(_hostdev.collect_units(found), ALVEO_USER)
    assert (user["assignable"], user["why_not"], user["iommu_group_drivers"]) == (True, None, None)


@pytest.mark.parametrize("value, message", [
    (["0000:af:00.0"], "iommu_group_drivers: expected a mapping of PCI address to driver name or null"),
    ({"af:00": "xclmgmt"}, "iommu_group_drivers: 'af:00': 'xclmgmt' is not a PCI address with a driver name"),
    ({ALVEO_MGMT: 3}, "iommu_group_drivers: '0000:af:00.0': 3 is not a PCI address with a driver name or null"),
])
def test_bad_group_drivers_are_refused(tmp_path, value, message):
    found = _alveo(tmp_path / "root")
    record = [r for r in found["accelerators"] if r["address"] == ALVEO_USER][0]
    with pytest.raises(_hostdev.HostdevError) as e:
        _hostdev.collect_units(dict(record, iommu_group_drivers=value))
    assert str(e.value).startswith("record %s: iommu_group_drivers: " % ALVEO_USER) and message in str(e.value)
    with pytest.raises(_hostdev.HostdevError, match="unit: iommu_group_drivers: expected a mapping"):
        _hostdev.collect_units({"kind": "device", "id": ALVEO_USER, "iommu_group_drivers": "xclmgmt"})
