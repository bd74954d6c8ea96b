#!/usr/bin/env python3
"""Score shot boundaries with their transitions against gen_transitions.sh's truth.

    score_transitions.py TRUTH.json RESULT.json [TRUTH2.json RESULT2.json ...] [--quiet]

RESULT.json is a video's export JSON (or what tests/tools/sdtune prints): shots[]
{start_s, transition {kind, start_s, end_s}} and frames[] {t_s, shot}. A detected
boundary (the start of every shot but the first, in frames) matches a truth one as in
score_cuts.py: a cut within 2 frames, a gradual transition anywhere in its span +- 2
frames. A matched boundary must also have the truth's kind, and a gradual one its span:
each end within max(4 frames (two analysed frames), a quarter of the duration) of the truth's. No false
boundary may fall in a moving shot, every truth shot must have a chosen frame in its
stable part, and no chosen frame may lie inside a transition. Prints F1 (precision,
recall), dissolves and fades found N of M (kind right), by pairing, over all the
pairs of files given; exits 1 below target (F1 >= 0.97, every dissolve and fade found
with its kind and span, the rest above all right).
"""
import json
import sys

TOL = 2
F1_TARGET = 0.97


def score(truth_path, res_path, stats, problems):
    """Add one file's counts to stats and its problems to problems; returns (tp, det, truth)."""
    truth = json.load(open(truth_path))
    res = json.load(open(res_path))
    fps = truth["fps"]
    bounds = truth["boundaries"]
    tshots = truth["shots"]
    det = []
    for s in res["shots"][1:]:
        tr = s.get("transition") or {}
        det.append({"frame": round(s["start_s"] * fps), "kind": tr.get("kind"),
                    "start": tr.get("start_s"), "end": tr.get("end_s")})

    def span(b):
        if b["kind"] == "cut":
            return b["frame"] - TOL, b["frame"] + TOL
        return b["start"] - TOL, b["end"] + TOL

    used = [None] * len(bounds)
    false = []
    for d in det:
        for i, b in enumerate(bounds):
            lo, hi = span(b)
            if used[i] is None and lo <= d["frame"] <= hi:
                used[i] = d
                break
        else:
            false.append(d)
    tp = sum(1 for u in used if u is not None)
    first = len(problems)
    for b, d in zip(bounds, used):
        key = (b["kind"], b["pair"])
        st = stats.setdefault(key, [0, 0])
        st[1] += 1
        what = "%s %s%s at frame %s" % (b["kind"], b["pair"],
                                        " %.1f s" % b["dur_s"] if "dur_s" in b else "",
                                        b.get("frame", b.get("start")))
        if d is None:
            problems.append("missed " + what)
            continue
        if d["kind"] != b["kind"]:
            problems.append("%s: found as %s" % (what, d["kind"]))
            continue
        if b["kind"] != "cut":
            if d["start"] is None or d["end"] is None:
                problems.append("%s: no span" % what)
                continue
            slack = max(4, 0.25 * (b["end"] - b["start"] + 1))
            s0, s1 = d["start"] * fps, d["end"] * fps
            # truth end is the last mixed frame; the recorded end_s is where it ends
            if abs(s0 - b["start"]) > slack or abs(s1 - (b["end"] + 1)) > slack:
                problems.append("%s: span %.0f-%.0f, truth %d-%d" % (
                    what, s0, s1, b["start"], b["end"] + 1))
                continue
        st[0] += 1

    def tshot_of(fr):
        for i, s in enumerate(tshots):
            if s["start_s"] * fps - 0.5 <= fr < s["end_s"] * fps - 0.5:
                return i
        return len(tshots) - 1

    for d in false:
        ts = tshots[tshot_of(d["frame"])]
        where = "in a moving shot (%s)" % ts.get("source") if ts["kind"] == "motion" else \
            "in a slide"
        problems.append("false boundary at frame %d (%.2f s) %s" % (d["frame"], d["frame"] / fps,
                                                                     where))
    # chosen frames: one in each truth shot's stable part, none inside a transition
    spans = [(b["start"], b["end"]) for b in bounds if b["kind"] != "cut"]
    have = set()
    for fr in res["frames"]:
        x = fr["t_s"] * fps
        for a, z in spans:
            if a - 0.5 <= x <= z + 0.5:
                problems.append("frame at %.2f s lies inside the transition %d-%d" % (
                    fr["t_s"], a, z))
        for i, s in enumerate(tshots):
            if s["stable_start_s"] * fps - 0.5 <= x < s["stable_end_s"] * fps - 0.5:
                have.add(i)
    for i, s in enumerate(tshots):
        if i not in have:
            problems.append("truth shot %d (%s, %.2f-%.2f s) has no frame in its stable part" % (
                i, s["kind"], s["stable_start_s"], s["stable_end_s"]))
    for k in range(first, len(problems)):
        problems[k] = "%s: %s" % (res_path, problems[k])
    return tp, len(det), len(bounds)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quiet = "--quiet" in sys.argv
    if len(args) < 2 or len(args) % 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    stats, problems = {}, []
    tp = n_det = n_truth = 0
    for i in range(0, len(args), 2):
        a, b, c = score(args[i], args[i + 1], stats, problems)
        tp, n_det, n_truth = tp + a, n_det + b, n_truth + c
    prec = tp / n_det if n_det else 1.0
    rec = tp / n_truth if n_truth else 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0

    def found(kind):
        ok = sum(v[0] for k, v in stats.items() if k[0] == kind)
        return ok, sum(v[1] for k, v in stats.items() if k[0] == kind)

    print("boundaries: truth %d, detected %d, matched %d" % (n_truth, n_det, tp))
    print("F1 %.3f (precision %.3f, recall %.3f)" % (f1, prec, rec))
    for kind in ("dissolve", "fade", "cut"):
        ok, n = found(kind)
        by = " ".join("%s %d/%d" % (p, stats[(kind, p)][0], stats[(kind, p)][1])
                      for p in ("ss", "sc", "cs", "cc") if (kind, p) in stats)
        print("%ss found %d of %d, kind and span right (%s)" % (kind, ok, n, by))
    if not quiet:
        for p in problems:
            print("  " + p)
    # every gradual kind on every pairing, kind and span right
    passed = f1 >= F1_TARGET and not problems
    print("PASS" if passed else "FAIL (%d problems)" % len(problems))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
