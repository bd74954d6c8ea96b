#!/usr/bin/env bash
# A stage the user asked for that cannot run fails: `add --stt=captions` with a caption
# file it refuses (or none), `--stt=recognize` on a file without audio. The stage is
# `failed` with the reason, the video `ready partial`, `add` finishes the other files
# and exits 1 with one error line, also with -q (which silences progress, not errors).
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"

gen_clip "$T/bad.mp4" 3 "Refused captions"
printf 'this is not a caption file\nat all\n' > "$T/bad.srt"
gen_clip "$T/good.mp4" 3 "Good captions"
printf '1\n00:00:00,500 --> 00:00:02,000\nhello from the captions\n' > "$T/good.srt"
ffmpeg -v error -f lavfi -i "color=gray:s=320x240:d=2" -c:v libx264 -pix_fmt yuv420p "$T/mute.mp4"

stage() { # ID STAGE FIELD
  vt export "$1" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print([s[sys.argv[2]] for s in d["stages"] if s["name"]==sys.argv[1]][0])' "$2" "$3"
}
row() { vt ls | awk -F'\t' -v id="$1" '$1 == id {print $4 " " $5}'; }

for q in -q ""; do
  LIB=$T/lib$q
  note "add $q --stt=captions, a refused caption file first, a good one after"
  expect_exit 1 "$VIDTHEQUE" $q -L "$LIB" add --stt=captions "$T/bad.mp4" "$T/good.mp4"
  bad=$(sed -n 1p "$T/out")
  good=$(sed -n 2p "$T/out")
  [[ -n $bad && -n $good ]] || fail "ids: $(cat "$T/out")"
  [[ $(grep -c '^error: \|^vidtheque: ' "$T/err") == 1 ]] || fail "expected one error line: $(cat "$T/err")"
  grep -q "^error: $bad: stt failed: --stt=captions: no captions: .*bad.srt.*" "$T/err" ||
    fail "the error line: $(cat "$T/err")"
  if [[ $q == -q ]]; then one_line_err; fi
  [[ $(row "$bad") == "ready partial" ]] || fail "refused captions: $(row "$bad")"
  [[ $(stage "$bad" stt state) == failed ]] || fail "stt $(stage "$bad" stt state)"
  stage "$bad" stt error | grep -q "no captions" || fail "reason not kept: $(stage "$bad" stt error)"
  [[ $(row "$good") == "ready ok" ]] || fail "the other file: $(row "$good")"
  [[ $(stage "$good" stt model) == "captions:sidecar srt" ]] || fail "good model: $(stage "$good" stt model)"
done

LIB=$T/lib2
note "--stt=captions and no captions at all: failed"
rm "$T/bad.srt"
expect_exit 1 vt add --stt=captions "$T/bad.mp4"
one_line_err
grep -q "stt failed: --stt=captions: no captions" "$T/err" || fail "no captions: $(cat "$T/err")"
[[ $(row "$(cat "$T/out")") == "ready partial" ]] || fail "no captions: $(row "$(cat "$T/out")")"
note "--stt=recognize on a file without audio: failed; auto: skipped, ok"
expect_exit 1 vt add --stt=recognize "$T/mute.mp4"
one_line_err
grep -q "stt failed: --stt=recognize: no audio track" "$T/err" || fail "recognize, no audio: $(cat "$T/err")"
LIB=$T/lib3
expect_exit 0 vt add "$T/mute.mp4"
[[ $(row "$(cat "$T/out")") == "ready ok" ]] || fail "auto, no audio: $(row "$(cat "$T/out")")"
[[ $(stage "$(cat "$T/out")" stt state) == skipped ]] || fail "auto, no audio: stt not skipped"
echo "all good"
