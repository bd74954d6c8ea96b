#!/usr/bin/env python3
"""Score OCR on a generated talk: the share of each slide's words found in the OCR lines
of the kept frame that stands for the shot where the slide is shown.

usage: score_ocr.py TRUTH.json EXPORT.json [--min 0.98]
TRUTH is written by tests/fixtures/gen_talk.sh, EXPORT by `vidtheque export`.
Words are compared case-insensitively, without punctuation. Exits 1 below --min."""
import json
import re
import sys


def norm(w):
    return re.sub(r"[^0-9a-z]", "", w.lower())


def main():
    truth = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    minimum = float(sys.argv[sys.argv.index("--min") + 1]) if "--min" in sys.argv else 0.98
    frames = {f["index"]: f for f in doc["frames"]}
    found = total = 0
    missing = []
    for slide in truth["slides"]:
        for shot_idx in slide["shown"]:
            ts = truth["shots"][shot_idx]
            mid = (ts["start_s"] + ts["end_s"]) / 2
            # our shot containing the middle of the true shot, and its frame
            ours = [s for s in doc["shots"] if s["start_s"] <= mid < s["end_s"] + 1e-6]
            cand = [f for f in doc["frames"] if ours and f["shot"] == ours[0]["index"]]
            text = set()
            for f in cand:
                while f["state"] == "skipped" and f["duplicate_of"] is not None:
                    f = frames[f["duplicate_of"]]
                for line in f["ocr"]:
                    text.update(norm(w) for w in line["text"].split())
            for w in slide["words"]:
                total += 1
                if norm(w) in text:
                    found += 1
                else:
                    missing.append((slide["id"], w))
    share = found / total if total else 0
    print(f"OCR: {found}/{total} slide words found ({share:.1%}); missing: {missing[:20]}")
    sys.exit(0 if share >= minimum else 1)


if __name__ == "__main__":
    main()
