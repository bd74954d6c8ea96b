#!/usr/bin/env bash
# Text that changes inside a shot: the words read with the keyframe stage's extra frames
# (lib/visual/textchange.c) against the stage without them, and what they cost, from the
# repository root:
#   bench/textchange_bench.sh
# Clips: tests/fixtures/gen_text_builds.sh (a slide build, a page scrolled in steps),
# tests/fixtures/gen_text_scenes.sh (a title sequence whose words appear in turn, two lower
# thirds, typing in a terminal), seed BENCH_SEED (default 1), and every clip of
# tests/data/realcuts with words in its truth (Big Buck Bunny's opening titles). Words read:
# `vidtheque add` + export of each clip, scored by tests/tools/score_realcuts.py (a truth
# word is read when the OCR of a kept frame inside its span holds it); goal >= 0.9. The
# baseline is the same binary with VIDTHEQUE_TEXT_FRAMES=0 (one frame per shot and no text
# grid: the stage before the extra frames), or VIDTHEQUE_BASELINE=BINARY (e.g. main's).
# Speed: kfdump (the keyframe stage alone, built from this tree) over all the clips, with
# and without, runs alternated, best of 3: seconds per minute of video and the ratio
# (target <= 1.10: the extra frames cost at most 10 %).
set -euo pipefail
. bench/lib.sh
bench_setup textchange_bench tests/tools/score_realcuts.py ffmpeg python3
bench_lib textchange_bench
PKGS=$(sed -n "s/^PKGS = //p" Makefile)
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc -o "$tmp/kfdump" tests/tools/kfdump.c \
    build/rel/libvidtheque.a $(pkg-config --cflags --libs $PKGS) -lm -pthread
V=${VIDTHEQUE:-$PWD/vidtheque}
B=${VIDTHEQUE_BASELINE:-$V}
seed=${BENCH_SEED:-1}

echo "generating the text clips (seed $seed) ..." >&2
bash tests/fixtures/gen_text_builds.sh "$tmp/fx" "$seed" >/dev/null
bash tests/fixtures/gen_text_scenes.sh "$tmp/fx" "$seed" >/dev/null
truths=("$tmp"/fx/{build,titles,lower,typing,scroll}.json)
for t in tests/data/realcuts/*.json; do
    python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["text"])' "$t" &&
        truths+=("$t")
done
clip_of() {
    local c
    c=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clip"])' "$1")
    [[ $c == /* ]] && echo "$c" || echo "$(dirname "$1")/$c"
}

# words read: each clip added with the extra frames (on) and without (off)
for mode in on off; do
    if [[ $mode == on ]]; then bin=$V env=(); else
        bin=$B env=()
        [[ -n ${VIDTHEQUE_BASELINE:-} ]] || env=(VIDTHEQUE_TEXT_FRAMES=0)
    fi
    env "${env[@]}" "$bin" -q -L "$tmp/lib-$mode" init
    args=()
    for t in "${truths[@]}"; do
        n=$(basename "$t" .json)
        id=$(env "${env[@]}" "$bin" -q -L "$tmp/lib-$mode" add "$(clip_of "$t")")
        env "${env[@]}" "$bin" -q -L "$tmp/lib-$mode" export "$id" >"$tmp/$n.$mode.json"
        args+=("$t" "$tmp/$n.$mode.json")
    done
    python3 tests/tools/score_realcuts.py "${args[@]}" >"$tmp/score.$mode" || true
done
frames_of() {
    python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); f=r["frames"]
print(len(f), sum(x.get("state") != "skipped" for x in f), len(r["shots"]))' "$1"
}
printf '%-14s %7s %-30s %-30s\n' "clip" "words" "extra frames on: read, frames" "off (baseline): read, frames"
for t in "${truths[@]}"; do
    n=$(basename "$t" .json) c=$(basename "$(clip_of "$t")")
    row=()
    for mode in on off; do
        w=$(grep -E "^$c " "$tmp/score.$mode" | sed -n 's/.*words \([0-9]*\/[0-9]*\).*/\1/p')
        read -r all kept shots <<<"$(frames_of "$tmp/$n.$mode.json")"
        row+=("$(printf '%-7s %3d taken %3d kept %2d shots' "$w" "$all" "$kept" "$shots")")
    done
    printf '%-14s %7s %-30s   %s\n' "$c" "" "${row[0]}" "${row[1]}"
done
for mode in on off; do
    printf '%-44s %s\n' "words read, extra frames $mode" \
        "$(sed -n 's/^on-screen words read: //p' "$tmp/score.$mode")"
done
grep -h '^    words not read' "$tmp/score.on" | sed 's/^    /  on: /' || true

# speed: the keyframe stage alone over the same clips, with and without, alternated
clips=()
for t in "${truths[@]}"; do clips+=("$(clip_of "$t")"); done
dur=0
for c in "${clips[@]}"; do
    d=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$c")
    dur=$(awk "BEGIN{print $dur + $d}")
done
kf_all() {
    local s
    s=$(date +%s.%N)
    for c in "${clips[@]}"; do
        rm -rf "$tmp/kf" && mkdir -p "$tmp/kf"
        env "$@" "$tmp/kfdump" "$c" "$tmp/kf" >/dev/null 2>&1
    done
    awk "BEGIN{print $(date +%s.%N) - $s}"
}
best_on= best_off= pairs=
for _ in 1 2 3; do
    off=$(kf_all VIDTHEQUE_TEXT_FRAMES=0)
    on=$(kf_all VIDTHEQUE_TEXT_FRAMES=1)
    pairs="$pairs $(awk "BEGIN{printf \"%.3f\", $on / $off}")"
    if [[ -z $best_on ]] || awk "BEGIN{exit !($on < $best_on)}"; then best_on=$on; fi
    if [[ -z $best_off ]] || awk "BEGIN{exit !($off < $best_off)}"; then best_off=$off; fi
done
ratio=$(awk "BEGIN{printf \"%.3f\", $best_on / $best_off}")
printf '%-44s %8.1f\n' "seconds of video (${#clips[@]} clips)" "$dur"
printf '%-44s %8.2f\n' "keyframe stage s/min, without (best of 3)" "$(awk "BEGIN{print $best_off * 60 / $dur}")"
printf '%-44s %8.2f\n' "keyframe stage s/min, with (best of 3)" "$(awk "BEGIN{print $best_on * 60 / $dur}")"
printf '%-44s %8s  %s\n' "ratio with / without (target <= 1.10)" "$ratio" \
    "$(awk "BEGIN{print ($ratio <= 1.10) ? \"ok\" : \"SLOW\"}")"
printf '%-44s %s\n' "ratio of each run pair" "${pairs# }"
