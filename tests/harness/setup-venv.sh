#!/usr/bin/env bash
# Create (or refresh) the virtualenvs of the real OpenStack services the harness starts (tests/harness/services)
# for the integration tests, the benchmarks and the demo. One venv per service, so their pins cannot clash:
#   placement -> .venv-services from tests/harness/requirements.txt (Placement, gunicorn, the openstack CLI)
#   NAME      -> .venv-NAME     from tests/harness/requirements-NAME.txt (cyborg, ironic, nova, eda: ansible-rulebook
#                                  and aio-pika for the events target, its JDK from Debian)
# Idempotent: a venv whose requirements file did not change is left alone.
# Usage: tests/harness/setup-venv.sh [--force] [NAME ...]   (no NAME: every service with a requirements file)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
force=""
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
names="$*"
if [ -z "$names" ]; then
  names="placement"
  for f in "$here"/requirements-*.txt; do
    [ -e "$f" ] || continue
    n=${f##*/requirements-}; names="$names ${n%.txt}"
  done
fi
py=$("$top/tools/find-python.sh" 3.12 3.13 3.11) || {
  echo "setup-venv.sh: no Python 3.11, 3.12 or 3.13 found (the services need >= 3.11)" >&2
  exit 1
}
# One service's venv; prints what it did.
make_venv() {  # NAME
  local name=$1 venv req stamp want
  if [ "$name" = placement ]; then
    venv=${ACCELOPS_SERVICES_VENV:-$top/.venv-services}; req="$here/requirements.txt"
  else
    venv="$top/.venv-$name"; req="$here/requirements-$name.txt"
  fi
  [ -f "$req" ] || { echo "setup-venv.sh: no $req for service $name" >&2; return 1; }
  stamp="$venv/.accelops-stamp"
  want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ -z "$force" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
    echo "$venv is up to date"
    return 0
  fi
  echo "creating $venv with $py"
  rm -rf "$venv"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  if [ "$name" = placement ]; then
    # The pieces the harness calls must be there.
    "$venv/bin/python" -c "import placement.wsgi, gunicorn, osc_placement"
    test -x "$venv/bin/openstack"
  fi
  if [ "$name" = eda ]; then
    "$venv/bin/python" -c "import ansible_rulebook, aio_pika"
    test -x "$venv/bin/ansible-rulebook"
  fi
  echo "$want" > "$stamp"
  echo "$venv ready"
}

# The venvs are made side by side: pip spends most of its time waiting for downloads and the disk (two of them
# took 52 s one after the other and 27 s together on 2 cores). Each one's output is printed once it is done.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=""
for name in $names; do
  (set -e; make_venv "$name") >"$logs/$name.log" 2>&1 &
  pids="$pids $name:$!"
done
rc=0
for entry in $pids; do
  name=${entry%%:*}
  if ! wait "${entry#*:}"; then
    rc=1
    echo "setup-venv.sh: the venv of service $name failed:" >&2
  fi
  cat "$logs/$name.log"
done
exit $rc
