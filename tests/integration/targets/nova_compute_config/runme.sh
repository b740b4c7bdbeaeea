#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# A script target: a role target named like the collection's role would run that role itself (on /).
set -eux
ansible-playbook test.yml -i "${INVENTORY_PATH}" -e @../../integration_config.yml -e "output_dir=${OUTPUT_DIR}" "$@"
