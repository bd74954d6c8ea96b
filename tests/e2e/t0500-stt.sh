#!/usr/bin/env bash
# Speech recognition on real speech: the five LibriVox clips of Debian's pocketsphinx-testdata
# placed at known offsets (uneven pauses between them) in a generated video with AAC 44.1 kHz
# stereo audio. The stt stage (tests/tools/sttdump: vt_audio_load + vt_stt_run, until the
# pipeline runs the stage) must have a word error rate no worse than pocketsphinx_continuous
# with the same model on the same audio (extracted as 16 kHz mono WAV), and every word must lie
# inside its clip's true span (0.3 s slack). Scoring is tests/tools/score_wer.py, which takes
# the truth and any transcript in the export's shape, so `vidtheque export` can replace
# sttdump later. Also: a video without audio and one with silent audio are skipped.
. "$(dirname "$0")/lib.sh"

data=/usr/share/pocketsphinx/test/data/librivox
model=${VIDTHEQUE_PS_MODEL_DIR:-/usr/share/pocketsphinx/model/en-us}
[[ -f $data/transcription ]] || fail "'$data': missing (install pocketsphinx-testdata)"
command -v pocketsphinx_continuous > /dev/null || fail "pocketsphinx_continuous: not found"

# sttdump, linked against the library next to the binary under test (release or sanitized).
build_tool sttdump

# The truth: clips in the order of `fileids`, each after a pause of its own length.
pauses=(1.7 2.3 1.1 3.0 1.4)
python3 - "$data" "$T/truth.json" "${pauses[@]}" << 'EOF'
import json, re, subprocess, sys
data, out, pauses = sys.argv[1], sys.argv[2], [float(p) for p in sys.argv[3:]]
text = {}
for line in open(data + "/transcription"):
    m = re.match(r"\s*(.*?)\s*\((\S+)\)\s*$", line)
    if m:
        text[m.group(2)] = " ".join(w for w in m.group(1).split() if w not in ("<s>", "</s>"))
names = [l.strip() for l in open(data + "/fileids") if l.strip()]
clips, t = [], 0.0
for name, pause in zip(names, pauses):
    t += pause
    dur = float(subprocess.check_output(["ffprobe", "-v", "error", "-show_entries",
        "format=duration", "-of", "csv=p=0", "%s/%s.wav" % (data, name)]))
    clips.append({"name": name, "file": "%s/%s.wav" % (data, name), "offset_s": round(t, 3),
                  "duration_s": dur, "text": text[name]})
    t += dur
json.dump({"clips": clips, "duration_s": t + 1.0}, open(out, "w"), indent=1)
EOF

# The video: each clip delayed to its offset, mixed, as AAC 44.1 kHz stereo under a colour
# source (upsampled and made stereo so that the stage's own resampling and downmix are tested).
inputs=() filter="" mix=""
i=0
while read -r file offset_ms; do
  inputs+=(-i "$file")
  filter+="[$((i + 1)):a]adelay=${offset_ms}|${offset_ms},aresample=44100[a$i];"
  mix+="[a$i]"
  i=$((i + 1))
done < <(python3 -c 'import json,sys
for c in json.load(open(sys.argv[1]))["clips"]:
    print(c["file"], int(round(c["offset_s"] * 1000)))' "$T/truth.json")
dur=$(json "$T/truth.json" 'd["duration_s"]')
stereo=aformat=channel_layouts=stereo
ffmpeg -nostdin -v error -y -f lavfi -i "color=gray:s=320x240:d=$dur" "${inputs[@]}" \
  -filter_complex "${filter}${mix}amix=inputs=$i:normalize=0,apad,atrim=0:$dur,${stereo}[a]" \
  -map 0:v -map '[a]' -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -b:a 128k \
  -t "$dur" "$T/talk.mp4" || fail "cannot make the video"
ffmpeg -nostdin -v error -y -i "$T/talk.mp4" -vn -ac 1 -ar 16000 -c:a pcm_s16le "$T/talk.wav" ||
  fail "cannot extract the audio"

"$T/sttdump" "$T/talk.mp4" > "$T/ours.json" 2> "$T/ours.err" ||
  fail "sttdump: $(cat "$T/ours.err")"
note "$(grep '^timing:' "$T/ours.err")"
note "model: $(json "$T/ours.json" 'd["model"]')"
want="pocketsphinx 5prealpha, hmm en-us, lm en-us.lm.bin, dict cmudict-en-us.dict; vad energy"
[[ $(json "$T/ours.json" 'd["model"]') == "$want" ]] || fail "unexpected model string"
pocketsphinx_continuous -infile "$T/talk.wav" -hmm "$model/en-us" -lm "$model/en-us.lm.bin" \
  -dict "$model/cmudict-en-us.dict" -time yes > "$T/theirs.txt" 2> /dev/null ||
  fail "pocketsphinx_continuous failed"

# Ours may not be worse than the baseline; the 0.5 percentage points of slack are less than one
# word in the 71 of the set, so any extra error fails while a tie in rounding does not.
python3 "$ROOT/tests/tools/score_wer.py" "$T/truth.json" "$T/ours.json" \
  --baseline "$T/theirs.txt" --epsilon 0.5 --slack-s 0.3 > "$T/score.txt" ||
  { cat "$T/score.txt"; fail "word error rate or timings"; }
sed 's/^/# /' "$T/score.txt"

# Cues: at most two lines, in time order, each no longer than about 7 s.
python3 - "$T/ours.json" << 'EOF' || fail "cue shape"
import json, sys
cues = json.load(open(sys.argv[1]))["cues"]
assert cues, "no cues"
prev = -1
for c in cues:
    assert c["text"].count("\n") <= 1, c
    assert all(len(l) <= 42 for l in c["text"].split("\n")) or len(c["words"]) == 1, c
    assert c["end_s"] - c["start_s"] <= 7.0 + 1e-6 or len(c["words"]) == 1, c
    assert c["start_s"] >= prev, c
    assert c["text"].replace("\n", " ") == " ".join(w["text"] for w in c["words"]), c
    prev = c["start_s"]
EOF

# No audio stream, and silent audio: skipped (exit 3 of sttdump) with the reason.
ffmpeg -nostdin -v error -y -f lavfi -i color=black:s=160x120:d=2 -c:v libx264 -pix_fmt yuv420p \
  "$T/mute.mp4"
expect_exit 3 "$T/sttdump" "$T/mute.mp4"
grep -q "no audio stream" "$T/err" || fail "no reason for the missing audio: $(cat "$T/err")"
ffmpeg -nostdin -v error -y -f lavfi -i color=black:s=160x120:d=3 -f lavfi \
  -i anullsrc=r=48000:cl=stereo -c:v libx264 -pix_fmt yuv420p -c:a aac -shortest "$T/silent.mp4"
expect_exit 3 "$T/sttdump" "$T/silent.mp4"
grep -q "silence only" "$T/err" || fail "no reason for the silent audio: $(cat "$T/err")"
echo "all good"
