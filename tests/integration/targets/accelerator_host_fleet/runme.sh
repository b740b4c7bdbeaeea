#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The accelerator_host role on a small fleet: four FUSE-mounted simulated hosts (lab nic-sriov) in their own
# inventory, playbooks/converge.yml with serial: 2 against a real Placement, so the role's once-per-batch Placement
# read and report run for two batches. Phases (check.yml asserts each one, reading the hosts and Placement itself):
#   locked: another converge holds fleet-a's lock; fleet-a fails, its batch mate and the other batch converge and
#           are reported; fleet-a is neither touched nor reported.
#   rerun:  the lock is gone and an operator drained fleet-d's NIC provider; fleet-a converges, the others change
#           nothing and fleet-d's drain stays.
#   noop:   nothing changes anywhere (changed=0 for every host in the recap).
set -eux
common=(-e @../../integration_config.yml -e "output_dir=${OUTPUT_DIR}")
ansible-playbook setup.yml -i "${INVENTORY_PATH}" "${common[@]}"
trap 'ansible-playbook teardown.yml -i "${INVENTORY_PATH}" "${common[@]}"' EXIT

converge() {
  local phase=$1 want_rc=$2 rc=0
  ansible-playbook run.yml -i "${OUTPUT_DIR}/fleet.yml" "${common[@]}" -e "phase=${phase}" -e accelops_converge_hosts=fleet \
    -e accelops_converge_serial=2 -e accelops_converge_max_fail_percentage=100 \
    >"${OUTPUT_DIR}/run-${phase}.log" 2>&1 || rc=$?
  cat "${OUTPUT_DIR}/run-${phase}.log"
  [ "$rc" -eq "$want_rc" ] || { echo "phase ${phase}: ansible-playbook exited ${rc}, expected ${want_rc}"; exit 1; }
  # check.yml writes this file after its last assertion
  [ -f "${OUTPUT_DIR}/checked-${phase}" ] || { echo "phase ${phase}: the checks did not pass"; exit 1; }
}

converge locked 2
converge rerun 0
converge noop 0
# every fleet host: changed=0, failed=0 in the recap of the no-op run
for h in fleet-a fleet-b fleet-c fleet-d; do
  grep -Eq "^${h} +: ok=[0-9]+ +changed=0 +unreachable=0 +failed=0 " "${OUTPUT_DIR}/run-noop.log" ||
    { echo "no-op run: ${h} is not changed=0 failed=0"; exit 1; }
done
