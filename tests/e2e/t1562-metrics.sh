#!/usr/bin/env bash
# backends: sqlite postgresql
# Observability (issue 26): a worker's /metrics (worker --metrics-port) and the server's
# /metrics are valid Prometheus text (every line a HELP, a TYPE or a sample of an announced
# family, histograms cumulative, tests/tools/promcheck.py), counters do not go down between
# two scrapes, and they say what happened: stages run, a retry pending with its reason,
# queue depth, search latency. /healthz answers; /readyz says 200 when the database answers
# and 503 when it cannot be reached. `jobs` shows a retrying stage's error and next try.
. "$(dirname "$0")/lib.sh"

check="python3 $ROOT/tests/tools/promcheck.py"
mkdir -p "$T/src"
for n in a b; do
  ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Metric rivers $n':fontsize=28:x=20:y=60" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/src/$n.mp4"
done
vt init
ida=$(vt add "$T/src/a.mp4")
[[ $(vt ls | awk -F'\t' -v id="$ida" '$1 == id {print $4}') == ready ]] || fail "a is not indexed: $(vt ls)"
# b is added in place and its file goes away: a retry with a reason, for the metrics to show
# (the binary itself: on PostgreSQL the test's `vt add` runs a worker of its own)
idb=$("$VIDTHEQUE" -q -L "$LIB" add --queue --in-place "$T/src/b.mp4")
mv "$T/src/b.mp4" "$T/b-gone.mp4"

VIDTHEQUE_RETRY_BASE=3600 "$VIDTHEQUE" -L "$LIB" worker --metrics-port 0 2> "$T/w.err" &
w=$!
for _ in $(seq 100); do
  grep -q '^metrics on ' "$T/w.err" && break
  sleep 0.1
done
MP=$(sed -n 's|^metrics on http://127\.0\.0\.1:\([0-9][0-9]*\)/metrics$|\1|p' "$T/w.err")
[[ -n $MP ]] || fail "no 'metrics on' line: $(cat "$T/w.err")"
curl -sf "http://127.0.0.1:$MP/metrics" > "$T/m0" || fail "worker /metrics"
for _ in $(seq 150); do
  [[ $(lib_sql "SELECT state || attempts FROM stages WHERE video_id='$idb' AND name='fetch'") == queued1 ]] && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$MP/metrics" > "$T/m1" || fail "worker /metrics"
$check "$T/m0" "$T/m1" > "$T/m1.samples" || fail "worker scrapes: see above"
grep -q '^vidtheque_stage_runs_total{stage="fetch",outcome="retry"} 1$' "$T/m1.samples" ||
  fail "the retried fetch is not counted: $(grep runs_total "$T/m1.samples" | grep fetch)"
grep -q '^vidtheque_retries_pending{stage="fetch",reason=".*not found on this machine"} 1$' "$T/m1.samples" ||
  fail "no retry pending with its reason: $(grep retries "$T/m1.samples")"
grep -q '^vidtheque_queue_stages{stage="fetch",state="done"} 1$' "$T/m1.samples" || fail "queue depth: fetch done"
grep -q '^vidtheque_queue_stages{stage="fetch",state="queued"} 1$' "$T/m1.samples" || fail "queue depth: fetch queued"
grep -q '^vidtheque_database_up 1$' "$T/m1.samples" || fail "database_up"
grep -q '^vidtheque_stage_duration_seconds_count{stage="fetch"} 1$' "$T/m1.samples" || fail "fetch duration not observed"
[[ $(curl -s "http://127.0.0.1:$MP/healthz") == ok ]] || fail "worker /healthz"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MP/readyz") == 200 ]] || fail "worker /readyz"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MP/nothing") == 404 ]] || fail "worker: a 404 elsewhere"
# jobs: the retrying stage's error and next try
vt jobs > "$T/jobs"
grep -q "^retrying: 1$" "$T/jobs" || fail "jobs shows no retrying stage: $(cat "$T/jobs")"
grep -q "^  $idb  fetch  after attempt 1, next try 20[0-9-]*T.* (in [0-9]* s): .*not found on this machine" "$T/jobs" ||
  fail "jobs does not show the retry's error and next try: $(cat "$T/jobs")"
vt jobs --json > "$T/jobs.json"
[[ $(json "$T/jobs.json" 'd["retrying"][0]["stage"] + " " + str(d["retrying"][0]["next_try_in_s"] > 3000)') == "fetch True" ]] ||
  fail "jobs --json: $(cat "$T/jobs.json")"
kill -TERM "$w"
wait "$w" || fail "worker exited $?"

# the server: the same three routes, and search latency
start_server
[[ $(curl -s "$B/healthz") == ok ]] || fail "serve /healthz"
[[ $(curl -s -o /dev/null -w '%{http_code}' "$B/readyz") == 200 ]] || fail "serve /readyz"
curl -sf "$B/metrics" > "$T/s0" || fail "serve /metrics"
curl -sf "$B/api/search?q=rivers" > /dev/null || fail "search"
curl -sf "$B/search?q=metric" > /dev/null || fail "search page"
curl -sf "$B/metrics" > "$T/s1" || fail "serve /metrics"
$check "$T/s0" "$T/s1" > "$T/s1.samples" || fail "server scrapes: see above"
grep -q '^vidtheque_search_duration_seconds_count 2$' "$T/s1.samples" ||
  fail "searches not observed: $(grep search_duration_seconds_count "$T/s1.samples")"
if ! on_pg; then
  # the database out of reach: not ready, with the reason; alive still
  mv "$LIB/library.db" "$T/library.db"
  code=$(curl -s -o "$T/ready.txt" -w '%{http_code}' "$B/readyz")
  mv "$T/library.db" "$LIB/library.db"
  [[ $code == 503 ]] || fail "/readyz without a database: $code $(cat "$T/ready.txt")"
  [[ $(curl -s "$B/healthz") == ok ]] || fail "serve /healthz without a database"
fi
stop_cleanly
note "ok"
