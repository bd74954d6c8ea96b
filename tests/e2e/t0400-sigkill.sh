#!/usr/bin/env bash
# SIGKILL during add at random moments, many times: after resume the result equals an
# uninterrupted run, the database passes integrity_check and every frame file exists.
# alone: SIGKILLs add at random moments, many times
. "$(dirname "$0")/lib.sh"

# A clip with several shots so that every stage takes a moment.
f=$T/talk.mp4
ffmpeg -v error -f lavfi -i "color=white:s=960x540:d=3,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='First slide about rivers':fontsize=44:x=60:y=80" \
  -f lavfi -i "color=navy:s=960x540:d=3,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf:text='Second slide on mountains':fontsize=44:fontcolor=white:x=60:y=200" \
  -f lavfi -i "testsrc2=s=960x540:d=3" \
  -f lavfi -i "color=white:s=960x540:d=3,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf:text='Third slide with forests':fontsize=44:x=60:y=300" \
  -f lavfi -i "sine=d=12" \
  -filter_complex "[0:v][1:v][2:v][3:v]concat=n=4:v=1:a=0,format=yuv420p[v]" -map "[v]" -map 4:a \
  -c:v libx264 -preset veryfast -c:a aac -shortest "$f"

REF=$T/ref
id=$("$VIDTHEQUE" -q -L "$REF" add "$f")
"$VIDTHEQUE" -q -L "$REF" export "$id" > "$T/ref.json"
normalize "$T/ref.json" > "$T/ref.norm"
[[ $(json "$T/ref.json" "d['index_state']") == ready ]] || fail "reference run not ready"

# kill_after SECONDS CMD...: start CMD, SIGKILL it after SECONDS (if still running)
kill_after() {
  local delay=$1; shift
  "$@" > /dev/null 2>&1 &
  local pid=$!
  sleep "$delay"
  kill -9 "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
}

RANDOM=4242
for i in $(seq 1 12); do
  L=$T/lib$i
  d1=$(printf '0.%03d' $((RANDOM % 1000)))
  [[ $((i % 3)) == 0 ]] && d1=1.$((RANDOM % 9))
  kill_after "$d1" "$VIDTHEQUE" -q -L "$L" add "$f"
  # sometimes kill the resume too
  if (( i % 2 == 0 )) && [[ -e $L/library.db ]]; then
    kill_after "0.$((RANDOM % 9))" "$VIDTHEQUE" -q -L "$L" resume
  fi
  if [[ ! -e $L/library.db ]]; then
    note "run $i: killed before the library existed"; continue
  fi
  "$VIDTHEQUE" -q -L "$L" resume || fail "run $i: resume failed"
  # the next add of the same file is recognised (and would also continue)
  got=$("$VIDTHEQUE" -q -L "$L" add "$f" 2> /dev/null) || fail "run $i: add after resume failed"
  if [[ -z $got ]]; then fail "run $i: no id"; fi
  [[ $got == "$id" ]] || fail "run $i: id $got, expected $id"
  "$VIDTHEQUE" -q -L "$L" ls > "$T/ls"
  [[ $(wc -l < "$T/ls") == 1 ]] || fail "run $i: $(wc -l < "$T/ls") videos"
  "$VIDTHEQUE" -q -L "$L" export "$id" > "$T/got.json"
  normalize "$T/got.json" > "$T/got.norm"
  cmp -s "$T/ref.norm" "$T/got.norm" || {
    diff <(python3 -m json.tool "$T/ref.norm") <(python3 -m json.tool "$T/got.norm") | head -20
    fail "run $i (killed after ${d1}s): result differs from an uninterrupted run"
  }
  "$VIDTHEQUE" -q -L "$L" check > /dev/null || fail "run $i: check failed"
  sqlite3 "$L/library.db" 'PRAGMA integrity_check' | grep -qx ok || fail "run $i: integrity_check"
  # no frame folder from a killed run is left once the stage has committed again
  [[ $(ls "$L/frames/$id" | wc -l) -le 1 ]] || note "run $i: leftover folders $(ls "$L/frames/$id")"
  note "run $i: killed after ${d1}s, resumed, identical"
done
echo "all good"
