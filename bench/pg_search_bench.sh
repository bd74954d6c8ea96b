#!/usr/bin/env bash
# Search on PostgreSQL next to SQLite on the same synthetic rows (issue 15: p50/p99 at 1M
# cues, goal p99 <= 100 ms on PostgreSQL). Default 200 videos x 100 cues (20,000 cues, a
# minute or two); PG_BENCH_VIDEOS=10000 for 1,000,000 cues. PG_BENCH_URL: a server to use
# (a database there is created and dropped); otherwise a throwaway cluster (tests/pg).
#   bench/pg_search_bench.sh      env: PG_BENCH_VIDEOS, PG_BENCH_CUES (100), PG_BENCH_QUERIES (400)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile)
videos=${PG_BENCH_VIDEOS:-200} cues=${PG_BENCH_CUES:-100} queries=${PG_BENCH_QUERIES:-400}
t=$(mktemp -d)
cluster=
cleanup() {
  [[ -n $cluster ]] && tests/pg/cluster.sh stop "$cluster" >/dev/null 2>&1
  [[ -n $cluster ]] && rm -rf "$cluster"
  rm -rf "$t"
}
trap cleanup EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib bench/pg_search_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) -lm -pthread -o "$t/pg_search_bench"
if [[ -n ${PG_BENCH_URL:-} ]]; then
  base=$PG_BENCH_URL
else
  cluster=$(mktemp -d /tmp/vt-pgbench.XXXXXX)
  base=$(tests/pg/cluster.sh start "$cluster")
fi
db=vt_search_bench_$$
psql "$base" -qAtc "CREATE DATABASE $db" >/dev/null
url=${base/\/vidtheque\?//$db?}
[[ $url != "$base" ]] || { echo "pg_search_bench: cannot name a database in $base" >&2; exit 1; }
trap 'psql "$base" -qAtc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1; cleanup' EXIT
chmod 777 "$t"
"$t/pg_search_bench" gen "$t" "$url" "$videos" "$cues"
start=$(date +%s)
psql "$url" -v ON_ERROR_STOP=1 -q <<SQL
\\copy docs (video_id, source, ref, start_s, end_s, text, meta, tsv) from '$t/docs.copy'
CREATE TEMP TABLE p (term text, key text);
CREATE TEMP TABLE f (del text, term text);
\\copy p from '$t/phonetic.copy'
\\copy f from '$t/fuzzy.copy'
INSERT INTO phonetic SELECT * FROM p ON CONFLICT DO NOTHING;
INSERT INTO fuzzy SELECT * FROM f ON CONFLICT DO NOTHING;
VACUUM ANALYZE docs;
SQL
echo "loaded PostgreSQL in $(( $(date +%s) - start )) s: $(psql "$url" -qAtc 'SELECT count(*) FROM docs') rows" >&2
"$t/pg_search_bench" run "$t" "$url" "$queries"
