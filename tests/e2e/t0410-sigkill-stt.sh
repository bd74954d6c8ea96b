#!/usr/bin/env bash
# SIGKILL while the stt stage runs: after resume the transcript (cues, words, timings)
# equals an uninterrupted run's, and the database passes integrity_check.
# alone: SIGKILLs add while stt runs
. "$(dirname "$0")/lib.sh"
LV=/usr/share/pocketsphinx/test/data/librivox
[[ -d $LV ]] || fail "no $LV (Debian package pocketsphinx-testdata)"
# 25 s of real speech on a still picture
ffmpeg -v error -f lavfi -i color=gray:s=320x240:d=40 -i "$LV/sense_and_sensibility_01_austen_64kb-0870.wav" \
  -i "$LV/sense_and_sensibility_01_austen_64kb-0920.wav" -i "$LV/sense_and_sensibility_01_austen_64kb-0890.wav" \
  -filter_complex "[1:a][2:a][3:a]concat=n=3:v=0:a=1,apad=pad_dur=2[a]" -map 0:v -map "[a]" \
  -c:v libx264 -preset veryfast -c:a aac -shortest "$T/speech.mp4"

id=$("$VIDTHEQUE" -q -L "$T/ref" add "$T/speech.mp4")
"$VIDTHEQUE" -q -L "$T/ref" export "$id" > "$T/ref.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps([(c["start_s"], c["end_s"], c["text"], c["words"]) for c in d["cues"]]))' "$T/ref.json" > "$T/ref.cues"
[[ $(json "$T/ref.json" "len(d['cues']) > 2") == True ]] || fail "reference run has no transcript"

stt_state() {
  "$VIDTHEQUE" -q -L "$1" export "$id" 2> /dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print([s["state"] for s in d["stages"] if s["name"]=="stt"][0])' 2> /dev/null || echo none
}

killed=0
for i in 1 2 3; do
  L=$T/lib$i
  "$VIDTHEQUE" -q -L "$L" add "$T/speech.mp4" > /dev/null 2>&1 &
  pid=$!
  # wait until stt is running, then let it work a little before the kill
  for _ in $(seq 1 200); do
    [[ $(stt_state "$L") == running ]] && break
    sleep 0.05
  done
  sleep "0.$((i * 3))"
  state=$(stt_state "$L")
  kill -9 "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  [[ $state == running ]] && killed=$((killed + 1))
  note "run $i: killed while stt was $state"
  "$VIDTHEQUE" -q -L "$L" resume || fail "run $i: resume failed"
  "$VIDTHEQUE" -q -L "$L" export "$id" > "$T/got.json"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps([(c["start_s"], c["end_s"], c["text"], c["words"]) for c in d["cues"]]))' "$T/got.json" > "$T/got.cues"
  cmp -s "$T/ref.cues" "$T/got.cues" || fail "run $i: transcript after resume differs from an uninterrupted run"
  [[ $(json "$T/got.json" "[s['attempts'] for s in d['stages'] if s['name']=='stt'][0]") -ge 1 ]] || fail "attempts"
  sqlite3 "$L/library.db" 'PRAGMA integrity_check' | grep -qx ok || fail "run $i: integrity_check"
done
(( killed >= 1 )) || fail "never managed to kill during stt"
echo "all good"
