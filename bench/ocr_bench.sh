#!/usr/bin/env bash
# Speed of the ocr stage against the tesseract command. Draws N slide-like 1280x720 JPEGs
# (a bold title and four lines of text, varying words and backgrounds), then times
# (a) `tesseract FILE -` on each slide one after the other, with tesseract's own OpenMP
# threading as it comes (OMP_THREAD_LIMIT unset), and (b) vt_ocr_new + vt_ocr_run over the
# same slides through bench/ocr_bench.c, on all cores and on one, with OMP_THREAD_LIMIT=1 as
# the command line runs it. Prints per-frame milliseconds and ours/baseline (target <= 0.8).
#
# Usage, from the repository root: bench/ocr_bench.sh [N]    (N defaults to 12)
set -euo pipefail

n=${1:-12}
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
    echo "ocr_bench.sh: '$n': bad slide count" >&2
    exit 2
fi
if [[ ! -f lib/visual/ocr.h || ! -f Makefile ]]; then
    echo "ocr_bench.sh: run from the repository root" >&2
    exit 2
fi
for tool in ffmpeg tesseract pkg-config cc make; do
    if ! command -v "$tool" >/dev/null; then
        echo "ocr_bench.sh: '$tool': not found" >&2
        exit 2
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
bold=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
titles=("Quarterly results" "Product roadmap" "Hiring plan" "Customer feedback"
    "Market overview" "Engineering update" "Budget review" "Next steps")
bullets=("Revenue grew by twelve percent" "Operating costs fell in every region"
    "Two new offices opened in spring" "Support tickets halved since March"
    "The mobile app reached one million users" "Release cadence moved to every two weeks"
    "Churn is lowest among annual plans" "Cloud spending needs a closer look"
    "Three teams share one design system" "Latency dropped below fifty milliseconds"
    "Partners asked for a public API" "Training budget doubles next year")
# Background and text colours: mostly light slides, some dark ones with light text.
backs=(white white 0xf2f5fa white 0x1f2a44 0xfdf6e3)
inks=(black 0x202020 0x102040 black white 0x303030)

# Slides are made before any timing starts.
for ((i = 0; i < n; i++)); do
    k=$((i % ${#backs[@]}))
    vf="drawtext=fontfile=$bold:text='${titles[i % ${#titles[@]}]}':fontsize=60"
    vf+=":fontcolor=${inks[k]}:x=90:y=70"
    for ((j = 0; j < 4; j++)); do
        b=${bullets[(i * 3 + j * 5) % ${#bullets[@]}]}
        vf+=",drawtext=fontfile=$font:text='$b':fontsize=38:fontcolor=${inks[k]}"
        vf+=":x=120:y=$((220 + j * 100))"
    done
    ffmpeg -nostdin -v error -f lavfi -i "color=${backs[k]}:s=1280x720:d=1" -vf "$vf" \
        -frames:v 1 -q:v 2 "$(printf '%s/slide%03d.jpg' "$tmp" "$i")"
done
slides=("$tmp"/slide*.jpg)

# The driver links against the release library; make rebuilds it only if it is stale.
if ! make -s build/rel/libvidtheque.a >"$tmp/make.log" 2>&1; then
    cat "$tmp/make.log" >&2
    echo "ocr_bench.sh: cannot build build/rel/libvidtheque.a" >&2
    exit 1
fi
pkgs=(tesseract lept libavformat libavcodec libavutil libswscale libswresample sqlite3 jansson
    libjpeg)
read -r -a cflags <<<"$(pkg-config --cflags "${pkgs[@]}")"
read -r -a libs <<<"$(pkg-config --libs "${pkgs[@]}")"
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Ilib -Isrc "${cflags[@]}" -pthread -o "$tmp/ocr_bench" \
    bench/ocr_bench.c build/rel/libvidtheque.a "${libs[@]}" -lm

now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# (a) the tesseract command, one slide at a time, its OpenMP defaults untouched; then the same
# with OpenMP limited to one thread, to tell the two gains apart (process start-up and model
# loading per frame, OpenMP overhead).
tess_ms() {
    local t0 t1
    t0=$(now_ms)
    for f in "${slides[@]}"; do
        env "$@" tesseract "$f" - 2>/dev/null >"$f.txt"
    done
    t1=$(now_ms)
    awk -v t=$((t1 - t0)) -v n="$n" 'BEGIN { printf "%.1f", t / n }'
}
base_ms=$(tess_ms -u OMP_THREAD_LIMIT)
base_lines=0
for f in "${slides[@]}"; do
    base_lines=$((base_lines + $(grep -c '[^[:space:]]' "$f.txt" || true)))
done
base1_ms=$(tess_ms OMP_THREAD_LIMIT=1)

# (b) ours: every core, then one thread.
cores=$(getconf _NPROCESSORS_ONLN)
ours_all=$(OMP_THREAD_LIMIT=1 "$tmp/ocr_bench" 0 "${slides[@]}")
ours_one=$(OMP_THREAD_LIMIT=1 "$tmp/ocr_bench" 1 "${slides[@]}")
field() {
    sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"
}
all_ms=$(field per_frame_ms "$ours_all")
one_ms=$(field per_frame_ms "$ours_one")

printf '%d slides 1280x720, %d cores\n' "$n" "$cores"
printf '%-38s %10s %8s %7s\n' "run" "ms/frame" "ratio" "lines"
printf '%-38s %10s %8s %7s\n' "tesseract FILE - (one at a time)" "$base_ms" "1.00" "$base_lines"
printf '%-38s %10s %8s %7s\n' "tesseract FILE -, OMP_THREAD_LIMIT=1" "$base1_ms" \
    "$(awk -v a="$base1_ms" -v b="$base_ms" 'BEGIN { printf "%.2f", a / b }')" "-"
printf '%-38s %10s %8s %7s\n' "vt_ocr, $cores threads, OMP_THREAD_LIMIT=1" "$all_ms" \
    "$(awk -v a="$all_ms" -v b="$base_ms" 'BEGIN { printf "%.2f", a / b }')" \
    "$(field lines "$ours_all")"
printf '%-38s %10s %8s %7s\n' "vt_ocr, 1 thread, OMP_THREAD_LIMIT=1" "$one_ms" \
    "$(awk -v a="$one_ms" -v b="$base_ms" 'BEGIN { printf "%.2f", a / b }')" \
    "$(field lines "$ours_one")"
printf 'ours: %s\n' "$ours_all"
printf 'ours: %s\n' "$ours_one"
if awk -v a="$all_ms" -v b="$base_ms" 'BEGIN { exit !(a / b <= 0.8) }'; then
    echo "ratio target <= 0.80: met"
else
    echo "ratio target <= 0.80: NOT met"
fi
