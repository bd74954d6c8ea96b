#!/usr/bin/env bash
# Idle workers through a PostgreSQL outage (issue 26 failure 4, issue 27 failure 4): they
# try again with a growing, jittered wait, not hundreds of times a second, and say the
# outage once when it begins and once when it ends ("database back after N s"), not once
# per attempt. Counted in lines, not timed: on the old loop each of three idle workers
# wrote thousands of "database unavailable" lines in a few seconds.
# Always on a cluster of its own: stopping the suite's shared one would break the others.
# alone: counts idle workers' attempts through an outage of seconds
. "$(dirname "$0")/lib.sh"

pg_database vt_t1571 own
vt init --db "$url" || fail "init --db"

pids=()
# a failure leaves no worker behind retrying a cluster that is gone
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done; stop_server; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for w in 1 2 3; do
  "$VIDTHEQUE" -L "$LIB" worker --concurrency 2 2> "$T/w$w.err" &
  pids+=($!)
done
# idle, not starting: each worker's heartbeat and its two stage threads connected (a
# fixed pause was too short for a slow build: the workers met the outage still opening)
for _ in $(seq 300); do
  n=$(psql -X -At "$admin" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$PG_DB'")
  ((n >= 9)) && break
  sleep 0.1
done
((n >= 9)) || fail "the workers did not connect: $n connections; $(cat "$T"/w*.err)"
bash "$ROOT/tests/pg/cluster.sh" stop "$PGDIR" > /dev/null || fail "pg_ctl stop"
sleep 5
for p in "${pids[@]}"; do kill -0 "$p" 2> /dev/null || fail "a worker died in the outage"; done
bash "$ROOT/tests/pg/cluster.sh" start "$PGDIR" > /dev/null || fail "pg_ctl start"
# the back-off waits at most 5 s between attempts: every worker sees the server back
for _ in $(seq 150); do
  n=0
  for w in 1 2 3; do grep -q 'database back after' "$T/w$w.err" && n=$((n + 1)); done
  ((n == 3)) && break
  sleep 0.1
done
for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null || true; done
for p in "${pids[@]}"; do wait "$p" || fail "a worker exited $? after the outage"; done
pids=()

for w in 1 2 3; do
  lines=$(wc -l < "$T/w$w.err")
  ((lines < 20)) || fail "worker $w wrote $lines lines in a 5 s outage: $(sort "$T/w$w.err" | uniq -c | sort -rn | head -3)"
  n=$(grep -c 'database unavailable' "$T/w$w.err" || true)
  ((n == 1)) || fail "worker $w said the outage $n times (once expected): $(head -5 "$T/w$w.err")"
  grep -q 'database back after [0-9.]* s ([0-9]* failed attempts)' "$T/w$w.err" ||
    fail "worker $w did not say the database was back: $(cat "$T/w$w.err")"
done
# the attempts are bounded too: 2 threads, back-off from 0.25 s doubling to 5 s, jittered
for w in 1 2 3; do
  a=$(sed -n 's/.*database back after [0-9.]* s (\([0-9]*\) failed attempts).*/\1/p' "$T/w$w.err")
  ((a >= 1 && a <= 40)) || fail "worker $w: $a failed attempts in a 5 s outage"
done
echo "all good"
