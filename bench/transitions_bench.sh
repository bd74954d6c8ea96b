#!/usr/bin/env bash
# Shot boundaries with gradual transitions, and the keyframe stage's speed, in one run,
# from the repository root:
#   bench/transitions_bench.sh
# Quality: kfdump (the whole keyframe stage) on tests/fixtures/gen_transitions.sh videos
# (seeds BENCH_SEEDS, default "1 2 3": dissolves and fades of 0.3-2 s between every pairing
# of slides and moving shots, and cuts), scored by tests/tools/score_transitions.py: F1
# (precision, recall) over all of them, dissolves and fades found N of M with kind and
# span right; target F1 >= 0.97 with every dissolve found; then the same on one video whose
# slides share one template (GEN_THEME=0, seed 1). Speed: kfdump on the bench
# talk of bench/keyframe_bench.sh against `ffmpeg -threads 2 -i FILE -an -f null -`,
# runs alternated, best of 3 each; target ratio <= 0.6.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PKGS=$(sed -n "s/^PKGS = //p" Makefile)

make -s build/rel/libvidtheque.a
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc -o "$tmp/kfdump" tests/tools/kfdump.c \
    build/rel/libvidtheque.a $(pkg-config --cflags --libs $PKGS) -lm -pthread

pairs=()
for seed in ${BENCH_SEEDS:-1 2 3}; do
    echo "generating transitions seed $seed ..." >&2
    bash tests/fixtures/gen_transitions.sh "$tmp/tr$seed" "$seed" >/dev/null
    mkdir -p "$tmp/out$seed"
    "$tmp/kfdump" "$tmp/tr$seed/trans.mp4" "$tmp/out$seed" >"$tmp/tr$seed/result.json" 2>/dev/null
    rm -rf "$tmp/out$seed" "$tmp/tr$seed/trans.mp4"
    pairs+=("$tmp/tr$seed/truth.json" "$tmp/tr$seed/result.json")
done
score=$(python3 tests/tools/score_transitions.py "${pairs[@]}" --quiet || true)
# and slides on one template (GEN_THEME=0): slide-to-slide mixes change only the text
echo "generating transitions, slides on one template, seed 1 ..." >&2
GEN_THEME=0 bash tests/fixtures/gen_transitions.sh "$tmp/th" 1 >/dev/null
mkdir -p "$tmp/outth"
"$tmp/kfdump" "$tmp/th/trans.mp4" "$tmp/outth" >"$tmp/th/result.json" 2>/dev/null
rm -rf "$tmp/outth" "$tmp/th/trans.mp4"
score_th=$(python3 tests/tools/score_transitions.py "$tmp/th/truth.json" "$tmp/th/result.json" \
    --quiet || true)

echo "generating the 720p talk (x264 medium) ..." >&2
GEN_STRETCH=${BENCH_STRETCH:-4} GEN_PRESET=medium GEN_NOISE=6 \
    tests/fixtures/gen_talk.sh "$tmp/fx" 7 >/dev/null
v="$tmp/fx/talk.mp4"
time_of() {
    { /usr/bin/env TIMEFORMAT=%R bash -c "time $* >/dev/null 2>&1"; } 2>&1
}
mkdir -p "$tmp/out"
t_ff="" t_kf="" runs=""
for _ in 1 2 3; do
    f=$(time_of ffmpeg -v error -threads 2 -i "$v" -an -f null -)
    rm -rf "$tmp/out"/*
    k=$(time_of "$tmp/kfdump" "$v" "$tmp/out")
    runs="$runs $(awk "BEGIN{printf \"%.2f\", $k / $f}")"
    if [ -z "$t_ff" ] || awk "BEGIN{exit !($f < $t_ff)}"; then t_ff=$f; fi
    if [ -z "$t_kf" ] || awk "BEGIN{exit !($k < $t_kf)}"; then t_kf=$k; fi
done
ratio=$(awk "BEGIN{printf \"%.2f\", $t_kf / $t_ff}")
dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$v")

echo "transitions (seeds ${BENCH_SEEDS:-1 2 3}; target F1 >= 0.97, every dissolve found)"
echo "$score" | sed 's/^/  /'
echo "transitions, slides on one template (GEN_THEME=0, seed 1)"
echo "$score_th" | sed 's/^/  /'
printf '%-44s %10s\n' "keyframe stage ($(printf '%.0f' "$dur") s of 720p H.264)" "seconds"
printf '%-44s %10s\n' "ffmpeg -threads 2 decode (best of 3)" "$t_ff"
printf '%-44s %10s\n' "kfdump, keyframe stage (best of 3)" "$t_kf"
printf '%-44s %10s  %s\n' "ratio (target <= 0.6)" "$ratio" \
    "$(awk "BEGIN{print ($ratio <= 0.6) ? \"ok\" : \"SLOW\"}")"
printf '%-44s %10s\n' "ratio of each run pair" "${runs# }"
