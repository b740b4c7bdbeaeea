# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""hostdev_units and hostdev_xml take accelerator_info's default result (vf_detail: summary), on simulated labs with
VFs enabled (issue 30: they refused it)."""

from __future__ import annotations

import pytest

accelsim = pytest.importorskip("accelsim", reason="the simulator (tests/simulator/accelsim) is not available")

from ansible_collections.accelops.lifecycle.plugins.filter.hostdev_units import hostdev_units  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.filter.hostdev_xml import hostdev_xml  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402


@pytest.mark.parametrize("lab", ["gpu-amd-instinct", "gpu-intel-flex", "nic-sriov", "gpu-vendor-vfio"])
def test_hostdev_units_take_the_default_discovery(tmp_path, lab):
    """accelerator_info's default (vf_detail: summary) is taken by hostdev_units and hostdev_xml: the same units, with
    the same facts but the IOMMU group members a summary does not hold, as from vf_detail: full."""
    h = accelsim.render_tree(lab, str(tmp_path / lab))
    with h.transaction() as k:
        for f in k.lab["functions"]:
            s = f.get("sriov")
            if s and s["configurable"] and k.dyn(f["bdf"])["driver"] and not k.dyn(f["bdf"])["numvfs"]:
                k.set_numvfs(f["bdf"], "2")
    skip = ("iommu_group_members", "iommu_group_drivers")

    def units(vf_detail):
        found = discover(Sysfs(root=h.root), vf_detail=vf_detail)
        return dict((u["id"], dict((k, v) for k, v in u.items() if k not in skip))
                    for u in hostdev_units(found, assignable_only=False)), found
    full, _found = units("full")
    summary, found = units("summary")
    assert any(r["sriov"] and r["sriov"].get("vf_units") for r in found["accelerators"])
    assert summary == full and any(u["kind"] == "vf" and u["physfn"] for u in summary.values())
    if lab != "gpu-vendor-vfio":     # (its VFs carry no vGPU type yet: none is assignable)
        vf = [u for u in hostdev_units(found) if u["kind"] == "vf"][0]
        assert "<hostdev" in hostdev_xml(found, unit=vf["id"])
