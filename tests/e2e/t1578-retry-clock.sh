#!/usr/bin/env bash
# A failed attempt's next try on the database's clock (issue 26), as leases are: a
# database whose clock reads an hour ahead of this machine's (clock_timestamp() shadowed
# for the library's sessions, the only clock the store reads) gets a retry time an hour
# plus the back-off ahead of this machine's now; taken from the worker's own clock it
# would be due 50 minutes early by the database's, which the pick compares it with.
. "$(dirname "$0")/lib.sh"

pg_database vt_t1578
psql() { command psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Clock retry':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v.mp4"
vt init --db "$url" || fail "init --db"
pg_clock_ahead
# in place, then gone from this machine: fetch fails with an error another machine may
# not have (VT_EHERE), queued again for a later attempt
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue --in-place "$T/v.mp4") || fail "add --queue --in-place"
mv "$T/v.mp4" "$T/v-elsewhere.mp4"
row() { psql "$url" -c "SELECT $1 FROM stages WHERE video_id = '$id' AND name = 'fetch'"; }

note "the retry is due the back-off after the database's now"
VIDTHEQUE_RETRY_BASE=600 "$VIDTHEQUE" -q -L "$LIB" worker 2> "$T/w.err" &
w=$!
trap 'kill -9 "$w" 2> /dev/null || true; stop_server; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for _ in $(seq 300); do
  [[ $(row "state || '|' || attempts") == "queued|1" ]] && break
  sleep 0.1
done
kill -TERM "$w"
wait "$w" || fail "worker exited $?"
[[ $(row "state || '|' || attempts") == "queued|1" ]] || fail "fetch was not queued for a retry: $(row "state, attempts, error")"
ahead=$(row "round(retry_at - extract(epoch FROM pg_catalog.clock_timestamp()))")
((ahead > 4100 && ahead <= 4200)) || fail "retry due ${ahead}s after this machine's now, expected about 4200 (3600 + 600)"
echo "ok"
