#!/usr/bin/env bash
# Hybrid search (words + meaning) at 1,000,000 cues and 1,000,000 vectors: a copy of the
# search benchmark's library ($VT_BENCH_DIR, built by search_bench.sh when missing) in
# $VT_HYBRID_DIR (default /tmp/vt-hybrid-bench), with a Model2Vec model of 256 random
# dimensions over the test model's tokenizer. The first run takes a few minutes.
set -euo pipefail
build=$(dirname "${VIDTHEQUE:-$PWD/build/rel/vidtheque}")
[[ -f $build/libvidtheque.a ]] || build=build/rel
pkgs=$(sed -n 's/^PKGS = //p' Makefile)
src=${VT_BENCH_DIR:-/tmp/vt-search-bench}
dir=${VT_HYBRID_DIR:-/tmp/vt-hybrid-bench}
[[ -f $src/library.db ]] || bash bench/search_bench.sh > /dev/null
if [[ ! -f $dir/lib/library.db ]]; then
  rm -rf "$dir" && mkdir -p "$dir/lib"
  sqlite3 "$src/library.db" ".backup '$dir/lib/library.db'"
fi
if [[ ! -f $dir/model/model.safetensors ]]; then
  mkdir -p "$dir/model"
  cp tests/data/model2vec-test-vocab-quantized/tokenizer.json "$dir/model/"
  python3 - "$dir/model" << 'PY'
import array, json, random, struct, sys
out = sys.argv[1]
vocab = len(json.load(open(out + '/tokenizer.json'))['model']['vocab'])
dim, rnd = 256, random.Random(7)
data = array.array('f', (rnd.gauss(0, 1) for _ in range(vocab * dim))).tobytes()
head = json.dumps({'embeddings': {'dtype': 'F32', 'shape': [vocab, dim],
                                  'data_offsets': [0, len(data)]}}).encode()
head += b' ' * (-len(head) % 8)
with open(out + '/model.safetensors', 'wb') as f:
    f.write(struct.pack('<Q', len(head)) + head + data)
PY
fi
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib -Isrc bench/hybrid_bench.c "$build/libvidtheque.a" \
  $(pkg-config --cflags --libs $pkgs) -lm -pthread -o "$t/hybrid_bench"
"$t/hybrid_bench" "$dir/lib" "$dir/model" 300
