#!/usr/bin/env bash
# A worker frozen inside its finishing transaction (issue 26 failure 1: a VM pause
# there) does not stall the fleet: the server ends its session once it has been idle in
# the transaction past idle_in_transaction_session_timeout, which frees its row locks;
# its lease has run out meanwhile, so another worker takes the stage over and finishes
# the video. Before, the frozen session held its locks for ever: `SKIP LOCKED` passed
# the stage by and the other worker waited with nothing to do.
# The freeze is real: VIDTHEQUE_TEST_STOP_AT=ocr:saving stops the worker (SIGSTOP)
# after ocr's rows are written, before the commit.
# alone: a SIGSTOPped worker, idle_in_transaction timeout and lease expiry
. "$(dirname "$0")/lib.sh"

pg_database vt_t1573
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Frozen rivers':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v.mp4"
vt init --db "$url" || fail "init --db"
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/v.mp4") || fail "add --queue"

export VIDTHEQUE_PG_IDLE_TX_TIMEOUT=3
VIDTHEQUE_TEST_STOP_AT=ocr:saving "$VIDTHEQUE" -L "$LIB" worker --lease 2 > /dev/null 2> "$T/frozen.err" &
fp=$!
# a stopped worker left behind would hold its session (and the test's pipes) for ever
trap 'kill -KILL "$fp" 2> /dev/null || true; stop_server; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for _ in $(seq 600); do
  [[ $(ps -o state= -p "$fp" 2> /dev/null) == T* ]] && break
  sleep 0.1
done
[[ $(ps -o state= -p "$fp") == T* ]] || fail "the worker did not stop inside ocr's commit: $(cat "$T/frozen.err")"

# the other worker finishes the video: within a minute, not never
rc=0
timeout 90 "$VIDTHEQUE" -L "$LIB" worker --drain --lease 2 2> "$T/other.err" || rc=$?
((rc == 0)) || fail "the other worker exited $rc (124: it waited for the frozen one): $(tail -3 "$T/other.err")"
vt export "$id" > "$T/e.json"
python3 - "$T/e.json" << 'PY' || fail "ocr was not taken over"
import json, sys
d = json.load(open(sys.argv[1]))
st = {s['name']: s for s in d['stages']}
assert st['ocr']['state'] == 'done' and st['ocr']['attempts'] == 2, st['ocr']
assert d['index_state'] == 'ready', d['index_state']
PY

# let the frozen one go on: its session is gone, its transaction with it; nothing of
# it is written twice
vt export "$id" > "$T/before.json"
kill -CONT "$fp"
sleep 2
kill -TERM "$fp" 2> /dev/null || true
wait "$fp" || true
vt export "$id" > "$T/after.json"
cmp -s <(normalize "$T/before.json") <(normalize "$T/after.json") ||
  fail "the frozen worker's transaction changed the video after the takeover"
echo "all good"
