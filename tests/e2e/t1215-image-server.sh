#!/usr/bin/env bash
# The "openai" image-embedding backend (lib/ml/embed_openai.c over lib/ml/embed_http.c and
# lib/base/http.c) against the fake CLIP-class server of tests/tools/fake_openai.py on loopback.
# Pictures generated with ffmpeg, each of its own size, come back as unit vectors in input
# order (the fake answers in reverse order with indexes), equal to the fake's documented
# vector of "image:WxH" for the size the client sent (so the test also sees that a picture
# is shrunk to 512 px on its longer side), across batches and in both request shapes
# (Infinity/OpenAI data URLs with "modality": "image", and Jina objects). A joint
# text-image model embeds a query into the images' space (a mapped text lands next to its
# picture, blank texts are zero vectors); without joint_text the same call is refused with
# VT_EINVAL. Every misbehaviour gives one error line with the right code: VT_EIO (-1: timeout,
# 500s, truncated or non-JSON answer, server down) or VT_EINVAL (-2: 404 model missing,
# wrong dimension or count, text refused by an image-only model, a bad URL or API style,
# 401); the API key is never shown. Driver: tests/tools/imgembeddump.c.
. "$(dirname "$0")/lib.sh"

libdir=$(dirname "$VIDTHEQUE")
[[ -f $libdir/libvidtheque.a ]] || fail "'$libdir/libvidtheque.a': missing (run make first)"
nm "$libdir/libvidtheque.a" > "$T/nm" 2> /dev/null || true
grep -q ' [DR] vt_embed_openai$' "$T/nm" ||
  fail "libvidtheque.a has no vt_embed_openai (lib/ml/embed_openai.c)"
build_tool imgembeddump

# ---- pictures: each of its own size (WxH -> the size the server should receive) ----
sizes=(64x48:64x48 80x40:80x40 1280x720:512x288 300x600:256x512 100x100:100x100
  2000x8:512x2)
: > "$T/images"
: > "$T/sent"
for s in "${sizes[@]}"; do
  src=${s%%:*}
  ffmpeg -v error -f lavfi -i "testsrc2=size=$src:rate=1" -frames:v 1 -q:v 3 \
    "$T/img-$src.jpg" || fail "ffmpeg cannot make a $src picture"
  echo "$T/img-$src.jpg" >> "$T/images"
  echo "${s#*:}" >> "$T/sent"
done

FAKE_PID=
stop_fake() { if [[ -n $FAKE_PID ]]; then kill "$FAKE_PID" 2> /dev/null; wait "$FAKE_PID" 2> /dev/null || true; fi; FAKE_PID=; }
trap 'stop_fake; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
# a text placed next to the 100x100 picture, another far from it
cat > "$T/known.json" << 'JSON'
{"image:100x100": [1, 0, 0, 0, 0, 0, 0, 0],
 "a red square": [0.95, 0.1, 0, 0, 0, 0, 0, 0],
 "a bar chart": [0, 0, 1, 0, 0, 0, 0, 0]}
JSON
: > "$T/mode"
python3 "$ROOT/tests/tools/fake_openai.py" --port-file "$T/port" --mode-file "$T/mode" --dim 8 \
  --model fake-clip --vectors "$T/known.json" --received-file "$T/received" --dump-dir "$T" \
  --api-key sekrit-key-42 2> "$T/fake.err" &
FAKE_PID=$!
for _ in $(seq 100); do [[ -s $T/port ]] && break; sleep 0.1; done
[[ -s $T/port ]] || fail "fake server did not start: $(cat "$T/fake.err")"
BASE=http://127.0.0.1:$(cat "$T/port")
export EMBEDDUMP_API_KEY=sekrit-key-42
ie() { "$T/imgembeddump" "$@"; }

# check_images OUT.json: the vectors are the fake's for the sizes sent, in order
check_images() {
  python3 - "$T/sent" "$1" "$BASE" "$T/known.json" << 'PY' || fail "image vectors differ from the fake's ($1)"
import hashlib, json, math, sys
sent = open(sys.argv[1]).read().split()
d = json.load(open(sys.argv[2]))
known = json.load(open(sys.argv[4]))
assert d["dim"] == 8, d["dim"]
assert d["model"] == "openai-image fake-clip at %s (8 d)" % sys.argv[3], d["model"]
assert d["id"] == "openai-image:fake-clip@%s" % sys.argv[3], d["id"]
assert len(d["vectors"]) == len(sent), len(d["vectors"])
for size, v in zip(sent, d["vectors"]):
    key = "image:" + size
    raw = known.get(key) or [(hashlib.sha256((key + "#0").encode()).digest()[j] - 127.5) / 127.5
                             for j in range(8)]
    n = math.sqrt(sum(x * x for x in raw))
    want = [x / n for x in raw]
    assert abs(sum(x * x for x in v) - 1) < 1e-5, (size, v)
    assert all(abs(a - b) < 1e-5 for a, b in zip(v, want)), (size, v, want)
PY
}

# ---- images: order, sizes, batches, both request shapes ----
ie -b 4 openai fake-clip "$BASE" < "$T/images" > "$T/out.json" 2> "$T/err" ||
  fail "imgembeddump: $(cat "$T/err")"
check_images "$T/out.json"
[[ $(json "$T/out.json" 'd["has_text"]') == False ]] || fail "has_text without joint_text"
# what the server received: the probe (32x32), then the pictures shrunk to 512 px at most
{ echo 32x32; cat "$T/sent"; } > "$T/want-recv"
sed -n 's/^image \([0-9]*x[0-9]*\) [0-9]*$/\1/p' "$T/received" > "$T/got-recv"
cmp -s "$T/want-recv" "$T/got-recv" ||
  fail "sizes received: $(tr '\n' ' ' < "$T/got-recv"), expected $(tr '\n' ' ' < "$T/want-recv")"
ie -b 1 openai fake-clip "$BASE/v1/" < "$T/images" > "$T/out1.json" 2> "$T/err" ||
  fail "imgembeddump -b 1: $(cat "$T/err")"
[[ $(json "$T/out1.json" 'd["vectors"]') == "$(json "$T/out.json" 'd["vectors"]')" ]] ||
  fail "batch size changes the vectors"
ie -s jina openai fake-clip "$BASE" < "$T/images" > "$T/outj.json" 2> "$T/err" ||
  fail "imgembeddump -s jina: $(cat "$T/err")"
check_images "$T/outj.json"
# the picture sent is the picture given, shrunk: the 1280x720 one alone, compared with
# ffmpeg's own 512x288 of it
echo "$T/img-1280x720.jpg" | ie openai fake-clip "$BASE" > /dev/null 2> "$T/err" ||
  fail "one picture: $(cat "$T/err")"
psnr=$(ffmpeg -v info -i "$T/last.jpg" -i "$T/img-1280x720.jpg" -filter_complex \
  "[1:v]scale=512:288:flags=area[r];[0:v][r]psnr" -f null - 2>&1 |
  sed -n 's/.*PSNR .* average:\([0-9.]*\|inf\).*/\1/p')
[[ -n $psnr ]] || fail "no PSNR between the picture sent and its source"
python3 -c "import sys; sys.exit(0 if float('$psnr') > 25 else 1)" ||
  fail "the picture sent is not its source shrunk: PSNR $psnr dB"
note "picture sent vs source shrunk by ffmpeg: PSNR $psnr dB"
# a password in the URL is not in the provenance or the id
UBASE=${BASE/http:\/\//http://someone:sekrit-pw@}
ie openai fake-clip "$UBASE" < "$T/images" > "$T/outu.json" 2> "$T/err" ||
  fail "URL with userinfo: $(cat "$T/err")"
grep -q sekrit "$T/outu.json" && fail "the URL's password is in the provenance"
[[ $(json "$T/outu.json" 'd["id"]') == "openai-image:fake-clip@$BASE" ]] ||
  fail "id with userinfo: $(json "$T/outu.json" 'd["id"]')"
# no pictures: nothing to do, still a valid answer
ie openai fake-clip "$BASE" < /dev/null > "$T/out0.json" 2> "$T/err" ||
  fail "no pictures: $(cat "$T/err")"
[[ $(json "$T/out0.json" 'len(d["vectors"])') == 0 ]] || fail "vectors for no pictures"

# ---- texts into the images' space (joint text-image model) ----
printf '%s\n' "a red square" "" "a bar chart" "something else" > "$T/texts"
for style in openai jina; do
  ie -j -T -s $style -b 2 openai fake-clip "$BASE" < "$T/texts" > "$T/outt.json" 2> "$T/err" ||
    fail "joint texts ($style): $(cat "$T/err")"
  python3 - "$T/outt.json" "$T/out.json" << 'PY' || fail "text vectors wrong ($style)"
import json, sys
t = json.load(open(sys.argv[1]))
im = json.load(open(sys.argv[2]))
assert t["has_text"] is True
v = t["vectors"]
dot = lambda a, b: sum(x * y for x, y in zip(a, b))
square = im["vectors"][4]                      # the 100x100 picture
assert dot(v[0], square) > 0.95, dot(v[0], square)
assert v[1] == [0.0] * 8, v[1]                  # blank: the zero vector, not sent
assert abs(dot(v[2], square)) < 1e-6, dot(v[2], square)
assert abs(dot(v[3], v[3]) - 1) < 1e-5
PY
done
grep -q '^text $' "$T/received" && fail "a blank text was sent"

# ---- failures: one line, the right code ----
# expect_fail MODE CODE PATTERN INPUT [imgembeddump args...]
expect_fail() {
  local mode=$1 code=$2 pat=$3 input=$4; shift 4
  echo "$mode" > "$T/mode"
  expect_exit 1 "$T/imgembeddump" "$@" < "$input"
  one_line_err
  grep -q "^imgembeddump: code $code: " "$T/err" || fail "$mode: code not $code: $(cat "$T/err")"
  grep -qi -- "$pat" "$T/err" || fail "$mode: no '$pat' in: $(cat "$T/err")"
  grep -q sekrit "$T/err" && fail "$mode: the API key is in the message"
  note "$mode: $(cat "$T/err")"
}
I=$T/images
expect_fail ok -2 "image model .* cannot embed text" "$T/texts" -T openai fake-clip "$BASE"
expect_fail notext -2 "HTTP 400: model .* embeds no text" "$T/texts" -j -T openai fake-clip "$BASE"
expect_fail wrongdim -2 "not one space" "$T/texts" -j -T openai fake-clip "$BASE"
expect_fail "slow 5" -1 "timed out" "$I" -t 1 -r 1 openai fake-clip "$BASE"
expect_fail "fail500 9" -1 "HTTP 500: internal trouble" "$I" -r 2 openai fake-clip "$BASE"
expect_fail truncated -1 "not JSON" "$I" openai fake-clip "$BASE"
expect_fail garbage -1 "not JSON" "$I" openai fake-clip "$BASE"
expect_fail wrongdim -2 "wrong dimension" "$I" openai fake-clip "$BASE"
expect_fail wrongdim -2 "wrong dimension" "$I" -s jina openai fake-clip "$BASE"
expect_fail wrongcount -2 "vectors for 4 images" "$I" -b 4 openai fake-clip "$BASE"
expect_fail notfound -2 "HTTP 404: model .* not found" "$I" openai fake-clip "$BASE"
expect_fail ok -2 "HTTP 404: model \"noclip\" not found" "$I" openai noclip "$BASE"
expect_fail ok -2 "not an http(s) URL" "$I" openai fake-clip "ftp://127.0.0.1:1"
expect_fail ok -2 "no server URL" "$I" openai fake-clip
expect_fail ok -2 "'morse': unknown image API style" "$I" -s morse openai fake-clip "$BASE"
expect_fail ok -2 "bad image embedding batch size" "$I" -b 5000 openai fake-clip "$BASE"
EMBEDDUMP_API_KEY=wrong expect_fail ok -2 "HTTP 401: invalid api key" "$I" openai fake-clip "$BASE"

# ---- what passes within the retries ----
echo "fail500 2" > "$T/mode"
ie -r 3 openai fake-clip "$BASE" < "$I" > "$T/out2.json" 2> "$T/err" ||
  fail "two 500s then success: $(cat "$T/err")"
[[ $(json "$T/out2.json" 'd["vectors"]') == "$(json "$T/out.json" 'd["vectors"]')" ]] ||
  fail "vectors after retries differ"
echo "429" > "$T/mode"
ie openai fake-clip "$BASE" < "$I" > /dev/null 2> "$T/err" ||
  fail "429 with Retry-After: 1 then success: $(cat "$T/err")"

# ---- the server gone ----
stop_fake
expect_fail ok -1 "$BASE" "$I" -r 2 openai fake-clip "$BASE"
note "ok"
