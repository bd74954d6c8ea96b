#!/usr/bin/env bash
# One notion of a hit (issue 25 item 3): the video page opened from /search keeps the
# search's mode and filters in its URL, and its list of moments, seek-bar marks, strip marks
# and n/p keys are exactly that search's hits in this video, in /api/search's order. Two
# talks with subtitles (the test text model embeds them) are searched in hybrid and meaning
# mode; Chromium (tests/browser/hits.mjs), at desktop and phone sizes, follows a hit from
# /search and compares the page with /api/search's hits of that video. Without JavaScript:
# the links carry the mode and filters, the page refuses a mode or source it does not know
# (400, one line), and the mode changes the hits (a meaning search marks no word hit).
# Chromium talks to 127.0.0.1 only.
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"
command -v node > /dev/null || fail "node is missing: install nodejs (scripts/install-deps.sh)"
[[ -x /usr/bin/chromium ]] || fail "/usr/bin/chromium is missing: install Debian's chromium (scripts/install-deps.sh)"
[[ -d $ROOT/tests/browser/node_modules/playwright-core ]] ||
  fail "tests/browser/node_modules is missing: run bash scripts/setup.sh"
MODEL=$DATA/model2vec-test-vocab-quantized
[[ -f $MODEL/model.safetensors ]] || fail "no test model in $MODEL"

# talk NAME TITLE: 70 s of slides, its cues in NAME.srt (read as the transcript)
talk() {
  mkdir -p "$T/$1"
  ffmpeg -v error -y -f lavfi -i "color=white:s=640x360:d=70,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='$2':fontsize=36:x=40:y=60" \
    -f lavfi -i "anullsrc=r=16000:cl=mono" -t 70 -c:v libx264 -preset veryfast -pix_fmt yuv420p \
    -c:a aac -metadata title="$2" "$T/$1/talk.mp4"
}
talk a "Road trips"
cat > "$T/a/talk.srt" << 'SRT'
1
00:00:02,000 --> 00:00:06,000
Today we talk about the weather in the mountains.

2
00:00:12,000 --> 00:00:16,000
My automobile broke down on the highway last week.

3
00:00:22,000 --> 00:00:26,000
The banana and the apple are sweet fruits.

4
00:00:32,000 --> 00:00:36,000
We rented a car and drove the automobile to the coast.

5
00:00:42,000 --> 00:00:46,000
A truck and a bus passed us on the highway.

6
00:00:52,000 --> 00:00:56,000
The automobile needed new tyres and a new engine.

7
00:01:02,000 --> 00:01:06,000
Thank you all for listening.
SRT
talk b "Garden notes"
cat > "$T/b/talk.srt" << 'SRT'
1
00:00:03,000 --> 00:00:07,000
The garden is full of roses this spring.

2
00:00:13,000 --> 00:00:17,000
I drove my automobile to the garden centre.

3
00:00:23,000 --> 00:00:27,000
Vegetables like carrots and potatoes grow well here.

4
00:00:33,000 --> 00:00:37,000
An old car is parked behind the greenhouse.
SRT

vt init > /dev/null
vt config set text_embed.model "$MODEL"
a=$(vt add "$T/a/talk.mp4")
b=$(vt add "$T/b/talk.mp4")
for v in "$a" "$b"; do
  vt export "$v" > "$T/doc.json"
  [[ $(json "$T/doc.json" "len(d['cues'])") -ge 4 ]] || fail "$v has no transcript: $(json "$T/doc.json" "d['cues']")"
done

start_server --read-only
note "server on $B"
api() { curl -s --max-time 30 "$B/api/search?$1" > "$T/api.json" || fail "GET /api/search?$1 failed"; }

# the searches followed: each must have hits in talk a, and some of them in the other talk
for s in "q=automobile&mode=hybrid" "q=vehicle%20car%20traffic&mode=meaning"; do
  api "$s&limit=1000"
  n=$(json "$T/api.json" "len([h for h in d['hits'] if h['video_id'] == '$a'])")
  [[ $n -ge 2 ]] || fail "$s: $n hits in talk a (2 or more are needed): $(cat "$T/api.json")"
  note "$s: $n hits in talk a, $(json "$T/api.json" "len(d['hits'])") in all"
done

note "without JavaScript: the hit links carry the mode and the filters"
curl -s "$B/search?q=automobile&mode=meaning&source=speech" > "$T/search.html"
grep -qF "/v/$a?t=" "$T/search.html" || fail "no hit link to talk a on /search"
link=$(grep -o "href=\"/v/$a?t=[^\"]*\"" "$T/search.html" | head -n 1)
[[ $link == *"&amp;q=automobile&amp;mode=meaning&amp;source=speech"* ]] ||
  fail "the hit link does not keep the mode and source: $link"
# a meaning search marks no word: its hits are by meaning, not the word's cues
curl -s "$B/v/$a?q=automobile&mode=words" > "$T/words.html"
curl -s "$B/v/$a?q=vehicle%20car%20traffic&mode=meaning" > "$T/meaning.html"
api "q=vehicle%20car%20traffic&mode=meaning&limit=1000"
want=$(json "$T/api.json" "len([h for h in d['hits'] if h['video_id'] == '$a'])")
got=$(grep -o '<li><a class="hit"' "$T/meaning.html" | wc -l)
[[ $got == "$want" ]] || fail "the meaning search lists $got moments in talk a, the API $want"
grep -qF '(by meaning)' "$T/meaning.html" || fail "the page does not say the search was by meaning"
api "q=automobile&mode=words&limit=1000"
want=$(json "$T/api.json" "len([h for h in d['hits'] if h['video_id'] == '$a'])")
got=$(grep -o '<li><a class="hit"' "$T/words.html" | wc -l)
[[ $got == "$want" ]] || fail "the word search lists $got moments in talk a, the API $want"
# the page's own search box keeps the mode
grep -qF '<input type="hidden" name="mode" value="meaning">' "$T/meaning.html" ||
  fail "the video's search box drops the mode"
for bad in "mode=fuzzy" "source=smell" "video=..%2Fx"; do
  code=$(curl -s -o "$T/bad.html" -w '%{http_code}' "$B/v/$a?q=automobile&$bad")
  [[ $code == 400 ]] || fail "/v/$a?q=automobile&$bad gave $code, want 400"
done

shots=$ROOT/tests/out/screenshots
mkdir -p "$shots"
rc=0
timeout 180 node "$ROOT/tests/browser/hits.mjs" "$B" "$a" "$shots" || rc=$?
kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the browser test: $(cat "$T/srv.err")"
[[ $rc == 0 ]] || fail "browser test exited $rc (server stderr: $(head -c 500 "$T/srv.err"))"
echo "all good"
