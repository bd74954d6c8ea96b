#!/usr/bin/env bash
# PostgreSQL going away and coming back (pg_ctl stop/start and restart) under a running
# server: while it is down every request that needs the catalog gets a 503 with a clear
# message and a Retry-After (never a crash, a hang or a 500), static files still come;
# once it is back the same server answers as before, without a restart of its own.
# Always on a cluster of its own: stopping the suite's shared one would break the others.
. "$(dirname "$0")/lib.sh"

# beside $T, not in it: the cluster's owner (nobody, when run as root) cannot enter $T
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/vt-pg.XXXXXX")
rc=0
admin=$(bash "$ROOT/tests/pg/cluster.sh" start "$PGDIR") || rc=$?
if ((rc == 77)); then
  note "no PostgreSQL server binaries here: nothing to test"
  exit 0
fi
((rc == 0)) || fail "cannot start a PostgreSQL cluster"
cleanup() {
  stop_server
  bash "$ROOT/tests/pg/cluster.sh" stop "$PGDIR" > /dev/null 2>&1 || true
  rm -rf "$PGDIR"
  [[ -n ${KEEP:-} ]] || rm -rf "$T"
}
trap cleanup EXIT
url=$admin

bash "$ROOT/tests/fixtures/gen_talk.sh" "$T/talk" 3 > /dev/null
vt init --db "$url" || fail "init --db"
id=$(vt add --wait "$T/talk/talk.mp4" 2> /dev/null || vt add "$T/talk/talk.mp4") || fail "add"
start_server
# every thread of the server holds a connection: ask enough pages to open several
for p in / "/v/$id" "/api/videos/$id" "/search?q=the" /api/videos; do
  curl -fsS -o /dev/null "$B$p" || fail "GET $p before the outage"
done

status() { curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' --max-time 20 "$B$1"; }
bash "$ROOT/tests/pg/cluster.sh" stop "$PGDIR" || fail "pg_ctl stop"
for p in "/v/$id" "/api/videos/$id" "/api/search?q=the" /; do
  code=$(status "$p")
  [[ $code == 503 ]] || fail "GET $p with PostgreSQL down: $code $(head -c 300 "$T/body")"
  grep -qi '^retry-after: 5' "$T/hdr" || fail "GET $p: no Retry-After"
  grep -q "database is unavailable" "$T/body" || fail "GET $p: unclear message: $(head -c 300 "$T/body")"
done
[[ $(status /static/app.css) == 200 ]] || fail "static files need no database"
kill -0 "$SRV_PID" || fail "the server died during the outage"

bash "$ROOT/tests/pg/cluster.sh" start "$PGDIR" > /dev/null || fail "pg_ctl start"
for p in "/v/$id" "/api/videos/$id" "/api/search?q=the" /; do
  code=$(status "$p")
  [[ $code == 200 ]] || fail "GET $p once PostgreSQL is back: $code $(head -c 300 "$T/body")"
done
# a restart between two requests: the next one reconnects
bash "$ROOT/tests/pg/cluster.sh" restart "$PGDIR" || fail "pg_ctl restart"
ok=0
for _ in 1 2 3; do
  code=$(status "/api/videos/$id")
  [[ $code == 200 ]] && ok=1 && break
  [[ $code == 503 ]] || fail "after a restart: $code $(head -c 300 "$T/body")"
done
((ok)) || fail "the server did not reconnect after pg_ctl restart"
stop_cleanly
echo "all good"
