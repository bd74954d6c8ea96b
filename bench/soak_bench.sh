#!/usr/bin/env bash
# The server soak, long: one `vidtheque serve` answers SOAK_BENCH_REQUESTS (default
# 60,000) requests mixing every route from four keep-alive clients (tests/tools/soak.py,
# the same as tests/e2e/t0940-soak.sh, on the library tests/fixtures/gen_soak.sh makes).
# Reports requests/s, the slowest answer, and the server's VmRSS first and last and the
# largest of the first and the last third of the run. Targets: no failure, no stall
# (every answer within 10 s), memory flat (the last third's peak within 1 MB of the first's).
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
export OMP_THREAD_LIMIT=1
t=$(mktemp -d)
SRV=''
cleanup() {
  [[ -z $SRV ]] || { kill "$SRV" 2> /dev/null || true; wait "$SRV" 2> /dev/null || true; }
  rm -rf "$t"
}
trap cleanup EXIT
full=$(dirname "$VIDTHEQUE")/vidtheque-full
if nm "$full" 2> /dev/null | grep -q __asan_init || ldd "$full" 2> /dev/null | grep -q libasan; then
  echo "warning: $full is built with sanitizers; the figures are not representative" >&2
fi
bash tests/fixtures/gen_soak.sh "$t"
"$VIDTHEQUE" -q -L "$t/lib" add "$t/talk.mp4" "$t/two.mp4" > "$t/ids"
read -r -d '' id1 id2 < "$t/ids" || true
echo "soak-token-0123456789" > "$t/token"
"$VIDTHEQUE" -L "$t/lib" serve --port 0 --token-file "$t/token" 2> "$t/srv.err" &
SRV=$!
for _ in $(seq 100); do grep -q '^listening on ' "$t/srv.err" && break; sleep 0.1; done
port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$t/srv.err")
[[ -n $port ]] || { echo "server did not start: $(cat "$t/srv.err")" >&2; exit 1; }
rc=0
python3 tests/tools/soak.py "$port" "$SRV" "$id1" "$id2" --requests "${SOAK_BENCH_REQUESTS:-60000}" \
  --token-file "$t/token" --post-path "$t/two.mp4" --margin-kb 1024 || rc=$?
kill -TERM "$SRV"
wait "$SRV" || { echo "server exited $? on SIGTERM: $(tail -c 300 "$t/srv.err")"; rc=1; }
SRV=''
echo "verdict: $( ((rc == 0)) && echo ok || echo MISS)"
echo "targets: every request answered with its status, none stalled, memory flat"
