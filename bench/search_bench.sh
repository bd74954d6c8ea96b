#!/usr/bin/env bash
# Search over a synthetic library of 10,000 videos and 1,000,000 cues (built once in
# $VT_BENCH_DIR, default /tmp/vt-search-bench; a few minutes the first time).
set -euo pipefail
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/search_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) -lm -pthread -o "$t/search_bench"
"$t/search_bench" "${VT_BENCH_DIR:-/tmp/vt-search-bench}" "${VIDEOS:-10000}" "${CUES:-100}" 300
