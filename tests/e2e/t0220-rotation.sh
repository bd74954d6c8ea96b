#!/usr/bin/env bash
# Rotated sources are read upright everywhere. One 640x360 clip with text (rot0.mp4) and
# the same picture stored turned a quarter, a half and three quarters, each with the display
# matrix that turns it back (rot90/180/270.mp4, checked upright with ffmpeg's autorotate),
# and once with the old "rotate" tag instead of a matrix (Matroska ROTATE=90, rotag90.mkv).
# Through `vidtheque add` and export, each must give: the rotation in media, kept frames of
# 640x360 (coded 360x640 for the quarter turns), images equal to rot0's (SSIM), the same
# OCR words as rot0's, and stored perceptual hashes within a few bits of rot0's (the frames
# by likeness find rotated copies).
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
for f in rot90.mp4 rot180.mp4 rot270.mp4 rotag90.mkv; do
  img=$LIB/$(json "$T/$f.json" "[f['image'] for f in d['frames'] if f['image']][0]")
  small=$LIB/$(json "$T/$f.json" "[f['image_small'] for f in d['frames'] if f['image_small']][0]")
  dims=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$img")
  [[ $dims == 640,360 ]] || fail "$f: kept image is $dims"
  sdims=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$small")
  python3 -c "import sys; w, h = map(int, sys.argv[1].split(',')); sys.exit(not w > h)" "$sdims" ||
    fail "$f: small image is $sdims"
  s=$(ssim "$img" "$ref")
  python3 -c "import sys; sys.exit(float(sys.argv[1]) < 0.9)" "$s" || fail "$f: image SSIM $s to rot0's"
  echo "$f: image 640x360, small $sdims, SSIM $s to rot0's"
done
echo "ok"
