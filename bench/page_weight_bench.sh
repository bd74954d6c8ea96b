#!/usr/bin/env bash
# Page weight and time (issue 25): a 1,000-shot video page (alone and opened with a search
# that has 200 hits in it) and that 200-hit search's page (20 hits a page, and 100), each
# as bytes of HTML, its gzip'ed bytes (gzip -6), the bytes the browser received for it
# (HTML, static files, frame images in view, once the network is idle; the player's media
# left out), the server's time to first byte (curl, median of PAGE_WEIGHT_REQS) and the
# browser's load time (headless Chromium, cache off, median of PAGE_WEIGHT_LOADS;
# bench/page_weight.mjs).
# Run from the repository root: bench/page_weight_bench.sh
#
# Before and after: the same measures of the same library, served in the same run by a
# baseline binary: PAGE_WEIGHT_BASE (a vidtheque binary), else the named baseline commit
# PAGE_WEIGHT_BASE_REV (default 9889a2e, main where issue 25's hits, managing and page
# weight work started) built once with `make` into build/bench-base/REV (kept for later runs).
#
# The library: a 1,000 s video (one still slide, 64x36, no audio) with a WebVTT sidecar of
# 1,000 one-second cues, 200 of which say "harbor", is added and indexed for real; its one
# shot and one kept frame are then copied with sqlite3 into 1,000 shots of a second, each
# with its kept frame (the pages read only these rows; cutting 1,000 real shots would take
# minutes of OCR).
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
REQS=${PAGE_WEIGHT_REQS:-20}
LOADS=${PAGE_WEIGHT_LOADS:-5}
REV=${PAGE_WEIGHT_BASE_REV:-9889a2e}
command -v sqlite3 > /dev/null || { echo "sqlite3 is missing" >&2; exit 1; }
command -v node > /dev/null || { echo "node is missing: install nodejs (scripts/install-deps.sh)" >&2; exit 1; }
[[ -d tests/browser/node_modules/playwright-core ]] ||
  { echo "tests/browser/node_modules is missing: run bash scripts/setup.sh" >&2; exit 1; }
t=$(mktemp -d)
SRV=''
stop() { [[ -n $SRV ]] && { kill "$SRV" 2> /dev/null || true; wait "$SRV" 2> /dev/null || true; }; SRV=''; }
cleanup() { stop; rm -rf "$t"; }
trap cleanup EXIT

# the baseline binary
base=${PAGE_WEIGHT_BASE:-}
if [[ -z $base ]]; then
  full=$(git rev-parse --verify "$REV^{commit}") || { echo "no commit $REV: set PAGE_WEIGHT_BASE" >&2; exit 1; }
  dir=$PWD/build/bench-base/${full:0:12}
  if [[ ! -x $dir/build/rel/vidtheque ]]; then
    echo "building the baseline $REV in $dir (once) ..." >&2
    rm -rf "$dir" && mkdir -p "$dir"
    git archive "$full" | tar -x -C "$dir"
    nice make -C "$dir" -j2 > "$dir/build.log" 2>&1 || { echo "the baseline did not build: $dir/build.log" >&2; exit 1; }
  fi
  base=$dir/build/rel/vidtheque
fi

echo "making the 1,000-shot video ..." >&2
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
ffmpeg -v error -y -f lavfi -i "color=white:s=64x36:d=1000:r=1,drawtext=fontfile=$font:text='Weight':fontsize=12:x=4:y=10" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -t 1000 -metadata title="Page weight bench" "$t/v.mp4"
python3 - "$t/v.vtt" << 'PY'
import sys
words = "window market garden kitchen valley river station bridge tower field".split()
with open(sys.argv[1], "w") as f:
    f.write("WEBVTT\n\n")
    for i in range(1000):
        w = "harbor" if i % 5 == 0 else words[i % 10]
        t = lambda s: f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.000"
        f.write(f"{t(i)} --> {t(i + 1)}\nthe {w} of cue {i} and some more words said here\n\n")
PY
id=$("$VIDTHEQUE" -q -L "$t/lib" add "$t/v.mp4")
sqlite3 "$t/lib/library.db" > /dev/null << SQL
PRAGMA busy_timeout=10000;
BEGIN;
CREATE TEMP TABLE n(i INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 999) INSERT INTO n SELECT i FROM c;
UPDATE shots SET end_s = 1 WHERE video_id = '$id' AND idx = 0;
DELETE FROM shots WHERE video_id = '$id' AND idx > 0;
DELETE FROM frames WHERE video_id = '$id' AND idx > 0;
INSERT INTO shots (video_id, idx, start_s, end_s, captured, kept)
  SELECT video_id, n.i, n.i, n.i + 1, captured, kept FROM shots, n WHERE video_id = '$id' AND idx = 0;
$(cols=$(sqlite3 "$t/lib/library.db" "SELECT group_concat(name, ', ') FROM pragma_table_info('frames') WHERE name NOT IN ('idx', 't_s', 'shot', 'frame_no')")
  echo "INSERT INTO frames (idx, t_s, shot, frame_no, $cols) SELECT n.i, n.i + 0.5, n.i, n.i, $cols FROM frames, n WHERE video_id = '$id' AND idx = 0;")
COMMIT;
SQL
"$VIDTHEQUE" -q -L "$t/lib" export "$id" --format json > "$t/doc.json"
python3 - "$t/doc.json" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stored"]
print(f"the video: {d['duration_s']:.0f} s, {s['shots']} shots, {s['keyframes_captured']} kept frames, {s['cues']} cues", file=sys.stderr)
if s["shots"] != 1000 or s["cues"] != 1000:
    sys.exit("the bench video is not 1,000 shots and cues")
PY

pages=("/v/$id" "/v/$id?q=harbor" "/search?q=harbor" "/search?q=harbor&per=100")
# measure BINARY NAME: one line per page into $t/NAME
measure() {
  stop
  : > "$t/srv.err"
  "$1" -q -L "$t/lib" serve --port 0 --read-only 2> "$t/srv.err" &
  SRV=$!
  for _ in $(seq 100); do grep -q '^listening on ' "$t/srv.err" && break; sleep 0.1; done
  local port
  port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$t/srv.err")
  [[ -n $port ]] || { echo "$2: the server did not start: $(cat "$t/srv.err")" >&2; exit 1; }
  : > "$t/$2"
  for p in "${pages[@]}"; do
    curl -s -o "$t/body" "http://127.0.0.1:$port$p"
    local bytes gz args=()
    bytes=$(wc -c < "$t/body")
    gz=$(gzip -6 -c "$t/body" | wc -c)
    for _ in $(seq "$REQS"); do args+=(-o /dev/null "http://127.0.0.1:$port$p"); done
    curl -s -w '%{time_starttransfer} %{http_code}\n' "${args[@]}" > "$t/times"
    local ttfb
    ttfb=$(python3 -c '
import sys
rows = [l.split() for l in open(sys.argv[1])]
if any(r[1] != "200" for r in rows):
    sys.exit("not 200: " + str(rows[0]))
ms = sorted(float(r[0]) * 1000 for r in rows)
print(f"{ms[len(ms) // 2]:.1f}")' "$t/times")
    local load
    load=$(node bench/page_weight.mjs "http://127.0.0.1:$port$p" "$LOADS")
    echo "$p $bytes $gz $ttfb $load" >> "$t/$2"
  done
  stop
}
echo "measuring the baseline ($base) ..." >&2
measure "$base" base
echo "measuring $VIDTHEQUE ..." >&2
measure "$VIDTHEQUE" this

python3 - "$t/base" "$t/this" "$id" << 'PY'
import sys
def rows(p):
    return {l.split()[0]: l.split()[1:] for l in open(p)}
b, n, vid = rows(sys.argv[1]), rows(sys.argv[2]), sys.argv[3]
names = {f"/v/{vid}": "video page, 1,000 shots", f"/v/{vid}?q=harbor": "  opened with a 200-hit search",
         "/search?q=harbor": "search, 200 hits (20 a page)", "/search?q=harbor&per=100": "  100 a page"}
kb = lambda s: f"{int(s) / 1000:,.1f}"
print(f"{'page':<32} {'':>5} {'HTML kB':>9} {'gzip kB':>8} {'loaded kB':>10} {'TTFB ms':>8} {'load ms':>8}")
for p in b:
    for tag, r in (("base", b[p]), ("this", n[p])):
        print(f"{names.get(p, p) if tag == 'base' else '':<32} {tag:>5} {kb(r[0]):>9} {kb(r[1]):>8} "
              f"{kb(r[4]):>10} {float(r[2]):>8.1f} {float(r[3]):>8.0f}")
    rb, rn = b[p], n[p]
    print(f"{'':<32} {'ratio':>5} {int(rn[0]) / int(rb[0]):>9.2f} {int(rn[1]) / int(rb[1]):>8.2f} "
          f"{int(rn[4]) / max(1, int(rb[4])):>10.2f} {float(rn[2]) / max(0.1, float(rb[2])):>8.2f} "
          f"{float(rn[3]) / max(1, float(rb[3])):>8.2f}")
PY
