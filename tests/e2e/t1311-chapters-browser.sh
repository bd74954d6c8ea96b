#!/usr/bin/env bash
# Chapters and storyboard previews on the video page, over HTTP and in a real browser
# (Debian's Chromium driven by playwright-core, tests/browser/chapters.mjs), at desktop and
# phone sizes. Fixture: a 12 s talk with three slides, each a title over a smaller line
# ("Welcome Overview", "Quarterly Harbor Results", "Questions Answers"; cuts at 4 s and
# 8 s), and read speech (a LibriVox clip from pocketsphinx-testdata mixed in at 1 s): three
# chapters from the slides. HTTP: GET /api/videos/ID/storyboard (the kept frame showing
# each moment, from when; 404 for an unknown video). Browser: the seek bar's chapters,
# the transcript's headings, the preview on hover and on touch, seeking there; screenshots
# of the page with chapters, preview and hit marks: tests/out/screenshots/chapters-wide.png
# and chapters-phone.png. Everything talks to 127.0.0.1 only.
# backends: sqlite postgresql
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"
command -v node > /dev/null || fail "node is missing: install nodejs (scripts/install-deps.sh)"
[[ -x /usr/bin/chromium ]] || fail "/usr/bin/chromium is missing: install Debian's chromium (scripts/install-deps.sh)"
[[ -d $ROOT/tests/browser/node_modules/playwright-core ]] ||
  fail "tests/browser/node_modules is missing: run bash scripts/setup.sh"
lv=/usr/share/pocketsphinx/test/data/librivox
[[ -f $lv/sense_and_sensibility_01_austen_64kb-0870.wav ]] || fail "pocketsphinx-testdata is missing"

font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
slide() { # slide TITLE BODY FROM TO: the drawtext filters of one slide
  echo "drawtext=fontfile=$font:text='$1':fontsize=40:x=40:y=40:enable='between(t,$3,$4)',drawtext=fontfile=$font:text='$2':fontsize=22:x=40:y=130:enable='between(t,$3,$4)'"
}
vf="color=white:s=640x360:d=12,$(slide 'Welcome Overview' 'a talk about ships' 0 3.99),$(slide 'Quarterly Harbor Results' 'cargo went up' 4 7.99),$(slide 'Questions Answers' 'thank you all' 8 12)"
ffmpeg -v error -y -f lavfi -i "$vf" -i "$lv/sense_and_sensibility_01_austen_64kb-0870.wav" \
  -filter_complex "[1:a]adelay=1000|1000,apad[a]" -map 0:v -map '[a]' \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -ar 44100 -t 12 \
  -metadata title="Chapters talk" "$T/talk.mp4"
vt init > /dev/null
expect_exit 0 vt add "$T/talk.mp4"
id=$(cat "$T/out")
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "[(c['title'], round(c['start_s']), c['made']) for c in d['chapters']]") == \
  "[('Welcome Overview', 0, 'slides'), ('Quarterly Harbor Results', 4, 'slides'), ('Questions Answers', 8, 'slides')]" ]] ||
  fail "chapters: $(json "$T/doc.json" "d['chapters']")"
[[ $(json "$T/doc.json" "len(d['cues']) >= 2") == True ]] || fail "the talk wants 2 cues: $(json "$T/doc.json" "d['cues']")"

start_server --read-only
curl -sf "$B/api/videos/$id/storyboard" > "$T/board.json" || fail "GET /api/videos/$id/storyboard"
python3 - "$T/doc.json" "$T/board.json" <<'PY' || fail "storyboard: $(cat "$T/board.json")"
import json, sys
doc, board = (json.load(open(p)) for p in sys.argv[1:3])
kept = {f["index"] for f in doc["frames"] if f["image"] and f["duplicate_of"] is None}
fr = board["frames"]
assert board["video_id"] == doc["id"] and fr, board
assert [f["start_s"] for f in fr] == sorted(f["start_s"] for f in fr), "not in time order"
assert fr[0]["start_s"] == 0 and all(f["frame"] in kept for f in fr), (fr, kept)
# each chapter's start is shown by a frame that reads its title
for c in doc["chapters"]:
    f = [f for f in fr if f["start_s"] <= c["start_s"] + 1e-3][-1]
    text = " ".join(l["text"] for l in [x for x in doc["frames"] if x["index"] == f["frame"]][0]["ocr"])
    assert c["title"] in text, (c, f, text)
PY
[[ $(curl -s -o /dev/null -w '%{http_code}' "$B/api/videos/NoSuchVideo/storyboard") == 404 ]] ||
  fail "an unknown video's storyboard is not a 404"

shots=$ROOT/tests/out/screenshots
mkdir -p "$shots"
rm -f "$shots/chapters-wide.png" "$shots/chapters-phone.png"
rc=0
timeout 180 node "$ROOT/tests/browser/chapters.mjs" "$B" "$id" "$shots" "$T/doc.json" harbor || rc=$?
kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the browser test: $(cat "$T/srv.err")"
[[ $rc == 0 ]] || fail "browser test exited $rc (server stderr: $(head -c 500 "$T/srv.err"))"
for f in chapters-wide chapters-phone; do
  [[ -s $shots/$f.png ]] || fail "no screenshot $shots/$f.png"
done
echo "all good"
