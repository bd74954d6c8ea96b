#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the tests, in a directory of its own, listening
# only on a Unix socket there (no TCP port: nothing else on the machine can reach it).
#   tests/pg/cluster.sh start DIR     initdb (once) and start; prints the connection URL
#   tests/pg/cluster.sh stop DIR      fast shutdown
#   tests/pg/cluster.sh restart DIR   pg_ctl restart (the outage tests)
#   tests/pg/cluster.sh url DIR       the URL again
# initdb refuses to run as root: as root the cluster belongs to the unprivileged user
# `nobody`, and DIR is handed to it. Exit 77 when PostgreSQL's binaries are missing.
set -euo pipefail
cmd=${1:?usage: cluster.sh start|stop|restart|url DIR}
dir=${2:?usage: cluster.sh start|stop|restart|url DIR}
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "cluster.sh: no PostgreSQL server binaries" >&2; exit 77; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
url() {
    # libpq's URL form with the socket directory as host, percent-encoded
    local enc
    enc=$(python3 -c 'import sys,urllib.parse;print(urllib.parse.quote(sys.argv[1],safe=""))' "$dir/sock")
    echo "postgresql://vidtheque@/vidtheque?host=$enc"
}
case $cmd in
start)
    [ "$(id -u)" = 0 ] && chown nobody "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner mkdir -p "$dir/sock"
        as_owner "$bin/initdb" -D "$dir/data" -U vidtheque -A trust -E UTF8 --locale=C.UTF-8 \
            --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
        # sockets only, small and fast for tests (fsync off: a throwaway cluster)
        cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir/sock'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 64MB
CONF
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 ||
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    if ! as_owner "$bin/psql" -h "$dir/sock" -U vidtheque -d postgres -Atqc \
        "SELECT 1 FROM pg_database WHERE datname = 'vidtheque'" | grep -q 1; then
        as_owner "$bin/createdb" -h "$dir/sock" -U vidtheque vidtheque
    fi
    # the test runner (root or not) connects as role vidtheque through the socket
    chmod 755 "$dir" 2>/dev/null || true
    url
    ;;
stop) as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null ;;
restart) as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -l "$dir/server.log" restart >/dev/null ;;
url) url ;;
*) echo "cluster.sh: unknown command '$cmd'" >&2; exit 2 ;;
esac
