#!/usr/bin/env bash
# The two list pages, the library (/) and search (/search), over HTTP and in a browser
# (tests/browser/lists.mjs). Fixtures whose truth is known: two 40 s clips with a cut to a
# slide "Harbor Banana" at 2.367 s (frame 71 at 30 fps, so a link floored to whole seconds
# lands in the shot before), and sidecar captions of identical cues "banana bread again"
# (18 and 12 of them, 1.5 s apart: every cue scores the same, so the order of ties shows),
# the second clip titled with "banana" (a title hit); then five more tiny clips for the
# library's pages. Checks that the bugs of issue 13 stay fixed:
#   - a hit's link never lands before its moment (?t= in milliseconds rounded up) and its
#     picture is the frame the hit came from;
#   - the search page's pages, read one after another, are exactly /api/search?limit=1000
#     in the same order (score, then video, then time), the count is the true total and
#     the title hit is on a page (each hit's data-rank gives that order back: a page
#     has one heading per video, its moments under it); the CLI gives the same order;
#   - the library page is a page of cards from one listing (?per=, ?page=, ?q=, ?sort=),
#     an empty library says how to add a video, /api/videos?state=processing lists only
#     videos being indexed with their progress.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"

# get URL [WANT]: body in $T/body, fails unless the status is WANT (200)
get() {
  local got
  got=$(curl -s --path-as-is -o "$T/body" -w '%{http_code}' "$1") || true
  [[ $got == "${2:-200}" ]] || fail "GET $1 gave $got, expected ${2:-200}: $(head -c 300 "$T/body")"
}

# ---- an empty library first: the page says how to add a video ----
expect_exit 0 vt init
start_server --read-only
get "$B/"
grep -q 'The library is empty' "$T/body" || fail "empty library: no message"
grep -q 'vidtheque add FILE' "$T/body" || fail "empty library: does not say how to add a video"
get "$B/api/videos"
[[ $(json "$T/body" "d == {'videos': [], 'total': 0}") == True ]] || fail "empty /api/videos: $(cat "$T/body")"
stop_server

# ---- the fixtures ----
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
clip() { # clip OUT TITLE CUES
  ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=40:r=30,drawbox=c=navy:t=fill:enable='gte(t,2.35)',drawtext=fontfile=$font:text='Harbor Banana':fontsize=32:fontcolor=white:x=20:y=60:enable='gte(t,2.35)'" \
    -f lavfi -i "anullsrc=r=16000:cl=mono" -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac \
    -t 40 -metadata "title=$2" "$1"
  python3 - "${1%.mp4}.vtt" "$3" << 'PY'
import sys
def ts(t):
    ms = int(round(t * 1000)); h, ms = divmod(ms, 3600000); m, ms = divmod(ms, 60000); s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"
with open(sys.argv[1], 'w') as f:
    f.write('WEBVTT\n\n')
    for i in range(int(sys.argv[2])):
        t = 10 + i * 1.5
        f.write(f"{ts(t)} --> {ts(t + 0.5)}\nbanana bread again\n\n")
PY
}
clip "$T/a.mp4" "Lists talk one" 18
clip "$T/b.mp4" "Second banana talk" 12
expect_exit 0 vt add "$T/a.mp4"
A=$(cat "$T/out")
expect_exit 0 vt add "$T/b.mp4"
VB=$(cat "$T/out")
extra=()
for i in 1 2 3 4 5; do
  ffmpeg -v error -y -f lavfi -i "color=gray:s=160x90:d=1:r=10" -c:v libx264 -preset veryfast \
    -pix_fmt yuv420p -metadata "title=Tiny clip $i" "$T/tiny$i.mp4"
  extra+=("$T/tiny$i.mp4")
done
expect_exit 0 vt add "${extra[@]}"
[[ $(vt ls | grep -c ready) == 7 ]] || fail "expected 7 ready videos: $(vt ls)"
vt export "$A" > "$T/a.json"
cut_s=$(json "$T/a.json" "[s['start_s'] for s in d['shots'] if 2.3 < s['start_s'] < 2.4][0]")
note "videos $A and $VB; the slide's shot starts at $cut_s s"

start_server --read-only

# ---- search: hit links land within their moment, pictures are the hit's own frame ----
# check_hits FILE.html API.json: every hit of the page against the API's hits
check_hits() {
  python3 - "$1" "$2" "$T" << 'PY' || fail "hits of $1: see above"
import html, json, re, sys, os
page = open(sys.argv[1]).read()
api = {(h['video_id'], round(h['start_s'], 3)): h for h in json.load(open(sys.argv[2]))['hits']}
docs = {}
def kept(vid, ref):
    if vid not in docs:
        docs[vid] = json.loads(os.popen(f"\"$VIDTHEQUE\" -q -L {sys.argv[3]}/lib export {vid}".replace('$VIDTHEQUE', os.environ['VIDTHEQUE'])).read())
    f = [x for x in docs[vid]['frames'] if x['index'] == ref][0]
    return f['duplicate_of'] if f.get('duplicate_of') is not None else ref
bad = 0
items = re.findall(r'<li class="hit" data-video="([^"]+)" data-rank="\d+" data-start="([^"]+)" data-frame="(-?\d+)">(.*?)</li>', page, re.S)
if not items:
    print('no hits on the page'); sys.exit(1)
for vid, start, frame, body in items:
    ts = [float(t) for t in re.findall(r'href="/v/%s\?t=([0-9.]+)&amp;q=' % re.escape(vid), body)]
    match = [h for (v, s), h in api.items() if v == vid and 0 <= float(start) - s < 0.0015]
    if len(ts) != 2 or len(match) != 1:
        print(f'hit {vid} {start}: links {ts}, api matches {len(match)}'); bad = 1; continue
    h = match[0]
    for t in ts:
        # start_s is rounded to the millisecond, the link rounded up: within [-0.5, 1.5) ms
        if not -0.0005 <= t - h['start_s'] < 0.0015:
            print(f'hit {vid} {h["start_s"]}: link ?t={t} is not at the moment'); bad = 1
    want = kept(vid, h['ref']) if h['source'] == 'screen' else None
    if want is not None and int(frame) != want:
        print(f'hit {vid} {h["start_s"]} ({h["source"]} ref {h["ref"]}): picture frame {frame}, want {want}'); bad = 1
    if int(frame) >= 0 and f'/frames/{frame}.jpg' not in body:
        print(f'hit {vid} {start}: img is not frame {frame}'); bad = 1
sys.exit(bad)
PY
}
get "$B/api/search?q=harbor&limit=1000"
cp "$T/body" "$T/harbor.json"
get "$B/search?q=harbor"
cp "$T/body" "$T/harbor.html"
check_hits "$T/harbor.html" "$T/harbor.json"
grep -qF "href=\"/v/$A?t=2.367&amp;q=harbor\"" "$T/harbor.html" ||
  fail "the slide hit at $cut_s s is not linked as ?t=2.367: $(grep -o "/v/$A?t=[0-9.]*" "$T/harbor.html" | head -3)"
grep -qF "href=\"/v/$A?t=2&" "$T/harbor.html" && fail "a hit links to ?t=2, before the slide at $cut_s s"
grep -q "data-frame=\"-1\"" "$T/harbor.html" && fail "a screen hit has no picture"
note "harbor: links at ?t=2.367 (the shot starts at $cut_s s), pictures are the hits' frames"

# ---- search: pages in one stable order, a true total, the title hit ----
get "$B/api/search?q=banana&limit=1000"
cp "$T/body" "$T/banana.json"
n=$(json "$T/banana.json" "len(d['hits'])")
(( n >= 30 )) || fail "banana: $n hits, expected the 30 cues and more"
[[ $(json "$T/banana.json" "any(h['source'] == 'title' and h['video_id'] == '$VB' for h in d['hits'])") == True ]] ||
  fail "banana: no title hit in the API"
# ties: hits of the same score are in video order, then time order
python3 - "$T/banana.json" << 'PY' || fail "banana: ties are not ordered by video, then time"
import json, sys
h = json.load(open(sys.argv[1]))['hits']
ok = all((a['score'] > b['score']) or (a['score'] == b['score'] and (a['video_id'], a['start_s']) < (b['video_id'], b['start_s']))
         for a, b in zip(h, h[1:]))
ties = sum(a['score'] == b['score'] for a, b in zip(h, h[1:]))
print(f"# {len(h)} hits, {ties} ties"); sys.exit(0 if ok and ties >= 20 else 1)
PY
"$VIDTHEQUE" -q -L "$LIB" search --json --limit 1000 banana > "$T/cli.json"
[[ $(python3 -c 'import json,sys; f=lambda p: [(h["video_id"], h["start_s"], h["source"]) for h in json.load(open(p))["hits"]]; print(f(sys.argv[1]) == f(sys.argv[2]))' "$T/cli.json" "$T/banana.json") == True ]] ||
  fail "the CLI and /api/search order the hits differently"
get "$B/api/search?q=banana&offset=20&limit=10"
[[ $(python3 -c 'import json,sys; f=lambda p: [(h["video_id"], h["start_s"]) for h in json.load(open(p))["hits"]]; print(f(sys.argv[1]) == f(sys.argv[2])[20:30])' "$T/body" "$T/banana.json") == True ]] ||
  fail "/api/search?offset=20&limit=10 is not hits 20 to 29 of the whole list"
get "$B/api/search?q=banana&offset=1000" 400
pages=$(( (n + 19) / 20 ))
: > "$T/paged.txt"
for p in $(seq 1 "$pages"); do
  get "$B/search?q=banana&page=$p"
  cp "$T/body" "$T/banana$p.html"
  grep -q "data-total=\"$n\" data-exact=\"1\"" "$T/body" || fail "page $p does not say the true total $n: $(grep -o '<p class="count".*</p>' "$T/body")"
  grep -q "$n moments in 2 videos" "$T/body" || fail "page $p: count line: $(grep -o '<p class="count".*</p>' "$T/body")"
  grep -q "Page $p of $pages" "$T/body" || fail "page $p: no 'Page $p of $pages'"
  check_hits "$T/body" "$T/banana.json"
  grep -o '<li class="hit" data-video="[^"]*" data-rank="[^"]*" data-start="[^"]*"' "$T/body" |
    sed 's/.*data-video="\([^"]*\)" data-rank="\([^"]*\)" data-start="\([^"]*\)"/\2 \1 \3/' >> "$T/paged.txt"
  # one heading per video on a page, its moments under it
  python3 - "$T/body" << 'PY' || fail "page $p repeats a video's heading"
import re, sys
page = open(sys.argv[1]).read()
heads = re.findall(r'<section class="group"><h2><a href="/v/([^"?]+)[^"]*">', page)
sections = re.findall(r'<section class="group">(.*?)</section>', page, re.S)
ok = len(heads) == len(set(heads)) and len(sections) == len(heads) and all(
    set(re.findall(r'<li class="hit" data-video="([^"]+)"', body)) == {v} for v, body in zip(heads, sections))
sys.exit(0 if ok else 1)
PY
done
python3 - "$T/banana.json" "$T/paged.txt" << 'PY' || fail "the pages, one after another, are not the API's hits in its order"
import json, math, sys
api = [(h['video_id'], h['start_s']) for h in json.load(open(sys.argv[1]))['hits']]
# each hit carries its rank in the search (data-rank): a page groups its hits by video
rows = sorted((l.split() for l in open(sys.argv[2])), key=lambda r: int(r[0]))
paged = [(r[1], float(r[2])) for r in rows]
ok = [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
ok = ok and len(api) == len(paged) and all(a[0] == b[0] and 0 <= b[1] - a[1] < 0.0015 for a, b in zip(api, paged))
if not ok:
    print(len(api), len(paged), [(a, b) for a, b in zip(api, paged) if a[0] != b[0] or not 0 <= b[1] - a[1] < 0.0015][:3])
sys.exit(0 if ok else 1)
PY
grep -q 'src-title' "$T"/banana*.html || fail "the title hit is on no page"
get "$B/search?q=banana&page=1"
cmp -s <(grep -o '<li class="hit"[^>]*>' "$T/body") <(grep -o '<li class="hit"[^>]*>' "$T/banana1.html") ||
  fail "page 1 differs between two requests"
grep -q 'rel="next" href="/search?q=banana&amp;page=2"' "$T/banana1.html" || fail "page 1 has no next link"
note "banana: $n hits on $pages pages, in the API's order, the title hit included"

# ---- search: filters, the hint, suggestions ----
get "$B/search?q=banana&source=title"
[[ $(grep -c '<li class="hit"' "$T/body") == 1 ]] || fail "source=title: $(grep -c '<li class="hit"' "$T/body") hits, want 1"
grep -q '1 moment in 1 video' "$T/body" || fail "source=title: singular count"
get "$B/search?q=banana&source=screen"
! grep -q 'src-speech\|src-title' "$T/body" || fail "source=screen shows other sources"
get "$B/search?q=banana&video=$VB"
! grep -q "data-video=\"$A\"" "$T/body" || fail "video=$VB shows hits of another video"
grep -q "data-video=\"$VB\"" "$T/body" || fail "video=$VB shows none of its hits"
grep -q 'How to search' "$T/body" || fail "no query-language hint"
for q in 'source=bogus' "video=../x" 'page=0' 'page=x' 'per=0' 'per=101' "channel=$(head -c 300 /dev/zero | tr '\0' a)"; do
  get "$B/search?q=banana&$q" 400
done
# a channel: the hits of its videos only (the channel is set in the database: the clips have none)
lib_sql "UPDATE videos SET channel='Bakery <Channel>' WHERE id='$VB'" > /dev/null
nb=$(json "$T/banana.json" "sum(h['video_id'] == '$VB' for h in d['hits'])")
get "$B/search?q=banana"
grep -qF "href=\"/search?q=banana&amp;channel=Bakery%20%3CChannel%3E\">Bakery &lt;Channel&gt;</a> <span class=\"n\">($nb)</span>" "$T/body" ||
  fail "no channel filter for 'Bakery <Channel>' with its $nb hits: $(grep -o '<nav class="facets" aria-label="Channel">.*</nav>' "$T/body")"
get "$B/search?q=banana&channel=Bakery%20%3CChannel%3E"
[[ $(grep -c '<li class="hit"' "$T/body") == "$nb" ]] || fail "channel filter: $(grep -c '<li class="hit"' "$T/body") hits, want $nb"
! grep -q "data-video=\"$A\"" "$T/body" || fail "channel filter shows another channel's video"
get "$B/search?q=banana&channel=Nobody"
grep -q 'with these filters' "$T/body" || fail "an unknown channel: no 'with these filters'"
lib_sql "UPDATE videos SET channel=NULL WHERE id='$VB'" > /dev/null
get "$B/search?q=bana"
grep -q 'Nothing found' "$T/body" || fail "'bana' found something: the suggestion test needs a word with no hit"
grep -qF 'href="/search?q=bana%2A"' "$T/body" || fail "no suggestion 'bana*' for 'bana'"
grep -q 'bana\*</a> (' "$T/body" || fail "the suggestion does not say how many moments it finds"
get "$B/search?q=bana%20source:screen"
grep -qF 'href="/search?q=bana%2A%20source%3Ascreen"' "$T/body" || fail "no suggestion 'bana* source:screen'"
get "$B/search?q=%22bana%20bread%22"
! grep -q 'words that start with these' "$T/body" || fail "a phrase got a prefix suggestion"
get "$B/search?q=%3Cb%3Ebana&source=title"
! grep -q '<b>bana' "$T/body" || fail "the query is reflected unescaped"
note "filters by source and video, the hint, 'bana' suggests 'bana*'"

# ---- the library: cards, pages, filter, sort, progress ----
get "$B/"
[[ $(grep -c '<li class="card"' "$T/body") == 7 ]] || fail "library: $(grep -c '<li class="card"' "$T/body") cards, want 7"
grep -q '7 videos' "$T/body" || fail "library: no '7 videos'"
grep -q "frames/0.jpg" "$T/body" || fail "library: no poster"
grep -q 'index_state' "$T/body" && fail "library: raw field names"
get "$B/?per=3&page=3"
[[ $(grep -c '<li class="card"' "$T/body") == 1 ]] || fail "page 3 of 3 cards each: want 1 card"
grep -q 'Page 3 of 3' "$T/body" || fail "library: no 'Page 3 of 3'"
grep -q 'rel="prev" href="/?per=3&amp;page=2"' "$T/body" || fail "library: no previous link keeping per"
get "$B/?q=TINY&sort=newest"
grep -o 'Tiny clip [0-9]' "$T/body" | tr '\n' , > "$T/order"
[[ $(cat "$T/order") == "Tiny clip 5,Tiny clip 4,Tiny clip 3,Tiny clip 2,Tiny clip 1," ]] ||
  fail "filter TINY, newest first: $(cat "$T/order")"
get "$B/?sort=title&per=2"
grep -o '<h2 class="title"><a href="[^"]*">[^<]*' "$T/body" | sed 's/.*>//' | tr '\n' , > "$T/order"
[[ $(cat "$T/order") == "Lists talk one,Second banana talk," ]] || fail "sort=title: $(cat "$T/order")"
get "$B/?q=nothing-like-this"
grep -q 'No video matches these filters' "$T/body" || fail "library filter with no match"
for q in 'sort=%3Cx%3E' 'state=bogus' 'reuse=2' 'page=0' 'per=501' "q=$(head -c 300 /dev/zero | tr '\0' a)"; do
  get "$B/?$q" 400
done
get "$B/?state=ready&sort=title&reuse=0"
get "$B/?reuse=1"
# a video being indexed: its card has a progress bar, /api/videos?state=processing lists it
lib_sql "UPDATE videos SET index_state='processing' WHERE id='$VB';
  UPDATE stages SET state='running' WHERE video_id='$VB' AND name='ocr';
  UPDATE stages SET state='queued' WHERE video_id='$VB' AND ord > (SELECT ord FROM stages WHERE video_id='$VB' AND name='ocr');"  > /dev/null
get "$B/api/videos?state=processing"
cp "$T/body" "$T/proc.json"
[[ $(json "$T/proc.json" "[v['id'] for v in d['videos']] == ['$VB'] and d['total'] == 1") == True ]] ||
  fail "/api/videos?state=processing: $(cat "$T/proc.json")"
[[ $(json "$T/proc.json" "(lambda v: v['running'] == 'ocr' and 0 < v['stages_finished'] < v['stages_total'] and v['poster'].endswith('.jpg'))(d['videos'][0])") == True ]] ||
  fail "/api/videos?state=processing: progress fields: $(cat "$T/proc.json")"
get "$B/"
grep -q "data-id=\"$VB\" data-state=\"processing\"" "$T/body" || fail "library: the processing card"
grep -q '<progress max="[0-9]*" value="[0-9]*"' "$T/body" || fail "library: no progress bar"
grep -q 'steps done, now ocr' "$T/body" || fail "library: no steps in words"
grep -q 'http-equiv="refresh"' "$T/body" && fail "library: reloads itself (library.js polls instead)"
get "$B/api/videos?id=$A"
[[ $(json "$T/body" "[v['id'] for v in d['videos']]") == "['$A']" ]] || fail "/api/videos?id="
for q in 'state=bogus' 'sort=x' 'limit=0' 'offset=-1' 'id=../x'; do
  get "$B/api/videos?$q" 400
done

# ---- in a browser: paging, filters, suggestions, progress polling, axe, screenshots ----
if [[ -n ${NO_BROWSER:-} ]]; then
  note "NO_BROWSER set: the browser part is skipped"
else
  command -v node > /dev/null || fail "node is missing: install nodejs (scripts/install-deps.sh)"
  [[ -d $ROOT/tests/browser/node_modules/playwright-core ]] ||
    fail "tests/browser/node_modules is missing: run bash scripts/setup.sh"
  shots=$ROOT/tests/out/screenshots
  rc=0
  timeout 180 node "$ROOT/tests/browser/lists.mjs" "$B" "$(lib_catalog)" "$A" "$VB" "$shots" || rc=$?
  kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the browser test: $(cat "$T/srv.err")"
  [[ $rc == 0 ]] || fail "lists.mjs exited $rc (server stderr: $(head -c 500 "$T/srv.err"))"
  for f in lists-library lists-search; do
    [[ -s $shots/$f-wide.png && -s $shots/$f-phone.png ]] || fail "no screenshots $shots/$f-*.png"
  done
fi
# ---- a word in more rows than the search ranks (600): the count says it is a lower bound ----
# a 650 s clip with 620 cues "banana bread again", a slide that says it and a title with it
ffmpeg -v error -y -f lavfi -i "color=white:s=160x90:d=650:r=1,drawtext=fontfile=$font:text='Banana':fontsize=24:x=10:y=30:enable='gte(t,5)'" \
  -f lavfi -i "anullsrc=r=16000:cl=mono" -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac \
  -t 650 -metadata "title=Capped banana talk" "$T/c.mp4"
python3 - "$T/c.vtt" << 'PY'
import sys
def ts(t):
    ms = int(round(t * 1000)); h, ms = divmod(ms, 3600000); m, ms = divmod(ms, 60000); s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"
with open(sys.argv[1], 'w') as f:
    f.write('WEBVTT\n\n')
    for i in range(620):
        f.write(f"{ts(10 + i)} --> {ts(10.5 + i)}\nbanana bread again\n\n")
PY
expect_exit 0 vt add "$T/c.mp4"
C=$(cat "$T/out")
get "$B/api/search?q=banana&limit=1000"
cp "$T/body" "$T/capped.json"
# (the search ranks the newest 600 rows of a word; older ones, here the title's and the
# slide's, are not ranked: the page says its count is a lower bound)
[[ $(json "$T/capped.json" "len(d['hits'])") -ge 600 ]] || fail "a word in 600+ rows: fewer than 600 hits"
get "$B/search?q=banana"
grep -q 'data-exact="0">At least ' "$T/body" || fail "a word in 600+ rows: the count does not say it is a lower bound"
# the slides and titles crowded out of the ranking are counted, and linked, on their own
grep -qF '<a href="/search?q=banana&amp;source=title">Titles</a> <span class="n">(2)</span>' "$T/body" ||
  fail "a word in 600+ rows: the titles' count: $(grep -o '<nav class="facets" aria-label="Source">.*</nav>' "$T/body")"
get "$B/search?q=banana&source=title"
grep -q "data-video=\"$C\"" "$T/body" || fail "a word in 600+ rows: source=title lacks the capped video's title"
note "a word in 600+ rows: the count says 'At least', the titles are counted and linked on their own"
echo "all good"
