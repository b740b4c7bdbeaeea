# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: hostdev_xml
short_description: libvirt hostdev XML for assignable units from a discovery result
version_added: 0.1.0
description:
  - Renders the libvirt C(<hostdev>) element that gives a guest one assignable unit found by
    M(accelops.lifecycle.accelerator_info).
  - A PCI function (kind C(device) or C(vf)) becomes C(<hostdev mode='subsystem' type='pci' managed='yes'>) with the
    host address in C(<source>); an mdev becomes C(<hostdev mode='subsystem' type='mdev' managed='no'
    model='vfio-pci'>) with its UUID, as Nova's libvirt driver writes them.
  - A VF of an NVIDIA GPU using the vendor-specific VFIO framework (its record has C(gpu.vgpu)) is a PCI hostdev
    with C(managed='no') - the nvidia driver must stay bound to it - unless O(managed=no) is given anyway;
    O(managed=yes) is refused for it.
  - The text is formatted the way libvirt formats it (single quotes, two-space indent), so it matches what
    C(virsh dumpxml) shows for the device.
  - A string, a unit or O(unit) gives one snippet (a string); a record, a list of records or a discovery result
    gives a list with one snippet per unit, in order. Of the units of records, only those a guest can be given now
    are rendered - the units P(accelops.lifecycle.hostdev_units#filter) lists by default (not a function whose
    mdevs or VFs exist, not an NVIDIA vendor-VFIO VF without a vGPU type); units and strings in a list are all
    rendered, so the output of P(accelops.lifecycle.hostdev_units#filter) is rendered as selected. O(unit) picks
    any unit.
  - Options apply to the units they fit (O(rom_bar) and O(rom_file) to PCI units, O(display) and O(ramfb) to
    mdevs); an option that fits none of the units is refused.
  - Bad input (a string that is not a PCI address or mdev UUID, a O(unit) not in the data, an unknown option or
    value) fails with a message naming it and the accepted form.
options:
  _input:
    description:
      - A discovery result (a dict with C(accelerators)), a list of discovery records, one record (with
        C(units)), one unit (with C(kind) and C(id)), a unit from P(accelops.lifecycle.hostdev_units#filter),
        or a string that is a PCI address (C(0000:3b:00.4) or C(3b:00.4)) or an mdev UUID.
      - A VF given as a bare unit or string cannot be recognised as NVIDIA vendor-VFIO; pass its record (or a
        P(accelops.lifecycle.hostdev_units#filter) unit) or set O(managed=no).
    type: raw
    required: true
  unit:
    description: Render only this unit of the input (a PCI address or an mdev UUID); it must exist in the input.
    type: str
  managed:
    description:
      - C(managed) of PCI hostdevs. C(auto) is C(yes) (libvirt binds the function to vfio-pci and back) except
        for NVIDIA vendor-VFIO VFs, which get C(no).
      - mdev hostdevs are always C(managed='no'); giving C(yes) or C(no) when the input has only mdevs is refused.
    type: str
    choices: [auto, 'yes', 'no']
    default: auto
  guest_address:
    description:
      - The PCI address the device gets in the guest, as C(0000:00:05.0) (or C(00:05.0)) or a dict with
        C(domain), C(bus), C(slot), C(function). Only with exactly one unit.
    type: raw
  rom_bar:
    description: C(<rom bar=...>) of PCI hostdevs (C(off) hides the option ROM BAR from the guest).
    type: str
    choices: ['on', 'off']
  rom_file:
    description: C(<rom file=...>) of PCI hostdevs, an absolute path on the host.
    type: str
  display:
    description: C(display) of mdev hostdevs (a vGPU's display as the guest's console graphics).
    type: str
    choices: ['on', 'off']
  ramfb:
    description: C(ramfb) of mdev hostdevs (a boot framebuffer); C(on) needs O(display=on).
    type: str
    choices: ['on', 'off']
seealso:
  - plugin: accelops.lifecycle.hostdev_units
    plugin_type: filter
  - module: accelops.lifecycle.accelerator_info
'''

EXAMPLES = r'''
- name: Discover the host
  accelops.lifecycle.accelerator_info:
  register: discovery

- name: Snippet of one VF with a guest address
  ansible.builtin.debug:
    msg: "{{ discovery | accelops.lifecycle.hostdev_xml(unit='0000:d8:02.0', guest_address='0000:00:06.0') }}"

- name: Snippets of every assignable GPU unit, vGPUs with their display on
  ansible.builtin.debug:
    msg: >-
      {{ discovery | accelops.lifecycle.hostdev_units(families=['gpu'])
         | map('accelops.lifecycle.hostdev_xml', display='on') | list }}

- name: A plain PCI address, libvirt leaving the driver alone
  ansible.builtin.debug:
    msg: "{{ '0000:3b:00.4' | accelops.lifecycle.hostdev_xml(managed='no', rom_bar='off') }}"
'''

RETURN = r'''
_value:
  description:
    - One C(<hostdev>) element (a string without a trailing newline) for a string, a unit or O(unit); a list of
      them, one per unit in input order, for a record, a list or a discovery result.
  type: raw
  sample: |-
    <hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci'>
      <source>
        <address uuid='4b20d080-1b54-4048-85b3-a6a62d165c01'/>
      </source>
    </hostdev>
'''

from ansible.errors import AnsibleFilterError
from ansible_collections.accelops.lifecycle.plugins.module_utils._lazy import lazy

_hostdev = lazy("_hostdev")


def hostdev_xml(data, unit=None, **options):
    unknown = sorted(set(options) - set(_hostdev.OPTIONS))
    if unknown:
        raise AnsibleFilterError("hostdev_xml: unknown option%s %s; accepted options: unit, %s"
                                 % ("s" if len(unknown) > 1 else "", ", ".join(unknown), ", ".join(_hostdev.OPTIONS)))
    single = unit is not None or isinstance(data, str) or _hostdev.is_unit(data)
    try:
        if unit is not None:
            units = [_hostdev.find_unit(_hostdev.collect_units(data), unit, "unit")]
        else:
            units = _hostdev.collect_units(data, assignable_only=True)
        snippets = _hostdev.render_units(units, options)
    except _hostdev.HostdevError as e:
        raise AnsibleFilterError("hostdev_xml: %s" % e)
    return snippets[0] if single else snippets


class FilterModule(object):
    def filters(self):
        return {"hostdev_xml": hostdev_xml}
