#!/usr/bin/env bash
# Search on PostgreSQL gives SQLite's answers: the same talk (slides read by OCR, speech
# from a sidecar SubRip file) added to an SQLite library and to one on PostgreSQL, then
# `search --json` compared query by query, hits, order, scores and marked text alike:
# words, phrases, prefixes, excluded terms, source: and video: filters, all but one of
# three words, a misheard word (phonetic tier), a word one OCR edit off (fuzzy tier), and
# hostile strings, which must answer (no hits or some) and never fail. Runs on
# VT_TEST_PG's server (tests/run-all.sh) or on a cluster of its own.
. "$(dirname "$0")/lib.sh"

pg_database vt_t1510

fixture gen_talk.sh "$T/talk" 1 > /dev/null
python3 - "$T/talk/talk.srt" <<'PY'
import sys
lines = [
    "the quick brown fox jumps over the lazy dog",
    "a quick look at the brown river near the village",
    "we measure the river every morning at the harbor",
    "the lazy afternoon turned into a quick storm",
    "thunder over the harbor and rain on the window",
    "our project measures thunder and lightning together",
    "the village market opens early on a sunday",
    "measure twice and cut once said the carpenter",
    "brown bread and orange juice for breakfast",
    "the night was quiet and the knight was tired",
    "a knight rides over the bridge into the village",
    "the bridge and the river and the harbor again",
    "purple window purple window purple window",
    "nobody expected the forest to be so quiet",
    "forest paths lead to the valley below",
    "the valley holds a common secret",
]
def ts(x):
    ms = round(x * 1000)
    return "%02d:%02d:%02d,%03d" % (ms // 3600000, ms // 60000 % 60, ms // 1000 % 60, ms % 1000)
with open(sys.argv[1], "w") as f:
    for i, line in enumerate(lines):
        f.write(f"{i + 1}\n{ts(i * 3.5)} --> {ts(i * 3.5 + 3)}\n{line}\n\n")
PY
SQ=$T/sqlite
"$VIDTHEQUE" -q -L "$SQ" init
sq_id=$("$VIDTHEQUE" -q -L "$SQ" add --stt=captions "$T/talk/talk.mp4") || fail "add to SQLite"
vt init --db "$url" || fail "init --db"
pg_id=$(vt add --stt=captions "$T/talk/talk.mp4") || fail "add to PostgreSQL"
# on PostgreSQL add only queues: a worker indexes it
vt worker --drain || fail "worker --drain"
[[ $pg_id == "$sq_id" ]] || fail "ids differ: $pg_id vs $sq_id"
[[ $(psql -X -Atc "SELECT count(*) FROM docs WHERE source = 'speech'" "$url") == 16 ]] ||
  fail "speech rows on PostgreSQL"

sed -n '3~4p' "$T/talk/talk.srt" > "$T/lines"
python3 - "$VIDTHEQUE" "$SQ" "$LIB" "$pg_id" "$T/talk/truth.json" "$T/lines" <<'PY' || fail "PostgreSQL's answers differ from SQLite's"
import json, subprocess, sys
vt, sq, pg, vid, truth = sys.argv[1:6]
slides = json.load(open(truth))["slides"]
slide = slides[0]["words"]
queries = [
    # words, phrases, prefixes, exclusions
    "quick", "river harbor", "purple window", "the", "window purple", "village",
    '"brown river"', '"quick brown fox"', "meas*", "thund* harbor", '"the har*"',
    "river -harbor", 'quick -"brown fox"', "the -river -harbor -village",
    " ".join(slide[:2]), " ".join(slide[:3]), slide[0].lower(),
    # filters
    "source:speech river", "source:screen " + slide[0], "source:title talk",
    "video:%s river" % vid, "video:nope river", "source:speech video:%s harbor" % vid,
    # all but one of three words; a misheard word; a word one OCR edit off
    "quick brown elephant", "harbor river zebra", "nite", "vilage", "thundar",
    slide[0][:-1] + ("x" if slide[0][-1] != "x" else "y"), slide[1][:2] + slide[1][3:],
    # hostile strings: no SQL, no tsquery syntax gets through
    "'; DROP TABLE docs; --", "\\", "a'b", "it''s", "((( ", "!!! & | <-> :*", "-", '"',
    "video:' OR 1=1 --", 'source:speech" OR', "'quick':* & !'x'", "\xe9t\xe9 caf\xe9",
    "x" * 5000, "quick " * 40, "- - -quick", "*", "quick*" * 30,
]
# t0700's slide queries: every 3 consecutive words of each slide, and each 3-word window
# of the spoken lines
for s in slides:
    w = s["words"]
    queries += [" ".join(w[k:k + 3]) for k in range(0, max(1, len(w) - 2), 2)]
for line in open(sys.argv[6]):
    w = line.split()
    queries += [" ".join(w[k:k + 3]) for k in range(0, len(w) - 2, 3)]
def search(lib, q):
    r = subprocess.run([vt, "-q", "-L", lib, "search", "--json", "--limit", "20", "--", q],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("search %r on %s: exit %d: %s" % (q, lib, r.returncode, r.stderr.strip()))
    d = json.loads(r.stdout)
    d.pop("took_ms", None)
    return d
bad = 0; with_hits = approx = 0
for q in queries:
    a, b = search(sq, q), search(pg, q)
    if a != b:
        bad += 1
        print("differs: %r\n  sqlite:     %s\n  postgresql: %s" % (q[:60], json.dumps(a)[:600], json.dumps(b)[:600]))
    with_hits += bool(a["hits"])
    approx += any(h["approximate"] for h in a["hits"])
print("%d queries, %d with hits, %d with approximate hits, %d differ" % (len(queries), with_hits, approx, bad))
# the comparison means something only if the queries find things, approximate ones too
if bad or with_hits < 60 or approx < 3:
    sys.exit(1)
PY
