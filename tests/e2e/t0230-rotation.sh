#!/usr/bin/env bash
# Rotated sources are read upright everywhere. One 640x360 slide with text and a red bar
# down its left edge (rot0.mp4) and the same picture stored turned a quarter, a half and
# three quarters, each with the display matrix that turns it back (rot90/180/270.mp4,
# checked upright with ffmpeg's autorotate), and once with the old "rotate" tag instead of
# a matrix (Matroska ROTATE=90, rotag90.mkv). Through `vidtheque add`, export and the web
# server, each must give:
#   frames      the rotation in media; kept frames of 640x360 (coded 360x640 for the
#               quarter turns); the stored image equal to rot0's (SSIM)
#   OCR         the same words as rot0's, each line where rot0's is (an upright read)
#   thumbnails  the small image equal to rot0's small one (SSIM) and, by its pixels, the
#               red bar down its left edge and white elsewhere (not only its size)
#   phash       stored perceptual hashes within a few bits of rot0's (frames by likeness
#               find rotated copies)
#   video page  each frame's <img> reserved at 320x180 (the upright shape), and the
#               server's small image the stored one
. "$(dirname "$0")/lib.sh"
F=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
[[ -f $F ]] || fail "no $F"
W=640 H=360
draw="drawtext=fontfile=$F:text='Harvest yield':fontsize=48:fontcolor=black:x=60:y=50"
draw+=",drawtext=fontfile=$F:text='railway survey':fontsize=48:fontcolor=0x203080:x=60:y=150"
draw+=",drawtext=fontfile=$F:text='quarterly revenue':fontsize=36:fontcolor=0x404040:x=60:y=260"
draw+=",drawbox=x=0:y=0:w=30:h=$H:color=red:t=fill"
ff() { ffmpeg -hide_banner -loglevel error -nostdin -y "$@"; }
ff -f lavfi -i "color=c=white:s=${W}x$H:r=10:d=3" -vf "$draw" -c:v libx264 -pix_fmt yuv420p \
  -crf 28 "$T/rot0.mp4"

# ssim A B: ffmpeg's SSIM of the first frames (A through autorotate), 0 when sizes differ
ssim() {
  ffmpeg -hide_banner -nostdin -i "$1" -i "$2" -frames:v 1 -lavfi ssim -f null - 2>&1 |
    sed -n 's/.*All:\([0-9.]*\).*/\1/p' | tail -1 | grep . || echo 0
}
# turned R: the clip stored turned R degrees counter-clockwise, with the display matrix
# that turns it back clockwise by R. The tag that writes that matrix is R or 360-R by
# FFmpeg version (5.1's mov muxer negates it): keep the one autorotate shows upright.
turn=([90]=transpose=cclock [180]=hflip,vflip [270]=transpose=clock)
for r in 90 180 270; do
  ff -i "$T/rot0.mp4" -vf "${turn[$r]}" -c:v libx264 -pix_fmt yuv420p -crf 28 "$T/coded$r.mp4"
  ok=
  for tag in "$r" $(((360 - r) % 360)); do
    ff -i "$T/coded$r.mp4" -c copy -metadata:s:v rotate="$tag" "$T/rot$r.mp4"
    s=$(ssim "$T/rot$r.mp4" "$T/rot0.mp4")
    if python3 -c "import sys; sys.exit(float(sys.argv[1]) < 0.95)" "$s"; then
      ok=1
      break
    fi
  done
  [[ -n $ok ]] || fail "cannot make an upright rot$r.mp4 with this ffmpeg"
done
# the old tag: clockwise degrees, no matrix (ffmpeg 5 no longer reads it, nor writes it
# as a matrix in Matroska)
ff -i "$T/coded90.mp4" -c copy -metadata:s:v ROTATE=90 "$T/rotag90.mkv"
ffprobe -v error -show_entries stream_side_data_list "$T/rotag90.mkv" | grep -qi displaymatrix &&
  fail "rotag90.mkv has a display matrix"

vt init
declare -A id
for f in rot0.mp4 rot90.mp4 rot180.mp4 rot270.mp4 rotag90.mkv; do
  id[$f]=$(vt add "$T/$f") || fail "$f: add failed"
  vt export "${id[$f]}" > "$T/$f.json"
  lib_sql "SELECT phash FROM frames WHERE video_id = '${id[$f]}' AND duplicate_of IS NULL" \
    > "$T/$f.phash"
done

for f in rot0.mp4 rot90.mp4 rot180.mp4 rot270.mp4 rotag90.mkv; do
  python3 - "$T" "$f" <<'PY' || fail "$f"
import json, re, sys
t, f = sys.argv[1], sys.argv[2]
want = int(re.search(r"rot(?:ag)?(\d+)", f).group(1))
d = json.load(open(f"{t}/{f}.json"))
assert d['media']['rotation'] == want, (f, d['media'])
kept = [x for x in d['frames'] if x['state'] == 'done']
assert kept, f
for x in kept:
    assert (x['width'], x['height']) == (640, 360), (f, x['width'], x['height'])
words = {re.sub(r"[^a-z]", "", w.lower()) for x in kept for l in x['ocr'] if not l.get('noise')
         for w in l['text'].split()}
need = {"harvest", "yield", "railway", "survey", "quarterly", "revenue"}
assert need <= words, (f, sorted(need - words), sorted(words))
def h(p):
    return [int(v) & (2**64 - 1) for v in open(p).read().split()]
ref, got = h(f"{t}/rot0.mp4.phash"), h(f"{t}/{f}.phash")
dist = min(bin(a ^ b).count("1") for a in ref for b in got)
assert dist <= 6, (f, "phash", dist)
print(f, "rotation", want, "kept", len(kept), "640x360; words", len(need), "of", len(need),
      "; phash", dist, "bits from rot0's")
PY
done

# the stored images themselves, not only what was recorded: upright, the same picture
ref=$LIB/$(json "$T/rot0.mp4.json" "[f['image'] for f in d['frames'] if f['image']][0]")
ref_small=$LIB/$(json "$T/rot0.mp4.json" "[f['image_small'] for f in d['frames'] if f['image_small']][0]")
for f in rot0.mp4 rot90.mp4 rot180.mp4 rot270.mp4 rotag90.mkv; do
  img=$LIB/$(json "$T/$f.json" "[f['image'] for f in d['frames'] if f['image']][0]")
  small=$LIB/$(json "$T/$f.json" "[f['image_small'] for f in d['frames'] if f['image_small']][0]")
  dims=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$img")
  [[ $dims == 640,360 ]] || fail "$f: kept image is $dims"
  sdims=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$small")
  [[ $sdims == 320,180 ]] || fail "$f: small image is $sdims"
  s=$(ssim "$img" "$ref")
  python3 -c "import sys; sys.exit(float(sys.argv[1]) < 0.9)" "$s" || fail "$f: image SSIM $s to rot0's"
  ss=$(ssim "$small" "$ref_small")
  python3 -c "import sys; sys.exit(float(sys.argv[1]) < 0.9)" "$ss" ||
    fail "$f: small image SSIM $ss to rot0's"
  # the small image's pixels: the bar (30 of 640 px: 15 of 320) red down the left edge,
  # the right edge and the top and bottom rows right of the bar white
  ffmpeg -v error -nostdin -i "$small" -f rawvideo -pix_fmt rgb24 - > "$T/small.rgb"
  python3 - "$T/small.rgb" "$f" <<'PY' || fail "$f: the small image is not upright"
import sys
px, f = open(sys.argv[1], "rb").read(), sys.argv[2]
W, H = 320, 180
assert len(px) == W * H * 3, len(px)
def mean(x0, x1, y0, y1):
    s, n = [0, 0, 0], (x1 - x0) * (y1 - y0)
    for y in range(y0, y1):
        for x in range(x0, x1):
            for c in range(3):
                s[c] += px[(y * W + x) * 3 + c]
    return [v / n for v in s]
left, right = mean(2, 12, 10, 170), mean(300, 318, 10, 170)
top, bottom = mean(30, 318, 0, 6), mean(30, 318, 174, 180)
assert left[0] > 180 and left[1] < 90 and left[2] < 90, (f, "left edge", left)
for name, m in (("right edge", right), ("top", top), ("bottom", bottom)):
    assert min(m) > 200, (f, name, m)
PY
  echo "$f: image 640x360, SSIM $s; small 320x180, SSIM $ss, red bar on its left edge"
done

# OCR read upright: each line where rot0's is
for f in rot90.mp4 rot180.mp4 rot270.mp4 rotag90.mkv; do
  python3 - "$T/rot0.mp4.json" "$T/$f.json" "$f" <<'PY' || fail "$f: OCR lines not where rot0's are"
import json, sys
def lines(p):
    d = json.load(open(p))
    return {l["text"].strip().lower(): l["box"] for x in d["frames"] if x["state"] == "done"
            for l in x["ocr"] if not l.get("noise")}
ref, got = lines(sys.argv[1]), lines(sys.argv[2])
for text in ("harvest yield", "railway survey", "quarterly revenue"):
    assert text in ref and text in got, (text, sorted(ref), sorted(got))
    assert all(abs(a - b) <= 6 for a, b in zip(ref[text], got[text])), (text, ref[text], got[text])
print(sys.argv[3], "OCR lines at rot0's boxes")
PY
done

# the video page and the server's images
start_server --read-only
for f in rot0.mp4 rot90.mp4 rot180.mp4 rot270.mp4 rotag90.mkv; do
  i=${id[$f]}
  code=$(curl -s -o "$T/page.html" -w '%{http_code}' "$B/v/$i") || true
  [[ $code == 200 ]] || fail "$f: GET /v/$i gave $code"
  imgs=$(grep -o '<img class="frame"[^>]*>' "$T/page.html") || fail "$f: no frame on its page"
  while read -r tag; do
    [[ $tag == *' width="320" height="180"'* ]] || fail "$f: frame reserved as: $tag"
  done <<< "$imgs"
  n=$(json "$T/$f.json" "[f['index'] for f in d['frames'] if f['image_small']][0]")
  small=$LIB/$(json "$T/$f.json" "[f['image_small'] for f in d['frames'] if f['image_small']][0]")
  code=$(curl -s -o "$T/served.jpg" -w '%{http_code}' "$B/api/videos/$i/frames/$n.jpg?size=small") || true
  [[ $code == 200 ]] || fail "$f: small frame $n gave $code"
  cmp -s "$T/served.jpg" "$small" || fail "$f: the server's small frame $n is not the stored one"
  echo "$f: page frames 320x180 ($(wc -l <<< "$imgs")), small image served as stored"
done
stop_server
echo "ok"
