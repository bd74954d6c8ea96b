#!/usr/bin/env bash
# Web server throughput on loopback: wrk, 2 threads, 64 connections, 10 s per route, on a
# library of 100 videos (one 4 s clip with a slide and read speech, indexed fully, and 99
# copies that differ only in their title metadata, indexed with --stt=captions to keep
# generation short). Routes: GET /api/videos/ID, the page /v/ID, /api/search?q=two+words.
# The same bodies saved as static files and served by `python3 -m http.server` are the
# baseline, measured in the same run. Three rounds; the server's RSS after each (flat
# memory). Targets: >= 5,000 req/s and p99 < 20 ms for the document and the page,
# >= 1,000 req/s for search.
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
command -v wrk > /dev/null || { echo "wrk is missing: install it (scripts/install-deps.sh)" >&2; exit 1; }
DUR=${WEB_BENCH_DURATION:-10}
t=$(mktemp -d)
SRV='' PY=''
cleanup() {
  for p in $SRV $PY; do kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; done
  rm -rf "$t"
}
trap cleanup EXIT
if nm "$VIDTHEQUE" 2> /dev/null | grep -q __asan_init || ldd "$VIDTHEQUE" 2> /dev/null | grep -q libasan; then
  echo "warning: $VIDTHEQUE is built with sanitizers; the figures are not representative" >&2
fi

# ---- the library: 100 videos ----
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
wav=/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav
gen_start=$(date +%s)
ffmpeg -v error -y -f lavfi -i "color=white:s=640x360:d=4,drawtext=fontfile=$font:text='Garden Window Market':fontsize=40:x=40:y=60" \
  -i "$wav" -filter_complex "[1:a]adelay=500|500,apad[a]" -map 0:v -map '[a]' \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -ar 44100 -t 4 \
  -metadata title="Web bench talk 0" "$t/v0.mp4"
"$VIDTHEQUE" -q -L "$t/lib" add "$t/v0.mp4" > "$t/id"
id=$(cat "$t/id")
files=()
for i in $(seq 1 99); do
  ffmpeg -v error -y -i "$t/v0.mp4" -c copy -metadata "title=Web bench talk $i" "$t/v$i.mp4"
  files+=("$t/v$i.mp4")
done
"$VIDTHEQUE" -q -L "$t/lib" add --stt=captions "${files[@]}" > /dev/null
n=$("$VIDTHEQUE" -q -L "$t/lib" ls | grep -c ready || true)
echo "library: $n ready videos, made in $(($(date +%s) - gen_start)) s; benchmarked video $id; ${DUR} s per run"
((n == 100)) || { echo "expected 100 ready videos, got $n" >&2; exit 1; }

# ---- the server and the static baseline ----
# wrk's 64 connections all come from 127.0.0.1: lift the per-IP limit where there is one
perip=()
"$VIDTHEQUE" help serve 2>&1 | grep -q -- --max-per-ip && perip=(--max-per-ip 1000)
"$VIDTHEQUE" -q -L "$t/lib" serve --port 0 --read-only "${perip[@]}" 2> "$t/srv.err" &
SRV=$!
for _ in $(seq 100); do grep -q '^listening on ' "$t/srv.err" && break; sleep 0.1; done
port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$t/srv.err")
[[ -n $port ]] || { echo "server did not start: $(cat "$t/srv.err")" >&2; exit 1; }
B=http://127.0.0.1:$port
Q='garden+window'
mkdir -p "$t/static"
curl -sf "$B/api/videos/$id" -o "$t/static/doc.json"
curl -sf "$B/v/$id" -o "$t/static/page.html"
curl -sf "$B/api/search?q=$Q" -o "$t/static/search.json"
hits=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hits"]))' "$t/static/search.json")
pyport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$t/static" "$pyport" > /dev/null 2>&1 &
PY=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$pyport/doc.json" && break; sleep 0.1; done
echo "bodies: document $(stat -c %s "$t/static/doc.json") B, page $(stat -c %s "$t/static/page.html") B, search '$Q' $(stat -c %s "$t/static/search.json") B ($hits hits)"

# run URL: "req/s p99_ms non2xx"
run() {
  wrk -t2 -c64 -d"${DUR}s" --latency "$1" > "$t/wrk.out" 2>&1 || true
  python3 - "$t/wrk.out" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
rps = re.search(r'Requests/sec:\s+([\d.]+)', s)
p99 = re.search(r'^\s+99%\s+([\d.]+)(us|ms|s)\b', s, re.M)
bad = re.search(r'Non-2xx or 3xx responses:\s+(\d+)', s)
err = re.search(r'Socket errors: (.*)', s)
ms = float(p99.group(1)) * {'us': 1e-3, 'ms': 1, 's': 1e3}[p99.group(2)] if p99 else float('nan')
print(f"{float(rps.group(1)) if rps else 0:.0f} {ms:.2f} {int(bad.group(1)) if bad else 0}"
      f" {err.group(1).replace(' ', '') if err else '-'}")
PY
}
rss() { awk '/^VmRSS/ {print int($2 / 1024) " MB"}' "/proc/$SRV/status"; }

declare -A base_rps base_p99
names=(document page search)
urls=("/api/videos/$id" "/v/$id" "/api/search?q=$Q")
statics=(doc.json page.html search.json)
for k in 0 1 2; do
  read -r r p _ _ < <(run "http://127.0.0.1:$pyport/${statics[k]}")
  base_rps[$k]=$r base_p99[$k]=$p
done
echo "RSS before: $(rss)"
printf '  %-5s %-9s %10s %9s %13s %13s %6s %s\n' round route 'req/s' 'p99 ms' 'static req/s' 'static p99' ratio verdict
for round in 1 2 3; do
  for k in 0 1 2; do
    read -r r p bad errs < <(run "$B${urls[k]}")
    if ((k < 2)); then
      ok=$(python3 -c "print('ok' if $r >= 5000 and $p < 20 and $bad == 0 else 'MISS')")
    else
      ok=$(python3 -c "print('ok' if $r >= 1000 and $bad == 0 else 'MISS')")
    fi
    [[ $bad == 0 && $errs == - ]] || ok+=" (non-2xx $bad, socket errors $errs)"
    ratio=$(python3 -c "print(f'{$r / max(${base_rps[$k]}, 1):.1f}x')")
    printf '  %-5s %-9s %10s %9s %13s %13s %6s %s\n' "$round" "${names[k]}" "$r" "$p" \
      "${base_rps[$k]}" "${base_p99[$k]}" "$ratio" "$ok"
  done
  echo "RSS after round $round: $(rss)"
done
echo "targets: document and page >= 5000 req/s with p99 < 20 ms; search >= 1000 req/s"
