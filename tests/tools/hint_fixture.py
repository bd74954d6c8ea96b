#!/usr/bin/env python3
"""Speech-hint fixtures: talks whose speech says the words their slides show.

Usage: hint_fixture.py KIND DIR [--video]

KIND is one of
  devops     flite's slt voice reading sentences full of software terms (Kubernetes, Grafana,
             Postgres...), many of them missing from PocketSphinx's dictionary;
  biology    flite's rms voice on cell biology (mitochondria, ribosome, CRISPR...);
  librivox   the five LibriVox clips of Debian's pocketsphinx-testdata (real read speech), with
             slides carrying the passage's names and rarer words;
  plain      the same LibriVox clips, no slides (hints.txt empty): the control.
Speech is synthesised with flite rather than espeak-ng: PocketSphinx recognises espeak-ng's
formant voice hardly at all (nearly every word wrong), flite's unit-selection voices about
as well as read speech.

Writes into DIR: talk.wav (16 kHz mono), truth.json (score_wer.py's {"clips": [...]}),
hints.txt (every slide's lines, as OCR would read them, one per line) and, with --video,
talk.mp4: each slide shown (large type on white, 1280x720) while its sentence is said.
"""
import json
import os
import subprocess
import sys

LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"

TALKS = {
    "devops": ("slt", [
        (["Kubernetes scheduling", "pods and nodes"],
         "the kubernetes scheduler places every pod on a node"),
        (["Telemetry pipeline", "metrics into Prometheus"],
         "our telemetry pipeline sends metrics to prometheus"),
        (["Grafana dashboards"],
         "grafana draws the dashboards from those metrics"),
        (["Storage: Postgres", "cache: Redis"],
         "we store the events in postgres and cache them in redis"),
        (["Ingress controller: nginx", "load balancer"],
         "the ingress controller is nginx behind a load balancer"),
        (["Every microservice", "has a health endpoint"],
         "every microservice exposes a health endpoint"),
        (["Kubernetes rollouts"],
         "kubernetes restarts a pod when its health endpoint fails"),
        (["Prometheus alerts in Grafana"],
         "prometheus alerts show up in grafana within a minute"),
    ]),
    "biology": ("rms", [
        (["Mitochondria", "the cell's power plant"],
         "mitochondria turn sugar into energy for the cell"),
        (["Ribosomes read messenger RNA"],
         "ribosomes read the messenger rna and build proteins"),
        (["CRISPR gene editing"],
         "crispr lets us cut the genome at a chosen place"),
        (["Chloroplasts and photosynthesis"],
         "chloroplasts capture sunlight through photosynthesis"),
        (["Cytoplasm and organelles"],
         "the organelles float in the cytoplasm"),
        (["Enzymes as catalysts"],
         "enzymes speed up reactions without being used up"),
    ]),
}

LIBRIVOX_SLIDES = [
    ["Sense and Sensibility", "Mr John Dashwood"],
    ["Ill disposed?"],
    ["Cold hearted and selfish"],
    ["A more amiable woman", "more respectable"],
    ["Amiable himself"],
]


def run(*cmd):
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def duration(path):
    return float(subprocess.check_output(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
        stdin=subprocess.DEVNULL))


def librivox_texts():
    text = {}
    for line in open(LIBRIVOX + "/transcription"):
        line = line.strip()
        if not line.endswith(")"):
            continue
        body, name = line[:-1].rsplit("(", 1)
        text[name.strip()] = " ".join(w for w in body.split() if w not in ("<s>", "</s>"))
    names = [l.strip() for l in open(LIBRIVOX + "/fileids") if l.strip()]
    return [(n, text[n]) for n in names]


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("devops", "biology", "librivox", "plain"):
        sys.exit(__doc__)
    kind, out, video = sys.argv[1], sys.argv[2], "--video" in sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    parts = []  # (wav 16 kHz mono, reference text, slide lines)
    if kind in TALKS:
        voice, items = TALKS[kind]
        for i, (slide, sentence) in enumerate(items):
            raw, wav = "%s/raw%d.wav" % (out, i), "%s/s%d.wav" % (out, i)
            run("flite", "-voice", voice, "-t", sentence, "-o", raw)
            run("ffmpeg", "-nostdin", "-v", "error", "-y", "-i", raw, "-ar", "16000", "-ac", "1",
                "-c:a", "pcm_s16le", wav)
            os.unlink(raw)
            parts.append((wav, sentence, slide))
    else:
        for i, (name, text) in enumerate(librivox_texts()):
            parts.append(("%s/%s.wav" % (LIBRIVOX, name), text,
                          LIBRIVOX_SLIDES[i] if kind == "librivox" else []))
    # each part after a pause, the slide shown from the pause before it to the next one's
    pause, t, clips, inputs, filt, mix = 1.3, 0.0, [], [], "", ""
    for i, (wav, text, slide) in enumerate(parts):
        t += pause
        d = duration(wav)
        clips.append({"name": "part%d" % i, "offset_s": round(t, 3), "duration_s": d,
                      "text": text, "slide": slide})
        inputs += ["-i", wav]
        ms = int(round(t * 1000))
        filt += "[%d:a]adelay=%d|%d[a%d];" % (i, ms, ms, i)
        mix += "[a%d]" % i
        t += d
    total = round(t + 1.0, 3)
    run("ffmpeg", "-nostdin", "-v", "error", "-y", *inputs, "-filter_complex",
        "%s%samix=inputs=%d:normalize=0,apad,atrim=0:%.3f[a]" % (filt, mix, len(parts), total),
        "-map", "[a]", "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", out + "/talk.wav")
    json.dump({"clips": clips, "duration_s": total}, open(out + "/truth.json", "w"), indent=1)
    with open(out + "/hints.txt", "w") as f:
        for c in clips:
            for line in c["slide"]:
                f.write(line + "\n")
    if not video:
        return
    # the slides: one drawtext per line, enabled over its part's span
    font = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    draws = []
    for i, c in enumerate(clips):
        start = c["offset_s"] - pause / 2 if i else 0
        end = clips[i + 1]["offset_s"] - pause / 2 if i + 1 < len(clips) else total
        for k, line in enumerate(c["slide"]):
            txt = line.replace("\\", "\\\\").replace(":", "\\:").replace("'", "\u2019")
            draws.append("drawtext=fontfile=%s:text='%s':fontsize=64:fontcolor=black:"
                         "x=(w-text_w)/2:y=220+%d:enable='between(t,%.3f,%.3f)'"
                         % (font, txt, k * 110, start, end - 0.001))
    vf = ",".join(draws) if draws else "null"
    run("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
        "color=white:s=1280x720:r=10:d=%.3f" % total, "-i", out + "/talk.wav", "-vf", vf,
        "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt",
        "yuv420p", "-c:a", "aac", "-b:a", "128k", "-t", "%.3f" % total, out + "/talk.mp4")


if __name__ == "__main__":
    main()
