#!/usr/bin/env bash
# Keyframe stage speed and memory, run from the repository root:
#   bench/keyframe_bench.sh
# Speed: kfdump on a 720p H.264 talk (x264 medium, B-frames, keyint 250) against
# `ffmpeg -threads 2 -i FILE -an -f null -` decoding the same file, runs alternated;
# best of 3 each; target ratio <= 0.6. Memory: peak RSS of kfdump on a 1080p version;
# target < 400 MB.
# Environment: BENCH_STRETCH (shot length factor, default 4: about 4 minutes).
set -euo pipefail
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PKGS=$(sed -n "s/^PKGS = //p" Makefile)

make -s build/rel/libvidtheque.a
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc -o "$tmp/kfdump" tests/tools/kfdump.c \
    build/rel/libvidtheque.a $(pkg-config --cflags --libs $PKGS) -lm -pthread

echo "generating the 720p talk (x264 medium) ..." >&2
GEN_STRETCH=${BENCH_STRETCH:-4} GEN_PRESET=medium GEN_NOISE=6 \
    tests/fixtures/gen_talk.sh "$tmp/fx" 7 >/dev/null
v="$tmp/fx/talk.mp4"

# Runs alternate (ffmpeg, ours, ffmpeg, ...) so that load from other work on the
# machine falls on both alike; best of 3 each, and the ratio of each pair for the spread.
time_of() {
    { /usr/bin/env TIMEFORMAT=%R bash -c "time $* >/dev/null 2>&1"; } 2>&1
}
mkdir -p "$tmp/out"
t_ff="" t_kf="" pairs=""
for _ in 1 2 3; do
    f=$(time_of ffmpeg -v error -threads 2 -i "$v" -an -f null -)
    rm -rf "$tmp/out"/*
    k=$(time_of "$tmp/kfdump" "$v" "$tmp/out")
    pairs="$pairs $(awk "BEGIN{printf \"%.2f\", $k / $f}")"
    if [ -z "$t_ff" ] || awk "BEGIN{exit !($f < $t_ff)}"; then t_ff=$f; fi
    if [ -z "$t_kf" ] || awk "BEGIN{exit !($k < $t_kf)}"; then t_kf=$k; fi
done
ratio=$(awk "BEGIN{printf \"%.2f\", $t_kf / $t_ff}")
dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$v")

echo "making a 1080p copy ..." >&2
ffmpeg -v error -y -i "$v" -vf scale=1920:1080 -c:v libx264 -preset veryfast -bf 3 -g 250 \
    -c:a copy "$tmp/talk1080.mp4"
rm -rf "$tmp/out"/*
rss_kb=$("$tmp/kfdump" "$tmp/talk1080.mp4" "$tmp/out" 2>&1 >/dev/null |
    sed -n 's/.*max rss \([0-9]*\) kB.*/\1/p')
rss_mb=$((rss_kb / 1024))

printf '%-44s %10s\n' "keyframe bench ($(printf '%.0f' "$dur") s of 720p H.264)" "seconds"
printf '%-44s %10s\n' "ffmpeg -threads 2 decode (best of 3)" "$t_ff"
printf '%-44s %10s\n' "kfdump, keyframe stage (best of 3)" "$t_kf"
printf '%-44s %10s  %s\n' "ratio (target <= 0.6)" "$ratio" \
    "$(awk "BEGIN{print ($ratio <= 0.6) ? \"ok\" : \"SLOW\"}")"
printf '%-44s %10s\n' "ratio of each run pair" "${pairs# }"
printf '%-44s %7s MB  %s\n' "peak RSS on 1080p (target < 400 MB)" "$rss_mb" \
    "$([ "$rss_mb" -lt 400 ] && echo ok || echo TOO BIG)"
