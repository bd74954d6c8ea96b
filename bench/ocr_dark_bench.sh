#!/usr/bin/env bash
# Light text on dark screens: word recall of the ocr stage on 720p screens of dark user
# interfaces (tests/fixtures/gen_dark_ui.sh: terminals, dark editor themes, grey type on dark
# grey, a dark terminal window on a light page, a light dialog on a dark screen), by kind of
# screen, and its time per frame: before (only a frame dark as a whole is inverted) and after
# the inversion of a light frame's dark parts (lib/visual/ocr.c, OCR_REGION_*), in the same
# run on the same frames, with the ratios after / before. The frames are taken from the
# fixture's H.264 video as JPEG, as the keyframe stage keeps them. One engine, one thread
# (OMP_THREAD_LIMIT=1); each setting is timed ROUNDS times, alternating, and its fastest
# round kept (the machine is shared). Target: recall >= 0.95 on every kind.
#
# Usage, from the repository root: bench/ocr_dark_bench.sh [N_SCREENS [SEED [ROUNDS]]]
# (12, 1, 2; 12 screens are two of each kind)
set -euo pipefail

n=${1:-12}
seed=${2:-1}
rounds=${3:-2}
if ! [[ $n =~ ^[1-9][0-9]*$ && $seed =~ ^[0-9]+$ && $rounds =~ ^[1-9]$ ]]; then
    echo "ocr_dark_bench.sh: bad screen count, seed or rounds" >&2
    exit 2
fi
. bench/lib.sh 2>/dev/null || {
    echo "ocr_dark_bench.sh: run from the repository root" >&2
    exit 2
}
bench_setup ocr_dark_bench.sh lib/visual/ocr.h ffmpeg pkg-config cc make python3

bash tests/fixtures/gen_dark_ui.sh "$tmp/fx" "$seed" "$n"
mkdir "$tmp/frames"
for ((k = 0; k < n; k++)); do
    ffmpeg -nostdin -v error -ss $((2 * k + 1)) -i "$tmp/fx/dark.mp4" -frames:v 1 -q:v 2 \
        "$(printf '%s/frames/%03d.jpg' "$tmp" "$k")"
done
bench_lib ocr_dark_bench.sh
pkgs=(tesseract lept libavformat libavcodec libavutil libswscale libswresample sqlite3 jansson
    libjpeg)
read -r -a cflags <<<"$(pkg-config --cflags "${pkgs[@]}")"
read -r -a libs <<<"$(pkg-config --libs "${pkgs[@]}")"
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Ilib -Isrc "${cflags[@]}" -pthread -o "$tmp/ocr_bench" \
    bench/ocr_bench.c build/rel/libvidtheque.a "${libs[@]}" -lm

# run SETTING ROUND: one ocr_bench run, its line in $tmp/SETTING.ROUND, its lines read in
# $tmp/SETTING.json (the same every round: one engine reads a frame the same way)
run() {
    local flag=
    [[ $1 == after ]] || flag=--no-dark-parts
    # shellcheck disable=SC2086 # flag is one word or none
    OMP_THREAD_LIMIT=1 "$tmp/ocr_bench" $flag --dump "$tmp/$1.dump" 1 "$tmp"/frames/*.jpg \
        >"$tmp/$1.$2"
}
for ((r = 0; r < rounds; r++)); do
    run before "$r"
    run after "$r"
done
python3 - "$tmp" "$rounds" "$n" "$seed" <<'PY'
import json, re, subprocess, sys

tmp, rounds, n, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
res = {}
for setting in ("before", "after"):
    files = json.load(open("%s/%s.dump" % (tmp, setting)))["files"]
    frames = [{"index": k, "t_s": 2 * k + 1.0, "state": "done", "duplicate_of": None,
               "ocr": f["ocr"]} for k, f in enumerate(sorted(files, key=lambda f: f["file"]))]
    json.dump({"frames": frames}, open("%s/%s.json" % (tmp, setting), "w"))
    score = subprocess.run(["python3", "tests/tools/score_dark_ui.py", "%s/fx/truth.json" % tmp,
                            "%s/%s.json" % (tmp, setting)], capture_output=True, text=True,
                           check=True).stdout.strip()
    ms = min(float(re.search(r"run_ms=([0-9.]+)", open("%s/%s.%d" % (tmp, setting, r)).read())
                   .group(1)) for r in range(rounds))
    recall = float(re.search(r"recall ([0-9.]+)", score).group(1))
    res[setting] = (recall, ms / int(n))
    print("%-6s %s; %.0f ms a frame" % (setting, score, ms / int(n)))
(rb, tb), (ra, ta) = res["before"], res["after"]
print("ocr on dark screens (%s screens, seed %s, one engine, fastest of %d rounds): recall "
      "%.4f -> %.4f (x%.3f), time a frame %.0f -> %.0f ms (x%.3f)"
      % (n, seed, rounds, rb, ra, ra / rb if rb else float("inf"), tb, ta, ta / tb))
PY
