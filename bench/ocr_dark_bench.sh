#!/usr/bin/env bash
# Light text on dark screens: word recall of the ocr stage on 720p screens of dark user
# interfaces (tests/fixtures/gen_dark_ui.sh: terminals, dark editor themes, grey type on dark
# grey, a dark terminal window on a light page, a light dialog on a dark screen), by kind of
# screen, and its time per frame: before (only a frame dark as a whole is inverted) and after
# the inversion of a light frame's dark parts (lib/visual/ocr.c, OCR_REGION_*), in the same
# run on the same frames, with the ratios after / before. The frames are taken from the
# fixture's H.264 video as JPEG, as the keyframe stage keeps them. What the inversion costs
# where there is nothing to invert is timed on talk slides too (bench/ocr_bench.sh's: 38-60 px
# type, light and dark slides, no dark part), whose lines must read the same both ways.
# Time is the CPU time of vt_ocr_run a frame, one engine, one thread (OMP_THREAD_LIMIT=1);
# each setting runs ROUNDS times, alternating, and its fastest round is kept (the machine is
# shared). Target: recall >= 0.95 on every kind.
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
mkdir "$tmp/dark" "$tmp/slides"
for ((k = 0; k < n; k++)); do
    ffmpeg -nostdin -v error -ss $((2 * k + 1)) -i "$tmp/fx/dark.mp4" -frames:v 1 -q:v 2 \
        "$(printf '%s/dark/%03d.jpg' "$tmp" "$k")"
done
# talk slides as bench/ocr_bench.sh makes them: a title, four bullets; two dark of six
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
bold=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
titles=("Quarterly results" "Product roadmap" "Hiring plan" "Customer feedback")
bullets=("Revenue grew by twelve percent" "Operating costs fell in every region"
    "Two new offices opened in spring" "Support tickets halved since March"
    "The mobile app reached one million users" "Release cadence moved to every two weeks")
backs=(white 0x1f2a44 0xf2f5fa 0x102030 0xfdf6e3 white)
inks=(black white 0x102040 0xe0e0e0 0x303030 0x202020)
for ((i = 0; i < 6; i++)); do
    vf="drawtext=fontfile=$bold:text='${titles[i % 4]}':fontsize=60:fontcolor=${inks[i]}:x=90:y=70"
    for ((j = 0; j < 4; j++)); do
        vf+=",drawtext=fontfile=$font:text='${bullets[(i + j) % 6]}':fontsize=38"
        vf+=":fontcolor=${inks[i]}:x=120:y=$((220 + j * 100))"
    done
    ffmpeg -nostdin -v error -f lavfi -i "color=${backs[i]}:s=1280x720:d=1" -vf "$vf" \
        -frames:v 1 -q:v 2 "$tmp/slides/$i.jpg"
done
bench_lib ocr_dark_bench.sh
pkgs=(tesseract lept libavformat libavcodec libavutil libswscale libswresample sqlite3 jansson
    libjpeg)
read -r -a cflags <<<"$(pkg-config --cflags "${pkgs[@]}")"
read -r -a libs <<<"$(pkg-config --libs "${pkgs[@]}")"
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Ilib -Isrc "${cflags[@]}" -pthread -o "$tmp/ocr_bench" \
    bench/ocr_bench.c build/rel/libvidtheque.a "${libs[@]}" -lm

# run SET SETTING ROUND: one ocr_bench run over $tmp/SET, its line in $tmp/SET.SETTING.ROUND,
# the lines read in $tmp/SET.SETTING.dump (the same every round: one engine reads a frame
# the same way)
run() {
    local flag=
    [[ $2 == after ]] || flag=--no-dark-parts
    # shellcheck disable=SC2086 # flag is one word or none
    OMP_THREAD_LIMIT=1 "$tmp/ocr_bench" $flag --dump "$tmp/$1.$2.dump" 1 "$tmp/$1"/*.jpg \
        >"$tmp/$1.$2.$3"
}
for ((r = 0; r < rounds; r++)); do
    for set in dark slides; do
        run "$set" before "$r"
        run "$set" after "$r"
    done
done
python3 - "$tmp" "$rounds" "$n" "$seed" <<'PY'
import json, re, subprocess, sys

tmp, rounds, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def cpu_ms(s, setting, frames):
    """The fastest round's CPU time of vt_ocr_run, a frame."""
    return min(float(re.search(r"run_cpu_ms=([0-9.]+)",
                               open("%s/%s.%s.%d" % (tmp, s, setting, r)).read()).group(1))
               for r in range(rounds)) / frames


def lines(s, setting):
    files = json.load(open("%s/%s.%s.dump" % (tmp, s, setting)))["files"]
    return sorted(files, key=lambda f: f["file"])


res = {}
for setting in ("before", "after"):
    frames = [{"index": k, "t_s": 2 * k + 1.0, "state": "done", "duplicate_of": None,
               "ocr": f["ocr"]} for k, f in enumerate(lines("dark", setting))]
    json.dump({"frames": frames}, open("%s/dark.%s.json" % (tmp, setting), "w"))
    score = subprocess.run(["python3", "tests/tools/score_dark_ui.py", "%s/fx/truth.json" % tmp,
                            "%s/dark.%s.json" % (tmp, setting)], capture_output=True, text=True,
                           check=True).stdout.strip()
    recall = float(re.search(r"recall ([0-9.]+)", score).group(1))
    res[setting] = (recall, cpu_ms("dark", setting, n), cpu_ms("slides", setting, 6))
    print("%-6s dark screens: %s; %.0f ms CPU a frame" % (setting, score, res[setting][1]))
(rb, tb, sb), (ra, ta, sa) = res["before"], res["after"]
same = [[l["text"] for l in f["ocr"]] for f in lines("slides", "before")] == \
       [[l["text"] for l in f["ocr"]] for f in lines("slides", "after")]
print("ocr on dark screens (%d screens, seed %s, one engine, fastest of %d rounds): recall "
      "%.4f -> %.4f (x%.3f), CPU a frame %.0f -> %.0f ms (x%.3f)"
      % (n, seed, rounds, rb, ra, ra / rb if rb else float("inf"), tb, ta, ta / tb))
print("ocr on talk slides (6, two dark; nothing to invert): CPU a frame %.0f -> %.0f ms "
      "(x%.3f), lines read %s" % (sb, sa, sa / sb, "the same" if same else "DIFFERENT"))
sys.exit(0 if same else 1)
PY
