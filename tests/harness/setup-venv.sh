#!/usr/bin/env bash
# Create (or refresh) .venv-services at the repository root: real OpenStack services for the test harness
# (tests/harness/services) and the benchmarks. Idempotent: does nothing when the venv already matches
# tests/harness/requirements.txt. Usage: tests/harness/setup-venv.sh [--force]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
venv=${ACCELOPS_SERVICES_VENV:-$top/.venv-services}
req="$here/requirements.txt"
stamp="$venv/.accelops-stamp"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ "${1:-}" != "--force" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  echo "$venv is up to date"
  exit 0
fi
py=$("$top/tools/find-python.sh" 3.12 3.13 3.11) || {
  echo "setup-venv.sh: no Python 3.11, 3.12 or 3.13 found (openstack-placement 16.0.0 needs >= 3.11)" >&2
  exit 1
}
echo "creating $venv with $py"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
# The pieces the harness calls must be there.
"$venv/bin/python" -c "import placement.wsgi, gunicorn, osc_placement" 
test -x "$venv/bin/openstack"
echo "$want" > "$stamp"
echo "$venv ready"
