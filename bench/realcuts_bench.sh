#!/usr/bin/env bash
# Shot boundaries and on-screen words on real footage, and the keyframe stage's time per
# minute of it, from the repository root:
#   bench/realcuts_bench.sh
# Quality: `vidtheque add` + export (all stages: boundaries and OCR) on every clip of
# tests/data/realcuts (truth by eye) and on tests/fixtures/gen_trouble.sh seeds
# BENCH_SEEDS (default "1 9"), scored by tests/tools/score_realcuts.py: precision, recall
# and F1 per clip and overall, the share of on-screen words read; goal P >= 0.95, R >= 0.95,
# words >= 0.9. Beside it, a generated talk (gen_talk.sh seed 1) by score_cuts.py, which
# must stay at F1 1.000. Reference: PySceneDetect's ContentDetector and AdaptiveDetector
# with their published defaults on the same clips, when PYSCENEDETECT_SRC names a source
# tree holding the scenedetect package (e.g. `git archive` of github:Breakthrough/
# PySceneDetect) and PYSCENEDETECT_PYTHON (default /usr/bin/python3) imports cv2 and
# numpy (Debian: python3-opencv); else one line says it was skipped. The OCR's ceiling
# (tests/tools/ocr_ceiling.py): the words read when every text span is handed three of its
# own frames, beside the words the keyframe stage's frames give. Speed: kfdump (the
# keyframe stage alone) on every clip of the set, best of 3, in seconds per minute of
# video: r24text's extra keyframes must not add more than 10 % to it.
set -euo pipefail
. bench/lib.sh
bench_setup realcuts_bench tests/tools/score_realcuts.py ffmpeg python3
bench_lib realcuts_bench
bench_kfdump
V=${VIDTHEQUE:-$PWD/vidtheque}
vt() { "$V" -q -L "$tmp/lib" "$@"; }
vt init

# the clips: the set's truths (their clip relative to them) and generated trouble
truths=(tests/data/realcuts/*.json)
for seed in ${BENCH_SEEDS:-1 9}; do
    echo "generating trouble seed $seed ..." >&2
    bash tests/fixtures/gen_trouble.sh "$tmp/tr$seed" "$seed" >/dev/null
    truths+=("$tmp/tr$seed/trouble.json")
done
real=() made=() psd_c=() psd_a=()
psd_py=${PYSCENEDETECT_PYTHON:-/usr/bin/python3}
psd_ok=
if [[ -n ${PYSCENEDETECT_SRC:-} && -d ${PYSCENEDETECT_SRC}/scenedetect ]] &&
    PYTHONPATH=$PYSCENEDETECT_SRC "$psd_py" -c 'import cv2, numpy, scenedetect' 2>/dev/null; then
    psd_ok=1
fi
for t in "${truths[@]}"; do
    n=$(basename "$(dirname "$t")")_$(basename "$t" .json)
    id=$(vt add "$(bench_clip_of "$t")")
    vt export "$id" >"$tmp/$n.export.json"
    if [[ $t == "$tmp"/* ]]; then made+=("$t" "$tmp/$n.export.json"); else real+=("$t" "$tmp/$n.export.json"); fi
    if [[ -n $psd_ok ]]; then
        for k in content adaptive; do
            PYTHONPATH=$PYSCENEDETECT_SRC "$psd_py" bench/psd_detect.py $k "$(bench_clip_of "$t")" \
                >"$tmp/$n.$k.json" 2>/dev/null
        done
        psd_c+=("$t" "$tmp/$n.content.json") psd_a+=("$t" "$tmp/$n.adaptive.json")
    fi
done

echo "real footage (tests/data/realcuts), vidtheque"
python3 tests/tools/score_realcuts.py "${real[@]}" | sed 's/^/  /' || true
echo "made trouble (gen_trouble.sh seeds ${BENCH_SEEDS:-1 9}), vidtheque"
python3 tests/tools/score_realcuts.py "${made[@]}" | sed 's/^/  /' || true
echo "real footage and made trouble together, vidtheque"
python3 tests/tools/score_realcuts.py "${real[@]}" "${made[@]}" | grep -E '^(all|on-screen)' |
    sed 's/^/  /' || true
if [[ -n $psd_ok ]]; then
    rev=$(git -C "$PYSCENEDETECT_SRC" rev-parse --short HEAD 2>/dev/null || echo "$PYSCENEDETECT_SRC")
    for k in content adaptive; do
        eval "set -- \"\${psd_${k:0:1}[@]}\""
        echo "PySceneDetect $k detector, published defaults ($rev), same clips (real, then all)"
        python3 tests/tools/score_realcuts.py "${@:1:${#real[@]}}" | grep -E '^(all|  *false|[^ ]+ +truth)' |
            sed 's/^/  /' || true
        python3 tests/tools/score_realcuts.py "$@" | grep '^all' | sed 's/^/  /' || true
    done
else
    echo "PySceneDetect: skipped (set PYSCENEDETECT_SRC to a PySceneDetect source tree and" \
        "have $psd_py import cv2: apt-get install python3-opencv)"
fi

echo "generating the talk beside them (gen_talk.sh seed 1) ..." >&2
bash tests/fixtures/gen_talk.sh "$tmp/talk" 1 >/dev/null
id=$(vt add "$tmp/talk/talk.mp4")
vt export "$id" >"$tmp/talk/export.json"
echo "generated talk (gen_talk.sh seed 1), vidtheque"
python3 tests/tools/score_cuts.py "$tmp/talk/truth.json" "$tmp/talk/export.json" |
    grep -E '^(boundaries|precision)' | sed 's/^/  /' || true

# the OCR's ceiling: every text span read from three of its own frames, whatever the
# keyframe stage chooses (what the words figure above loses to the choice of frames)
echo "OCR ceiling on the real set (tests/tools/ocr_ceiling.py: each text span's own frames) ..." >&2
echo "real footage, OCR ceiling: the words read from the best frames"
real_truths=()
for ((i = 0; i < ${#real[@]}; i += 2)); do real_truths+=("${real[i]}"); done
python3 tests/tools/ocr_ceiling.py "$V" "$tmp/ceiling" "${real_truths[@]}" 2>/dev/null |
    sed 's/^/  /' || true

# speed: the keyframe stage alone over the real set, best of 3
clips=()
for ((i = 0; i < ${#real[@]}; i += 2)); do clips+=("$(bench_clip_of "${real[i]}")"); done
dur=0
for c in "${clips[@]}"; do
    d=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$c")
    dur=$(awk "BEGIN{print $dur + $d}")
done
best=
for _ in 1 2 3; do
    s=$(date +%s.%N)
    for c in "${clips[@]}"; do
        rm -rf "$tmp/kf" && mkdir -p "$tmp/kf"
        "$tmp/kfdump" "$c" "$tmp/kf" >/dev/null 2>&1
    done
    e=$(awk "BEGIN{print $(date +%s.%N) - $s}")
    if [[ -z $best ]] || awk "BEGIN{exit !($e < $best)}"; then best=$e; fi
done
printf '%-52s %8.1f\n' "real set: seconds of video (${#clips[@]} clips)" "$dur"
printf '%-52s %8.2f\n' "kfdump, keyframe stage, whole set (best of 3), s" "$best"
printf '%-52s %8.2f\n' "keyframe stage, s per minute of video" "$(awk "BEGIN{print $best * 60 / $dur}")"
