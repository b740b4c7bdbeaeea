# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bring a rendered lab-all tree to a programmed state through the simulator's kernel model, as the converge
role would leave it: the L40's VFs enabled (sriov-manage -e) with NVIDIA L40-8Q (id 1145) on its first N VFs,
and the X710's first PF with VFs. Usage: program_lab.py ROOT [VGPUS] [NIC_VFS]"""

import sys

import accelsim


def main(root, vgpus, nic_vfs):
    host = accelsim.attach(root)
    if vgpus:
        rc, _out, err = host.tool("sriov-manage", "-e", "0000:3b:00.0")
        if rc != 0:
            raise SystemExit("sriov-manage failed: %s" % err)
    with host.transaction() as kernel:
        for vf in kernel.vfs("0000:3b:00.0")[:vgpus] if vgpus else []:
            kernel.set_vgpu_type(vf, "1145")
        if nic_vfs:
            kernel.set_numvfs("0000:d8:00.0", str(nic_vfs))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 4, int(sys.argv[3]) if len(sys.argv) > 3 else 4)
