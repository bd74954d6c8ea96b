#!/usr/bin/env python3
"""Score OCR on the screens of tests/fixtures/gen_dark_ui.sh: the share of each screen's
words found in the lines read on the frames whose time falls inside the screen (duplicates
followed to the frame they repeat), by kind of screen (terminal, ide, ...) and in all.

usage: score_dark_ui.py TRUTH.json EXPORT.json [--min R] [--missing]
Words are compared case-insensitively without punctuation, as score_small_text.py does;
lines marked "noise" count as not read. Exits 1 when recall < --min (default 0)."""
import json
import sys
from collections import Counter

from score_small_text import frames_in, norm


def main():
    truth = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    minimum = float(sys.argv[sys.argv.index("--min") + 1]) if "--min" in sys.argv else 0.0
    total, found, missing = Counter(), Counter(), []
    for s in truth["slides"]:
        got = set()
        for f in frames_in(doc, s["start_s"], s["end_s"]):
            for line in f["ocr"]:
                if not line.get("noise"):
                    got.update(norm(w) for w in line["text"].split())
        for line in s["lines"]:
            for w in line["text"].split():
                total[s["kind"]] += 1
                if norm(w) in got:
                    found[s["kind"]] += 1
                else:
                    missing.append((s["file"], line["color"], w))
    recall = sum(found.values()) / max(1, sum(total.values()))
    kinds = " ".join("%s %d/%d" % (k, found[k], total[k]) for k in total)
    print("recall %.4f (%d/%d) by kind: %s" % (recall, sum(found.values()),
                                               sum(total.values()), kinds))
    if "--missing" in sys.argv and missing:
        print("missing:", missing)
    sys.exit(1 if recall < minimum else 0)


if __name__ == "__main__":
    main()
