#!/usr/bin/env bash
# Lease times on the database's clock (issue 26), not the worker's: a database whose
# clock reads an hour ahead of this machine's (clock_timestamp() shadowed for the
# library's sessions, the only clock the store reads) gets leases an hour ahead of this
# machine's time, and a lease that by this machine's clock still has ten minutes left but
# by the database's ran out 50 minutes ago is taken over by a worker. With the worker's
# own clock, both go the other way (a lease that seems held for ten minutes, a takeover
# an hour late).
# alone: lease takeover by the database's clock
. "$(dirname "$0")/lib.sh"

pg_database vt_t1561
psql() { command psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Clock tower':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v.mp4"
vt init --db "$url" || fail "init --db"
pg_clock_ahead
id=$(vt add --queue "$T/v.mp4") || fail "add --queue"

# stopped PID: wait until process PID has stopped itself (SIGSTOP at a claim)
stopped() {
  for _ in $(seq 600); do
    [[ $(ps -o state= -p "$1" 2> /dev/null) == T* ]] && return 0
    kill -0 "$1" 2> /dev/null || return 1
    sleep 0.1
  done
  return 1
}
row() { psql "$url" -c "SELECT $1 FROM stages WHERE video_id = '$id' AND name = 'keyframe'"; }

note "a worker's lease ends lease seconds after the database's now"
VIDTHEQUE_TEST_STOP_AT=keyframe:claimed "$VIDTHEQUE" -L "$LIB" worker --lease 30 2> "$T/w1.err" &
wpid=$!
# a failure below must not leave the stopped worker behind
trap 'kill -9 "$wpid" 2> /dev/null || true; stop_server; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
stopped "$wpid" || fail "the worker did not stop after claiming keyframe: $(tail -3 "$T/w1.err")"
ahead=$(row "round(lease_until - extract(epoch FROM pg_catalog.clock_timestamp()))")
((ahead > 3500 && ahead <= 3630)) || fail "lease ends ${ahead}s after this machine's now, expected about 3630"

note "a lease the database's clock says ran out is taken over"
kill -9 "$wpid"
wait "$wpid" 2> /dev/null || true
# ten minutes left by this machine's clock, 50 minutes over by the database's
psql "$url" -c "UPDATE stages SET lease_until = extract(epoch FROM pg_catalog.clock_timestamp()) + 600 WHERE video_id = '$id' AND name = 'keyframe'"
timeout 300 "$VIDTHEQUE" -L "$LIB" worker --drain --lease 30 2> "$T/w2.err" || fail "worker --drain: $(tail -3 "$T/w2.err")"
[[ $(row "state || '|' || attempts") == "done|2" ]] || fail "keyframe not taken over: $(row 'state, attempts, owner')"
echo "ok"
