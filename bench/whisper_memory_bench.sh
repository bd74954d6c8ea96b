#!/usr/bin/env bash
# Peak memory of `add` with Whisper on long recordings, which must not grow with the duration.
# Generates two audio-only files (FLAC 16 kHz mono in Matroska, made in seconds by the concat
# demuxer from one 5-minute unit: tests/data/speech/jfk.wav's 11 s of speech, then silence),
# SHORT and LONG hours long (default 1 and 3), and indexes each twice: with stt.model = the
# generated checkpoint tests/data/whisper-test (d_model 64, real vocabulary: the model is tiny,
# so what is measured is what grows with duration: the time line, the segmenter's window, the
# windows of mel, the transcript and its words), and with PocketSphinx (no stt.model), in
# the same run. Prints each run's peak RSS (GNU time's maximum resident set size), the
# ratio LONG / SHORT per backend (the target: at most 1.10), and Whisper's peak against
# PocketSphinx's at each duration.
#
# Usage, from the repository root: bench/whisper_memory_bench.sh [SHORT_HOURS [LONG_HOURS]]
# VIDTHEQUE_WHISPER_ASSETS defaults to tests/data/whisper-assets (the vocabularies and
# filterbanks, when not installed).
set -euo pipefail

short=${1:-1}
long=${2:-3}
for h in "$short" "$long"; do
    if ! [[ $h =~ ^[1-9][0-9]?$ ]] || ((h > 24)); then
        echo "whisper_memory_bench.sh: '$h': bad duration (1 to 24 hours)" >&2
        exit 2
    fi
done
: "${VIDTHEQUE:=$PWD/vidtheque}"
: "${VIDTHEQUE_WHISPER_ASSETS:=$PWD/tests/data/whisper-assets}"
export VIDTHEQUE_WHISPER_ASSETS
ckpt=$PWD/tests/data/whisper-test
for tool in ffmpeg python3 /usr/bin/time "$VIDTHEQUE"; do
    if ! command -v "$tool" > /dev/null; then
        echo "whisper_memory_bench.sh: '$tool': not found" >&2
        exit 2
    fi
done
[[ -f $ckpt/model.safetensors && -f tests/data/speech/jfk.wav ]] || {
    echo "whisper_memory_bench.sh: run from the repository root" >&2
    exit 2
}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

start=$(date +%s.%N)
ffmpeg -nostdin -v error -i tests/data/speech/jfk.wav -af apad=whole_dur=300 -ar 16000 -ac 1 \
    -c:a flac "$t/unit.flac"
for h in "$short" "$long"; do
    for ((i = 0; i < h * 12; i++)); do echo "file 'unit.flac'"; done > "$t/list$h.txt"
    ffmpeg -nostdin -v error -f concat -safe 0 -i "$t/list$h.txt" -c copy "$t/long$h.mka"
done
gen_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

# measure NAME HOURS [MODEL]: add the file of HOURS hours, with stt.model MODEL when given;
# "peak_kB wall_s stt_s stt_state n_cues n_words" in $t/NAME
measure() {
    local s e lib=$t/$1.lib
    "$VIDTHEQUE" -q -L "$lib" init > /dev/null
    if [[ -n ${3:-} ]]; then
        "$VIDTHEQUE" -q -L "$lib" config set stt.model "$3" > /dev/null
    fi
    s=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$t/$1.rss" "$VIDTHEQUE" -q -L "$lib" add "$t/long$2.mka" > "$t/$1.id"
    e=$(date +%s.%N)
    "$VIDTHEQUE" -q -L "$lib" export "$(cat "$t/$1.id")" > "$t/$1.json"
    python3 - "$t/$1.json" "$(tail -n 1 "$t/$1.rss")" "$s" "$e" > "$t/$1" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stt = [s for s in d["stages"] if s["name"] == "stt"][0]
words = sum(len(c.get("words", [])) for c in d["cues"])
print(sys.argv[2], float(sys.argv[4]) - float(sys.argv[3]), stt.get("took_s", 0), stt["state"],
      len(d["cues"]), words)
PY
}
measure whisper_s "$short" "$ckpt"
measure whisper_l "$long" "$ckpt"
measure sphinx_s "$short"
measure sphinx_l "$long"

printf '%d and %d h of audio-only FLAC (jfk.wav every 5 min, silence between), made in %s s; %d cores\n' \
    "$short" "$long" "$gen_s" "$(getconf _NPROCESSORS_ONLN)"
printf '%-12s %5s %9s %8s %8s %6s %6s  %s\n' backend hours "peak MB" "wall s" "stt s" cues words \
    "stt stage"
row() { # row BACKEND HOURS FILE
    local kb wall stt state cues words
    read -r kb wall stt state cues words < "$t/$3"
    printf '%-12s %5d %9.1f %8.1f %8.1f %6d %6d  %s\n' "$1" "$2" "$(awk -v a="$kb" 'BEGIN { print a / 1024 }')" \
        "$wall" "$stt" "$cues" "$words" "$state"
}
row whisper "$short" whisper_s
row whisper "$long" whisper_l
row pocketsphinx "$short" sphinx_s
row pocketsphinx "$long" sphinx_l
kb() { cut -d' ' -f1 "$t/$1"; }
ratio() { awk -v a="$(kb "$1")" -v b="$(kb "$2")" 'BEGIN { printf "%.2f", a / b }'; }
printf 'peak %d h / %d h: whisper %s, pocketsphinx %s (target <= 1.10: %s)\n' "$long" "$short" \
    "$(ratio whisper_l whisper_s)" "$(ratio sphinx_l sphinx_s)" \
    "$(awk -v a="$(ratio whisper_l whisper_s)" 'BEGIN { print a <= 1.10 ? "met" : "NOT met" }')"
printf 'peak whisper / pocketsphinx: %s at %d h, %s at %d h\n' "$(ratio whisper_s sphinx_s)" \
    "$short" "$(ratio whisper_l sphinx_l)" "$long"
