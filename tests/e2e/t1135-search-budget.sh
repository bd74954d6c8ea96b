#!/usr/bin/env bash
# Each search has one time budget for its query's embedding (issue 27, failure 3): with the
# embeddings server (tests/tools/fake_openai.py on loopback) never answering, a default
# (hybrid) search gives the words' hits with a warning after one request cut at the budget
# (5 s), not three of 60 s each; and on the web server, searches that wait on that server
# run off the HTTP pool: while four of them wait, GET / and the pages answer at once
# (each answered before any of the searches; not a timing: an order). A SIGTERM while
# searches wait answers each of them and exits 0.
# alone: a 5 s time budget and answers in order while searches wait
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"

FAKE_PID=
stop_fake() { if [[ -n $FAKE_PID ]]; then kill "$FAKE_PID" 2> /dev/null; wait "$FAKE_PID" 2> /dev/null || true; fi; FAKE_PID=; }
trap 'stop_fake; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
: > "$T/mode"
python3 "$ROOT/tests/tools/fake_openai.py" --port-file "$T/port" --mode-file "$T/mode" --dim 8 \
  --arrivals-file "$T/arrivals" 2> "$T/fake.err" &
FAKE_PID=$!
for _ in $(seq 100); do [[ -s $T/port ]] && break; sleep 0.1; done
[[ -s $T/port ]] || fail "fake server did not start: $(cat "$T/fake.err")"
requests() { wc -l < "$T/arrivals"; }

expect_exit 0 vt init
expect_exit 0 vt config set text_embed.backend openai
expect_exit 0 vt config set text_embed.url "http://127.0.0.1:$(cat "$T/port")"
expect_exit 0 vt config set text_embed.model fake-embed
gen_clip "$T/clip.mp4" 3 'Quarterly budget review'
id=$(vt add "$T/clip.mp4")
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='text_embed'][0]['state']") == done ]] ||
  fail "text_embed not done: $(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='text_embed'][0]")"
vt search --json budget > "$T/s.json"
[[ $(json "$T/s.json" "d['mode']") == hybrid ]] || fail "not a hybrid search: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "len(d['hits']) > 0") == True ]] || fail "no hit for 'budget': $(cat "$T/s.json")"

# the server never answers (sleeps 10 minutes): words, a warning, one request
echo 'slow 600' > "$T/mode"
before=$(requests)
rc=0
timeout 60 "$VIDTHEQUE" -L "$LIB" search --json budget > "$T/s.json" 2> "$T/err" || rc=$?
((rc != 124)) || fail "a search waited over 60 s on a server that does not answer"
((rc == 0)) || fail "search exited $rc: $(cat "$T/err")"
[[ $(json "$T/s.json" "len(d['hits']) > 0") == True ]] || fail "no words' hits: $(cat "$T/s.json")"
grep -q 'meaning left out: .*timed out' "$T/s.json" "$T/err" ||
  fail "no warning that meaning was left out: $(cat "$T/s.json" "$T/err")"
[[ $(($(requests) - before)) == 1 ]] ||
  fail "$(($(requests) - before)) requests to the server in one search, not 1 (retries past the budget)"

# the web server: four searches wait on the server, the rest is answered meanwhile
start_server --read-only
pids=()
for i in 1 2 3 4; do
  (curl -s -o "$T/search$i.json" --max-time 60 "$B/api/search?q=budget&n=$i" && touch "$T/done$i") &
  pids+=($!)
done
# a video page that searches its video waits too, off the pool
curl -s -o "$T/vq.html" -w '%{http_code}' --max-time 60 "$B/v/$id?q=budget" > "$T/vq.code" &
pids+=($!)
sleep 1
for url in / /api/videos "/v/$id"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$B$url")
  [[ $code == 200 ]] || fail "GET $url while searches wait: $code"
  for i in 1 2 3 4; do
    [[ ! -e $T/done$i ]] || fail "GET $url was answered after a search that waits on the server"
  done
done
wait "${pids[@]}"
[[ $(cat "$T/vq.code") == 200 ]] || fail "the video page with q=budget: $(cat "$T/vq.code")"
for i in 1 2 3 4; do
  [[ -e $T/done$i ]] || fail "search $i did not answer"
  [[ $(json "$T/search$i.json" "len(d['hits']) > 0 and 'meaning left out' in d['warning']") == True ]] ||
    fail "search $i: $(cat "$T/search$i.json")"
done
stop_cleanly

# SIGTERM while searches wait: each is answered (its words, or 503 when it had not begun),
# no connection is left suspended, the server exits 0
start_server --read-only
pids=()
for i in 5 6 7 8 9 10; do
  curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 "$B/api/search?q=budget&n=$i" > "$T/code$i" &
  pids+=($!)
done
sleep 1
stop_cleanly
wait "${pids[@]}" || true
for i in 5 6 7 8 9 10; do
  [[ $(cat "$T/code$i") == 200 || $(cat "$T/code$i") == 503 ]] ||
    fail "a search waiting at SIGTERM got '$(cat "$T/code$i")'"
done
echo "ok: a search that waits on a dead server is bounded and holds no one else"
