#!/usr/bin/env bash
# Whisper in process against PocketSphinx, same audio, same cores, one run: seconds of
# audio per second of wall time and peak memory for tiny-, base- and small-shaped models
# (openai/whisper's dimensions, generated weights: vt_whisper_model_random) and for the stt
# stage with PocketSphinx (tests/tools/sttdump), and the share of Whisper's time in the
# log-mel, the encoder, the decoder and the alignment's pass (bench/whisper_bench.c).
# The audio: the five LibriVox clips of pocketsphinx-testdata, 1.5 s of silence before each,
# the set repeated REPEATS times (16 kHz mono WAV), cut by the stage's own segmenter.
# Random weights decode nonsense of any length, so each segment decodes the number of
# tokens the real transcript has per second of speech (gpt2.tiktoken) times its duration,
# plus two timestamps: the cost of the real text, not of what a random model says.
# Goals (issue 23): base.en-shaped no slower than PocketSphinx, tiny.en at least 3x faster.
#
# Usage, from the repository root: bench/whisper_bench.sh [REPEATS]   (default 4: about two
# minutes, five segments, so that two workers share the work as on a real talk; with 2 the
# three segments leave a core idle for the last one)
set -euo pipefail

reps=${1:-4}
if ! [[ $reps =~ ^[1-9][0-9]*$ ]]; then
    echo "whisper_bench.sh: '$reps': bad repeat count" >&2
    exit 2
fi
if [[ ! -f lib/speech/stt.h || ! -f Makefile ]]; then
    echo "whisper_bench.sh: run from the repository root" >&2
    exit 2
fi
data=/usr/share/pocketsphinx/test/data/librivox
if [[ ! -d $data ]]; then
    echo "whisper_bench.sh: '$data': missing (install pocketsphinx-testdata)" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

inputs=() filter="" k=0
ffmpeg -nostdin -v error -f lavfi -i anullsrc=r=16000:cl=mono -t 1.5 -c:a pcm_s16le "$tmp/sil.wav"
: >"$tmp/said.txt"
for ((r = 0; r < reps; r++)); do
    for clip in "$data"/*.wav; do
        inputs+=(-i "$tmp/sil.wav" -i "$clip")
        filter+="[$k:a][$((k + 1)):a]"
        k=$((k + 2))
        name=$(basename "$clip" .wav)
        sed -n "s/^\\s*\\(.*\\)\\s*($name)\\s*\$/\\1/p" "$data/transcription" |
            sed 's/<\/\?s>//g' >>"$tmp/said.txt"
    done
done
ffmpeg -nostdin -v error "${inputs[@]}" -filter_complex "${filter}concat=n=$k:v=0:a=1" \
    -ar 16000 -ac 1 -c:a pcm_s16le "$tmp/talk.wav"

if ! make -s build/rel/libvidtheque.a >"$tmp/make.log" 2>&1; then
    cat "$tmp/make.log" >&2
    echo "whisper_bench.sh: cannot build build/rel/libvidtheque.a" >&2
    exit 1
fi
read -r -a pkgs <<<"$(sed -n 's/^PKGS = //p' Makefile)"
read -r -a cflags <<<"$(pkg-config --cflags "${pkgs[@]}")"
read -r -a libs <<<"$(pkg-config --libs "${pkgs[@]}") $(sed -n 's/^FLITE_LIBS = //p' Makefile)"
for tool in whisper_bench:bench/whisper_bench.c sttdump:tests/tools/sttdump.c; do
    if ! cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Ilib -Isrc "${cflags[@]}" -pthread \
        -o "$tmp/${tool%%:*}" "${tool#*:}" build/rel/libvidtheque.a "${libs[@]}" -lm \
        2>"$tmp/cc.log"; then
        cat "$tmp/cc.log" >&2
        echo "whisper_bench.sh: cannot build ${tool%%:*} (is the Whisper network built in?)" >&2
        exit 1
    fi
done

cores=$(getconf _NPROCESSORS_ONLN)
# PocketSphinx: the stt stage's recognition (sttdump: load, read, recognise on every core)
/usr/bin/time -f '%e %M' -o "$tmp/ps.time" "$tmp/sttdump" "$tmp/talk.wav" >"$tmp/ps.json" \
    2>"$tmp/ps.err"
read -r ps_wall ps_kb <"$tmp/ps.time"
audio_s=$(sed -n 's/.*\bduration_s=\([^ ]*\).*/\1/p' "$tmp/ps.err")
ps_rec=$(sed -n 's/.*\brecognise_s=\([^ ]*\).*/\1/p' "$tmp/ps.err")
printf '%.1f s of 16 kHz speech (%d x 5 LibriVox clips), %d cores, %d workers, one run\n' \
    "$audio_s" "$reps" "$cores" "$cores"
printf '%-28s %9s %9s %8s %8s  %s\n' "recogniser" "audio/s" "vs PS" "wall s" "peak MB" \
    "share: mel / encoder / decoder / alignment"
ps_speed=$(awk -v a="$audio_s" -v w="$ps_rec" 'BEGIN { printf "%.2f", a / w }')
printf '%-28s %9s %9s %8.2f %8.0f  (recognition alone; %.2f s with loading)\n' \
    "pocketsphinx (stt stage)" "$ps_speed" "1.00" "$ps_rec" "$((ps_kb / 1024))" "$ps_wall"
for shape in tiny base small; do
    /usr/bin/time -f '%e %M' -o "$tmp/w.time" "$tmp/whisper_bench" "$tmp/talk.wav" "$shape" \
        tests/data/whisper-assets "$tmp/said.txt" "$cores" >"$tmp/w.out" 2>"$tmp/w.err" || {
        echo "whisper_bench $shape failed: $(cat "$tmp/w.err")" >&2
        exit 1
    }
    read -r _ w_kb <"$tmp/w.time"
    read -r a wall mel enc dec al nseg ntok <"$tmp/w.out"
    awk -v name="$shape.en-shaped whisper" -v a="$a" -v w="$wall" -v ps="$ps_speed" \
        -v kb="$w_kb" -v m="$mel" -v e="$enc" -v d="$dec" -v l="$al" -v s="$nseg" -v t="$ntok" \
        'BEGIN { tot = m + e + d + l; sp = a / w;
                 printf "%-28s %9.2f %9.2f %8.2f %8.0f  %.0f%% / %.0f%% / %.0f%% / %.0f%% (%d segments, %d tokens)\n",
                        name, sp, sp / ps, w, kb / 1024, 100 * m / tot, 100 * e / tot, 100 * d / tot,
                        100 * l / tot, s, t }'
done
echo "goals: base-shaped >= 1.00 x PocketSphinx, tiny-shaped >= 3.00 x (the 'vs PS' column)"
