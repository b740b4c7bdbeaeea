# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check what the hooks wrote in each environment. Usage: check_envs.py WORKDIR PARSE_CONF_PY"""

import json
import os
import stat
import subprocess
import sys

MARKER = "# accelops.lifecycle nova_compute_config: rendered from accelerator_host_functions"


def parse(parser, path):
    out = subprocess.run([sys.executable, parser, path], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def main(work, parser):
    # Kayobe: written into the kolla config source under $KAYOBE_CONFIG_PATH, one file per compute host
    src = os.path.join(work, "kayobe", "etc", "kayobe", "kolla", "config")
    t4 = parse(parser, os.path.join(src, "nova", "cn-t4", "nova-compute.conf"))
    demo = parse(parser, os.path.join(src, "nova", "cn-all", "nova-compute.conf"))
    assert t4["first_line"] == MARKER
    assert t4["sections"]["devices"]["enabled_mdev_types"] == ["nvidia-231"], t4
    assert t4["sections"]["mdev_nvidia-231"]["device_addresses"] == ["0000:18:00.0"]
    # an mdev-only host keeps PCI-in-Placement on: Nova reads a missing option as False
    assert t4["device_spec"] == [] and t4["sections"]["pci"] == {"report_in_placement": ["True"]}, t4
    assert [s["address"] for s in demo["device_spec"]] == [
        "0000:3b:00.4", "0000:3b:00.5", "0000:3b:00.6", "0000:3b:00.7", "0000:d8:00.0"], demo["device_spec"]
    assert not [s for s in demo["device_spec"] if s["address"] == "0000:5e:00.0"], "the FPGA went to Cyborg"
    cyborg = parse(parser, os.path.join(src, "cyborg", "cn-all", "cyborg.conf"))
    assert cyborg["sections"] == {"agent": {"enabled_drivers": ["intel_fpga_driver"]}}, cyborg
    assert not os.path.exists(os.path.join(src, "cyborg", "cn-t4")), "nothing for Cyborg on the T4 host"
    api = parse(parser, os.path.join(src, "nova", "nova-api.conf"))
    assert sorted(a["name"] for a in api["alias"]) == ["l40-8q", "x710-vf"], api["alias"]
    assert api["alias"] == sorted(demo["alias"], key=lambda a: a["name"])
    for path in (os.path.join(src, "nova", "cn-all", "nova-compute.conf"), os.path.join(src, "nova", "nova-api.conf")):
        assert mode(path) == 0o640, oct(mode(path))
    assert not os.path.exists(os.path.join(work, "kayobe", "etc", "kolla", "config", "nova")), \
        "Kayobe copies the source into kolla_node_custom_config_path itself"
    # Kolla-Ansible alone: straight into node_custom_config, no Cyborg piece
    kolla = os.path.join(work, "kolla", "config")
    k = parse(parser, os.path.join(kolla, "nova", "cn-t4", "nova-compute.conf"))
    assert k["sections"]["devices"]["enabled_mdev_types"] == ["nvidia-231"]
    assert not os.path.exists(os.path.join(kolla, "cyborg"))
    assert not os.path.exists(os.path.join(kolla, "nova", "nova-api.conf")), "no aliases: no alias file"
    # EDPM: beside edpm_nova's own files, matching the container's *nova*.conf glob; the directory untouched
    dest = os.path.join(work, "edpm", "var", "lib", "openstack", "nova")
    assert sorted(os.listdir(dest)) == ["02-nova-host-specific.conf", "25-nova-accelops-devices.conf"]
    assert mode(dest) == 0o755
    e = parse(parser, os.path.join(dest, "25-nova-accelops-devices.conf"))
    assert [s["address"] for s in e["device_spec"]][-1] == "0000:d8:00.0"
    assert any(s["address"] == "0000:5e:00.0" for s in e["device_spec"]), "no Cyborg in EDPM: the FPGA is Nova's"
    assert "# host: edpm-compute-0" in open(os.path.join(dest, "25-nova-accelops-devices.conf")).read()
    print("deployment hooks: all checks passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
