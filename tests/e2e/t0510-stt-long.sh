#!/usr/bin/env bash
# Speech recognition of a long recording in bounded memory: `add` on a 3 h audio-only file
# (FLAC in Matroska: silence, and one LibriVox clip at 2:30:00) peaks no higher than `add`
# on the clip alone plus 64 MB (the whole decoded track, what the stage used to hold, is
# 345 MB), and under 400 MB on a machine of up to 3 cores (each core adds a ~95 MB decoder).
# The clip's words come back at 2:30:00: the whole time line went through. The same with
# stt.vad silero (the network runs over all 3 h, window by window): the same bound, and the
# words at the same place. Checks memory (peak RSS from /usr/bin/time), never time.
. "$(dirname "$0")/lib.sh"
LV=/usr/share/pocketsphinx/test/data/librivox
[[ -d $LV ]] || fail "no $LV (Debian package pocketsphinx-testdata)"
[[ -x /usr/bin/time ]] || fail "/usr/bin/time: missing (Debian package time)"
clip=$LV/sense_and_sensibility_01_austen_64kb-0870.wav
# Under AddressSanitizer freed memory waits in a 256 MB quarantine and the shadow adds its
# own: the growth is checked with the quarantine off, the 400 MB only on a release build.
san=
if [[ $VIDTHEQUE == */san/* ]]; then
  san=1
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0
fi

# Ten minutes of silence, copied 15 times before the clip and 3 after: seconds to make.
ffmpeg -nostdin -v error -f lavfi -i anullsrc=r=16000:cl=mono -t 600 -c:a flac "$T/sil.flac"
ffmpeg -nostdin -v error -i "$clip" -ar 16000 -ac 1 -c:a flac "$T/clip.flac"
{
  for _ in $(seq 15); do echo "file 'sil.flac'"; done
  echo "file 'clip.flac'"
  for _ in $(seq 3); do echo "file 'sil.flac'"; done
} > "$T/list.txt"
ffmpeg -nostdin -v error -f concat -safe 0 -i "$T/list.txt" -c copy "$T/long.mka"
ffmpeg -nostdin -v error -i "$T/clip.flac" -c copy "$T/short.mka"
dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$T/long.mka")
[[ $(python3 -c "print(10790 < $dur < 10810)") == True ]] || fail "long.mka lasts $dur s"

# peak_kb NAME FILE: add FILE to its own library, print add's peak RSS in kB, id in $T/NAME.id
peak_kb() {
  /usr/bin/time -f '%M' -o "$T/$1.rss" "$VIDTHEQUE" -q -L "$T/$1" add "$2" > "$T/$1.id" ||
    fail "add $2 failed"
  tail -n 1 "$T/$1.rss"
}
short_kb=$(peak_kb short "$T/short.mka")
long_kb=$(peak_kb long "$T/long.mka")
note "peak rss: clip alone $((short_kb / 1024)) MB, 3 h $((long_kb / 1024)) MB ($(getconf _NPROCESSORS_ONLN) cores)"
((long_kb - short_kb < 64 * 1024)) ||
  fail "3 h of audio took $(((long_kb - short_kb) / 1024)) MB more than 7 s"
if [[ -z $san ]] && (($(getconf _NPROCESSORS_ONLN) <= 3)); then
  ((long_kb < 400 * 1024)) || fail "add peaked at $((long_kb / 1024)) MB (over 400 MB)"
fi

"$VIDTHEQUE" -q -L "$T/longsil" init || fail "init"
"$VIDTHEQUE" -q -L "$T/longsil" config set stt.vad silero || fail "config set stt.vad"
"$VIDTHEQUE" -q -L "$T/longsil" config set stt.vad_model "$DATA/silero-vad/for-tests-silero-v6.2.0-ggml.bin" ||
  fail "config set stt.vad_model"
sil_kb=$(peak_kb longsil "$T/long.mka")
note "peak rss with Silero: 3 h $((sil_kb / 1024)) MB"
((sil_kb - short_kb < 64 * 1024)) ||
  fail "3 h of audio with Silero took $(((sil_kb - short_kb) / 1024)) MB more than 7 s"

for lib in long longsil; do
  "$VIDTHEQUE" -q -L "$T/$lib" export "$(cat "$T/$lib.id")" > "$T/$lib.json"
  python3 - "$T/$lib.json" << 'PY' || fail "$lib: the clip's words are missing or misplaced"
import json, sys
d = json.load(open(sys.argv[1]))
stt = [s for s in d["stages"] if s["name"] == "stt"][0]
assert stt["state"] == "done", stt
assert stt["model"].endswith("; vad silero-16k 6.2.0" if "longsil" in sys.argv[1] else "; vad energy"), stt
words = [w for c in d["cues"] for w in c["words"]]
assert len(words) >= 15, len(words)
assert all(9000 <= w["start_s"] <= w["end_s"] <= 9007.2 for w in words), words
PY
done
echo "all good"
