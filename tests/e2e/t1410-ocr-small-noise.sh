#!/usr/bin/env bash
# Small text and noise lines through the real binary, on tests/fixtures/gen_small_text.sh's
# 720p video (slides with 12-40 px text in fonts no other fixture uses, then photo-like
# frames): word recall on the slides >= 0.98 from the export against the truth; every line
# on a slide is text, every line on a photo-like frame is marked "noise": true; a word read
# only in noise lines is in the export but `search` finds nothing for it; each slide's title
# and small print are found by search at the slide; `show` counts only text lines and marks
# the noise ones.
. "$(dirname "$0")/lib.sh"
vt init

bash "$ROOT/tests/fixtures/gen_small_text.sh" "$T/fx" 3 6
id=$(vt add "$T/fx/small.mp4") || fail "add failed"
vt export "$id" > "$T/doc.json"

python3 "$ROOT/tests/tools/score_small_text.py" "$T/fx/truth.json" "$T/doc.json" --min 0.98 \
  --noise-free || fail "small-text recall below 0.98, or a photo-like frame's line is not noise"

python3 - "$T/fx/truth.json" "$T/doc.json" "$VIDTHEQUE" "$LIB" <<'PY' || fail "noise lines and search"
import json, re, subprocess, sys
truth = json.load(open(sys.argv[1])); doc = json.load(open(sys.argv[2]))
vt, lib = sys.argv[3], sys.argv[4]
by = {f["index"]: f for f in doc["frames"]}

def frames_in(start, end):
    out = []
    for f in doc["frames"]:
        if start <= f["t_s"] < end:
            while f["state"] == "skipped" and f.get("duplicate_of") is not None:
                f = by[f["duplicate_of"]]
            out.append(f)
    return out

def search(q):
    r = subprocess.run([vt, "-q", "-L", lib, "search", "--json", "--limit", "5", q],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["hits"]

def near_one_edit(a, b):
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        d = [i for i in range(len(a)) if a[i] != b[i]]
        return len(d) == 1 or (len(d) == 2 and d[1] == d[0] + 1 and a[d[0]] == b[d[1]]
                               and a[d[1]] == b[d[0]])
    s, l = (a, b) if len(a) < len(b) else (b, a)
    return any(l[:i] + l[i + 1:] == s for i in range(len(l)))

# every line on a slide is text
for s in truth["slides"]:
    fr = frames_in(s["start_s"], s["end_s"])
    assert fr, "no frame for %s" % s["file"]
    for f in fr:
        for line in f["ocr"]:
            assert not line.get("noise"), "slide line marked noise: %r" % line

# words of the text lines, and words read only in noise lines
text_words, noise_words = set(), set()
for f in doc["frames"]:
    for line in f["ocr"]:
        ws = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", line["text"])}
        (noise_words if line.get("noise") else text_words).update(ws)
garbage = sorted(w for w in noise_words
                 if not any(near_one_edit(w, t) for t in text_words) and w not in doc["title"].lower())
print("noise-only words:", garbage)
assert garbage, "no noise-only word to search for (the fixture's photo frames read nothing)"
for w in garbage:
    hits = search(w)
    assert not hits, "noise word %r found: %r" % (w, hits)

# each slide's title and its smallest lines are found at the slide
found = total = 0
for s in truth["slides"]:
    for line in s["lines"]:
        if line["size"] not in (40, 12):
            continue
        words = [w for w in re.findall(r"[A-Za-z]+", line["text"]) if w != "Source"][:3]
        hits = search('"%s"' % " ".join(words))
        # a slide's title also names its chapter (chapters from the slides): the moment may
        # come as the chapter's title, at the same slide
        srcs = ("screen", "title") if line["size"] == 40 else ("screen",)
        ok = any(h["source"] in srcs and h["start_s"] <= s["start_s"] + 1 <= h["end_s"]
                 for h in hits)
        found += ok
        total += 1
        if not ok:
            print("not found at its slide:", words, [(h["source"], h["start_s"]) for h in hits])
print("slide phrases found at their slide: %d/%d" % (found, total))
assert found == total
PY

# show: "lines read" counts text lines only, and the noise lines are marked
vt show "$id" > "$T/show.txt"
want=$(json "$T/doc.json" "sum(1 for f in d['frames'] for l in f['ocr'] if not l.get('noise'))")
noise=$(json "$T/doc.json" "sum(1 for f in d['frames'] for l in f['ocr'] if l.get('noise'))")
[[ $noise -gt 0 ]] || fail "no noise line in the export"
[[ $(json "$T/doc.json" "d['stored']['ocr_lines']") == "$want" ]] ||
  fail "stored ocr_lines is not the count of text lines ($want)"
grep -q "frames with text [0-9]*, $want lines read" "$T/show.txt" || fail "show: lines read: $(grep 'lines read' "$T/show.txt")"
[[ $(grep -c '  noise$' "$T/show.txt") == "$noise" ]] || fail "show does not mark the $noise noise lines"

# the video page shows noise lines dimmed, marked in words, and leaves them out of its counts
start_server --read-only
curl -sf "http://127.0.0.1:$PORT/v/$id" > "$T/page.html" || fail "GET /v/$id"
grep -q '<li class="noise" data-t=' "$T/page.html" || fail "the video page does not mark noise lines"
grep -q ', likely noise</span>' "$T/page.html" || fail "the video page does not say 'likely noise'"
note "ok: recall, noise lines kept but not searchable, show, the video page"
