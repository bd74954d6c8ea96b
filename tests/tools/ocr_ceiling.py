#!/usr/bin/env python3
"""The OCR ceiling of a real-footage truth set: how many of its on-screen words the ocr
stage reads when it is handed the best frames there are, whatever the keyframe stage would
choose. Every text span of every truth is read from three of its own frames (its third,
its middle and its last), each made a one-second still video and put through the whole
pipeline (`vidtheque add`, then `export`); a word counts when any of them reads it, with
score_realcuts.py's rule (lower case, letters and digits only). What the keyframe stage
reads (score_realcuts.py) against this says how much is lost to the choice of frames and
how much to the engine.

    ocr_ceiling.py VIDTHEQUE WORKDIR TRUTH.json...

Prints one line per clip with text (read, searchable: in lines not judged noise, words not
read) and the total. WORKDIR holds the stills and a scratch library.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_realcuts import norm  # noqa: E402


def still(clip, n, out):
    """Frame n of clip as a one-second still video in out; its path."""
    base = os.path.join(out, "%s-%d" % (os.path.basename(clip), n))
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", clip, "-vf", "select=eq(n\\,%d)" % n,
                    "-frames:v", "1", base + ".png"], check=True)
    # near lossless (crf 4): at the default quality small type (a GUI's 6 px line numbers)
    # lost what the clip's own frames show
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-loop", "1", "-i", base + ".png", "-t", "1",
                    "-r", "10", "-c:v", "libx264", "-crf", "4", "-pix_fmt", "yuv420p",
                    base + ".mp4"], check=True)
    return base + ".mp4"


def lines_of(vt, lib, path):
    """The OCR lines the pipeline stores for the still video at path."""
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    vid = subprocess.run([vt, "-q", "-L", lib, "add", path], capture_output=True, text=True,
                         env=env, check=True).stdout.strip()
    doc = json.loads(subprocess.run([vt, "-q", "-L", lib, "export", vid], capture_output=True,
                                    text=True, check=True).stdout)
    return [line for f in doc.get("frames", []) for line in (f.get("ocr") or [])]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    vt, out, truths = sys.argv[1], sys.argv[2], sys.argv[3:]
    lib = os.path.join(out, "lib")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["rm", "-rf", lib], check=True)
    subprocess.run([vt, "-q", "-L", lib, "init"], check=True)
    read = {}
    total = found = found_s = 0
    for t in truths:
        d = json.load(open(t))
        clip = d["clip"] if d["clip"].startswith("/") else os.path.join(os.path.dirname(t), d["clip"])
        n_words = n_found = n_found_s = 0
        missing = []
        for span in d.get("text", []):
            a, b = span["start"], span["end"]
            seen, seen_s = set(), set()
            for n in sorted({a + (b - a) // 3, (a + b) // 2, b}):
                if (clip, n) not in read:
                    read[(clip, n)] = lines_of(vt, lib, still(clip, n, out))
                for line in read[(clip, n)]:
                    words = {norm(w) for w in line["text"].split()}
                    seen |= words
                    if not line.get("noise"):
                        seen_s |= words
            for w in span["words"]:
                n_words += 1
                n_found += norm(w) in seen
                n_found_s += norm(w) in seen_s
                if norm(w) not in seen:
                    missing.append(w)
        if n_words:
            print("%-22s ceiling %3d/%3d (searchable %3d)%s" %
                  (os.path.basename(clip), n_found, n_words, n_found_s,
                   "  not read: " + " ".join(missing) if missing else ""))
        total += n_words
        found += n_found
        found_s += n_found_s
    if total:
        print("OCR ceiling: %d/%d = %.3f; searchable %d/%d = %.3f" %
              (found, total, found / total, found_s, total, found_s / total))


if __name__ == "__main__":
    main()
