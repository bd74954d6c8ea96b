#!/usr/bin/env bash
# Word error rate of speech recognition with and without slide words as hints, in one run.
# Fixtures (tests/tools/hint_fixture.py), each recognised by tests/tools/sttdump twice, with
# and without --hints (the slides' lines, as the stt stage gives its OCR lines):
#   devops, biology   flite voices reading sentences with terms shown on their slides;
#   librivox          the five LibriVox clips of pocketsphinx-testdata, slides with their
#                     names and rarer words;
#   plain             the same clips, no slides: no hint, the recogniser is the plain one;
#   plain+devops      the same clips with the devops talk's slides: wrong hints, a stress
#   plain+biology     test of what hints cost when they do not belong to the speech.
# Prints one row per fixture: WER without, with, and the ratio (targets: <= 0.85 on the hint
# fixtures, <= 1.02 on LibriVox clips without slides), and the hint summary of the model.
#
# Usage, from the repository root: bench/stt_hints_bench.sh
set -euo pipefail

. bench/lib.sh 2>/dev/null || {
    echo "stt_hints_bench.sh: run from the repository root" >&2
    exit 2
}
bench_setup stt_hints_bench.sh lib/speech/stt.h ffmpeg flite pkg-config cc make python3
bench_lib stt_hints_bench.sh
read -r -a pkgs <<<"$(sed -n 's/^PKGS = //p' Makefile)"
read -r -a libs <<<"$(pkg-config --cflags --libs "${pkgs[@]}") $(sed -n 's/^FLITE_LIBS = //p' Makefile)"
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Ilib -Isrc -pthread -o "$tmp/sttdump" tests/tools/sttdump.c \
    build/rel/libvidtheque.a "${libs[@]}" -lm

for kind in devops biology librivox plain; do
    python3 tests/tools/hint_fixture.py "$kind" "$tmp/$kind"
done

wer() { # TRUTH TRANSCRIPT
    python3 tests/tools/score_wer.py "$1" "$2" --slack-s 1.0 | sed -n 's/.*wer_ours=\([0-9.]*\).*/\1/p'
}
printf '%-15s %10s %10s %7s  %s\n' fixture "WER plain" "WER hints" ratio "hints used"
row() { # NAME AUDIO-FIXTURE HINTS-FIXTURE
    local name=$1 audio=$tmp/$2 hints=$tmp/$3/hints.txt w0 w1 model
    "$tmp/sttdump" "$audio/talk.wav" >"$tmp/$name.0.json" 2>/dev/null
    "$tmp/sttdump" --hints "$hints" "$audio/talk.wav" >"$tmp/$name.1.json" 2>/dev/null
    w0=$(wer "$audio/truth.json" "$tmp/$name.0.json")
    w1=$(wer "$audio/truth.json" "$tmp/$name.1.json")
    model=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["model"]; print(m.split("; ", 1)[1] if "; " in m else "none")' "$tmp/$name.1.json")
    printf '%-15s %9.2f%% %9.2f%% %7.3f  %s\n' "$name" "$w0" "$w1" \
        "$(python3 -c 'import sys; a, b = map(float, sys.argv[1:]); print(b / a if a else 1.0)' "$w0" "$w1")" \
        "$model"
}
row devops devops devops
row biology biology biology
row librivox librivox librivox
row plain plain plain
row plain+devops plain devops
row plain+biology plain biology
