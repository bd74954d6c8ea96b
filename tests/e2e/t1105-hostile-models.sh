#!/usr/bin/env bash
# Hostile models (issue 27 failures 1, 2, 7, 8, 10): a tokenizer.json whose normalizers
# blow a text up (four Replace steps turning `a` into 256 `a`s) or take long (20,000
# Prepend steps) is refused by `config set` and by a pull with one line naming the bound;
# one swapped in after the config was set fails the search and the stage with that line,
# never aborting the process or leaving the stage `running`, and a read-only web server
# answers a search by meaning with it and stays up. A model whose weights are finite but
# huge (3e38) overflows to infinity: when the tiny probe text overflows, `config set` and
# the pull refuse it; when only a word of the video does, the text_embed stage fails with
# the reason and nothing is stored. A failed pull leaves no lock file in models/.partial.
. "$(dirname "$0")/lib.sh"

SRC=$DATA/model2vec-test-vocab-quantized
[[ -f $SRC/model.safetensors ]] || fail "no test model in $SRC"

# model_with DIR PYTHON: a copy of the test model in DIR, changed by PYTHON (tok = the
# tokenizer.json as a dict, st = the safetensors bytes, hdr/base = its header and data
# start; both written back)
model_with() {
  rm -rf "$1"
  cp -r "$SRC" "$1"
  python3 - "$1" "$2" << 'PY'
import json, struct, sys
d, code = sys.argv[1], sys.argv[2]
tok = json.load(open(d + '/tokenizer.json'))
st = bytearray(open(d + '/model.safetensors', 'rb').read())
n = struct.unpack('<Q', st[:8])[0]
hdr, base = json.loads(st[8:8 + n]), 8 + n
exec(code)
json.dump(tok, open(d + '/tokenizer.json', 'w'))
open(d + '/model.safetensors', 'wb').write(st)
PY
}
BOMB='tok["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 256}] * 4}'
SLOW='tok["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "x"}] * 20000}'
# every token's weight 3e38 (F64, so the file holds it exactly): any text overflows
HUGE='o = base + hdr["weights"]["data_offsets"][0]
for i in range(hdr["weights"]["shape"][0]): struct.pack_into("<d", st, o + 8 * i, 3e38)'
# only the weight of "▁banana" (token 14214, whose row reaches 1.34): that word overflows
HUGE_BANANA='struct.pack_into("<d", st, base + hdr["weights"]["data_offsets"][0] + 8 * 14214, 3e38)'
model_with "$T/bomb" "$BOMB"
model_with "$T/slow" "$SLOW"
model_with "$T/huge" "$HUGE"
model_with "$T/banana" "$HUGE_BANANA"
cp -r "$SRC" "$T/good"

vt init > /dev/null
vt config set text_embed.backend model2vec

note "config set refuses a tokenizer past the bounds, and a model that overflows"
refused() { # refused FOLDER PATTERN
  expect_exit 1 vt config set text_embed.model "$1"; one_line_err
  grep -q "text_embed.model: '$1' cannot be used: $2" "$T/err" || fail "$1: $(cat "$T/err")"
  expect_exit 1 vt config get text_embed.model
}
refused "$T/bomb" "tokenizer: its normalizers and pre-tokenizers can make a text .* times longer (the limit is 64)"
refused "$T/slow" "tokenizer: more than 64 normalizers and pre-tokenizers (the limit)"
refused "$T/huge" "model 'model2vec huge (64 d)' gave a vector with NaN or infinity (input 1 of 1)"

note "a tokenizer swapped in after the config was set: the search and the stage fail with one line"
mkdir -p "$T/in"
ffmpeg -v error -y -f lavfi -i "color=gray:s=320x240:d=12" -f lavfi -i "anullsrc=r=16000:cl=mono" \
  -t 12 -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac "$T/in/talk.mp4"
cat > "$T/in/talk.srt" << 'EOF'
1
00:00:01,000 --> 00:00:04,000
My automobile broke down on the highway.

2
00:00:06,000 --> 00:00:09,000
A banana is a sweet fruit.
EOF
expect_exit 0 vt config set text_embed.model "$T/good"
id=$(vt add "$T/in/talk.mp4")
stage_state() { vt export "$id" > "$T/doc.json"; json "$T/doc.json" "[s for s in d['stages'] if s['name']=='$1'][0]['$2']"; }
[[ $(stage_state text_embed state) == done ]] || fail "text_embed with the good model: $(stage_state text_embed error)"
cp "$T/bomb/tokenizer.json" "$T/good/tokenizer.json"
expect_exit 1 vt search --mode meaning aaaa; one_line_err
grep -q "times longer (the limit is 64)" "$T/err" || fail "search with the bomb: $(cat "$T/err")"
expect_exit 1 vt redo "$id" --stage text_embed
[[ $(stage_state text_embed state) == failed ]] || fail "text_embed with the bomb: $(stage_state text_embed state)"
stage_state text_embed error | grep -q "times longer" || fail "stage error: $(stage_state text_embed error)"
expect_exit 0 vt models
grep -q "not usable: tokenizer: its normalizers" "$T/out" || fail "models: $(cat "$T/out")"
# a read-only server answers the search (words, with the reason) and stays up
start_server --read-only
code=$(curl -s -o "$T/page" -w '%{http_code}' --max-time 60 "$B/search?q=aaaa&mode=meaning")
[[ $code == 200 || $code == 400 || $code == 500 || $code == 503 ]] || fail "web search answered $code"
kill -0 "$SRV_PID" || fail "the server died on a search by meaning"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$B/")
[[ $code == 200 ]] || fail "GET / after the search: $code"
stop_cleanly
cp "$SRC/tokenizer.json" "$T/good/tokenizer.json"

note "a word that overflows: the stage fails with the reason, nothing stored"
expect_exit 0 vt config set text_embed.model "$T/banana"
expect_exit 1 vt redo "$id" --stage text_embed
[[ $(stage_state text_embed state) == failed ]] || fail "text_embed with 3e38: $(stage_state text_embed state)"
stage_state text_embed error | grep -q "NaN or infinity" || fail "stage error: $(stage_state text_embed error)"
expect_exit 1 vt search --mode meaning banana; one_line_err
grep -q "NaN or infinity" "$T/err" || fail "query vector: $(cat "$T/err")"
vt search --json automobile > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits']) > 0") == True ]] || fail "words search: $(cat "$T/s.json")"

note "a pull of a model that does not load installs nothing and leaves no lock"
REPO=testorg/bomb
FOLDER=testorg--bomb
HUB_PID=
trap 'kill $HUB_PID 2> /dev/null || true; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
# hub_serving DIR: a fake hub (it reads its files once) serving the model in DIR as $REPO
hub_serving() {
  [[ -z $HUB_PID ]] || { kill "$HUB_PID"; wait "$HUB_PID" 2> /dev/null || true; }
  rm -f "$T/hub.port"
  python3 "$ROOT/tests/tools/fakehub.py" --repo "$REPO" --dir "$1" --port-file "$T/hub.port" \
    --log "$T/hub.log" --mode-file "$T/mode" 2> "$T/hub.err" &
  HUB_PID=$!
  for _ in $(seq 100); do [[ -s $T/hub.port ]] && break; sleep 0.1; done
  [[ -s $T/hub.port ]] || fail "fakehub did not start: $(cat "$T/hub.err")"
  export HF_ENDPOINT=http://127.0.0.1:$(cat "$T/hub.port")
}
: > "$T/mode"
hub_serving "$T/bomb"
no_locks() {
  [[ -z $(find "$LIB/models/.partial" -name '*.lock') ]] || fail "$1: lock files left: $(ls -A "$LIB/models/.partial")"
}
expect_exit 1 vt models pull "$REPO"; one_line_err
grep -q "'$REPO' is not a usable model (nothing installed): tokenizer: its normalizers" "$T/err" ||
  fail "pull of the bomb: $(cat "$T/err")"
[[ ! -e $LIB/models/$FOLDER ]] || fail "the bomb was installed"
no_locks "refused pull"
echo 500 > "$T/mode"
expect_exit 1 vt models pull "$REPO"; one_line_err
no_locks "failed pull"
: > "$T/mode"
hub_serving "$T/huge"
expect_exit 1 vt models pull "$REPO"; one_line_err
grep -q "is not a usable model (nothing installed): model '.*' gave a vector with NaN or infinity" "$T/err" ||
  fail "pull of the huge model: $(cat "$T/err")"
hub_serving "$SRC"
expect_exit 0 vt models pull "$REPO"
no_locks "pull"
expect_exit 0 vt models
grep -Eq "^  $REPO  main .*  ok  \(folder $FOLDER\)$" "$T/out" || fail "models: $(cat "$T/out")"
# a pulled model damaged in place (sizes kept): `models` says what fails
cp "$T/bomb/tokenizer.json" "$T/tok.json"
python3 - "$T/tok.json" "$LIB/models/$FOLDER/tokenizer.json" << 'PY'
import sys
bad, dst = open(sys.argv[1], 'rb').read(), sys.argv[2]
n = len(open(dst, 'rb').read())
open(dst, 'wb').write(bad[:n] if len(bad) >= n else bad + b' ' * (n - len(bad)))
PY
expect_exit 0 vt models
grep -Eq "^  $REPO  main .*  not usable: tokenizer: " "$T/out" || fail "models (damaged): $(cat "$T/out")"
note "ok"
