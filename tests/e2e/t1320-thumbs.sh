#!/usr/bin/env bash
# Small frame images (issue 13, item 5): after `add` every kept frame has a small version
# beside it (320 px wide, the frame's aspect, a few KB for a slide), duplicates have none;
# `check` notices a lost one; `rm` and `redo --stage keyframe` treat them with the frames;
# the server answers /api/videos/ID/frames/N.jpg?size=small with it (type, caching, 304),
# the video and search pages use it with width/height, lazy loading and a srcset where
# it helps; a library
# indexed before small versions existed still gets an image; hostile URLs are refused.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"

req() {
  local want=$1; shift
  local got
  got=$(curl -s --path-as-is -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@") || true
  [[ $got == "$want" ]] || fail "curl $* gave $got, expected $want: $(head -c 300 "$T/body")"
}
hdr() { grep -i "^$1:" "$T/hdr" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }
dims() { ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height -of csv=p=0 "$1"; }

# ---- fixtures: three 720p slides (the first shown again after the third: a duplicate)
# and a portrait clip ----
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
slide() { # slide OUT COLOUR TEXT
  ffmpeg -v error -y -f lavfi -i "color=$2:s=1280x720:d=3:r=25,drawtext=fontfile=$FONT:text='$3':fontsize=64:x=80:y=120,drawtext=fontfile=$FONT:text='second line of $3':fontsize=40:x=80:y=300" \
    -f lavfi -i "sine=f=440:d=3" -c:v libx264 -preset veryfast -pix_fmt yuv420p -g 25 -c:a aac -shortest "$1"
}
slide "$T/s1.mp4" white "Harbor market"
slide "$T/s2.mp4" 0x1c2a4a "Purple river"
slide "$T/s3.mp4" 0xf4eed0 "Silver engine"
printf "file '%s'\n" "$T/s1.mp4" "$T/s2.mp4" "$T/s3.mp4" "$T/s1.mp4" > "$T/list"
ffmpeg -v error -y -f concat -safe 0 -i "$T/list" -c copy "$T/slides.mp4"
gen_clip "$T/tall.mp4" 3 'Tall' 360x640

expect_exit 0 vt add "$T/slides.mp4"
id=$(cat "$T/out")
expect_exit 0 vt add "$T/tall.mp4"
tall=$(cat "$T/out")
vt export "$id" --format json > "$T/doc.json"
vt export "$tall" --format json > "$T/tall.json"

# ---- files: one small version per kept frame, none for a duplicate ----
kept=$(json "$T/doc.json" "len([f for f in d['frames'] if f['state'] == 'done'])")
dups=$(json "$T/doc.json" "len([f for f in d['frames'] if f['state'] == 'skipped'])")
[[ $kept -ge 3 ]] || fail "expected at least 3 kept frames, got $kept"
[[ $dups -ge 1 ]] || fail "the repeated slide should be a duplicate: $(json "$T/doc.json" "[(f['t_s'], f['state']) for f in d['frames']]")"
[[ $(json "$T/doc.json" "[f['image_small'] for f in d['frames'] if f['state'] == 'skipped']") == *None* ]] &&
  [[ $(json "$T/doc.json" "[f['image_small'] for f in d['frames'] if f['state'] == 'skipped' and f['image_small']]") == "[]" ]] ||
  fail "a duplicate has a small image"
[[ $(find "$LIB/frames/$id" -name '*.small.jpg' | wc -l) == "$kept" ]] ||
  fail "$(find "$LIB/frames/$id" -name '*.small.jpg' | wc -l) small files for $kept kept frames"
json "$T/doc.json" "'\n'.join('%d %s %s %d %d' % (f['index'], f['image'], f['image_small'], f['width'], f['height']) for f in d['frames'] if f['state'] == 'done')" > "$T/kept"
while read -r n img small w h; do
  [[ $small == "${img%.jpg}.small.jpg" ]] || fail "frame $n: small image '$small' beside '$img'"
  [[ -f $LIB/$small ]] || fail "frame $n: '$small' is not on disk"
  bytes=$(stat -c %s "$LIB/$small")
  full=$(stat -c %s "$LIB/$img")
  [[ $bytes -le 30000 ]] || fail "frame $n: small image of a 720p slide is $bytes bytes"
  [[ $((bytes * 4)) -lt $full ]] || fail "frame $n: small $bytes bytes is not much smaller than $full"
  [[ $w == 1280 && $h == 720 ]] || fail "frame $n: full frame is ${w}x$h"
  [[ $(dims "$LIB/$small") == mjpeg,320,180 ]] || fail "frame $n: small image is $(dims "$LIB/$small")"
done < "$T/kept"
note "$kept kept frames, small images of $(find "$LIB/frames/$id" -name '*.small.jpg' -printf '%s\n' | sort -n | tr '\n' ' ')bytes"
img=$(json "$T/tall.json" "[f['image_small'] for f in d['frames'] if f['state'] == 'done'][0]")
[[ $(dims "$LIB/$img") == mjpeg,320,569 ]] || fail "portrait 360x640 gave a small image of $(dims "$LIB/$img")"

# ---- check: all there is fine; a lost one is a problem ----
expect_exit 0 vt check
first=$(head -n 1 "$T/kept")
read -r n0 img0 small0 _ _ <<< "$first"
mv "$LIB/$small0" "$T/saved.jpg"
expect_exit 1 vt check
grep -q "frame #$n0: small image '$small0' is missing" "$T/err" || fail "check said: $(cat "$T/err")"
mv "$T/saved.jpg" "$LIB/$small0"
expect_exit 0 vt check

# ---- the server ----
start_server
req 200 "$B/api/videos/$id/frames/$n0.jpg?size=small"
[[ $(hdr Content-Type) == image/jpeg ]] || fail "small frame type $(hdr Content-Type)"
[[ $(hdr Cache-Control) == "public, max-age=86400" ]] || fail "small frame caching: $(hdr Cache-Control)"
cmp -s "$T/body" "$LIB/$small0" || fail "?size=small is not the small file"
etag=$(hdr ETag)
[[ -n $etag ]] || fail "no ETag on the small frame"
req 304 -H "If-None-Match: $etag" "$B/api/videos/$id/frames/$n0.jpg?size=small"
req 200 -I "$B/api/videos/$id/frames/$n0.jpg?size=small"
[[ $(hdr Content-Length) == $(stat -c %s "$LIB/$small0") ]] || fail "HEAD length $(hdr Content-Length)"
req 200 "$B/api/videos/$id/frames/$n0.jpg"
cmp -s "$T/body" "$LIB/$img0" || fail "N.jpg is not the full frame"
req 200 "$B/api/videos/$id/frames/$n0.jpg?size=full"
cmp -s "$T/body" "$LIB/$img0" || fail "?size=full is not the full frame"
[[ $(hdr ETag) != "$etag" ]] || fail "the full and small frames share an ETag"

# hostile URLs: a bad size is 400, a frame that is not a frame 404
for bad in '../../x' '..%2f..%2flibrary.db' '' 'SMALL' 'small%00' 'smallx' 'big'; do
  req 400 "$B/api/videos/$id/frames/$n0.jpg?size=$bad"
done
for bad in 9999999.jpg 999999.jpg -1.jpg 00.jpg "$n0.small.jpg" "${n0}-small.jpg" \
           '..%2f..%2flibrary.db' "$n0.jpg%00"; do
  req 404 "$B/api/videos/$id/frames/$bad?size=small"
done
dup=$(json "$T/doc.json" "[f['index'] for f in d['frames'] if f['state'] == 'skipped'][0]")
req 404 "$B/api/videos/$id/frames/$dup.jpg?size=small"
req 404 "$B/api/videos/nosuch/frames/0.jpg?size=small"

# pages: the small image with its size, lazy, async; a srcset only where it helps
req 200 "$B/v/$id"
grep -q "src=\"/api/videos/$id/frames/$n0.jpg?size=small\"" "$T/body" || fail "video page lacks the small image"
grep -Eq "<a class=\"shot\" href=\"[^\"]+\" data-t=\"[0-9.]+\"( data-shots=\"[0-9]+\")? data-src=\"/api/videos/$id/frames/[0-9]+.jpg\?size=small\"" "$T/body" ||
  fail "the strip's thumbnail: $(grep -o '<a class="shot"[^>]*>' "$T/body" | head -n 1)"
grep -Eq "<img class=\"frame\" src=\"[^\"]+\?size=small\" data-t=\"[0-9.]+\" alt=\"[^\"]*\" srcset=\"[^\"]+\?size=small 320w, /api/videos/$id/frames/[0-9]+.jpg 1280w\" sizes=\"320px\" loading=\"lazy\" decoding=\"async\" width=\"320\" height=\"180\"" "$T/body" ||
  fail "the frames' image: $(grep -o '<img class="frame"[^>]*>' "$T/body" | head -n 1)"
# (the strip's preview <img> has no src until the page's script sets a small one)
grep -o '<img [^>]*src=[^>]*>' "$T/body" | grep -v 'size=small' && fail "an image without its small version"
req 200 "$B/search?q=harbor"
grep -q "/api/videos/$id/frames/[0-9]*.jpg?size=small" "$T/body" || fail "search page lacks the small thumbnail"
stop_server

# ---- an old library (no small images): check notes it, the server serves the frames ----
find "$LIB/frames/$id" -name '*.small.jpg' -delete
expect_exit 0 "$VIDTHEQUE" -L "$LIB" check
grep -q "$id: no small frame images" "$T/err" || fail "check did not note the missing small images: $(cat "$T/err")"
vt export "$id" --format json > "$T/old.json"
[[ $(json "$T/old.json" "[f['image_small'] for f in d['frames'] if f['image_small']]") == "[]" ]] ||
  fail "the document names small images that are gone"
start_server --read-only
req 200 "$B/api/videos/$id/frames/$n0.jpg?size=small"
[[ $(hdr Content-Type) == image/jpeg ]] || fail "fallback type"
cmp -s "$T/body" "$LIB/$img0" || fail "a frame without a small image is not answered with the frame"
stop_server

# ---- redo --stage keyframe writes them again; rm removes them ----
expect_exit 0 vt redo "$id" --stage keyframe
vt export "$id" --format json > "$T/redo.json"
k2=$(json "$T/redo.json" "len([f for f in d['frames'] if f['state'] == 'done'])")
[[ $(find "$LIB/frames/$id" -name '*.small.jpg' | wc -l) == "$k2" ]] || fail "redo keyframe: small images $(find "$LIB/frames/$id" -name '*.small.jpg' | wc -l) for $k2 frames"
[[ $(ls "$LIB/frames/$id" | wc -l) == 1 ]] || fail "stale frame folders: $(ls "$LIB/frames/$id")"
expect_exit 0 vt check
grep -q "small" "$T/err" && fail "check after redo: $(cat "$T/err")"
expect_exit 0 vt rm "$id"
[[ ! -e $LIB/frames/$id ]] || fail "rm left $(find "$LIB/frames/$id")"
[[ -n $(find "$LIB/frames/$tall" -name '*.small.jpg') ]] || fail "rm of one video removed another's small images"
echo "ok"
