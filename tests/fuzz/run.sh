#!/usr/bin/env bash
# Build every libFuzzer target and run it briefly on its seed corpus.
#   tests/fuzz/run.sh [NAME...]        all targets, or only the named ones
# A target is tests/fuzz/fuzz_<name>.c defining LLVMFuzzerTestOneInput; its seeds are in
# tests/fuzz/corpus_<name>/ (copied to a scratch directory, so the run never changes the
# tree) and an optional dictionary in tests/fuzz/<name>.dict. The library sources and
# pkg-config packages it needs are listed in its opening comment:
#    * fuzz-sources: lib/captions*.c lib/base/util.c ...   (globs expand)
#    * fuzz-pkgs: libavformat libavcodec ...
#    * fuzz-libs: -lflite ...                      (libraries without a pkg-config file)
# (default: every .c under lib/, the Makefile's PKGS and its FLITE_LIBS). Everything is compiled with clang and
# -fsanitize=fuzzer,address,undefined, undefined behaviour being fatal.
# Environment: FUZZ_TIME seconds per target (20), FUZZ_JOBS targets at once (the cores),
# FUZZ_RSS_MB (512), FUZZ_MAX_LEN (65536),
# FUZZ_KEEP=1 keeps the scratch corpus (the path is printed). Prints "fuzz <name>: N runs,
# no crash" per target; exits non-zero when a target fails to build or crashes (the crash
# input is saved as build/fuzz/<name>-crash-...).
set -uo pipefail
cd "$(dirname "$0")/../.."
time_s=${FUZZ_TIME:-20}
rss_mb=${FUZZ_RSS_MB:-512}
max_len=${FUZZ_MAX_LEN:-65536}
out=build/fuzz
mkdir -p "$out"
all_pkgs=$(sed -n 's/^PKGS = //p' Makefile)
all_libs=$(sed -n 's/^FLITE_LIBS = //p' Makefile)
# one target: build, then run; its report goes to $out/<name>.report, and it exits
# non-zero on a build failure or a crash
fuzz_one() {
  local src=$1 name sources pkgs libs bin work log rc runs dict=()
  name=$(basename "$src" .c); name=${name#fuzz_}
  sources=$(sed -n 's/^ *\* fuzz-sources: *//p' "$src" | head -n 1)
  pkgs=$(sed -n 's/^ *\* fuzz-pkgs: *//p' "$src" | head -n 1)
  libs=$(sed -n 's/^ *\* fuzz-libs: *//p' "$src" | head -n 1)
  [[ -n $sources ]] || sources=$(find lib -name "*.c" | sort)
  [[ -n $pkgs ]] || pkgs=$all_pkgs
  [[ -n $libs ]] || libs=$all_libs
  bin=$out/fuzz_$name
  exec > "$out/$name.report"
  # shellcheck disable=SC2086
  if ! clang -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
      -Iinclude -Ilib -Isrc -Isrc $(pkg-config --cflags $pkgs) \
      "$src" $sources $(pkg-config --libs $pkgs) $libs -lm -pthread -o "$bin" 2> "$out/$name.build.log"; then
    echo "fuzz $name: build failed"; sed 's/^/    /' "$out/$name.build.log" | head -n 30
    return 1
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/vt-fuzz-$name.XXXXXX")
  mkdir -p "$work/corpus"
  if [[ -d tests/fuzz/corpus_$name ]]; then cp -R "tests/fuzz/corpus_$name/." "$work/corpus/"; fi
  [[ -f tests/fuzz/$name.dict ]] && dict=(-dict="tests/fuzz/$name.dict")
  log=$out/$name.log
  # ASan keeps up to 256 MB of freed memory in quarantine by default, which counts against
  # -rss_limit_mb though the program holds none of it: a smaller quarantine keeps the limit
  # about the program's own memory
  ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32} \
  "$bin" -max_total_time="$time_s" -rss_limit_mb="$rss_mb" -max_len="$max_len" -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$out/$name-" "${dict[@]}" "$work/corpus" > "$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if ((rc != 0)); then
    echo "fuzz $name: CRASH after ${runs:-?} runs (exit $rc), log $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written|fuzz_)' "$log" | head -n 10 | sed 's/^/    /'
  else
    echo "fuzz $name: ${runs:-?} runs, no crash ($(ls "$work/corpus" | wc -l) corpus files)"
  fi
  if [[ ${FUZZ_KEEP:-} == 1 ]]; then echo "    corpus kept in $work/corpus"; else rm -rf "$work"; fi
  return $rc
}
# FUZZ_JOBS targets at a time (a fuzzer is one process on one core): the same time per
# target, the whole run in about 1/FUZZ_JOBS of the wall time
jobs_max=${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2> /dev/null || echo 1)}
((jobs_max >= 1)) || jobs_max=1
status=0 n=0 running=0 names=()
for src in tests/fuzz/fuzz_*.c; do
  [[ -e $src ]] || continue
  name=$(basename "$src" .c); name=${name#fuzz_}
  if (($#)) && [[ " $* " != *" $name "* ]]; then continue; fi
  n=$((n + 1)); names+=("$name")
  if ((running >= jobs_max)); then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$src" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
for name in "${names[@]}"; do cat "$out/$name.report"; done
((n > 0)) || { echo "no fuzz targets"; exit 1; }
exit $status
