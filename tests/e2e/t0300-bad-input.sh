#!/usr/bin/env bash
# Hostile input: each bad file gives one clear error in bounded time and memory and
# leaves the library as it was.
# backends: sqlite postgresql (run-all.sh runs it on both)
# alone: times a huge frame (under 20 s) and bounds memory
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
  if [[ $rc == 1 && ! -s $T/out ]]; then
    one_line_err
    ! grep -q "End of file" "$T/err" || fail "truncated at $frac%: FFmpeg's words: $(cat "$T/err")"
  fi
  note "truncated at $frac%: exit $rc $(head -c 200 "$T/err")"
  [[ -s $T/out ]] && vt rm "$(cat "$T/out")"
done
vt ls > "$T/ls.now"
cmp -s "$T/ls.before" "$T/ls.now" || fail "truncation tests left videos behind"

# Too many streams: refused naming the cap, not "Cannot allocate memory" (the demuxer's
# own cap failing), whether the container declares them up front or while probing.
ins=(); maps=()
for i in $(seq 0 19); do ins+=(-f lavfi -i "sine=f=$((300 + 10 * i)):d=1"); maps+=(-map "$i"); done
ffmpeg -v error -y "${ins[@]}" "${maps[@]}" -c:a aac "$T/streams20.mkv"
ffmpeg -v error -y "${ins[@]}" "${maps[@]}" -c:a aac "$T/streams20.mp4"
ffmpeg -v error -y "${ins[@]}" "${maps[@]}" -c:a mp2 "$T/streams20.ts"
for f in streams20.mkv streams20.mp4 streams20.ts; do
  refused "$T/$f"
  grep -q "too many streams (.*16)" "$T/err" || fail "$f: the stream cap is not named: $(cat "$T/err")"
  ! grep -qi "allocate memory" "$T/err" || fail "$f: $(cat "$T/err")"
done

# A bad option names itself as typed, and the command; a file named like an option
# is told how to pass it.
expect_exit 2 "$VIDTHEQUE" -L "$LIB" add -rf.mp4
grep -q "^vidtheque: add: unknown option '-rf.mp4' (a file? write './-rf.mp4', or '--' before it)$" "$T/err" ||
  fail "add -rf.mp4: $(cat "$T/err")"
expect_exit 2 "$VIDTHEQUE" -L "$LIB" add -qz "$T/good.mp4"
grep -q "^vidtheque: add: unknown option '-z' in '-qz'$" "$T/err" || fail "add -qz: $(cat "$T/err")"
expect_exit 2 "$VIDTHEQUE" -L "$LIB" add "$T/good.mp4" --stt
grep -q "^vidtheque: add: option '--stt' needs a value$" "$T/err" || fail "add --stt: $(cat "$T/err")"
expect_exit 2 "$VIDTHEQUE" -L "$LIB" add --stt=everything "$T/good.mp4"
grep -q "^vidtheque: add: bad value 'everything' for --stt: auto, captions or recognize$" "$T/err" ||
  fail "add --stt=everything: $(cat "$T/err")"
expect_exit 2 "$VIDTHEQUE" -L "$LIB" search --jsn x
grep -q "^vidtheque: search: unknown option '--jsn'$" "$T/err" || fail "search --jsn: $(cat "$T/err")"
expect_exit 2 "$VIDTHEQUE" -L "$LIB" show "$(head -n 1 "$T/ls.before" | cut -f 1)" -x
grep -q "^vidtheque: show: unknown option '-x'$" "$T/err" || fail "show -x: $(cat "$T/err")"
# ... and the ways out work: a file really named -rf.mp4 (the good clip: already there)
cp "$T/good.mp4" "$T/-rf.mp4"
for how in "-- -rf.mp4" "./-rf.mp4"; do
  # shellcheck disable=SC2086
  (cd "$T" && "$VIDTHEQUE" -L "$LIB" add $how > out 2> err) || fail "add $how: $(cat "$T/err")"
  grep -q "is already in the library" "$T/err" || fail "add $how: $(cat "$T/err")"
done
# options after the files, files kept in their order
gen_clip "$T/second.mp4" 2 'Second'
vt add "$T/good.mp4" "$T/second.mp4" --stt=auto -q > "$T/two.out" 2> /dev/null ||
  fail "add with options after the files: $(cat "$T/two.out")"
[[ $(head -n 1 "$T/two.out") == "$(head -n 1 "$T/ls.before" | cut -f 1)" && $(wc -l < "$T/two.out") == 2 ]] ||
  fail "ids not in the order of the files: $(cat "$T/two.out")"
vt rm "$(tail -n 1 "$T/two.out")"

# 'rm' while 'add' indexes: add stops with one line saying so (it used to end with an
# empty 'vidtheque: ' line). The rm lands once a long stage has started.
ffmpeg -v error -y -f lavfi -i "testsrc2=s=640x360:d=40" -f lavfi -i "sine=d=40" -c:v libx264 \
  -preset veryfast -c:a aac -shortest "$T/long.mp4"
"$VIDTHEQUE" -L "$LIB" add "$T/long.mp4" > "$T/long.out" 2> "$T/long.err" &
add_pid=$!
for _ in $(seq 600); do grep -qE ' (stt|keyframe|ocr) started$' "$T/long.err" && break; sleep 0.05; done
[[ -s $T/long.out ]] || fail "add printed no id: $(cat "$T/long.err")"
vt rm "$(cat "$T/long.out")"
rc=0; wait "$add_pid" || rc=$?
last=$(tail -n 1 "$T/long.err")
[[ $last != "vidtheque: " ]] || fail "add ended with an empty error line"
if [[ $rc == 0 ]]; then
  note "rm during add: add had finished first (not checked): $last"
else
  [[ $rc == 1 ]] || fail "add exited $rc after rm"
  [[ $last == "vidtheque: $(cat "$T/long.out"): removed from the library while being indexed" ]] ||
    fail "rm during add: $last"
fi
vt ls > "$T/ls.now"
cmp -s "$T/ls.before" "$T/ls.now" || fail "rm during add left something: $(cat "$T/ls.now")"

# Database errors say what failed, never the SQL (it used to quote 60 bytes of it).
mkdir "$T/junk"
head -c 8192 /dev/urandom > "$T/junk/library.db"
expect_exit 1 "$VIDTHEQUE" -L "$T/junk" ls
one_line_err
! grep -qE "PRAGMA|SELECT|INSERT|journal_mode" "$T/err" || fail "SQL in the message: $(cat "$T/err")"
grep -q "not a database" "$T/err" || fail "junk database: $(cat "$T/err")"

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
