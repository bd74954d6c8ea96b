#!/usr/bin/env bash
# Every libFuzzer target (tests/fuzz/fuzz_*.c: the query parser, the caption parsers and
# writers) runs briefly on its seed corpus; a crash, a leak or undefined behaviour fails.
# alone: its fuzzers run for a fixed time on every core (FUZZ_JOBS)
. "$(dirname "$0")/lib.sh"
FUZZ_TIME=${FUZZ_TIME:-6} bash "$ROOT/tests/fuzz/run.sh"
