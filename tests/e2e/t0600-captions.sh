#!/usr/bin/env bash
# Captions instead of recognition: subtitle streams embedded by ffmpeg (mov_text in MP4,
# subrip, ass and webvtt in Matroska) and sidecar SubRip / WebVTT files are read with their
# texts and times (and word times from WebVTT tags); the WebVTT, SubRip and text writers
# produce files that ffmpeg reads back with the right number of cues; hostile caption files
# give one clear line (error or skip reason) in bounded time and memory, never a crash.
# The captions module is driven through tests/tools/capdump.c, built here against the
# static library next to $VIDTHEQUE (and against build/san's too when it exists).
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$(readlink -f "$VIDTHEQUE")")
PKGS=$(sed -n 's/^PKGS = //p' "$ROOT/Makefile")
build_capdump() { # build_capdump LIBDIR OUT [CFLAGS...]
  local dir=$1 out=$2; shift 2
  # shellcheck disable=SC2086
  cc -std=c11 -D_GNU_SOURCE "$@" -I"$ROOT/include" -I"$ROOT/lib" "$ROOT/tests/tools/capdump.c" \
    "$dir/libvidtheque.a" $(pkg-config --cflags --libs $PKGS) -lm -pthread -o "$out"
}
main_flags=()
[[ $BUILD == */san ]] && main_flags=(-fsanitize=address,undefined -fno-sanitize-recover=all)
build_capdump "$BUILD" "$T/capdump" "${main_flags[@]}" || fail "cannot build capdump against $BUILD"
CAP=$T/capdump
# The ASan/UBSan build, if present and current, runs the hostile inputs.
SAN=$ROOT/build/san
HOSTILE_CAP=$CAP
if [[ -f $SAN/libvidtheque.a ]] && nm "$SAN/libvidtheque.a" 2> /dev/null | grep -c ' T vt_captions_parse$' > /dev/null &&
  build_capdump "$SAN" "$T/capdump-san" -fsanitize=address,undefined -fno-sanitize-recover=all 2> /dev/null; then
  HOSTILE_CAP=$T/capdump-san
  note "hostile inputs run under ASan/UBSan"
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1

# cues FILE: "start end text" per cue, text with \n shown as |
cues() { python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["model"])
for c in d["cues"]:
    print("%.3f %.3f %s" % (c["start_s"], c["end_s"], c["text"].replace("\n", "|")))' "$1"; }
# near FILE INDEX START END TEXT [TOL]: cue INDEX has these times (within TOL s) and text
near() {
  python3 - "$@" <<'PY' || fail "$1: cue $2: $(cues "$1" | sed -n "$(($2 + 2))p") (expected $3 $4 $5)"
import json, sys
f, i, s, e, text = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
tol = float(sys.argv[6]) if len(sys.argv) > 6 else 0.001
c = json.load(open(f))["cues"][i]
sys.exit(0 if abs(c["start_s"] - s) <= tol and abs(c["end_s"] - e) <= tol and c["text"] == text else 1)
PY
}

cat > "$T/subs.srt" << 'EOF'
1
00:00:00,500 --> 00:00:01,800
<i>Welcome</i> to the talk

2
00:00:02,000 --> 00:00:03,500
Tom &amp; Jerry
on two lines

3
00:00:04,000 --> 00:00:05,250
The end
EOF
ffmpeg -v error -y -f lavfi -i color=white:s=320x240:d=6 -f lavfi -i sine=f=440:d=6 \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -shortest "$T/v.mp4"

# (a) MP4 with a mov_text stream, (b-d) Matroska with subrip, ass and webvtt streams
ffmpeg -v error -y -i "$T/v.mp4" -i "$T/subs.srt" -map 0 -map 1 -c:v copy -c:a copy \
  -c:s mov_text -metadata:s:s:0 language=eng "$T/a.mp4"
for codec in srt ass webvtt; do
  ffmpeg -v error -y -i "$T/v.mp4" -i "$T/subs.srt" -map 0 -map 1 -c:v copy -c:a copy \
    -c:s "$codec" "$T/b-$codec.mkv"
done
"$CAP" stream "$T/a.mp4" > "$T/a.json" || fail "mov_text stream: $(cat "$T/a.json")"
[[ $(json "$T/a.json" "d['model']") == "captions:embedded mov_text (eng)" ]] ||
  fail "mov_text model: $(json "$T/a.json" "d['model']")"
[[ $(json "$T/a.json" "len(d['cues'])") == 3 ]] || fail "mov_text: $(cues "$T/a.json")"
near "$T/a.json" 0 0.5 1.8 "Welcome to the talk" 0.01
near "$T/a.json" 1 2.0 3.5 $'Tom & Jerry\non two lines' 0.01
near "$T/a.json" 2 4.0 5.25 "The end" 0.01
[[ $(json "$T/a.json" "sum(len(c['words']) for c in d['cues'])") == 0 ]] || fail "mov_text has words"
for codec in srt ass webvtt; do
  "$CAP" stream "$T/b-$codec.mkv" > "$T/b.json" || fail "$codec stream"
  model=$(json "$T/b.json" "d['model']")
  [[ $model == "captions:embedded $(sed 's/^srt$/subrip/' <<< "$codec")"* ]] || fail "$codec model: $model"
  [[ $(json "$T/b.json" "len(d['cues'])") == 3 ]] || fail "$codec: $(cues "$T/b.json")"
  # ffmpeg shifts the Matroska copy by the AAC priming delay (23 ms)
  near "$T/b.json" 0 0.5 1.8 "Welcome to the talk" 0.05
  near "$T/b.json" 1 2.0 3.5 $'Tom & Jerry\non two lines' 0.05
  near "$T/b.json" 2 4.0 5.25 "The end" 0.05
  note "$codec in mkv: $model"
done
# no subtitle stream: a skip with the reason
expect_exit 3 "$CAP" stream "$T/v.mp4"
one_line_err
grep -q "no text subtitle stream" "$T/err" || fail "no-stream reason: $(cat "$T/err")"
# not media at all: one error line
printf 'not a video\n' > "$T/junk.mp4"
expect_exit 1 "$CAP" stream "$T/junk.mp4"
one_line_err

# Sidecars: NAME.srt beside NAME.mp4 wins over the embedded stream
cp "$T/a.mp4" "$T/talk.mp4"
printf '1\r\n00:00:01,000 --> 00:00:02,000\r\nFrom the sidecar\r\n' > "$T/talk.srt"
"$CAP" find "$T/talk.mp4" > "$T/find.json"
[[ $(json "$T/find.json" "d['sidecar']") == "$T/talk.srt" ]] || fail "find: $(cat "$T/find.json")"
"$CAP" import "$T/talk.mp4" > "$T/imp.json" || fail "import with sidecar"
[[ $(json "$T/imp.json" "d['model']") == "captions:sidecar srt" ]] || fail "import model"
near "$T/imp.json" 0 1.0 2.0 "From the sidecar"
# a malformed sidecar falls back to the stream
printf 'garbage\n' > "$T/talk.srt"
"$CAP" import "$T/talk.mp4" > "$T/imp.json" || fail "import with a bad sidecar"
[[ $(json "$T/imp.json" "d['model']") == "captions:embedded mov_text (eng)" ]] || fail "fallback model"
rm "$T/talk.srt"

# Sidecars in legacy encodings are detected and converted, the encoding kept in the model;
# SubRip text goes on after a blank line
fr='L’été à Noël : où êtes-vous ? Ça coûte 5 €.'
printf '1\r\n00:00:01,000 --> 00:00:02,000\r\n%s\r\n\r\nsuite après une ligne vide\r\n' "$fr" |
  iconv -f UTF-8 -t WINDOWS-1252 > "$T/talk.fr.srt"
"$CAP" import "$T/talk.mp4" > "$T/imp.json" || fail "import a windows-1252 sidecar"
[[ $(json "$T/imp.json" "d['model']") == "captions:sidecar srt (fr, windows-1252)" ]] ||
  fail "windows-1252 model: $(json "$T/imp.json" "d['model']")"
near "$T/imp.json" 0 1.0 2.0 "$fr"$'\n'"suite après une ligne vide"
rm "$T/talk.fr.srt"
zh='我们今天去公园散步，天气很好。你好吗？我很好，谢谢你的关心。这部电影的字幕是中文的。'
printf '1\n00:00:01,000 --> 00:00:02,000\n%s\n' "$zh" | iconv -f UTF-8 -t GB2312 > "$T/talk.zh.srt"
"$CAP" import "$T/talk.mp4" > "$T/imp.json" || fail "import a gb2312 sidecar"
[[ $(json "$T/imp.json" "d['model']") == "captions:sidecar srt (zh, gb18030)" ]] ||
  fail "gb2312 model: $(json "$T/imp.json" "d['model']")"
near "$T/imp.json" 0 1.0 2.0 "$zh"
rm "$T/talk.zh.srt"
note "windows-1252 and gb2312 sidecars read"

# SubRip as FFmpeg reads it: text after blank lines, numbers in text, "-->" in text, a
# missing blank line, '.' before the ms, coordinates, trailing text; same cues and text
printf '\xef\xbb\xbf1\r\n00:00:01,000 --> 00:00:02,000\r\nfirst\r\n\r\nafter a blank line\r\n\r\n\r\n42\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000 X1:10 X2:20 Y1:1 Y2:2\r\nsecond x --> y\r\n3\r\n00:00:05.000 --> 00:00:06.500\r\nno blank before, dot separator\r\n\r\n4\r\n00:00:07,000 --> 00:00:08,000\r\n<i>tags</i> <font color="red">kept</font> a < b\r\n\r\n\r\n\r\n5\r\n00:00:09,000 --> 00:00:10,000\r\nlast\r\n\r\ntrailing text\r\n' > "$T/edge.srt"
"$CAP" load "$T/edge.srt" > "$T/edge.json" || fail "load edge.srt"
ffmpeg -v error -y -i "$T/edge.srt" -f webvtt "$T/edge-ff.vtt" || fail "ffmpeg cannot read edge.srt"
python3 - "$T/edge.json" "$T/edge-ff.vtt" <<'PY' || fail "edge.srt: not as ffmpeg reads it: $(cat "$T/edge.json")"
import json, re, sys
ours = [(c["start_s"], c["end_s"], c["text"]) for c in json.load(open(sys.argv[1]))["cues"]]
def secs(t):
    p = t.split(":")
    return round(sum(float(x) * 60 ** i for i, x in enumerate(reversed(p))), 3)
ff = []
for block in open(sys.argv[2]).read().split("\n\n")[1:]:
    lines = block.strip("\n").split("\n")
    if not lines or " --> " not in lines[0]:
        continue
    a, b = lines[0].split(" --> ")
    text = "\n".join(re.sub(r"<[^>]*>", "", l) for l in lines[1:])
    ff.append((secs(a), secs(b.split()[0]), text))
print(ours, ff, file=sys.stderr) if ours != ff else None
sys.exit(0 if ours == ff and len(ours) == 5 else 1)
PY

# NAME.en.vtt with word timing tags, next to a video without subtitles
cp "$T/v.mp4" "$T/words.mp4"
cat > "$T/words.fr.vtt" << 'EOF'
WEBVTT

00:00:00.000 --> 00:00:01.000
Bonjour
EOF
cat > "$T/words.en.vtt" << 'EOF'
WEBVTT
Kind: captions

NOTE made by hand

1
00:00:01.000 --> 00:00:03.000 align:start position:0%
<v Ann><00:00:01.000>Hello <00:00:01.400>big <c.colorE5E5E5><00:00:02.000>world</c>

00:00:04.000 --> 00:00:05.000
so<00:00:04.500><c> long</c>
EOF
"$CAP" find "$T/words.mp4" > "$T/find.json"
[[ $(json "$T/find.json" "d['sidecar']") == "$T/words.en.vtt" ]] || fail "find en: $(cat "$T/find.json")"
"$CAP" import "$T/words.mp4" > "$T/w.json" || fail "import vtt"
[[ $(json "$T/w.json" "d['model']") == "captions:sidecar vtt (en)" ]] || fail "vtt model"
near "$T/w.json" 0 1.0 3.0 "Hello big world"
near "$T/w.json" 1 4.0 5.0 "so long"
[[ $(json "$T/w.json" "[(w['text'], w['start_s'], w['end_s']) for w in d['cues'][0]['words']]") == \
  "[('Hello', 1.0, 1.4), ('big', 1.4, 2.0), ('world', 2.0, 3.0)]" ]] || fail "words: $(json "$T/w.json" "d['cues'][0]['words']")"
[[ $(json "$T/w.json" "[(w['text'], w['start_s'], w['end_s']) for w in d['cues'][1]['words']]") == \
  "[('so', 4.0, 4.5), ('long', 4.5, 5.0)]" ]] || fail "words: $(json "$T/w.json" "d['cues'][1]['words']")"
# a symlinked sidecar is not followed
ln -s /etc/passwd "$T/link.srt"
cp "$T/v.mp4" "$T/link.mp4"
"$CAP" find "$T/link.mp4" > "$T/find.json"
[[ $(json "$T/find.json" "d['sidecar']") == None ]] || fail "symlink sidecar found"

# Writers: WebVTT, SubRip and text read back by ffmpeg and by us
cat > "$T/tricky.srt" << 'EOF'
1
00:00:00,500 --> 00:00:01,500
a --> b &amp; &lt;c&gt; {&#92;an8}

2
00:00:01,000 --> 00:00:02,000
overlapping, earlier in the file than 3

3
00:00:00,100 --> 00:00:00,400
unsorted
EOF
for src in "$T/subs.srt" "$T/words.en.vtt" "$T/tricky.srt"; do
  "$CAP" load "$src" > "$T/orig.json" || fail "load $src"
  n=$(json "$T/orig.json" "len(d['cues'])")
  for fmt in vtt srt txt; do
    "$CAP" write "$fmt" "$src" > "$T/out.$fmt" || fail "write $fmt"
  done
  for fmt in vtt srt; do
    # decoded and encoded again, so that ffmpeg parses every cue
    ffmpeg -v error -i "$T/out.$fmt" -map 0:s -c:s srt -f srt - > "$T/ff.srt" 2> "$T/ff.err" || fail "ffmpeg cannot read our $fmt: $(cat "$T/ff.err")"
    [[ ! -s $T/ff.err ]] || fail "ffmpeg complains about our $fmt: $(cat "$T/ff.err")"
    got=$(ffprobe -v error -select_streams s:0 -show_entries packet=pts_time -of csv=p=0 "$T/out.$fmt" | wc -l)
    [[ $got == "$n" ]] || fail "$(basename "$src") as $fmt: ffprobe counts $got cues, expected $n"
    "$CAP" load "$T/out.$fmt" > "$T/back.json" || fail "our $fmt does not read back"
    python3 - "$T/orig.json" "$T/back.json" "$fmt" <<'PY' || fail "$(basename "$src") as $fmt does not round-trip"
import json, sys
a, b = (json.load(open(f))["cues"] for f in sys.argv[1:3])
key = lambda c: (round(c["start_s"], 3), round(c["end_s"], 3), c["text"],
                 [(w["text"], round(w["start_s"], 3), round(w["end_s"], 3)) for w in c["words"]]
                 if sys.argv[3] == "vtt" else None)
sys.exit(0 if [key(c) for c in a] == [key(c) for c in b] else 1)
PY
  done
  [[ $(wc -l < "$T/out.txt") == "$n" ]] || fail "txt lines"
  ! grep -qE '^[0-9:.,]+ --> ' "$T/out.txt" || fail "txt has timings"
  note "$(basename "$src"): $n cues written as vtt, srt, txt and read back"
done
# WebVTT escapes & < > (an ASS override means nothing there); SubRip has no escapes that
# players agree on: only what would read as markup or as a timing line is escaped
grep -qF 'a --&gt; b &amp; &lt;c&gt; {\an8}' "$T/out.vtt" || fail "vtt escaping: $(cat "$T/out.vtt")"
grep -qF 'a --> b & &lt;c> {&#92;an8}' "$T/out.srt" || fail "srt escaping: $(cat "$T/out.srt")"
[[ $(grep -cE '^[0-9:,]+ --> ' "$T/out.srt") == 3 ]] || fail "srt timing lines: $(cat "$T/out.srt")"

# Hostile caption files: exit 1 (error) or 3 (skipped), one line, bounded time and memory
hostile() { # hostile FILE
  local f=$1 rc=0
  timeout 60 /usr/bin/time -f '%M' -o "$T/rss" "$HOSTILE_CAP" load "$f" > "$T/out" 2> "$T/err" || rc=$?
  [[ $rc == 0 || $rc == 1 || $rc == 3 ]] || fail "$(basename "$f"): exit $rc: $(head -c 2000 "$T/err")"
  [[ $rc == 0 ]] || one_line_err
  (( $(tail -n 1 "$T/rss") < 600000 )) || fail "$(basename "$f"): peak RSS $(tail -n 1 "$T/rss") kB"
  note "$(basename "$f"): exit $rc $(cat "$T/err")"
}
: > "$T/empty.srt"; hostile "$T/empty.srt"
head -c 100000 /dev/urandom > "$T/random.srt"; hostile "$T/random.srt"
printf 'WEBVTT\n\n99:99:99.999 --> 100:00:00.000\nx\n\n-1:00.000 --> 00:02.000\ny\n' > "$T/times.vtt"
hostile "$T/times.vtt"; grep -q "line 3: bad cue timing" "$T/err" || fail "times.vtt: $(cat "$T/err")"
printf '1\n00:00:01,000 --> 00:00:02,000\n\0\0\0\xff\xfe\xc0\x80 <b>bold</b>\n' > "$T/nul.srt"
hostile "$T/nul.srt"
truncate -s 50M "$T/huge.srt"; hostile "$T/huge.srt"
grep -q "too large" "$T/err" || fail "huge.srt: $(cat "$T/err")"
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    for i in range(300000):
        f.write("%d\n00:00:01,000 --> 00:00:02,000\nx\n\n" % i)' "$T/many.srt"
hostile "$T/many.srt"; grep -q "more than 200000 cues" "$T/err" || fail "many.srt: $(cat "$T/err")"
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("WEBVTT\n\n00:00:00.000 --> 01:00:00.000\n")
    f.write("".join("<00:00:%02d.%03d>w" % (i // 1000 % 60, i % 1000) for i in range(200000)))' "$T/tags.vtt"
hostile "$T/tags.vtt"
python3 -c '
import sys
sys.stdout.write("1\n00:00:01,000 --> 00:00:02,000\n" + "<" * 4000000 + "{\\" * 2000000 + "\n")' > "$T/angles.srt"
hostile "$T/angles.srt"
mkfifo "$T/fifo.srt"; hostile "$T/fifo.srt"
mkdir "$T/dir.srt"; hostile "$T/dir.srt"
hostile "$T/link.srt"
echo "ok"
