#!/usr/bin/env bash
# Ingest throughput with 1, 2 and 4 worker processes against one PostgreSQL (issue 15,
# "Measured"): INGEST_VIDEOS generated talks (tests/fixtures/gen_talk.sh, seeds 1..N,
# default 4) are queued with `add`, then P `vidtheque worker --drain --stats` processes
# (one stage at a time each) index them. Printed per P: the wall time, videos per minute,
# the speed-up over one process measured in the same run, and the queue's share of the
# workers' time (claim + lease + commit, from --stats). The stages are CPU-bound: on a
# 2-core machine P = 2 may approach 2x and P = 4 cannot pass it; what must not grow with P
# is the queue's share. On VT_TEST_PG's server, else a throwaway cluster (tests/pg).
#   bench/ingest_bench.sh        env: INGEST_VIDEOS (4), INGEST_PROCS ("1 2 4")
set -euo pipefail
cd "$(dirname "$0")/.."
: "${VIDTHEQUE:=$PWD/build/rel/vidtheque}"
videos=${INGEST_VIDEOS:-4} procs=${INGEST_PROCS:-1 2 4}
. bench/lib.sh
t=$(mktemp -d)
trap 'bench_pg_cleanup; rm -rf "$t"' EXIT
bench_pg_start vt_ingest || { echo "ingest_bench.sh: no PostgreSQL"; exit 0; }
for i in $(seq 1 "$videos"); do
  bash tests/fixtures/gen_talk.sh "$t/talk$i" "$i" > /dev/null
done
[[ -r /proc/loadavg ]] && echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) cores"
echo "$videos talks of $(ffprobe -v error -show_entries format=duration -of csv=p=0 "$t/talk1/talk.mp4" | cut -d. -f1) s each"

base=
for p in $procs; do
  lib=$t/lib$p
  "$VIDTHEQUE" -q -L "$lib" init --db "$(bench_pg_newdb)"
  for i in $(seq 1 "$videos"); do "$VIDTHEQUE" -q -L "$lib" add "$t/talk$i/talk.mp4" > /dev/null; done
  s0=$(date +%s.%N)
  pids=()
  for w in $(seq 1 "$p"); do
    "$VIDTHEQUE" -L "$lib" worker --drain --stats 2> "$t/w$p.$w.err" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || { cat "$t/w$p".*.err >&2; exit 1; }; done
  s1=$(date +%s.%N)
  ready=$("$VIDTHEQUE" -q -L "$lib" ls | grep -c ready || true)
  ((ready == videos)) || { echo "ingest_bench.sh: $ready of $videos videos ready with $p worker(s)" >&2; exit 1; }
  line=$(python3 - "$p" "$videos" "$s0" "$s1" "${base:-0}" "$t/w$p".*.err << 'PY'
import re, sys
p, n, s0, s1, base = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
wall = s1 - s0
q = runs = 0
for f in sys.argv[6:]:
    e = open(f).read()
    q += float(re.search(r'total ([0-9.]+) s', e).group(1))
    runs += int(re.search(r'worker: (\d+) stage run', e).group(1))
busy = wall * p  # each process holds one stage at a time
speed = f"x{base / wall:.2f} of 1 process" if base else "baseline"
print(f"{wall:.3f} {p} worker process(es): {runs} stage runs in {wall:.1f} s = {60 * n / wall:.2f} videos/min, "
      f"{speed}; queue {q * 1e3:.0f} ms = {100 * q / busy:.3f} % of the workers' time")
PY
  )
  base=${base:-${line%% *}}
  echo "${line#* }"
done
[[ -r /proc/loadavg ]] && echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
