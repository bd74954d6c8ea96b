#!/usr/bin/env bash
# Bytes a browser loads for the first paint of a video page, before the user scrolls:
# a 46-slide talk (the seed's count of frames) at 1280x720 on a noisy background, so that
# its keyframes weigh what a real talk's do, with a sidecar transcript of 46 cues. Chromium
# (tests/browser/lib.mjs) opens /v/ID at 1366x900 and counts every response until the
# network is idle. The baseline, measured in the same run: the same page with every image it
# references loaded (what the page cost when its frames and strip loaded eagerly). Target
# (issue 13): <= 1 MB and <= 10 % of the baseline. Frames are full keyframes until the
# small thumbnails land (i13-thumbs); web_video.c's put_frame_src() is where they switch.
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ -d $ROOT/tests/browser/node_modules/playwright-core ]] || { echo "tests/browser/node_modules is missing: run bash scripts/setup.sh" >&2; exit 1; }
t=$(mktemp -d)
SRV=''
cleanup() {
  [[ -z $SRV ]] || { kill "$SRV" 2> /dev/null || true; wait "$SRV" 2> /dev/null || true; }
  rm -rf "$t"
}
trap cleanup EXIT
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
words=(Harbor Market Window Garden Silver Kitchen Ocean Letter Valley Picture Memory Journey)
ffmpeg -v error -y -f lavfi -i "color=c=0x405878:s=1280x720:d=1,noise=alls=45:allf=u" -frames:v 1 "$t/bg.png"
: > "$t/list.txt"
for i in $(seq 0 45); do
  w1=${words[i % 12]} w2=${words[(i * 5 + 3) % 12]}
  ffmpeg -v error -y -i "$t/bg.png" -vf "hue=h=$((i * 37 % 360)),drawtext=fontfile=$font:text='Slide $i $w1':fontsize=64:fontcolor=white:box=1:boxcolor=black@0.6:x=60:y=80,drawtext=fontfile=$font:text='$w2 and $w1 results':fontsize=44:fontcolor=white:box=1:boxcolor=black@0.6:x=60:y=260" \
    -frames:v 1 "$t/s$i.png"
  printf "file '%s'\nduration 1.5\n" "$t/s$i.png" >> "$t/list.txt"
done
printf "file '%s'\n" "$t/s45.png" >> "$t/list.txt"
# the sidecar transcript: a cue per slide
python3 - "$t/talk.srt" << 'PY'
import sys
out = []
for i in range(46):
    a, b = i * 1.5, i * 1.5 + 1.4
    f = lambda s: "00:%02d:%02d,%03d" % (int(s) // 60, int(s) % 60, round(s * 1000) % 1000)
    out.append("%d\n%s --> %s\nslide %d talks about its results\n" % (i + 1, f(a), f(b), i))
open(sys.argv[1], "w").write("\n".join(out))
PY
ffmpeg -v error -y -f concat -safe 0 -i "$t/list.txt" -f lavfi -i "sine=d=69" -vf fps=30 \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -shortest -metadata title="Video page bench talk" "$t/talk.mp4"
"$VIDTHEQUE" -q -L "$t/lib" add "$t/talk.mp4" > "$t/id"
id=$(cat "$t/id")
"$VIDTHEQUE" -L "$t/lib" serve --read-only --port 0 2> "$t/srv.err" &
SRV=$!
for _ in $(seq 100); do grep -q '^listening on ' "$t/srv.err" && break; sleep 0.1; done
B=$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' "$t/srv.err")
[[ -n $B ]] || { echo "the server did not start: $(cat "$t/srv.err")" >&2; exit 1; }
node "$ROOT/bench/video_page_bytes.mjs" "$B" "$id"
