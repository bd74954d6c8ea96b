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

from score_small_text import tally


def kinds_of(counts):
    """Counts by (kind, colour) summed by kind."""
    out = Counter()
    for (kind, _), n in counts.items():
        out[kind] += n
    return out


def main():
    truth = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    minimum = float(sys.argv[sys.argv.index("--min") + 1]) if "--min" in sys.argv else 0.0
    total, found, missing = tally(truth, doc, lambda s, line: (s["kind"], line["color"]))
    total, found = kinds_of(total), kinds_of(found)
    recall = sum(found.values()) / max(1, sum(total.values()))
    kinds = " ".join("%s %d/%d" % (k, found[k], total[k]) for k in total)
    print("recall %.4f (%d/%d) by kind: %s" % (recall, sum(found.values()),
                                               sum(total.values()), kinds))
    if "--missing" in sys.argv and missing:
        print("missing:", missing)
    sys.exit(1 if recall < minimum else 0)


if __name__ == "__main__":
    main()
