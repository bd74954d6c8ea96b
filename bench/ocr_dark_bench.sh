#!/usr/bin/env bash
# Light text on dark screens: word recall of the ocr stage on 720p screens of dark user
# interfaces (tests/fixtures/gen_dark_ui.sh: terminals, dark editor themes, grey type on dark
# grey, a dark terminal window on a light page), by kind of screen, and its time per frame.
# The frames are taken from the fixture's H.264 video as JPEG, as the keyframe stage keeps them.
# Target: recall >= 0.95 on every kind.
#
# Usage, from the repository root: bench/ocr_dark_bench.sh [N_SCREENS [SEED]]   (10, 1)
set -euo pipefail

n=${1:-10}
seed=${2:-1}
if ! [[ $n =~ ^[1-9][0-9]*$ && $seed =~ ^[0-9]+$ ]]; then
    echo "ocr_dark_bench.sh: bad screen count or seed" >&2
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
stats=$(OMP_THREAD_LIMIT=1 "$tmp/ocr_bench" --dump "$tmp/dump.json" 1 "$tmp"/frames/*.jpg)
python3 - "$tmp/dump.json" "$tmp/doc.json" <<'PY'
import json, os, sys
files = json.load(open(sys.argv[1]))["files"]
frames = [{"index": k, "t_s": 2 * k + 1.0, "state": "done", "duplicate_of": None,
           "ocr": f["ocr"]} for k, f in enumerate(sorted(files, key=lambda f: f["file"]))]
json.dump({"frames": frames}, open(sys.argv[2], "w"))
PY
echo "ocr on dark screens ($n screens, seed $seed, one engine): $stats"
python3 tests/tools/score_dark_ui.py "$tmp/fx/truth.json" "$tmp/doc.json" ${VERBOSE:+--missing}
