#!/usr/bin/env bash
# Whisper's log-mel front end on one core: one 30 s window for 80 and 128 bins, and a whole
# file the way transcribe does it. AUDIO defaults to jfk.wav (11 s: the window is then
# mostly silence, which costs the same). PyTorch's time for the same window, where it is
# installed: /usr/bin/python3 tests/tools/whisper_mel_ref.py --bench
set -euo pipefail
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/whisper_mel_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) -lm -pthread -o "$t/whisper_mel_bench"
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
"${pin[@]}" "$t/whisper_mel_bench" tests/data/whisper-assets/mel_filters.npz \
  "${AUDIO:-tests/data/speech/jfk.wav}" "${ROUNDS:-20}"
