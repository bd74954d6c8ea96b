#!/usr/bin/env bash
# Search on PostgreSQL next to SQLite on the same synthetic rows (issue 15: p50/p99 at 1M
# cues, goal p99 <= 100 ms on PostgreSQL). Default 200 videos x 100 cues (20,000 cues, a
# minute or two); PG_BENCH_VIDEOS=10000 for 1,000,000 cues. PG_BENCH_URL: a server to use
# (a database there is created and dropped); otherwise a throwaway cluster (tests/pg).
# PG_BENCH_KEEP=DIR (a new or kept directory directly under /tmp): the throwaway cluster
# and the SQLite rows live there and are kept, so a second run of the same size only
# searches (1M cues take long to generate and load).
# The queries run once unmeasured first (PG_BENCH_WARM=0: not), on handles of their own.
#   bench/pg_search_bench.sh      env: PG_BENCH_VIDEOS, PG_BENCH_CUES (100), PG_BENCH_QUERIES (400)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile) flite=$(sed -n 's/^FLITE_LIBS = //p' Makefile)
videos=${PG_BENCH_VIDEOS:-200} cues=${PG_BENCH_CUES:-100} queries=${PG_BENCH_QUERIES:-400}
keep=${PG_BENCH_KEEP:-}
t=$(mktemp -d)
cluster= db=vt_search_bench_$$ base=
if [[ -n $keep ]]; then
  [[ -z ${PG_BENCH_URL:-} ]] || { echo "pg_search_bench: PG_BENCH_KEEP is for the throwaway cluster, not PG_BENCH_URL" >&2; exit 2; }
  [[ $(dirname "$keep") == /tmp ]] || { echo "pg_search_bench: PG_BENCH_KEEP must be a directory directly under /tmp" >&2; exit 2; }
  mkdir -p "$keep/rows"
  db=vt_search_bench
fi
cleanup() {
  [[ -n $cluster ]] && tests/pg/cluster.sh stop "$cluster" >/dev/null 2>&1
  [[ -n $cluster && -z $keep ]] && rm -rf "$cluster"
  rm -rf "$t"
}
drop() {
  [[ -z $keep && -n $base ]] && psql "$base" -qAtc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
  cleanup
}
trap drop EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/pg_search_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) $flite -lm -pthread -o "$t/pg_search_bench"
if [[ -n ${PG_BENCH_URL:-} ]]; then
  base=$PG_BENCH_URL
else
  cluster=${keep:-$(mktemp -d /tmp/vt-pgbench.XXXXXX)}
  base=$(tests/pg/cluster.sh start "$cluster")
fi
url=${base/\/vidtheque\?//$db?}
[[ $url != "$base" ]] || { echo "pg_search_bench: cannot name a database in $base" >&2; exit 1; }
rows=${keep:+$keep/rows}
rows=${rows:-$t}
size="$videos x $cues"
if [[ -n $keep && -f $rows/size && $(cat "$rows/size") == "$size" ]]; then
  echo "pg_search_bench: the rows kept in $keep ($size)" >&2
else
  [[ -z $keep ]] || { rm -rf "$rows"/* && psql "$base" -qAtc "DROP DATABASE IF EXISTS $db" >/dev/null; }
  psql "$base" -qAtc "CREATE DATABASE $db" >/dev/null
  chmod 777 "$rows"
  "$t/pg_search_bench" gen "$rows" "$url" "$videos" "$cues"
  start=$(date +%s)
  psql "$url" -v ON_ERROR_STOP=1 -q <<SQL
\\copy docs (video_id, source, ref, start_s, end_s, text, meta, tsv) from '$rows/docs.copy'
CREATE TEMP TABLE p (term text, key text);
CREATE TEMP TABLE f (del text, term text);
\\copy p from '$rows/phonetic.copy'
\\copy f from '$rows/fuzzy.copy'
INSERT INTO phonetic SELECT * FROM p ON CONFLICT DO NOTHING;
INSERT INTO fuzzy SELECT * FROM f ON CONFLICT DO NOTHING;
VACUUM ANALYZE docs;
SQL
  rm -f "$rows"/*.copy
  echo "loaded PostgreSQL in $(( $(date +%s) - start )) s: $(psql "$url" -qAtc 'SELECT count(*) FROM docs') rows" >&2
  [[ -z $keep ]] || echo "$size" >"$rows/size"
fi
[[ -r /proc/loadavg ]] && echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) cores"
"$t/pg_search_bench" run "$rows" "$url" "$queries"
[[ -r /proc/loadavg ]] && echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
