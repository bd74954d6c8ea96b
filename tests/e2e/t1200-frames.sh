#!/usr/bin/env bash
# What was shown, by likeness (issue 12): the frame_embed stage with the MobileNet v1 0.25
# model of tests/data/mobilenet-v1-0.25-224, "more like this", and the same footage across
# videos. Three generated talks of white slides on one template: A and B share a segment
# (a slide and a still cutaway, 12 s) that B carries re-encoded at a quarter of the
# pixels and 200 kb/s; C shares nothing but looks alike (same template, other words).
# Truth: the shared segment is A 8-20 s and B 7-19 s. The reuse links appear between A and
# B (both directions, spans within 1.5 s of the truth), none for C; `similar` ranks the
# shared footage's frame first; the API and pages answer; bad input gets clean errors.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"

MODEL=$DATA/mobilenet-v1-0.25-224
if ! ls "$MODEL"/*.tflite > /dev/null 2>&1; then
  note "skipped: no TFLite test model in $MODEL (the image model's branch is not merged)"
  exit 0
fi

F=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
mkdir -p "$T/in" && cd "$T/in"
enc() { ffmpeg -v error -y -f lavfi -i "$2" -c:v libx264 -preset veryfast -pix_fmt yuv420p -r 30 "$1"; }
# slide OUT SECONDS TITLE LINE1 LINE2: one template, other words
slide() {
  enc "$1" "color=white:s=1280x720:r=30:d=$2,drawtext=fontfile=$F:text='$3':fontsize=64:x=80:y=80:fontcolor=0x1040a0,drawtext=fontfile=$F:text='$4':fontsize=40:x=80:y=260:fontcolor=black,drawtext=fontfile=$F:text='$5':fontsize=40:x=80:y=340:fontcolor=black"
}
slide s1.mp4 6 "Results chart" "Market garden window" "Purple river energy"
enc s2.mp4 "mandelbrot=s=1280x720:r=30,trim=end_frame=1,loop=loop=179:size=1,setpts=N/30/TB"
slide a1.mp4 8 "Overview station" "History science network" "People planet ocean"
slide a2.mp4 8 "Summary forest" "Silver engine summer" "Winter morning evening"
slide b1.mp4 7 "Methods camera" "Picture number letter" "Bridge castle mountain"
slide b2.mp4 9 "Questions valley" "Kitchen dinner teacher" "Student program system"
slide c1.mp4 10 "Design memory" "Storage country harbor" "Village journey thunder"
slide c2.mp4 10 "Roadmap shadow" "Orange yellow banana" "Rocket pocket basket"
printf 'file %s\n' s1.mp4 s2.mp4 > l.txt
ffmpeg -v error -y -f concat -i l.txt -c copy shared.mp4
ffmpeg -v error -y -i shared.mp4 -vf scale=640:360 -b:v 200k -c:v libx264 -pix_fmt yuv420p shared_small.mp4
mk() {
  local out=$1; shift
  printf 'file %s\n' "$@" > l.txt
  ffmpeg -v error -y -f concat -i l.txt -f lavfi -i "sine=f=300:d=40" -vf "scale=1280:720,fps=30,setsar=1" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -shortest "$out"
}
mk talkA.mp4 a1.mp4 shared.mp4 a2.mp4
mk talkB.mp4 b1.mp4 shared_small.mp4 b2.mp4
mk talkC.mp4 c1.mp4 c2.mp4
cd - > /dev/null

state_of() { json "$T/doc.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]['$2']"; }
vt init > /dev/null
# nothing configured: skipped with the reason, no vectors, no links; similar says why
VA=$(vt add "$T/in/talkA.mp4")
vt export "$VA" > "$T/doc.json"
[[ $(state_of "$VA" state) == skipped ]] || fail "frame_embed not skipped without a model"
state_of "$VA" error | grep -q "no frame embedding model configured" || fail "skip reason: $(state_of "$VA" error)"
expect_exit 1 vt similar "$VA" --frame 1
one_line_err
grep -q "no picture vector" "$T/err" || fail "similar without vectors: $(cat "$T/err")"
# a broken config fails the stage with one line, and changes nothing else
vt config set frame_embed.backend tflite
vt config set frame_embed.model "$T/nothing.tflite"
vt redo "$VA" --stage frame_embed > /dev/null 2>&1 || true
vt export "$VA" > "$T/doc.json"
[[ $(state_of "$VA" state) == failed ]] || fail "a missing model file did not fail the stage"
vt config set frame_embed.backend xyz 2>/dev/null || true

# the model, named by its folder under LIBRARY/models/
vt config unset frame_embed.backend
mkdir -p "$LIB/models" && cp -r "$MODEL" "$LIB/models/mobilenet"
vt config set frame_embed.model mobilenet
vt redo "$VA" --stage frame_embed > /dev/null
VB=$(vt add "$T/in/talkB.mp4")
VC=$(vt add "$T/in/talkC.mp4")
for v in "$VA" "$VB" "$VC"; do
  vt export "$v" > "$T/doc.json"
  st=$(state_of "$v" state); m=$(state_of "$v" model)
  [[ $st == done ]] || fail "frame_embed of $v: $st $(state_of "$v" error)"
  [[ $m == *tflite*"256 d"*"frame(s)"* ]] || fail "provenance of $v: $m"
  kept=$(json "$T/doc.json" "d['stored']['keyframes_kept']")
  [[ $m == *"; $kept frame(s)" ]] || fail "$v: $kept kept frames, provenance says $m"
done

# the same footage: A <-> B, spans near the truth; C none
vt export "$VA" > "$T/a.json"; vt export "$VB" > "$T/b.json"; vt export "$VC" > "$T/c.json"
[[ $(json "$T/a.json" "len(d['reuse'])") == 1 ]] || fail "A reuse: $(json "$T/a.json" "d['reuse']")"
[[ $(json "$T/b.json" "len(d['reuse'])") == 1 ]] || fail "B reuse: $(json "$T/b.json" "d['reuse']")"
[[ $(json "$T/c.json" "len(d['reuse'])") == 0 ]] || fail "C reuse: $(json "$T/c.json" "d['reuse']")"
near() { python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1])-float(sys.argv[2]))<=1.5 else 1)" "$1" "$2"; }
r="d['reuse'][0]"
[[ $(json "$T/a.json" "$r['video_id']") == "$VB" && $(json "$T/b.json" "$r['video_id']") == "$VA" ]] ||
  fail "reuse points elsewhere"
for chk in "a.json start_s 8" "a.json end_s 20" "a.json other_start_s 7" "a.json other_end_s 19" \
           "b.json start_s 7" "b.json end_s 19" "b.json other_start_s 8" "b.json other_end_s 20"; do
  set -- $chk
  got=$(json "$T/$1" "$r['$2']")
  near "$got" "$3" || fail "$1 $2 is $got, truth $3"
done
[[ $(json "$T/a.json" "$r['title']") == talkB.mp4 ]] || fail "title of the other video"
vt show "$VA" > "$T/show.txt"
grep -q "also appears in $VB at 0:0[67]-0:1[89]" "$T/show.txt" || fail "show: $(grep -A2 'same footage' "$T/show.txt")"
vt show "$VC" > "$T/show.txt"
! grep -q "also appears" "$T/show.txt" || fail "show C lists reuse"

# more like this: the first frame of A's shared segment finds B's copy first
fA=$(json "$T/a.json" "[f['index'] for f in d['frames'] if 8 <= f['t_s'] < 14 and f['duplicate_of'] is None][0]")
vt similar --json "$VA" --frame "$fA" --limit 5 > "$T/sim.json"
[[ $(json "$T/sim.json" "d['results'][0]['video_id']") == "$VB" ]] || fail "similar: $(cat "$T/sim.json")"
json "$T/sim.json" "7 <= d['results'][0]['t'] < 13" | grep -q True || fail "similar first not the shared slide"
[[ $(json "$T/sim.json" "len(d['results'])") == 5 ]] || fail "limit 5"
json "$T/sim.json" "all(not (r['video_id']=='$VA' and r['frame']==$fA) for r in d['results'])" | grep -q True ||
  fail "the frame itself is among its lookalikes"
json "$T/sim.json" "d['results'] == sorted(d['results'], key=lambda r: -r['similarity'])" | grep -q True ||
  fail "not best first"
vt similar "$VA" --frame "$fA" --limit 2 > "$T/sim.txt"
[[ $(grep -c "^[A-Za-z0-9_-]* [0-9:]* frame " "$T/sim.txt") == 2 ]] || fail "similar text: $(cat "$T/sim.txt")"
# the front binary answers alone (no vidtheque-full beside it: no model, no FFmpeg); a
# catalog on PostgreSQL is always handed to vidtheque-full (the front links no libpq)
if ! on_pg; then
  mkdir -p "$T/front" && cp "$VIDTHEQUE" "$T/front/vidtheque"
  "$T/front/vidtheque" -q -L "$LIB" similar --json "$VA" --frame "$fA" --limit 1 > "$T/sim1.json" ||
    fail "similar needs more than the front binary"
  [[ $(json "$T/sim1.json" "d['results'][0]['video_id']") == "$VB" ]] || fail "front similar: $(cat "$T/sim1.json")"
fi
# the still cutaway: found in B too
fA2=$(json "$T/a.json" "[f['index'] for f in d['frames'] if 14 <= f['t_s'] < 20 and f['duplicate_of'] is None][0]")
vt similar --json "$VA" --frame "$fA2" --limit 1 > "$T/sim.json"
json "$T/sim.json" "d['results'][0]['video_id']=='$VB' and 13 <= d['results'][0]['t'] < 19" | grep -q True ||
  fail "cutaway: $(cat "$T/sim.json")"

# hostile input: one line, exit 1 (not found) or 2 (usage)
expect_exit 1 vt similar "$VA" --frame 9999; one_line_err
expect_exit 1 vt similar nosuchvideo --frame 0; one_line_err
expect_exit 1 vt similar '../../etc' --frame 0; one_line_err
expect_exit 2 vt similar "$VA" --frame -1
expect_exit 2 vt similar "$VA" --frame abc
expect_exit 2 vt similar "$VA" --frame 1 --limit 0
expect_exit 2 vt similar "$VA" --frame 1 --limit 101
expect_exit 2 vt similar "$VA"

# the web: API, pages, links, filter
start_server
code() { curl -s -o "$T/body" -w '%{http_code}' "$B$1"; }
[[ $(code "/api/videos/$VA/frames/$fA/similar?limit=3") == 200 ]] || fail "API similar"
[[ $(json "$T/body" "d['results'][0]['video_id']") == "$VB" ]] || fail "API similar first: $(cat "$T/body")"
[[ $(json "$T/body" "len(d['results'])") == 3 ]] || fail "API limit"
thumb=$(json "$T/body" "d['results'][0]['thumbnail']")
[[ $(code "$thumb") == 200 ]] || fail "thumbnail $thumb"
for bad in "/api/videos/$VA/frames/9999/similar 404" "/api/videos/nosuch/frames/0/similar 404" \
           "/api/videos/$VA/frames/x/similar 400" "/api/videos/$VA/frames/-1/similar 400" \
           "/api/videos/$VA/frames/01/similar 400" "/api/videos/$VA/frames/1/similar?limit=0 400" \
           "/api/videos/$VA/frames/1/similar?limit=abc 400" "/api/videos/$VA/frames/99999999999/similar 400" \
           "/v/$VA/frames/9999/similar 404" "/v/nosuch/frames/0/similar 404" "/v/$VA/frames/x/similar 404" \
           "/v/$VA/frames/1/similar?limit=1000 400" "/?reuse=x 400"; do
  set -- $bad
  [[ $(code "$1") == "$2" ]] || fail "$1: $(code "$1"), expected $2"
done
[[ $(code "/api/videos/$VA/frames/9999/similar") == 404 ]] && json "$T/body" "d['error']['code']" | grep -q not_found ||
  fail "API 404 body: $(cat "$T/body")"
[[ $(code "/v/$VA") == 200 ]] || fail "video page"
grep -q "href=\"/v/$VA/frames/$fA/similar\">more like this" "$T/body" || fail "no more like this link"
grep -q "also appears in <a class=\"other\" href=\"/v/$VB?t=" "$T/body" || fail "video page: no reuse link"
[[ $(code "/v/$VA/frames/$fA/similar") == 200 ]] || fail "similar page"
grep -q "href=\"/v/$VB?t=\(7\|8\|9\|10\|11\|12\)\(\.[0-9]*\)\?\"><img" "$T/body" || fail "similar page: no thumbnail link to B"
[[ $(code "/?reuse=1") == 200 ]] || fail "library filter"
grep -q "href=\"/v/$VA\"" "$T/body" && grep -q "href=\"/v/$VB\"" "$T/body" || fail "filter misses A or B"
! grep -q "href=\"/v/$VC\"" "$T/body" || fail "filter lists C"
stop_server

# another model (the softmax tensor: another space): A re-embedded alone is compared with
# nothing of B's old space, and its links go; back to the first model, they come back
vt config set frame_embed.tensor MobilenetV1/Predictions/Reshape_1
vt redo "$VA" --stage frame_embed > /dev/null
vt export "$VA" > "$T/a.json"
m=$(json "$T/a.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]['model']")
[[ $m == *"1001 d"* ]] || fail "tensor not used: $m"
[[ $(json "$T/a.json" "len(d['reuse'])") == 0 ]] || fail "links across spaces: $(json "$T/a.json" "d['reuse']")"
vt similar --json "$VA" --frame "$fA" > "$T/sim.json"
json "$T/sim.json" "all(r['video_id'] == '$VA' for r in d['results'])" | grep -q True ||
  fail "similar mixed spaces: $(cat "$T/sim.json")"
vt config unset frame_embed.tensor
vt redo "$VA" --stage frame_embed > /dev/null
vt export "$VA" > "$T/a.json"
[[ $(json "$T/a.json" "len(d['reuse'])") == 1 ]] || fail "links not back with the first model"

# a frame's picture that does not decode fails the stage with one line naming the frame
img=$(json "$T/c.json" "[f['image'] for f in d['frames'] if f['duplicate_of'] is None][0]")
echo "not a jpeg" > "$LIB/$img"
vt redo "$VC" --stage frame_embed > /dev/null 2>&1 || true
vt export "$VC" > "$T/c.json"
[[ $(json "$T/c.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]['state']") == failed ]] ||
  fail "a broken frame file did not fail frame_embed"
json "$T/c.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]['error']" | grep -q "^frame [0-9]" ||
  fail "error does not name the frame: $(json "$T/c.json" "[s for s in d['stages'] if s['name']=='frame_embed'][0]['error']")"

# re-running A's stage recomputes the links (still one, both sides); removing B drops them
vt redo "$VA" --stage frame_embed > /dev/null
vt export "$VB" > "$T/b.json"
[[ $(json "$T/b.json" "len(d['reuse'])") == 1 ]] || fail "B after A's redo: $(json "$T/b.json" "d['reuse']")"
# keyframe replaced: frame_embed's vectors and links go with it, and come back
vt redo "$VB" --stage keyframe > /dev/null
vt export "$VB" > "$T/b.json"
[[ $(json "$T/b.json" "len(d['reuse'])") == 1 ]] || fail "B after keyframe redo: $(json "$T/b.json" "d['reuse']")"
vt rm "$VB" > /dev/null
vt export "$VA" > "$T/a.json"
[[ $(json "$T/a.json" "len(d['reuse'])") == 0 ]] || fail "A still links the removed B"
expect_exit 1 vt similar "$VB" --frame 0; one_line_err
vt similar --json "$VA" --frame "$fA" > "$T/sim.json"
json "$T/sim.json" "all(r['video_id'] != '$VB' for r in d['results'])" | grep -q True || fail "removed B still similar"
echo ok
