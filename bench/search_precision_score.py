#!/usr/bin/env python3
"""Score search against the query set of search_precision_bench.sh (VIDTHEQUE LIBRARY
QUERIES): precision of the first 10 hits and recall@5 in hybrid mode and words only, and
the hits by meaning of the queries that cannot match. A hit is relevant when it is in a
relevant moment's video and overlaps it; recall@5 is the relevant moments found in the
first 5 hits over the smaller of 5 and their number."""
import json, subprocess, sys

vt, lib, path = sys.argv[1:4]
queries = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]

def search(q, mode):
    out = subprocess.run([vt, "-q", "-L", lib, "search", "--json", "--limit", "10", "--mode",
                          mode, q], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["hits"]

def moments(rel):
    out = []
    for m in filter(None, rel.split(";")):
        title, span = m.split("@")
        a, b = span.split("-")
        out.append((title, float(a), float(b)))
    return out

def hits_moment(h, m):
    return h["title"].rsplit(".", 1)[0] == m[0] and h["start_s"] < m[2] and m[1] < h["end_s"]

rows = {}
for mode in ("hybrid", "words"):
    prec, rec, empty, meaning_hits, nomatch_any = [], [], 0, 0, 0
    alone = [0, 0]  # hits in the first 10 found by meaning alone, and the relevant ones
    for kind, q, rel in queries:
        hits = search(q, mode)
        if kind == "nomatch":
            meaning_hits += sum(1 for h in hits if set(h["matched"]) & {"meaning", "visual"})
            nomatch_any += bool(hits)
            continue
        ms = moments(rel)
        if not hits:
            empty += 1
            prec.append(0.0)
        else:
            good = sum(1 for h in hits[:10] if any(hits_moment(h, m) for m in ms))
            prec.append(good / len(hits[:10]))
        found = sum(1 for m in ms if any(hits_moment(h, m) for h in hits[:5]))
        rec.append(min(found, 5) / min(5, len(ms)) if ms else 1.0)
        for h in hits[:10]:
            if h["matched"] == ["meaning"] or h["matched"] == ["visual"]:
                alone[0] += 1
                alone[1] += any(hits_moment(h, m) for m in ms)
    n_no = sum(1 for k, _, _ in queries if k == "nomatch")
    rows[mode] = (sum(prec) / len(prec), sum(rec) / len(rec), empty, meaning_hits, nomatch_any,
                  len(prec), n_no, alone)

print("%-8s %8s %8s %14s %24s %22s %18s" % (
    "mode", "P@10", "R@5", "no hit (match)", "by meaning alone (rel.)", "meaning hits (nomatch)",
    "answered (nomatch)"))
for mode, (p, r, e, mh, na, nq, nn, al) in rows.items():
    print("%-8s %8.3f %8.3f %14s %24s %22d %18s" % (mode, p, r, "%d/%d" % (e, nq),
                                                     "%d (%d)" % tuple(al), mh, "%d/%d" % (na, nn)))
print("(%d queries with relevant moments, %d that cannot match)" % (nq, nn))
p_h, r_h, _, mh = rows["hybrid"][:4]
print("goals: hybrid P@10 >= 0.8: %s; hybrid R@5 >= words R@5: %s; meaning hits for queries "
      "that cannot match == 0: %s" % ("met" if p_h >= 0.8 else "NOT met",
                                      "met" if r_h >= rows["words"][1] else "NOT met",
                                      "met" if mh == 0 else "NOT met"))
