#!/usr/bin/env bash
# The whole suite: unit tests, then every end-to-end script tests/e2e/t*.sh.
# Ends with one line "N passed, N failed" counting unit tests and e2e scripts.
# --e2e: only the end-to-end scripts (UNIT need not be set).
# One throwaway PostgreSQL cluster serves the whole run (tests/pg/with-cluster.sh:
# VT_TEST_PG and VT_TEST_PG_DIR), stopped at the end whatever happens.
set -u
if [[ -z ${VT_TEST_PG:-} && -z ${VT_RUN_ALL_PG_TRIED:-} ]]; then
  export VT_RUN_ALL_PG_TRIED=1
  exec "$(dirname "$0")/pg/with-cluster.sh" bash "$0" "$@"
fi
e2e_only=
[[ ${1:-} == --e2e ]] && e2e_only=1
cd "$(dirname "$0")/.."
: "${VIDTHEQUE:?set VIDTHEQUE to the binary}"
[[ -n $e2e_only ]] || : "${UNIT:?set UNIT to the unit runner}"
export VIDTHEQUE OMP_THREAD_LIMIT=1
out=tests/out
# each run's seconds in the last run (tests/out/NAME.secs), to start the longest first
declare -A last_s=()
for f in "$out"/*.secs; do
  [[ -f $f ]] && last_s[$(basename "$f" .secs)]=$(cat "$f")
done
rm -rf "$out"; mkdir -p "$out"
# The clips the scripts share (tests/e2e/lib.sh: fixture) are made once a run, here; a
# VT_FIXTURE_CACHE given is kept after the run (its clips are keyed by their generator).
if [[ -z ${VT_FIXTURE_CACHE:-} ]]; then
  VT_FIXTURE_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/vt-fixtures.XXXXXX")
  trap 'rm -rf "$VT_FIXTURE_CACHE"' EXIT
fi
export VT_FIXTURE_CACHE
passed=0 failed=0 failures=()

if [[ -z $e2e_only ]]; then
  echo "== unit tests"
  "$UNIT" > "$out/unit.log" 2>&1
  grep -E '^(ok|FAIL) ' "$out/unit.log" | grep '^FAIL' || true
  line=$(tail -n 1 "$out/unit.log")
  if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
    echo "unit: $line"
    ((BASH_REMATCH[2] == 0)) || failures+=("unit (see $out/unit.log)")
  else
    echo "unit runner did not finish:"; tail -n 20 "$out/unit.log"
    failed=$((failed + 1)); failures+=("unit runner")
  fi
fi

# The end-to-end runs: every script on SQLite, then the scripts whose header says
# "# backends: sqlite postgresql" again with their library's catalog on PostgreSQL
# (VT_E2E_PG, tests/e2e/lib.sh: `vt init` makes the database and a worker of its own);
# VT_E2E_PG_ALL=1 runs every script there. Run I is named names[I], runs scripts[I] with
# envs[I] (VAR=VALUE or empty); its log is $out/NAME.log.
names=() scripts=() envs=()
for t in tests/e2e/t[0-9]*.sh; do
  names+=("$(basename "$t" .sh)"); scripts+=("$t"); envs+=("")
done
if [[ -n ${VT_TEST_PG:-} ]]; then
  for t in tests/e2e/t[0-9]*.sh; do
    [[ -n ${VT_E2E_PG_ALL:-} ]] || grep -q '^# backends:.*postgresql' "$t" || continue
    names+=("$(basename "$t" .sh)@pg"); scripts+=("$t"); envs+=("VT_E2E_PG=1")
  done
fi

# run_one I: run I, its exit status in $out/NAME.rc and its seconds in $out/NAME.secs
run_one() {
  local i=$1 start rc=0
  start=$(date +%s)
  env ${envs[i]} bash "${scripts[i]}" > "$out/${names[i]}.log" 2>&1 < /dev/null || rc=$?
  echo "$(($(date +%s) - start))" > "$out/${names[i]}.secs"
  echo "$rc" > "$out/${names[i]}.rc"
}
# report I: the "ok/FAIL NAME (Ns)" line of a finished run I (and a failure's last lines)
sum_s=0
report() {
  local i=$1 name=${names[$1]} rc secs
  rc=$(cat "$out/$name.rc" 2> /dev/null || echo 1)
  secs=$(cat "$out/$name.secs" 2> /dev/null || echo 0)
  sum_s=$((sum_s + secs))
  if [[ $rc == 0 ]]; then
    passed=$((passed + 1)); echo "ok   $name (${secs}s)"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name (${secs}s)"
    tail -n 25 "$out/$name.log" | sed 's/^/    /'
  fi
}
# alone I: true when run I's script must have the machine to itself: a header line
# "# alone" (the scripts that kill or stop fleets of processes, wait for leases to run
# out, fill a disk, measure time, or race a worker; a loaded machine could fail them)
alone() { sed -n '1,/^[^#]/p' "${scripts[$1]}" | grep -q '^# alone\b'; }

# VT_E2E_JOBS runs at a time (default 2; 1 runs them one after the other, in order): first
# every run not marked alone, at most one run of a script at a time (its SQLite and
# PostgreSQL runs share tests/out/screenshots), lines printed as runs finish; then the
# runs marked alone, one by one, with nothing beside them.
jobs_max=${VT_E2E_JOBS:-2}
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || { echo "VT_E2E_JOBS must be a number of runs at a time, 1 or more"; exit 2; }
# Side by side, the runs start longest first by the last run's times (unknown ones first),
# so that a long one does not end alone; one after the other, in order.
pool=() solo=() order=("${!names[@]}")
if ((jobs_max > 1)); then
  mapfile -t order < <(for i in "${!names[@]}"; do
    secs=${last_s[${names[i]}]:-}
    [[ $secs =~ ^[0-9]+$ ]] || secs=1000000
    echo "$secs $i"
  done | sort -k1,1nr -k2,2n | cut -d' ' -f2)
fi
for i in "${order[@]}"; do
  if ((jobs_max > 1)) && alone "$i"; then solo+=("$i"); else pool+=("$i"); fi
done
# the alone runs in their order
((${#solo[@]} == 0)) || mapfile -t solo < <(printf '%s\n' "${solo[@]}" | sort -n)
e2e_start=$(date +%s)
echo "== end-to-end tests (${#pool[@]} runs, $jobs_max at a time; then ${#solo[@]} alone)"
declare -A running=() # pid -> run
# busy SCRIPT: true when a run of SCRIPT is running
busy() {
  local i
  for i in "${running[@]}"; do [[ ${scripts[i]} != "$1" ]] || return 0; done
  return 1
}
while ((${#pool[@]} + ${#running[@]})); do
  pick=
  if ((${#running[@]} < jobs_max)); then
    for k in "${!pool[@]}"; do
      busy "${scripts[pool[k]]}" || { pick=$k; break; }
    done
  fi
  if [[ -n $pick ]]; then
    i=${pool[pick]}; unset 'pool[pick]'
    run_one "$i" &
    running[$!]=$i
    continue
  fi
  pid=
  wait -n -p pid "${!running[@]}" || true
  if [[ -z $pid || -z ${running[$pid]:-} ]]; then # none reported: look for the ended ones
    pid=
    for p in "${!running[@]}"; do kill -0 "$p" 2> /dev/null || { pid=$p; break; }; done
    [[ -n $pid ]] || { sleep 1; continue; }
  fi
  i=${running[$pid]}; unset 'running[$pid]'
  report "$i"
done
pool_s=$(($(date +%s) - e2e_start))
((${#solo[@]} == 0)) || echo "== end-to-end tests run alone"
for i in "${solo[@]}"; do
  run_one "$i"
  report "$i"
done
echo "e2e: ${pool_s}s for the runs side by side, $(($(date +%s) - e2e_start - pool_s))s alone; wall $(($(date +%s) - e2e_start))s, the runs' times summed ${sum_s}s"
((${#failures[@]})) && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
((failed == 0))
