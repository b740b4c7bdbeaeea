#!/usr/bin/env bash
# Every quality gate of the collection, counted: each runs even when an earlier one failed, and the run
# ends with one summary line "gates: N passed, M failed". Exit status 1 when any gate failed.
# Called by `make test` after the virtualenv and the Debian packages are installed.
# For development: GATES="sanity units" limits the run to some gates; TARGETS="vgpu sriov_vfs" limits the
# integration targets; HARNESS_SERVICES="placement,cyborg" limits the services started for them (default: all);
# SANITY_QUICK=1 runs sanity on the controller Python only.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
venv="$top/.venv"
export PATH="$top/.build/pybin:$venv/bin:$PATH"
# ansible-test strips most environment variables and calls interpreters by name: a directory of links to
# the real interpreters (not pyenv shims) goes first on PATH.
mkdir -p .build/pybin
py_versions=""
for v in 3.9 3.10 3.11 3.12 3.13; do
  if p=$(tools/find-python.sh "$v"); then
    ln -sf "$p" ".build/pybin/python$v"
    py_versions="$py_versions $v"
  fi
done
ctl_py=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
ln -sf "$venv/bin/python" ".build/pybin/python$ctl_py"

# ansible-test downloads a pip bootstrap script from a host this network cannot reach; give it a stand-in.
pip_ver=$("$venv/bin/python" - <<'PY'
import re, ansible_test, os
src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")).read()
m = re.search(r"pip='([0-9.]+)'", src)
print(m.group(1) if m else "")
PY
)
if [ -n "$pip_ver" ]; then
  mkdir -p "$HOME/.ansible/test/cache"
  cp tools/get_pip_standin.py "$HOME/.ansible/test/cache/get_pip_${pip_ver//./_}.py"
fi

# A staging tree per run: two gate runs at once (or a demo re-staging) never pull a tree from under each other.
run_dir="$top/.build/gates/run-$$"
trap 'rm -rf "$run_dir"' EXIT
coll=$(tools/stage.sh "$run_dir/collections")
export ANSIBLE_COLLECTIONS_PATH="$run_dir/collections"
gates=${GATES:-"sanity lint changelog docs units simulator harness integration reliability"}
passed=0; failed=0; failed_names=""
log_dir="$top/.build/gate-logs"; mkdir -p "$log_dir"

run_gate() {
  local name=$1; shift
  local start=$SECONDS
  echo "=== gate $name: $*"
  if "$@"; then
    passed=$((passed + 1)); echo "=== gate $name: PASSED ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1)); failed_names="$failed_names $name"; echo "=== gate $name: FAILED ($((SECONDS - start)) s)"
  fi
}

gate_sanity() {
  # compile and import run on every target Python found; the rest on the controller Python.
  (cd "$coll" && ansible-test sanity --color no --requirements --python "$ctl_py" --skip-test compile --skip-test import) ||
    return 1
  [ -n "${SANITY_QUICK:-}" ] && return 0
  for v in $py_versions; do
    (cd "$coll" && ansible-test sanity --color no --requirements --python "$v" --test compile --test import) || return 1
  done
}
gate_lint() { (cd "$coll" && ansible-lint --profile production --offline --nocolor); }
gate_changelog() { (cd "$coll" && antsibull-changelog lint); }
gate_docs() { (cd "$coll" && antsibull-docs lint-collection-docs --plugin-docs .); }
gate_units() { (cd "$coll" && ansible-test units --color no --requirements --python "$ctl_py"); }
gate_simulator() { python -m pytest -q -p no:cacheprovider --durations=5 tests/simulator; }
gate_harness() {
  if [ ! -d tests/harness/tests ]; then echo "no harness tests yet"; return 0; fi
  python -m pytest -q -p no:cacheprovider --durations=5 tests/harness/tests
}

# Faults, hostile input, concurrency (docs/reliability.md): its own pytest suite, real services and simulator.
gate_reliability() {
  if [ ! -d tests/reliability ]; then echo "no reliability suite yet"; return 0; fi
  python -m pytest -q -p no:cacheprovider --durations=5 tests/reliability
}

# Real services (Placement, ...) for the integration targets: started once, their endpoints handed to every
# target through tests/integration/integration_config.yml (ansible-test passes those vars to each target).
services_dir="$run_dir/services"
start_services() {
  rm -rf "$services_dir"; mkdir -p "$services_dir"
  { echo "---"; echo "accelops_simulator_path: $coll/tests/simulator"; } >"$coll/tests/integration/integration_config.yml"
  [ -x tests/harness/services ] || return 0
  tests/harness/services start "$services_dir" ${HARNESS_SERVICES:+--services "$HARNESS_SERVICES"} || return 1
  grep -v '^---' "$services_dir/services.yml" >>"$coll/tests/integration/integration_config.yml"
}
stop_services() { [ -x tests/harness/services ] && tests/harness/services stop "$services_dir"; return 0; }

# Passes ansible-test's output through and ends it with the seconds each target took (where the suite's time goes).
time_targets() {
  local line name="" start=$SECONDS times=""
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [[ $line =~ ^Running\ ([^ ]+)\ integration\ test ]]; then
      [ -n "$name" ] && times="$times$name $((SECONDS - start)) s"$'\n'
      name=${BASH_REMATCH[1]}; start=$SECONDS
    fi
  done
  [ -n "$name" ] && times="$times$name $((SECONDS - start)) s"$'\n'
  printf 'integration: seconds per target\n%s' "$times"
}

gate_integration() {
  local out rc
  out=$(mktemp)
  mkdir -p "$coll/tests/integration"
  if ! start_services; then stop_services; echo "integration: the services did not start (logs: $services_dir)"; return 1; fi
  # shellcheck disable=SC2086  # TARGETS is a list of words
  (cd "$coll" && ansible-test integration --color no --python "$ctl_py" --allow-destructive --continue-on-error ${TARGETS:-}) 2>&1 |
    tee "$out" | time_targets
  rc=${PIPESTATUS[0]}
  stop_services
  if grep -q "All targets skipped" "$out"; then echo "integration: every target was skipped: that tests nothing"; rc=1; fi
  if ! grep -Eq "Running .* integration test (role|script)" "$out"; then echo "integration: no target ran"; rc=1; fi
  rm -f "$out"
  return "$rc"
}

for g in $gates; do
  run_gate "$g" "gate_$g"
done
[ -z "$failed_names" ] || echo "failed gates:$failed_names"
echo "gates: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
