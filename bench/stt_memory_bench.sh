#!/usr/bin/env bash
# Peak memory of `add` on a long recording, which must stay under 400 MB whatever the duration.
# Generates (in seconds, from one 10-minute FLAC unit copied by the concat demuxer) an
# audio-only file of HOURS hours (default 10): FLAC 16 kHz mono in Matroska, silence with a
# 0.5 s 440 Hz tone at the start of every 10 minutes. What it measures: the stt stage decoding
# the whole time line, measuring every 10 ms frame and cutting segments in its bounded
# window; the 60 tones are the only segments the recogniser sees (silence never reaches it),
# so this is the memory that grows with duration, not the speed of recognition on speech
# (stt_bench.sh measures that). Prints the peak RSS of `vidtheque add` (GNU time's maximum
# resident set size) as a ratio to the 400 MB target and, when VIDTHEQUE_BASELINE names another
# vidtheque binary (e.g. one built from main), to that baseline, run on the same file in
# the same run. The decoders themselves (about 95 MB each, one per core up to 8) are part of
# the figure: the target holds for this machine's core count.
#
# Usage, from the repository root: bench/stt_memory_bench.sh [HOURS]
set -euo pipefail

hours=${1:-10}
if ! [[ $hours =~ ^[1-9][0-9]?$ ]] || ((hours > 24)); then
    echo "stt_memory_bench.sh: '$hours': bad duration (1 to 24 hours)" >&2
    exit 2
fi
. bench/lib.sh 2>/dev/null || {
    echo "stt_memory_bench.sh: run from the repository root" >&2
    exit 2
}
bench_binaries stt_memory_bench.sh Makefile ffmpeg python3 /usr/bin/time
t=$tmp

start=$(date +%s.%N)
ffmpeg -nostdin -v error -f lavfi -i "aevalsrc='if(lt(t,0.5),0.3*sin(2*PI*440*t),0)':s=16000:d=600" \
    -ac 1 -c:a flac "$t/unit.flac"
for ((i = 0; i < hours * 6; i++)); do echo "file 'unit.flac'"; done > "$t/list.txt"
ffmpeg -nostdin -v error -f concat -safe 0 -i "$t/list.txt" -c copy "$t/long.mka"
gen_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

# measure NAME BINARY: add the file with BINARY; "peak_kB wall_s stt_s stt_state" in $t/NAME
measure() {
    local s e
    s=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$t/$1.rss" "$2" -q -L "$t/$1.lib" add "$t/long.mka" > "$t/$1.id"
    e=$(date +%s.%N)
    "$2" -q -L "$t/$1.lib" export "$(cat "$t/$1.id")" > "$t/$1.json"
    python3 - "$t/$1.json" "$(tail -n 1 "$t/$1.rss")" "$s" "$e" > "$t/$1" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stt = [s for s in d["stages"] if s["name"] == "stt"][0]
print(sys.argv[2], float(sys.argv[4]) - float(sys.argv[3]), stt.get("took_s", 0), stt["state"])
PY
}
measure ours "$VIDTHEQUE"
if [[ -n ${VIDTHEQUE_BASELINE:-} ]]; then
    measure base "$VIDTHEQUE_BASELINE"
fi

printf '%d h of audio-only FLAC (silence, a 0.5 s tone every 10 min), made in %s s; %d cores\n' \
    "$hours" "$gen_s" "$(getconf _NPROCESSORS_ONLN)"
printf '%-10s %9s %10s %12s %8s %8s  %s\n' run "peak MB" "/ 400 MB" "/ baseline" "wall s" "stt s" \
    "stt stage"
# row NAME FILE
row() {
    local name=$1 kb wall stt state vs=-
    read -r kb wall stt state < "$t/$2"
    [[ -f $t/base && $name != baseline ]] && vs=$(awk -v a="$kb" -v b="$(cut -d' ' -f1 "$t/base")" \
        'BEGIN { printf "%.2f", a / b }')
    [[ $name == baseline ]] && vs=1.00
    printf '%-10s %9d %10.2f %12s %8.1f %8.1f  %s\n' "$name" "$((kb / 1024))" \
        "$(awk -v a="$kb" 'BEGIN { print a / 1024 / 400 }')" "$vs" "$wall" "$stt" "$state"
}
if [[ -f $t/base ]]; then
    row baseline base
fi
row ours ours
read -r kb _ < "$t/ours"
if ((kb < 400 * 1024)); then
    echo "peak memory target <= 400 MB: met"
else
    echo "peak memory target <= 400 MB: NOT met"
fi
