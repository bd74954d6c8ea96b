#!/usr/bin/env bash
# Text that changes inside a shot (tests/fixtures/gen_text_builds.sh): a slide that adds its
# bullets one by one, one fading in, is read in every state, and each bullet's words are
# found by search at the moment it appeared (from when it was shown to 0.5 s after it
# settled); a screen recording that scrolls and stops 10 times in 30 s gives at most one
# frame per 2 s, however its shots are cut; typed commands' output (gen_text_scenes.sh) is
# found by search when it was shown; the words of the three are read (a floor).
. "$(dirname "$0")/lib.sh"
vt init
bash "$ROOT/tests/fixtures/gen_text_builds.sh" "$T/fx" > /dev/null
id=$(vt add "$T/fx/build.mp4") || fail "add build.mp4"
vt export "$id" > "$T/build.json"
python3 - "$T/fx/truth.json" "$T/build.json" << 'PY' > "$T/bullets" || fail "the slide build's frames"
import json, sys
truth, res = (json.load(open(p)) for p in sys.argv[1:])
times = [f["t_s"] for f in res["frames"]]
print("frames at %s" % " ".join("%.2f" % t for t in times), file=sys.stderr)
for b in truth["build"]["bullets"]:
    print("%s|%.3f|%.3f" % (b["text"].lower(), b["shown_s"], b["settled_s"]))
PY
while IFS='|' read -r words shown settled; do
  vt search --json "\"$words\"" > "$T/s.json" || fail "search '$words'"
  python3 - "$T/s.json" "$shown" "$settled" "$words" << 'PY' || fail "'$words' not found where it appeared"
import json, sys
hits = json.load(open(sys.argv[1]))["hits"]
shown, settled, words = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
starts = sorted(h["start_s"] for h in hits if h["source"] == "screen")
first = starts[0] if starts else None
print("'%s' shown at %.2f s, settled %.2f s: first hit %s" % (words, shown, settled, first),
      file=sys.stderr)
sys.exit(0 if first is not None and shown - 0.05 <= first <= settled + 0.5 else 1)
PY
done < "$T/bullets"

id=$(vt add "$T/fx/scroll.mp4") || fail "add scroll.mp4"
vt export "$id" > "$T/scroll.json"
python3 - "$T/scroll.json" << 'PY' || fail "the screen recording's frames are not bounded"
import json, sys
res = json.load(open(sys.argv[1]))
n, dur = len(res["frames"]), res["duration_s"]
print("scroll: %d frames in %d shots over %.1f s" % (n, len(res["shots"]), dur), file=sys.stderr)
sys.exit(0 if n <= 1 + dur / 2 else 1)
PY
# typing in a terminal (gen_text_scenes.sh): each command's output is found where it was
# shown (within 0.5 s), though the shot goes on (with one frame per shot the hit would be at
# its start), the last before a cut too (the `clear`, the clip's end: the shot's sharpest
# frame shows it a second later, and the search used to land there).
bash "$ROOT/tests/fixtures/gen_text_scenes.sh" "$T/fx" 1 typing > /dev/null
id=$(vt add "$T/fx/typing.mp4") || fail "add typing.mp4"
vt export "$id" > "$T/typing.json"
python3 - "$T/fx/typing.json" << 'PY' > "$T/outputs" || fail "typing's truth"
import json, sys
for o in json.load(open(sys.argv[1]))["outputs"]:
    print("%s|%.3f" % (o["words"][0], o["shown_s"]))
PY
while IFS='|' read -r word shown; do
  vt search --json "$word video:$id" > "$T/s.json" || fail "search '$word'"
  python3 - "$T/s.json" "$shown" "$word" << 'PY' || fail "'$word' not found where it was shown"
import json, sys
hits = json.load(open(sys.argv[1]))["hits"]
shown, word = float(sys.argv[2]), sys.argv[3]
starts = sorted(h["start_s"] for h in hits if h["source"] == "screen")
first = starts[0] if starts else None
print("'%s' shown at %.2f s: first hit %s" % (word, shown, first), file=sys.stderr)
sys.exit(0 if first is not None and shown - 0.05 <= first <= shown + 0.5 else 1)
PY
done < "$T/outputs"

# words read in the kept frames (tests/tools/score_realcuts.py; these clips have no true
# boundary, so only the words count here): a floor under today's 815/823 = 0.990
python3 "$ROOT/tests/tools/score_realcuts.py" --min-ocr "${FLOOR_TEXT_OCR:-0.97}" \
  "$T/fx/build.json" "$T/build.json" "$T/fx/scroll.json" "$T/scroll.json" \
  "$T/fx/typing.json" "$T/typing.json" > "$T/score" || {
  cat "$T/score"
  fail "words read below today's figures"
}
grep -E 'words [0-9]|not read|^on-screen' "$T/score" | sed 's/^ */# /' | sed 's/ *truth .*P [0-9.]* R [0-9.]* F1 [0-9.]* */ /'
vt check > /dev/null || fail "check"
echo "all good"
