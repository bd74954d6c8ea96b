#!/usr/bin/env bash
# The server survives a slow-headers (Slowloris) attack, bounded to 30 s: slowhttptest
# opens up to 400 connections from 127.0.0.1 at 100 a second and trickles a header line
# into each every 10 s. Meanwhile a normal client asks GET /api/videos once a second
# (curl --max-time 5) from another loopback address, 127.0.0.2, as a second host would:
# at least 90% must get 200. The attacker's own address is held to the per-IP limit
# (32 connections), so its other requests are refused during the attack; that is
# counted and printed, not asserted. Afterwards the server answers everyone and
# still exits cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"
command -v slowhttptest > /dev/null || fail "slowhttptest is missing: install it (scripts/install-deps.sh)"

ATK_PID=''
stop_all() {
  [[ -z $ATK_PID ]] || { kill "$ATK_PID" 2> /dev/null || true; wait "$ATK_PID" 2> /dev/null || true; }
  ATK_PID=
  stop_server
}
trap 'stop_all; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

gen_clip "$T/clip.mp4" 2 'Slow Client'
expect_exit 0 vt add "$T/clip.mp4"

start_server --read-only --deadline 4
probe() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$B/api/videos" || true; }

# the total deadline (--deadline 4): headers trickled in under the idle timeout but over
# 6 s are answered 408, not served
python3 - "$PORT" <<'PY' || fail "a request trickled over the deadline was served"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
for part in (b"GET /api/videos HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"X-A: 1\r\n", b"X-B: 2\r\n", b"\r\n"):
    s.sendall(part)
    time.sleep(1.5)
reply = s.recv(200).decode("latin-1")
print("# trickled request:", reply.splitlines()[0] if reply else "(closed)")
sys.exit(0 if reply.startswith("HTTP/1.1 408") else 1)
PY
[[ $(probe) == 200 && $(probe --interface 127.0.0.2) == 200 ]] ||
  fail "the server does not answer before the attack (127.0.0.2 usable as a source address?)"

# the attack: 30 s of slow headers
slowhttptest -c 400 -H -i 10 -r 100 -t GET -u "$B/" -x 24 -p 3 -l 30 > "$T/slow.log" 2>&1 &
ATK_PID=$!
sleep 2
ok=0 n=0 same_ok=0 codes=""
start=$(date +%s)
while (($(date +%s) - start < 26)); do
  c=$(probe --interface 127.0.0.2)
  n=$((n + 1)); codes+="$c "
  [[ $c == 200 ]] && ok=$((ok + 1))
  [[ $(probe) == 200 ]] && same_ok=$((same_ok + 1))
  kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the attack: $(tail -c 500 "$T/srv.err")"
  sleep 1
done
held=$(ss -Htn state established "( sport = :$PORT )" 2> /dev/null | wc -l || true)
note "during the attack: $ok/$n requests from 127.0.0.2 got 200 ($codes); $same_ok/$n from the attacker's 127.0.0.1; $held connections established"
wait "$ATK_PID" 2> /dev/null || true
ATK_PID=
sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$T/slow.log" | grep -E '^(connected|closed|error|service available):' | tail -n 4 |
  tr -s ' \t' ' ' | tr '\n' ';' | sed 's/^/# slowhttptest at the end: /'; echo
((n >= 10)) || fail "only $n probes ran during the attack"
((ok * 10 >= n * 9)) || fail "only $ok of $n normal requests succeeded during a slow-headers attack (need 90%): $codes"

# after: everyone is served again (the attacker's connections are closed with it)
for _ in $(seq 50); do [[ $(probe) == 200 ]] && break; sleep 0.2; done
[[ $(probe) == 200 ]] || fail "the server does not answer 127.0.0.1 after the attack"
[[ $(probe --interface 127.0.0.2) == 200 ]] || fail "the server does not answer 127.0.0.2 after the attack"
[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$B/") == 200 ]] || fail "GET / after the attack"
stop_cleanly
echo "all good"
