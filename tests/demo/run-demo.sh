#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The converge demo: real Placement (and Cyborg, when the harness has it) on 127.0.0.1, three simulated hosts (an
# FPGA host, a GPU host, a NIC host; FUSE mounts, so root and /dev/fuse), playbooks/demo.yml run twice
# (the second run changes nothing), then everything it started is stopped and unmounted.
#
#   tests/demo/run-demo.sh [WORKDIR]        (default: a new temporary directory, removed at the end)
#
# Environment: PYTHON (default .venv/bin/python), DEMO_SERVICES (default placement, plus cyborg when
# tests/harness/svc_cyborg.py exists and .venv-cyborg is built), ANSIBLE_COLLECTIONS_PATH (default: a link to
# this checkout), DEMO_KEEP=1 keeps WORKDIR.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-$top/.venv/bin/python}
playbook_bin=$(dirname "$py")/ansible-playbook
given_work=${1:-}
work=${given_work:-$(mktemp -d "${TMPDIR:-/tmp}/accelops-demo.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
export PYTHONPATH="$top/tests/simulator"

services=${DEMO_SERVICES:-placement}
if [ -z "${DEMO_SERVICES:-}" ] && [ -f "$top/tests/harness/svc_cyborg.py" ] && [ -x "$top/.venv-cyborg/bin/python" ]; then
  services=placement,cyborg
fi

# Programming needs a simulated kernel that reacts to writes: FUSE mounts, so root and /dev/fuse.
if [ "$(id -u)" != 0 ] || [ ! -e /dev/fuse ]; then
  echo "demo: needs root and /dev/fuse (the simulated hosts are FUSE mounts)" >&2
  exit 2
fi
mode=mount
hosts="sim-fpga:fpga-dfl sim-gpu:gpu-mdev sim-nic:nic-sriov"
started=""

cleanup() {
  rc=$?
  set +e
  for h in $hosts; do
    mountpoint -q "$work/hosts/${h%%:*}" && "$py" -m accelsim umount "$work/hosts/${h%%:*}" >/dev/null
  done
  [ -n "$started" ] && "$top/tests/harness/services" stop "$work/services" >/dev/null
  if [ -z "$given_work" ] && [ -z "${DEMO_KEEP:-}" ] && [ "$rc" = 0 ]; then rm -rf "$work"; fi
  echo "demo: stopped what it started${DEMO_KEEP:+; kept $work}"
  exit "$rc"
}
trap cleanup EXIT

echo "demo: starting $services on 127.0.0.1"
# marked before the start: a start that fails halfway (one service up, the next not) leaves processes to stop
started=1
"$top/tests/harness/services" start "$work/services" --services "$services" >/dev/null
svc_yml="$work/services/services.yml"
get() { sed -n "s/^$1: \"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$svc_yml"; }
endpoint=$(get placement_endpoint)
token=$(get placement_token)

echo "demo: simulated hosts ($mode): $hosts"
for h in $hosts; do
  name=${h%%:*} lab=${h#*:}
  mkdir -p "$work/hosts/$name"
  "$py" -m accelsim mount "$lab" "$work/hosts/$name" --state "$work/state/$name" >/dev/null
done

# The bitstream the FPGA host must carry, built for its card's interface id, and its sha256.
"$py" -c 'import sys, accelsim; accelsim.make_gbs(sys.argv[1], "9346116df8f65a1ba2b6f1ec3a8a0b5e", "11112222333344445555666677778888")' \
  "$work/gzip.gbs"
sha=$(sha256sum "$work/gzip.gbs" | cut -d' ' -f1)

if [ -z "${ANSIBLE_COLLECTIONS_PATH:-}" ]; then
  mkdir -p "$work/collections/ansible_collections/accelops"
  ln -sfn "$top" "$work/collections/ansible_collections/accelops/lifecycle"
  export ANSIBLE_COLLECTIONS_PATH="$work/collections"
fi

cat >"$work/inventory.yml" <<INV
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: $py
    accelops_demo_create_roots: true
    accelops_converge_serial: 2
    accelerator_host_placement_endpoint: "$endpoint"
    accelerator_host_placement_token: "$token"
    accelerator_host_persist_root: "$work/persist/{{ inventory_hostname }}"
    accelerator_host_fpga_persistent: false
    accelerator_host_lock_dir: "$work/lock/{{ inventory_hostname }}"
    accelerator_host_root: "$work/hosts/{{ inventory_hostname }}"
$(sed -n 's/^\(cyborg_[a-z_]*\): \(.*\)$/    \1: \2/p' "$svc_yml")
    accelops_demo_profiles:
      - {name: demo-fpga-gzip, groups: [{family: fpga, function: gzip}]}
      - {name: demo-vgpu-t4-4q, groups: [{family: vgpu, function: t4-4q}]}
      - {name: demo-fpga-nlb, groups: [{family: fpga, function: nlb}]}
  hosts:
    sim-fpga:
      accelerator_host_allowed_functions: [gzip, "$sha"]
      accelerator_host_functions:
        - name: gzip
          match: {family: fpga, vendor_id: "8086", device_id: "0b2b", count: 1}
          fpga: {bitstream: "$work/gzip.gbs", sha256: "$sha", function_id: "11112222-3333-4444-5555-666677778888"}
    sim-gpu:
      accelerator_host_functions:
        - name: t4-4q
          match: {family: gpu, vendor_id: "10de", device_id: "1eb8"}
          vgpu: {type: GRID T4-4Q, count: 2}
    sim-nic:
      accelerator_host_functions:
        - name: x710-vf
          match: {family: nic, device_id: "1572", count: 1}
          vfs: {count: 8, driver: vfio-pci}
          placement: {traits: [CUSTOM_FAST_NET]}
INV

cd "$top"
for run in first second; do
  echo "demo: converge.yml, $run run"
  ANSIBLE_STDOUT_CALLBACK=${ANSIBLE_STDOUT_CALLBACK:-default} ANSIBLE_DISPLAY_SKIPPED_HOSTS=false \
    "$playbook_bin" -i "$work/inventory.yml" playbooks/demo.yml | tee "$work/$run.log"
done
if grep -Eq 'changed=[1-9]' <(sed -n '/PLAY RECAP/,$p' "$work/second.log" | grep -v '^localhost'); then
  echo "demo: the second run changed something (see above)"; exit 1
fi
echo "demo: the second run changed nothing"
