#!/usr/bin/env bash
# Dead letters (issue 26 failure 3): a stage whose run kills its worker every time is
# taken over once its lease runs out, and each taken-over attempt counts against the
# stage's cap of 4 attempts; past it the stage is failed with the reason (not taken over
# forever), `jobs --failed` lists it, the rest of the video settles, and only `redo`
# runs it again. The crash is real: VIDTHEQUE_TEST_STOP_AT=ocr:claimed:kill makes the
# worker SIGKILL itself right after it claimed ocr. SQLite here; PostgreSQL in the
# suite's @pg rerun (VT_E2E_PG).
# backends: sqlite postgresql
# alone: a worker that SIGKILLs itself, leases running out
. "$(dirname "$0")/lib.sh"

ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Slide rivers':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v.mp4"
vt init || fail "init"
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/v.mp4") || fail "add --queue"

kills=0 rc=0
for k in $(seq 1 7); do
  rc=0
  VIDTHEQUE_TEST_STOP_AT=ocr:claimed:kill "$VIDTHEQUE" -L "$LIB" worker --drain --lease 1 \
    >> "$T/w.err" 2>&1 || rc=$?
  ((rc == 0)) && break
  ((rc == 137)) || fail "worker exited $rc: $(tail -3 "$T/w.err")"
  kills=$((kills + 1))
done
((rc == 0)) || fail "after $kills crashes the stage is still taken over: $(vt jobs 2>&1 | head -20)"
((kills == 4)) || fail "$kills crashed attempts before the stage failed (4 expected)"
grep -q "$id: ocr failed: attempt 4 of 4 did not finish" "$T/w.err" ||
  fail "the worker did not say why ocr failed: $(tail -5 "$T/w.err")"

vt export "$id" > "$T/e.json"
python3 - "$T/e.json" << 'PY' || fail "ocr is not a dead letter: $(cat "$T/e.json" | head -c 600)"
import json, sys
d = json.load(open(sys.argv[1]))
st = {s['name']: s for s in d['stages']}
o = st['ocr']
assert o['state'] == 'failed' and o['attempts'] == 4, o
assert 'did not finish' in o['error'] and 'redo' in o['error'], o
# the rest of the video settled: nothing left queued or running
assert all(s['state'] not in ('queued', 'running') for s in d['stages']), st
assert d['index_state'] == 'ready', d['index_state']
PY
vt jobs --failed > "$T/failed.txt" || fail "jobs --failed"
grep -q "ocr" "$T/failed.txt" && grep -q "$id" "$T/failed.txt" ||
  fail "jobs --failed does not list the dead letter: $(cat "$T/failed.txt")"

# nothing but redo brings it back: a worker leaves it alone
"$VIDTHEQUE" -q -L "$LIB" worker --drain --lease 1 || fail "worker on a settled queue"
vt export "$id" > "$T/e2.json"
[[ $(json "$T/e2.json" "[s for s in d['stages'] if s['name'] == 'ocr'][0]['state']") == failed ]] ||
  fail "the dead letter was run again without redo"
vt redo --stage ocr "$id" > /dev/null || fail "redo"
"$VIDTHEQUE" -q -L "$LIB" worker --drain --lease 5 || fail "worker after redo"
vt export "$id" > "$T/e3.json"
[[ $(json "$T/e3.json" "[s for s in d['stages'] if s['name'] == 'ocr'][0]['state']") == done ]] ||
  fail "redo did not run the stage again: $(json "$T/e3.json" "[s for s in d['stages'] if s['name'] == 'ocr'][0]")"
echo "all good"
