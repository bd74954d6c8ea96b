#!/usr/bin/env bash
# Speech through a transcription server (stt.backend = openai): the fake server of
# tests/tools/fake_openai.py on loopback knows the words of tests/data/speech/jfk.wav with
# their timings (the truth below, on jfk.wav's time line) and those of the LibriVox clips of
# pocketsphinx-testdata (their transcripts spread over each clip), and answers the audio
# segments the stt stage sends it with the words inside each. The videos carry the audio
# losslessly (PCM; jfk.wav after 2 s of silence), so the fake finds every segment byte for
# byte. Checked: `add` gives cues whose words are the JFK sentence in order, each at its true
# time plus the 2 s (word timings, top-level or per segment as whisper.cpp puts them), or
# inside its segment's span (segment timings only); the server's model is in the stage's
# provenance (with the segmenter: energy, or Silero with stt.vad silero, whose segments
# bring back the same words); `search` finds "fellow americans" at the moment it is said; the LibriVox clips
# (one segment each, sent in parallel) come back in order, each word in its clip. Then every
# failure mode (timeout, 500s, truncated JSON, garbage, an answer over the size cap, 404
# model, timings outside the segment, no URL, no API key, an unknown backend) makes `add`
# exit 1 with stt queued for a retry (what may pass) or failed (4xx, configuration) and the
# reason kept; `resume` once the server is fixed finishes a queued one.
. "$(dirname "$0")/lib.sh"

export VIDTHEQUE_RETRY_BASE=1
export VIDTHEQUE_STT_TIMEOUT_S=1
PAD=2.0

FAKE_PID=
stop_fake() {
  if [[ -n $FAKE_PID ]]; then kill "$FAKE_PID" 2> /dev/null; wait "$FAKE_PID" 2> /dev/null || true; fi
  FAKE_PID=
}
trap 'stop_fake; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

# The video: 2 s of silence, jfk.wav, 1 s of silence; black frames; PCM audio (lossless).
ffmpeg -nostdin -v error -y -f lavfi -i color=black:s=160x120:r=10:d=14 -i "$DATA/speech/jfk.wav" \
  -filter_complex "[1:a]adelay=2000,apad,atrim=0:14[a]" -map 0:v -map '[a]' \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a pcm_s16le -t 14 "$T/jfk.mkv" ||
  fail "cannot make the video"

# The truth: jfk.wav's words with their times in jfk.wav (placed by its speech envelope).
cat > "$T/speech.json" << EOF
{"sources": [{"pcm": "$DATA/speech/jfk.wav", "words": [
 ["And", 0.30, 0.55], ["so,", 0.55, 0.90], ["my", 0.95, 1.15], ["fellow", 1.15, 1.55],
 ["Americans,", 1.55, 2.20], ["ask", 3.30, 3.75], ["not", 3.80, 4.50], ["what", 5.10, 5.40],
 ["your", 5.40, 5.65], ["country", 5.65, 6.10], ["can", 6.10, 6.40], ["do", 6.40, 6.70],
 ["for", 6.70, 7.00], ["you,", 7.00, 7.50], ["ask", 8.00, 8.40], ["what", 8.40, 8.70],
 ["you", 8.70, 8.90], ["can", 8.90, 9.15], ["do", 9.15, 9.40], ["for", 9.40, 9.65],
 ["your", 9.65, 9.95], ["country.", 9.95, 10.60]]}]}
EOF
# The LibriVox clips of pocketsphinx-testdata, each after a pause of its own, as one WAV;
# their real transcripts with the words spread evenly over each clip (the fake's truth).
data=/usr/share/pocketsphinx/test/data/librivox
[[ -f $data/transcription ]] || fail "'$data': missing (install pocketsphinx-testdata)"
python3 - "$data" "$T" "$T/speech.json" << 'PY' || fail "cannot make the LibriVox audio"
import json, re, subprocess, sys
data, tmp, spec = sys.argv[1], sys.argv[2], sys.argv[3]
text = {}
for line in open(data + "/transcription"):
    m = re.match(r"\s*(.*?)\s*\((\S+)\)\s*$", line)
    if m:
        text[m.group(2)] = [w for w in m.group(1).split() if w not in ("<s>", "</s>")]
names = [l.strip() for l in open(data + "/fileids") if l.strip()]
inputs, filt, words, clips, t = [], "", [], [], 0.0
for k, (name, pause) in enumerate(zip(names, [1.7, 2.3, 1.1, 3.0, 1.4])):
    f = "%s/%s.wav" % (data, name)
    dur = float(subprocess.check_output(["ffprobe", "-v", "error", "-show_entries",
                "format=duration", "-of", "csv=p=0", f]))
    subprocess.check_call(["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                           "anullsrc=r=16000:cl=mono", "-t", str(pause), "-c:a", "pcm_s16le",
                           "%s/sil%d.wav" % (tmp, k)])
    t += pause
    ws = text[name]
    words += [[w, round(t + dur * i / len(ws), 3), round(t + dur * (i + 1) / len(ws), 3)]
              for i, w in enumerate(ws)]
    clips.append([t, t + dur])
    t += dur
    inputs += ["-i", "%s/sil%d.wav" % (tmp, k), "-i", f]
    filt += "[%d:a][%d:a]" % (2 * k, 2 * k + 1)
subprocess.check_call(["ffmpeg", "-nostdin", "-v", "error"] + inputs + ["-filter_complex",
                       filt + "concat=n=%d:v=0:a=1" % (len(inputs) // 2), "-ar", "16000",
                       "-ac", "1", "-c:a", "pcm_s16le", tmp + "/vox.wav"])
d = json.load(open(spec))
d["sources"].append({"pcm": tmp + "/vox.wav", "words": words, "clips": clips})
json.dump(d, open(spec, "w"))
open(tmp + "/vox.dur", "w").write("%.2f" % (t + 1))
PY
ffmpeg -nostdin -v error -y -f lavfi -i "color=black:s=160x120:r=2:d=$(cat "$T/vox.dur")" \
  -i "$T/vox.wav" -filter_complex "[1:a]apad[a]" -map 0:v -map '[a]' -c:v libx264 \
  -preset veryfast -pix_fmt yuv420p -c:a pcm_s16le -t "$(cat "$T/vox.dur")" "$T/vox.mkv" ||
  fail "cannot make the LibriVox video"

: > "$T/mode"
python3 "$ROOT/tests/tools/fake_openai.py" --port-file "$T/port" --mode-file "$T/mode" \
  --speech "$T/speech.json" --model whisper-test --api-key stt-key-77 2> "$T/fake.err" &
FAKE_PID=$!
for _ in $(seq 100); do [[ -s $T/port ]] && break; sleep 0.1; done
[[ -s $T/port ]] || fail "fake server did not start: $(cat "$T/fake.err")"
BASE=http://127.0.0.1:$(cat "$T/port")

# new_lib NAME [CONFIG LINES...]: a fresh library in $LIB with that config ("key = value"),
# set with `vidtheque config set` (or written in the file's format where the binary has no
# config command)
new_lib() {
  LIB=$T/$1
  shift
  vt init 2> /dev/null
  if vt config --help > /dev/null 2>&1; then
    for kv in "$@"; do
      vt config set "${kv%% = *}" "${kv#* = }" || fail "config set ${kv%% = *}"
    done
  else
    printf '%s\n' "$@" > "$LIB/config"
  fi
}
server_cfg=("stt.backend = openai" "stt.url = $BASE" "stt.model = whisper-test" "stt.api_key = stt-key-77")
stt_field() { json "$T/doc.json" "[s for s in d['stages'] if s['name']=='stt'][0]['$1']"; }

# check_words MODE: the cues' words are the truth's in order, at their times (+PAD), or,
# with segment timings only, inside the media and in order
check_words() {
  python3 - "$T/speech.json" "$T/doc.json" "$PAD" "$1" << 'PY'
import json, sys
truth = json.load(open(sys.argv[1]))["sources"][0]["words"]
doc, pad, mode = json.load(open(sys.argv[2])), float(sys.argv[3]), sys.argv[4]
words = [w for c in doc["cues"] for w in c["words"]]
spans = []
for t in truth:
    if spans and t[1] - spans[-1][1] <= 1.0:
        spans[-1][1] = t[2]
    else:
        spans.append([t[1], t[2]])
got = [w["text"] for w in words]
assert got == [t[0] for t in truth], got
text = " ".join(c["text"].replace("\n", " ") for c in doc["cues"])
assert text == " ".join(t[0] for t in truth), text
prev = 0
for w, t in zip(words, truth):
    assert 0 <= w["start_s"] <= w["end_s"] <= doc["duration_s"], w
    assert w["start_s"] >= prev - 1e-6, (w, prev)
    prev = w["start_s"]
    if mode != "nowords":
        assert abs(w["start_s"] - (t[1] + pad)) < 0.01 and abs(w["end_s"] - (t[2] + pad)) < 0.01, (w, t)
    else:  # spread inside the fake's segment (words without a 1 s gap), at its span
        seg = [s for s in spans if s[0] <= t[1] and t[2] <= s[1]][0]
        assert seg[0] + pad - 0.01 <= w["start_s"] and w["end_s"] <= seg[1] + pad + 0.01, (w, seg)
PY
}

note "a transcription server gives the JFK sentence with word timings"
new_lib lib "${server_cfg[@]}"
expect_exit 0 vt add "$T/jfk.mkv"
id=$(cat "$T/out")
vt export "$id" > "$T/doc.json"
[[ $(stt_field state) == done ]] || fail "stt not done: $(stt_field error)"
want="openai-transcribe whisper-test at $BASE (server model whisper-test); vad energy"
[[ $(stt_field model) == "$want" ]] || fail "stt model: '$(stt_field model)', expected '$want'"
vt show "$id" | grep -qF "$want" || fail "show does not give the stt model"
check_words words || fail "words or timings differ from the truth"
vt search --json "fellow americans" > "$T/s.json"
python3 - "$T/s.json" "$id" "$PAD" << 'PY' || fail "search: $(cat "$T/s.json")"
import json, sys
hits = json.load(open(sys.argv[1]))["hits"]
pad = float(sys.argv[3])
assert hits and hits[0]["video_id"] == sys.argv[2] and hits[0]["source"] == "speech", hits
# "fellow americans" is said from 1.15 to 2.20 s of jfk.wav
assert pad + 1.15 - 0.01 <= hits[0]["start_s"] <= pad + 2.2 and hits[0]["end_s"] >= pad + 1.5, hits[0]
PY

note "the same with stt.vad silero: Silero's segments go to the server, all the words come back"
new_lib libsil "${server_cfg[@]}" "stt.vad = silero" "stt.vad_model = $DATA/silero-vad/for-tests-silero-v6.2.0-ggml.bin"
expect_exit 0 vt add "$T/jfk.mkv"
vt export "$(cat "$T/out")" > "$T/doc.json"
[[ $(stt_field state) == done ]] || fail "silero: stt not done: $(stt_field error)"
want="openai-transcribe whisper-test at $BASE (server model whisper-test); vad silero-16k 6.2.0"
[[ $(stt_field model) == "$want" ]] || fail "silero: stt model '$(stt_field model)', expected '$want'"
check_words words || fail "silero: words or timings differ from the truth"

note "the LibriVox clips: five segments in parallel, every word in its clip, in order"
new_lib libvox "${server_cfg[@]}"
expect_exit 0 vt add "$T/vox.mkv"
vid=$(cat "$T/out")
vt export "$vid" > "$T/doc.json"
[[ $(stt_field state) == done ]] || fail "LibriVox: stt not done: $(stt_field error)"
python3 - "$T/speech.json" "$T/doc.json" << 'PY' || fail "LibriVox: words or timings wrong"
import json, sys
src = json.load(open(sys.argv[1]))["sources"][1]
doc = json.load(open(sys.argv[2]))
words = [w for c in doc["cues"] for w in c["words"]]
assert [w["text"] for w in words] == [t[0] for t in src["words"]], [w["text"] for w in words]
for w, t in zip(words, src["words"]):
    assert abs(w["start_s"] - t[1]) < 0.01 and abs(w["end_s"] - t[2]) < 0.01, (w, t)
    assert any(a - 0.01 <= w["start_s"] and w["end_s"] <= b + 0.01 for a, b in src["clips"]), w
PY
vt search --json "ill disposed young man" > "$T/s.json"
python3 - "$T/s.json" "$vid" "$T/speech.json" << 'PY' || fail "LibriVox search: $(cat "$T/s.json")"
import json, sys
hits = [h for h in json.load(open(sys.argv[1]))["hits"] if h["video_id"] == sys.argv[2]]
a, b = json.load(open(sys.argv[3]))["sources"][1]["clips"][1]  # "he was not an ill disposed young man"
assert hits and a - 0.01 <= hits[0]["start_s"] and hits[0]["end_s"] <= b + 0.01, (hits, a, b)
PY

LIB=$T/lib
for mode in segwords nowords; do
  note "$mode: the same words from another shape of verbose_json"
  echo "$mode" > "$T/mode"
  expect_exit 0 vt redo --stage stt "$id"
  vt export "$id" > "$T/doc.json"
  [[ $(stt_field state) == done ]] || fail "$mode: stt not done: $(stt_field error)"
  check_words "$mode" || fail "$mode: words or timings wrong"
done

# expect_stt_fail MODE STATE PATTERN: add exits 1, stt left in STATE with PATTERN in its error
n=0
expect_stt_fail() {
  local mode=$1 state=$2 pat=$3
  n=$((n + 1))
  echo "$mode" > "$T/mode"
  [[ -n ${4:-} ]] || new_lib "lib$n" "${server_cfg[@]}"
  expect_exit 1 vt add "$T/jfk.mkv"
  fid=$(head -1 "$T/out")
  vt export "$fid" > "$T/doc.json"
  [[ $(stt_field state) == "$state" ]] ||
    fail "$mode: stt is $(stt_field state), expected $state: $(stt_field error)"
  stt_field error | grep -qi -- "$pat" || fail "$mode: no '$pat' in the error: $(stt_field error)"
  # one line per attempt (a retry that comes due during `add` runs in it), about stt only
  grep -q '^error: .*stt failed' "$T/err" || fail "$mode: no stt error line: $(cat "$T/err")"
  grep -v '^error: .*: stt failed' "$T/err" | grep -q . && fail "$mode: other lines: $(cat "$T/err")"
  grep -q stt-key-77 "$T/err" "$T/doc.json" && fail "$mode: the API key is shown"
  note "$mode: $(stt_field state): $(stt_field error)"
}
expect_stt_fail "slow 5" queued "timed out"
expect_stt_fail truncated queued "not JSON"
expect_stt_fail garbage queued "not JSON"
expect_stt_fail badtimes queued "timings outside the segment"
expect_stt_fail huge queued "response over 4194304 bytes"
expect_stt_fail notfound failed "HTTP 404: model .* not found"
expect_stt_fail "fail500 99" queued "HTTP 500: internal trouble"

note "resume once the server is fixed finishes the queued stt"
echo ok > "$T/mode"
for _ in $(seq 40); do # the retry is due 1 or 4 s (VIDTHEQUE_RETRY_BASE * 4^k) after the failure
  sleep 0.5
  vt resume 2> /dev/null && break
done
vt export "$fid" > "$T/doc.json"
[[ $(stt_field state) == done ]] || fail "stt not done after resume: $(stt_field error)"
check_words words || fail "words after resume differ"

note "500s that clear up within a segment's retries pass"
n=$((n + 1))
new_lib "lib$n" "${server_cfg[@]}"
echo "fail500 2" > "$T/mode"
expect_exit 0 vt add "$T/jfk.mkv"
vt export "$(cat "$T/out")" > "$T/doc.json"
[[ $(stt_field state) == done ]] || fail "fail500 2: stt not done: $(stt_field error)"

note "configuration that cannot work fails the stage for good"
echo ok > "$T/mode"
new_lib libnourl "stt.backend = openai" "stt.model = whisper-test"
expect_stt_fail ok failed "stt.url is not set" keep
new_lib libnokey "stt.backend = openai" "stt.url = $BASE" "stt.model = whisper-test"
expect_stt_fail ok failed "HTTP 401" keep
new_lib libbad
echo "stt.backend = whisperx" > "$LIB/config" # a hand-edited file (config set refuses it)
expect_stt_fail ok failed "not pocketsphinx, whisper or openai" keep
note "ok"
