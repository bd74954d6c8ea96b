#!/usr/bin/env bash
# Nothing a video holds makes a page, an answer or the server unbounded (issue 9, item 6):
# captions are bounded by the media (cues past its end dropped, at most 120 starting in any
# minute, the counts in the stt stage's model); the video page and /api/videos/ID hold one
# page of each long list, the rest a link away; the library page reads what it shows, not
# whole documents. A library indexed before the bounds (150,000 cues in a 5 s video) is
# served in pages too.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"

# srt_ts SECONDS (in python below): SubRip times, hours unbounded (99,999 h is valid)
python3 - "$T" << 'EOF'
import sys
d = sys.argv[1]
def ts(t):
    ms = int(round(t * 1000)); h, ms = divmod(ms, 3600000); m, ms = divmod(ms, 60000)
    s, ms = divmod(ms, 1000)
    return "%02d:%02d:%02d,%03d" % (h, m, s, ms)
# embedded: 2,400 cues in the first 4.8 s (2 ms each), then 147,600 one a second from 10 s
with open(d + "/stream.srt", "w") as f:
    n = 0
    for i in range(2400):
        n += 1; t = i * 0.002
        f.write("%d\n%s --> %s\nburst cue %d\n\n" % (n, ts(t), ts(t + 0.002), i))
    for i in range(147600):
        n += 1; t = 10 + i
        f.write("%d\n%s --> %s\nlate cue %d\n\n" % (n, ts(t), ts(t + 1), i))
# sidecar: 3 cues in the video, then 149,999 up to 99,998 hours in
with open(d + "/far.srt", "w") as f:
    n = 0
    for i in range(3):
        n += 1; f.write("%d\n%s --> %s\nearly cue %d\n\n" % (n, ts(i), ts(i + 1.5), i))
    for i in range(1, 150000):
        n += 1; t = i * 2399.97
        f.write("%d\n%s --> %s\nfar away cue number %d\n\n" % (n, ts(t), ts(t + 2), i))
EOF
gen_clip "$T/a.mp4" 5 'Burst'
ffmpeg -v error -y -i "$T/a.mp4" -i "$T/stream.srt" -map 0 -map 1 -c copy -c:s mov_text "$T/burst.mp4"
gen_clip "$T/far.mp4" 5 'Far away'
note "burst.mp4 $(stat -c %s "$T/burst.mp4") bytes, far.srt $(stat -c %s "$T/far.srt") bytes"

# ---- the stt stage bounds both ----
expect_exit 0 vt add "$T/burst.mp4" "$T/far.mp4"
{ read -r burst; read -r far; } < "$T/out"
[[ -n $burst && -n $far ]] || fail "add printed no ids: $(cat "$T/out")"
vt export "$burst" > "$T/burst.json"
vt export "$far" > "$T/far.json"
stt_model() { json "$1" "[s['model'] for s in d['stages'] if s['name'] == 'stt'][0]"; }
m=$(stt_model "$T/burst.json")
[[ $m == 'captions:embedded mov_text; dropped 147600 cue(s) past the end, 2280 over 120 a minute'* ]] ||
  fail "embedded captions: stt model '$m'"
[[ $(json "$T/burst.json" "d['stored']['cues']") == 120 ]] ||
  fail "embedded captions: $(json "$T/burst.json" "d['stored']['cues']") cues kept, expected 120"
[[ $(json "$T/burst.json" "all(c['start_s'] < 5 and c['end_s'] <= 5.1 for c in d['cues'])") == True ]] ||
  fail "embedded captions: a cue outside the video was kept"
m=$(stt_model "$T/far.json")
[[ $m == 'captions:sidecar srt; dropped 149999 cue(s) past the end, 0 over 120 a minute'* ]] ||
  fail "sidecar: stt model '$m'"
[[ $(json "$T/far.json" "[c['text'] for c in d['cues']]") == "['early cue 0', 'early cue 1', 'early cue 2']" ]] ||
  fail "sidecar: cues $(json "$T/far.json" "[c['text'] for c in d['cues']]")"
[[ $(json "$T/far.json" "d['cues'][-1]['end_s'] <= 5.1") == True ]] || fail "sidecar: last cue not cut to the end"
# the warning is said when the stage runs (not silenced like progress)
"$VIDTHEQUE" -L "$LIB" redo "$far" --stage stt > /dev/null 2> "$T/redo.err"
grep -q "149999 cue(s) start past the media's end" "$T/redo.err" ||
  fail "no warning about dropped cues: $(cat "$T/redo.err")"
note "embedded: 120 of 150,000 cues kept; sidecar: 3 of 150,002"

# captions with no cue inside the media are no captions: auto recognises the speech,
# --stt=captions says why there is no transcript
gen_clip "$T/none.mp4" 5 'Nothing inside'
printf '1\n10:00:00,000 --> 10:00:02,000\nlong after\n\n2\n99999:00:00,000 --> 99999:00:01,000\nlater still\n' > "$T/none.srt"
"$VIDTHEQUE" -L "$LIB" add "$T/none.mp4" > "$T/none.id" 2> "$T/none.err" || fail "add none.mp4: $(tail -3 "$T/none.err")"
grep -q "no caption cue starts within the media's 5.0 s (2 past its end): recognising the speech" "$T/none.err" ||
  fail "no warning before recognising: $(grep -i stt "$T/none.err")"
vt export "$(cat "$T/none.id")" > "$T/none.json"
[[ $(stt_model "$T/none.json") == pocketsphinx* ]] || fail "auto with captions all outside: stt model '$(stt_model "$T/none.json")'"
gen_clip "$T/none2.mp4" 5 'Nothing inside either'
cp "$T/none.srt" "$T/none2.srt"
vt add --stt=captions "$T/none2.mp4" > "$T/none2.id" 2> /dev/null || true
vt export "$(cat "$T/none2.id")" > "$T/none2.json"
[[ $(json "$T/none2.json" "[s['state'] in ('skipped', 'failed') and s['error'] == 'no cues within the media\\'s 5.0 s' for s in d['stages'] if s['name'] == 'stt'][0]") == True ]] ||
  fail "--stt=captions with captions all outside: $(json "$T/none2.json" "[s for s in d['stages'] if s['name'] == 'stt']")"
note "captions all outside the media: auto recognises, --stt=captions says why"

# ---- a library indexed before the bounds: 150,000 cues with words, 450 frames ----
python3 - "$LIB/library.db" "$burst" << 'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); vid = sys.argv[2]
db.execute("DELETE FROM cues WHERE video_id = ?", (vid,))
db.execute("DELETE FROM words WHERE video_id = ?", (vid,))
db.executemany("INSERT INTO cues (video_id, idx, start_s, end_s, text) VALUES (?,?,?,?,?)",
               ((vid, i, i * 3.2e-5, i * 3.2e-5 + 1, "legacy cue %d of many" % i)
                for i in range(150000)))
db.executemany("INSERT INTO words (video_id, cue_idx, idx, text, start_s, end_s, conf)"
               " VALUES (?,?,?,?,?,?,?)",
               ((vid, i, k, w, 0, 1, 1) for i in range(150000)
                for k, w in enumerate(("legacy", "cue", str(i)))))
# more frames (duplicates of frame 0, as the keyframe stage records them)
n = db.execute("SELECT count(*) FROM frames WHERE video_id = ?", (vid,)).fetchone()[0]
row = db.execute("SELECT t_s, frame_no, shot, sharpness, bytes, width, height, phash FROM frames"
                 " WHERE video_id = ? AND idx = 0", (vid,)).fetchone()
db.executemany("INSERT INTO frames (video_id, idx, t_s, frame_no, shot, duplicate_of, sharpness,"
               " bytes, path, width, height, phash) VALUES (?,?,?,?,?,0,?,?,NULL,?,?,?)",
               ((vid, i) + row for i in range(n, 450)))
db.commit()
EOF

start_server
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SRV_PID/status"; }
get() { curl -s -o "$T/body" -w '%{http_code} %{size_download} %{time_total}\n' "$@"; }

# the library page first, on a fresh server: it must not load the 150,000 cues
read -r code bytes secs < <(get "$B/")
[[ $code == 200 ]] || fail "/ gave $code"
grep -q "/api/videos/$burst/frames/0.jpg" "$T/body" || fail "library page lost the thumbnail"
kb=$(hwm)
note "library page: $bytes bytes in $secs s, server peak $((kb / 1024)) MB"
((kb < 120 * 1024)) || fail "the library page took the server to $((kb / 1024)) MB: it reads documents"
python3 -c "import sys; sys.exit(float(sys.argv[1]) >= 3)" "$secs" ||
  fail "the library page took $secs s"

# the video page: one page of each list
read -r code bytes secs < <(get "$B/v/$burst")
[[ $code == 200 ]] || fail "/v/ID gave $code"
note "/v/ID: $bytes bytes in $secs s"
((bytes < 300 * 1024)) || fail "/v/ID is $bytes bytes"
for h in '150,000 cues · this page: cues 1–250' 'page 1 of 600' "/v/$burst?frames=1&amp;cues=2#transcript" \
         'page 1 of 5' "/v/$burst?frames=2&amp;cues=1#frames" 'legacy cue 249 of many'; do
  grep -qF "$h" "$T/body" || fail "/v/ID lacks '$h'"
done
grep -qF 'legacy cue 250 of many' "$T/body" && fail "/v/ID shows cues of the second page"
read -r code bytes secs < <(get "$B/v/$burst?cues=600&frames=5")
[[ $code == 200 ]] || fail "/v/ID?cues=600 gave $code"
for h in 'cues 149,751–150,000' 'legacy cue 149999 of many' 'page 600 of 600' 'page 5 of 5' 'id="frame-449"'; do
  grep -qF "$h" "$T/body" || fail "/v/ID?cues=600&frames=5 lacks '$h'"
done
grep -qF 'rel="next"' "$T/body" && fail "the last page links to a next one"
# opened at a moment (a search hit's link): the transcript page that holds it
read -r code bytes secs < <(get "$B/v/$burst?t=2.4999")
grep -qF 'page 313 of 600' "$T/body" || fail "/v/ID?t=2.4999 is not on the page of cue 78121"
grep -qF 'legacy cue 78121 of many' "$T/body" || fail "/v/ID?t=2.4999 lacks its cue"
for bad in 0 -1 01 x 99999999 1.5; do
  [[ $(get "$B/v/$burst?cues=$bad" | cut -d' ' -f1) == 400 ]] || fail "cues=$bad is not 400"
done

# the API: a first page, then the rest page by page
read -r code bytes secs < <(get "$B/api/videos/$burst")
[[ $code == 200 ]] || fail "/api/videos/ID gave $code"
note "/api/videos/ID: $bytes bytes in $secs s"
((bytes < 1024 * 1024)) || fail "/api/videos/ID is $bytes bytes"
[[ $(json "$T/body" "(len(d['cues']), d['pages']['cues'], len(d['frames']), d['pages']['frames']['total'], d['stored']['cues'])") == \
  "(500, {'offset': 0, 'count': 500, 'total': 150000}, 200, 450, 150000)" ]] ||
  fail "/api/videos/ID pages: $(json "$T/body" "d.get('pages')")"
read -r code bytes secs < <(get "$B/api/videos/$burst/cues?offset=149990&limit=500")
[[ $code == 200 ]] || fail "/api/videos/ID/cues gave $code"
[[ $(json "$T/body" "(d['total'], d['offset'], len(d['cues']), d['cues'][0]['index'], d['cues'][0]['words'][2]['text'], d['next'])") == \
  "(150000, 149990, 10, 149990, '149990', None)" ]] || fail "last cues page: $(head -c 300 "$T/body")"
read -r code bytes secs < <(get "$B/api/videos/$burst/cues?offset=1000&limit=2")
[[ $(json "$T/body" "([c['text'] for c in d['cues']], d['next'])") == \
  "(['legacy cue 1000 of many', 'legacy cue 1001 of many'], '/api/videos/$burst/cues?offset=1002&limit=2')" ]] ||
  fail "cues page: $(head -c 300 "$T/body")"
read -r code bytes secs < <(get "$B/api/videos/$burst/frames?offset=440")
[[ $(json "$T/body" "(d['total'], [f['index'] for f in d['frames']][:2], len(d['frames']))") == "(450, [440, 441], 10)" ]] ||
  fail "frames page: $(head -c 300 "$T/body")"
for q in 'limit=0' 'limit=501' 'offset=-1' 'offset=x' 'limit=1e3'; do
  [[ $(get "$B/api/videos/$burst/cues?$q" | cut -d' ' -f1) == 400 ]] || fail "cues?$q is not 400"
done
[[ $(get "$B/api/videos/nosuch/cues" | cut -d' ' -f1) == 404 ]] || fail "cues of no video is not 404"
[[ $(get "$B/api/videos/$burst/words" | cut -d' ' -f1) == 404 ]] || fail "an unknown list is not 404"
# a small video's document is still exactly the export
get "$B/api/videos/$far" > /dev/null
vt export "$far" > "$T/far.json"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
  "$T/body" "$T/far.json" || fail "/api/videos/ID of a small video is not its export"
# frames and media are found without the document's lists
[[ $(get "$B/api/videos/$burst/frames/0.jpg" | cut -d' ' -f1) == 200 ]] || fail "frame 0.jpg"
[[ $(get "$B/api/videos/$burst/frames/449.jpg" | cut -d' ' -f1) == 404 ]] || fail "a duplicate's image"
[[ $(get -r 0-9 "$B/media/$burst" | cut -d' ' -f1) == 206 ]] || fail "media range"
# search: thumbnails without documents
get "$B/search?q=legacy" > /dev/null
get "$B/search?q=early" > /dev/null
grep -q "/api/videos/$far/frames/0.jpg" "$T/body" || fail "search hit lacks its thumbnail"

kb=$(hwm)
note "server peak after every page: $((kb / 1024)) MB"
((kb < 300 * 1024)) || fail "the server peaked at $((kb / 1024)) MB"
echo "all good"
