#!/usr/bin/env bash
# The video page /v/ID (issue 13): over HTTP, then in a real browser (Debian's Chromium
# driven by playwright-core, tests/browser/video.mjs). Fixtures: a 12 s talk with three
# slides ("Welcome Overview", then two that say "Harbor", cuts at 4 s and 8 s) and read
# speech (a LibriVox clip from pocketsphinx-testdata mixed in at 2 s); a short clip whose
# sidecar SubRip file holds markup-like text ("<", "&"); a URL video whose fetch failed
# (an info JSON with no usable format: its page URL is known, nothing else); one still
# waiting to be fetched (a live stream). HTTP: /api/videos/ID/captions.vtt (type, escaping,
# 404), /api/videos/ID/state, no meta refresh, the failed video's page. Browser: seeking
# without moving the page, the transcript following playback, a hit's arrival and n/p,
# keys, captions, the strip, the state polled in place, axe-core, screenshots at 1366x900
# and 390x844 in tests/out/screenshots/. Everything talks to 127.0.0.1 only.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"
command -v node > /dev/null || fail "node is missing: install nodejs (scripts/install-deps.sh)"
command -v yt-dlp > /dev/null || fail "yt-dlp is not installed (scripts/install-deps.sh)"
[[ -x /usr/bin/chromium ]] || fail "/usr/bin/chromium is missing: install Debian's chromium (scripts/install-deps.sh)"
[[ -d $ROOT/tests/browser/node_modules/playwright-core ]] ||
  fail "tests/browser/node_modules is missing: run bash scripts/setup.sh"
lv=/usr/share/pocketsphinx/test/data/librivox
[[ -f $lv/sense_and_sensibility_01_austen_64kb-0870.wav ]] || fail "pocketsphinx-testdata is missing"
export VIDTHEQUE_RETRY_BASE=0.3

# req STATUS URL [CURL ARGS...]: body in $T/body, headers in $T/hdr
req() {
  local want=$1 url=$2; shift 2
  local got
  got=$(curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" "$url") || true
  [[ $got == "$want" ]] || fail "GET $url: $got, expected $want: $(head -c 300 "$T/body")"
}
hdr() { sed -n "s/^$1: *//Ip" "$T/hdr" | tr -d '\r' | head -1; }

font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
ffmpeg -v error -y -f lavfi -i "color=white:s=640x360:d=12,drawtext=fontfile=$font:text='Welcome Overview':fontsize=40:x=40:y=60:enable='lt(t,4)',drawtext=fontfile=$font:text='Quarterly Harbor Results':fontsize=40:x=40:y=140:enable='between(t,4,8)',drawtext=fontfile=$font:text='Harbor Lights Tomorrow':fontsize=40:x=40:y=240:enable='gte(t,8)'" \
  -i "$lv/sense_and_sensibility_01_austen_64kb-0870.wav" \
  -filter_complex "[1:a]adelay=2000|2000,apad[a]" -map 0:v -map '[a]' \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -ar 44100 -t 12 \
  -metadata title="Video page talk" "$T/talk.mp4"
expect_exit 0 vt add "$T/talk.mp4"
id=$(cat "$T/out")
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "len(d['cues']) >= 2 and len(d['shots']) >= 3") == True ]] ||
  fail "the talk wants 2 cues and 3 shots: $(json "$T/doc.json" "(d['cues'], d['shots'])")"
"$VIDTHEQUE" -L "$LIB" search --json "harbor video:$id" > "$T/hits.json"
[[ $(json "$T/hits.json" "len(d['hits']) >= 2") == True ]] ||
  fail "'harbor' should be found on two slides: $(cat "$T/hits.json")"
# a word said in the last cue, of at least 5 letters, to arrive at it from a search
word=$(json "$T/doc.json" "max(__import__('re').findall('[a-z]{5,}', d['cues'][-1]['text'].lower()), key=len)")
"$VIDTHEQUE" -L "$LIB" search --json "$word video:$id source:speech" > "$T/said.json"
[[ $(json "$T/said.json" "len(d['hits']) >= 1") == True ]] || fail "'$word' is not found: $(cat "$T/said.json")"
note "talk $id: $(json "$T/doc.json" "len(d['cues'])") cues, harbor at $(json "$T/hits.json" "[h['start_s'] for h in d['hits']]"), '$word' said at $(json "$T/said.json" "d['hits'][0]['start_s']") s"

ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=3" -f lavfi -i "sine=d=3" -c:v libx264 \
  -preset veryfast -pix_fmt yuv420p -c:a aac -shortest "$T/cap.mp4"
printf '1\n00:00:00,500 --> 00:00:02,000\nif a < b & c > d then "x"\n\n' > "$T/cap.srt"
expect_exit 0 vt add "$T/cap.mp4"
cap=$(cat "$T/out")

# an info JSON like yt-dlp's: no usable format (fails at once), and a live stream (waits)
info() { # info ID: the JSON, its one format a file:// one
  cat << EOF
{"id": "$1", "title": "Failed <b>talk</b> & co", "channel": "AI Engineer", "duration": 8.0,
 "webpage_url": "https://www.youtube.com/watch?v=$1", "extractor": "youtube",
 "extractor_key": "Youtube", "_type": "video",
 "formats": [{"format_id": "bad", "url": "file:///etc/passwd", "ext": "mp4", "protocol": "file",
              "vcodec": "avc1", "acodec": "mp4a", "width": 640, "height": 360}]}
EOF
}
info nofmt01 > "$T/nofmt.json"
expect_exit 1 vt add --info-json "$T/nofmt.json"
info live01 | python3 -c 'import json,sys; d=json.load(sys.stdin); d["is_live"]=True; print(json.dumps(d))' > "$T/live.json"
expect_exit 1 vt add --info-json "$T/live.json"
[[ $(vt ls | grep '^live01' | cut -f4) == queued ]] || fail "the live stream should wait: $(vt ls)"

start_server --read-only
note "server on $B"

note "captions: the transcript as WebVTT"
req 200 "$B/api/videos/$cap/captions.vtt"
[[ $(hdr Content-Type) == text/vtt* ]] || fail "captions type: $(hdr Content-Type)"
head -1 "$T/body" | grep -q '^WEBVTT' || fail "no WEBVTT signature: $(head -3 "$T/body")"
grep -qF 'if a &lt; b &amp; c &gt; d then "x"' "$T/body" || fail "cue text not escaped: $(cat "$T/body")"
grep -q '00:00:00.500 --> 00:00:02.000' "$T/body" || fail "cue timing: $(cat "$T/body")"
expect_exit 0 vt export "$cap" --format vtt
cmp -s "$T/out" "$T/body" || fail "captions.vtt differs from 'export --format vtt'"
req 200 "$B/api/videos/$id/captions.vtt"
[[ $(grep -c -- '-->' "$T/body") == $(json "$T/doc.json" "len(d['cues'])") ]] || fail "one cue per transcript cue"
for u in /api/videos/nosuchvideo/captions.vtt '/api/videos/..%2f/captions.vtt' /api/videos/nosuchvideo/state; do
  req 404 "$B$u"
  [[ $(hdr Content-Type) == application/json* ]] || fail "$u: an error is JSON"
done
req 200 "$B/v/$cap"
grep -qF 'if a &lt; b &amp; c &gt; d then &quot;x&quot;' "$T/body" || fail "cue text not escaped on the page"
grep -qF "<track kind=\"captions\" default label=\"Transcript\" src=\"/api/videos/$cap/captions.vtt\"" "$T/body" ||
  fail "no captions track: $(grep -o '<video[^>]*>.*</video>' "$T/body")"

note "hits of ?q= on the page, without JavaScript"
req 200 "$B/v/$id?t=4&q=harbor"
n=$(json "$T/hits.json" "len(d['hits'])")
[[ $(grep -o 'class="hit"' "$T/body" | wc -l) == $((3 * n)) ]] ||
  fail "each of the $n hits should be listed, on the seek bar and on the strip"
grep -qF "$n moments for “harbor”" "$T/body" || fail "no count of the moments"
grep -q '<mark>Harbor</mark>' "$T/body" || fail "'Harbor' is not marked in the frames"
req 200 "$B/v/$id?q=%3Cscript%3Ex%01%02"
grep -qF 'value="&lt;script&gt;x  "' "$T/body" || fail "the query is not escaped in the box"
! grep -q '<script>x' "$T/body" || fail "the query came through unescaped"
grep -qF 'Nothing in this video matches' "$T/body" || fail "no word for a query that matches nothing"
req 200 "$B/v/$id?q=$(head -c 3000 /dev/zero | tr '\0' a)"
grep -qF "That query is too long" "$T/body" || fail "no word for a query over 1000 bytes"

note "the failed URL video: its reason, its source page, nothing that does not exist"
req 200 "$B/v/nofmt01"
grep -qF 'Failed' "$T/body" || fail "the page does not say it failed"
grep -qF 'The fetch stage failed: no usable format' "$T/body" || fail "the failure's reason is missing"
grep -qF 'href="https://www.youtube.com/watch?v=nofmt01&amp;t=0s">Open on YouTube' "$T/body" ||
  fail "no link to the source page"
grep -qF 'Failed &lt;b&gt;talk&lt;/b&gt; &amp; co' "$T/body" || fail "title not escaped"
for bad in ' indexed ' '0:00:00' '<video' 'id="frames"' 'Open at this second' 'id="timeline"' 'http-equiv'; do
  ! grep -qF "$bad" "$T/body" || fail "the failed video's page shows '$bad'"
done

note "a video still waiting: no meta refresh (it would stop the player), a state to poll"
req 200 "$B/v/live01"
! grep -q 'http-equiv="refresh"' "$T/body" || fail "the video page refreshes itself"
grep -qF 'data-state="/api/videos/live01/state"' "$T/body" || fail "no state to poll"
grep -qF '<a href="/v/live01">Reload</a>' "$T/body" || fail "no reload link without JavaScript"
req 200 "$B/api/videos/live01/state"
[[ $(json "$T/body" "(d['index_state'], d['stages'] > 0, d['state_words'])") == "('queued', True, 'Waiting to be indexed')" ]] ||
  fail "state: $(cat "$T/body")"
req 200 "$B/v/$id"
! grep -q 'id="progress"' "$T/body" || fail "a ready video has a progress notice"

shots=$ROOT/tests/out/screenshots
mkdir -p "$shots"
rc=0
VT_LIBRARY="$LIB" timeout 180 node "$ROOT/tests/browser/video.mjs" "$B" "$id" "$shots" "$T/hits.json" \
  "$T/said.json" "$word" live01 || rc=$?
kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the browser test: $(cat "$T/srv.err")"
[[ $rc == 0 ]] || fail "browser test exited $rc (server stderr: $(head -c 500 "$T/srv.err"))"
for f in video-page-wide video-page-phone; do
  [[ -s $shots/$f.png ]] || fail "no screenshot $shots/$f.png"
done
echo "all good"
