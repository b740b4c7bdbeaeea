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
# Bytecode is written (an environment may say otherwise): the simulator's tool fakes start a Python process for
# every tool run, and each compiled its sources on every start (about half of a run's CPU); the gates start
# thousands. It goes to __pycache__ beside the sources: the staged trees (removed at exit) and, for the gates that
# run from the checkout, its tests/ (ignored by git, never staged).
unset PYTHONDONTWRITEBYTECODE
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
# The integration targets run their modules on the modules' virtualenv (`make venv-modules`: the platform's Python,
# as on a real host), the controller on .venv; without it, on the controller's Python.
mod_python="$venv/bin/python"
[ -x "$top/.venv-modules/bin/python" ] && mod_python="$top/.venv-modules/bin/python"
mod_py=$("$mod_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# The simulator's tool fakes (a Python process per nvidia-smi, mdevctl, ... run, thousands per gate run; standard
# library only) run on the interpreter of this name on PATH (tests/simulator/accelsim/tree.py): the modules' one.
ln -sf "$mod_python" .build/pybin/accelsim-tool-python
# and the modules of the ansible-playbook runs of the reliability suite (tests/reliability/helpers.py)
export ACCELOPS_MODULE_PYTHON="$mod_python"

# What ansible-test keeps in the home directory (its pip bootstrap stand-in, its SSH key pair) is made before any
# ansible-test command, once: a first run on a fresh machine must not depend on which job gets there first.
tools/ansible-test-home.sh "$venv/bin/python" || { echo "gates: tools/ansible-test-home.sh failed"; exit 1; }

# A staging tree per run: two gate runs at once (or a demo re-staging) never pull a tree from under each other.
run_dir="$top/.build/gates/run-$$"
trap 'rm -rf "$run_dir"' EXIT
coll=$(tools/stage.sh "$run_dir/collections")
export ANSIBLE_COLLECTIONS_PATH="$run_dir/collections"
gates=${GATES:-"sanity lint changelog docs units simulator harness integration reliability oldest"}
# `make sanity-venvs` (part of `make setup`): ansible-test keeps the virtualenvs of its sanity tests in
# ~/.ansible/test/venv; built here, with the rest of the set-up, not in the first gate run of a new home.
prime_only=""
[ "${1:-}" = "--prime-sanity-venvs" ] && prime_only=1
passed=0; failed=0; failed_names=""
log_dir="$top/.build/gate-logs"; mkdir -p "$log_dir"

# Runs gate_NAME in a subshell and writes to FILE the CPU seconds (user + system) of every process the gate waited
# for: with the wall time it says whether the gate kept a core busy. The services a gate starts in the background
# (Placement, Cyborg, ... detach from it) are not counted.
cpu_of_gate() {  # NAME FILE
  (
    rc=0
    "gate_$1" || rc=$?
    # `times` itself, not in a pipeline: a pipeline's subshell has no children of its own
    times >"$2.times"
    awk 'function s(v) { split(v, a, "m"); return a[1] * 60 + a[2] }
      { u += s($1); y += s($2) } END { printf "%.0f s CPU (%.0f user, %.0f sys)\n", u + y, u, y }' "$2.times" >"$2"
    exit "$rc"
  )
}

run_gate() {
  local name=$1 start=$SECONDS cpu=""
  echo "=== gate $name: gate_$name"
  if cpu_of_gate "$name" "$run_dir/cpu-$name"; then
    read -r cpu <"$run_dir/cpu-$name"
    passed=$((passed + 1)); echo "=== gate $name: PASSED ($((SECONDS - start)) s, $cpu)"
  else
    read -r cpu <"$run_dir/cpu-$name"
    failed=$((failed + 1)); failed_names="$failed_names $name"; echo "=== gate $name: FAILED ($((SECONDS - start)) s, $cpu)"
  fi
}

sanity_prime=""   # --prime-venvs: build the virtualenvs of the sanity tests, run none (tools/gates.sh --prime-sanity-venvs)
gate_sanity() {
  # compile and import run on every target Python found; the rest on the controller Python.
  (cd "$coll" && ansible-test sanity --color no --requirements $sanity_prime --python "$ctl_py" --skip-test compile \
    --skip-test import) || return 1
  [ -n "${SANITY_QUICK:-}" ] && return 0
  for v in $py_versions; do
    (cd "$coll" && ansible-test sanity --color no --requirements $sanity_prime --python "$v" --test compile --test import) ||
      return 1
  done
}
gate_lint() { (cd "$coll" && ansible-lint --profile production --offline --nocolor); }
gate_changelog() { (cd "$coll" && antsibull-changelog lint); }
# the plugins' documentation must render, every playbook the docs name must parse (one ansible-playbook process for
# all of them; what the docs name is checked by tests/unit/plugins/test_docs_claims.py), and the documentation site
# must build without a warning
gate_docs() {
  (cd "$coll" && antsibull-docs lint-collection-docs --plugin-docs .) &&
    (cd "$coll" && ansible-playbook --syntax-check -i localhost, playbooks/*.yml >/dev/null) &&
    DOCS_SITE_OUT="$run_dir/docs-site" tools/docs-site.sh
}
# One pytest run of the units: a test skipped fails it (the gates give a test all it needs: the simulator, root).
units_run() {  # PYTEST COMMAND...
  local out rc=0
  out=$("$@" 2>&1) || rc=1
  printf '%s\n' "$out"
  if printf '%s\n' "$out" | tail -n 1 | grep -q ' skipped'; then echo "units: a test was skipped (above)"; rc=1; fi
  return "$rc"
}
# Its own staged tree: it runs beside sanity, lint and docs, which work in "$coll" (ansible-test's tests/output).
# pytest itself, in the two runs ansible-test units makes (the modules' side: modules and module_utils; the
# controller's: the rest), without ansible-test's fork of a process per test, which was about a third of the gate's
# CPU (docs/development.md). The oldest gate runs the modules' and actions' units through ansible-test units.
gate_units() {
  local ucoll rc=0
  ucoll=$(tools/stage.sh "$run_dir/collections-units") || return 1
  (
    cd "$ucoll" || exit 1
    set -- env PYTHONPATH="$run_dir/collections-units" ANSIBLE_COLLECTIONS_PATH="$run_dir/collections-units" \
      python -m pytest -q -p no:cacheprovider -o xfail_strict=true -n 2 -rs
    units_run "$@" tests/unit/plugins/modules tests/unit/plugins/module_utils || rc=1
    units_run "$@" --ignore=tests/unit/plugins/modules --ignore=tests/unit/plugins/module_utils tests/unit || rc=1
    exit "$rc"
  )
}
gate_simulator() { python -m pytest -q -p no:cacheprovider --durations=5 tests/simulator; }
gate_harness() {
  if [ ! -d tests/harness/tests ]; then echo "no harness tests yet"; return 0; fi
  python -m pytest -q -p no:cacheprovider --durations=5 tests/harness/tests
}

# The oldest ansible-core that meta/runtime.yml admits (.venv-oldest, `make venv-oldest`): the sanity tests whose
# verdict depends on ansible-core (the plugins' documentation and argument specs, runtime metadata) on its
# controller Python, the modules' unit tests, and the quick start as the converge smoke target (a simulated NIC must go from
# 0 to 4 VFs, the rerun must change nothing), and every role's defaults against its own argument spec (role_defaults:
# 2.17 renders a template that gives null as ""). The rest of the gates run on the newest (.venv).
gate_oldest() {
  local ovenv="$top/.venv-oldest" opy ocoll="$run_dir/collections-oldest" obin="$run_dir/pybin-oldest" otarget
  [ -x "$ovenv/bin/ansible-test" ] || { echo "oldest: no $ovenv (make venv-oldest)"; return 1; }
  opy=$("$ovenv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  # the modules on the modules' virtualenv as in the integration gate; without it, on this gate's own Python (the
  # newest controller Python may be newer than ansible-core 2.17 runs modules on)
  otarget="$mod_py@$mod_python"
  [ "$mod_python" = "$venv/bin/python" ] && otarget="$opy@$ovenv/bin/python"
  # its own interpreter link (not .build/pybin's, which the newest's sanity uses) and its own staged tree
  mkdir -p "$obin"; ln -sf "$ovenv/bin/python" "$obin/python$opy"
  ocoll=$(tools/stage.sh "$ocoll/c")
  mkdir -p "$ocoll/tests/integration"; write_integration_config "$ocoll"
  (
    export PATH="$obin:$ovenv/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$run_dir/collections-oldest/c"
    cd "$ocoll" || exit 1
    ansible-playbook --version | sed -n 1p
    "$top/tools/ansible-test-home.sh" "$ovenv/bin/python" || exit 1
    mkdir -p "$run_dir/home-oldest" && HOME=$run_dir/home-oldest "$top/tools/ansible-test-home.sh" "$ovenv/bin/python" || exit 1
    ansible-test sanity --color no --requirements --python "$opy" --test ansible-doc --test validate-modules \
      --test action-plugin-docs --test runtime-metadata || exit 1
    # the units whose verdict depends on ansible-core: the modules' (AnsibleModule's argument handling and exit)
    # and the controller actions' (ActionBase and its argument spec validation). Not the filters': their tests
    # call the filter functions as Python, not through ansible-core's templating, so they give the same verdict on
    # every ansible-core; the quick start below runs the roles through 2.17. module_utils are plain Python too.
    # By pytest itself, as the units gate runs them (ansible-test units forks a process per test: about a third more
    # CPU for the same tests), in the two runs ansible-test makes (the modules' side, the controller's).
    set -- env PYTHONPATH="$run_dir/collections-oldest/c" python -m pytest -q -p no:cacheprovider -o xfail_strict=true -n 2 -rs
    units_run "$@" tests/unit/plugins/modules || exit 1
    units_run "$@" tests/unit/plugins/action || exit 1
    HOME=$run_dir/home-oldest ansible-test integration --color no --controller "origin:python=$opy" \
      --target "controller:python=$otarget" --allow-destructive quickstart role_defaults
  )
}

# Faults, hostile input, concurrency (docs/reliability.md): its own pytest suite, real services and simulator.
gate_reliability() {
  if [ ! -d tests/reliability ]; then echo "no reliability suite yet"; return 0; fi
  python -m pytest -q -p no:cacheprovider --durations=5 tests/reliability
}

# What every target may read besides the services: the simulator (in the staged tree) and the services' venv (for
# a target that starts its own, the quick start).
write_integration_config() {  # COLL
  { echo "---"; echo "accelops_simulator_path: $1/tests/simulator"
    echo "accelops_services_venv: ${ACCELOPS_SERVICES_VENV:-$top/.venv-services}"
    # every module of a target on the modules' virtualenv, the controller-context targets' too (an extra var, above
    # ansible-test's inventory), and the Python the simulated hosts of a nested run give theirs
    echo "ansible_python_interpreter: $mod_python"
    echo "accelops_host_python: $mod_python"; } >"$1/tests/integration/integration_config.yml"
}

# Real services (Placement, ...) for the integration targets: started once per job, their endpoints handed to
# every target through tests/integration/integration_config.yml (ansible-test passes those vars to each target).
start_services() {  # COLL SERVICES_DIR
  rm -rf "$2"; mkdir -p "$2"
  write_integration_config "$1"
  [ -x tests/harness/services ] || return 0
  tests/harness/services start "$2" ${HARNESS_SERVICES:+--services "$HARNESS_SERVICES"} \
    ${HARNESS_WITHOUT:+--without "$HARNESS_WITHOUT"} || return 1
  grep -v '^---' "$2/services.yml" >>"$1/tests/integration/integration_config.yml"
}
stop_services() { [ -x tests/harness/services ] && tests/harness/services stop "$1"; return 0; }

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

# One integration job: its own staged collection, its own services, the targets (or alias patterns) given.
integration_job() {  # COLL SERVICES_DIR OUT [TARGET ...]
  local jcoll=$1 sdir=$2 out=$3 rc; shift 3
  mkdir -p "$jcoll/tests/integration"
  if ! start_services "$jcoll" "$sdir"; then
    stop_services "$sdir"; echo "integration: the services did not start (logs: $sdir)" >"$out"; return 1
  fi
  (cd "$jcoll" && HOME=$int_home ansible-test integration --color no --controller "origin:python=$ctl_py" \
    --target "controller:python=$mod_py@$mod_python" --allow-destructive --continue-on-error "$@") 2>&1 |
    time_targets >"$out"
  rc=${PIPESTATUS[0]}
  stop_services "$sdir"
  # the targets' artifacts (a page, its screenshot) outlive the run's staged tree, which is removed at exit
  local keep
  keep="$log_dir/integration-artifacts/$(basename "$out" .log)"
  rm -rf "$keep"
  if [ -d "$jcoll/tests/output/data" ]; then mkdir -p "$keep" && cp -r "$jcoll/tests/output/data/." "$keep/"; fi
  return "$rc"
}

# The targets are split into groups by their `shippable/posix/groupN` alias; each group runs as a job of its own
# (own staged tree, own Placement/Cyborg/Ironic), INTEGRATION_JOBS (default 2) at a time, after the lanes of the
# other gates (below). With TARGETS set (development), one job runs those.
# Every job runs ansible-test with one new, empty home directory (int_home), prepared the way the gates prepare
# the user's, once before any job: each run starts the jobs the way a new user's first run does, so that first-run
# state (the key pair two jobs would both make) cannot hide behind what an earlier run left in the real home.
int_out="$run_dir/integration"
int_home="$run_dir/home"
prepare_integration() {
  rm -rf "$int_out" "$int_home"; mkdir -p "$int_out" "$int_home"
  HOME=$int_home tools/ansible-test-home.sh "$venv/bin/python"
}
integration_groups() { sed -n 's#^shippable/posix/\(group[0-9]*\)$#\1#p' tests/integration/targets/*/aliases | sort -u; }

# One group: its job, then its log with the checks that a run tested something.
gate_integration_group() {  # GROUP
  local g=$1 jcoll without=rabbitmq a rc=0
  jcoll=$(tools/stage.sh "$run_dir/collections-$g") || return 1
  # the message bus only for a group with a target that says it needs one (alias accelops/service/rabbitmq)
  for a in tests/integration/targets/*/aliases; do
    grep -qx "shippable/posix/$g" "$a" && grep -qx 'accelops/service/rabbitmq' "$a" && without=""
  done
  HARNESS_WITHOUT=$without integration_job "$jcoll" "$run_dir/services-$g" "$int_out/$g.log" "shippable/posix/$g/" || rc=1
  check_integration_log "$g" || rc=1
  return "$rc"
}
check_integration_log() {  # GROUP
  local log="$int_out/$1.log" rc=0
  echo "--- integration $1"
  cat "$log"
  if grep -q "All targets skipped" "$log"; then echo "integration: every target was skipped: that tests nothing"; rc=1; fi
  if ! grep -Eq "Running .* integration test (role|script)" "$log"; then echo "integration: no target ran"; rc=1; fi
  return "$rc"
}

gate_integration() {
  local rc=0 jobs=${INTEGRATION_JOBS:-2} g pids="" i=0
  prepare_integration || return 1
  if [ -n "${TARGETS:-}" ] || [ "$jobs" -le 1 ]; then
    # shellcheck disable=SC2086  # TARGETS is a list of words
    integration_job "$coll" "$run_dir/services" "$int_out/all.log" ${TARGETS:-} || rc=1
    check_integration_log all || rc=1
    return "$rc"
  fi
  for g in $(integration_groups); do
    gate_integration_group "$g" >"$int_out/$g.out" 2>&1 &
    pids="$pids $!"; i=$((i + 1))
    if [ "$i" -ge "$jobs" ]; then
      for p in $pids; do wait "$p" || rc=1; done
      pids=""; i=0
    fi
  done
  for p in $pids; do wait "$p" || rc=1; done
  for g in $(integration_groups); do cat "$int_out/$g.out"; done
  return "$rc"
}

# The gates before integration run side by side, in three lanes: reliability (Nova boots, restarts of services,
# stalled requests: it waits for a good part of its wall time) in one; sanity, lint, changelog and docs in another;
# units (two pytest workers), simulator and harness in the third. Then integration, its two groups side by side, and
# oldest beside them at nice 10 (below). Tried and measured slower (docs/development.md, "Order"): integration's groups in the lanes, after
# the short gates of their lanes (16 min 28 s warm against 15 min 39 s), first in the lanes of the short gates, or
# each in a lane of its own from the start (both slower from a fresh clone: integration under three or four lanes
# took 590 s and more per group, where alone it takes about 430 s).
# A lane's gates write their output to a log that is printed, in gate order, once every lane is done.
# GATE_LANES=1 runs every gate in turn with its output as it comes.
lane_dir="$run_dir/lanes"

run_gate_quietly() {  # NAME: the gate's output to its log, its status and seconds to NAME.status
  local name=$1 start=$SECONDS rc=0
  cpu_of_gate "$name" "$lane_dir/$name.cpu" >"$lane_dir/$name.log" 2>&1 || rc=$?
  echo "$rc $((SECONDS - start))" >"$lane_dir/$name.status"
}

report_quiet_gate() {  # NAME: what run_gate prints, from the lane's files
  local name=$1 rc=1 took=0 cpu="CPU not known"
  echo "=== gate $name: gate_$name"
  cat "$lane_dir/$name.log" 2>/dev/null
  [ -f "$lane_dir/$name.status" ] && read -r rc took <"$lane_dir/$name.status"
  [ -f "$lane_dir/$name.cpu" ] && read -r cpu <"$lane_dir/$name.cpu"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); echo "=== gate $name: PASSED ($took s, $cpu)"
  else
    failed=$((failed + 1)); failed_names="$failed_names $name"; echo "=== gate $name: FAILED ($took s, $cpu)"
  fi
}

if [ -n "$prime_only" ]; then
  sanity_prime=--prime-venvs
  gate_sanity && exit 0
  echo "gates: the sanity tests' virtualenvs could not be built"; exit 1
fi

lane_a=""; lane_b=""; lane_c=""; beside=""; rest=""
for g in $gates; do
  case $g in
    sanity | lint | changelog | docs) lane_a="$lane_a $g" ;;
    reliability) lane_b="$lane_b $g" ;;
    units | simulator | harness) lane_c="$lane_c $g" ;;
    oldest) beside="$beside $g" ;;
    *) rest="$rest $g" ;;
  esac
done
lanes=0
for l in "$lane_a" "$lane_b" "$lane_c"; do [ -n "$l" ] && lanes=$((lanes + 1)); done
if [ "${GATE_LANES:-3}" -gt 1 ] && [ "$lanes" -gt 1 ]; then
  mkdir -p "$lane_dir"
  echo "=== gates$lane_a |$lane_b |$lane_c: side by side (their output follows when all are done)"
  lane_pids=""
  for l in "$lane_a" "$lane_b" "$lane_c"; do
    [ -n "$l" ] || continue
    # The reliability lane waits on its services and stalls: it gets a core whenever it can use one (given the same
    # share as the two others, it took 775 s instead of 463 s); the other lanes take what it leaves (nice 10).
    # shellcheck disable=SC2086  # l is a list of gate names
    (
      [ "$l" = "$lane_b" ] || renice -n 10 -p "$BASHPID" >/dev/null
      for g in $l; do run_gate_quietly "$g"; done
    ) &
    lane_pids="$lane_pids $!"
  done
  # shellcheck disable=SC2086  # a list of pids
  wait $lane_pids
  for g in $gates; do
    case " $lane_a $lane_b $lane_c " in *" $g "*) report_quiet_gate "$g" ;; esac
  done
  gates="$beside$rest"
fi
# Integration keeps about one and a half cores busy (its targets wait on services, timers and nested runs): oldest,
# which needs a core, runs beside it at nice 10 and takes what integration leaves.
if [ "${GATE_LANES:-3}" -gt 1 ] && [ -n "$beside" ] && [ -n "$rest" ]; then
  mkdir -p "$lane_dir"
  echo "=== gates$beside: beside$rest, at nice 10 (their output follows)"
  # shellcheck disable=SC2086  # a list of gate names
  (
    renice -n 10 -p "$BASHPID" >/dev/null
    for g in $beside; do run_gate_quietly "$g"; done
  ) &
  beside_pid=$!
  for g in $rest; do run_gate "$g" "gate_$g"; done
  wait "$beside_pid"
  for g in $beside; do report_quiet_gate "$g"; done
else
  for g in $gates; do run_gate "$g" "gate_$g"; done
fi
[ -z "$failed_names" ] || echo "failed gates:$failed_names"
echo "gates: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
