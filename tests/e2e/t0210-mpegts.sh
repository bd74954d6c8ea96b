#!/usr/bin/env bash
# The same talk in MPEG-TS (a recording's usual container) gives what its MP4 gives:
# shots, which frames are kept, and their text. MPEG-TS has no index, so a seek by
# timestamp lands on any packet, even past the last keyframe before the target; the
# keyframe stage used to fail there ("cannot decode the frame") or take a later frame.
source "$(dirname "$0")/lib.sh"
fixture gen_talk.sh "$T/talk" 1 > /dev/null
ffmpeg -v error -y -i "$T/talk/talk.mp4" -c copy "$T/talk.ts"
vt init
mp4=$(vt add "$T/talk/talk.mp4")
expect_exit 0 vt add "$T/talk.ts"
ts=$(cat "$T/out")
vt export "$mp4" > "$T/mp4.json"
vt export "$ts" > "$T/ts.json"
moments() { json "$1" "[(round(s['start_s'], 2), round(s['end_s'], 2)) for s in d['shots']] + [(round(f['t_s'], 2), f['state'], f['duplicate_of'], [l['text'] for l in f['ocr']]) for f in d['frames']]"; }
[[ $(moments "$T/ts.json") == "$(moments "$T/mp4.json")" ]] ||
  fail "MPEG-TS differs from MP4:$(diff <(moments "$T/mp4.json" | tr ')' '\n') <(moments "$T/ts.json" | tr ')' '\n') | head -20)"
echo ok
