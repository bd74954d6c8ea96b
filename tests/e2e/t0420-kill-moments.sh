#!/usr/bin/env bash
# SIGKILL at exact moments of every stage: just after its claim committed (the stage is
# `running` under our name) and just after its result committed (between two stages),
# with the killed process reaped and left a zombie (its parent never waits). One
# `resume` must then finish everything: ready/ok, the same document as an uninterrupted
# run, `check` clean. Also: an owner whose pid now belongs to another live process is
# dead (pid reuse), and resume says it could not finish while a live process holds a
# stage instead of reporting success.
# alone: kills and reaps at exact moments, pid reuse, short polls for process states
. "$(dirname "$0")/lib.sh"

# Four shots and a sidecar transcript, so that every stage runs (chunk needs cues).
f=$T/talk.mp4
ffmpeg -v error -f lavfi -i "color=white:s=480x270:d=1.5,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Rivers':fontsize=40:x=40:y=60" \
  -f lavfi -i "color=navy:s=480x270:d=1.5,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf:text='Mountains':fontsize=40:fontcolor=white:x=40:y=120" \
  -f lavfi -i "testsrc2=s=480x270:d=1.5" \
  -f lavfi -i "color=white:s=480x270:d=1.5,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf:text='Forests':fontsize=40:x=40:y=160" \
  -f lavfi -i "sine=d=6" \
  -filter_complex "[0:v][1:v][2:v][3:v]concat=n=4:v=1:a=0,format=yuv420p[v]" -map "[v]" -map 4:a \
  -c:v libx264 -preset veryfast -c:a aac -shortest "$f"
cat > "$T/talk.srt" << 'EOF'
1
00:00:00,500 --> 00:00:02,000
rivers run to the sea

2
00:00:02,500 --> 00:00:04,000
mountains stand still

3
00:00:04,200 --> 00:00:05,800
forests grow slowly
EOF

REF=$T/ref
id=$("$VIDTHEQUE" -q -L "$REF" add "$f")
"$VIDTHEQUE" -q -L "$REF" export "$id" > "$T/ref.json"
normalize "$T/ref.json" > "$T/ref.norm"
[[ $(json "$T/ref.json" "(d['index_state'], d['data_status'])") == "('ready', 'ok')" ]] ||
  fail "reference run not ready/ok"
[[ $(json "$T/ref.json" "sorted(s['name'] for s in d['stages'] if s['state'] != 'queued')") == \
  "['chunk', 'fetch', 'frame_embed', 'keyframe', 'ocr', 'stt', 'text_embed']" ]] ||
  fail "reference: not every stage ran"

stage_state() { # LIB STAGE
  sqlite3 "file:$1/library.db?mode=ro" "SELECT state FROM stages WHERE name = '$2'" 2> /dev/null || echo none
}
proc_state() { # PID: R, S, T (stopped), Z (zombie) or gone
  local s
  s=$(cat "/proc/$1/stat" 2> /dev/null) || { echo gone; return; }
  s=${s##*) }
  echo "${s%% *}"
}

# Start add stopped at STAGE:POINT (VIDTHEQUE_TEST_STOP_AT stops the process right after
# that commit), SIGKILL it there, reap it or leave it a zombie, resume once, compare.
parents=()
kill_at() { # RUN STAGE POINT REAP
  local i=$1 stage=$2 point=$3 reap=$4 L=$T/lib$1 pid parent= st
  if [[ $reap == reap ]]; then
    VIDTHEQUE_TEST_STOP_AT=$stage:$point "$VIDTHEQUE" -q -L "$L" add "$f" > /dev/null 2>&1 &
    pid=$!
  else
    # the add's parent becomes `sleep`, which never waits: the killed add stays a zombie
    VIDTHEQUE_TEST_STOP_AT=$stage:$point sh -c '"$1" -q -L "$2" add "$3" > /dev/null 2>&1 &
      echo $! > "$4"; exec sleep 300' sh "$VIDTHEQUE" "$L" "$f" "$T/pid$i" &
    parent=$!
    parents+=("$parent")
    for _ in $(seq 100); do [[ -s $T/pid$i ]] && break; sleep 0.05; done
    pid=$(cat "$T/pid$i")
  fi
  for _ in $(seq 600); do
    st=$(proc_state "$pid")
    [[ $st == T || $st == Z || $st == gone ]] && break
    sleep 0.02
  done
  [[ $st == T ]] || fail "run $i: add never stopped at $stage:$point (process $st)"
  kill -9 "$pid"
  if [[ $reap == reap ]]; then
    wait "$pid" 2> /dev/null || true
    [[ $(proc_state "$pid") == gone ]] || fail "run $i: killed add not reaped"
  else
    for _ in $(seq 100); do [[ $(proc_state "$pid") == Z ]] && break; sleep 0.02; done
    [[ $(proc_state "$pid") == Z ]] || fail "run $i: killed add is not a zombie ($(proc_state "$pid"))"
  fi
  st=$(stage_state "$L" "$stage")
  if [[ $point == claimed ]]; then
    [[ $st == running ]] || fail "run $i: $stage is '$st' just after its claim"
  else
    [[ $st == done || $st == skipped ]] || fail "run $i: $stage is '$st' just after its save"
  fi
  # ONE resume, while the zombie (if any) is still there
  "$VIDTHEQUE" -L "$L" resume > /dev/null 2> "$T/resume.err" ||
    fail "run $i ($stage:$point, $reap): resume failed: $(cat "$T/resume.err")"
  "$VIDTHEQUE" -q -L "$L" ls > "$T/ls"
  [[ $(cut -f4,5 "$T/ls") == "ready	ok" ]] || fail "run $i ($stage:$point, $reap): after one resume: $(cat "$T/ls")"
  "$VIDTHEQUE" -q -L "$L" export "$id" > "$T/got.json"
  normalize "$T/got.json" > "$T/got.norm"
  cmp -s "$T/ref.norm" "$T/got.norm" || {
    diff <(python3 -m json.tool "$T/ref.norm") <(python3 -m json.tool "$T/got.norm") | head -20
    fail "run $i ($stage:$point, $reap): result differs from an uninterrupted run"
  }
  [[ $("$VIDTHEQUE" -q -L "$L" check) == ok ]] || fail "run $i: check not clean"
  [[ -z $(ls "$L/locks" 2> /dev/null) ]] || fail "run $i: lock files left: $(ls "$L/locks")"
  if [[ -n $parent ]]; then
    kill "$parent" 2> /dev/null || true
    wait "$parent" 2> /dev/null || true
  fi
  note "run $i: killed just after $stage $point ($reap), one resume: ready/ok, identical"
}
cleanup_parents() {
  for p in "${parents[@]}"; do kill "$p" 2> /dev/null || true; done
}
trap 'cleanup_parents; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

# each stage's two moments, one reaped and one a zombie, alternating from stage to stage
i=0
for stage in fetch stt keyframe ocr chunk text_embed frame_embed; do
  for point in claimed saved; do
    i=$((i + 1))
    kill_at "$i" "$stage" "$point" "$([[ $((((i - 1) / 2 + (i - 1) % 2) % 2)) == 0 ]] && echo zombie || echo reap)"
  done
done

note "pid reuse: a stage whose owner's pid is now another live process is resumed"
L=$T/lib1
host=$(hostname)
for owner in "$host:$$" "$host:$$:0123456789abcdef" "$host:1"; do
  sqlite3 "$L/library.db" "UPDATE stages SET state = 'running', owner = '$owner' WHERE name = 'keyframe';
    UPDATE videos SET index_state = 'processing', data_status = 'partial'"
  "$VIDTHEQUE" -L "$L" resume > /dev/null 2> "$T/resume.err" ||
    fail "owner '$owner' (a live pid): resume failed: $(cat "$T/resume.err")"
  [[ $(stage_state "$L" keyframe) == done ]] || fail "owner '$owner': keyframe $(stage_state "$L" keyframe)"
  [[ $("$VIDTHEQUE" -q -L "$L" ls | cut -f4,5) == "ready	ok" ]] || fail "owner '$owner': not ready/ok"
done

note "a stage held by a live process: resume says it could not finish, exit 1"
L=$T/live
VIDTHEQUE_TEST_STOP_AT=keyframe:claimed "$VIDTHEQUE" -q -L "$L" add "$f" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do [[ $(proc_state "$pid") == T ]] && break; sleep 0.02; done
[[ $(proc_state "$pid") == T ]] || fail "add never stopped at keyframe:claimed"
expect_exit 1 "$VIDTHEQUE" -L "$L" resume
one_line_err
grep -q "not finished: $id: stage 'keyframe' is running in process $host:$pid:" "$T/err" ||
  fail "resume with a live owner: $(cat "$T/err")"
! grep -q resumed "$T/err" || fail "resume reported success: $(cat "$T/err")"
[[ $(stage_state "$L" keyframe) == running ]] || fail "resume took over a live owner's stage"
kill -CONT "$pid"
wait "$pid" || fail "the stopped add did not finish once continued"
[[ $("$VIDTHEQUE" -q -L "$L" ls | cut -f4,5) == "ready	ok" ]] || fail "continued add: not ready/ok"
echo "all good"
