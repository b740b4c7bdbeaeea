#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# This target has the role's name, so the playbook ansible-test writes for a role-style target would run the
# collection's role itself instead of these tests: run them with a playbook of our own, with the integration
# config (accelops_simulator_path) that a role-style target would get.
set -eux
config=../../integration_config.yml
[ -f "$config" ] || { echo "runme.sh: $config not found (tools/gates.sh writes it)" >&2; exit 1; }
ansible-playbook -i "${INVENTORY_PATH}" runme.yml -e "@${config}" -e "output_dir=${OUTPUT_DIR}" "$@"
