#!/usr/bin/env bash
# Run a command with a throwaway PostgreSQL cluster (cluster.sh, in a temp dir):
# VT_TEST_PG (its URL) and VT_TEST_PG_DIR (its directory, for the outage tests) are
# exported to it, and the cluster is stopped and removed when the command ends, fails
# or is interrupted. With VT_TEST_PG already set the command just runs (on that
# server); without PostgreSQL's binaries it runs on SQLite only, with a note.
#   tests/pg/with-cluster.sh CMD [ARGS...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [[ -n ${VT_TEST_PG:-} ]]; then
    exec "$@"
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/vt-pg.XXXXXX")
cleanup() {
    bash "$here/cluster.sh" stop "$dir" > /dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rc=0
url=$(bash "$here/cluster.sh" start "$dir") || rc=$?
if ((rc == 77)); then
    echo "with-cluster.sh: no PostgreSQL here: SQLite only" >&2
    "$@"
    exit
fi
if ((rc != 0)); then
    echo "with-cluster.sh: PostgreSQL did not start (see $dir)" >&2
    exit 1
fi
export VT_TEST_PG=$url VT_TEST_PG_DIR=$dir
"$@"
