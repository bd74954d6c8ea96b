# What benches share: the preamble of those that build a C driver against the library (ocr_small_bench.sh,
# stt_hints_bench.sh, realcuts_bench.sh, textchange_bench.sh), the keyframe stage alone (kfdump) and
# the clip a truth names, a PostgreSQL server with fresh databases (queue_bench.sh, ingest_bench.sh), and
# the binary with another build's beside it (m2v_memory_bench.sh, stt_memory_bench.sh).
# Source it from the repository root, after parsing arguments.

# bench_setup NAME FILE TOOL...: exit 2 unless run from the repository root (FILE and the
# Makefile there) with every TOOL found; then $tmp is a fresh directory, removed on exit.
bench_setup() {
    local name=$1 file=$2 tool
    shift 2
    if [[ ! -f $file || ! -f Makefile ]]; then
        echo "$name: run from the repository root" >&2
        exit 2
    fi
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null; then
            echo "$name: '$tool': not found (scripts/install-deps.sh installs it)" >&2
            exit 2
        fi
    done
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
}

# bench_binaries NAME FILE TOOL...: bench_setup with $VIDTHEQUE (./vidtheque unless set) and
# $VIDTHEQUE_BASELINE (when set) among the tools, for a bench that runs the binary and,
# beside it, another build's.
bench_binaries() {
    local name=$1 file=$2
    shift 2
    : "${VIDTHEQUE:=$PWD/vidtheque}"
    bench_setup "$name" "$file" "$@" "$VIDTHEQUE" ${VIDTHEQUE_BASELINE:+"$VIDTHEQUE_BASELINE"}
}

# bench_lib NAME: build build/rel/libvidtheque.a, or show the build's output and exit 1.
bench_lib() {
    if ! make -s build/rel/libvidtheque.a >"$tmp/make.log" 2>&1; then
        cat "$tmp/make.log" >&2
        echo "$1: cannot build build/rel/libvidtheque.a" >&2
        exit 1
    fi
}

# bench_kfdump: $tmp/kfdump, the keyframe stage alone (tests/tools/kfdump.c) built against
# build/rel/libvidtheque.a (bench_lib first).
bench_kfdump() {
    local pkgs
    pkgs=$(sed -n "s/^PKGS = //p" Makefile)
    # shellcheck disable=SC2046,SC2086 # one word per flag and package
    cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc -o "$tmp/kfdump" tests/tools/kfdump.c \
        build/rel/libvidtheque.a $(pkg-config --cflags --libs $pkgs) -lm -pthread
}

# bench_clip_of TRUTH.json: the clip a truth file names ("clip", relative to the truth's folder).
bench_clip_of() {
    local c
    c=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clip"])' "$1")
    [[ $c == /* ]] && echo "$c" || echo "$(dirname "$1")/$c"
}

# bench_pg_start PREFIX: a PostgreSQL server for a bench in $pg_admin: VT_TEST_PG's, else a
# throwaway cluster (tests/pg/cluster.sh) in a folder of its own under /tmp (it runs as
# nobody, who cannot enter a mktemp folder of root's). Returns 1, $pg_admin empty, when
# there is none. bench_pg_cleanup drops every PREFIX_ database and stops the cluster.
bench_pg_start() {
    pg_prefix=$1_$$ pg_admin=${VT_TEST_PG:-} pg_dir=
    [[ -z $pg_admin ]] || return 0
    pg_dir=$(mktemp -d /tmp/vt-bench-pg.XXXXXX)
    if ! pg_admin=$(bash tests/pg/cluster.sh start "$pg_dir"); then
        rm -rf "$pg_dir"
        pg_admin= pg_dir=
        return 1
    fi
}
bench_pg_cleanup() {
    local db
    if [[ -n ${pg_admin:-} ]]; then
        for db in $(psql -X -At "$pg_admin" -c "SELECT datname FROM pg_database WHERE datname LIKE '${pg_prefix}_%'" 2>/dev/null); do
            psql -X -q "$pg_admin" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
        done
    fi
    if [[ -n ${pg_dir:-} ]]; then
        bash tests/pg/cluster.sh stop "$pg_dir" >/dev/null 2>&1 || true
        rm -rf "$pg_dir"
    fi
}
# bench_pg_newdb: a fresh database on $pg_admin (dropped by bench_pg_cleanup), its URL
bench_pg_newdb() {
    local db=${pg_prefix}_$RANDOM$RANDOM
    psql -X -q -v ON_ERROR_STOP=1 "$pg_admin" -c "CREATE DATABASE $db" >/dev/null
    python3 -c 'import sys,re; print(re.sub(r"(://[^/?]*)/[^?]*", r"\1/" + sys.argv[2], sys.argv[1], count=1))' "$pg_admin" "$db"
}
