# Sourced by every end-to-end test: a scratch directory, the binary, assertions.
set -euo pipefail
: "${VIDTHEQUE:?set VIDTHEQUE to the vidtheque binary}"
export OMP_THREAD_LIMIT=1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DATA=$ROOT/tests/data
T=$(mktemp -d "${TMPDIR:-/tmp}/vt-e2e.XXXXXX")
trap 'stop_server; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
LIB=$T/lib
vt() { "$VIDTHEQUE" -q -L "$LIB" "$@"; }
# pg_url_for URL NAME: URL with its database name replaced by NAME
pg_url_for() { python3 -c 'import sys,re; print(re.sub(r"(://[^/?]*)/[^?]*", r"\1/" + sys.argv[2], sys.argv[1], count=1))' "$1" "$2"; }
# pg_database NAME [own]: a fresh PostgreSQL database NAME for the test: its URL in $url,
# the server's in $admin. On VT_TEST_PG's server, else (or with `own`: a test that stops
# it) on a cluster of the test's own in $PGDIR, beside $T (as root the cluster runs as
# nobody, who cannot enter $T). The database and the cluster go at exit. No PostgreSQL
# installed: a note, and the test passes having tested nothing.
PGDIR= PG_DB= admin= url=
pg_cleanup() {
  [[ -z $PG_DB || -z $admin ]] ||
    psql -X -q "$admin" -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" > /dev/null 2>&1 || true
  if [[ -n $PGDIR ]]; then
    bash "$ROOT/tests/pg/cluster.sh" stop "$PGDIR" > /dev/null 2>&1 || true
    rm -rf "$PGDIR"
  fi
}
pg_database() {
  local rc=0
  admin=${VT_TEST_PG:-}
  if [[ -z $admin || ${2:-} == own ]]; then
    PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/vt-pg.XXXXXX")
    admin=$(bash "$ROOT/tests/pg/cluster.sh" start "$PGDIR") || rc=$?
    if ((rc == 77)); then
      note "no PostgreSQL server binaries here: nothing to test"
      exit 0
    fi
    ((rc == 0)) || fail "cannot start a PostgreSQL cluster"
  fi
  PG_DB=$1_$$
  url=$(pg_url_for "$admin" "$PG_DB")
  psql -X -q -v ON_ERROR_STOP=1 "$admin" -c "CREATE DATABASE $PG_DB" > /dev/null || fail "CREATE DATABASE"
}
# VT_E2E_PG=1 with VT_TEST_PG (tests/pg/with-cluster.sh): `vt init` of a library that has
# no config yet puts its catalog on a fresh PostgreSQL database of its own (dropped at
# exit), so a test runs there too. E2E_PG_DB[LIB] is that database's name.
declare -A E2E_PG_DB=()
e2e_pg_drop() {
  local db
  for db in "${E2E_PG_DB[@]}"; do
    psql -X -q "$VT_TEST_PG" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null 2>&1 || true
  done
}
# There `add` only queues, as a user's would: `vt add` starts a worker of the library's
# own for the time of an `add --wait`, so a test reads the same results as after SQLite's
# in-process add, and no worker is left to race the test's own redo or resume.
if [[ -n ${VT_E2E_PG:-} && -n ${VT_TEST_PG:-} ]]; then
  vt() {
    if [[ ${1:-} == init && ! -e $LIB/config ]]; then
      shift
      local db=vt_e2e_$$_$RANDOM$RANDOM
      psql -X -q "$VT_TEST_PG" -c "CREATE DATABASE $db" > /dev/null || fail "CREATE DATABASE"
      E2E_PG_DB[$LIB]=$db
      "$VIDTHEQUE" -q -L "$LIB" init --db "$(pg_url_for "$VT_TEST_PG" "$db")" "$@"
      return
    fi
    if [[ ${1:-} == add && -n ${E2E_PG_DB[$LIB]:-} ]]; then
      shift
      local w rc=0
      "$VIDTHEQUE" -q -L "$LIB" worker >> "$T/worker.log" 2>&1 &
      w=$!
      "$VIDTHEQUE" -q -L "$LIB" add --wait "$@" || rc=$?
      kill -TERM "$w" 2> /dev/null || true
      wait "$w" 2> /dev/null || true
      return $rc
    fi
    "$VIDTHEQUE" -q -L "$LIB" "$@"
  }
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
# lib_sql SQL: run SQL on $LIB's catalog, whichever backend holds it (SQLite's library.db,
# or the PostgreSQL database `vt init` made under VT_E2E_PG); rows as "a|b", no header.
# For what no command shows (a row left behind, a state set by hand); keep it to SQL both
# dialects read the same.
lib_sql() {
  if [[ -n ${E2E_PG_DB[$LIB]:-} ]]; then
    psql -X -q -At -v ON_ERROR_STOP=1 "$(lib_catalog)" -c "$1"
  else
    sqlite3 -cmd '.timeout 5000' "$LIB/library.db" "$1"
  fi
}
# lib_catalog: where $LIB's catalog is, as lib_sql reaches it (a path or a URL)
lib_catalog() {
  if [[ -n ${E2E_PG_DB[$LIB]:-} ]]; then pg_url_for "$VT_TEST_PG" "${E2E_PG_DB[$LIB]}"; else echo "$LIB/library.db"; fi
}
# on_pg: true when this run puts the library's catalog on PostgreSQL (VT_E2E_PG)
on_pg() { [[ -n ${VT_E2E_PG:-} && -n ${VT_TEST_PG:-} ]]; }
note() { echo "# $*"; }
# expect_exit CODE CMD...: run CMD, check its exit code, keep its stderr in $T/err
expect_exit() {
  local want=$1; shift
  local got=0
  "$@" > "$T/out" 2> "$T/err" || got=$?
  [[ $got == "$want" ]] || fail "'$*' exited $got, expected $want; stderr: $(head -c 500 "$T/err")"
}
# The error is one line.
one_line_err() {
  local n; n=$(wc -l < "$T/err")
  [[ $n == 1 ]] || fail "expected one error line, got $n: $(cat "$T/err")"
}
# json FILE PYEXPR: evaluate a Python expression with d = the parsed JSON
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# normalize DOC.json: the exported document without what differs between two runs of the
# same work (times, attempts, the run folder of the images, where the library is), one
# line, keys sorted
normalize() {
  python3 - "$1" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ('indexed_at', 'added_at'): d.pop(k, None)
# media copied into a library is in it: its path from the library's media/ on
src = d.get('source') or {}
if isinstance(src.get('path'), str) and '/media/' in src['path']:
    src['path'] = src['path'][src['path'].rindex('/media/') + 1:]
for s in d['stages']:
    for k in ('started_at', 'took_s', 'attempts', 'attempts_since_redo'): s.pop(k, None)
for fr in d['frames']:
    fr.pop('image', None)
    fr.pop('image_small', None)
print(json.dumps(d, sort_keys=True))
PY
}
# first_attempt ID STAGE ERRFILE [NAME=VALUE...]: a worker of $LIB (with those variables set)
# runs until STAGE of video ID has ended its first attempt, then is stopped with SIGTERM;
# its stderr in ERRFILE. Fails when it does not exit 0.
first_attempt() {
  local id=$1 stage=$2 errfile=$3 w
  shift 3
  env "$@" "$VIDTHEQUE" -q -L "$LIB" worker 2> "$errfile" &
  w=$!
  for _ in $(seq 300); do
    [[ $(lib_sql "SELECT attempts FROM stages WHERE video_id='$id' AND name='$stage'") == 1 &&
      $(lib_sql "SELECT state FROM stages WHERE video_id='$id' AND name='$stage'") != running ]] && break
    sleep 0.1
  done
  kill -TERM "$w"
  wait "$w" || fail "worker exited $?: $(cat "$errfile")"
}
# fixture GEN OUTDIR ARGS...: what `bash tests/fixtures/GEN OUTDIR ARGS...` makes, in
# OUTDIR. The generators are seeded (the same arguments and GEN_* settings make the same
# clip), so under tests/run-all.sh, which names a directory of the run in
# VT_FIXTURE_CACHE, the first script to ask makes it there (one at a time: flock) and
# every script gets a copy of it: the talk of seed 1 is made once a run, not by each of
# the eight scripts that index it. Without VT_FIXTURE_CACHE, it is made in OUTDIR.
fixture() {
  local gen=$1 dir=$2 key c; shift 2
  if [[ -z ${VT_FIXTURE_CACHE:-} ]]; then
    bash "$ROOT/tests/fixtures/$gen" "$dir" "$@"
    return
  fi
  key=$({ printf '%s\n' "$gen" "$@"; env | grep '^GEN_' | sort; cat "$ROOT/tests/fixtures/$gen"; } | sha256sum)
  c=$VT_FIXTURE_CACHE/${key:0:20}
  (
    flock 9
    if [[ ! -e $c.done ]]; then
      rm -rf "$c"
      bash "$ROOT/tests/fixtures/$gen" "$c" "$@" || { rm -rf "$c"; exit 1; }
      touch "$c.done"
    fi
  ) 9> "$c.lock" || return 1
  mkdir -p "$dir"
  cp -R "$c/." "$dir/"
}
# pg_clock_ahead: the clock of pg_database's database ($url) an hour ahead of this
# machine's for every new session (clock_timestamp(), the only clock the store reads,
# shadowed first on the search path)
pg_clock_ahead() {
  command psql -X -q -At -v ON_ERROR_STOP=1 "$url" -c "CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz LANGUAGE sql
    AS \$\$ SELECT pg_catalog.clock_timestamp() + interval '1 hour' \$\$" > /dev/null
  command psql -X -q -At -v ON_ERROR_STOP=1 "$admin" -c "ALTER DATABASE $PG_DB SET search_path = public, pg_catalog" > /dev/null
  [[ $(command psql -X -q -At "$url" -c "SELECT extract(epoch FROM clock_timestamp()) - extract(epoch FROM pg_catalog.clock_timestamp()) > 3599") == t ]] ||
    fail "the shadowed clock is not an hour ahead"
}
# build_tool NAME: tests/tools/NAME.c linked against the library beside the binary under
# test (the release build, or the sanitized one with its sanitizers), as $T/NAME
build_tool() {
  local libdir pkgs pkgflags san=()
  libdir=$(dirname "$VIDTHEQUE")
  [[ -f $libdir/libvidtheque.a ]] || fail "'$libdir/libvidtheque.a': missing (run make first)"
  read -r -a pkgs <<< "$(sed -n 's/^PKGS = //p' "$ROOT/Makefile")"
  read -r -a pkgflags <<< "$(pkg-config --cflags --libs "${pkgs[@]}") $(sed -n 's/^FLITE_LIBS = //p' "$ROOT/Makefile")"
  if [[ $libdir == */san ]]; then san=("-fsanitize=address,undefined"); fi
  cc -std=c11 -D_GNU_SOURCE "${san[@]}" -I"$ROOT/include" -I"$ROOT/lib" \
    "$ROOT/tests/tools/$1.c" "$libdir/libvidtheque.a" "${pkgflags[@]}" \
    -lm -pthread -o "$T/$1" || fail "cannot build $1"
}
# A short talk-like clip with text: gen_clip OUT SECONDS TEXT [SIZE]
gen_clip() {
  ffmpeg -v error -y -f lavfi -i "color=white:s=${4:-640x360}:d=$2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='$3':fontsize=36:x=40:y=60" \
    -f lavfi -i "sine=f=440:d=$2" -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -shortest "$1"
}

# ---- a `vidtheque serve` of $LIB on an ephemeral loopback port ----
SRV_PID=
# start_server ARGS...: sets SRV_PID, PORT and B (the base URL); stderr in $T/srv.err
start_server() {
  : > "$T/srv.err"
  "$VIDTHEQUE" -L "$LIB" serve --port 0 "$@" 2> "$T/srv.err" &
  SRV_PID=$!
  for _ in $(seq 100); do
    grep -q '^listening on ' "$T/srv.err" && break
    kill -0 "$SRV_PID" 2> /dev/null || fail "server exited: $(cat "$T/srv.err")"
    sleep 0.1
  done
  PORT=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$T/srv.err")
  [[ -n $PORT ]] || fail "no 'listening on' line: $(cat "$T/srv.err")"
  B=http://127.0.0.1:$PORT
}
stop_server() {
  if [[ -n $SRV_PID ]]; then
    kill "$SRV_PID" 2> /dev/null || true
    wait "$SRV_PID" 2> /dev/null || true
    SRV_PID=
  fi
}
# stop it with SIGTERM and check it exits 0
stop_cleanly() {
  local rc=0
  kill -TERM "$SRV_PID"
  wait "$SRV_PID" || rc=$?
  SRV_PID=
  [[ $rc == 0 ]] || fail "server exited $rc on SIGTERM: $(tail -c 500 "$T/srv.err")"
}
