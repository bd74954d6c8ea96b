#!/usr/bin/env bash
# Slow, many and long-lived clients, with the limits shortened (--head-timeout 2
# --deadline 4 --idle-timeout 4 --max-connections 40) so the test takes under a minute.
# tests/tools/slowclient.py plays the clients from several loopback addresses:
# - a head trickled a line every 0.5 s is cut with 408 within the head timeout, on a new
#   connection and on a keep-alive one after a request and an idle pause; a body trickled
#   a byte every 0.5 s, at the request deadline;
# - a keep-alive connection asking every 2.5 s (longer than the head timeout) for 9 s
#   (longer than the deadline and the idle timeout) gets 200 every time: the clocks are
#   per request, not per connection;
# - 6 addresses x 10 slow-header connections (60, over the budget of 40) that reconnect as
#   soon as they are cut do not lock out a client from a fresh address (127.0.0.50);
# - slowhttptest, from 127.0.0.1, is held to the per-IP limit while 127.0.0.2 is served.
# Afterwards the server answers everyone and still exits cleanly on SIGTERM.
# alone: the server's clocks shortened to seconds, trickled clients
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"
command -v python3 > /dev/null || fail "python3 is needed"
command -v slowhttptest > /dev/null || fail "slowhttptest is missing: install it (scripts/install-deps.sh)"
SLOW=$ROOT/tests/tools/slowclient.py

ATK_PID=''
stop_all() {
  [[ -z $ATK_PID ]] || { kill "$ATK_PID" 2> /dev/null || true; wait "$ATK_PID" 2> /dev/null || true; }
  ATK_PID=
  stop_server
}
trap 'stop_all; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

gen_clip "$T/clip.mp4" 2 'Slow Client'
expect_exit 0 vt add "$T/clip.mp4"

# the limits are checked
for bad in '--head-timeout 0' '--idle-timeout 3601' '--max-connections 7' '--deadline x'; do
  # shellcheck disable=SC2086
  expect_exit 2 "$VIDTHEQUE" -L "$LIB" serve $bad
  grep -q -- "${bad%% *} wants" "$T/err" || fail "serve $bad: $(cat "$T/err")"
done

start_server --read-only --head-timeout 2 --deadline 4 --idle-timeout 4 --max-connections 40
probe() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$B/api/videos" || true; }
[[ $(probe) == 200 && $(probe --interface 127.0.0.2) == 200 ]] ||
  fail "the server does not answer before the attacks (127.0.0.2 usable as a source address?)"

# at once, as they hold one connection each: trickled heads and bodies are cut at their
# deadline (+1.5 s: the reaper's tick, a busy machine); a keep-alive connection is timed per
# request, not per connection (idle gaps over the head timeout, a life over the deadline)
python3 "$SLOW" trickle "$PORT" --every 0.5 --within 3.5 --src 127.0.0.3 > "$T/c1" 2>&1 &
c1=$!
python3 "$SLOW" trickle "$PORT" --every 0.5 --within 3.5 --pause 3 > "$T/c2" 2>&1 &
c2=$!
python3 "$SLOW" trickle "$PORT" --every 0.5 --within 5.5 --body > "$T/c3" 2>&1 &
c3=$!
python3 "$SLOW" keepalive "$PORT" --for 9 --every 2.5 > "$T/c4" 2>&1 &
c4=$!
bad=''
wait $c1 || bad+="a head trickled a line every 0.5 s was not cut within the 2 s head timeout; "
wait $c2 || bad+="a head trickled on a keep-alive connection was not cut within the head timeout; "
wait $c3 || bad+="a body trickled a byte every 0.5 s was not cut at the 4 s deadline; "
wait $c4 || bad+="a keep-alive connection making quick requests was cut or refused; "
cat "$T/c1" "$T/c2" "$T/c3" "$T/c4"
[[ -z $bad ]] || fail "$bad"

# many slow connections from many addresses, over the budget: a fresh address is served
rc=0
python3 "$SLOW" flood "$PORT" --addrs 6 --per-addr 10 --every 1 --for 6 --warmup 1.5 \
  --probe-src 127.0.0.50 --probe-timeout 3 --cut-within 3.5 || rc=$?
((rc != 2)) || fail "cannot use 127.0.0.2..127.0.0.7 and 127.0.0.50 as source addresses"
((rc == 0)) || fail "slow connections from 6 addresses locked out a fresh address"
kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the attacks: $(tail -c 500 "$T/srv.err")"

# slowhttptest: 200 connections from 127.0.0.1, a header line every 3 s; 127.0.0.1 is held to
# the per-IP limit (64), so its own other requests may be refused: counted, not asserted
slowhttptest -c 200 -H -i 3 -r 100 -t GET -u "$B/" -x 24 -p 3 -l 9 > "$T/slow.log" 2>&1 &
ATK_PID=$!
sleep 2
ok=0 n=0 same_ok=0 codes=""
start=$(date +%s)
while (($(date +%s) - start < 6)); do
  c=$(probe --interface 127.0.0.2)
  n=$((n + 1)); codes+="$c "
  [[ $c == 200 ]] && ok=$((ok + 1))
  [[ $(probe) == 200 ]] && same_ok=$((same_ok + 1))
  kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the attack: $(tail -c 500 "$T/srv.err")"
  sleep 0.5
done
note "during slowhttptest: $ok/$n requests from 127.0.0.2 got 200 ($codes); $same_ok/$n from the attacker's 127.0.0.1"
wait "$ATK_PID" 2> /dev/null || true
ATK_PID=
sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$T/slow.log" | grep -E '^(connected|closed|error|service available):' | tail -n 4 |
  tr -s ' \t' ' ' | tr '\n' ';' | sed 's/^/# slowhttptest at the end: /'; echo
((n >= 4)) || fail "only $n probes ran during the attack"
((ok * 10 >= n * 9)) || fail "only $ok of $n normal requests succeeded during a slow-headers attack (need 90%): $codes"

# after: everyone is served again (the attacker's connections are closed with it)
for _ in $(seq 50); do [[ $(probe) == 200 ]] && break; sleep 0.2; done
[[ $(probe) == 200 ]] || fail "the server does not answer 127.0.0.1 after the attacks"
[[ $(probe --interface 127.0.0.2) == 200 ]] || fail "the server does not answer 127.0.0.2 after the attacks"
[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$B/") == 200 ]] || fail "GET / after the attacks"
stop_cleanly
grep -q 'request(s) timed out' "$T/srv.err" || fail "the server did not report the requests it timed out"
echo "all good"
