#!/usr/bin/env bash
# The web application (`serve`): every route, status codes, JSON shapes, HTTP ranges,
# path traversal, a hostile title rendered inert, read-only mode, the write token and
# the Host check. Curl only ever talks to 127.0.0.1.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"

# req WANT_STATUS CURL_ARGS... (URL included): body in $T/body, headers in $T/hdr
req() {
  local want=$1; shift
  local got
  got=$(curl -s --path-as-is -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@") || true
  [[ $got == "$want" ]] || fail "curl $* gave $got, expected $want: $(head -c 300 "$T/body")"
  if grep -qi '^content-type: text/html' "$T/hdr"; then
    cat "$T/body" >> "$T/all.html"
  fi
  cat "$T/body" >> "$T/all.bodies"
}
hdr() { grep -i "^$1:" "$T/hdr" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }
size() { stat -c %s "$T/body"; }

# ---- a library with one short clip: slide text, captions, a hostile title ----
XSS='<img src=x onerror=alert(1)>'
gen_clip "$T/raw.mp4" 4 'Hello World'
ffmpeg -v error -y -i "$T/raw.mp4" -c copy -metadata "title=$XSS talk" "$T/talk.mp4"
cat > "$T/talk.vtt" << 'EOF'
WEBVTT

00:00:00.500 --> 00:00:02.000
welcome to the demo & "quotes" &lt;script&gt;x&lt;/script&gt;

00:00:02.000 --> 00:00:03.500
second cue about tokens
EOF
expect_exit 0 vt add "$T/talk.mp4"
id=$(cat "$T/out")
SIZE=$(stat -c %s "$T/talk.mp4")

# ---- read-write server with a token file ----
echo "s3cret-token-0123456789" > "$T/token"
start_server --token-file "$T/token"
note "server on $B"

# pages
req 200 "$B/"
grep -q "/v/$id" "$T/body" || fail "library page does not link the video"
grep -q "frames/0.jpg" "$T/body" || fail "library page has no thumbnail"
grep -q 'data-role="state">Ready<' "$T/body" || fail "library page lacks the state in words"
grep -q 'http-equiv="refresh"' "$T/body" && fail "a finished library should not refresh itself"
# live progress: a video whose indexing was interrupted shows how far it is, and the page's
# script (library.js, polling /api/videos?state=processing) follows it: no reload
ffmpeg -v error -f lavfi -i "testsrc2=s=320x240:d=20" -f lavfi -i "sine=d=20" -c:v libx264 \
  -preset veryfast -c:a aac -shortest "$T/long.mp4"
"$VIDTHEQUE" -q -L "$LIB" add "$T/long.mp4" > "$T/long.id" 2> /dev/null &
lpid=$!
for _ in $(seq 1 100); do
  [[ -s $T/long.id ]] && break
  sleep 0.05
done
sleep 0.3
kill -9 "$lpid" 2> /dev/null || true
wait "$lpid" 2> /dev/null || true
if [[ -s $T/long.id ]] && [[ $(vt ls | grep "$(cat "$T/long.id")" | cut -f4) != ready ]]; then
  req 200 "$B/"
  grep -q 'steps done' "$T/body" || fail "library page shows no stage progress"
  grep -q '<progress ' "$T/body" || fail "library page shows no progress bar"
  grep -q 'src="/static/library.js?v=[0-9a-f]\{16\}"' "$T/body" || fail "library page has no script to follow progress"
  grep -q 'http-equiv="refresh"' "$T/body" && fail "library page reloads itself while indexing"
  note "library page while a video is unfinished: progress shown, followed by library.js"
fi
[[ -s $T/long.id ]] && vt rm "$(cat "$T/long.id")"
grep -q '&lt;img src=x onerror=alert(1)&gt;' "$T/body" || fail "title not escaped on /"
[[ $(hdr Content-Security-Policy) == *"default-src 'self'"*"frame-ancestors 'none'"* ]] ||
  fail "CSP: $(hdr Content-Security-Policy)"
[[ $(hdr X-Content-Type-Options) == nosniff ]] || fail "nosniff"
[[ $(hdr Referrer-Policy) == no-referrer ]] || fail "Referrer-Policy"
req 200 "$B/?state=ready&sort=title"
grep -q "/v/$id" "$T/body" || fail "filter ready lost the video"
req 200 "$B/?state=failed"
! grep -q "/v/$id\"" "$T/body" || fail "filter failed shows a ready video"
req 400 "$B/?sort=%3Cscript%3E"

req 200 "$B/v/$id?t=2"
for h in 'Scene timeline' 'Shot 0, 0:00 to 0:04, 1 of 1 keyframes kept' 'What was stored' \
         'Provenance' 'tesseract 5.3.0 eng' 'Frames, and what the machine read' 'Hello World' \
         'Transcript' '2 cues' 'Open at this second' "src=\"/media/$id#t=2.000\"" \
         'href="?t=0"' 'welcome to the demo &amp; &quot;quotes&quot; &lt;script&gt;x'; do
  grep -qF "$h" "$T/body" || fail "video page lacks '$h'"
done
grep -qF "$LIB/media/$id/talk.mp4" "$T/body" || fail "read-write page should show the file's path (the library's copy)"
# the state in words, not field names; a finished video's page never reloads itself
grep -qF '<span class="badge state-ready" id="state-words">Ready</span>' "$T/body" ||
  fail "video page lacks its state in words"
grep -qF '>Complete</span>' "$T/body" || fail "video page lacks its data status in words"
! grep -qE 'index_state|data_status|line\(s\)|shot\(s\)|http-equiv' "$T/body" ||
  fail "video page shows field names, '(s)' plurals or a refresh"
req 404 "$B/v/nosuchvideo"
req 404 "$B/v/$id/extra"
req 200 "$B/static/app.js"
[[ $(hdr Content-Type) == text/javascript* ]] || fail "js type"
req 200 "$B/static/app.css"

# search page: marks, grouping, friendly messages, hostile queries
req 200 "$B/search?q=hello"
grep -q '<mark>Hello</mark>' "$T/body" || fail "search page lacks the marked hit"
grep -q "/v/$id?t=0" "$T/body" || fail "search hit does not link the moment"
grep -q 'src-screen' "$T/body" || fail "search hit lacks its source badge"
req 200 "$B/search?q="
grep -q 'Type words' "$T/body" || fail "empty query message"
req 200 "$B/search?q=zzzqqqnothing"
grep -q 'Nothing found' "$T/body" || fail "no-hit message"
req 200 "$B/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E%22%27"
! grep -q '<script>alert' "$T/body" || fail "query reflected unescaped"
req 200 "$B/search?q=%22%22%22(((***%20-%20NEAR%20OR%20source:"
req 200 "$B/search?q=$(head -c 3000 /dev/zero | tr '\0' a)"
grep -q 'too long' "$T/body" || fail "long query message"

# JSON API
req 200 "$B/api/videos"
cp "$T/body" "$T/videos.json"
[[ $(json "$T/videos.json" "[v['id'] for v in d['videos']] == ['$id'] and set(d['videos'][0]) >= {'id','title','duration_s','index_state','data_status'}") == True ]] ||
  fail "/api/videos: $(cat "$T/videos.json")"
req 200 "$B/api/videos/$id"
[[ $(hdr Content-Type) == application/json* ]] || fail "api type"
vt export "$id" > "$T/export.json"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a!=b)' \
  "$T/body" "$T/export.json" || fail "/api/videos/ID is not the export document"
# documents are cached per server thread: a change made by another process shows at once
for _ in 1 2 3 4 5 6; do req 200 "$B/api/videos/$id"; done
vt redo "$id" --stage ocr
for _ in 1 2 3 4 5 6; do
  req 200 "$B/api/videos/$id"
  [[ $(json "$T/body" "[s['attempts'] for s in d['stages'] if s['name']=='ocr'][0]") == 2 ]] ||
    fail "the server shows a stale document after another process changed it"
done
req 404 "$B/api/videos/nosuchvideo"
cp "$T/body" "$T/err.json"
[[ $(json "$T/err.json" "d['error']['code']") == not_found && $(json "$T/err.json" "bool(d['error']['message'])") == True ]] ||
  fail "error shape: $(cat "$T/err.json")"
req 404 "$B/api/nothing"
req 200 "$B/api/search?q=hello"
cp "$T/body" "$T/search.json"
[[ $(json "$T/search.json" "set(d) >= {'query','took_ms','hits'} and d['query'] == 'hello'") == True ]] ||
  fail "search shape: $(cat "$T/search.json")"
[[ $(json "$T/search.json" "all(set(h) >= {'video_id','title','start_s','end_s','source','text','score'} for h in d['hits']) and len(d['hits']) >= 1") == True ]] ||
  fail "hit shape: $(cat "$T/search.json")"
[[ $(json "$T/search.json" "d['hits'][0]['video_id'] == '$id' and '«Hello»' in d['hits'][0]['text']") == True ]] ||
  fail "hit: $(cat "$T/search.json")"
"$VIDTHEQUE" -L "$LIB" search --json hello > "$T/cli.json"
# one writer for both: the same document but for the time taken
[[ $(json "$T/cli.json" "sorted((k, v) for k, v in d.items() if k != 'took_ms')") == \
   "$(json "$T/search.json" "sorted((k, v) for k, v in d.items() if k != 'took_ms')")" ]] ||
  fail "api search differs from 'search --json': $(cat "$T/cli.json") vs $(cat "$T/search.json")"
req 400 "$B/api/search"
[[ $(json "$T/body" "d['error']['code']") == bad_request ]] || fail "missing q"
req 400 "$B/api/search?q=x&limit=0"
req 400 "$B/api/search?q=x&source=bogus"
req 200 "$B/api/search?q=tokens&source=speech&limit=5"
[[ $(json "$T/body" "[h['source'] for h in d['hits']]") == "['speech']" ]] || fail "speech hit: $(cat "$T/body")"

# frames
req 200 "$B/api/videos/$id/frames/0.jpg"
[[ $(hdr Content-Type) == image/jpeg ]] || fail "frame type"
[[ $(head -c 2 "$T/body" | od -An -tx1 | tr -d ' ') == ffd8 ]] || fail "frame is not a JPEG"
for bad in 99.jpg 999999999.jpg -1.jpg 00.jpg 0.png 0.jpg.x '0.jpg%00' '..%2f..%2flibrary.db' \
           '..%252f..%252flibrary.db' '%2e%2e%2f%2e%2e%2flibrary.db'; do
  req 404 "$B/api/videos/$id/frames/$bad"
done
req 404 "$B/api/videos/nosuch/frames/0.jpg"

# media: whole file, HEAD, ranges
req 200 "$B/media/$id"
[[ $(size) == "$SIZE" ]] || fail "media size $(size) != $SIZE"
cmp -s "$T/body" "$T/talk.mp4" || fail "media bytes differ"
[[ $(hdr Accept-Ranges) == bytes ]] || fail "Accept-Ranges"
[[ $(hdr Content-Type) == video/mp4 ]] || fail "media type $(hdr Content-Type)"
etag=$(hdr ETag)
[[ -n $etag && -n $(hdr Last-Modified) ]] || fail "ETag/Last-Modified"
req 304 -H "If-None-Match: $etag" "$B/media/$id"
req 200 -I "$B/media/$id"
# with -I curl writes the headers where the body would go: nothing else came
[[ $(hdr Content-Length) == "$SIZE" ]] && cmp -s "$T/body" "$T/hdr" ||
  fail "HEAD: length $(hdr Content-Length), body $(size)"
req 206 -H 'Range: bytes=0-0' "$B/media/$id"
[[ $(hdr Content-Range) == "bytes 0-0/$SIZE" && $(size) == 1 ]] || fail "0-0: $(hdr Content-Range)"
cmp -s "$T/body" <(head -c 1 "$T/talk.mp4") || fail "0-0 byte"
req 206 -H 'Range: bytes=-1' "$B/media/$id"
[[ $(hdr Content-Range) == "bytes $((SIZE - 1))-$((SIZE - 1))/$SIZE" && $(size) == 1 ]] ||
  fail "-1: $(hdr Content-Range)"
cmp -s "$T/body" <(tail -c 1 "$T/talk.mp4") || fail "-1 byte"
req 206 -H 'Range: bytes=0-' "$B/media/$id"
[[ $(hdr Content-Range) == "bytes 0-$((SIZE - 1))/$SIZE" && $(size) == "$SIZE" ]] || fail "0-"
req 206 -H 'Range: bytes=100-199' "$B/media/$id"
cmp -s "$T/body" <(tail -c +101 "$T/talk.mp4" | head -c 100) || fail "100-199 bytes"
req 206 -H "Range: bytes=10-$((SIZE + 1000))" "$B/media/$id"
[[ $(hdr Content-Range) == "bytes 10-$((SIZE - 1))/$SIZE" ]] || fail "end past the file"
req 206 -H 'Range: bytes=0-99999999999999999999999999' "$B/media/$id"
[[ $(size) == "$SIZE" ]] || fail "huge last-pos"
req 206 -H 'Range: bytes=-99999999999999999999999999' "$B/media/$id"
[[ $(size) == "$SIZE" ]] || fail "huge suffix"
for r in "bytes=$SIZE-" "bytes=$((SIZE + 5))-$((SIZE + 9))" 'bytes=5-3' 'bytes=-0' \
         'bytes=99999999999999999999999999-' 'bytes=abc' 'bytes=1-2-3' 'bytes=--1' 'bytes='; do
  req 416 -H "Range: $r" "$B/media/$id"
  [[ $(hdr Content-Range) == "bytes */$SIZE" ]] || fail "416 for '$r' lacks Content-Range"
done
# several ranges: the whole file with 200 (documented in docs/API.md)
req 200 -H 'Range: bytes=0-1,5-6' "$B/media/$id"
[[ $(size) == "$SIZE" ]] || fail "multi-range"
req 200 -H "Range: bytes=$(seq -s, 0 2 2000 | sed 's/\([0-9]*\)/\1-\1/g')" "$B/media/$id"
req 200 -H 'Range: items=0-1' "$B/media/$id"
req 200 -H 'Range: bytes=0-1' -H 'If-Range: "other"' "$B/media/$id"
req 404 "$B/media/nosuchvideo"

# path traversal and odd paths: never a file
for p in '/media/../../../../etc/passwd' '/media/%2e%2e%2f%2e%2e%2fetc%2fpasswd' \
         '/media/..%252f..%252fetc%252fpasswd' "/media/$id%00.txt" "/v/$id%00" \
         '/static/../library.db' '/static/%2e%2e/library.db' '//etc/passwd' '/etc/passwd' \
         '/library.db' '/frames' "/api/videos/$id/../../library.db" '/api/videos/..%2f..%2fx' \
         "/media/$id/../../library.db"; do
  got=$(curl -s --path-as-is -o "$T/body" -w '%{http_code}' "$B$p") || true
  [[ $got == 404 || $got == 400 ]] || fail "'$p' gave $got"
  ! grep -q 'root:' "$T/body" || fail "'$p' served /etc/passwd"
  ! grep -q 'SQLite format' "$T/body" || fail "'$p' served the database"
done

# methods
req 405 -X PUT "$B/api/videos/$id"
req 405 -X DELETE "$B/api/videos/$id"
req 405 -X POST "$B/"
[[ $(hdr Allow) == 'GET, HEAD' ]] || fail "Allow"

# Host check (bound to loopback)
req 421 -H 'Host: evil.example' "$B/"
req 421 -H 'Host: 127.0.0.1.evil.example' "$B/api/videos"
req 421 -H 'Host: localhost:80x' "$B/"
req 200 -H "Host: localhost:$PORT" "$B/"
req 200 -H 'Host: [::1]:8080' "$B/api/videos"

# writes need the token
gen_clip "$T/second.mp4" 2 'Second Slide'
body="{\"path\": \"$T/second.mp4\"}"
req 401 -X POST -d "$body" "$B/api/videos"
[[ $(json "$T/body" "d['error']['code']") == unauthorized ]] || fail "401 shape"
req 401 -X POST -H 'Authorization: Bearer wrong-token-0123456' -d "$body" "$B/api/videos"
req 401 -X POST -H 'Authorization: s3cret-token-0123456789' -d "$body" "$B/api/videos"
AUTH='Authorization: Bearer s3cret-token-0123456789'
req 400 -X POST -H "$AUTH" -d 'not json' "$B/api/videos"
req 400 -X POST -H "$AUTH" -d '{"path": 5}' "$B/api/videos"
req 404 -X POST -H "$AUTH" -d "{\"path\": \"$T/missing.mp4\"}" "$B/api/videos"
head -c 100000 /dev/zero | tr '\0' x > "$T/big"
req 413 -X POST -H "$AUTH" --data-binary @"$T/big" "$B/api/videos"
req 202 -X POST -H "$AUTH" -d "$body" "$B/api/videos"
id2=$(json "$T/body" "d['id']")
[[ $id2 =~ ^[A-Za-z0-9_-]{11}$ && $id2 != "$id" ]] || fail "POST gave '$id2'"
for _ in $(seq 120); do
  req 200 "$B/api/videos/$id2"
  [[ $(json "$T/body" "d['index_state']") == ready ]] && break
  sleep 0.5
done
[[ $(json "$T/body" "d['index_state']") == ready ]] || fail "posted video not indexed: $(cat "$T/srv.err")"
req 200 "$B/search?q=second"
grep -q "/v/$id2" "$T/body" || fail "posted video not searchable"
stop_cleanly

# ---- read-only ----
start_server --read-only
req 200 "$B/"
grep -qi 'read-only demo' "$T/body" || fail "read-only pages should say so"
req 200 "$B/v/$id"
grep -qi 'read-only demo' "$T/body" || fail "video page should say read-only"
: > "$T/ro.bodies"
for u in / "/v/$id" "/api/videos" "/api/videos/$id" "/search?q=hello" "/api/search?q=hello" \
         "/api/videos/nosuch" "/media/nosuch"; do
  curl -s "$B$u" >> "$T/ro.bodies" || true
done
! grep -qF "$T" "$T/ro.bodies" || fail "read-only response shows a server path"
req 200 "$B/api/videos/$id"
[[ $(json "$T/body" "'path' in d['source']") == False ]] || fail "read-only source.path"
for m in POST PUT DELETE PATCH; do
  req 405 -X "$m" -H "$AUTH" -d "$body" "$B/api/videos"
  req 405 -X "$m" "$B/v/$id"
done
req 405 -X POST -H "$AUTH" -d "$body" "$B/"
req 206 -H 'Range: bytes=0-9' "$B/media/$id"
stop_cleanly

# ---- the hostile title never appears as markup in any HTML response ----
[[ -s $T/all.html ]] || fail "no HTML collected"
! grep -qF "$XSS" "$T/all.html" || fail "the raw '<img src=x' appears in HTML"
! grep -qF '<script>x' "$T/all.html" || fail "a cue's <script> appears in HTML"

# a missing library is one error line, and bad options are usage errors
expect_exit 1 "$VIDTHEQUE" -L "$T/nolib" serve --port 0; one_line_err
expect_exit 2 "$VIDTHEQUE" -L "$LIB" serve --port 70000
expect_exit 2 "$VIDTHEQUE" -L "$LIB" serve --read-only --token-file "$T/token"
echo "all good"
