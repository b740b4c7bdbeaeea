#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The deployment-tool hooks run the way each tool runs them, against simulated lab hosts:
#  1. Kayobe: the hook linked into $KAYOBE_CONFIG_PATH/hooks/overcloud-service-deploy/pre.d/, found and ordered
#     like Kayobe does, run with Kayobe's inventory and its config files as extra vars; check mode, real, rerun.
#  2. Kolla-Ansible alone: the playbook with a multinode-style inventory and globals.yml (node_custom_config).
#  3. EDPM: the playbook by FQCN, as a custom data plane service, on a nodeset inventory.
set -eux -o pipefail
PY="${ANSIBLE_TEST_PYTHON_INTERPRETER:-python}"
HERE="$(pwd)"
# the installed collection, where the tool would take the playbooks from
COLL="$(ansible-galaxy collection list accelops.lifecycle --format json | "$PY" -c 'import json, sys
d = json.load(sys.stdin)
print([p + "/accelops/lifecycle" for p in d if "accelops.lifecycle" in d[p]][0])')"
SIM="$("$PY" -c 'import yaml, sys; print(yaml.safe_load(open(sys.argv[1]))["accelops_simulator_path"])' ../../integration_config.yml)"
W="${OUTPUT_DIR}/hooks"
rm -rf "$W"
mkdir -p "$W/labs"

# simulated compute hosts: a T4 host, and the demo host programmed as the converge role leaves it
PYTHONPATH="$SIM" "$PY" -m accelsim tree gpu-mdev "$W/labs/cn-t4"
PYTHONPATH="$SIM" "$PY" -m accelsim tree lab-all "$W/labs/cn-all"
PYTHONPATH="$SIM" "$PY" ../nova_compute_config/files/program_lab.py "$W/labs/cn-all" 4 4

# the hosts' modules on the hosts' Python where the gates name one (integration_config.yml), else the controller's
HOST_PY="$("$PY" -c 'import yaml, sys; print(yaml.safe_load(open(sys.argv[1])).get("accelops_host_python") or sys.argv[2])' \
  ../../integration_config.yml "$PY")"
"$PY" files/make_envs.py "$W" "$COLL" "$HOST_PY"

run_kayobe_hooks() {
  # Kayobe: hooks/<command>/pre.d/*.yml, sorted by sequence number, symlinks resolved, run with the inventory
  # and every YAML file of the config path as extra vars (kayobe/ansible.py).
  local cfg="$1"; shift
  local extra=()
  for f in "$cfg"/*.yml; do extra+=(-e "@$f"); done
  local hooks=()
  while IFS= read -r hook; do hooks+=("$hook"); done < <(find "$cfg/hooks/overcloud-service-deploy/pre.d" -maxdepth 1 -name '*.yml' | sort)
  test "${#hooks[@]}" -gt 0
  for hook in "${hooks[@]}"; do
    ansible-playbook -i "$cfg/inventory" "${extra[@]}" "$(readlink -f "$hook")" "$@"
  done
}

# 1. Kayobe: check mode first (reports changes, writes nothing), then real, then a rerun (changes nothing)
run_kayobe_hooks "$W/kayobe/etc/kayobe" --check | tee "$W/kayobe-check.log"
test ! -e "$W/kayobe/etc/kayobe/kolla/config/nova"
grep -E 'cn-all +: ok=[0-9]+ +changed=[1-9]' "$W/kayobe-check.log"
run_kayobe_hooks "$W/kayobe/etc/kayobe" | tee "$W/kayobe-1.log"
run_kayobe_hooks "$W/kayobe/etc/kayobe" | tee "$W/kayobe-2.log"
if grep -E ': ok=[0-9]+ +changed=[1-9]' "$W/kayobe-2.log"; then echo "the rerun changed something" >&2; exit 1; fi

# 2. Kolla-Ansible alone
ansible-playbook -i "$W/kolla/multinode" -e "@$W/kolla/globals.yml" "$COLL/playbooks/kolla_hook.yml" | tee "$W/kolla-1.log"

# 3. EDPM: the data plane service runs the playbook by name, after the nova service filled the directory
ansible-playbook -i "$W/edpm/inventory.yml" accelops.lifecycle.edpm_hook | tee "$W/edpm-1.log"
ansible-playbook -i "$W/edpm/inventory.yml" accelops.lifecycle.edpm_hook | tee "$W/edpm-2.log"
if grep -E ': ok=[0-9]+ +changed=[1-9]' "$W/edpm-2.log"; then echo "the EDPM rerun changed something" >&2; exit 1; fi

"$PY" files/check_envs.py "$W" "$HERE/../nova_compute_config/files/parse_conf.py"
