#!/usr/bin/env bash
# Frames by likeness: "more like this" over 1,000,000 frame vectors (p99 <= 60 ms) and the
# same-footage pass on a 100-video library (<= 2 s per new video). The libraries are built
# once in $VT_FRAMES_DIR (default /tmp/vt-frames-bench; the 1M-vector one takes minutes).
set -euo pipefail
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile) flite=$(sed -n 's/^FLITE_LIBS = //p' Makefile)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/frames_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) $flite -lm -pthread -o "$t/frames_bench"
"$t/frames_bench" "${VT_FRAMES_DIR:-/tmp/vt-frames-bench}" 300
