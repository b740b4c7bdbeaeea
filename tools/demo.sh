#!/usr/bin/env bash
# The main job on its embedded default (`make demo`): discovery on this machine and on a simulated lab host.
# DEMO_LAB names the lab description (tests/simulator/labs/<name>.yaml); default lab-all, one of each family.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
lab=${DEMO_LAB:-lab-all}
demo="$top/.build/demo"
py="$top/.venv/bin/python"
rm -rf "$demo"; mkdir -p "$demo"
PYTHONPATH="$top/tests/simulator" "$py" -m accelsim tree "$lab" "$demo/$lab"
cat >"$demo/inventory.yml" <<INV
---
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: $py
  hosts:
    this-machine:
      # a machine without accelerators still has PCI functions: show them all
      accelops_discover_include_all: true
    $lab:
      accelops_discover_root: $demo/$lab
INV
export ANSIBLE_COLLECTIONS_PATH="$top/.build/collections"
export ANSIBLE_NOCOLOR=${ANSIBLE_NOCOLOR:-0}
"$top/.venv/bin/ansible-playbook" -i "$demo/inventory.yml" playbooks/discover.yml
