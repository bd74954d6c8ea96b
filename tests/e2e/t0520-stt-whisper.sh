#!/usr/bin/env bash
# backends: sqlite postgresql
# Whisper in process (stt.backend whisper, implied by stt.model): a talk (a title slide over
# 2 s of silence, then tests/data/speech/jfk.wav; its audio tagged English, which Whisper is
# then told rather than detecting it) indexed through every stage with the
# generated checkpoint of tests/data/whisper-test (random weights: its words are nonsense,
# but they are words with timings). Checked: stt done with provenance naming whisper, its
# format and decoding settings and the segmenter; cues whose words are timed inside the
# media, in order, each inside its cue; export gives them; `search` finds one of the words
# at its moment. Then `models pull whisper-tiny.en` from the fake hub (serving the same
# checkpoint as openai/whisper-tiny.en) installs a speech model that `models` shows ready,
# and indexing with it names the repo and commit; and hostile checkpoints (truncated, a
# tensor relabelled I16, a config.json lying about d_model, a NaN weight, a ggml file in
# Q5_1) are refused by `config set` with the loader's reason, and written into the config
# anyway fail the stage with it on one line, storing no cues.
. "$(dirname "$0")/lib.sh"

export VIDTHEQUE_RETRY_BASE=1
# the checkpoint holds no vocabulary nor filterbank: the installed ones, from the tree
export VIDTHEQUE_WHISPER_ASSETS=$DATA/whisper-assets
CKPT=$T/whisper-test
cp -r "$DATA/whisper-test" "$CKPT"

ffmpeg -nostdin -v error -y -f lavfi -i color=white:s=320x240:r=5:d=14 -i "$DATA/speech/jfk.wav" \
  -filter_complex "[0:v]drawtext=text='Whisper decoding':fontsize=28:x=20:y=100[v];[1:a]adelay=2000,apad,atrim=0:14[a]" \
  -map '[v]' -map '[a]' -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a pcm_s16le -t 14 \
  -metadata title="A talk on speech" -metadata:s:a:0 language=eng "$T/talk.mkv" ||
  fail "cannot make the video"
stt_field() { json "$T/doc.json" "[s for s in d['stages'] if s['name']=='stt'][0]['$1']"; }

# check_doc: stt done, words timed inside the media, in order, inside their cues
check_doc() {
  [[ $(stt_field state) == done ]] || fail "stt not done: $(stt_field error)"
  python3 - "$T/doc.json" << 'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
cues = doc["cues"]
assert cues, "no cues"
prev = 0
n = 0
for c in cues:
    assert c["words"], c
    for w in c["words"]:
        assert w["text"] and " " not in w["text"], w
        assert 0 <= w["start_s"] <= w["end_s"] <= doc["duration_s"] + 0.01, w
        assert c["start_s"] - 0.01 <= w["start_s"] and w["end_s"] <= c["end_s"] + 0.01, (w, c)
        assert w["start_s"] >= prev - 1e-6, (w, prev)
        assert 0 <= w.get("conf", 1) <= 1, w
        prev = w["start_s"]
        n += 1
# jfk.wav starts 2 s in: nothing is said before
assert cues[0]["start_s"] >= 1.5, cues[0]
print(n)
PY
}

note "stt.model = the generated checkpoint: every stage, whisper's words with timings"
vt init > /dev/null 2>&1 || fail "init"
expect_exit 0 vt config set stt.model "$CKPT"
# the random model's words change with the prompt: this run has none, the next one has
expect_exit 0 vt config set stt.hints false
expect_exit 0 vt models
grep -q "stt  *whisper (from the model)  model $CKPT  ready: $CKPT" "$T/out" ||
  fail "models: $(cat "$T/out")"
expect_exit 0 vt add "$T/talk.mkv"
id=$(cat "$T/out")
vt export "$id" > "$T/doc.json" || fail "export"
n=$(check_doc) || fail "words or cues wrong"
note "$n words, model: $(stt_field model)"
want="whisper $CKPT (safetensors F16); greedy, temperatures 0-1.0, beam 1, word timestamps dtw; vad energy"
[[ $(stt_field model) == "$want" ]] || fail "stt model: '$(stt_field model)', expected '$want'"
vt show "$id" | grep -qF "whisper $CKPT" || fail "show does not give the stt model"
vt export "$id" --format vtt > "$T/doc.vtt" || fail "export vtt"
grep -q -- "-->" "$T/doc.vtt" || fail "vtt has no cue"
# a word of the transcript (letters only, 3 or more) is found at its moment
python3 - "$T/doc.json" > "$T/word" << 'PY' || fail "no searchable word in the transcript"
import json, re, sys
for c in json.load(open(sys.argv[1]))["cues"]:
    for w in c["words"]:
        m = re.fullmatch(r"[A-Za-z]{3,}", w["text"].strip(".,!?\"'"))
        if m:
            print(m.group(0), w["start_s"], w["end_s"])
            sys.exit(0)
sys.exit(1)
PY
read -r word ws we < "$T/word"
vt search --json "$word" > "$T/s.json" || fail "search"
python3 - "$T/s.json" "$id" "$ws" "$we" << 'PY' || fail "search '$word' ($ws-$we): $(cat "$T/s.json")"
import json, sys
hits = [h for h in json.load(open(sys.argv[1]))["hits"] if h["video_id"] == sys.argv[2]]
ws, we = float(sys.argv[3]), float(sys.argv[4])
assert any("speech" in (h["source"], *h.get("also", "").split(",")) and
           h["start_s"] - 0.01 <= ws and we <= h["end_s"] + 0.01 for h in hits), hits
PY

note "models pull whisper-tiny.en from the fake hub, then index with it"
HUB_DIR=$T/hub
mkdir -p "$HUB_DIR"
cp "$DATA/whisper-test/config.json" "$DATA/whisper-test/generation_config.json" \
  "$DATA/whisper-test/model.safetensors" "$HUB_DIR/"
: > "$T/mode"
python3 "$ROOT/tests/tools/fakehub.py" --repo openai/whisper-tiny.en --dir "$HUB_DIR" \
  --port-file "$T/hub.port" --log "$T/hub.log" --mode-file "$T/mode" 2> "$T/hub.err" &
HUB_PID=$!
trap 'kill $HUB_PID 2> /dev/null || true; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for _ in $(seq 100); do [[ -s $T/hub.port ]] && break; sleep 0.1; done
[[ -s $T/hub.port ]] || fail "fakehub did not start: $(cat "$T/hub.err")"
export HF_ENDPOINT=http://127.0.0.1:$(cat "$T/hub.port")
LIB=$T/libpull
vt init > /dev/null 2>&1 || fail "init"
expect_exit 0 vt models pull whisper-tiny.en
grep -q "installed in $LIB/models/openai--whisper-tiny.en (3 files" "$T/out" ||
  fail "pull: $(cat "$T/out")"
M=$LIB/models/openai--whisper-tiny.en/manifest.json
[[ $(json "$M" "d['kind']") == speech ]] || fail "manifest kind: $(cat "$M")"
commit=$(json "$M" "d['commit']")
expect_exit 0 vt config set stt.model whisper-tiny.en
expect_exit 0 vt models
grep -q "stt  *whisper (from the model)  model whisper-tiny.en  ready: $LIB/models/openai--whisper-tiny.en" "$T/out" ||
  fail "models: $(cat "$T/out")"
grep -q "openai/whisper-tiny.en  main ${commit:0:12} .*speech model" "$T/out" || fail "models list: $(cat "$T/out")"
# with the slide's and title's words as the initial prompt, which may well make a random
# model say nothing: done with words, or skipped as silence
vt add "$T/talk.mkv" > "$T/out" 2> "$T/err" || true
vt export "$(vt ls | awk 'NR==1 {print $1}')" > "$T/doc.json" || fail "export"
case $(stt_field state) in
done)
  check_doc > /dev/null || fail "pulled model: words or cues wrong"
  want="whisper openai/whisper-tiny.en (safetensors F16, rev ${commit:0:12}); greedy"
  [[ $(stt_field model) == "$want"* ]] || fail "stt model: '$(stt_field model)', expected '$want...'"
  ;;
skipped) [[ $(stt_field error) == "silence only"* ]] || fail "pulled model: $(stt_field error)" ;;
*) fail "pulled model: stt $(stt_field state): $(stt_field error)" ;;
esac
# a model not pulled says how to get it
expect_exit 0 vt config set stt.model whisper-small.en
expect_exit 0 vt models
grep -q "not usable: model 'whisper-small.en' is not in the library (run 'vidtheque models pull whisper-small.en')" "$T/out" ||
  fail "models, not pulled: $(cat "$T/out")"

note "hostile checkpoints fail the stage with their reason, one line, and store no cues"
# made here from the test checkpoint: truncated; a tensor relabelled as integers; a
# config.json that lies about d_model; a NaN weight; a ggml file quantised as Q5_1
mkbad() { # mkbad NAME: $T/bad-NAME, a copy of the checkpoint with one thing wrong
  local d=$T/bad-$1
  cp -r "$DATA/whisper-test" "$d"
  rm -f "$d"/expected*.json "$d"/align-qk.f32
  case $1 in
  truncated) head -c 300000 "$DATA/whisper-test/model.safetensors" > "$d/model.safetensors" ;;
  config) sed -i -e 's/"d_model": 64/"d_model": 128/' -e 's/_ffn_dim": 256/_ffn_dim": 512/' "$d/config.json" ;;
  i16 | nan) python3 - "$1" "$d/model.safetensors" << 'PY' ;;
import json, struct, sys
what, path = sys.argv[1], sys.argv[2]
b = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
name = "model.decoder.layers.1.fc1.weight"
if what == "i16":  # same size as F16: only the label is wrong
    key = b'"%s":{"dtype":"F16"' % name.encode()
    at = b.index(key, 8, 8 + n)
    b[at:at + len(key)] = key.replace(b"F16", b"I16")
else:
    begin = json.loads(b[8:8 + n])[name]["data_offsets"][0]
    b[8 + n + begin + 14:8 + n + begin + 16] = struct.pack("<H", 0x7E00)
open(path, "wb").write(b)
PY
  q5) python3 - "$d.bin" << 'PY' ;;
import struct, sys
b = struct.pack("<I11i", 0x67676D6C, 8, 2, 32, 1, 1, 4, 32, 1, 1, 80, 9)
b += struct.pack("<iif", 1, 1, 0.0) + struct.pack("<i", 0)
b += struct.pack("<4i", 1, 17, 7, 32) + b"decoder.ln.weight" + bytes(24)
open(sys.argv[1], "wb").write(b)
PY
  esac
}
LIB=$T/libbad
vt init > /dev/null 2>&1 || fail "init"
first=1
for bad in truncated i16 config nan q5; do
  case $bad in
  truncated) want="model.safetensors" ;;
  i16) want="'model.decoder.layers.1.fc1.weight' is I16, not F32, F16 or BF16" ;;
  config) want="'model.encoder.conv1.weight' is 64x80x3, expected 128x80x3" ;;
  nan) want="'model.decoder.layers.1.fc1.weight' has a value that is not finite" ;;
  q5) want="Q5_1" ;;
  esac
  mkbad "$bad"
  path=$T/bad-$bad
  [[ $bad == q5 ]] && path=$T/bad-q5.bin
  # config set loads it and refuses it with the reason (issue 27); one that goes bad after
  # it was chosen (written here into the config) fails the stage with the same reason
  expect_exit 1 vt config set stt.model "$path"; one_line_err
  grep -q "stt.model: '$path' cannot be used: .*$want" "$T/err" || fail "$bad: config set: $(cat "$T/err")"
  touch "$LIB/config"
  sed -i '/^stt\.model = /d' "$LIB/config"
  echo "stt.model = $path" >> "$LIB/config"
  if ((first)); then
    expect_exit 1 vt add "$T/talk.mkv"
    vid=$(vt ls | awk 'NR==1 {print $1}')
    first=0
  else
    expect_exit 1 vt redo --stage stt "$vid"
  fi
  vt export "$vid" > "$T/doc.json" || fail "export of the failed video"
  [[ $(stt_field state) == failed ]] || fail "$bad: stt $(stt_field state): $(stt_field error)"
  stt_field error | grep -q "$want" || fail "$bad: reason '$(stt_field error)', wanted '$want'"
  [[ $(stt_field error | wc -l) == 1 ]] || fail "$bad: the reason is not one line"
  [[ $(json "$T/doc.json" "len(d['cues'])") == 0 ]] || fail "$bad: cues were stored"
  [[ $(vt ls | wc -l) == 1 ]] || fail "$bad: $(vt ls)"
  note "$bad: $(stt_field error)"
done

# finite weights that would overflow (3e38 in a decoder layer's F32 fc1): refused by config
# set, as the loader packs weights as F16 and 3e38 is none (issue 27 failure 7; what loads is
# then run for one decoder step, whose logits must be finite: F16 weights cannot overflow
# this small a network, so that refusal is not reached here)
d=$T/bad-huge
cp -r "$DATA/whisper-test" "$d"
rm -f "$d"/expected*.json "$d"/align-qk.f32
python3 - "$d/model.safetensors" << 'PY' || fail "huge: could not write the checkpoint"
import json, struct, sys
path = sys.argv[1]
b = open(path, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
head, data = json.loads(b[8:8 + n]), b[8 + n:]
big = "model.decoder.layers.1.fc1.weight"
meta = {k: v for k, v in head.items() if k != "__metadata__"}
out, blobs = {}, b""
for name in sorted(meta, key=lambda k: meta[k]["data_offsets"][0]):
    t = meta[name]
    raw = data[t["data_offsets"][0]:t["data_offsets"][1]]
    if name == big:
        count = 1
        for x in t["shape"]:
            count *= x
        raw, t = struct.pack("<%df" % count, *([3e38] * count)), dict(t, dtype="F32")
    out[name] = dict(t, data_offsets=[len(blobs), len(blobs) + len(raw)])
    blobs += raw
if "__metadata__" in head:
    out["__metadata__"] = head["__metadata__"]
h = json.dumps(out).encode()
open(path, "wb").write(struct.pack("<Q", len(h)) + h + blobs)
PY
expect_exit 1 vt config set stt.model "$d"; one_line_err
grep -q "stt.model: '$d' cannot be used: .*value 3e+38 at 0 is not a finite F16" "$T/err" ||
  fail "huge: config set: $(cat "$T/err")"
note "huge: $(cat "$T/err")"
echo "ok"
