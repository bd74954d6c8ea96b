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
# Speed: kfdump (the keyframe stage alone, built from this tree), with and without, runs
# alternated, best of 3, CPU and wall seconds per minute of video, on ordinary footage (the
# generated talk, the real clips without on-screen words: target ratio <= 1.10, the extra
# frames cost at most 10 %) and on the text clips (where each extra frame is wanted: its
# cost, no target).
set -euo pipefail
. bench/lib.sh
bench_setup textchange_bench tests/tools/score_realcuts.py ffmpeg python3
bench_lib textchange_bench
bench_kfdump
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
        id=$(env "${env[@]}" "$bin" -q -L "$tmp/lib-$mode" add "$(bench_clip_of "$t")")
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
    n=$(basename "$t" .json) c=$(basename "$(bench_clip_of "$t")")
    row=()
    for mode in on off; do
        w=$(grep -E "^$c " "$tmp/score.$mode" | sed -n 's/.*words \([0-9]*\/[0-9]*\).*/\1/p')
        read -r all kept shots <<<"$(frames_of "$tmp/$n.$mode.json")"
        row+=("$(printf '%-7s %3d taken %3d kept %2d shots' "$w" "$all" "$kept" "$shots")")
    done
    printf '%-14s %7s %-30s   %s\n' "$c" "" "${row[0]}" "${row[1]}"
done
for mode in on off; do
    printf '%-44s %s; mean of the clips %s\n' "words read, extra frames $mode" \
        "$(sed -n 's/^on-screen words read: //p' "$tmp/score.$mode")" \
        "$(sed -n 's/.* words \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' "$tmp/score.$mode" |
            awk '{s += $1 / $2; n++} END {printf "%.3f", n ? s / n : 0}')"
done
grep -h '^    words not read' "$tmp/score.on" | sed 's/^    /  on: /' || true

# speed: the keyframe stage alone (kfdump), with and without, runs alternated, best of 3,
# in CPU seconds (user + system: the machine is shared, and wall time under load says more
# about the others) and wall seconds, per minute of video. Two sets: the text clips above,
# where every extra frame is wanted, and ordinary footage where few are (the generated
# talk, gen_talk.sh seed 1, the clips of tests/data/realcuts without on-screen words in
# their truth, and pyscenedetect's).
echo "generating the talk (gen_talk.sh seed 1) ..." >&2
bash tests/fixtures/gen_talk.sh "$tmp/talk" 1 >/dev/null
text_clips=()
for t in "${truths[@]}"; do text_clips+=("$(bench_clip_of "$t")"); done
# ordinary: the clips of tests/data/realcuts whose truth lists no on-screen words (those with
# words, titles and screen recordings, are text clips: their extra frames are wanted)
plain_clips=("$tmp/talk/talk.mp4")
for c in tests/data/realcuts/*.mp4; do
    python3 -c 'import json,sys; sys.exit(any(s["words"] for s in json.load(open(sys.argv[1]))["text"]))' \
        "${c%.mp4}.json" && plain_clips+=("$c")
done
plain_clips+=(tests/data/pyscenedetect/*.mp4)
# kf_set VAR CLIP...: run kfdump on every clip once per mode, alternated, 3 times; VAR_on,
# VAR_off: the best CPU and wall seconds of each mode, "cpu wall"; VAR_extra: frames added
kf_set() {
    local var=$1 c m r k u sy e cpu wall best_on="" best_off="" n_on=0 n_off=0
    shift
    for r in 1 2 3; do
        for m in 0 1; do
            cpu=0 wall=0
            for c in "$@"; do
                rm -rf "$tmp/kf" && mkdir -p "$tmp/kf"
                VIDTHEQUE_TEXT_FRAMES=$m /usr/bin/time -f '%U %S %e' -o "$tmp/time" \
                    "$tmp/kfdump" "$c" "$tmp/kf" >"$tmp/kf.json" 2>/dev/null
                read -r u sy e <"$tmp/time"
                cpu=$(awk "BEGIN{print $cpu + $u + $sy}") wall=$(awk "BEGIN{print $wall + $e}")
                if ((r == 1)); then
                    k=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["frames"]))' "$tmp/kf.json")
                    if ((m)); then n_on=$((n_on + k)); else n_off=$((n_off + k)); fi
                fi
            done
            if ((m)); then
                if [[ -z $best_on ]] || awk "BEGIN{exit !($cpu < ${best_on% *})}"; then
                    best_on="$cpu $wall"
                fi
            elif [[ -z $best_off ]] || awk "BEGIN{exit !($cpu < ${best_off% *})}"; then
                best_off="$cpu $wall"
            fi
        done
    done
    printf -v "${var}_on" '%s' "$best_on"
    printf -v "${var}_off" '%s' "$best_off"
    printf -v "${var}_extra" '%s' "$((n_on - n_off)) of $n_on"
}
dur_of() {
    local c d=0
    for c in "$@"; do
        d=$(awk "BEGIN{print $d + $(ffprobe -v error -show_entries format=duration -of csv=p=0 "$c")}")
    done
    echo "$d"
}
report() {
    local name=$1 dur=$2 on=$3 off=$4 extra=$5 target=$6
    local r_cpu r_wall
    r_cpu=$(awk -v a="${on% *}" -v b="${off% *}" 'BEGIN{printf "%.3f", a / b}')
    r_wall=$(awk -v a="${on#* }" -v b="${off#* }" 'BEGIN{printf "%.3f", a / b}')
    echo "$name: $(printf '%.1f' "$dur") s of video, extra frames $extra frames taken"
    printf '  %-40s %8s %8s\n' "s per minute of video" "CPU" "wall"
    printf '  %-40s %8.2f %8.2f\n' "without (VIDTHEQUE_TEXT_FRAMES=0)" \
        "$(awk "BEGIN{print ${off% *} * 60 / $dur}")" "$(awk "BEGIN{print ${off#* } * 60 / $dur}")"
    printf '  %-40s %8.2f %8.2f\n' "with the text frames" \
        "$(awk "BEGIN{print ${on% *} * 60 / $dur}")" "$(awk "BEGIN{print ${on#* } * 60 / $dur}")"
    printf '  %-40s %8s %8s  %s\n' "ratio with / without$target" "$r_cpu" "$r_wall" \
        "$([[ -z $target ]] || awk "BEGIN{print ($r_cpu <= 1.10) ? \"ok\" : \"SLOW\"}")"
}
kf_set plain "${plain_clips[@]}"
kf_set text "${text_clips[@]}"
report "ordinary footage (talk, realcuts without words, pyscenedetect)" "$(dur_of "${plain_clips[@]}")" \
    "$plain_on" "$plain_off" "$plain_extra" " (target <= 1.10)"
report "the text clips (every extra frame wanted)" "$(dur_of "${text_clips[@]}")" \
    "$text_on" "$text_off" "$text_extra" ""
