#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The quick start (`make quickstart`, README "Quick start"): from a clone to a converged simulated host, its drift
# report and the fleet page, against a real Placement this script starts on 127.0.0.1.
#  1. Placement (tests/harness/services), one simulated host with an Intel X710 NIC (FUSE mount of the nic-sriov
#     lab: sysfs that reacts like the kernel), the host's compute node provider (what nova-compute makes);
#  2. playbooks/converge.yml with a declaration of 4 VFs: the VF count goes from 0 to 4 (checked in the simulated
#     sysfs), and a second run changes nothing (changed=0, checked);
#  3. playbooks/plan.yml with accelops_plan_fail_on_drift=true: no drift;
#  4. playbooks/report.yml on the same inventory: the fleet page (WORKDIR/accelerator-report.html);
#  5. everything it started is stopped and unmounted, also after a failure.
#
#   tests/demo/quickstart.sh [WORKDIR]        (default: a new temporary directory, removed after a success)
#
# Environment: PYTHON (a Python with the collection's requirements and mfusepy; default .venv/bin/python),
# ANSIBLE_PLAYBOOK (default: the ansible-playbook beside PYTHON, else the one on PATH), ANSIBLE_COLLECTIONS_PATH
# (default: a link to this checkout), QUICKSTART_KEEP=1 keeps WORKDIR. Needs root and /dev/fuse (FUSE mounts).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-$top/.venv/bin/python}
playbook=${ANSIBLE_PLAYBOOK:-$(dirname "$py")/ansible-playbook}
[ -x "$playbook" ] || playbook=ansible-playbook
given_work=${1:-}
work=${given_work:-$(mktemp -d "${TMPDIR:-/tmp}/accelops-quickstart.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
host=qs-nic
root="$work/hosts/$host"
vfs=4

if [ "$(id -u)" != 0 ] || [ ! -e /dev/fuse ]; then
  echo "quickstart: needs root and /dev/fuse (the simulated host is a FUSE mount)" >&2
  exit 2
fi

cleanup() {
  rc=$?
  set +e
  mountpoint -q "$root" && PYTHONPATH="$top/tests/simulator" "$py" -m accelsim umount "$root" >/dev/null
  # stop whatever a start (even a partial one) left running: stop is idempotent
  [ -d "$work/services" ] && "$top/tests/harness/services" stop "$work/services" >/dev/null
  if [ -z "$given_work" ] && [ -z "${QUICKSTART_KEEP:-}" ] && [ "$rc" = 0 ]; then rm -rf "$work"; fi
  [ "$rc" = 0 ] || echo "quickstart: FAILED (exit $rc); stopped what it started; files in $work" >&2
  exit "$rc"
}
trap cleanup EXIT

echo "quickstart: starting Placement on 127.0.0.1"
mkdir -p "$work/services"
"$top/tests/harness/services" start "$work/services" --services placement >/dev/null
get() { sed -n "s/^$1: \"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$work/services/services.yml"; }
endpoint=$(get placement_endpoint)
token=$(get placement_token)

echo "quickstart: simulated host $host (an Intel X710, no VFs yet) mounted at $root"
mkdir -p "$root"
PYTHONPATH="$top/tests/simulator" "$py" -m accelsim mount nic-sriov "$root" --state "$work/state" >/dev/null
# the X710's physical functions (8086:1572): each must carry the declared VF count after the converge
numvfs() { for d in "$root"/sys/bus/pci/devices/*; do
  if [ -f "$d/sriov_numvfs" ] && [ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x8086:0x1572 ]; then
    printf '%s=%s ' "${d##*/}" "$(cat "$d/sriov_numvfs")"
  fi
done; }

# The compute node provider nova-compute would have made for the host.
"$py" - "$endpoint" "$token" "$host" <<'PY'
import json, sys, urllib.request
endpoint, token, name = sys.argv[1:]
req = urllib.request.Request(endpoint + "/resource_providers", data=json.dumps({"name": name}).encode(),
                             method="POST", headers={"X-Auth-Token": token, "Content-Type": "application/json",
                                                     "OpenStack-API-Version": "placement 1.39"})
urllib.request.urlopen(req, timeout=30).close()
PY

if [ -z "${ANSIBLE_COLLECTIONS_PATH:-}" ]; then
  mkdir -p "$work/collections/ansible_collections/accelops"
  ln -sfn "$top" "$work/collections/ansible_collections/accelops/lifecycle"
  export ANSIBLE_COLLECTIONS_PATH="$work/collections"
fi

# One inventory for converge.yml, plan.yml and report.yml (Placement in the endpoint/token form).
cat >"$work/inventory.yml" <<INV
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: $py
    accelerator_host_placement_endpoint: "$endpoint"
    accelerator_host_placement_token: "$token"
    accelerator_host_root: "$work/hosts/{{ inventory_hostname }}"
    accelerator_host_persist_root: "$work/persist/{{ inventory_hostname }}"
    accelerator_host_lock_dir: "$work/lock/{{ inventory_hostname }}"
  hosts:
    $host:
      accelerator_host_functions:
        - name: x710-vf
          match: {family: nic, vendor_id: "8086", device_id: "1572"}
          vfs: {count: $vfs, driver: vfio-pci}
          placement: {traits: [CUSTOM_FAST_NET]}
INV

cd "$work"
run() {  # NAME PLAYBOOK [ARG ...]: the run's output to the screen and to NAME.log
  local name=$1; shift
  echo "quickstart: ansible-playbook $*"
  ANSIBLE_NOCOLOR=1 "$playbook" -i "$work/inventory.yml" "$@" | tee "$work/$name.log"
}
recap_changed() { sed -n '/PLAY RECAP/,$p' "$work/$1.log" | sed -n "s/^$host *: .*changed=\([0-9]*\).*/\1/p" | tail -n 1; }

before=$(numvfs)
case "$before" in ''|*=[1-9]*) echo "quickstart: the simulated X710 should start with 0 VFs: ${before:-no PF}" >&2; exit 1 ;; esac
run converge "$top/playbooks/converge.yml"
now=$(numvfs)
[ "$now" = "${before//=0/=$vfs}" ] || { echo "quickstart: after converge.yml the NIC's VFs are $now, not $vfs each" >&2; exit 1; }
[ "$(recap_changed converge)" -gt 0 ] || { echo "quickstart: converge.yml reported no change" >&2; exit 1; }
echo "quickstart: sriov_numvfs: 0 -> $vfs VFs on each X710 function ($now)"

run rerun "$top/playbooks/converge.yml"
[ "$(recap_changed rerun)" = 0 ] || { echo "quickstart: the second converge.yml changed something" >&2; exit 1; }
echo "quickstart: the second run changed nothing"

run plan "$top/playbooks/plan.yml" -e accelops_plan_fail_on_drift=true
grep -q "1 host(s) planned: 0 with drift" "$work/plan.log" || { echo "quickstart: plan.yml did not report 0 drift" >&2; exit 1; }

run report "$top/playbooks/report.yml" -e "accelops_report_dest=$work/accelerator-report.html"
grep -q "$host" "$work/accelerator-report.html" || { echo "quickstart: the fleet page does not name $host" >&2; exit 1; }
# no Cyborg here: the page says why it shows no device profiles instead of failing or claiming it read Cyborg
grep -q "Device profiles not shown: this cloud has no Cyborg" "$work/accelerator-report.html" ||
  { echo "quickstart: the fleet page does not say that Cyborg was not read" >&2; exit 1; }
echo "quickstart: done: the fleet page is $work/accelerator-report.html${given_work:+}"
