# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: hostdev_units
short_description: The assignable units of a discovery result, selected, with what hostdev XML needs
version_added: 0.1.0
description:
  - Lists the units (PCI functions, VFs, mdevs) of M(accelops.lifecycle.accelerator_info) records that match every
    selector given, each with its record's family, function and PF, whether it is an NVIDIA vendor-VFIO VF, and
    a file-safe C(name) (C(pci_0000_3b_00_4), C(mdev_4b20d080_...), the names libvirt gives node devices).
  - By default only units a guest can be given now are listed - not a PCI bridge, not a function whose mdevs or
    VFs exist (the parent of other units), not an NVIDIA vendor-VFIO VF without a vGPU type, and not a PCI unit
    whose IOMMU group is not viable. Units named in O(ids) are always listed.
  - VFIO gives a guest an IOMMU group only when every member is bound to vfio-pci (or a vfio-pci variant
    driver such as C(mlx5_vfio_pci)), pci-stub, pcieport or no driver. A member bound to another driver (an
    Alveo management PF on C(xclmgmt), a GPU's audio function on C(snd_hda_intel)) makes the unit not
    assignable, with C(why_not) naming the member and its driver, unless that member is a unit selected in the
    same call (it is then passed with it, and both are assignable). Records from an C(accelerator_info) without
    C(iommu_group_drivers) are not checked for this.
  - The default discovery (C(vf_detail=summary)) is taken as it is. A VF folded into its PF's C(sriov.vf_units) is
    a unit with the PF as C(physfn) and the vGPU type the PF's C(gpu.vgpu_vfs) gives it. Its IOMMU group's
    members are not in that form, so its group is not checked (discover with C(vf_detail=full) for that).
  - The result feeds P(accelops.lifecycle.hostdev_xml#filter) unit by unit.
options:
  _input:
    description: Discovery data, as for P(accelops.lifecycle.hostdev_xml#filter).
    type: raw
    required: true
  ids:
    description: Unit ids (PCI addresses or mdev UUIDs); each must exist in the input.
    type: list
    elements: str
  addresses:
    description:
      - PCI addresses or shell patterns (C(0000:3b:*)); a unit matches by its own address, its record's address
        or its PF's address (a PF selects its VFs and the mdevs on it).
    type: list
    elements: str
  families:
    description: Families of the units' records.
    type: list
    elements: str
    choices: [gpu, fpga, nic, qat, pci]
  kinds:
    description: Unit kinds.
    type: list
    elements: str
    choices: [device, vf, mdev]
  functions:
    description: Function ids of the records (e.g. an FPGA AFU id), mdev type ids or vGPU type ids.
    type: list
    elements: str
  assignable_only:
    description:
      - Leave out units that cannot be given to a guest now (except those named in O(ids)). A unit held back only
        by members of its IOMMU group that O(ids) or O(addresses) select too is kept (they are passed together);
        a selection by family, kind or function alone gives each unit on its own.
    type: bool
    default: true
seealso:
  - plugin: accelops.lifecycle.hostdev_xml
    plugin_type: filter
'''

EXAMPLES = r'''
- name: The NIC VFs of one PF
  ansible.builtin.debug:
    msg: "{{ discovery | accelops.lifecycle.hostdev_units(addresses=['0000:d8:00.0'], kinds=['vf']) | map(attribute='id') }}"
'''

RETURN = r'''
_value:
  description: The selected units, in input order.
  type: list
  elements: dict
  contains:
    id:
      description: The PCI address or mdev UUID.
      type: str
    kind:
      description: "C(device), C(vf) or C(mdev)."
      type: str
    address:
      description: The PCI function it is or lives on (null for a bare mdev UUID).
      type: str
    type:
      description: The discovery unit's type (mdev type; a vendor-VFIO VF's vGPU type id).
      type: str
    family:
      description: The record's family.
      type: str
    device:
      description: The record's address.
      type: str
    physfn:
      description: The PF of a VF.
      type: str
    function:
      description: The record's function id.
      type: str
    vendor_vfio:
      description: An NVIDIA vendor-VFIO VF (rendered with managed no).
      type: bool
    vgpu_type:
      description: A vendor-VFIO VF's current vGPU type id.
      type: str
    iommu_group:
      description: The IOMMU group.
      type: int
    iommu_group_members:
      description: Functions of the record's IOMMU group (assigned together).
      type: list
      elements: str
    iommu_group_drivers:
      description:
        - The record's C(iommu_group_drivers) (each group member's driver, null for none), or null when the
          record has none.
      type: dict
    in_use:
      description: In use by a domain or process at discovery time.
      type: bool
    in_use_by:
      description: The discovery evidence.
      type: list
      elements: dict
    assignable:
      description: Whether a guest can be given it now.
      type: bool
    why_not:
      description:
        - Why not (null when assignable). For a group that is not viable it names the group, each member in the
          way with its driver, and what to do (bind the member to vfio-pci, or pass it with this unit).
      type: str
    name:
      description: File-safe name (C(pci_0000_3b_00_4), C(mdev_<uuid with _>)).
      type: str
'''

from ansible.errors import AnsibleFilterError
from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy

_hostdev = lazy("_hostdev")


def hostdev_units(data, ids=None, addresses=None, families=None, kinds=None, functions=None, assignable_only=True,
                  **unknown):
    if unknown:
        raise AnsibleFilterError("hostdev_units: unknown option%s %s; accepted options: ids, addresses, families, "
                                 "kinds, functions, assignable_only"
                                 % ("s" if len(unknown) > 1 else "", ", ".join(sorted(unknown))))
    if not isinstance(assignable_only, bool):
        raise AnsibleFilterError("hostdev_units: assignable_only: expected a boolean, got %r" % (assignable_only,))
    try:
        units = _hostdev.collect_units(data)
        return _hostdev.select_units(units, ids=ids, addresses=addresses, families=families, kinds=kinds,
                                     functions=functions, assignable_only=assignable_only)
    except _hostdev.HostdevError as e:
        raise AnsibleFilterError("hostdev_units: %s" % e)


class FilterModule(object):
    def filters(self):
        return {"hostdev_units": hostdev_units}
