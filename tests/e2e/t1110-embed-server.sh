#!/usr/bin/env bash
# The "openai" text-embedding backend (lib/ml/embed_openai.c over lib/base/http.c) against the fake
# server of tests/tools/fake_openai.py on loopback: vectors come back in input order (the
# fake answers in reverse order with indexes), L2-normalised, equal to the fake's documented
# hash vectors or to the known vectors it is given, across several batches, with blank texts
# as zero vectors; the API key is sent as a Bearer token and never shown. Then every
# misbehaviour gives one error line with the right code: VT_EIO (-1, may pass: timeout, 500s,
# truncated or non-JSON answer, server down) or VT_EINVAL (-2, will not: 404 model missing,
# wrong dimension, wrong count, a non-http URL); 500s and a 429 that clear up within the
# retries succeed. Driver: tests/tools/embeddump.c, linked against the library under test.
. "$(dirname "$0")/lib.sh"

libdir=$(dirname "$VIDTHEQUE")
[[ -f $libdir/libvidtheque.a ]] || fail "'$libdir/libvidtheque.a': missing (run make first)"
nm "$libdir/libvidtheque.a" > "$T/nm" 2> /dev/null || true
grep -q ' T vt_embed_open$' "$T/nm" ||
  fail "libvidtheque.a has no vt_embed_open (lib/ml/embed.c, the dispatcher)"
build_tool embeddump

FAKE_PID=
stop_fake() { if [[ -n $FAKE_PID ]]; then kill "$FAKE_PID" 2> /dev/null; wait "$FAKE_PID" 2> /dev/null || true; fi; FAKE_PID=; }
trap 'stop_fake; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
echo '{"known text": [3, 4, 0, 0, 0, 0, 0, 0]}' > "$T/known.json"
: > "$T/mode"
python3 "$ROOT/tests/tools/fake_openai.py" --port-file "$T/port" --mode-file "$T/mode" --dim 8 \
  --vectors "$T/known.json" --api-key sekrit-key-42 2> "$T/fake.err" &
FAKE_PID=$!
for _ in $(seq 100); do [[ -s $T/port ]] && break; sleep 0.1; done
[[ -s $T/port ]] || fail "fake server did not start: $(cat "$T/fake.err")"
BASE=http://127.0.0.1:$(cat "$T/port")
export EMBEDDUMP_API_KEY=sekrit-key-42
ed() { "$T/embeddump" "$@"; }

# ---- vectors, order, batches, normalisation ----
printf '%s\n' "hello" "the cat sat on the mat" "" "known text" "a dog" "fellow americans" \
  "   " "ünïcode ☃ text" > "$T/texts"
ed -b 2 openai fake-embed "$BASE" < "$T/texts" > "$T/out.json" 2> "$T/err" ||
  fail "embeddump: $(cat "$T/err")"
python3 - "$T/texts" "$T/out.json" "$BASE" << 'PY' || fail "vectors differ from the fake's"
import hashlib, json, math, sys
texts = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
d = json.load(open(sys.argv[2]))
assert d["dim"] == 8, d["dim"]
assert d["model"] == "openai fake-embed at %s (8 d)" % sys.argv[3], d["model"]
assert d["id"] == "openai:fake-embed@%s" % sys.argv[3], d["id"]
assert len(d["vectors"]) == len(texts)
for t, v in zip(texts, d["vectors"]):
    if not t.strip():
        want = [0.0] * 8
    elif t == "known text":
        want = [0.6, 0.8] + [0.0] * 6
    else:
        raw = [(hashlib.sha256((t + "#0").encode()).digest()[j] - 127.5) / 127.5 for j in range(8)]
        n = math.sqrt(sum(x * x for x in raw))
        want = [x / n for x in raw]
    assert all(abs(a - b) < 1e-5 for a, b in zip(v, want)), (t, v, want)
PY
# one text per request works the same (many batches)
ed -b 1 openai fake-embed "$BASE/" < "$T/texts" > "$T/out1.json" 2> "$T/err" ||
  fail "embeddump -b 1: $(cat "$T/err")"
[[ $(json "$T/out1.json" 'd["vectors"]') == "$(json "$T/out.json" 'd["vectors"]')" ]] ||
  fail "batch size changes the vectors"

# ---- failures: one line, the right code ----
# expect_fail MODE CODE PATTERN [embeddump args...]
expect_fail() {
  local mode=$1 code=$2 pat=$3; shift 3
  echo "$mode" > "$T/mode"
  expect_exit 1 "$T/embeddump" "$@" < "$T/texts"
  one_line_err
  grep -q "^embeddump: code $code: " "$T/err" || fail "$mode: code not $code: $(cat "$T/err")"
  grep -qi -- "$pat" "$T/err" || fail "$mode: no '$pat' in: $(cat "$T/err")"
  grep -q sekrit "$T/err" && fail "$mode: the API key is in the message"
  note "$mode: $(cat "$T/err")"
}
expect_fail "slow 5" -1 "timed out" -t 1 -r 1 openai fake-embed "$BASE"
expect_fail "fail500 9" -1 "HTTP 500: internal trouble" -r 2 openai fake-embed "$BASE"
expect_fail truncated -1 "not JSON" openai fake-embed "$BASE"
expect_fail garbage -1 "not JSON" openai fake-embed "$BASE"
expect_fail wrongdim -2 "wrong dimension" openai fake-embed "$BASE"
expect_fail wrongcount -2 "vectors for" -b 4 openai fake-embed "$BASE"
expect_fail notfound -2 "HTTP 404: model .* not found" openai fake-embed "$BASE"
expect_fail ok -2 "HTTP 404: model \"nomodel\" not found" openai nomodel "$BASE"
expect_fail ok -2 "not an http(s) URL" openai fake-embed "ftp://127.0.0.1:1"
EMBEDDUMP_API_KEY=wrong expect_fail ok -2 "HTTP 401: invalid api key" openai fake-embed "$BASE"

# ---- what passes within the retries ----
echo "fail500 2" > "$T/mode"
ed -r 3 openai fake-embed "$BASE" < "$T/texts" > "$T/out2.json" 2> "$T/err" ||
  fail "two 500s then success: $(cat "$T/err")"
[[ $(json "$T/out2.json" 'd["vectors"]') == "$(json "$T/out.json" 'd["vectors"]')" ]] ||
  fail "vectors after retries differ"
echo "429" > "$T/mode"
ed openai fake-embed "$BASE" < "$T/texts" > /dev/null 2> "$T/err" ||
  fail "429 with Retry-After: 1 then success: $(cat "$T/err")"

# ---- the server gone ----
stop_fake
expect_fail ok -1 "$BASE" -r 2 openai fake-embed "$BASE"
note "ok"
