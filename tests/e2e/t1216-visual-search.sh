#!/usr/bin/env bash
# Text to image: with a joint text-image frame model (a CLIP-class server; here the fake
# of tests/tools/fake_openai.py, whose vectors the test chooses), the words of a search
# find the frames whose pictures are nearest, as hits of source "visual" fused with the
# other signals and saying so, when they stand above the floor of the frame model's space
# (lib/search/floor.c); a frame model that embeds no text adds nothing; a server
# that is down leaves the words answering with a warning.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"

FAKE_PID=
stop_fake() { if [[ -n $FAKE_PID ]]; then kill "$FAKE_PID" 2> /dev/null; wait "$FAKE_PID" 2> /dev/null || true; fi; FAKE_PID=; }
trap 'stop_fake; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

# a 640x360 talk whose one slide reads "Quarterly numbers": its frames are sent to the
# server at that size or shrunk to 512x288; both sizes map to the vector of "a whiteboard"
gen_clip "$T/talk.mp4" 4 'Quarterly numbers'
cat > "$T/known.json" << 'JSON'
{"image:640x360": [1, 0, 0, 0, 0, 0, 0, 0],
 "image:512x288": [1, 0, 0, 0, 0, 0, 0, 0],
 "whiteboard": [0.97, 0.2, 0, 0, 0, 0, 0, 0],
 "quarterly": [0.9, 0, 0.4, 0, 0, 0, 0, 0],
 "banana": [0, 0, 0, 0, 0, 0, 1, 0]}
JSON
: > "$T/mode"
python3 "$ROOT/tests/tools/fake_openai.py" --port-file "$T/port" --mode-file "$T/mode" --dim 8 \
  --model fake-clip --vectors "$T/known.json" 2> "$T/fake.err" &
FAKE_PID=$!
for _ in $(seq 100); do [[ -s $T/port ]] && break; sleep 0.1; done
[[ -s $T/port ]] || fail "fake server did not start: $(cat "$T/fake.err")"
BASE=http://127.0.0.1:$(cat "$T/port")

vt init > /dev/null
vt config set frame_embed.backend openai
vt config set frame_embed.url "$BASE"
vt config set frame_embed.model fake-clip
id=$(vt add "$T/talk.mp4")
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]['state']") == done ]] ||
  fail "frame_embed not done: $(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]")"

# an image model that embeds no text: words only, no pictures
vt search --json whiteboard > "$T/s.json"
[[ $(json "$T/s.json" "d['mode']") == words && $(json "$T/s.json" "len(d['hits'])") == 0 ]] ||
  fail "without joint text: $(cat "$T/s.json")"

# joint text: auto is hybrid, and the slide's frame is found by a word it does not show
vt config set frame_embed.joint_text true
vt search --json whiteboard > "$T/s.json"
[[ $(json "$T/s.json" "d['mode']") == hybrid ]] || fail "auto with a joint frame model: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "d['hits'][0]['source']") == visual ]] || fail "no visual hit: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "d['hits'][0]['matched']") == "['visual']" ]] || fail "matched: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "d['hits'][0]['video_id']") == "$id" ]] || fail "wrong video"
json "$T/s.json" "d['hits'][0]['text']" | grep -qi quarterly || fail "the hit's text is not the frame's: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "d['hits'][0]['start_s'] == 0") == True ]] || fail "the hit is not the slide's shot"
# above the floor of the frame model's space, measured with its text tower
[[ $(json "$T/s.json" "d['hits'][0]['relevance'] in ('weak', 'strong')") == True ]] || fail "no relevance: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "[f['signal'] for f in d['floors']] == ['visual'] and d['floors'][0]['space'].startswith('openai-image:')") == True ]] ||
  fail "floors: $(cat "$T/s.json")"
# a word whose vector is far from every picture: no picture, nothing below the floor shown
vt search --json --mode meaning banana > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits']) == 0 and d['floors'][0]['below_floor'] >= 1") == True ]] ||
  fail "banana found a picture: $(cat "$T/s.json")"
# a word shown on the slide: the screen hit and the picture are one moment
vt search --json quarterly > "$T/s.json"
json "$T/s.json" "sorted(d['hits'][0]['matched'])" | grep -q "'visual', 'words'" ||
  fail "screen and visual not merged: $(cat "$T/s.json")"
# meaning mode without a text model still answers with pictures; source:title excludes them
vt search --json --mode meaning whiteboard > "$T/s.json"
[[ $(json "$T/s.json" "d['hits'][0]['source']") == visual ]] || fail "meaning mode: $(cat "$T/s.json")"
vt search --json --mode meaning "whiteboard source:title" > "$T/s.json" 2> /dev/null || true
[[ $(json "$T/s.json" "len(d.get('hits', []))") == 0 ]] || fail "source:title gave pictures"
"$VIDTHEQUE" -L "$LIB" search whiteboard | grep -q "visual (visual)" || fail "text output lacks the signal"

# the server gone: the words answer, with a warning naming the pictures
stop_fake
vt search --json quarterly > "$T/s.json" 2> "$T/err"
[[ $(json "$T/s.json" "len(d['hits']) > 0 and 'pictures left out' in d.get('warning', '')") == True ]] ||
  fail "server down: $(cat "$T/s.json")"
echo "ok visual search"
