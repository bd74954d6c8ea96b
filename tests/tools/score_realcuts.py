#!/usr/bin/env python3
"""Score shot boundaries and on-screen words on the real-footage set (tests/data/realcuts)
and on footage made to imitate it (tests/fixtures/gen_trouble.sh).

    score_realcuts.py [--min-p P] [--min-r R] [--min-f1 F] [--min-ocr W] [--json OUT]
                      TRUTH.json RESULT.json [TRUTH.json RESULT.json ...]

TRUTH is a clip's truth (boundaries, non_boundaries, text; see tests/data/realcuts/README.md).
RESULT is `vidtheque export` of the clip, or what tests/tools/kfdump prints (no OCR then).
A detected boundary is the start of every shot but the first, in frames round(start_s * fps);
it matches a true cut within 2 frames (score_cuts.py's rule: a decoder or detector may put
the cut on the frame before or after, and no real shot is that short) and a gradual
transition anywhere in its span widened by 2 frames. A false boundary is explained by the
non-boundary it falls in (flash, pan, text fading in...), so a false alarm says its cause.
Words: a true text span's words count as read when the OCR of a kept frame whose time lies
in the span (duplicates followed to the frame they repeat) holds them, compared without
case or punctuation; as searchable when a line not judged noise holds them (the store never
searches noise, so a word read only in a noise line is on the page but not found). Prints a line per clip and the totals over all clips (micro-averaged:
every boundary and every word counts once). Exits 1 when a total is under its --min floor:
floors are today's figures, so that a regression fails; the issue's goal is printed beside.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_cuts import match_boundaries  # noqa: E402

GOAL_P, GOAL_R, GOAL_OCR = 0.95, 0.95, 0.9


def norm(w):
    return re.sub(r"[^0-9a-z]", "", w.lower())


def prf(tp, ndet, ntrue):
    p = tp / ndet if ndet else 1.0
    r = tp / ntrue if ntrue else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def explain(d, truth):
    # the narrowest note around the frame says the most about it
    near = [nb for nb in truth.get("non_boundaries", []) if nb["start"] - 3 <= d <= nb["end"] + 3]
    if not near:
        return "no note in the truth"
    nb = min(near, key=lambda nb: nb["end"] - nb["start"])
    return nb["kind"] + ": " + nb["what"]


def words_read(truth, res, fps, searchable=False):
    """(found, total, missing words) of the truth's text spans in the result's OCR; with
    searchable, only in lines not judged noise (the store never searches noise)."""
    frames = {f["index"]: f for f in res.get("frames", [])}
    found = total = 0
    missing = []
    for span in truth.get("text", []):
        seen = set()
        for f in res.get("frames", []):
            if not span["start"] - 0.5 <= f["t_s"] * fps <= span["end"] + 0.5:
                continue
            while f.get("state") == "skipped" and f.get("duplicate_of") in frames:
                f = frames[f["duplicate_of"]]
            for line in f.get("ocr") or []:
                if not (searchable and line.get("noise")):
                    seen.update(norm(w) for w in line["text"].split())
        for w in span["words"]:
            total += 1
            if norm(w) in seen:
                found += 1
            else:
                missing.append(w)
    return found, total, missing


def score_clip(tpath, rpath, tot):
    truth = json.load(open(tpath))
    res = json.load(open(rpath))
    if "keyframes" in res and "shots" not in res:
        res = res["keyframes"]
    fps = truth["fps"]
    det = sorted(round(s["start_s"] * fps) for s in res["shots"][1:])
    bounds = truth["boundaries"]
    tp, false, missed = match_boundaries(det, bounds)
    p, r, f1 = prf(tp, len(det), len(bounds))
    has_ocr = any("ocr" in f for f in res.get("frames", []))
    wf, wt, wmiss = words_read(truth, res, fps) if has_ocr else (0, 0, [])
    ws = words_read(truth, res, fps, True)[0] if has_ocr else 0
    name = truth.get("name") or os.path.basename(truth.get("clip", tpath))
    words = "words %d/%d (searchable %d)" % (wf, wt, ws) if wt else "no words"
    print("%-22s truth %2d detected %2d matched %2d  P %.3f R %.3f F1 %.3f  %s"
          % (name, len(bounds), len(det), tp, p, r, f1, words))
    for d in false:
        print("    false boundary at frame %d (%.2f s): %s" % (d, d / fps, explain(d, truth)))
    for b in missed:
        print("    missed %s at frame %s" % (b["kind"], b.get("frame", b.get("start"))))
    if wmiss:
        print("    words not read: %s" % " ".join(wmiss))
    for k, v in (("true", len(bounds)), ("det", len(det)), ("tp", tp), ("wf", wf), ("ws", ws),
                 ("wt", wt)):
        tot[k] += v
    return {"clip": name, "truth": len(bounds), "detected": len(det), "matched": tp,
            "precision": p, "recall": r, "f1": f1, "words_found": wf, "words_total": wt}


def main():
    args, floors, out = sys.argv[1:], {}, None
    while args and args[0].startswith("--"):
        if args[0] == "--json":
            out = args[1]
        else:
            floors[args[0][6:]] = float(args[1])
        args = args[2:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    tot = dict(true=0, det=0, tp=0, wf=0, ws=0, wt=0)
    clips = [score_clip(args[i], args[i + 1], tot) for i in range(0, len(args), 2)]
    p, r, f1 = prf(tot["tp"], tot["det"], tot["true"])
    ocr = tot["wf"] / tot["wt"] if tot["wt"] else None
    print("all %d clips: truth %d detected %d matched %d  P %.3f R %.3f F1 %.3f"
          % (len(clips), tot["true"], tot["det"], tot["tp"], p, r, f1))
    if ocr is not None:
        print("on-screen words read: %d/%d = %.3f; searchable (in lines not judged noise): "
              "%d/%d = %.3f" % (tot["wf"], tot["wt"], ocr, tot["ws"], tot["wt"],
                                tot["ws"] / tot["wt"]))
    print("goal (issue 24): P >= %.2f, R >= %.2f, words >= %.2f: %s" % (
        GOAL_P, GOAL_R, GOAL_OCR,
        "met" if p >= GOAL_P and r >= GOAL_R and (ocr is None or ocr >= GOAL_OCR)
        else "not met yet"))
    if out:
        json.dump({"clips": clips, "precision": p, "recall": r, "f1": f1, "words": ocr},
                  open(out, "w"), indent=1)
    ok = True
    for k, v in (("p", p), ("r", r), ("f1", f1), ("ocr", ocr)):
        if k in floors and v is not None and v < floors[k] - 1e-9:
            print("FAIL: %s %.3f is under its floor %.3f" % (k, v, floors[k]))
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
