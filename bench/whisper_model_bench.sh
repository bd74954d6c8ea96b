#!/usr/bin/env bash
# Whisper's network on tiny, base and small shapes (generated weights): seconds per 30 s
# window in the encoder, milliseconds per token in the decoder, peak RSS. THREADS (2),
# TOKENS (50) and ROUNDS (3: each time is the best of these) from the environment;
# SHAPES="tiny base" to choose.
set -euo pipefail
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/whisper_model_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) -lm -pthread -o "$t/whisper_model_bench"
# one process per shape: each peak RSS is its own
for s in ${SHAPES:-tiny base small}; do
  "$t/whisper_model_bench" "${THREADS:-2}" "${TOKENS:-50}" "$s"
done
