#!/usr/bin/env bash
# `migrate` refuses while the library is in use (issue 26 failure 6): a worker that is
# registered (workers table, its lease kept by its heartbeat) or a stage held under a
# lease that holds could write to the old catalog after the copy, and what it wrote
# would never reach the new one. It says which worker and which stage, changes
# nothing (the config still names the old catalog, no copy is made), and runs once they
# are gone: a worker stopped with SIGTERM removes its row; a killed one's lease runs out.
# alone: a killed worker's lease running out
. "$(dirname "$0")/lib.sh"

pg_database vt_t1575
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Busy rivers':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v.mp4"
vt init --db "$url" || fail "init --db"
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/v.mp4") || fail "add --queue"

# refused LABEL PATTERN...: migrate --to sqlite fails with one line naming each pattern,
# and nothing changes
refused() {
  local what=$1
  shift
  expect_exit 1 "$VIDTHEQUE" -q -L "$LIB" migrate --to sqlite
  one_line_err
  grep -q "the library is in use" "$T/err" || fail "$what: migrate did not refuse: $(cat "$T/err")"
  for p in "$@"; do grep -q -- "$p" "$T/err" || fail "$what: '$p' not named: $(cat "$T/err")"; done
  [[ ! -e $LIB/library.db ]] || fail "$what: a copy was made"
  grep -q "postgresql://" "$LIB/config" || fail "$what: the config changed"
}

# an idle worker (it runs only stt, which waits for fetch): registered, holding nothing
"$VIDTHEQUE" -L "$LIB" worker --stages stt --lease 3 2> "$T/idle.err" &
wi=$!
for _ in $(seq 100); do
  psql -X -qtA "$url" -c "SELECT count(*) FROM workers" 2> /dev/null | grep -q '^1$' && break
  sleep 0.1
done
refused "an idle worker" "worker .*(pid $wi on "
kill -TERM "$wi"
wait "$wi" || fail "the idle worker exited $? on SIGTERM"
[[ $(psql -X -qtA "$url" -c "SELECT count(*) FROM workers") == 0 ]] ||
  fail "a worker stopped with SIGTERM is still registered"

# a worker stopped while it holds fetch: both it and the stage are named
VIDTHEQUE_TEST_STOP_AT=fetch:claimed "$VIDTHEQUE" -L "$LIB" worker --lease 3 > /dev/null 2> "$T/held.err" &
wh=$!
trap 'kill -KILL "$wh" 2> /dev/null || true; stop_server; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for _ in $(seq 600); do
  [[ $(ps -o state= -p "$wh" 2> /dev/null) == T* ]] && break
  sleep 0.1
done
[[ $(ps -o state= -p "$wh") == T* ]] || fail "the worker did not stop after claiming fetch"
refused "a held stage" "stage fetch of $id held by " "worker .*(pid $wh on "

# killed: once its leases run out it holds nothing, and migrate runs
kill -KILL "$wh"
wait "$wh" 2> /dev/null || true
sleep 4
vt migrate --to sqlite > "$T/out" 2>&1 || fail "migrate once the worker is gone: $(cat "$T/out")"
[[ -e $LIB/library.db ]] || fail "no catalog after migrate"
grep -q "postgresql://" "$LIB/config" && fail "the config still names PostgreSQL"
vt export "$id" > /dev/null || fail "export after migrate"
echo "all good"
