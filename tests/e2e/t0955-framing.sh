#!/usr/bin/env bash
# Strict HTTP framing (issue 27, failure 5; RFC 9112 3.2, 6.1 to 6.3): raw bytes on a socket
# (tests/tools/rawhttp.py). A request whose end could be read two ways is refused with 400
# and its connection closed, so nothing hidden in it is ever answered as a next request:
# two Content-Length (differing or not), Content-Length with Transfer-Encoding, a field
# name with a space before the colon, a Content-Length that is not digits, Transfer-
# Encoding in HTTP/1.0. Two Host headers, or none in HTTP/1.1, are a 400; a transfer
# coding other than chunked a 501; a body over 16 KiB a 413, chunked too, and closed.
# Well-framed requests, chunked bodies included, still share a kept-alive connection.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || fail "python3 is needed"
RAW=$ROOT/tests/tools/rawhttp.py

expect_exit 0 vt init
start_server
H='Host: 127.0.0.1\r\n'
SMUGGLED='GET /api/videos HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
bad=''
# check NAME EXPECTED REQUEST [rawhttp options]: what came back matches the pattern EXPECTED
# (lines joined by |)
check() {
  local name=$1 want=$2 req=$3 got
  shift 3
  got=$(python3 "$RAW" "$PORT" "$req" --wait 2 "$@" | paste -sd '|')
  # shellcheck disable=SC2053
  [[ $got == $want ]] || bad+="$name: got '$got', want '$want'; "
  note "$name: $got"
}
check 'two differing Content-Length' 'status 400 bad_framing|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Content-Length: 0\r\nContent-Length: ${#SMUGGLED}\r\n\r\n$SMUGGLED"
check 'two equal Content-Length' 'status 400 bad_framing|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Content-Length: 0\r\nContent-Length: 0\r\n\r\n$SMUGGLED"
check 'Content-Length with Transfer-Encoding' 'status 400 bad_framing|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$SMUGGLED"
check 'Transfer-Encoding then Content-Length' 'status 400 bad_framing|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n$SMUGGLED"
check 'a space before the colon' 'status 400 bad_framing|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Content-Length : ${#SMUGGLED}\r\n\r\n$SMUGGLED"
# (libmicrohttpd refuses this one itself, with a page of its own)
check 'Content-Length +5' 'status 400*|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Content-Length: +5\r\n\r\nhello$SMUGGLED"
check 'Transfer-Encoding in HTTP/1.0' 'status 400 bad_framing|closed' \
  "POST /api/videos HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n$SMUGGLED"
check 'two Host headers' 'status 400 bad_framing|closed' \
  "GET /api/videos HTTP/1.1\r\n${H}Host: elsewhere.example\r\n\r\n$SMUGGLED"
check 'no Host in HTTP/1.1' 'status 400 bad_framing|closed' "GET /api/videos HTTP/1.1\r\n\r\n$SMUGGLED"
check 'Transfer-Encoding gzip, chunked' 'status 501 not_implemented|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n$SMUGGLED"
check 'a 20,000-byte chunked body' 'status 413 too_large|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n{CHUNKED:20000}$SMUGGLED"
check 'a 17,000-byte chunked body on a kept-alive connection' 'status 200|status 413 too_large|closed' \
  "GET /api/videos HTTP/1.1\r\n${H}\r\n" --then \
  "POST /api/videos HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n{CHUNKED:17000}$SMUGGLED"
check 'a 20,000-byte Content-Length' 'status 413 too_large|closed' \
  "POST /api/videos HTTP/1.1\r\n${H}Content-Length: 20000\r\n\r\n{BODY:20000}"

# well framed: kept alive, chunked bodies read whole
check 'two requests kept alive' 'status 200|status 200|open' "$SMUGGLED" --then "$SMUGGLED"
check 'a small chunked body' 'status 200|status 200|open' \
  "GET /api/videos HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n{CHUNKED:3000}" --then "$SMUGGLED"
[[ -z $bad ]] || fail "$bad"
grep -q 'request(s) refused' "$T/srv.err" && fail "the count is printed before the end"
stop_cleanly
grep -q '^vidtheque: 12 request(s) refused for their framing or size$' "$T/srv.err" ||
  fail "no count of refused requests at exit: $(tail -c 400 "$T/srv.err")"
echo "ok: framing errors refused and their connections closed"
