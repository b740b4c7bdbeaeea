#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: accelerator_info
short_description: Discover the hardware accelerators of a host and their assignable units
version_added: 0.1.0
description:
  - Reads sysfs, procfs, the libvirt run directory and (when installed) C(nvidia-smi) and returns every
    accelerator of the host (GPUs, FPGAs, QAT, SR-IOV NICs) and every assignable unit (whole device, VF,
    mdev) as plain data with a documented, stable schema (see C(docs/discovery.md) in the collection).
  - Each record carries the PCI identity (IDs, names from C(pci.ids), driver, NUMA node, IOMMU group and its
    members, link), SR-IOV relations, the accelerator family, its programming model and the function loaded
    now (with a Placement trait), the family's details, and for every unit whether it is in use and by what,
    with the evidence.
  - Read-only; it never writes to sysfs and only runs read-only C(nvidia-smi) queries.
  - Standard library only on the managed host (Python 3.9 or later).
author:
  - accelops.lifecycle contributors (@accelops)
extends_documentation_fragment:
  - accelops.lifecycle._host
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
  diff_mode:
    support: N/A
  facts:
    support: full
  platform:
    platforms: posix
options:
  families:
    description:
      - Only report devices of these families.
      - C(pci) selects the PCI functions that are not accelerators (as O(include_all) does for them).
    type: list
    elements: str
    choices: [gpu, fpga, nic, qat, pci]
  vendor_ids:
    description:
      - Only report devices of these PCI vendors, as 4 hex digits (V(10de)) or with a C(0x) prefix.
    type: list
    elements: str
  addresses:
    description:
      - Only report devices at these PCI addresses (V(0000:3b:00.0), or V(3b:00.0) for domain 0). Shell
        wildcards are allowed (V(0000:3b:*)).
      - A PF's address also selects its VFs; either PF of a Xilinx Alveo card selects the card.
    type: list
    elements: str
  include_all:
    description:
      - Also report every PCI function that is not an accelerator (family C(pci)), so the module is useful on
        any host. Every function lspci lists then has a record, an Alveo's management PF too (family C(pci);
        the card's facts stay in its user PF's record).
    type: bool
    default: false
  in_use:
    description:
      - Work out which assignable units are in use (running libvirt domains, processes holding VFIO files).
      - Turn off to skip the libvirt and process scans; every unit is then reported as not in use.
    type: bool
    default: true
  libvirt_run_dir:
    description:
      - The directory (a host path, read under O(root)) where libvirt keeps the status XML of running domains.
    type: str
    default: /run/libvirt/qemu
  nvidia_smi:
    description:
      - How to find C(nvidia-smi) for the MIG state. V(auto) looks in C(PATH) and the usual directories, or
        only under O(root) when O(root) is not C(/).
      - A path uses that executable; V(never) does not run it.
      - Only read-only queries are run, and only when an NVIDIA GPU bound to the C(nvidia) driver is reported.
    type: str
    default: auto
  pci_ids_path:
    description:
      - The C(pci.ids) file to take vendor, device and class names from.
      - By default the first of C(/usr/share/misc/pci.ids), C(/usr/share/hwdata/pci.ids) and
        C(/usr/share/pci.ids) under O(root), then on the managed host. Without one, names are null.
    type: path
  vf_detail:
    description:
      - How much of each SR-IOV VF to report.
      - V(full) makes every VF a record of its own, with every key of a record.
      - V(summary) reports a VF whose PF is reported too only as units in the PF record's C(sriov.vf_units)
        (the VF itself and any mdev on it, each with the VF's C(vf_index), C(driver), C(mac) and C(netdev),
        and the in-use evidence; the VF's own unit in a compact form, see the C(sriov) return value); its warnings
        go to the PF record, prefixed with its address. A VF whose PF
        is not reported (filtered out) is still a full record.
      - V(summary) reads and returns far less on hosts with thousands of VFs (a result about a quarter of the
        size, the module call about half the time). Placement reporting
        (M(accelops.lifecycle.placement_provider_tree)), the declaration filters, the pools and the fleet report
        give the same results either way, since the PF record holds the VF counts, units and vGPU types.
      - The P(accelops.lifecycle.hostdev_units#filter) filter needs V(full), since a VF's snippet is made from its own
        record. The collection's roles ask for V(full).
      - Earlier development versions defaulted to V(full).
    type: str
    choices: [full, summary]
    default: summary
  publish_facts:
    description:
      - Also return the records as C(ansible_facts.accelerators), for later plays and roles.
    type: bool
    default: false
notes:
  - Run as root to see every process that holds a VFIO device open; otherwise a warning says that some
    processes could not be inspected.
  - Per-device problems (missing or unreadable attributes, dangling links, a device that went away during the
    scan) are reported in that device's RV(accelerators[].warnings) and as module warnings, never as a failure.
seealso:
  - name: Discovery schema
    description: The full schema of a record, in the collection's docs/discovery.md.
    link: https://example.invalid/accelops/lifecycle/docs/discovery.md
'''

EXAMPLES = r'''
- name: Discover the accelerators of a compute host
  accelops.lifecycle.accelerator_info:
  register: discovery

- name: Only NVIDIA GPUs, published as facts
  accelops.lifecycle.accelerator_info:
    families: [gpu]
    vendor_ids: ["10de"]
    publish_facts: true

- name: Every PCI function of one bus, on a simulated lab host
  accelops.lifecycle.accelerator_info:
    root: /srv/labs/lab-all
    addresses: ["0000:3b:*"]
    include_all: true

- name: A host with thousands of NIC VFs, VFs summarised in their PF's record
  accelops.lifecycle.accelerator_info:
    families: [nic]
    vf_detail: summary
  register: nics

- name: List the free vGPU mdevs
  ansible.builtin.debug:
    msg: >-
      {{ discovery.accelerators | map(attribute='units') | flatten
         | selectattr('kind', 'equalto', 'mdev') | rejectattr('in_use') | map(attribute='id') | list }}
'''

RETURN = r'''
schema_version:
  description: Version of the record schema (incremented only for incompatible changes).
  returned: always
  type: int
  sample: 1
accelerators:
  description:
    - One record per reported PCI function, in address order. VFs are records of their own, with
      RV(accelerators[].physfn) naming their PF; a PF lists its VFs in C(sriov.vfs).
    - A Xilinx Alveo card is one record (its user PF), with the management PF in C(fpga.management_address) and
      its device id in C(fpga.management_device_id); with O(include_all) the management PF also has a record of
      its own (family V(pci)).
    - See C(docs/discovery.md) for every key of the family sections.
  returned: always
  type: list
  elements: dict
  contains:
    address:
      description: PCI address (domain:bus:slot.function), lower case.
      type: str
      sample: "0000:3b:00.0"
    family:
      description: Accelerator family.
      type: str
      choices: [gpu, fpga, nic, qat, pci]
    handler:
      description: The discovery driver that described the device (nvidia, gpu, intel_fpga, xilinx, qat, nic, pci).
      type: str
    vendor_id:
      description: PCI vendor id, 4 hex digits.
      type: str
      sample: "10de"
    device_id:
      description: PCI device id, 4 hex digits.
      type: str
      sample: "1eb8"
    subsystem_vendor_id:
      description: Subsystem vendor id.
      type: str
    subsystem_device_id:
      description: Subsystem device id.
      type: str
    class_id:
      description: PCI class, 6 hex digits (base class, sub-class, programming interface).
      type: str
      sample: "030200"
    revision:
      description: Revision id, 2 hex digits.
      type: str
    vendor_name:
      description: Vendor name from pci.ids, or null.
      type: str
    device_name:
      description: Device name from pci.ids, or null.
      type: str
    subsystem_name:
      description: Subsystem name from pci.ids, or null.
      type: str
    class_name:
      description: Class (sub-class) name from pci.ids, or null.
      type: str
    driver:
      description: Kernel driver bound now, or null.
      type: str
    driver_override:
      description: The function's driver_override, or null.
      type: str
    numa_node:
      description: NUMA node, or null when the kernel does not know (-1).
      type: int
    local_cpulist:
      description: CPUs local to the device.
      type: str
    iommu_group:
      description: IOMMU group number, or null without an IOMMU.
      type: int
    iommu_group_members:
      description: Every PCI function in the same IOMMU group (a unit is only assignable with its whole group).
      type: list
      elements: str
    iommu_group_drivers:
      description:
        - The driver bound to each function of C(iommu_group_members), this function included, keyed by PCI
          address; null for a function bound to no driver. Empty without an IOMMU.
        - VFIO gives a guest the group only when every member is bound to vfio-pci (or a vfio-pci variant
          driver), pci-stub, pcieport or no driver, or is passed to the same guest;
          P(accelops.lifecycle.hostdev_units#filter) reads it.
      type: dict
    link:
      description: PCIe link (speed, width, max_speed, max_width), or null for a function without one.
      type: dict
    sriov:
      description:
        - SR-IOV (totalvfs, numvfs, vf_device_id, vfs, vf_units); totalvfs 0 when not SR-IOV capable.
        - C(vf_units) is null unless O(vf_detail=summary) folded the PF's VFs into this record; then it lists
          their units (kind, id, address, type, iommu_group, in_use, in_use_by, vf_index, driver, mac, netdev).
        - A VF's own unit there (kind vf) is compact; it leaves out C(id) (its address), C(type) when null,
          C(in_use_by) when empty and C(vf_index) when it is the VF's place in C(sriov.vfs). Read it with
          defaults (C(unit.in_use_by | default([]))); see C(docs/discovery.md), "VF detail".
      type: dict
    physfn:
      description: For a VF, its PF's address; null otherwise.
      type: str
    vf_index:
      description: For a VF, its index on the PF (the N of virtfnN); null otherwise.
      type: int
    programming_model:
      description: V(dynamic) (per region/slot), V(single) (one program for the whole card) or V(fixed).
      type: str
      choices: [dynamic, single, fixed]
    function:
      description: The function loaded now (id, name, trait), or null.
      type: dict
    healthy:
      description: Health when the device reports it (an all-f FPGA id means unhealthy), else null.
      type: bool
    units:
      description: Assignable units rooted at this function (kind device, vf or mdev) with in-use evidence.
      type: list
      elements: dict
    gpu:
      description: GPU details (mdev_types, mdevs, vgpu, vgpu_types, vgpu_vfs, mig, iov), null for other families;
        mig has the MIG mode (current, pending), the GPU instances with their compute instances and in-use evidence,
        and profiles, the GPU instance profiles when MIG is enabled (id, name, instances free/total, memory, slices).
        On a GPU in MIG mode with typed VFs (MIG-backed vGPU), mig.vgpus lists each VF's vGPU (address, type, profile,
        gpu_instance_id from C(nvidia-smi vgpu -q)) and mig.creatable_vgpu_types the MIG-backed types a VF can take
        now (id, name, profile, free GPU instances of that profile). A GPU instance that backs a vGPU has vgpu with
        the host VF's address, or a null address and vfs, every VF it may be on, where nothing tells them apart
        (the Bus Id C(nvidia-smi vgpu -q) prints is the guest's address, kept as guest_address).
      type: dict
    fpga:
      description: FPGA details (vendor, layout, board, bitstream_id, regions, ports, healthy, management_address,
        management_device_id, user_address, shell), null for other families.
      type: dict
    qat:
      description: QAT details (product, state, cfg_services), null for other families.
      type: dict
    nic:
      description: NIC details (interfaces with name, mac, operstate; mac), null for other families.
      type: dict
    warnings:
      description: Problems met while reading this device.
      type: list
      elements: str
host:
  description: About the host and the scan.
  returned: always
  type: dict
  contains:
    hostname:
      description: The host's name (null when unknown under a simulated root).
      type: str
    kernel:
      description: Kernel release.
      type: str
    root:
      description: The host root that was read.
      type: str
    pci_functions:
      description: How many PCI functions the host has (reported or not).
      type: int
    iommu:
      description: Whether any function is in an IOMMU group.
      type: bool
    libvirt_run_dir:
      description: The libvirt run directory that was read.
      type: str
    domains:
      description: Names of the running libvirt domains found.
      type: list
      elements: str
    processes_scanned:
      description: Whether processes' open files were checked for VFIO devices.
      type: bool
    nvidia_smi:
      description: The nvidia-smi that was run, or null.
      type: str
    pci_ids:
      description: The pci.ids file used, or null.
      type: str
    vf_detail:
      description: The O(vf_detail) the records were built with.
      type: str
ansible_facts:
  description: With O(publish_facts), the records as C(accelerators).
  returned: when publish_facts is true
  type: dict
  contains:
    accelerators:
      description: Same as RV(accelerators).
      type: list
      elements: dict
'''


import gc

from ansible_collections.accelops.lifecycle.plugins.module_utils._module import AccelopsModule
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import OptionError, discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._host import LIBVIRT_RUN_DIR_OPTION, host_argument_spec, host_sysfs

MAX_DEVICE_WARNINGS = 20


def main(exiting=False):
    # The result of a large host is tens of thousands of dicts and lists, built once and then copied by
    # exit_json (remove_values) and encoded; none of it is ever garbage, so the cyclic collector's passes over
    # it are pure cost. Paused for the run, and restored for callers that run main() in-process (tests). When the
    # process ends with the module (``exiting``: run as a program, as AnsiballZ runs it) it stays paused, and every
    # object is frozen (gc.freeze): the interpreter's exit runs one more full collection whatever the setting, over
    # ansible-core's modules and the result alike (about 0.02 s of CPU, a tenth of the call, on the benchmark's
    # host of 2,912 functions); frozen objects are left out of it and go with the process.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        run_module()
    finally:
        if exiting:
            gc.freeze()
        elif paused:
            gc.enable()


def run_module():
    module = AccelopsModule(
        argument_spec=host_argument_spec(
            families=dict(type="list", elements="str", choices=["gpu", "fpga", "nic", "qat", "pci"]),
            vendor_ids=dict(type="list", elements="str"),
            addresses=dict(type="list", elements="str"),
            include_all=dict(type="bool", default=False),
            in_use=dict(type="bool", default=True),
            libvirt_run_dir=LIBVIRT_RUN_DIR_OPTION,
            nvidia_smi=dict(type="str", default="auto"),
            pci_ids_path=dict(type="path"),
            publish_facts=dict(type="bool", default=False),
            vf_detail=dict(type="str", default="summary", choices=["full", "summary"]),
        ),
        paths=("libvirt_run_dir", "nvidia_smi"),
        supports_check_mode=True,
    )
    p = module.params
    run_dir = p["libvirt_run_dir"]
    if run_dir and not run_dir.startswith("/"):
        module.fail_json(msg="libvirt_run_dir must be an absolute host path such as /run/libvirt/qemu; got %r" % run_dir)
    sysfs = host_sysfs(module)
    try:
        result = discover(
            sysfs,
            families=p["families"],
            vendor_ids=p["vendor_ids"],
            addresses=p["addresses"],
            include_all=p["include_all"],
            libvirt_run_dir=run_dir,
            nvidia_smi=p["nvidia_smi"],
            pci_ids_path=p["pci_ids_path"],
            in_use=p["in_use"],
            vf_detail=p["vf_detail"],
        )
    except OptionError as e:
        module.fail_json(msg=str(e))
    for w in result["warnings"]:
        module.warn(w)
    shown = 0
    hidden = 0
    for rec in result["accelerators"]:
        for w in rec["warnings"]:
            if shown < MAX_DEVICE_WARNINGS:
                module.warn("%s: %s" % (rec["address"], w))
                shown += 1
            else:
                hidden += 1
    if hidden:
        module.warn("%d more device warnings are in the records' warnings lists" % hidden)
    out = dict(changed=False, schema_version=result["schema_version"], accelerators=result["accelerators"],
               host=result["host"])
    if p["publish_facts"]:
        out["ansible_facts"] = dict(accelerators=result["accelerators"])
    module.exit_json(**out)


if __name__ == "__main__":
    main(exiting=True)
