#!/usr/bin/env bash
# alone: holds the role to one connection while workers start
# A worker's stage thread that cannot reach the database when it opens its handle (the
# worker started, or still starting, as an outage begins) tries again with back-off, as
# its loop does once open, instead of ending and taking the worker down with it. Made
# certain, not timed: the library's role may hold one connection (the heartbeat's), so the
# stage thread's is refused ("too many connections": the server's, not the URL's fault);
# once the limit is lifted the thread opens, indexes the queued video, and the worker,
# --drain, exits 0 having said the outage once and its end. (Found under the sanitizers:
# a slow start met t1571's outage and the worker died.)
# Always on a cluster of its own (a role of the test's own, dropped with it).
. "$(dirname "$0")/lib.sh"

pg_database vt_t1576 own
role=vt_t1576_lim
psql -X -q -v ON_ERROR_STOP=1 "$admin" -c "CREATE ROLE $role LOGIN" \
  -c "ALTER DATABASE $PG_DB OWNER TO $role" > /dev/null || fail "cannot make the role"
[[ $url == *vidtheque@* ]] || fail "unexpected URL form: $url"
vt init --db "${url/vidtheque@/$role@}" || fail "init --db"
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Basalt ferries':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/a.mp4"
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/a.mp4") || fail "add --queue"
[[ -n $id ]] || fail "add printed no id"

psql -X -q "$admin" -c "ALTER ROLE $role CONNECTION LIMIT 1" > /dev/null || fail "connection limit"
"$VIDTHEQUE" -L "$LIB" worker --drain --concurrency 1 2> "$T/w.err" &
w=$!
for _ in $(seq 150); do
  grep -q 'database unavailable' "$T/w.err" && break
  kill -0 "$w" 2> /dev/null || break
  sleep 0.1
done
grep -q 'too many connections' "$T/w.err" ||
  fail "the stage thread's connection was not refused: $(cat "$T/w.err")"
sleep 1
kill -0 "$w" 2> /dev/null || { wait "$w" || true; fail "the worker ended when its stage thread could not connect: $(cat "$T/w.err")"; }
psql -X -q "$admin" -c "ALTER ROLE $role CONNECTION LIMIT -1" > /dev/null || fail "lift the limit"
rc=0
timeout 60 tail --pid="$w" -f /dev/null || fail "the worker did not finish after the limit was lifted: $(cat "$T/w.err")"
wait "$w" || rc=$?
((rc == 0)) || fail "worker exited $rc: $(cat "$T/w.err")"
n=$(grep -c 'database unavailable' "$T/w.err" || true)
((n == 1)) || fail "the outage was said $n times (once expected): $(cat "$T/w.err")"
grep -q 'database back after' "$T/w.err" || fail "the end of the outage was not said: $(cat "$T/w.err")"
[[ $(vt ls | awk -F'\t' -v id="$id" '$1 == id {print $4 "/" $5}') == ready/ok ]] ||
  fail "the queued video was not indexed: $(vt ls)"
vt search basalt | grep -q "$id" || fail "search does not find the video's text"
echo "all good"
