#!/usr/bin/env python3
"""Score OCR on the slides of tests/fixtures/gen_small_text.sh: the share of each slide's
words found in the lines read on the kept frames (duplicates followed to the frame they
repeat) whose time falls inside the slide, per text size and in all; and the lines read on
the photo-like frames, noise or not.

usage: score_small_text.py TRUTH.json EXPORT.json [--min R] [--noise-free]
Words are compared case-insensitively, without punctuation; lines marked "noise" count as
not read. Exits 1 when recall < --min (default 0), or, with --noise-free, when a photo-like
frame has a line that is not marked noise."""
import json
import re
import sys
from collections import Counter


def norm(w):
    return re.sub(r"[^0-9a-z]", "", w.lower())


def frames_in(doc, start, end):
    by = {f["index"]: f for f in doc["frames"]}
    out = []
    for f in doc["frames"]:
        if start <= f["t_s"] < end:
            while f["state"] == "skipped" and f.get("duplicate_of") is not None:
                f = by[f["duplicate_of"]]
            out.append(f)
    return out


def tally(truth, doc, group):
    """The truth's words counted by group(slide, line): (total, found, missing), missing
    as (slide's file, group, word); a word is found when a line that is not noise on a
    frame inside its slide has it."""
    total, found, missing = Counter(), Counter(), []
    for s in truth["slides"]:
        got = set()
        for f in frames_in(doc, s["start_s"], s["end_s"]):
            for line in f["ocr"]:
                if not line.get("noise"):
                    got.update(norm(w) for w in line["text"].split())
        for line in s["lines"]:
            k = group(s, line)
            for w in line["text"].split():
                total[k] += 1
                if norm(w) in got:
                    found[k] += 1
                else:
                    missing.append((s["file"], k, w))
    return total, found, missing


def main():
    truth = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    minimum = float(sys.argv[sys.argv.index("--min") + 1]) if "--min" in sys.argv else 0.0
    total, found, missing = tally(truth, doc, lambda s, line: line["size"])
    recall = sum(found.values()) / max(1, sum(total.values()))
    sizes = " ".join("%dpx %d/%d" % (k, found[k], total[k]) for k in sorted(total))
    print("recall %.4f (%d/%d) by size: %s" % (recall, sum(found.values()), sum(total.values()),
                                               sizes))
    if missing:
        print("missing:", missing[:30])
    noise = kept = 0
    for p in truth.get("photos", []):
        for f in frames_in(doc, p["start_s"], p["end_s"]):
            for line in f["ocr"]:
                if line.get("noise"):
                    noise += 1
                else:
                    kept += 1
                    print("photo line not noise: %s %r conf %.2f" % (p["source"], line["text"],
                                                                    line["conf"]))
    print("photo lines: %d noise, %d not noise" % (noise, kept))
    bad = recall < minimum or ("--noise-free" in sys.argv and kept > 0)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
