#!/usr/bin/env bash
# Model2Vec embedding throughput on one core (chunks of ~60 words) next to a
# tokenising-only pass over the same text. MODEL defaults to the test model in
# tests/data; point it at a real one (e.g. potion-base-8M) to measure that.
set -euo pipefail
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/embed_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) -lm -pthread -o "$t/embed_bench"
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
"${pin[@]}" "$t/embed_bench" "${MODEL:-tests/data/model2vec-test-vocab-quantized}" \
  "${CHUNKS:-20000}" "${ROUNDS:-5}"
