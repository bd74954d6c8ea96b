#!/usr/bin/env bash
# The library page (/) of a 1,000-video library: server time per page, against a static
# file of the same size served by the same server in the same run (a file answer: a kept
# frame's JPEG route, read from disk). Target: <= 50 ms per page.
#
# The library: one 3 s clip with a slide and captions is added and indexed for real; its
# rows (video, stages, shots, frames) are then copied 999 times under new ids, titles and
# channels with sqlite3 in one transaction (indexing 1,000 clips would take many minutes
# and the listing reads only these tables). One copy in ten is left "processing" with a
# stage running, so cards with progress bars are part of the pages.
# Pages timed: the first page (48 cards), the last page sorted by title, a text filter
# that keeps 100 videos, and ?per=500. Each is requested REQS times over one keep-alive
# connection (curl), median and p95 of the time to the last byte.
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
REQS=${LIBRARY_BENCH_REQS:-200}
command -v sqlite3 > /dev/null || { echo "sqlite3 is missing" >&2; exit 1; }
t=$(mktemp -d)
SRV=''
cleanup() {
  [[ -n $SRV ]] && { kill "$SRV" 2> /dev/null || true; wait "$SRV" 2> /dev/null || true; }
  rm -rf "$t"
}
trap cleanup EXIT
if nm "$VIDTHEQUE" 2> /dev/null | grep -q __asan_init || ldd "$VIDTHEQUE" 2> /dev/null | grep -q libasan; then
  echo "warning: $VIDTHEQUE is built with sanitizers; the figures are not representative" >&2
fi

gen_start=$(date +%s.%N)
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=3:r=10,drawtext=fontfile=$font:text='Library bench':fontsize=28:x=20:y=60" \
  -f lavfi -i "anullsrc=r=16000:cl=mono" -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac \
  -t 3 -metadata title="Library bench 0" "$t/v0.mp4"
printf 'WEBVTT\n\n00:00:00.500 --> 00:00:02.000\nthe library bench\n' > "$t/v0.vtt"
"$VIDTHEQUE" -q -L "$t/lib" add "$t/v0.mp4" > "$t/id"
id=$(cat "$t/id")
sqlite3 "$t/lib/library.db" > /dev/null << SQL
PRAGMA busy_timeout=10000;
BEGIN;
CREATE TEMP TABLE n(i INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 999) INSERT INTO n SELECT i FROM c;
INSERT INTO videos (id, content_key, source_kind, source_path, title, channel, published, language,
  container, duration_s, width, height, rotation, fps, has_video, has_audio, size_bytes, index_state,
  data_status, created_at, indexed_at, seq)
SELECT printf('bench%05d', i), content_key || '-' || i, source_kind, source_path,
  printf('Library bench video %d: %s', i, substr('harbor window market garden kitchen valley', 1 + (i % 6) * 7, 6)),
  printf('Channel %d', i % 37), published, language, container, duration_s + i, width, height, rotation,
  fps, has_video, has_audio, size_bytes, CASE WHEN i % 10 = 0 THEN 'processing' ELSE index_state END,
  data_status, created_at + i, indexed_at, seq + i
FROM videos, n WHERE id = '$id';
$(for tab in stages shots frames; do
  # every column but video_id, read from the schema: a new column is copied too
  cols=$(sqlite3 "$t/lib/library.db" "SELECT group_concat(name, ', ') FROM pragma_table_info('$tab') WHERE name != 'video_id'")
  echo "INSERT INTO $tab (video_id, $cols) SELECT printf('bench%05d', n.i), $cols FROM $tab, n WHERE video_id = '$id';"
done)
UPDATE stages SET state = 'running' WHERE name = 'ocr' AND video_id IN (SELECT printf('bench%05d', i) FROM n WHERE i % 10 = 0);
COMMIT;
SQL
n=$("$VIDTHEQUE" -q -L "$t/lib" ls | wc -l)
printf 'library: %d videos, made in %.1f s\n' "$n" "$(echo "$(date +%s.%N) - $gen_start" | bc)"
((n == 1000)) || { echo "expected 1000 videos, got $n" >&2; exit 1; }

"$VIDTHEQUE" -q -L "$t/lib" serve --port 0 --read-only 2> "$t/srv.err" &
SRV=$!
for _ in $(seq 100); do grep -q '^listening on ' "$t/srv.err" && break; sleep 0.1; done
port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$t/srv.err")
[[ -n $port ]] || { echo "server did not start: $(cat "$t/srv.err")" >&2; exit 1; }
B=http://127.0.0.1:$port

# time URL: "median_ms p95_ms bytes" over REQS requests on one connection
time_url() {
  local args=()
  for _ in $(seq "$REQS"); do args+=(-o /dev/null "$1"); done
  curl -s -w '%{time_total} %{size_download} %{http_code}\n' "${args[@]}" > "$t/times"
  python3 - "$t/times" << 'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
bad = [r for r in rows if r[2] != '200']
if bad:
    sys.exit(f"{len(bad)} answers were not 200: {bad[0]}")
ms = sorted(float(r[0]) * 1000 for r in rows)
print(f"{ms[len(ms) // 2]:.2f} {ms[int(len(ms) * 0.95)]:.2f} {rows[0][1]}")
PY
}

# the static file: frame 0 of the real video replaced by a file of the page's size
frame_file() {
  sqlite3 "$t/lib/library.db" "SELECT path FROM frames WHERE video_id = '$id' AND idx = 0"
}
printf '%-38s %9s %9s %9s %10s %7s\n' page bytes 'med ms' 'p95 ms' 'static ms' ratio
worst=0
for page in '/' '/?sort=title&page=21' '/?q=harbor' '/?per=500'; do
  read -r med p95 bytes <<< "$(time_url "$B$page")"
  # a file of the same size, served by the same server from disk
  head -c "$bytes" /dev/urandom > "$t/lib/$(frame_file)"
  read -r smed _ sbytes <<< "$(time_url "$B/api/videos/$id/frames/0.jpg")"
  [[ $sbytes == "$bytes" ]] || { echo "static file is $sbytes bytes, the page $bytes" >&2; exit 1; }
  ratio=$(python3 -c "print(f'{$med / max($smed, 0.001):.2f}')")
  printf '%-38s %9s %9s %9s %10s %7s\n' "$page" "$bytes" "$med" "$p95" "$smed" "${ratio}x"
  worst=$(python3 -c "print(max($worst, $med))")
done
echo "target: every page <= 50 ms (median): worst ${worst} ms -> $(python3 -c "print('ok' if $worst <= 50 else 'MISSED')")"
