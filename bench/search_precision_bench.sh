#!/usr/bin/env bash
# Precision of search on the generated talks (tests/fixtures/gen_talk.sh, seeds 1 to 6,
# named talk1..talk6), with the test text model (tests/data/model2vec-test-vocab-quantized)
# embedding their slides: the queries of bench/search_precision_queries.tsv, each with the
# moments that are relevant (the shots that show a slide holding its words), in hybrid
# mode and words only. Prints precision of the first 10 hits, recall@5 and, for the
# queries that cannot match (random letters, shuffled letters, words on no slide), the
# meaning hits they get. The library is built once in $VT_PRECISION_DIR (default
# /tmp/vt-precision-bench; a few minutes the first time).
#   bash bench/search_precision_bench.sh [--write-queries]
# --write-queries writes the query file again from the talks' truth files.
set -euo pipefail
. bench/lib.sh
bench_setup search_precision_bench bench/search_precision_bench.sh ffmpeg python3
vt=${VIDTHEQUE:-$PWD/build/rel/vidtheque}
[[ -x $vt ]] || { echo "search_precision_bench: no $vt (make first)" >&2; exit 2; }
dir=${VT_PRECISION_DIR:-/tmp/vt-precision-bench}
model=$PWD/tests/data/model2vec-test-vocab-quantized
queries=bench/search_precision_queries.tsv
if [[ ! -f $dir/ready ]]; then
  rm -rf "$dir" && mkdir -p "$dir/talks"
  "$vt" -q -L "$dir/lib" init > /dev/null
  "$vt" -q -L "$dir/lib" config set text_embed.model "$model" > /dev/null
  for seed in 1 2 3 4 5 6; do
    bash tests/fixtures/gen_talk.sh "$dir/talks/$seed" "$seed" > /dev/null
    cp "$dir/talks/$seed/talk.mp4" "$dir/talks/talk$seed.mp4"
    "$vt" -q -L "$dir/lib" add "$dir/talks/talk$seed.mp4" > /dev/null
  done
  touch "$dir/ready"
fi
if [[ ${1:-} == --write-queries ]]; then
  python3 bench/search_precision_truth.py "$dir/talks" > "$queries"
  echo "wrote $queries"
  exit 0
fi
# the library's calibration is measured as a user's first search would
rm -f "$dir/lib/calibration.json"
python3 bench/search_precision_score.py "$vt" "$dir/lib" "$queries"
echo "the floor applied (search --explain):"
"$vt" -q -L "$dir/lib" search --explain --mode meaning xyzzy | sed -n '1p'
echo "the issue's examples, hits of the first 100 (hybrid / words only / by meaning alone):"
for q in xyzzy basalt harbor; do
  "$vt" -q -L "$dir/lib" search --json --limit 100 "$q" > "$tmp/h.json"
  "$vt" -q -L "$dir/lib" search --json --limit 100 --mode words "$q" > "$tmp/w.json"
  python3 - "$q" "$tmp/h.json" "$tmp/w.json" << 'PY'
import json, sys
h, w = (json.load(open(p))["hits"] for p in sys.argv[2:4])
alone = sum(1 for x in h if "words" not in x["matched"])
print("  %-8s %3d / %3d / %3d" % (sys.argv[1], len(h), len(w), alone))
PY
done
