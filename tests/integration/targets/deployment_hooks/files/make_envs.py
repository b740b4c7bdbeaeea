# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write the three deployment-tool environments the hooks are run in, laid out the way each tool lays them out.
Usage: make_envs.py WORKDIR COLLECTION_ROOT PYTHON"""

import json
import os
import sys

T4 = {"name": "t4-2q", "match": {"family": "gpu", "device_id": "1eb8"}, "vgpu": {"type": "GRID T4-2Q", "count": 1}}
DEMO = [
    T4,
    {"name": "l40-8q", "match": {"address": "0000:3b:00.0"}, "vgpu": {"type": "NVIDIA L40-8Q", "count": 4}},
    {"name": "x710-vf", "match": {"address": "0000:d8:00.0"}, "vfs": {"count": 4}, "nova": {"numa_policy": "preferred"}},
    {"name": "gzip", "match": {"address": "0000:5e:00.0"},
     "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": "ab" * 32, "function_id": "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"}},
]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def yaml_doc(obj):
    return "---\n" + json.dumps(obj, indent=2, sort_keys=True) + "\n"   # JSON is YAML


def main(work, coll, python):
    labs = os.path.join(work, "labs")
    local = {"ansible_connection": "local", "ansible_python_interpreter": python}
    sim = {"nova_compute_config_become": False}

    # Kayobe: $KAYOBE_CONFIG_PATH with inventory/, group_vars, kolla.yml and a hook linked into pre.d
    cfg = os.path.join(work, "kayobe", "etc", "kayobe")
    write(os.path.join(cfg, "inventory", "hosts"), "\n".join([
        "[controllers]", "ctl0", "", "[compute_t4]", "cn-t4", "", "[compute_demo]", "cn-all", "",
        "[compute:children]", "compute_t4", "compute_demo", "",
        "[overcloud:children]", "controllers", "compute", ""]))
    # what Kayobe's own group_vars/all/globals define (kayobe_env_config_path) and the lab roots
    write(os.path.join(cfg, "inventory", "group_vars", "all", "kayobe"), yaml_doc(dict(local, **{
        "kayobe_config_path": cfg, "kayobe_environment": "",
        "kayobe_env_config_path": cfg, "kolla_node_custom_config_path": os.path.join(work, "kayobe", "etc", "kolla", "config")})))
    write(os.path.join(cfg, "inventory", "group_vars", "compute_t4", "accelerators"),
          yaml_doc({"accelerator_host_functions": [T4]}))
    write(os.path.join(cfg, "inventory", "group_vars", "compute_demo", "accelerators"),
          yaml_doc({"accelerator_host_functions": DEMO}))
    for host in ("cn-t4", "cn-all"):
        write(os.path.join(cfg, "inventory", "host_vars", host),
              yaml_doc(dict(sim, nova_compute_config_root=os.path.join(labs, host))))
    write(os.path.join(cfg, "kolla.yml"), yaml_doc({"kolla_enable_nova": True, "kolla_enable_cyborg": True}))
    hooks = os.path.join(cfg, "hooks", "overcloud-service-deploy", "pre.d")
    os.makedirs(hooks, exist_ok=True)
    os.symlink(os.path.join(coll, "playbooks", "kolla_hook.yml"), os.path.join(hooks, "50-accelops-nova.yml"))

    # Kolla-Ansible alone: multinode inventory, globals.yml with node_custom_config, Cyborg off
    kolla = os.path.join(work, "kolla")
    write(os.path.join(kolla, "multinode"), "\n".join([
        "[control]", "ctl0", "", "[compute]",
        "cn-t4 nova_compute_config_root=%s nova_compute_config_become=false" % os.path.join(labs, "cn-t4"), "",
        "[all:vars]", "ansible_connection=local", "ansible_python_interpreter=%s" % python, ""]))
    write(os.path.join(kolla, "globals.yml"), yaml_doc({
        "node_custom_config": os.path.join(kolla, "config"), "enable_cyborg": "no",
        "accelerator_host_functions": [T4]}))

    # EDPM: a nodeset inventory as the operator generates it; edpm_nova already filled its config directory
    edpm = os.path.join(work, "edpm")
    dest = os.path.join(edpm, "var", "lib", "openstack", "nova")
    write(os.path.join(dest, "02-nova-host-specific.conf"), "[DEFAULT]\nhost = edpm-compute-0.example.com\n")
    os.chmod(dest, 0o755)
    write(os.path.join(edpm, "inventory.yml"), yaml_doc({"edpm-compute": {
        "hosts": {"edpm-compute-0": dict(sim, canonical_hostname="edpm-compute-0.example.com",
                                         nova_compute_config_root=os.path.join(labs, "cn-all"))},
        "vars": dict(local, edpm_nova_config_dest=dest, accelops_edpm_restart=False,
                     accelerator_host_functions=DEMO)}}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
