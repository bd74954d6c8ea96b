#!/usr/bin/env bash
# The job queue with worker processes (issue 15): 4 workers index 20 small videos and every
# stage runs exactly once (attempts as in a single-process run, documents equal to it);
# then the same while workers are SIGKILLed at random moments (30 kills) and restarted:
# every video ends ready with the same document (nothing duplicated or lost), a stage
# whose worker died is taken over once its lease expires, and the late result of a
# worker that was presumed dead (stopped past its lease, then let go on) is refused.
# alone: a fleet of workers SIGKILLed at random moments, leases running out
. "$(dirname "$0")/lib.sh"

N=20
mkdir -p "$T/media"
for i in $(seq 1 $N); do
  # two of them with a sound track (stt runs), the rest silent (stt skips at once)
  audio=(); amap=()
  if (( i <= 2 )); then audio=(-f lavfi -i "sine=f=$((300 + 40 * i)):d=2"); amap=(-c:a aac -shortest); fi
  ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Slide $i rivers':fontsize=28:x=20:y=60" \
    "${audio[@]}" -c:v libx264 -preset veryfast -pix_fmt yuv420p "${amap[@]}" "$T/media/v$i.mp4"
done
files=("$T"/media/v*.mp4)

export VIDTHEQUE_RETRY_BASE=0.2

# With VT_TEST_PG (tests/run-all.sh) the workers' libraries live in PostgreSQL, each in a
# database of its own; the reference stays a single process on SQLite.
dbs=()
cleanup_dbs() {
  for db in "${dbs[@]}"; do
    psql -X -q "$VT_TEST_PG" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null 2>&1 || true
  done
  [[ -n ${KEEP:-} ]] || rm -rf "$T"
}
trap 'cleanup_dbs' EXIT
# mklib DIR: an empty library (in PostgreSQL when VT_TEST_PG is set)
mklib() {
  if [[ -n ${VT_TEST_PG:-} ]]; then
    local db=vt_t1510_$$_${#dbs[@]} url
    dbs+=("$db")
    psql -X -q -v ON_ERROR_STOP=1 "$VT_TEST_PG" -c "CREATE DATABASE $db" > /dev/null || fail "CREATE DATABASE"
    url=$(pg_url_for "$VT_TEST_PG" "$db")
    "$VIDTHEQUE" -q -L "$1" init --db "$url" || fail "init --db"
  else
    "$VIDTHEQUE" -q -L "$1" init || fail "init"
  fi
}
note "backend: $([[ -n ${VT_TEST_PG:-} ]] && echo PostgreSQL || echo SQLite)"

# the reference: one process, in-process pipeline
"$VIDTHEQUE" -q -L "$T/ref" add "${files[@]}" > "$T/ref.ids"
[[ $(wc -l < "$T/ref.ids") == "$N" ]] || fail "reference: expected $N ids"

# docs LIB OUTDIR: every video's export, raw and normalized, by id
docs() {
  mkdir -p "$2"
  while read -r id; do
    "$VIDTHEQUE" -q -L "$1" export "$id" > "$2/$id.json"
    normalize "$2/$id.json" > "$2/$id.norm"
  done < "$T/ref.ids"
}
docs "$T/ref" "$T/ref.d"

# check_like_ref LIB OUTDIR [attempts]: every document equals the reference's but for
# times (and, unless "attempts", the number of attempts), and every video is ready
check_like_ref() {
  docs "$1" "$2"
  while read -r id; do
    [[ $(json "$2/$id.json" "d['index_state']") == ready ]] || fail "$1: $id not ready"
    cmp -s "$T/ref.d/$id.norm" "$2/$id.norm" ||
      fail "$1: $id differs from the single-process run: $(diff <(tr ',' '\n' < "$T/ref.d/$id.norm") <(tr ',' '\n' < "$2/$id.norm") | head -20)"
    python3 - "$T/ref.d/$id.json" "$2/$id.json" "${3:-}" << 'PY' || fail "$1: $id: outputs or attempts differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ('shots', 'frames', 'cues', 'chunks', 'chapters'):
    assert len(a[k]) == len(b[k]), (k, len(a[k]), len(b[k]))
if sys.argv[3] == 'attempts':
    got = {s['name']: s['attempts'] for s in b['stages']}
    want = {s['name']: s['attempts'] for s in a['stages']}
    assert got == want, (got, want)
    assert max(got.values()) == 1, got
PY
  done < "$T/ref.ids"
}

# queue_idle LIB: nothing queued or running in the queue
queue_idle() {
  "$VIDTHEQUE" -q -L "$1" jobs --json > "$T/jobs.json"
  [[ $(json "$T/jobs.json" "sum(s['queued'] + s['running'] for s in d['stages'])") == 0 ]]
}

note "4 workers, 20 videos: every stage once"
L1=$T/lib1
mklib "$L1"
"$VIDTHEQUE" -q -L "$L1" add --queue "${files[@]}" > "$T/l1.ids"
cmp -s "$T/ref.ids" "$T/l1.ids" || fail "add --queue printed other ids"
[[ $(json <("$VIDTHEQUE" -q -L "$L1" jobs --json) "sum(s['runnable'] for s in d['stages'])") == "$N" ]] ||
  fail "20 fetch stages should be runnable"
pids=()
for w in 1 2 3 4; do
  "$VIDTHEQUE" -L "$L1" worker --drain --lease 5 2> "$T/w1.$w.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a worker exited $?: $(tail -5 "$T"/w1.*.err)"; done
queue_idle "$L1" || fail "lib1: queue not empty after the workers drained it"
check_like_ref "$L1" "$T/l1.d" attempts
# the work was shared: more than one worker ran stages
busy=0
for w in 1 2 3 4; do grep -q ' started$' "$T/w1.$w.err" && busy=$((busy + 1)); done
(( busy >= 2 )) || fail "only $busy worker(s) ran stages"
grep -h 'lease lost' "$T"/w1.*.err && fail "a lease was lost with no worker killed"

note "30 SIGKILLs at random moments, workers restarted"
L2=$T/lib2
mklib "$L2"
"$VIDTHEQUE" -q -L "$L2" add --queue "${files[@]}" > /dev/null
LEASE=2
declare -A wp
start_worker() { # slot
  "$VIDTHEQUE" -L "$L2" worker --lease $LEASE >> "$T/w2.$1.err" 2>&1 &
  wp[$1]=$!
}
for w in 1 2 3 4; do start_worker $w; done
RANDOM=1510
for k in $(seq 1 30); do
  sleep "0.$((RANDOM % 6 + 1))"
  w=$((RANDOM % 4 + 1))
  kill -9 "${wp[$w]}" 2> /dev/null || true
  wait "${wp[$w]}" 2> /dev/null || true
  start_worker "$w"
done

note "a worker presumed dead: its stage is taken over, its late result refused"
# a fifth worker that stops (SIGSTOP) right after claiming an ocr stage; the others take
# the stage over once its lease expires and finish it; then it is let go on, and its
# result for the old attempt must be refused
L3=$T/lib3
mklib "$L3"
"$VIDTHEQUE" -q -L "$L3" add --queue "${files[0]}" > "$T/l3.id"
id3=$(cat "$T/l3.id")
VIDTHEQUE_TEST_STOP_AT=ocr:claimed "$VIDTHEQUE" -L "$L3" worker --lease $LEASE 2> "$T/w3.stopped.err" &
sp=$!
for _ in $(seq 600); do
  [[ $(ps -o state= -p "$sp" 2> /dev/null) == T* ]] && break
  sleep 0.1
done
[[ $(ps -o state= -p "$sp") == T* ]] || fail "the worker did not stop after claiming ocr"
"$VIDTHEQUE" -q -L "$L3" jobs > "$T/jobs3.txt"
grep -q "  ocr  $id3  attempt 1" "$T/jobs3.txt" || fail "jobs does not show the claimed ocr: $(cat "$T/jobs3.txt")"
"$VIDTHEQUE" -L "$L3" worker --drain --lease $LEASE 2> "$T/w3.other.err" || fail "the other worker failed"
python3 - "$L3" "$id3" "$VIDTHEQUE" << 'PY' || fail "ocr was not taken over"
import json, subprocess, sys
d = json.loads(subprocess.check_output([sys.argv[3], '-q', '-L', sys.argv[1], 'export', sys.argv[2]]))
st = {s['name']: s for s in d['stages']}
assert st['ocr']['state'] == 'done' and st['ocr']['attempts'] == 2, st['ocr']
assert d['index_state'] == 'ready', d['index_state']
PY
"$VIDTHEQUE" -q -L "$L3" export "$id3" > "$T/l3.before.json"
kill -CONT "$sp"
for _ in $(seq 600); do
  grep -q 'result dropped' "$T/w3.stopped.err" && break
  sleep 0.1
done
grep -q "$id3: ocr: lease lost (attempt 1 was taken over): result dropped" "$T/w3.stopped.err" ||
  fail "the late result was not refused: $(cat "$T/w3.stopped.err")"
kill -TERM "$sp"
wait "$sp" || fail "the stopped worker did not exit 0 on SIGTERM"
"$VIDTHEQUE" -q -L "$L3" export "$id3" > "$T/l3.after.json"
cmp -s <(normalize "$T/l3.before.json") <(normalize "$T/l3.after.json") || fail "the refused result changed the video"
cmp -s "$T/ref.d/$id3.norm" <(normalize "$T/l3.after.json") || fail "lib3 differs from the reference"

note "the killed fleet drains"
for w in 1 2 3 4; do
  kill -TERM "${wp[$w]}" 2> /dev/null || true
  wait "${wp[$w]}" 2> /dev/null || true
done
pids=()
for w in 1 2 3 4; do
  "$VIDTHEQUE" -L "$L2" worker --drain --lease $LEASE >> "$T/w2.$w.err" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a worker exited $?"; done
# a stage whose worker was killed in each of its 4 attempts is a dead letter (issue 26: a
# crash loop ends), with that reason and nothing else; the operator's redo runs it again
while read -r id; do
  "$VIDTHEQUE" -q -L "$L2" export "$id" > "$T/dead.json"
  python3 - "$T/dead.json" << 'PY' > "$T/dead.txt" || fail "lib2: $id: a stage failed for another reason: $(cat "$T/dead.txt")"
import json, sys
for s in json.load(open(sys.argv[1]))['stages']:
    if s['state'] == 'failed':
        print(s['name'], s['error'])
        assert 'stopped or crashed' in (s['error'] or ''), s
PY
  while read -r stage _; do
    note "$id: $stage a dead letter after 4 killed attempts: redo"
    "$VIDTHEQUE" -q -L "$L2" redo "$id" --stage "$stage" > /dev/null 2>&1 || true
  done < "$T/dead.txt"
done < "$T/ref.ids"
"$VIDTHEQUE" -L "$L2" worker --drain --lease $LEASE >> "$T/w2.redo.err" 2>&1 || fail "the redo's worker exited $?"
queue_idle "$L2" || fail "lib2: queue not empty"
check_like_ref "$L2" "$T/l2.d"
"$VIDTHEQUE" -q -L "$L2" check > /dev/null || fail "lib2: check failed"
# some stage was taken over after a kill (its attempts went up) on the way
python3 - "$T/l2.d" << 'PY' || note "no stage of lib2 was killed mid-run (takeover shown by lib3)"
import json, glob, sys
assert any(s['attempts'] > 1 for p in glob.glob(sys.argv[1] + '/*.json') for s in json.load(open(p))['stages'])
PY

note "SIGTERM: a worker finishes what it runs and exits 0"
L4=$T/lib4
mklib "$L4"
"$VIDTHEQUE" -q -L "$L4" add --queue "${files[@]:0:4}" > /dev/null
"$VIDTHEQUE" -L "$L4" worker --lease 5 2> "$T/w4.err" &
p4=$!
for _ in $(seq 600); do grep -q ' started$' "$T/w4.err" && break; sleep 0.05; done
kill -TERM "$p4"
wait "$p4" || fail "worker exited $? on SIGTERM"
"$VIDTHEQUE" -q -L "$L4" jobs --json > "$T/jobs4.json"
[[ $(json "$T/jobs4.json" "sum(s['running'] for s in d['stages'])") == 0 ]] || fail "a stage left running after SIGTERM"

echo "ok"
