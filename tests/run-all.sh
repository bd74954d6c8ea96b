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
rm -rf "$out"; mkdir -p "$out"
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

# run_e2e NAME SCRIPT [ENV=VALUE...]: one script, its log in $out/NAME.log
run_e2e() {
  local name=$1 t=$2 start; shift 2
  start=$(date +%s)
  if env "$@" bash "$t" > "$out/$name.log" 2>&1; then
    passed=$((passed + 1)); echo "ok   $name ($(( $(date +%s) - start ))s)"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name ($(( $(date +%s) - start ))s)"
    tail -n 25 "$out/$name.log" | sed 's/^/    /'
  fi
}

echo "== end-to-end tests"
for t in tests/e2e/t[0-9]*.sh; do
  run_e2e "$(basename "$t" .sh)" "$t"
done

# The scripts whose header says "# backends: sqlite postgresql" run again with their
# library's catalog on PostgreSQL (VT_E2E_PG, tests/e2e/lib.sh: `vt init` makes the
# database and a worker of its own); VT_E2E_PG_ALL=1 runs every script there.
if [[ -n ${VT_TEST_PG:-} ]]; then
  echo "== end-to-end tests on PostgreSQL"
  for t in tests/e2e/t[0-9]*.sh; do
    [[ -n ${VT_E2E_PG_ALL:-} ]] || grep -q '^# backends:.*postgresql' "$t" || continue
    run_e2e "$(basename "$t" .sh)@pg" "$t" VT_E2E_PG=1
  done
fi
((${#failures[@]})) && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
((failed == 0))
