# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An Intel PAC (Arria 10) whose AFU port sits on its VF after SR-IOV (lab fpga-opae-vf), and Cyborg's product
traits: one Placement provider per card as Cyborg's Intel driver makes it, Ironic sees the loaded function, and
Nova's device_spec names what carries it. Discovery runs on simulated trees; nothing is mocked."""

from __future__ import annotations

import json

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.module_utils import _ironic as I  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402

PF, VF = "0000:5e:00.0", "0000:5e:00.1"
AFU = "d8424dc4a4a93c849c1ad7c6d7b3c2a7"
REGION = "CUSTOM_FPGA_REGION_INTEL_38558F8B33385E6BA9A5C6AC75F8E59F"
FUNCTION = "CUSTOM_FPGA_FUNCTION_ID_INTEL_" + AFU.upper()
GZIP = {"name": "gzip", "match": {"address": PF},
        "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": "ab" * 32, "function_id": AFU}}


@pytest.fixture(scope="module")
def port_on_vf(tmp_path_factory):
    """fpga-opae-vf with its VF enabled: the PF has the FME (region), the VF the port (the loaded AFU)."""
    root = str(tmp_path_factory.mktemp("pacvf") / "host")
    h = accelsim.render_tree("fpga-opae-vf", root)
    with h.transaction() as k:
        k.set_numvfs(PF, "1")
    return discover(Sysfs(root=root), families=["fpga"], nvidia_smi="never")


@pytest.fixture(scope="module")
def port_on_pf(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("pacpf") / "host")
    accelsim.render_tree("fpga-opae", root)
    return discover(Sysfs(root=root), families=["fpga"], nvidia_smi="never")


def by_addr(discovery):
    return dict((r["address"], r) for r in discovery["accelerators"])


def test_the_lab_has_the_port_on_the_vf(port_on_vf):
    recs = by_addr(port_on_vf)
    assert recs[PF]["fpga"]["ports"] == [] and recs[PF]["function"] is None
    assert [r["trait"] for r in recs[PF]["fpga"]["regions"]] == [REGION]
    assert recs[VF]["physfn"] == PF and [p["afu_id"] for p in recs[VF]["fpga"]["ports"]] == [AFU]


# -- defect 1 and 2: one provider, the VF, with every trait (Cyborg's Intel driver) --------------------------
def test_one_provider_on_the_vf_with_region_product_and_function(port_on_vf):
    (p,) = P.desired_providers("cn1", port_on_vf, reporter="cyborg")
    # Cyborg's agent names its provider after the host name it runs on (socket.gethostname()), which discovery
    # reports, not after the compute node provider
    assert p["name"] == port_on_vf["host"]["hostname"] + "_" + VF and p["address"] == VF
    assert p["inventories"]["FPGA"]["total"] == 1
    for t in ("CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_PAC_ARRIA10", REGION, FUNCTION):
        assert t in p["traits"], t


def test_total_counts_every_port_vf_and_the_provider_is_named_after_the_last():
    pf = {"address": PF, "family": "fpga", "handler": "intel_fpga", "vendor_id": "8086", "device_id": "0b30",
          "programming_model": "dynamic", "function": None, "sriov": {"numvfs": 2, "vfs": [VF, "0000:5e:00.2"]},
          "fpga": {"vendor": "intel", "board": "PAC_N3000", "regions": [{"id": "r", "trait": REGION}], "ports": []}}
    vfs = [{"address": a, "physfn": PF, "family": "fpga", "handler": "intel_fpga", "vendor_id": "8086",
            "device_id": "0b31", "programming_model": "dynamic", "function": {"id": fid},
            "fpga": {"vendor": "intel", "board": "PAC_N3000", "regions": [], "ports": [{"id": "p", "afu_id": fid}]}}
           for a, fid in ((VF, AFU), ("0000:5e:00.2", "11" * 16))]
    (p,) = P.desired_providers("cn1", [pf] + vfs, function_names={AFU: "gzip"})
    assert p["address"] == "0000:5e:00.2" and p["inventories"]["FPGA"]["total"] == 2
    assert {"CUSTOM_FPGA_INTEL_PAC_N3000", REGION, FUNCTION, "CUSTOM_FUNCTION_GZIP",
            "CUSTOM_FPGA_FUNCTION_ID_INTEL_" + "11" * 16} <= set(p["traits"])
    # without its PF's record (an addresses filter), a VF is its own provider as before
    (alone,) = P.desired_providers("cn1", vfs[:1])
    assert alone["address"] == VF and FUNCTION in alone["traits"]


def test_port_on_the_pf_keeps_one_provider_on_the_pf_with_the_product_trait(port_on_pf):
    (p,) = P.desired_providers("cn1", port_on_pf)
    assert p["address"] == PF and p["inventories"]["FPGA"]["total"] == 1
    for t in ("CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_PAC_ARRIA10", REGION, FUNCTION):
        assert t in p["traits"], t


def test_xilinx_provider_named_after_the_first_pf_with_its_product_id(tmp_path):
    root = str(tmp_path / "alveo")
    accelsim.render_tree("xilinx-alveo", root)
    d = discover(Sysfs(root=root), families=["fpga"], nvidia_smi="never")
    (rec,) = d["accelerators"]
    assert rec["address"] == "0000:af:00.1" and rec["fpga"]["management_device_id"] == "5004"
    (p,) = P.desired_providers("cn1", d, reporter="cyborg", prefix="cn1")
    # lspci lists the management PF (function 0) first: Cyborg's deployable and product id are that PF's
    assert p["name"] == "cn1_0000:af:00.0"
    assert "CUSTOM_FPGA_XILINX" in p["traits"] and "CUSTOM_FPGA_PRODUCT_ID_5004" in p["traits"]
    assert not [t for t in p["traits"] if t.startswith("CUSTOM_FPGA_PRODUCT_ID_") and t.endswith("5005")]
    # overrides still take the record's (user PF) address
    (gold,) = P.desired_providers("cn1", d, overrides={"0000:af:00.1": {"traits": ["CUSTOM_GOLD"]}})
    assert "CUSTOM_GOLD" in gold["traits"]


def test_the_declaration_sees_the_function_the_vf_carries(port_on_vf):
    from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import resolve
    (a,) = resolve([GZIP], port_on_vf)["assignments"]
    assert a["address"] == PF and not a["change_needed"]
    other = dict(GZIP, fpga=dict(GZIP["fpga"], function_id="0" * 32))
    (b,) = resolve([other], port_on_vf)["assignments"]
    assert b["change_needed"]


def test_the_management_pf_record_of_include_all_gets_no_provider_of_its_own(tmp_path):
    root = str(tmp_path / "alveo")
    accelsim.render_tree("xilinx-alveo", root)
    every = discover(Sysfs(root=root), include_all=True, nvidia_smi="never")
    assert "0000:af:00.0" in [r["address"] for r in every["accelerators"]]   # a record of its own (defect 9)
    card_only = discover(Sysfs(root=root), nvidia_smi="never")
    alveo = [p for p in P.desired_providers("cn1", every, reporter="cyborg", prefix="cn1") if p["name"].startswith("cn1_0000:af:")]
    assert alveo == [p for p in P.desired_providers("cn1", card_only, reporter="cyborg", prefix="cn1") if p["name"].startswith("cn1_0000:af:")]
    assert [p["name"] for p in alveo] == ["cn1_0000:af:00.0"]


# -- defect 5: Ironic sees the function the VF carries -------------------------------------------------------
def test_ironic_sees_the_function_on_the_vf(port_on_vf):
    traits, detail, problems = I.function_traits(port_on_vf, [GZIP], "loaded")
    assert traits == ["CUSTOM_FUNCTION_GZIP"] and problems == []
    assert detail["gzip"]["carrying"] == [PF] and detail["gzip"]["pending"] == []
    assert FUNCTION in I.loaded_function_traits(port_on_vf, families=["fpga"])
    # a different AFU declared: pending, not carried
    other = dict(GZIP, fpga=dict(GZIP["fpga"], function_id="11" * 16))
    _traits, detail, _problems = I.function_traits(port_on_vf, [other], "loaded")
    assert detail["gzip"]["carrying"] == [] and detail["gzip"]["pending"] == [PF]


# -- defect 11: Nova's device_spec names the VF that carries the function ----------------------------------
def test_nova_device_spec_matches_the_vf(port_on_vf):
    r = nc.render([GZIP], port_on_vf, {"host": "cn1"})
    # the declared function's trait and Cyborg's function-id trait of the loaded AFU: Nova keeps only what the
    # device_spec's traits tag says
    assert r["device_specs"] == [{"vendor_id": "8086", "product_id": "09c5", "address": VF,
                                  "traits": "CUSTOM_FUNCTION_GZIP," + FUNCTION}]
    (alias,) = r["aliases"]
    assert alias["device_type"] == "type-VF" and alias["product_id"] == "09c5"
    assert any(json.loads(line.split(" = ", 1)[1])["address"] == VF
               for line in r["nova_conf"].splitlines() if line.startswith("device_spec = "))


def test_nova_device_spec_stays_on_the_pf_when_it_has_the_port(port_on_pf):
    r = nc.render([GZIP], port_on_pf, {"host": "cn1"})
    assert [(s["address"], s["product_id"]) for s in r["device_specs"]] == [(PF, "09c4")]
    assert r["aliases"][0]["device_type"] == "type-PF"
