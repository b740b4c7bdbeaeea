#!/usr/bin/env bash
# The main job on its embedded default (`make demo`):
#  1. discovery on this machine and on a simulated lab host (DEMO_LAB, default lab-all: one of each family);
#  2. the converge demo (tests/demo/run-demo.sh): real Placement and Cyborg on 127.0.0.1, an FPGA, a GPU and a NIC
#     host simulated, converge.yml with an example declaration run twice (the second changes nothing), the
#     per-host summary, the Placement tree, device profiles and their candidates; then it stops what it started.
# DEMO_CONVERGE=0 skips part 2.
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

if [ "${DEMO_CONVERGE:-1}" != 0 ]; then
  tests/demo/run-demo.sh
fi
