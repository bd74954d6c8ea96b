#!/usr/bin/env python3
"""Word error rate and word timings of a transcript against clips placed at known offsets.

Usage: score_wer.py TRUTH TRANSCRIPT [--baseline FILE] [--epsilon PP] [--slack-s S]
                    [--max-wer PCT]

TRUTH is JSON: {"clips": [{"name", "offset_s", "duration_s", "text"}]}, each clip's speech
lying inside [offset_s, offset_s + duration_s] of the audio.

TRANSCRIPT (and the optional baseline) is either a JSON transcript in the export's shape,
{"cues": [{"words": [{"text", "start_s", "end_s"}]}]} (sttdump's output, or
`vidtheque export`'s, whose cues[] have the same form), or the output of
`pocketsphinx_continuous -time yes` (lines "WORD START END PROB"; fillers and
"(2)"-style alternate-pronunciation suffixes are dropped here).

Every word is assigned to the clip whose span holds its midpoint; the WER of a clip is the
word-level edit distance between the reference and its words over the reference length, the
overall WER sums edits (words outside every clip count as insertions) over all reference
words. Text is compared in lower case without punctuation, with the abbreviations the
language model writes (mr, mrs, dr) spelled out as reference transcripts do.

Checks, each failing the exit status:
  - every transcript word lies inside its clip's span widened by --slack-s (default 0.3);
  - with --baseline, the transcript's overall WER is at most the baseline's plus --epsilon
    percentage points (default 0.5);
  - with --max-wer, the overall WER is at most that many percent.
"""
import argparse
import json
import re
import sys

SPELLED = {"mr": "mister", "mrs": "missus", "dr": "doctor", "st": "saint"}


def norm(word):
    w = re.sub(r"\(\d+\)$", "", word.strip().lower())
    w = re.sub(r"[^a-z0-9']", "", w)
    return SPELLED.get(w, w)


def is_filler(word):
    return not word or word[0] in "<[+"


def load_words(path):
    """[(text, start_s, end_s)] in time order, fillers dropped."""
    with open(path, encoding="utf-8") as f:
        data = f.read()
    words = []
    if data.lstrip().startswith("{"):
        doc = json.loads(data)
        for cue in doc.get("cues", []):
            for w in cue.get("words", []):
                words.append((w["text"], float(w["start_s"]), float(w["end_s"])))
    else:
        for line in data.splitlines():
            parts = line.split()
            if len(parts) != 4:
                continue  # hypothesis lines and anything else
            try:
                start, end = float(parts[1]), float(parts[2])
            except ValueError:
                continue
            words.append((parts[0], start, end))
    out = []
    for text, start, end in words:
        if is_filler(text):
            continue
        n = norm(text)
        if n:
            out.append((n, start, end))
    out.sort(key=lambda w: (w[1], w[2]))
    return out


def edits(ref, hyp):
    """Word-level Levenshtein distance."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def score(clips, words, slack_s):
    """Per-clip (name, ref words, edits, hyp text), stray words, timing problems."""
    per = [[] for _ in clips]
    stray, timing = [], []
    for text, start, end in words:
        mid = (start + end) / 2
        k = next((i for i, c in enumerate(clips)
                  if c["offset_s"] - slack_s <= mid <= c["offset_s"] + c["duration_s"] + slack_s),
                 None)
        if k is None:
            stray.append((text, start, end))
            continue
        c = clips[k]
        if start < c["offset_s"] - slack_s or end > c["offset_s"] + c["duration_s"] + slack_s:
            timing.append((text, start, end, c["name"]))
        per[k].append(text)
    rows = []
    for c, hyp in zip(clips, per):
        ref = [norm(w) for w in c["text"].split() if norm(w)]
        rows.append((c["name"], len(ref), edits(ref, hyp), " ".join(hyp)))
    return rows, stray, timing


def wer(rows, stray):
    n_ref = sum(r[1] for r in rows)
    return 100.0 * (sum(r[2] for r in rows) + len(stray)) / max(n_ref, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("truth")
    ap.add_argument("transcript")
    ap.add_argument("--baseline")
    ap.add_argument("--epsilon", type=float, default=0.5)
    ap.add_argument("--slack-s", type=float, default=0.3)
    ap.add_argument("--max-wer", type=float)
    a = ap.parse_args()

    with open(a.truth, encoding="utf-8") as f:
        clips = json.load(f)["clips"]
    ok = True
    rows, stray, timing = score(clips, load_words(a.transcript), a.slack_s)
    ours = wer(rows, stray)
    base = None
    if a.baseline:
        brows, bstray, _ = score(clips, load_words(a.baseline), a.slack_s)
        base = wer(brows, bstray)

    print("%-44s %5s %6s %8s" % ("clip", "words", "WER %", "base %"))
    for i, (name, n_ref, e, hyp) in enumerate(rows):
        b = "%8.1f" % (100.0 * brows[i][2] / max(brows[i][1], 1)) if a.baseline else "%8s" % "-"
        print("%-44s %5d %6.1f %s" % (name, n_ref, 100.0 * e / max(n_ref, 1), b))
        print("    hyp: %s" % hyp)
    print("%-44s %5d %6.1f %8s" % ("overall", sum(r[1] for r in rows), ours,
                                   "%.1f" % base if base is not None else "-"))
    for text, start, end in stray:
        print("stray word %r at %.2f-%.2f s (outside every clip)" % (text, start, end))
    for text, start, end, name in timing:
        print("timing: %r at %.2f-%.2f s leaves clip %s" % (text, start, end, name))
        ok = False
    if stray:
        ok = False
    if base is not None and ours > base + a.epsilon:
        print("WER %.2f %% is worse than the baseline's %.2f %% (+%.1f pp allowed)"
              % (ours, base, a.epsilon))
        ok = False
    if a.max_wer is not None and ours > a.max_wer:
        print("WER %.2f %% is above %.1f %%" % (ours, a.max_wer))
        ok = False
    print("wer_ours=%.2f wer_baseline=%s timing_problems=%d stray_words=%d"
          % (ours, "%.2f" % base if base is not None else "-", len(timing), len(stray)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
