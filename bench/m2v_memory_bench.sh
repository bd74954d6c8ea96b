#!/usr/bin/env bash
# Model2Vec memory against the model file's size (issue 27 failure 9). Generates a model
# of MB MiB (default 256) of int8 embeddings (rows of 256 dimensions, the test model's
# tokenizer, a token-to-row mapping spread over the rows) and measures the peak RSS
# (GNU time's maximum resident set size) of the first `search --mode meaning` (which
# measures the relevance floor: many probe texts), of the next one, and of one
# `redo --stage text_embed` of a short captioned clip, each minus the baseline: the peak
# RSS of a words-only search of the same library in the same run (the process without a
# model). Prints each as a ratio to the file's size; the target is close to 1 (the file
# mapped and rows decoded on use; decoding the whole file to floats costs about 4 for
# int8, 5 with the file read beside it). VIDTHEQUE_BASELINE=binary measures another build
# (e.g. main's) on the same model beside it.
#
# Usage, from the repository root: bench/m2v_memory_bench.sh [MB]
set -euo pipefail

mb=${1:-${M2V_BENCH_MB:-256}}
if ! [[ $mb =~ ^[1-9][0-9]{0,3}$ ]]; then
    echo "m2v_memory_bench.sh: '$mb': bad size (1 to 9999 MiB)" >&2
    exit 2
fi
src=tests/data/model2vec-test-vocab-quantized
. bench/lib.sh 2>/dev/null || {
    echo "m2v_memory_bench.sh: run from the repository root" >&2
    exit 2
}
bench_binaries m2v_memory_bench.sh "$src/tokenizer.json" ffmpeg python3 /usr/bin/time
t=$tmp

mkdir -p "$t/model"
cp "$src/tokenizer.json" "$src/config.json" "$t/model/"
python3 - "$t/model/model.safetensors" "$mb" << 'PY'
import json, os, struct, sys
path, mb = sys.argv[1], int(sys.argv[2])
dim, ntok = 256, 29524
rows = max(ntok, mb * 1024 * 1024 // dim)
emb = rows * dim
hdr = {"embeddings": {"dtype": "I8", "shape": [rows, dim], "data_offsets": [0, emb]},
       "mapping": {"dtype": "I32", "shape": [ntok], "data_offsets": [emb, emb + 4 * ntok]}}
h = json.dumps(hdr).encode()
h += b" " * (-len(h) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    left = emb
    while left:
        n = min(left, 16 << 20)
        f.write(os.urandom(n))
        left -= n
    f.write(b"".join(struct.pack("<i", (i * 7919) % rows) for i in range(ntok)))
PY
size_kb=$(( $(stat -c %s "$t/model/model.safetensors") / 1024 ))

ffmpeg -nostdin -v error -f lavfi -i "color=gray:s=320x240:d=6" -f lavfi -i "anullsrc=r=16000:cl=mono" \
    -t 6 -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac "$t/clip.mp4"
printf '1\n00:00:01,000 --> 00:00:04,000\nMy automobile broke down on the highway last week.\n' > "$t/clip.srt"

# measure NAME BINARY: "words_kB meaning_kB redo_kB" in $t/NAME
measure() {
    local lib=$t/$1.lib bin=$2 id
    "$bin" -q -L "$lib" init > /dev/null
    "$bin" -q -L "$lib" config set text_embed.backend model2vec
    "$bin" -q -L "$lib" config set text_embed.model "$t/model"
    id=$("$bin" -q -L "$lib" add "$t/clip.mp4")
    /usr/bin/time -f '%M' -o "$t/$1.w" "$bin" -q -L "$lib" search --mode words automobile > /dev/null
    # the first search by meaning measures the relevance floor (many probe texts, many rows)
    /usr/bin/time -f '%M' -o "$t/$1.f" "$bin" -q -L "$lib" search --mode meaning "the weather" > /dev/null
    /usr/bin/time -f '%M' -o "$t/$1.m" "$bin" -q -L "$lib" search --mode meaning "my car broke down" > /dev/null
    /usr/bin/time -f '%M' -o "$t/$1.r" "$bin" -q -L "$lib" redo "$id" --stage text_embed > /dev/null
    echo "$(tail -n 1 "$t/$1.w") $(tail -n 1 "$t/$1.f") $(tail -n 1 "$t/$1.m") $(tail -n 1 "$t/$1.r")" > "$t/$1"
}
report() {
    read -r w fl m r < "$t/$2"
    awk -v n="$1" -v w="$w" -v fl="$fl" -v m="$m" -v r="$r" -v f="$size_kb" 'BEGIN {
        printf "%-9s words search %5.0f MB | (peak - words) / file: first search by meaning (measures the floor) %.2f, search by meaning %.2f, redo text_embed %.2f\n",
            n, w / 1024, (fl - w) / f, (m - w) / f, (r - w) / f }'
}
measure ours "$VIDTHEQUE"
[[ -z ${VIDTHEQUE_BASELINE:-} ]] || measure base "$VIDTHEQUE_BASELINE"
printf 'model: %d MiB of int8 embeddings (256 d), file %d MB\n' "$mb" $((size_kb / 1024))
report ours ours
[[ -z ${VIDTHEQUE_BASELINE:-} ]] || report baseline base
