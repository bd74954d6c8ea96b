#!/usr/bin/env bash
# Managing the library from the browser (`serve` with a token): sign in with the write
# token (a session cookie: HttpOnly, SameSite=Strict; a random id, never the token), the
# CSRF token every form carries, the Origin and Sec-Fetch-Site checks, add a server file
# and a URL (yt-dlp runs in the indexing thread: a fake one that waits for the test shows
# the request was answered while it ran), redo a stage, a failure with its reason and
# "retry", remove after a confirmation; every refusal changes nothing; read-only mode has
# none of it. Then the same flow in Chromium (tests/browser/manage.mjs). Curl and the
# browser only ever talk to 127.0.0.1.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"

# req WANT_STATUS CURL_ARGS... (URL included): body in $T/body, headers in $T/hdr; every
# answer is kept in $T/all (the token must never be in one)
req() {
  local want=$1; shift
  local got
  got=$(curl -s --max-time 30 -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@") || true
  [[ $got == "$want" ]] || fail "curl $* gave $got, expected $want: $(head -c 300 "$T/body")"
  cat "$T/hdr" "$T/body" >> "$T/all"
}
hdr() { grep -i "^$1:" "$T/hdr" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }
# the CSRF token in the page in $T/body
csrf_of() { grep -o 'name="csrf" value="[0-9a-f]*"' "$T/body" | head -n 1 | sed 's/.*value="//; s/"$//'; }
# sign_in JAR: a session in the cookie jar, its CSRF token in $CSRF
sign_in() {
  req 303 -c "$1" -d "token=$TOKEN" "$B/login"
  req 200 -b "$1" "$B/"
  CSRF=$(csrf_of)
  [[ $CSRF =~ ^[0-9a-f]{64}$ ]] || fail "no CSRF token in the signed-in library page"
}
# wait_job N: until the queue page says job N is done or failed; its state in $JOB
wait_job() {
  for _ in $(seq 600); do
    req 200 -b "$J1" "$B/queue"
    JOB=$(grep -o "id=\"job-$1\" class=\"job job-[a-z]*" "$T/body" | sed 's/.*job-//') || true
    [[ $JOB == done || $JOB == failed ]] && return 0
    sleep 0.1
  done
  fail "job $1 did not finish: $(grep "job-$1" "$T/body")"
}
# the job number a 303 to the queue names
job_of() { hdr Location | sed -n 's|^/queue?job=\([0-9]*\)#job-[0-9]*$|\1|p'; }
count() { vt ls | wc -l; }
stage_attempts() { # stage_attempts ID STAGE
  vt export "$1" > "$T/doc.json"
  json "$T/doc.json" "[s['attempts'] for s in d['stages'] if s['name'] == '$2'][0]"
}

gen_clip "$T/one.mp4" 3 'First Clip'
gen_clip "$T/two.mp4" 3 'Second Clip'
expect_exit 0 vt add "$T/one.mp4"
id1=$(cat "$T/out")
TOKEN=s3cret-token-0123456789
echo "$TOKEN" > "$T/token"

# a yt-dlp that says its version, then waits for the test before failing as a site down
cat > "$T/yt-dlp" << EOF
#!/bin/sh
for a in "\$@"; do [ "\$a" = --version ] && { echo 2025.01.01; exit 0; }; done
touch "$T/ytdlp.started"
i=0
while [ ! -e "$T/ytdlp.release" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
echo "ERROR: [generic] Unable to download webpage: site down for the test" >&2
exit 1
EOF
chmod +x "$T/yt-dlp"
export VIDTHEQUE_YTDLP=$T/yt-dlp VIDTHEQUE_RETRY_BASE=3600

start_server --token-file "$T/token"
note "server on $B"

note "signed out: no forms, a Sign in link; the manage pages send you to sign in"
req 200 "$B/"
grep -q 'href="/login">Sign in' "$T/body" || fail "no Sign in link on the library page"
grep -q 'name="csrf"' "$T/body" && fail "a form that writes is shown to a visitor"
req 200 "$B/v/$id1"
grep -q 'class="manage' "$T/body" && fail "the manage controls are shown to a visitor"
req 303 "$B/queue"
[[ $(hdr Location) == /login ]] || fail "/queue signed out goes to $(hdr Location)"
req 303 "$B/v/$id1/remove"
req 200 "$B/login"
grep -q '<form method="post" action="/login"' "$T/body" || fail "no sign-in form"
grep -q 'type="password"' "$T/body" || fail "the token field is not a password field"

note "a wrong token is 403 and sets no cookie; the token in a URL is never read"
req 403 -d "token=wrong-token-0123456789" "$B/login"
grep -qi '^set-cookie' "$T/hdr" && fail "a wrong token set a cookie"
req 403 -d "" "$B/login"
req 200 "$B/login?token=$TOKEN"
grep -qi '^set-cookie' "$T/hdr" && fail "a token in the query signed in"
req 405 -X PUT "$B/login"
note "a sign-in from another site is refused (login CSRF)"
req 403 -H "Origin: http://evil.example" -d "token=$TOKEN" "$B/login"
grep -qi '^set-cookie' "$T/hdr" && fail "a cross-origin sign-in set a cookie"

note "the right token: 303 with a session cookie, HttpOnly, SameSite=Strict, a random id"
J1=$T/jar1
req 303 -c "$J1" -d "token=$TOKEN" "$B/login"
sc=$(hdr Set-Cookie)
[[ $sc =~ ^vt_session=[0-9a-f]{64}\; ]] || fail "session cookie: '$sc'"
[[ $sc == *"; HttpOnly"* && $sc == *"; SameSite=Strict"* && $sc == *"; Path=/"* ]] ||
  fail "cookie attributes: '$sc'"
[[ $sc == *Secure* ]] && fail "Secure on a plain-http server: the browser would drop the cookie"
[[ $sc == *"$TOKEN"* ]] && fail "the cookie holds the token"
[[ $(hdr Location) == / ]] || fail "after sign-in: Location '$(hdr Location)'"
req 303 -d "token=$TOKEN" -H 'X-Forwarded-Proto: https' "$B/login"
[[ $(hdr Set-Cookie) == *"; Secure"* ]] || fail "behind a TLS proxy the cookie should be Secure"
sign_in "$J1"
grep -q 'action="/logout"' "$T/body" || fail "signed in, no Sign out"
grep -q 'action="/manage/add"' "$T/body" || fail "signed in, no add form"
C1=$CSRF
req 200 -b "$J1" "$B/v/$id1"
for a in redo remove; do
  grep -q "action=\"/v/$id1/$a\"" "$T/body" || fail "the video page has no $a form"
done
grep -q '<option>keyframe</option>' "$T/body" || fail "the redo form does not list the stages"
# in the order they run, and none chosen: a slip must not redo fetch (issue 25)
opts=$(grep -o '<select id="redo-stage"[^>]*>.*</select>' "$T/body" | grep -o '<option[^>]*>[^<]*' | tr '\n' ' ')
[[ $opts == '<option value="" selected disabled>choose a stage <option>fetch <option>keyframe <option>ocr <option>stt <option>chunk <option>text_embed <option>frame_embed ' ]] ||
  fail "the redo form's stages: $opts"
grep -q '<select id="redo-stage" name="stage" required>' "$T/body" || fail "the redo form's stage is not required"
J2=$T/jar2
sign_in "$J2"
C2=$CSRF
SID2=$(grep vt_session "$J2" | cut -f7)
[[ $C1 != "$C2" ]] || fail "two sessions share a CSRF token"

note "refused writes change nothing: no session, no CSRF, another session's CSRF, another origin"
before=$(count)
a0=$(stage_attempts "$id1" keyframe)
req 403 -d "csrf=$C1&stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -d "stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -d "csrf=&stage=keyframe" "$B/v/$id1/redo"
# the right token but its last digit (made different whatever it was)
last=${C1:63:1}; [[ $last == 0 ]] && other=1 || other=0
req 403 -b "$J1" -d "csrf=${C1:0:63}$other&stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -d "csrf=$C2&stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -H "Origin: http://evil.example" -d "csrf=$C1&stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -H "Origin: null" -d "csrf=$C1&stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -H "Sec-Fetch-Site: cross-site" -d "csrf=$C1&stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -H "Sec-Fetch-Site: same-site" -H "Origin: null" -d "csrf=$C1&stage=keyframe" \
  "$B/v/$id1/redo"
req 403 -b "$J1" -H "Sec-Fetch-Site: same-origin" -H "Origin: http://evil.example" \
  -d "csrf=$C1&stage=keyframe" "$B/v/$id1/redo"
req 403 -b "$J1" -H "Authorization: Bearer wrong-token-0123456789" -d "stage=keyframe" \
  "$B/v/$id1/redo"
req 403 -b "$J1" -d "csrf=$C2&source=$T/two.mp4" "$B/manage/add"
req 403 -b "$J1" -d "csrf=$C2&confirm=yes" "$B/v/$id1/remove"
req 403 -b "vt_session=$(printf 'a%.0s' $(seq 64))" -d "csrf=$C1&confirm=yes" "$B/v/$id1/remove"
req 415 -b "$J1" -H 'Content-Type: text/plain' -d "csrf=$C1&stage=keyframe" "$B/v/$id1/redo"
note "a body over 16 KiB is 413"
head -c 20000 /dev/zero | tr '\0' 'a' > "$T/big"
req 413 -b "$J1" --data-binary @"$T/big" "$B/manage/add"
req 200 -b "$J1" "$B/queue"
grep -q 'class="job ' "$T/body" && fail "a refused write queued a job: $(grep 'class="job ' "$T/body")"
[[ $(count) == "$before" && $(stage_attempts "$id1" keyframe) == "$a0" ]] ||
  fail "a refused write changed the library"

note "a path that is not a file is refused with its reason, in one line"
req 404 -b "$J1" -d "csrf=$C1&source=$T/missing.mp4" "$B/manage/add"
grep -qi "no such file on the server" "$T/body" || fail "missing file: $(grep error "$T/body")"
# the form again, what was typed kept, the reason on it (one line)
grep -qF "value=\"$T/missing.mp4\">" "$T/body" || fail "the form lost the typed path: $(grep add-source "$T/body")"
[[ $(grep -c 'id="add-error"' "$T/body") == 1 ]] || fail "no reason on the form, or more than one"
req 422 -b "$J1" -d "csrf=$C1&source=$T" "$B/manage/add"
grep -qi "not a regular file" "$T/body" || fail "directory: $(grep error "$T/body")"
req 400 -b "$J1" -d "csrf=$C1&source=relative/x.mp4" "$B/manage/add"
grep -q "absolute path" "$T/body" || fail "relative path: $(grep error "$T/body")"
grep -qF 'value="relative/x.mp4">' "$T/body" || fail "the form lost the typed path"
req 400 -b "$J1" -d "csrf=$C1&source=%22%3E%3Cscript%3Ex" "$B/manage/add"
grep -qF 'value="&quot;&gt;&lt;script&gt;x">' "$T/body" || fail "the typed value is not escaped: $(grep add-source "$T/body")"
req 400 -b "$J1" -d "csrf=$C1&source=ftp://127.0.0.1/x.mp4" "$B/manage/add"
req 400 -b "$J1" -d "csrf=$C1&source=%00" "$B/manage/add"
req 400 -b "$J1" -d "csrf=$C1&source=" "$B/manage/add"
req 400 -b "$J1" -d "csrf=$C1&stage=nosuch" "$B/v/$id1/redo"
req 404 -b "$J1" -d "csrf=$C1&stage=ocr" "$B/v/nosuchvideo/redo"
req 405 -b "$J1" -d "csrf=$C1&stage=ocr" --path-as-is "$B/v/..%2f..%2fetc/redo"
req 404 -b "$J1" -d "csrf=$C1&stage=ocr" "$B/v/a%00b/redo"
req 405 -b "$J1" "$B/manage/add"
[[ $(hdr Allow) == POST ]] || fail "Allow on /manage/add: '$(hdr Allow)'"
req 405 -b "$J1" -d "csrf=$C1" "$B/queue"
[[ $(hdr Allow) == "GET, HEAD" ]] || fail "Allow on /queue: '$(hdr Allow)'"
req 405 -b "$J1" -X DELETE "$B/v/$id1/remove"
req 405 -b "$J1" -X POST "$B/"
[[ $(count) == "$before" ]] || fail "a refused add added"

note "add a server file: 303 to the queue, indexed by the indexing thread"
# with the bearer token instead of a session, as an API client would
req 303 -H "Authorization: Bearer $TOKEN" --data-urlencode "source=$T/two.mp4" "$B/manage/add"
n=$(job_of)
[[ -n $n ]] || fail "add: Location '$(hdr Location)'"
wait_job "$n"
[[ $JOB == done ]] || fail "add job $JOB: $(grep "job-$n" "$T/body")"
id2=$(grep -o "id=\"job-$n\".*" "$T/body" | grep -o 'href="/v/[A-Za-z0-9_-]*"' | head -n 1 |
  sed 's|href="/v/||; s|"||')
[[ -n $id2 && $id2 != "$id1" ]] || fail "the queue does not link the added video"
[[ $(count) == $((before + 1)) ]] || fail "the file was not added"
vt export "$id2" > "$T/doc2.json"
[[ $(json "$T/doc2.json" "d['index_state'], d['data_status']") == "('ready', 'ok')" ]] ||
  fail "added video not indexed: $(json "$T/doc2.json" "d['index_state']")"
vt search "second" | grep -q "^$id2" || fail "the added video's slide is not searchable"

note "redo a stage: 303 to the video, the stage's attempts grow, its dependents' too"
k0=$(stage_attempts "$id2" keyframe)
o0=$(stage_attempts "$id2" ocr)
f0=$(stage_attempts "$id2" fetch)
req 303 -b "$J1" -d "csrf=$C1&stage=keyframe" "$B/v/$id2/redo"
[[ $(hdr Location) == "/v/$id2" ]] || fail "redo: Location '$(hdr Location)'"
req 200 -b "$J1" "$B/queue"
n=$(grep -o 'id="job-[0-9]*"' "$T/body" | head -n 1 | grep -o '[0-9]*')
wait_job "$n"
[[ $JOB == done ]] || fail "redo job $JOB"
[[ $(stage_attempts "$id2" keyframe) == $((k0 + 1)) ]] || fail "keyframe was not run again"
[[ $(stage_attempts "$id2" ocr) == $((o0 + 1)) ]] || fail "ocr (uses keyframe) was not run again"
[[ $(stage_attempts "$id2" fetch) == "$f0" ]] || fail "redo of keyframe ran fetch again"

note "add a URL: the request is answered while yt-dlp runs in the indexing thread"
req 303 -b "$J1" --data-urlencode "source=http://127.0.0.1:9/talk.mp4" -d "csrf=$C1" \
  "$B/manage/add"
n=$(job_of)
for _ in $(seq 300); do [[ -e $T/ytdlp.started ]] && break; sleep 0.1; done
[[ -e $T/ytdlp.started ]] || fail "yt-dlp was never run"
[[ -e $T/ytdlp.release ]] && fail "impossible: released early"
req 200 -b "$J1" "$B/queue"
grep -q "id=\"job-$n\" class=\"job job-running" "$T/body" ||
  fail "while yt-dlp runs the job is not running: $(grep "job-$n" "$T/body")"
grep -q 'http://127.0.0.1:9/talk.mp4' "$T/body" || fail "the queue does not show the URL"
req 200 "$B/api/videos"
touch "$T/ytdlp.release"
wait_job "$n"
[[ $JOB == failed ]] || fail "the URL job should fail (site down): $JOB"
grep "id=\"job-$n\"" "$T/body" | grep -q 'site down for the test' ||
  fail "the queue does not say why: $(grep "job-$n" "$T/body")"
idu=$(vt ls | cut -f1 | grep -v -e "^$id1\$" -e "^$id2\$")
[[ -n $idu ]] || fail "the unreachable URL was not registered"

note "a failure shows its reason and a retry button; retry runs the stage again"
req 200 -b "$J1" "$B/v/$idu"
grep -q 'class="failures"' "$T/body" || fail "the failed video's page lists no failure"
grep -q 'site down for the test' "$T/body" || fail "the failure's reason is not shown"
grep -q "action=\"/v/$idu/retry\"" "$T/body" || fail "no retry button"
r0=$(stage_attempts "$idu" fetch)
req 303 -b "$J1" -d "csrf=$C1" "$B/v/$idu/retry"
[[ $(hdr Location) == "/v/$idu" ]] || fail "retry: Location '$(hdr Location)'"
req 200 -b "$J1" "$B/queue"
n=$(grep -o 'id="job-[0-9]*"' "$T/body" | head -n 1 | grep -o '[0-9]*')
wait_job "$n"
[[ $(stage_attempts "$idu" fetch) -gt $r0 ]] || fail "retry did not run fetch again"

note "remove: a confirmation page first (nothing removed), then removed"
before=$(count)
req 200 -b "$J1" -d "csrf=$C1" "$B/v/$id2/remove"
grep -q 'name="confirm" value="yes"' "$T/body" || fail "no confirmation form"
grep -q "action=\"/v/$id2/remove\"" "$T/body" || fail "the confirmation posts elsewhere"
req 200 -b "$J1" "$B/v/$id2/remove"
grep -q 'name="confirm" value="yes"' "$T/body" || fail "GET: no confirmation form"
[[ $(count) == "$before" ]] || fail "removed without confirmation"
req 303 -b "$J1" -d "csrf=$C1&confirm=yes" "$B/v/$id2/remove"
n=$(job_of)
wait_job "$n"
[[ $JOB == done ]] || fail "remove job $JOB"
[[ $(count) == $((before - 1)) ]] || fail "not removed"
req 404 "$B/api/videos/$id2"
[[ -f $T/two.mp4 ]] || fail "removing deleted the file it was added from"

note "hostile text in the queue and the forms is escaped"
req 404 -b "$J1" --data-urlencode "source=/<script>alert(1)</script>" -d "csrf=$C1" \
  "$B/manage/add"
grep -q '<script>alert' "$T/body" && fail "the refused path is not escaped"

note "sign out: the session is gone, its cookie and CSRF token no longer work"
req 303 -b "$J2" -c "$J2" -d "csrf=$C2" "$B/logout"
[[ $(hdr Set-Cookie) == *"Max-Age=0"* ]] || fail "sign-out does not clear the cookie"
req 403 -b "vt_session=$SID2" -d "csrf=$C2&stage=ocr" "$B/v/$id1/redo"
req 200 -b "vt_session=$SID2" "$B/"
grep -q 'name="csrf"' "$T/body" && fail "a signed-out session still sees the forms"
req 200 -b "$J1" "$B/queue"

note "the token never appears in an answer (header, page, Location)"
grep -qF "$TOKEN" "$T/all" && fail "the token is in an answer: $(grep -F "$TOKEN" "$T/all" | head -n 3)"
grep -qF "$TOKEN" "$T/srv.err" && fail "the token is in the server's log"
stop_cleanly

note "read-only: no sign-in, no forms, every write refused"
start_server --read-only
req 404 "$B/login"
req 405 -d "token=$TOKEN" "$B/login"
grep -qi '^set-cookie' "$T/hdr" && fail "read-only: a cookie was set"
for u in /manage/add "/v/$id1/redo" "/v/$id1/retry" "/v/$id1/remove" /logout; do
  req 405 -H "Authorization: Bearer $TOKEN" -d "stage=ocr&confirm=yes" "$B$u"
done
req 404 "$B/queue"
req 200 "$B/"
grep -q -e 'Sign in' -e 'name="csrf"' -e 'method="post"' "$T/body" && fail "read-only page has a form that writes"
req 200 "$B/v/$id1"
grep -q -e 'Sign in' -e 'name="csrf"' -e 'method="post"' "$T/body" && fail "read-only video page has a write form"

if [[ -z ${VT_NO_BROWSER:-} ]]; then
  note "the same in Chromium (tests/browser/manage.mjs)"
  command -v node > /dev/null || fail "node is missing: install nodejs (scripts/install-deps.sh)"
  [[ -d $ROOT/tests/browser/node_modules/playwright-core ]] ||
    fail "tests/browser/node_modules is missing: run bash scripts/setup.sh"
  RO=$B
  RO_PID=$SRV_PID
  SRV_PID=
  start_server --token-file "$T/token"
  gen_clip "$T/three.mp4" 3 'Third Clip'
  gen_clip "$T/four.mp4" 3 'Fourth Clip'
  shots=$ROOT/tests/out/screenshots
  rc=0
  VT_LIBRARY=$LIB timeout 300 node "$ROOT/tests/browser/manage.mjs" "$B" "$RO" "$T/token" "$T/three.mp4" \
    "$id1" "$shots" "$idu" "$T/four.mp4" || rc=$?
  kill "$RO_PID" 2> /dev/null || true
  wait "$RO_PID" 2> /dev/null || true
  [[ $rc == 0 ]] || fail "browser test exited $rc (server stderr: $(tail -c 500 "$T/srv.err"))"
fi
echo "all good"
