#!/usr/bin/env bash
# Image models (issue 12): `models pull` of the known image model name against the fake hub
# (tests/tools/fakehub.py) serving a copy of tests/data's MobileNet file under that repo's
# layout; the manifest's kind and tensor; `config set frame_embed.model NAME` and the stage
# running with it (the tensor the known name gives, then one the config names); a repo id
# we know nothing of that holds one .tflite file pulled as an image model; hostile trees
# (two .tflite files, a file name not to write, no model at all, the known repo without
# its file) refused with one line and nothing installed; `vidtheque models` listing
# frame_embed's settings; the image server's keys (api_style, timeout_s, batch) refused
# when set wrong, failing the stage with one line when the file says them wrong, and used
# (batch: the number of requests; timeout_s: a slow server given up on). Network: 127.0.0.1.
. "$(dirname "$0")/lib.sh"

MODEL=$DATA/mobilenet-v1-0.25-224
MFILE=$(ls "$MODEL"/*.tflite)
NAME=mobilenet-v2-1.0-224
REPO=litert-community/MobileNet-v2
FOLDER=litert-community--MobileNet-v2
V1_TENSOR=MobilenetV1/Logits/AvgPool_1a/AvgPool
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; done; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

# hub REPO DIR: a fake hub serving DIR as REPO; HF_ENDPOINT points at it
hub() {
  local pf=$T/hub.$RANDOM.port
  : > "$T/mode"
  python3 "$ROOT/tests/tools/fakehub.py" --repo "$1" --dir "$2" --port-file "$pf" \
    --log "$T/hub.log" --mode-file "$T/mode" 2> "$T/hub.err" &
  PIDS+=($!)
  for _ in $(seq 100); do [[ -s $pf ]] && break; sleep 0.1; done
  [[ -s $pf ]] || fail "fakehub did not start: $(cat "$T/hub.err")"
  export HF_ENDPOINT=http://127.0.0.1:$(cat "$pf")
}
stage() { json "$T/doc.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]['$1']"; }
redo_frames() {
  vt redo "$1" --stage frame_embed > /dev/null 2>&1 || true
  vt export "$1" > "$T/doc.json"
}
nothing_installed() {
  [[ -z $(find "$LIB/models" -mindepth 1 -maxdepth 1 ! -name .partial ! -name "$FOLDER") ]] ||
    fail "$1: models/ holds $(ls -A "$LIB/models")"
}

gen_clip "$T/clip.mp4" 3 "Image models"
vt init > /dev/null
expect_exit 0 vt models
grep -q "^  frame_embed none (default)$" "$T/out" || fail "models, nothing set: $(cat "$T/out")"
grep -q "models pull mobilenet-v2-1.0-224' an image model" "$T/out" || fail "no hint: $(cat "$T/out")"

# ---- the image server's keys: refused when set wrong (the reason, then the usage; exit 2) ----
cp "$LIB/config" "$T/config.before" 2> /dev/null || : > "$T/config.before"
for bad in "api_style xml|'xml' is not openai or jina" "api_style OPENAI|is not openai or jina" \
           "timeout_s 0|is not a number of seconds above 0 and at most 3600" \
           "timeout_s -1|seconds above 0" "timeout_s abc|seconds above 0" "timeout_s 5s|seconds above 0" \
           "timeout_s 3601|at most 3600" "timeout_s nan|seconds above 0" "timeout_s 1e400|seconds above 0" "timeout_s 0x10|seconds above 0" "timeout_s 1.2.3|seconds above 0" \
           "batch 0|is not a whole number from 1 to 128" "batch 129|from 1 to 128" \
           "batch 1.5|from 1 to 128" "batch -3|from 1 to 128" "batch 99999999999|from 1 to 128" \
           "backend onnx|is not a backend for 'frame_embed.backend'"; do
  kv=${bad%%|*} want=${bad#*|}
  expect_exit 2 vt config set -- "frame_embed.${kv%% *}" "${kv#* }"
  head -n 1 "$T/err" | grep -q -- "$want" || fail "config set frame_embed.$kv: $(cat "$T/err")"
done
cmp -s "$LIB/config" "$T/config.before" 2> /dev/null || [[ ! -s $T/config.before && ! -s $LIB/config ]] ||
  fail "a refused set changed the config"
for good in "api_style jina" "api_style openai" "timeout_s 2.5" "timeout_s 30" "batch 1" "batch 128"; do
  expect_exit 0 vt config set "frame_embed.${good%% *}" "${good#* }"
done
vt config set frame_embed.batch 4
vt config set frame_embed.backend openai
vt config set frame_embed.url http://127.0.0.1:9
vt config set frame_embed.model fake-clip
expect_exit 0 vt models
grep -q "^  frame_embed openai  model fake-clip  at http://127.0.0.1:9  api_style openai  timeout_s 30  batch 4$" "$T/out" ||
  fail "models lists frame_embed's server: $(grep frame_embed "$T/out")"
# a value the file says (edited by hand) that cannot work: the stage fails with that line
echo "frame_embed.batch = 999" >> "$LIB/config"
expect_exit 0 vt models
grep -q "batch 999  not usable: frame_embed.batch '999' is not a whole number from 1 to 128" "$T/out" ||
  fail "models with a bad batch: $(grep frame_embed "$T/out")"
id=$(vt add "$T/clip.mp4" 2> /dev/null || true)
[[ -n $id ]] || id=$("$VIDTHEQUE" -q -L "$LIB" ls | cut -f1 | head -n 1)
vt export "$id" > "$T/doc.json"
[[ $(stage state) == failed ]] || fail "a bad batch in the file did not fail the stage: $(stage state)"
[[ $(stage error) == "frame_embed.batch '999' is not a whole number from 1 to 128" ]] ||
  fail "stage error: $(stage error)"

# the keys are used: batch (requests counted by the fake server), timeout_s (a slow server)
python3 "$ROOT/tests/tools/fake_openai.py" --port-file "$T/oport" --mode-file "$T/omode" --dim 8 \
  --model fake-clip --stats-file "$T/stats.json" 2> "$T/fake.err" &
PIDS+=($!)
for _ in $(seq 100); do [[ -s $T/oport ]] && break; sleep 0.1; done
[[ -s $T/oport ]] || fail "fake server did not start: $(cat "$T/fake.err")"
vt config set frame_embed.url "http://127.0.0.1:$(cat "$T/oport")"
vt config set frame_embed.batch 1
vt config unset frame_embed.timeout_s
redo_frames "$id"
[[ $(stage state) == done ]] || fail "frame_embed with the server: $(stage state) $(stage error)"
kept=$(json "$T/doc.json" "len([f for f in d['frames'] if f['duplicate_of'] is None])")
# one probe, then one request per picture
[[ $(json "$T/stats.json" "d['requests']") == $((kept + 1)) ]] ||
  fail "batch 1: $(json "$T/stats.json" "d['requests']") requests for $kept frames"
vt config set frame_embed.timeout_s 1
echo "slow 5" > "$T/omode"
s=$(date +%s)
redo_frames "$id"
# a transient failure: queued for a retry by resume, with the reason
[[ $(stage state) == queued || $(stage state) == failed ]] || fail "a slow server was not given up on: $(stage state)"
stage error | grep -qi "time" || fail "slow server: $(stage error)"
(($(date +%s) - s < 30)) || fail "timeout_s 1 took $(($(date +%s) - s)) s"
: > "$T/omode"
for k in backend url batch timeout_s api_style; do vt config unset "frame_embed.$k"; done

# ---- pull the known image model from the fake hub ----
mkdir -p "$T/hub-known"
cp "$MFILE" "$T/hub-known/mobilenet_v2.tflite"
cp "$MODEL/LICENSE" "$T/hub-known/LICENSE"
echo "# MobileNet v2 (a test copy)" > "$T/hub-known/README.md"
hub "$REPO" "$T/hub-known"
expect_exit 0 "$VIDTHEQUE" -L "$LIB" models pull "$NAME"
grep -q "^$REPO at [0-9a-f]* installed in $LIB/models/$FOLDER (3 files" "$T/out" || fail "pull: $(cat "$T/out")"
grep -q "config set frame_embed.model $NAME" "$T/err" || fail "pull hint: $(cat "$T/err")"
cmp -s "$MFILE" "$LIB/models/$FOLDER/mobilenet_v2.tflite" || fail "the installed file is not the served one"
man=$LIB/models/$FOLDER/manifest.json
[[ $(json "$man" "d['kind']") == image ]] || fail "manifest kind: $(cat "$man")"
[[ $(json "$man" "d['tensor']") == MobilenetV2/Logits/AvgPool ]] || fail "manifest tensor: $(cat "$man")"
[[ $(json "$man" "sorted(f['path'] for f in d['files'])") == "['LICENSE', 'README.md', 'mobilenet_v2.tflite']" ]] ||
  fail "manifest files: $(cat "$man")"
[[ $(json "$man" "[f['sha256'] for f in d['files'] if f['path']=='mobilenet_v2.tflite'][0]") == $(sha256sum "$MFILE" | cut -d' ' -f1) ]] ||
  fail "manifest sha256"
expect_exit 0 vt models pull "$NAME"
grep -q "nothing to do" "$T/out" || fail "second pull: $(cat "$T/out")"
expect_exit 0 vt models
grep -Eq "^  $REPO  main [0-9a-f]{12}  .*3 files, image model  pulled 20.*Z  ok  \(folder $FOLDER\)$" "$T/out" ||
  fail "models (pulled): $(cat "$T/out")"

# the config names it; the known tensor is the default (not in this v1 file: config set
# refuses it with the reason, issue 27)
expect_exit 1 vt config set frame_embed.model "$NAME"; one_line_err
grep -q "^vidtheque: frame_embed.model: '$NAME' cannot be used: .*no tensor named 'MobilenetV2/Logits/AvgPool'" "$T/err" ||
  fail "config set with the known tensor missing: $(cat "$T/err")"
expect_exit 0 vt config set frame_embed.tensor "$V1_TENSOR"
expect_exit 0 vt config set frame_embed.model "$NAME"
expect_exit 0 vt models
grep -q "^  frame_embed tflite (from the model)  model $NAME  tensor $V1_TENSOR  ready: $LIB/models/$FOLDER$" "$T/out" ||
  fail "models (configured): $(grep frame_embed "$T/out")"
# the override unset, the known tensor is the default again: `models` and the stage say why
expect_exit 0 vt config unset frame_embed.tensor
expect_exit 0 vt models
grep -q "^  frame_embed tflite (from the model)  model $NAME  not usable: .*no tensor named 'MobilenetV2/Logits/AvgPool'$" "$T/out" ||
  fail "models (configured, known tensor): $(grep frame_embed "$T/out")"
redo_frames "$id"
[[ $(stage state) == failed ]] || fail "the known tensor was not used: $(stage state) $(stage model)"
stage error | grep -q "no tensor named 'MobilenetV2/Logits/AvgPool'" || fail "error: $(stage error)"
# frame_embed.tensor overrides it; by name, by repo id and by folder name alike
for m in "$NAME" "$REPO" "$FOLDER"; do
  vt config set frame_embed.tensor "$V1_TENSOR"
  vt config set frame_embed.model "$m"
  redo_frames "$id"
  [[ $(stage state) == done ]] || fail "frame_embed with $m: $(stage state) $(stage error)"
  [[ $(stage model) == "tflite mobilenet_v2 (256 d, $V1_TENSOR); "*" frame(s)" ]] || fail "provenance: $(stage model)"
done
vt similar --json "$id" --frame 0 > "$T/sim.json" || fail "similar after the pulled model"

# ---- a repo we know nothing of, holding one .tflite file: an image model ----
mkdir -p "$T/hub-other"
cp "$MFILE" "$T/hub-other/tiny-cnn_v1.tflite"
echo "notes" > "$T/hub-other/README.md"
hub someorg/tiny-cnn "$T/hub-other"
expect_exit 0 vt models pull someorg/tiny-cnn
grep -q "installed in $LIB/models/someorg--tiny-cnn (2 files" "$T/out" || fail "pull by repo id: $(cat "$T/out")"
[[ $(json "$LIB/models/someorg--tiny-cnn/manifest.json" "d['kind'] + ' ' + str('tensor' in d)") == "image False" ]] ||
  fail "unknown repo's manifest: $(cat "$LIB/models/someorg--tiny-cnn/manifest.json")"
vt config set frame_embed.model someorg/tiny-cnn
vt config unset frame_embed.tensor
redo_frames "$id"
[[ $(stage state) == done && $(stage model) == *"$V1_TENSOR"* ]] ||
  fail "the default tensor of an unknown model: $(stage state) $(stage model) $(stage error)"

# ---- hostile trees: one line, exit 1, nothing installed ----
pull_refused() { # pull_refused REPO DIR PATTERN
  hub "$1" "$2"
  rm -rf "$LIB/models/.partial"
  expect_exit 1 vt models pull "$1"; one_line_err
  grep -q -- "$3" "$T/err" || fail "$1: $(cat "$T/err")"
  [[ ! -e $LIB/models/${1/\//--} ]] || fail "$1 was installed"
}
mkdir -p "$T/two" "$T/badname" "$T/none" "$T/wrongfile"
cp "$MFILE" "$T/two/a.tflite"; cp "$MFILE" "$T/two/b.tflite"
pull_refused evil/two "$T/two" "holds several .tflite files: not one image model"
cp "$MFILE" "$T/badname/bad name.tflite"
pull_refused evil/badname "$T/badname" "the model file name 'bad name.tflite' is not one to write"
echo "just notes" > "$T/none/README.md"
pull_refused evil/none "$T/none" "has no 'model.safetensors': not a Model2Vec model (nor a TFLite image model"
cp "$MFILE" "$T/wrongfile/other.tflite"
rm -rf "$LIB/models/$FOLDER"
pull_refused "$REPO" "$T/wrongfile" "has no 'mobilenet_v2.tflite': not the image model expected"

# ---- not pulled (or removed): the stage and `models` say what to do ----
vt config set frame_embed.model "$NAME"
redo_frames "$id"
[[ $(stage state) == failed ]] || fail "a model not pulled: $(stage state)"
[[ $(stage error) == "image model '$NAME' is not in the library (run 'vidtheque models pull $NAME')" ]] ||
  fail "not pulled: $(stage error)"
expect_exit 0 vt models
grep -q "not usable: image model '$NAME' is not in the library" "$T/out" || fail "models: $(grep frame_embed "$T/out")"
vt config set frame_embed.model someorg/tiny-cnn
expect_exit 0 "$VIDTHEQUE" -L "$LIB" models rm someorg/tiny-cnn
grep -q "note: frame_embed.model still names 'someorg/tiny-cnn'" "$T/err" || fail "rm note: $(cat "$T/err")"
# a folder without a model file is not ready
vt config set frame_embed.model "$T/hub-other"
rm -f "$T/hub-other"/*.tflite
expect_exit 0 vt models
grep -q "not usable: no .tflite file in $T/hub-other" "$T/out" || fail "models, empty folder: $(grep frame_embed "$T/out")"
# a relative model file is stored absolute
(cd "$MODEL" && "$VIDTHEQUE" -q -L "$LIB" config set frame_embed.model "./$(basename "$MFILE")")
[[ $(vt config get frame_embed.model) == "$MFILE" ]] || fail "relative file stored as $(vt config get frame_embed.model)"
echo ok
