#!/usr/bin/env bash
# MobileNet v1 0.25 image embeddings (224x224) on 1 and 2 threads next to a plain GEMM of
# the same multiply-adds. MODEL defaults to the test model in tests/data.
set -euo pipefail
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/tflite_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) -lm -pthread -o "$t/tflite_bench"
"$t/tflite_bench" "${MODEL:-tests/data/mobilenet-v1-0.25-224/mobilenet_v1_0.25_224_1_metadata_1.tflite}" "${FRAMES:-640}" "${ROUNDS:-3}"
