#!/usr/bin/env bash
# Vector search at 1,000,000 random unit vectors x 256 dims (bench/vindex_bench.c): p50
# and p99 of top-50 against the exact float32 scan in the same run, recall@10, the time
# to build the index, the cost of reciprocal rank fusion and the peak RSS (about 1.4 GB).
# Takes well under a minute; N, DIM and QUERIES in the environment change the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
# The driver links against the release library; make rebuilds it only if it is stale.
if ! make -s build/rel/libvidtheque.a >"$t/make.log" 2>&1; then
    cat "$t/make.log" >&2
    echo "vindex_bench.sh: cannot build build/rel/libvidtheque.a" >&2
    exit 1
fi
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/vindex_bench.c build/rel/libvidtheque.a \
    -lm -pthread -o "$t/vindex_bench"
# Wall times include waiting for a core: the load says how busy the machine was.
[[ -r /proc/loadavg ]] && echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) cores"
start=$(date +%s)
"$t/vindex_bench" "${N:-1000000}" "${DIM:-256}" "${QUERIES:-200}"
echo "whole run: $(($(date +%s) - start)) s"
