#!/usr/bin/env bash
# The web pages in a real browser: Debian's Chromium driven by playwright-core
# (tests/browser/browser.mjs). A short clip with two slides and read speech (a LibriVox
# clip from pocketsphinx-testdata mixed in at 2 s) is indexed; a read-only server on an
# ephemeral port serves it; the browser clicks a transcript cue, opens /v/ID?t=S and
# follows a search hit, checking the player's currentTime each time, and saves
# screenshots in tests/out/screenshots/. The library embeds frames (frame_embed with the
# MobileNet v1 0.25 of tests/data) and holds a copy of the clip's first slide, re-encoded
# smaller: the browser clicks "more like this" on the first frame, checks the similar
# frames (the copy first) and follows one to its second. Chromium talks to 127.0.0.1 only.
# Chromium and node_modules are required (scripts/setup.sh installs them): missing is a failure.
. "$(dirname "$0")/lib.sh"
command -v node > /dev/null || fail "node is missing: install nodejs (scripts/install-deps.sh)"
[[ -x /usr/bin/chromium ]] || fail "/usr/bin/chromium is missing: install Debian's chromium (scripts/install-deps.sh)"
[[ -d $ROOT/tests/browser/node_modules/playwright-core ]] ||
  fail "tests/browser/node_modules is missing: run bash scripts/setup.sh"
lv=/usr/share/pocketsphinx/test/data/librivox
[[ -f $lv/sense_and_sensibility_01_austen_64kb-0870.wav ]] || fail "pocketsphinx-testdata is missing"


# 10 s: "Welcome Overview" until 4 s, then "Quarterly Harbor Results" (a cut at 4 s);
# speech from 2 s to about 9 s
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
ffmpeg -v error -y -f lavfi -i "color=white:s=640x360:d=10,drawtext=fontfile=$font:text='Welcome Overview':fontsize=40:x=40:y=60:enable='lt(t,4)',drawtext=fontfile=$font:text='Quarterly Harbor Results':fontsize=40:x=40:y=140:enable='gte(t,4)'" \
  -i "$lv/sense_and_sensibility_01_austen_64kb-0870.wav" \
  -filter_complex "[1:a]adelay=2000|2000,apad[a]" -map 0:v -map '[a]' \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -ar 44100 -t 10 \
  -metadata title="Browser test talk" "$T/talk.mp4"
# the first slide again, at a quarter of the pixels and 200 kb/s, silent
ffmpeg -v error -y -i "$T/talk.mp4" -t 3.5 -an -vf scale=320:180 -b:v 200k -c:v libx264 \
  -pix_fmt yuv420p -metadata title="Browser test copy" "$T/copy.mp4"
MODEL=$DATA/mobilenet-v1-0.25-224
ls "$MODEL"/*.tflite > /dev/null || fail "no TFLite test model in $MODEL"
vt init > /dev/null
vt config set frame_embed.model "$MODEL"
expect_exit 0 vt add "$T/talk.mp4"
id=$(cat "$T/out")
expect_exit 0 vt add "$T/copy.mp4"
copy=$(cat "$T/out")
for v in "$id" "$copy"; do
  vt export "$v" > "$T/doc.json"
  [[ $(json "$T/doc.json" "[s['state'] for s in d['stages'] if s['name']=='frame_embed'][0]") == done ]] ||
    fail "frame_embed of $v is not done: $(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='frame_embed']")"
done
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "len(d['cues']) >= 1 and d['cues'][-1]['start_s'] > 1") == True ]] ||
  fail "the clip has no transcript cue after 1 s: $(json "$T/doc.json" "d['cues']")"
"$VIDTHEQUE" -L "$LIB" search --json harbor > "$T/hits.json"
[[ $(json "$T/hits.json" "len(d['hits']) >= 1 and d['hits'][0]['video_id'] == '$id'") == True ]] ||
  fail "'harbor' is not found by the CLI: $(cat "$T/hits.json")"
note "hit for 'harbor' at $(json "$T/hits.json" "d['hits'][0]['start_s']") s"

start_server --read-only
note "server on http://127.0.0.1:$PORT"

shots=$ROOT/tests/out/screenshots
mkdir -p "$shots"
rc=0
timeout 120 node "$ROOT/tests/browser/browser.mjs" "http://127.0.0.1:$PORT" "$id" "$shots" harbor "$copy" ||
  rc=$?
kill -0 "$SRV_PID" 2> /dev/null || fail "the server died during the browser test: $(cat "$T/srv.err")"
[[ $rc == 0 ]] || fail "browser test exited $rc (server stderr: $(head -c 500 "$T/srv.err"))"
for f in library video search similar; do
  [[ -s $shots/$f.png ]] || fail "no screenshot $shots/$f.png"
done
echo "all good"
