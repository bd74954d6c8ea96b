#!/usr/bin/env python3
"""Score the keyframe stage against a fixture's truth.

    score_cuts.py TRUTH.json RESULT.json

RESULT.json is what tests/tools/kfdump prints, or a video's export JSON: shots[]
{index, start_s, end_s, ...} and frames[] {index, t_s, shot, state, duplicate_of}.
A detected boundary is the start of every shot but the first, in frames
round(start_s * fps). A hard cut matches a detection within 2 frames; a gradual
transition matches one anywhere in [start - 2, end + 2]; each truth boundary matches
at most once. Duplicates: every repeated slide must be skipped as a duplicate of a
frame showing the same slide, and no frame may be skipped as a duplicate of a
different slide. Exits 1 below target (F1 >= 0.95, duplicates all right).
"""
import json
import sys

TOL = 2
F1_TARGET = 0.95


def match_boundaries(det, bounds):
    """Match detected boundary frames to truth boundaries, each truth at most once:
    returns (matched count, unmatched detections, missed truth boundaries)."""

    def span(b):
        if b["kind"] == "cut":
            return b["frame"] - TOL, b["frame"] + TOL
        return b["start"] - TOL, b["end"] + TOL

    used = [False] * len(bounds)
    tp, false = 0, []
    for d in det:
        best = None
        for i, b in enumerate(bounds):
            lo, hi = span(b)
            if not used[i] and lo <= d <= hi:
                best = i
                break
        if best is None:
            false.append(d)
        else:
            used[best] = True
            tp += 1
    return tp, false, [b for i, b in enumerate(bounds) if not used[i]]


def main():
    truth = json.load(open(sys.argv[1]))
    res = json.load(open(sys.argv[2]))
    if "keyframes" in res and "shots" not in res:
        res = res["keyframes"]
    fps = truth["fps"]
    det = sorted(round(s["start_s"] * fps) for s in res["shots"][1:])
    bounds = truth["boundaries"]

    tp, fps_, missed = match_boundaries(det, bounds)
    prec = tp / len(det) if det else 1.0
    rec = tp / len(bounds) if bounds else 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    print("boundaries: truth %d, detected %d, matched %d" % (len(bounds), len(det), tp))
    print("precision %.3f recall %.3f F1 %.3f" % (prec, rec, f1))
    for d in fps_:
        print("  false boundary at frame %d (%.2f s)" % (d, d / fps))
    for b in missed:
        print("  missed %s" % json.dumps(b))

    # duplicates: which truth shot and slide each frame shows
    tshots = truth["shots"]

    def tshot_of(t):
        f = t * fps
        for i, s in enumerate(tshots):
            if s["start_s"] * fps - 0.5 <= f < s["end_s"] * fps - 0.5:
                return i
        return len(tshots) - 1

    frames = {f["index"]: f for f in res["frames"]}
    slide_of = {}
    for f in res["frames"]:
        ts = tshot_of(f["t_s"])
        sl = tshots[ts]["slide"]
        slide_of[f["index"]] = ("slide", sl) if sl is not None else ("motion", ts)
    ok = True
    for dup in truth["duplicates"]:
        fr = [f for f in res["frames"] if tshot_of(f["t_s"]) == dup["shot"]]
        if not fr:
            print("  repeated slide in truth shot %d: no frame captured" % dup["shot"])
            ok = False
        elif not any(f["state"] == "skipped" for f in fr):
            print("  repeated slide in truth shot %d (same as shot %d) was kept, not skipped"
                  % (dup["shot"], dup["same_as_shot"]))
            ok = False
    n_skipped = 0
    for f in res["frames"]:
        if f["state"] != "skipped":
            continue
        n_skipped += 1
        other = frames.get(f["duplicate_of"])
        if other is None or slide_of[other["index"]] != slide_of[f["index"]]:
            print("  frame %d (%.2f s) skipped as a duplicate of a different picture (frame %s)"
                  % (f["index"], f["t_s"], f["duplicate_of"]))
            ok = False
    print("duplicates: truth %d, skipped %d, %s" % (len(truth["duplicates"]), n_skipped,
                                                   "ok" if ok else "WRONG"))
    passed = f1 >= F1_TARGET and ok
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
