#!/usr/bin/env bash
# What the transcription-server backend of the stt stage adds over the server's own time.
# Builds a video of a few minutes of speech (the five LibriVox clips of pocketsphinx-testdata,
# 1.5 s of silence before each, the set repeated; PCM audio, tiny black frames), points a
# library at tests/tools/fake_openai.py on loopback (stt.backend = openai), whose every
# transcription request takes a fixed delay (200 ms by default) and returns the clips' real
# transcripts with word timings spread over each clip, and runs `vidtheque add`. Prints the
# stt stage's wall time (its took_s in the export) next to the time the server was busy
# (at least one request in flight, measured by the fake) and the ideal requests x delay /
# concurrency, and the overhead stage / busy - 1 (target <= 5 %). Best of 2 runs.
#
# Usage, from the repository root: bench/stt_server_bench.sh [REPEATS [DELAY_MS]]
# (REPEATS of the clip set, default 8: about 4 minutes of audio).
set -euo pipefail

reps=${1:-8}
delay_ms=${2:-200}
if ! [[ $reps =~ ^[1-9][0-9]*$ && $delay_ms =~ ^[0-9]+$ ]]; then
    echo "stt_server_bench.sh: usage: stt_server_bench.sh [REPEATS [DELAY_MS]]" >&2
    exit 2
fi
if [[ ! -f lib/speech/stt.h || ! -f Makefile ]]; then
    echo "stt_server_bench.sh: run from the repository root" >&2
    exit 2
fi
VIDTHEQUE=${VIDTHEQUE:-$PWD/vidtheque}
data=/usr/share/pocketsphinx/test/data/librivox
if [[ ! -d $data ]]; then
    echo "stt_server_bench.sh: '$data': missing (install pocketsphinx-testdata)" >&2
    exit 2
fi
concurrency=4 # the backend's default (lib/speech/stt.c, STT_SERVER_DEFAULT_CONCURRENCY)

tmp=$(mktemp -d)
fake_pid=
cleanup() {
    if [[ -n $fake_pid ]]; then
        kill "$fake_pid" 2>/dev/null || true
        wait "$fake_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# The audio and its truth: each clip's words spread evenly over the clip.
python3 - "$data" "$reps" "$tmp" <<'EOF'
import json, re, subprocess, sys
data, reps, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = {}
for line in open(data + "/transcription"):
    m = re.match(r"\s*(.*?)\s*\((\S+)\)\s*$", line)
    if m:
        text[m.group(2)] = [w for w in m.group(1).split() if w not in ("<s>", "</s>")]
names = [l.strip() for l in open(data + "/fileids") if l.strip()]
inputs, filt, words, t, k = [], "", [], 0.0, 0
subprocess.check_call(["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                       "anullsrc=r=16000:cl=mono", "-t", "1.5", "-c:a", "pcm_s16le",
                       tmp + "/sil.wav"])
for _ in range(reps):
    for name in names:
        f = "%s/%s.wav" % (data, name)
        dur = float(subprocess.check_output(["ffprobe", "-v", "error", "-show_entries",
                    "format=duration", "-of", "csv=p=0", f]))
        t += 1.5
        ws = text[name]
        for i, w in enumerate(ws):
            words.append([w, round(t + dur * i / len(ws), 3), round(t + dur * (i + 1) / len(ws), 3)])
        t += dur
        inputs += ["-i", tmp + "/sil.wav", "-i", f]
        filt += "[%d:a][%d:a]" % (k, k + 1)
        k += 2
subprocess.check_call(["ffmpeg", "-nostdin", "-v", "error"] + inputs + ["-filter_complex",
                       filt + "concat=n=%d:v=0:a=1" % k, "-ar", "16000", "-ac", "1",
                       "-c:a", "pcm_s16le", tmp + "/talk.wav"])
json.dump({"sources": [{"pcm": tmp + "/talk.wav", "words": words}]}, open(tmp + "/speech.json", "w"))
open(tmp + "/dur", "w").write("%.1f" % t)
EOF
dur=$(cat "$tmp/dur")
ffmpeg -nostdin -v error -f lavfi -i "color=black:s=64x64:r=1:d=$dur" -i "$tmp/talk.wav" \
    -map 0:v -map 1:a -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a pcm_s16le \
    -shortest "$tmp/talk.mkv"

best_stage='' best_busy='' best_ideal='' requests=''
for round in 1 2; do
    rm -f "$tmp/port" "$tmp/stats.json"
    python3 tests/tools/fake_openai.py --port-file "$tmp/port" --speech "$tmp/speech.json" \
        --model whisper-bench --delay-ms "$delay_ms" --stats-file "$tmp/stats.json" \
        2>"$tmp/fake.err" &
    fake_pid=$!
    for _ in $(seq 100); do
        [[ -s $tmp/port ]] && break
        sleep 0.1
    done
    [[ -s $tmp/port ]] || { echo "stt_server_bench.sh: fake server: $(cat "$tmp/fake.err")" >&2; exit 1; }
    lib=$tmp/lib$round
    "$VIDTHEQUE" -q -L "$lib" init
    printf 'stt.backend = openai\nstt.url = http://127.0.0.1:%s\nstt.model = whisper-bench\n' \
        "$(cat "$tmp/port")" >"$lib/config"
    t_add=$(date +%s.%N)
    id=$("$VIDTHEQUE" -q -L "$lib" add "$tmp/talk.mkv")
    "$VIDTHEQUE" -q -L "$lib" export "$id" >"$tmp/doc.json"
    read -r state stage_s words lead < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))
s = [s for s in d["stages"] if s["name"] == "stt"][0]
print(s["state"], s["took_s"], sum(len(c["words"]) for c in d["cues"]),
      f["first_at"] - float(sys.argv[3]))' "$tmp/doc.json" "$tmp/stats.json" "$t_add")
    if [[ $state != done ]]; then
        echo "stt_server_bench.sh: stt $state" >&2
        exit 1
    fi
    read -r busy ideal n < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["busy_s"], s["served_s"] / int(sys.argv[2]), s["requests"])' "$tmp/stats.json" "$concurrency")
    kill "$fake_pid"
    wait "$fake_pid" 2>/dev/null || true
    fake_pid=
    if [[ -z $best_stage ]] || awk -v a="$stage_s" -v b="$best_stage" -v x="$busy" -v y="$best_busy" \
        'BEGIN { exit !(a / x < b / y) }'; then
        best_stage=$stage_s best_busy=$busy best_ideal=$ideal requests=$n best_lead=$lead
    fi
done

printf '%s s of speech (%d x 5 LibriVox clips), %d requests of %d ms + the fake'"'"'s own work, %d in flight\n' \
    "$dur" "$reps" "$requests" "$delay_ms" "$concurrency"
printf '%-44s %8s\n' "time" "s"
printf '%-44s %8.3f\n' "server busy (>= 1 request in flight)" "$best_busy"
printf '%-44s %8.3f\n' "server: sum of request times / concurrency" "$best_ideal"
printf '%-44s %8.3f\n' "stt stage wall (took_s), best of 2" "$best_stage"
printf '%-44s %8.3f\n' "first request, after \`add\` started" "$best_lead"
over=$(awk -v a="$best_stage" -v b="$best_busy" 'BEGIN { printf "%.1f", (a / b - 1) * 100 }')
echo "overhead over the server's busy time: $over % ($words words)"
if awk -v o="$over" 'BEGIN { exit !(o <= 5) }'; then
    echo "overhead target <= 5 %: met"
else
    echo "overhead target <= 5 %: NOT met"
fi
