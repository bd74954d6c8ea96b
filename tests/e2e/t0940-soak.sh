#!/usr/bin/env bash
# A server soak: one `vidtheque serve` (read-write, with a token) answers a few thousand
# requests mixing every route (pages with their paging parameters, the JSON API and its
# list pages, search, frames, media whole and by Range, and the 400, 401, 404, 405, 416
# and 421 answers) from four keep-alive clients (tests/tools/soak.py). Every request
# must be answered, with the expected status, within a 10 s timeout (no stall), and
# memory must stay flat: after a warm-up, the largest VmRSS of the last third of the run
# at most SOAK_MARGIN_KB (1 MB) above the largest of the first third. The server's
# request threads each keep one library handle all along, so a statement cache that
# grew, or a statement never given back (the store asserts on both), shows here. It then
# exits 0 on SIGTERM (closing each handle asserts that no statement is still out).
# Asserts on counts and memory, never on time; bench/soak_bench.sh is the long version.
# alone: every request within a 10 s timeout, memory flat over the run
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || fail "python3 is needed"

# ---- two videos of three shots each, with 120 caption cues (more than one page) ----
bash "$ROOT/tests/fixtures/gen_soak.sh" "$T"
expect_exit 0 vt add "$T/talk.mp4" "$T/two.mp4"
read -r -d '' id1 id2 < "$T/out" || true
[[ -n $id1 && -n $id2 ]] || fail "two ids expected: $(cat "$T/out")"
[[ $(vt ls | grep -c ready) == 2 ]] || fail "not ready: $(vt ls)"

echo "soak-token-0123456789" > "$T/token"
start_server --token-file "$T/token"
note "server on $B, pid $SRV_PID"

# Under sanitizers memory is theirs (ASan's quarantine grows for a long while) and leaks
# are LeakSanitizer's to find at exit: the soak then checks answers only.
margin=${SOAK_MARGIN_KB:-1024}
full=$(dirname "$VIDTHEQUE")/vidtheque-full
# (whole outputs read, not grep -q: under pipefail its early exit fails the pipe)
syms=$(nm "$full" 2> /dev/null || true) libs=$(ldd "$full" 2> /dev/null || true)
if [[ $syms == *__asan_init* || $libs == *libasan* ]]; then
  note "sanitizer build: memory not checked"
  margin=100000000
fi
python3 "$ROOT/tests/tools/soak.py" "$PORT" "$SRV_PID" "$id1" "$id2" \
  --requests "${SOAK_REQUESTS:-5000}" --token-file "$T/token" --post-path "$T/two.mp4" \
  --margin-kb "$margin" || fail "soak: see the lines above"

# the server still answers and stops cleanly
curl -sf -o /dev/null "$B/api/videos" || fail "no answer after the soak"
stop_cleanly
grep -qi 'assert' "$T/srv.err" && fail "an assertion failed: $(cat "$T/srv.err")"
note "soak passed"
