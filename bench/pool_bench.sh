#!/usr/bin/env bash
# Server connections of a fleet (issue 26, "Measured"): POOL_WORKERS (100) idle
# `vidtheque worker --concurrency 1` processes on one library, first straight to
# PostgreSQL (DIRECT_WORKERS of them, 10 by default: the test cluster allows 200
# connections), then all of them through PgBouncer in transaction mode
# (tests/pg/pgbouncer.sh, a pool of POOL_SIZE, 10, server sessions) with the URL's
# pooler=transaction. Prints the server sessions of the library's database
# (pg_stat_activity) per worker direct, the total through the pool, and the ratio of what
# the same fleet would hold direct over what it holds through the pool (the baseline is
# the direct count measured in the same run). Idle workers poll the database's version
# through the pool (no LISTEN session configured): the statements a second they send is
# printed too.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${VIDTHEQUE:=$PWD/build/rel/vidtheque}"
. bench/lib.sh
N=${POOL_WORKERS:-100} ND=${DIRECT_WORKERS:-10} POOL=${POOL_SIZE:-10}
t=$(mktemp -d /tmp/vt-pool-bench.XXXXXX)
chmod 755 "$t" # pgbouncer runs as nobody when we are root
pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  pids=()
}
trap 'stop_all; bash tests/pg/pgbouncer.sh stop "$t/pgb" > /dev/null 2>&1; bench_pg_cleanup; rm -rf "$t"' EXIT
if ! bench_pg_start vt_pbench; then
  echo "pool_bench.sh: no PostgreSQL: nothing to measure"
  exit 0
fi
url=$(bench_pg_newdb)
db=$(python3 -c 'import sys,urllib.parse as u; print(u.urlsplit(sys.argv[1]).path.lstrip("/"))' "$url")
sock=$(python3 -c 'import sys,urllib.parse as u; print(u.parse_qs(u.urlsplit(sys.argv[1]).query)["host"][0])' "$url")
sessions() { psql -X -At "$url" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db' AND pid <> pg_backend_pid()"; }
calls() { psql -X -At "$url" -c "SELECT coalesce(sum(xact_commit + xact_rollback), 0) FROM pg_stat_database WHERE datname = '$db'"; }
"$VIDTHEQUE" -q -L "$t/lib" init --db "$url"
# fleet N LIBDIR: N idle workers of one thread each; then wait until their sessions settle
fleet() {
  local i
  for ((i = 0; i < $1; i++)); do
    "$VIDTHEQUE" -q -L "$2" worker --concurrency 1 2>> "$t/workers.err" &
    pids+=($!)
  done
  sleep 5
}

fleet "$ND" "$t/lib"
direct=$(sessions)
stop_all
per=$(python3 -c "print(f'{$direct / $ND:.1f}')")
echo "direct:       $ND workers hold $direct server sessions ($per a worker; $N workers: $(python3 -c "print(round($direct / $ND * $N))"))"

rc=0
port=$(bash tests/pg/pgbouncer.sh start "$t/pgb" "$sock" "$db" "$POOL") || rc=$?
if ((rc == 77)); then
  echo "pool_bench.sh: no pgbouncer here (apt-get install pgbouncer): the pooled fleet not measured"
  exit 0
fi
((rc == 0)) || exit 1
mkdir -p "$t/plib"
echo "db = postgresql://vidtheque@127.0.0.1:$port/$db?pooler=transaction" > "$t/plib/config"
fleet "$N" "$t/plib"
c0=$(calls)
sleep 5
c1=$(calls)
pooled=$(sessions)
clients=$(wc -l < <(ss -Htn state established "( dport = :$port )" 2> /dev/null || true))
stop_all
grep -m3 -i "error\|unavailable" "$t/workers.err" >&2 || true
echo "pgbouncer:    $N workers ($clients client connections) hold $pooled server sessions (pool_size $POOL)"
echo "ratio:        $(python3 -c "print(f'{$direct / $ND * $N / max($pooled, 1):.1f}')")x fewer server sessions than the same fleet direct"
echo "idle polling: $(python3 -c "print(f'{($c1 - $c0) / 5:.0f}')") transactions/s on the server for $N idle workers (a pick a second each, and a look at the version at most once a second)"
