#!/usr/bin/env bash
# Hostile input: each bad file gives one clear error in bounded time and memory and
# leaves the library as it was.
. "$(dirname "$0")/lib.sh"

vt init
gen_clip "$T/good.mp4" 4 'Good Video'
vt add "$T/good.mp4" > /dev/null
vt ls > "$T/ls.before"

# Run an add that must be refused: exit 1, one error line, nothing else changed.
refused() {
  local f=$1
  local rc=0
  timeout 60 /usr/bin/time -f '%M' -o "$T/rss" "$VIDTHEQUE" -q -L "$LIB" add "$f" > "$T/out" 2> "$T/err" || rc=$?
  [[ $rc == 1 ]] || fail "'$(basename "$f")': add exited $rc (expected 1): $(cat "$T/err")"
  one_line_err
  [[ ! -s $T/out ]] || fail "'$(basename "$f")': printed an id for a refused file"
  vt ls > "$T/ls.now"
  cmp -s "$T/ls.before" "$T/ls.now" || fail "'$(basename "$f")' changed the library"
  (( $(tail -n 1 "$T/rss") < 400000 )) || fail "'$(basename "$f")': peak RSS $(tail -n 1 "$T/rss") kB"
  note "$(basename "$f"): $(cat "$T/err")"
}

: > "$T/zero.mp4"; refused "$T/zero.mp4"
head -c 200000 /dev/urandom > "$T/random.mp4"; refused "$T/random.mp4"
printf 'just some text\n' > "$T/text.mp4"; refused "$T/text.mp4"
refused "$T/does-not-exist.mp4"
refused "$T"   # a directory

# Playlists and concat lists that point at other files are refused.
printf '#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\n%s\n#EXT-X-ENDLIST\n' "$T/good.mp4" > "$T/list.m3u8"
refused "$T/list.m3u8"
printf "ffconcat version 1.0\nfile '%s'\n" "$T/good.mp4" > "$T/list.ffconcat"
refused "$T/list.ffconcat"
printf "file '%s'\n" /etc/passwd > "$T/list.txt"
refused "$T/list.txt"

# A 16000x16000 MJPEG frame: the size is patched into a small JPEG's header, as an
# attacker would, so the container cannot be trusted to say it first.
huge_jpeg() {
  python3 - "$1" "$2" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = 0
while True:
    i = b.find(b'\xff\xc0', i)   # every SOF0 marker: height and width follow
    if i < 0: break
    b[i+5:i+7] = (16000).to_bytes(2, 'big'); b[i+7:i+9] = (16000).to_bytes(2, 'big')
    i += 2
open(sys.argv[2], 'wb').write(b)
PY
}
ffmpeg -v error -f lavfi -i color=red:s=64x64:d=0.2 -c:v mjpeg -f mjpeg "$T/small.mjpeg"
huge_jpeg "$T/small.mjpeg" "$T/huge.mjpeg"
start=$(date +%s)
refused "$T/huge.mjpeg"
(( $(date +%s) - start < 20 )) || fail "huge frame took too long"
# the same inside AVI, whose header says 64x64
ffmpeg -v error -f lavfi -i color=red:s=64x64:d=0.2 -c:v mjpeg "$T/small.avi"
huge_jpeg "$T/small.avi" "$T/huge.avi"
rc=0
timeout 60 /usr/bin/time -f '%M' -o "$T/rss" "$VIDTHEQUE" -q -L "$LIB" add "$T/huge.avi" > "$T/out" 2> "$T/err" || rc=$?
(( rc <= 1 )) || fail "huge.avi: exit $rc"
(( $(tail -n 1 "$T/rss") < 400000 )) || fail "huge.avi: peak RSS $(tail -n 1 "$T/rss") kB"
note "huge.avi: exit $rc: $(cat "$T/err")"
if [[ $rc == 0 ]]; then
  hid=$(cat "$T/out")
  vt export "$hid" > "$T/h.json"
  [[ $(json "$T/h.json" "d['stages'][1]['state']") != done || $(json "$T/h.json" "len(d['frames'])") == 0 ]] ||
    fail "huge.avi produced frames"
fi
[[ $rc == 1 ]] && { one_line_err; }
[[ -s $T/out ]] && vt rm "$(cat "$T/out")"

# Truncated files: never a crash or a hang; either refused (exit 1, one line) or
# indexed from what is there.
ffmpeg -v error -y -f lavfi -i "testsrc2=s=320x240:d=6" -f lavfi -i "sine=d=6" -c:v libx264 \
  -preset veryfast -c:a aac -movflags +faststart -shortest "$T/full.mp4"
size=$(stat -c %s "$T/full.mp4")
for frac in 1 3 7 15 30 50 70 90 99; do
  cut=$((size * frac / 100))
  head -c "$cut" "$T/full.mp4" > "$T/trunc-$frac.mp4"
  rc=0
  timeout 60 "$VIDTHEQUE" -q -L "$LIB" add "$T/trunc-$frac.mp4" > "$T/out" 2> "$T/err" || rc=$?
  (( rc <= 1 )) || fail "truncated at $frac%: exit $rc: $(cat "$T/err")"
  if [[ $rc == 1 && ! -s $T/out ]]; then one_line_err; fi
  note "truncated at $frac%: exit $rc $(head -c 200 "$T/err")"
  [[ -s $T/out ]] && vt rm "$(cat "$T/out")"
done
vt ls > "$T/ls.now"
cmp -s "$T/ls.before" "$T/ls.now" || fail "truncation tests left videos behind"

# An audio-only file: keyframe and ocr skipped with the reason, the video ready and ok.
ffmpeg -v error -f lavfi -i "sine=f=300:d=3" -c:a aac "$T/audio.m4a"
id=$(vt add "$T/audio.m4a")
vt export "$id" > "$T/a.json"
[[ $(json "$T/a.json" "{s['name']: s['state'] for s in d['stages'] if s['name'] in ('fetch', 'keyframe', 'ocr')}") == "{'fetch': 'done', 'keyframe': 'skipped', 'ocr': 'skipped'}" ]] ||
  fail "audio-only stages: $(json "$T/a.json" "d['stages']")"
[[ $(json "$T/a.json" "[s['error'] for s in d['stages'] if s['name'] == 'keyframe'][0]") == "no video stream" ]] ||
  fail "skip reason"
[[ $(json "$T/a.json" "(d['index_state'], d['data_status'])") == "('ready', 'ok')" ]] || fail "audio-only state"
vt check > /dev/null || fail "library check failed"
echo "all good"
