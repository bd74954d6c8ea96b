#!/usr/bin/env bash
# Does the Silero VAD pay for itself in the stt stage? Word error rate and time of speech
# recognition with the stage's energy segmenter against the same stage with Silero finding
# the speech (tests/data/silero-vad; `stt.vad silero`: probabilities window by window inside
# the streaming segmenter, cut by upstream Silero's rules, then into segments by the stage's
# own; tests/tools/sttdump --vad), in one run. Fixtures:
#   clean        the five LibriVox clips of pocketsphinx-testdata after 1.3 s pauses
#                (tests/tools/hint_fixture.py plain), 32 s;
#   white10      the same mixed with white noise (ffmpeg's anoisesrc) at 10 dB SNR (the
#                speech's RMS over its clips against the noise's);
#   pink10       the same with pink noise at 10 dB;
#   white20, pink20  the same with white or pink noise at 20 dB;
#   pink0        the same with pink noise at 0 dB;
#   sounds       the clean talk with a sound in each pause (0.8 s at the speech's level, a
#                burst of pink noise or a chord, alternately): what an energy detector takes
#                for speech.
# Each row: WER with each segmenter and the ratio silero/energy, the recognition time
# (best of REPEATS runs, the VAD's own time included, model loading not) and its ratio, the
# same for CPU time (all threads: what neighbours on shared cores disturb least), and the
# VAD network's time alone (a separate pass over the same audio).
#
# Usage, from the repository root: bench/vad_bench.sh [REPEATS]    (REPEATS defaults to 2)
# VAD_BENCH_SEED sets the noise's seed (7), VAD_BENCH_KEEP=1 keeps the files.
set -euo pipefail

reps=${1:-2}
if ! [[ $reps =~ ^[1-9][0-9]*$ ]]; then
    echo "vad_bench.sh: '$reps': bad repeat count" >&2
    exit 2
fi
if [[ ! -f lib/speech/vad.h || ! -f Makefile ]]; then
    echo "vad_bench.sh: run from the repository root" >&2
    exit 2
fi
for tool in ffmpeg pkg-config cc make python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "vad_bench.sh: '$tool': not found (scripts/install-deps.sh installs it)" >&2
        exit 2
    fi
done
model=tests/data/silero-vad/for-tests-silero-v6.2.0-ggml.bin
tmp=$(mktemp -d)
[[ -n ${VAD_BENCH_KEEP:-} ]] || trap 'rm -rf "$tmp"' EXIT

if ! make -s build/rel/libvidtheque.a >"$tmp/make.log" 2>&1; then
    cat "$tmp/make.log" >&2
    echo "vad_bench.sh: cannot build build/rel/libvidtheque.a" >&2
    exit 1
fi
read -r -a pkgs <<<"$(sed -n 's/^PKGS = //p' Makefile)"
read -r -a libs <<<"$(pkg-config --cflags --libs "${pkgs[@]}") $(sed -n 's/^FLITE_LIBS = //p' Makefile)"
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Ilib -Isrc -pthread -o "$tmp/sttdump" tests/tools/sttdump.c \
    build/rel/libvidtheque.a "${libs[@]}" -lm

python3 tests/tools/hint_fixture.py plain "$tmp/clean" >/dev/null
dur=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["duration_s"])' "$tmp/clean/truth.json")
# mix NAME COLOR SNR_DB: the clean talk plus noise at that SNR into $tmp/NAME/
mix() {
    local name=$1 color=$2 snr=$3
    mkdir -p "$tmp/$name"
    cp "$tmp/clean/truth.json" "$tmp/$name/"
    ffmpeg -nostdin -v error -y -f lavfi -i "anoisesrc=r=16000:c=$color:a=0.5:seed=${VAD_BENCH_SEED:-7}:d=$dur" \
        -ac 1 -c:a pcm_s16le "$tmp/$name/noise.wav"
    python3 - "$tmp/clean/talk.wav" "$tmp/$name/noise.wav" "$tmp/clean/truth.json" "$snr" \
        "$tmp/$name/talk.wav" <<'EOF'
import array, json, math, sys, wave
def read(p):
    w = wave.open(p)
    a = array.array("h", w.readframes(w.getnframes()))
    return a
talk, noise = read(sys.argv[1]), read(sys.argv[2])
truth, snr = json.load(open(sys.argv[3])), float(sys.argv[4])
sp = [0.0, 0]
for c in truth["clips"]:
    for i in range(int(c["offset_s"] * 16000), int((c["offset_s"] + c["duration_s"]) * 16000)):
        if i < len(talk):
            sp[0] += talk[i] * talk[i]
            sp[1] += 1
speech_rms = math.sqrt(sp[0] / sp[1])
noise_rms = math.sqrt(sum(x * x for x in noise) / len(noise))
g = speech_rms / (10 ** (snr / 20)) / noise_rms
out = array.array("h", (max(-32768, min(32767, int(round(talk[i] + g * (noise[i] if i < len(noise) else 0)))))
                        for i in range(len(talk))))
w = wave.open(sys.argv[5], "wb")
w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000); w.writeframes(out.tobytes())
EOF
}
mix white10 white 10
mix pink10 pink 10
mix white20 white 20
mix pink20 pink 20
mix pink0 pink 0
# sounds in the pauses: before each clip but the first, 0.8 s at the speech's level, a burst
# of pink noise (a rustle, applause) or a chord (music), alternately
python3 - "$tmp/clean/talk.wav" "$tmp/pink10/noise.wav" "$tmp/clean/truth.json" "$tmp/sounds" <<'EOF'
import array, json, math, os, sys, wave
def read(p):
    w = wave.open(p)
    return array.array("h", w.readframes(w.getnframes()))
talk, noise, truth, out = read(sys.argv[1]), read(sys.argv[2]), json.load(open(sys.argv[3])), sys.argv[4]
os.makedirs(out, exist_ok=True)
json.dump(truth, open(out + "/truth.json", "w"))
def rms(a):
    return math.sqrt(sum(x * x for x in a) / len(a))
c0 = truth["clips"][0]
speech_rms = rms(talk[int(c0["offset_s"] * 16000):int((c0["offset_s"] + c0["duration_s"]) * 16000)])
noise_g = speech_rms / rms(noise)
mixed = array.array("h", talk)
for k, c in enumerate(truth["clips"][1:]):
    start = int((c["offset_s"] - 1.05) * 16000)
    for i in range(int(0.8 * 16000)):
        t = i / 16000.0
        env = min(1.0, i / 800.0, (12800 - i) / 800.0)
        if k % 2 == 0:
            v = noise_g * noise[start + i]
        else:
            v = speech_rms * math.sqrt(2) / 3 * sum(math.sin(2 * math.pi * f * t) for f in (440, 554.37, 659.25))
        mixed[start + i] = max(-32768, min(32767, int(round(mixed[start + i] + env * v))))
w = wave.open(out + "/talk.wav", "wb")
w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000); w.writeframes(mixed.tobytes())
EOF

wer() { # TRUTH TRANSCRIPT (words outside the clips fail score_wer's check: they count here)
    { python3 tests/tools/score_wer.py "$1" "$2" --slack-s 1.0 || true; } |
        sed -n 's/.*wer_ours=\([0-9.]*\).*/\1/p'
}
field() { # NAME FILE
    sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" "$2"
}
ratio() {
    python3 -c 'import sys; a, b = map(float, sys.argv[1:]); print("%.3f" % (b / a) if a else "-")' "$1" "$2"
}
min() {
    python3 -c 'import sys; print(min(map(float, sys.argv[1:])))' "$@"
}

printf '%-8s %9s %9s %7s   %8s %8s %7s   %8s %8s %7s  %7s\n' fixture "WER en." "WER sil." \
    ratio "time en." "time sil." ratio "cpu en." "cpu sil." ratio "vad_s"
for f in clean sounds white20 pink20 white10 pink10 pink0; do
    te=() ts=() ce=() cs=()
    # rounds alternate the two, so a neighbour's load hits both alike
    for ((r = 0; r < reps; r++)); do
        "$tmp/sttdump" -j 2 "$tmp/$f/talk.wav" >"$tmp/$f/energy.json" 2>"$tmp/$f/energy.err" || true
        "$tmp/sttdump" -j 2 --vad "$model" "$tmp/$f/talk.wav" >"$tmp/$f/silero.json" \
            2>"$tmp/$f/silero.err" || true
        te+=("$(field recognise_s "$tmp/$f/energy.err")")
        ts+=("$(field recognise_s "$tmp/$f/silero.err")")
        ce+=("$(field recognise_cpu_s "$tmp/$f/energy.err")")
        cs+=("$(field recognise_cpu_s "$tmp/$f/silero.err")")
    done
    we=$(wer "$tmp/$f/truth.json" "$tmp/$f/energy.json")
    ws=$(wer "$tmp/$f/truth.json" "$tmp/$f/silero.json")
    tbe=$(min "${te[@]}")
    tbs=$(min "${ts[@]}")
    cbe=$(min "${ce[@]}")
    cbs=$(min "${cs[@]}")
    printf '%-8s %8.2f%% %8.2f%% %7s   %7.2fs %8.2fs %7s   %7.2fs %8.2fs %7s  %6.3fs\n' "$f" \
        "$we" "$ws" "$(ratio "$we" "$ws")" "$tbe" "$tbs" "$(ratio "$tbe" "$tbs")" \
        "$cbe" "$cbs" "$(ratio "$cbe" "$cbs")" "$(field vad_s "$tmp/$f/silero.err")"
done
echo "(audio ${dur} s per fixture; time: recognition on 2 threads, wall and CPU, best of $reps; kept in $tmp when VAD_BENCH_KEEP is set)"
