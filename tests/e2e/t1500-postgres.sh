#!/usr/bin/env bash
# A library on PostgreSQL (init --db): the same generated talk added to it and to an
# SQLite library gives the same document (export, show, ls), serve answers its pages
# and API from PostgreSQL (503 while the server is down, the pages again once it is
# back), check and rm work there, and a library on PostgreSQL is
# handed by the front binary to vidtheque-full (the front links no libpq). Runs on
# VT_TEST_PG's server (tests/run-all.sh) or on a cluster of its own.
. "$(dirname "$0")/lib.sh"

pg_database vt_t1500
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }

SQ=$T/sqlite
PG=$T/lib # vt's library: the one on PostgreSQL
fixture gen_talk.sh "$T/talk" 1 > /dev/null
"$VIDTHEQUE" -q -L "$SQ" init
sq_id=$("$VIDTHEQUE" -q -L "$SQ" add "$T/talk/talk.mp4") || fail "add to the SQLite library"

# init writes the URL into the config; the directory gets no library.db
expect_exit 2 vt init --db "mysql://x@y/z"
grep -q "not a postgresql:// or postgres:// URL" "$T/err" || fail "bad --db: $(cat "$T/err")"
vt init --db "$url" || fail "init --db"
[[ $(sed -n 's/^db = //p' "$LIB/config") == "$url" ]] || fail "config db: $(cat "$LIB/config")"
[[ ! -e $LIB/library.db ]] || fail "a library.db beside a PostgreSQL library"
cur=$(($(sed -n 's/^#define VT_STORE_BASE_VERSION \([0-9]*\)$/\1/p' "$ROOT/lib/store/migrations.h") +
  $(grep -c '^    X([0-9]*,' "$ROOT/lib/store/migrations.h")))
[[ $(psql "$url" -Atc "SELECT schema_version FROM vt_meta") == "$cur" ]] || fail "schema version"
# another database for the same directory, or --db over an SQLite library: refused
expect_exit 1 vt init --db "${url}x"
expect_exit 1 "$VIDTHEQUE" -q -L "$SQ" init --db "$url"
vt init --db "$url" || fail "init --db again, same URL"

# on PostgreSQL add only registers and queues; a worker indexes
pg_id=$(vt add "$T/talk/talk.mp4") || fail "add to the PostgreSQL library"
[[ $(psql "$url" -Atc "SELECT count(*) FROM stages WHERE state = 'queued'") == 7 ]] ||
  fail "add on PostgreSQL should only queue"
vt worker --drain || fail "worker"
[[ $pg_id == "$sq_id" ]] || fail "ids differ: $pg_id vs $sq_id"
id=$pg_id
# the rows are in PostgreSQL, and the index rows carry their tokens
[[ $(psql "$url" -Atc "SELECT count(*) FROM videos") == 1 ]] || fail "videos row"
[[ $(psql "$url" -Atc "SELECT count(*) FROM docs WHERE source = 'screen' AND tsv <> ''") -gt 0 ]] ||
  fail "screen index rows with tokens"

# the same document from either backend, times and image folders aside
vt export "$id" > "$T/pg.json" || fail "export (PostgreSQL)"
"$VIDTHEQUE" -q -L "$SQ" export "$id" > "$T/sq.json" || fail "export (SQLite)"
normalize "$T/pg.json" > "$T/pg.norm"
normalize "$T/sq.json" > "$T/sq.norm"
cmp -s "$T/pg.norm" "$T/sq.norm" ||
  fail "export differs: $(diff <(python3 -m json.tool "$T/pg.norm") <(python3 -m json.tool "$T/sq.norm") | head -20)"
[[ $(json "$T/pg.json" "len(d['frames'])") -gt 3 ]] || fail "too few frames to compare"
for f in vtt srt txt; do
  cmp -s <(vt export "$id" --format $f) <("$VIDTHEQUE" -q -L "$SQ" export "$id" --format $f) ||
    fail "export --format $f differs"
done
# show: the same text once clock times and durations are blanked
strip_times() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}/DATE/g; s/ [0-9]+(\.[0-9]+)?s$/ Ns/; s|/r[0-9a-f]+/|/RUN/|g; s|'"$SQ"'|LIB|g; s|'"$LIB"'|LIB|g'; }
vt show "$id" | strip_times > "$T/pg.show"
"$VIDTHEQUE" -q -L "$SQ" show "$id" | strip_times > "$T/sq.show"
cmp -s "$T/pg.show" "$T/sq.show" || fail "show differs: $(diff "$T/pg.show" "$T/sq.show" | head -20)"
cmp -s <(vt ls) <("$VIDTHEQUE" -q -L "$SQ" ls) || fail "ls differs"

# check: the server answers (amcheck is not installed in this database: said, not failed)
"$VIDTHEQUE" -L "$LIB" check > "$T/check.out" 2> "$T/check.err" || fail "check: $(cat "$T/check.err")"
grep -q "not checked" "$T/check.err" || fail "check does not say what it could not check"

# serve: the library page and the API from PostgreSQL
start_server
curl -fsS "$B/" > "$T/home.html" || fail "GET /"
grep -q "$id" "$T/home.html" || fail "the library page does not list the video"
curl -fsS "$B/v/$id" > "$T/video.html" || fail "GET /v/ID"
curl -fsS "$B/api/videos/$id" > "$T/api.json" || fail "GET /api/videos/ID"
[[ $(json "$T/api.json" "d['id']") == "$id" ]] || fail "API document"
curl -fsS "$B/api/videos" > "$T/list.json" || fail "GET /api/videos"
[[ $(json "$T/list.json" "d['total']") == 1 ]] || fail "API listing"
# the server goes away and comes back: 503 saying so meanwhile, then the pages again (on
# a cluster of this test's own only: the suite's shared one must stay up; t1520 always)
cluster_dir=$PGDIR
if [[ -n $cluster_dir ]]; then
  bash "$ROOT/tests/pg/cluster.sh" stop "$cluster_dir" || fail "stop PostgreSQL"
  code=$(curl -s -o "$T/down.html" -w '%{http_code}' "$B/")
  [[ $code == 503 ]] || fail "GET / with PostgreSQL down: $code"
  grep -q "database is unavailable" "$T/down.html" || fail "the 503 page does not say why"
  code=$(curl -s -o "$T/down.json" -w '%{http_code}' "$B/api/videos/$id")
  [[ $code == 503 && $(json "$T/down.json" "d['error']['code']") == unavailable ]] ||
    fail "GET /api/videos/ID with PostgreSQL down: $code $(head -c 300 "$T/down.json")"
  bash "$ROOT/tests/pg/cluster.sh" start "$cluster_dir" > /dev/null || fail "start PostgreSQL"
  curl -fsS "$B/" > "$T/home2.html" || fail "GET / once PostgreSQL is back"
  grep -q "$id" "$T/home2.html" || fail "the library page after the outage"
  curl -fsS "$B/api/videos/$id" > /dev/null || fail "GET /api/videos/ID once PostgreSQL is back"
else
  note "on the suite's cluster: the outage is t1520's"
fi
stop_cleanly

# rm: the rows go, with the fuzzy keys of words only this video showed
[[ $(psql "$url" -Atc "SELECT count(*) FROM fuzzy") -gt 0 ]] || fail "no fuzzy keys were written"
vt rm "$id" || fail "rm"
for t in videos docs frames fuzzy phonetic; do
  [[ $(psql "$url" -Atc "SELECT count(*) FROM $t") == 0 ]] || fail "$t rows left after rm"
done
echo "all good"
