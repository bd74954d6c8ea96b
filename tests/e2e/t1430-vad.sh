#!/usr/bin/env bash
# Voice activity detection in the stt stage (stt.vad). A generated talk with known truth:
# five sentences (flite's slt voice: PocketSphinx hears espeak-ng's formant voice hardly
# at all) and, in each pause between them, 0.35 s after one sentence and before the next, a
# sound as loud as the speech that is not speech: noise with the loudness of two other
# sentences, 10 ms by 10 ms (a murmur: speech-modulated noise), a chord (ffmpeg's aevalsrc)
# and a click train.
# The talk is indexed with stt.vad energy and with stt.vad silero (the model from
# tests/data, as stt.vad_model): provenance names the segmenter that ran, and with either
# every sentence is heard where it is said. The energy detector takes the sounds for speech
# and the decoder writes words in the murmurs (checked, or the fixture could not tell the
# two apart); with Silero no word lies in a sound or anywhere outside the sentences, so a
# stage that ignored stt.vad fails here. Then the failures: a model that is missing or not a
# model fails the stage with one line saying what to set and leaves no cue, and a bad
# stt.vad is refused by `config set` and, written into the file by hand, fails the stage.
. "$(dirname "$0")/lib.sh"

command -v flite > /dev/null || fail "flite: not found (scripts/install-deps.sh installs it)"
MODEL=$DATA/silero-vad/for-tests-silero-v6.2.0-ggml.bin
FX=$T/fx
mkdir -p "$FX"

# ---- the fixture ----
sentences=(
  "the weather today is sunny with a light breeze from the west"
  "we will meet at the station at nine in the morning"
  "please bring the documents and a copy of the report"
  "the library opens at ten and closes at six"
  "thank you all for coming to the meeting this afternoon"
)
for i in "${!sentences[@]}"; do
  flite -voice slt -t "${sentences[$i]}" -o "$FX/raw$i.wav" || fail "flite"
  ffmpeg -nostdin -v error -y -i "$FX/raw$i.wav" -ac 1 -ar 16000 -c:a pcm_s16le "$FX/s$i.wav" ||
    fail "ffmpeg: sentence $i"
done
snd() { # NAME LAVFI: 1.4 s of a sound at 16 kHz
  ffmpeg -nostdin -v error -y -f lavfi -i "$2" -t 1.4 -ac 1 -ar 16000 -c:a pcm_s16le "$FX/$1.wav" ||
    fail "ffmpeg: sound $1"
}
snd chord "aevalsrc=0.3*sin(2*PI*440*t)+0.3*sin(2*PI*554.37*t)+0.3*sin(2*PI*659.25*t):s=16000:d=1.4"
snd clicks "aevalsrc=if(lt(mod(t\,0.07)\,0.003)\,0.9*sin(2*PI*3000*t)\,0):s=16000:d=1.4"
# and two sentences turned into noise that keeps their loudness, 10 ms by 10 ms (the
# "speech-modulated noise" of hearing research: a murmur with a voice's rhythm, no voice)
flite -voice slt -t "a crowd is talking somewhere far behind the door" -o "$FX/rawm0.wav" &&
  flite -voice slt -t "people are walking past the window in the rain" -o "$FX/rawm1.wav" ||
  fail "flite"
for i in 0 1; do
  ffmpeg -nostdin -v error -y -i "$FX/rawm$i.wav" -ac 1 -ar 16000 -c:a pcm_s16le "$FX/m$i.wav" ||
    fail "ffmpeg: murmur $i"
done

# speech, a pause of 0.9 s, a sound, 0.9 s, the next sentence...; each sound at the RMS of the
# speech before it, with 20 ms fades; truth.json: the spans of speech and of the sounds
python3 - "$FX" << 'EOF' || fail "cannot mix the fixture"
import array, json, math, random, sys, wave
fx, rate = sys.argv[1], 16000
def read(name):
    w = wave.open("%s/%s.wav" % (fx, name))
    return array.array("h", w.readframes(w.getnframes()))
def rms(a):
    return math.sqrt(sum(x * x for x in a) / len(a))
def murmur(name, seed):
    r, v = random.Random(seed), read(name)
    out = array.array("h")
    for i in range(0, len(v), 160):
        level = rms(v[i:i + 160])
        out.extend(max(-32768, min(32767, int(level * r.gauss(0, 1)))) for _ in v[i:i + 160])
    return out
gap, fade = [0] * int(0.35 * rate), int(0.02 * rate)
out, truth = array.array("h", [0] * rate), {"speech": [], "sounds": []}
sounds = [murmur("m0", 1), read("chord"), murmur("m1", 2), read("clicks"), None]
for i, sound in enumerate(sounds):
    s = read("s%d" % i)
    truth["speech"].append([len(out) / rate, (len(out) + len(s)) / rate])
    out.extend(s)
    if sound is None:
        break
    out.extend(gap)
    g = rms(s) / rms(sound)
    truth["sounds"].append([len(out) / rate, (len(out) + len(sound)) / rate])
    for k, x in enumerate(sound):
        env = min(1.0, k / fade, (len(sound) - 1 - k) / fade)
        out.append(max(-32768, min(32767, int(round(g * env * x)))))
    out.extend(gap)
out.extend([0] * rate)
w = wave.open(fx + "/talk.wav", "wb")
w.setnchannels(1); w.setsampwidth(2); w.setframerate(rate); w.writeframes(out.tobytes())
truth["duration_s"] = len(out) / rate
json.dump(truth, open(fx + "/truth.json", "w"), indent=1)
EOF
dur=$(json "$FX/truth.json" 'd["duration_s"]')
ffmpeg -nostdin -v error -y -f lavfi -i "color=gray:s=320x240:d=$dur" -i "$FX/talk.wav" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -b:a 128k -shortest "$FX/talk.mp4" ||
  fail "cannot make the video"

# ---- indexing with each segmenter ----
index() { # NAME VAD: a library NAME with stt.vad VAD; its document in NAME.json
  local lib=$T/$1
  expect_exit 0 "$VIDTHEQUE" -q -L "$lib" init
  expect_exit 0 "$VIDTHEQUE" -q -L "$lib" config set stt.vad "$2"
  if [[ $2 == silero ]]; then
    expect_exit 0 "$VIDTHEQUE" -q -L "$lib" config set stt.vad_model "$MODEL"
  fi
  expect_exit 0 "$VIDTHEQUE" -q -L "$lib" add --stt=recognize "$FX/talk.mp4"
  local id; id=$(cat "$T/out")
  expect_exit 0 "$VIDTHEQUE" -q -L "$lib" export "$id" --format json
  cp "$T/out" "$lib.json"
}
model() { json "$1" "[s['model'] for s in d['stages'] if s['name'] == 'stt'][0]"; }

note "stt.vad energy"
index energy energy
note "stt.vad silero"
index silero silero
note "energy: $(model "$T/energy.json")"
note "silero: $(model "$T/silero.json")"
[[ $(model "$T/energy.json") == pocketsphinx*"; vad energy" ]] ||
  fail "energy's provenance: $(model "$T/energy.json")"
[[ $(model "$T/silero.json") == pocketsphinx*"; vad silero-16k 6.2.0" ]] ||
  fail "silero's provenance: $(model "$T/silero.json")"

# where the words are: every sentence heard, within its span (0.3 s of slack, the pads);
# with energy, words in the sounds; with Silero, none
python3 - "$FX/truth.json" "$T/energy.json" "$T/silero.json" << 'EOF' || fail "words in the wrong places"
import json, sys
truth = json.load(open(sys.argv[1]))
def words(p):
    return [w for c in json.load(open(p))["cues"] for w in c["words"]]
def inside(w, span, slack):
    return w["start_s"] >= span[0] - slack and w["end_s"] <= span[1] + slack
def overlaps(w, span):
    return w["start_s"] < span[1] and w["end_s"] > span[0]
bad = False
for name, p in (("energy", sys.argv[2]), ("silero", sys.argv[3])):
    ws = words(p)
    print("# %s: %s" % (name, " ".join("%s@%.2f-%.2f" % (w["text"], w["start_s"], w["end_s"]) for w in ws)))
    for k, span in enumerate(truth["speech"]):
        n = sum(inside(w, span, 0.3) for w in ws)
        if n < 3:
            print("%s: sentence %d (%.2f-%.2f s) has %d word(s)" % (name, k, span[0], span[1], n))
            bad = True
    in_sounds = [(w["text"], k) for w in ws for k, s in enumerate(truth["sounds"]) if overlaps(w, s)]
    print("# %s: words in the sounds: %s" % (name, in_sounds))
    if name == "energy" and not in_sounds:
        print("energy: no word in the sounds: the fixture no longer tells the segmenters apart")
        bad = True
    if name == "silero" and in_sounds:
        print("silero: words in the sounds: %s" % in_sounds)
        bad = True
    stray = [w["text"] for w in ws
             if not any(inside(w, s, 0.3) for s in truth["speech"]) and not any(overlaps(w, s) for s in truth["sounds"])]
    if name == "silero" and stray:
        print("silero: words outside the speech: %s" % stray)
        bad = True
sys.exit(1 if bad else 0)
EOF

# ---- failures ----
# a model that is not there: the stage fails with one line saying what to set, and no cue
expect_exit 0 vt init
expect_exit 0 vt config set stt.vad silero
expect_exit 0 vt config set stt.vad_model "$T/nothing.bin"
expect_exit 1 vt add --stt=recognize "$FX/talk.mp4"
one_line_err
id=$(cat "$T/out")
grep -qF "stt failed: stt.vad is silero but '$T/nothing.bin' does not exist (set stt.vad_model" "$T/err" ||
  fail "missing model: $(cat "$T/err")"
expect_exit 0 vt export "$id" --format json
[[ $(json "$T/out" 'len(d["cues"])') == 0 ]] || fail "cues without the VAD asked for"
# a file that is not a model (cut short)
head -c 5000 "$MODEL" > "$T/short.bin"
expect_exit 0 vt config set stt.vad_model "$T/short.bin"
expect_exit 1 vt redo "$id" --stage stt
grep -qF "stt.vad_model: '$T/short.bin': " "$T/err" || fail "short model: $(cat "$T/err")"
# a folder
expect_exit 0 vt config set stt.vad_model "$FX"
expect_exit 1 vt redo "$id" --stage stt
grep -qF "stt.vad_model: '$FX': not a regular file" "$T/err" || fail "folder as model: $(cat "$T/err")"
# bad values: refused by config set, and the stage fails when the file says one
expect_exit 2 vt config set stt.vad webrtc
grep -q "stt.vad 'webrtc' is not energy or silero" "$T/err" || fail "bad value: $(cat "$T/err")"
expect_exit 2 vt config set stt.vad_model ""
echo "stt.vad = Silero" >> "$LIB/config"
expect_exit 1 vt redo "$id" --stage stt
grep -q "stt.vad 'Silero' is not energy or silero" "$T/err" || fail "bad value in the file: $(cat "$T/err")"
echo "all good"
