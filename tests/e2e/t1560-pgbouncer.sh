#!/usr/bin/env bash
# A library on PostgreSQL through PgBouncer in transaction mode (issue 26, failure 7):
# with the URL's pooler=transaction, add, a worker of 4 threads and search work through a
# pool of 2 server sessions (no named statement or session setting outlives a
# transaction: without it the second transaction on another session fails with
# `prepared statement "vt1" ...`); an idle worker finds new work by polling, or through
# a LISTEN session of its own (listen_host), which goes to the server directly; a bad
# option is one error line. Debian's pgbouncer on a loopback port in front of the test's
# database; without pgbouncer installed, a note and nothing tested.
. "$(dirname "$0")/lib.sh"

pg_database vt_t1560
psql() { command psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# the server's socket directory, from the URL's host parameter
sock=$(python3 -c 'import sys,urllib.parse as u; print(u.parse_qs(u.urlsplit(sys.argv[1]).query)["host"][0])' "$url")
[[ -S $sock/.s.PGSQL.5432 ]] || fail "no server socket in $sock"

# pgbouncer in transaction mode, 2 server sessions for the database
PB=$(mktemp -d "${TMPDIR:-/tmp}/vt-pgb.XXXXXX")
trap 'bash "$ROOT/tests/pg/pgbouncer.sh" stop "$PB"; rm -rf "$PB"; stop_server; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
rc=0
port=$(bash "$ROOT/tests/pg/pgbouncer.sh" start "$PB" "$sock" "$PG_DB" 2) || rc=$?
if ((rc == 77)); then
  note "no pgbouncer here (apt-get install pgbouncer): nothing to test"
  exit 0
fi
((rc == 0)) || fail "pgbouncer did not start"
purl="postgresql://vidtheque@127.0.0.1:$port/$PG_DB?pooler=transaction"

note "a bad option: one error line, nothing written to the database"
expect_exit 1 "$VIDTHEQUE" -q -L "$T/bad1" init --db "postgresql://vidtheque@127.0.0.1:$port/$PG_DB?pooler=statement"
one_line_err
grep -q "pooler=statement: expected transaction, session or none" "$T/err" || fail "bad pooler: $(cat "$T/err")"
expect_exit 1 "$VIDTHEQUE" -q -L "$T/bad2" init --db "postgresql://vidtheque@127.0.0.1:$port/$PG_DB?listen_port=5432"
one_line_err
grep -q "go with pooler=transaction" "$T/err" || fail "listen_port alone: $(cat "$T/err")"
[[ $(psql "$url" -c "SELECT count(*) FROM pg_class WHERE relname = 'vt_meta'") == 0 ]] ||
  fail "a refused URL created the schema"

note "init, add and a worker of 4 threads through 2 pooled server sessions"
vt init --db "$purl" || fail "init through pgbouncer: $(cat "$T/err" 2> /dev/null)"
for i in 1 2 3; do
  ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Pooled river $i':fontsize=28:x=20:y=60" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v$i.mp4"
  vt add --queue "$T/v$i.mp4" > /dev/null || fail "add --queue $i through pgbouncer"
done
vt worker --drain --concurrency 4 2> "$T/w.err" || fail "worker through pgbouncer: $(tail -5 "$T/w.err")"
grep -qi "prepared statement\|database:" "$T/w.err" && fail "worker errors: $(grep -i 'prepared statement\|database:' "$T/w.err" | head -3)"
[[ $(psql "$url" -c "SELECT count(*) FROM videos WHERE index_state = 'ready'") == 3 ]] ||
  fail "videos not ready: $(psql "$url" -c "SELECT id, index_state FROM videos")"
[[ $(psql "$url" -c "SELECT count(*) FROM stages WHERE state NOT IN ('done', 'skipped')") == 0 ]] ||
  fail "stages left: $(psql "$url" -c "SELECT video_id, name, state, error FROM stages WHERE state NOT IN ('done', 'skipped')")"
# the pool held the server sessions: never more than its 2 for this database
n=$(psql "$url" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$PG_DB' AND application_name = 'vidtheque'")
((n <= 2)) || fail "$n server sessions for a pool of 2"
vt search river > "$T/hits" || fail "search through pgbouncer"
[[ $(grep -c "Pooled \[river\]" "$T/hits") == 3 ]] || fail "search did not find the 3 videos: $(head -8 "$T/hits")"

note "an idle worker finds new work by polling"
"$VIDTHEQUE" -q -L "$LIB" worker --concurrency 1 2> "$T/w2.err" &
w=$!
sleep 1
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Polled lake':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v4.mp4"
id4=$(vt add --queue "$T/v4.mp4") || fail "add --queue 4"
for _ in $(seq 600); do
  [[ $(psql "$url" -c "SELECT index_state FROM videos WHERE id = '$id4'") == ready ]] && break
  sleep 0.1
done
[[ $(psql "$url" -c "SELECT index_state FROM videos WHERE id = '$id4'") == ready ]] ||
  fail "the polling worker did not index the new video: $(tail -3 "$T/w2.err")"
kill -TERM "$w"
wait "$w" || fail "polling worker exit"

note "listen_host: the worker's LISTEN (its own channel, registered in waiters) goes to the server on a session of its own"
sed -i "s|^db = .*|db = $purl\&listen_host=$(python3 -c 'import sys,urllib.parse as u; print(u.quote(sys.argv[1], safe=""))' "$sock")\&listen_port=5432|" "$LIB/config"
"$VIDTHEQUE" -q -L "$LIB" worker --concurrency 1 2> "$T/w3.err" &
w=$!
for _ in $(seq 100); do
  [[ $(psql "$url" -c "SELECT count(*) FROM pg_stat_activity a WHERE datname = '$PG_DB' AND query LIKE '%LISTEN vidtheque_w%' AND client_addr IS NULL AND EXISTS (SELECT 1 FROM waiters w WHERE w.pid = a.pid)") -ge 1 ]] && break
  sleep 0.1
done
[[ $(psql "$url" -c "SELECT count(*) FROM pg_stat_activity a WHERE datname = '$PG_DB' AND query LIKE '%LISTEN vidtheque_w%' AND client_addr IS NULL AND EXISTS (SELECT 1 FROM waiters w WHERE w.pid = a.pid)") -ge 1 ]] ||
  fail "no direct LISTEN session: $(tail -3 "$T/w3.err")"
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Woken sea':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v5.mp4"
id5=$(vt add --queue "$T/v5.mp4") || fail "add --queue 5"
for _ in $(seq 600); do
  [[ $(psql "$url" -c "SELECT index_state FROM videos WHERE id = '$id5'") == ready ]] && break
  sleep 0.1
done
[[ $(psql "$url" -c "SELECT index_state FROM videos WHERE id = '$id5'") == ready ]] ||
  fail "the listening worker did not index the new video: $(tail -3 "$T/w3.err")"
kill -TERM "$w"
wait "$w" || fail "listening worker exit"
echo "ok"
