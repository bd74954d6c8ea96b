#!/usr/bin/env bash
# backends: sqlite postgresql
# Small bugs of issue 25 (item 8), through the CLI, the API and the pages:
# - a file whose video stream is shorter than the file (one picture, then 5 s of sound):
#   its duration is the file's, and its one shot lasts to the end (not "0:00 to 0:00");
# - the "keyframe bytes" card says the frames it counts, word-timed cues have their own;
# - the library filter folds punctuation and hyphens as search does: `held out` finds
#   "Held-out".
. "$(dirname "$0")/lib.sh"

f="$T/Held-out talk.mp4"
ffmpeg -v error -f lavfi -i "color=white:s=320x180:d=0.04,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Still':fontsize=30:x=20:y=60" \
  -f lavfi -i "sine=d=5" -map 0 -map 1 -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac "$f"
[[ $(ffprobe -v error -select_streams v -show_entries stream=nb_frames -of csv=p=0 "$f") == 1 ]] ||
  fail "the fixture should have one video frame"
gen_clip "$T/other.mp4" 2 'Other'

vt init > /dev/null
id=$(vt add "$f")
vt add "$T/other.mp4" > /dev/null
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "(d['index_state'], round(d['duration_s']))") == "('ready', 5)" ]] ||
  fail "the file: $(json "$T/doc.json" "(d['index_state'], d['duration_s'])")"
[[ $(json "$T/doc.json" "[(s['start_s'], round(s['end_s'], 3)) for s in d['shots']] == [(0.0, round(d['duration_s'], 3))]") == True ]] ||
  fail "its one shot should last to the end: $(json "$T/doc.json" "(d['shots'], d['duration_s'])")"
vt show "$id" > "$T/show"
grep -q 'Shot 0, 0:00 to 0:05' "$T/show" || fail "show: $(grep Shot "$T/show")"
[[ $(vt ls | grep "^$id" | cut -f3) == 0:05 ]] || fail "ls: $(vt ls)"

start_server --read-only
trap 'stop_server; on_pg && e2e_pg_drop; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
curl -sf "$B/v/$id" > "$T/page" || fail "the video page"
grep -q 'Shot 0, 0:00 to 0:05' "$T/page" || fail "the page's shot: $(grep -o 'Shot 0[^<]*' "$T/page" | head -n 2)"
grep -q '0:00:05' "$T/page" || fail "the page's duration"
note "the stored cards"
grep -q '<dt>keyframe bytes</dt><dd class="n">[^<]*</dd><dd>in 1 kept frame</dd>' "$T/page" ||
  fail "the keyframe bytes card: $(grep -o '<dt>keyframe bytes</dt>.\{0,80\}' "$T/page")"
grep -q '<dt>word-timed cues</dt><dd class="n">0</dd><dd>with a time for each word</dd>' "$T/page" ||
  fail "the word-timed cues card: $(grep -o '<dt>word-timed.\{0,80\}' "$T/page")"
! grep -q 'word timings on' "$T/page" || fail "the old caption is still there"

note "the library filter: punctuation and hyphens fold as in search"
for q in 'held out' 'Held-out' 'HELD OUT' 'held%E2%80%94out' 'held,out' 'held  out talk'; do
  [[ $(curl -sf "$B/api/videos?q=$(sed 's/ /%20/g' <<< "$q")" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["total"], [v["id"] for v in d["videos"]])') == "1 ['$id']" ]] ||
    fail "/api/videos?q=$q: $(curl -s "$B/api/videos?q=$q")"
  curl -sf "$B/?q=$(sed 's/ /%20/g' <<< "$q")" > "$T/lib.html" || fail "/?q=$q"
  grep -q "href=\"/v/$id\"" "$T/lib.html" || fail "the library page does not find '$q'"
  ! grep -q 'Other' "$T/lib.html" || fail "the library page for '$q' lists the other video"
done
for q in 'out held' 'heldout' 'held%20outs'; do
  [[ $(curl -sf "$B/api/videos?q=$(sed 's/ /%20/g' <<< "$q")" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])') == 0 ]] ||
    fail "/api/videos?q=$q finds something"
done
echo "all good"
