#!/usr/bin/env bash
# Chapters from the slides on a generated talk (tests/fixtures/gen_talk.sh, seed 1) whose
# container has none: one chapter per slide shown for the first time, titled with the
# slide's title and starting where its shot starts (within 0.5 s of the truth); the slide
# shown again after a cutaway opens none. The export says each was made from "slides",
# `show` lists them, a search for a chapter title finds the moment it starts, and a
# redo of fetch (the container still has none) keeps them, also while it runs. The same
# talk with chapters in its container keeps the container's ("source"): source chapters
# win.
# backends: sqlite postgresql
. "$(dirname "$0")/lib.sh"
vt init > /dev/null
fixture gen_talk.sh "$T/talk" 1 > /dev/null
expect_exit 0 vt add "$T/talk/talk.mp4"
id=$(cat "$T/out")
vt export "$id" > "$T/doc.json"

# the truth: each slide's first showing, its title (the first two words) and shot start
python3 - "$T/talk/truth.json" "$T/doc.json" > "$T/check.txt" <<'PY' || fail "chapters: $(cat "$T/check.txt")"
import json, sys
truth, doc = (json.load(open(p)) for p in sys.argv[1:3])
want, seen = [], set()
for s in truth["shots"]:
    if s["kind"] == "slide" and s["slide"] not in seen:
        seen.add(s["slide"])
        want.append((s["start_s"], " ".join(truth["slides"][s["slide"]]["words"][:2])))
got = doc["chapters"]
print("want", want)
print("got ", [(c["start_s"], c["title"], c["made"]) for c in got])
assert len(got) == len(want), "%d chapters, want %d" % (len(got), len(want))
for (ws, wt), c in zip(want, got):
    assert c["title"] == wt, "title %r, want %r" % (c["title"], wt)
    assert abs(c["start_s"] - ws) <= 0.5, "%r starts at %s, want %s" % (wt, c["start_s"], ws)
    assert c["made"] == "slides" and c["source"] == "slides", c
for a, b in zip(got, got[1:]):
    assert a["end_s"] == b["start_s"], "chapter %r ends at %s, the next starts at %s" % (
        a["title"], a["end_s"], b["start_s"])
assert abs(got[-1]["end_s"] - doc["duration_s"]) <= 0.5, (got[-1], doc["duration_s"])
assert doc["stored"]["chapters"] == len(want) and doc["stored"]["chapters_source"] == "slides"
ocr = [s for s in doc["stages"] if s["name"] == "ocr"][0]
assert "vidtheque-slide-chapters 1" in ocr["model"], ocr["model"]
PY
note "$(tail -1 "$T/check.txt")"

# show lists them, each with how it was made
vt show "$id" > "$T/show.txt"
n=$(json "$T/doc.json" "len(d['chapters'])")
grep -q "^Chapters$" "$T/show.txt" || fail "show has no Chapters section: $(cat "$T/show.txt")"
[[ $(grep -c "(from the slides)$" "$T/show.txt") == "$n" ]] ||
  fail "show does not list the $n chapters: $(grep -A12 '^Chapters' "$T/show.txt")"
grep -q "^  chapters  *$n from the slides$" "$T/show.txt" || fail "show's stored count: $(grep chapters "$T/show.txt")"
title=$(json "$T/doc.json" "d['chapters'][4]['title']")
start=$(json "$T/doc.json" "d['chapters'][4]['start_s']")
grep -q "^  $(python3 -c "import sys; from math import floor; s=floor(float(sys.argv[1])); print('%d:%02d' % (s // 60, s % 60))" "$start") to .*  $title  (from the slides)$" "$T/show.txt" ||
  fail "show does not list '$title' at $start: $(grep -A12 '^Chapters' "$T/show.txt")"

# a search for a chapter's title finds the moment it starts
vt search --json "$title" > "$T/hits.json"
[[ $(json "$T/hits.json" "any(h['video_id'] == '$id' and h['source'] == 'title' and abs(h['start_s'] - $start) < 0.01 for h in d['hits'])") == True ]] ||
  fail "a search for '$title' does not find its chapter at $start: $(cat "$T/hits.json")"

# a redo of fetch (no chapters in the container) keeps the slides' chapters: stopped at
# ocr's claim (fetch and keyframe have committed, ocr has not: VIDTHEQUE_TEST_STOP_AT),
# the export still has them; let go, ocr makes the same again
chapters_of() { json "$1" "[(c['title'], c['start_s'], c['made']) for c in d['chapters']]"; }
VIDTHEQUE_TEST_STOP_AT=ocr:claimed "$VIDTHEQUE" -q -L "$LIB" redo "$id" --stage fetch > /dev/null 2> "$T/redo.err" &
rpid=$!
st=
for _ in $(seq 3000); do
  st=$(cat "/proc/$rpid/stat" 2> /dev/null) || st="x) gone"
  st=${st##*) }
  st=${st%% *}
  [[ $st == T || $st == Z || $st == gone ]] && break
  sleep 0.02
done
[[ $st == T ]] || fail "redo --stage fetch never stopped at ocr's claim ($st): $(cat "$T/redo.err")"
vt export "$id" > "$T/doc2.json"
[[ $(json "$T/doc2.json" "[s['state'] for s in d['stages'] if s['name'] in ('fetch', 'keyframe', 'ocr')]") == "['done', 'done', 'running']" ]] ||
  fail "at ocr's claim: $(json "$T/doc2.json" "[(s['name'], s['state']) for s in d['stages']]")"
[[ $(chapters_of "$T/doc2.json") == "$(chapters_of "$T/doc.json")" ]] ||
  fail "the slides' chapters are gone while fetch and keyframe are redone: $(json "$T/doc2.json" "d['chapters']")"
kill -CONT "$rpid"
wait "$rpid" || fail "redo --stage fetch: $(cat "$T/redo.err")"
vt export "$id" > "$T/doc2.json"
[[ $(chapters_of "$T/doc2.json") == "$(chapters_of "$T/doc.json")" ]] ||
  fail "a redo of fetch changed the chapters: $(json "$T/doc2.json" "d['chapters']")"

# the same talk with two chapters in its container: those win
cat > "$T/meta.txt" << 'EOF'
;FFMETADATA1
[CHAPTER]
TIMEBASE=1/1000
START=0
END=30000
title=Part one
[CHAPTER]
TIMEBASE=1/1000
START=30000
END=59000
title=Part two
EOF
ffmpeg -v error -y -i "$T/talk/talk.mp4" -i "$T/meta.txt" -map 0 -map_chapters 1 -c copy \
  -metadata title="Talk with chapters" "$T/chaptered.mp4"
expect_exit 0 vt add "$T/chaptered.mp4"
cid=$(cat "$T/out")
vt export "$cid" > "$T/doc3.json"
[[ $(json "$T/doc3.json" "[(c['title'], c['made'], c['source']) for c in d['chapters']]") == \
   "[('Part one', 'source', 'container'), ('Part two', 'source', 'container')]" ]] ||
  fail "the container's chapters did not win: $(json "$T/doc3.json" "d['chapters']")"
[[ $(json "$T/doc3.json" "[s['model'] for s in d['stages'] if s['name'] == 'ocr'][0]") == *"chapters from the source"* ]] ||
  fail "ocr's provenance does not say the source's chapters were kept"
vt show "$cid" > "$T/show2.txt"
grep -q "^  0:00 to 0:[0-9][0-9]  Part one  (from the source)$" "$T/show2.txt" || fail "show of the container's chapters: $(grep -A3 "^Chapters" "$T/show2.txt")"
echo "all good"
