# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Render a lab host as a plain tree and bring it to the state a converged host has, through the simulator's
kernel model: ``prepare_lab.py LAB DEST [LAB DEST ...]`` (several labs in one process).

gpu-mdev: as shipped (one 2Q vGPU on the T4). gpu-vendor-vfio: the L40's 32 VFs, two of them with vGPU type
1145 (NVIDIA L40-8Q). nic-sriov: 2 VFs on the first X710 PF (a PF file, two VF files: one file per unit, pruning
of a PF file and a VF file; each unit more is one more file the role writes in every run of the lab).
"""

import sys

import accelsim


def main(lab, dest):
    host = accelsim.render_tree(lab, dest)
    if lab == "gpu-vendor-vfio":
        with host.transaction() as kernel:
            kernel.set_numvfs("0000:3b:00.0", "32")
        with host.transaction() as kernel:
            kernel.set_vgpu_type("0000:3b:00.4", "1145")
            kernel.set_vgpu_type("0000:3b:00.5", "1145")
    elif lab == "nic-sriov":
        with host.transaction() as kernel:
            kernel.set_numvfs("0000:d8:00.0", "2")
    print("prepared %s at %s" % (lab, host.root))


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or len(args) % 2:
        raise SystemExit("usage: prepare_lab.py LAB DEST [LAB DEST ...]")
    for i in range(0, len(args), 2):
        main(args[i], args[i + 1])
