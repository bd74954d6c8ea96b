#!/usr/bin/env bash
# The video page's viewer fixes of issue 25 (item 6), over HTTP and in Chromium
# (tests/browser/viewer.mjs at 1366x900 and 390x844). Fixtures: a 100 s clip of 230 quick
# shots (0.4 s each, six coloured grids in turn, so later shots repeat earlier frames:
# duplicates) and one long 8 s shot at the end, with a sidecar transcript of 40 cues; an
# 8 s clip of two slides joined by a 1.5 s dissolve; an 8 s clip added by its URL (served on
# 127.0.0.1). Checked: the strip draws every shot
# to the end of the video (at most 200 tiles, the narrowest merged); a screen hit on the
# second slide starts after the dissolve (search and page agree); the card's poster is the
# long shot's frame, not the first one; a signed-in user chooses another (POST
# /v/ID/poster with the CSRF token; without it 403, a duplicate refused, read-only 405).
# In the browser: a tapped cue keeps the player in view on a phone; "duplicate of #N"
# scrolls on the page without reloading or stopping the player; the strip's last tile
# seeks to the long shot; "on the source at this second" follows playback. Everything
# talks to 127.0.0.1 only.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"
command -v node > /dev/null || fail "node is missing: install nodejs (scripts/install-deps.sh)"
[[ -x /usr/bin/chromium ]] || fail "/usr/bin/chromium is missing: install Debian's chromium (scripts/install-deps.sh)"
[[ -d $ROOT/tests/browser/node_modules/playwright-core ]] ||
  fail "tests/browser/node_modules is missing: run bash scripts/setup.sh"

req() {
  local want=$1; shift
  local got
  got=$(curl -s --max-time 30 -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@") || true
  [[ $got == "$want" ]] || fail "curl $* gave $got, expected $want: $(head -c 300 "$T/body")"
}

# ---- the clip of many shots: six segments encoded once, then concatenated (stream copy) ----
colors=(red lime blue yellow magenta cyan)
: > "$T/list.txt"
for k in 0 1 2 3 4 5; do
  ffmpeg -v error -y -f lavfi -i "color=c=${colors[$k]}:s=320x180:r=25:d=0.4,drawgrid=w=$((8 + 6 * k)):h=$((8 + 6 * k)):t=3:c=black" \
    -f lavfi -i "sine=f=300:d=0.4" -c:v libx264 -preset veryfast -g 10 -pix_fmt yuv420p \
    -c:a aac -ar 44100 -shortest "$T/seg$k.mp4"
done
ffmpeg -v error -y -f lavfi -i "color=c=gray:s=320x180:r=25:d=8,drawbox=x=100:y=60:w=120:h=60:c=white:t=fill" \
  -f lavfi -i "sine=f=300:d=8" -c:v libx264 -preset veryfast -g 50 -pix_fmt yuv420p -c:a aac \
  -ar 44100 -shortest "$T/long.mp4"
for i in $(seq 0 229); do echo "file '$T/seg$((i % 6)).mp4'" >> "$T/list.txt"; done
echo "file '$T/long.mp4'" >> "$T/list.txt"
ffmpeg -v error -y -f concat -safe 0 -i "$T/list.txt" -c copy -metadata title="Many shots" "$T/many.mp4"
python3 - "$T/many.srt" << 'PY'
import sys
def ts(s):
    return "%02d:%02d:%02d,%03d" % (s // 3600, s // 60 % 60, s % 60, 0)
with open(sys.argv[1], "w") as f:
    for i in range(40):
        f.write("%d\n%s --> %s\ncue %d of the many shots talk\n\n" % (i + 1, ts(2 * i + 1), ts(2 * i + 2), i + 1))
PY
expect_exit 0 vt add "$T/many.mp4"
many=$(cat "$T/out")
vt export "$many" > "$T/many.json"
nshots=$(json "$T/many.json" "len(d['shots'])")
[[ $nshots -gt 200 ]] || fail "the fixture wants more than 200 shots, the stage found $nshots"
[[ $(json "$T/many.json" "len(d['cues'])") == 40 ]] || fail "the sidecar's 40 cues: $(json "$T/many.json" "len(d['cues'])")"
ndup=$(json "$T/many.json" "sum(1 for f in d['frames'] if f.get('duplicate_of') is not None)")
[[ $ndup -gt 0 ]] || fail "the repeated shots give no duplicate frame"
long_kf=$(json "$T/many.json" "[f['index'] for f in d['frames'] if f['shot'] == len(d['shots']) - 1 and f.get('duplicate_of') is None and f.get('image')][0]")
note "many: $nshots shots, $ndup duplicates, the long shot's keyframe $long_kf"

# ---- two slides joined by a dissolve ----
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
ffmpeg -v error -y -f lavfi -i "color=white:s=640x360:r=25:d=4.5,drawtext=fontfile=$font:text='Welcome Overview':fontsize=44:x=40:y=60" \
  -f lavfi -i "color=0x102040:s=640x360:r=25:d=5,drawtext=fontfile=$font:text='Quarterly Harbor Results':fontsize=44:x=40:y=200:fontcolor=white" \
  -filter_complex "[0:v][1:v]xfade=transition=fade:duration=1.5:offset=3,format=yuv420p[v]" -map '[v]' \
  -c:v libx264 -preset veryfast -metadata title="Dissolve talk" "$T/dissolve.mp4"
expect_exit 0 vt add "$T/dissolve.mp4"
dis=$(cat "$T/out")
vt export "$dis" > "$T/dis.json"
"$VIDTHEQUE" -L "$LIB" search --json "quarterly video:$dis source:screen" > "$T/dhits.json"
python3 - "$T/dis.json" "$T/dhits.json" << 'PY' || fail "a screen hit starts inside the dissolve"
import json, sys
d, h = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sh = [s for s in d['shots'] if s['transition'] and s['transition']['kind'] != 'cut']
assert sh, ("no gradual transition found", d['shots'])
tr = sh[0]['transition']
assert h['hits'], "'quarterly' is not found on the screen"
kf = min(f['t_s'] for f in d['frames'] if f['shot'] == sh[0]['index'])
for x in h['hits']:
    # stable: at or after the transition's end, or at the keyframe if that comes first
    assert x['start_s'] >= min(tr['end_s'], kf) - 1e-3, (x, tr, kf)
print("# dissolve %.2f-%.2f, keyframe %.2f, hit at %.2f" % (tr['start_s'], tr['end_s'], kf, h['hits'][0]['start_s']))
PY
dhit=$(json "$T/dhits.json" "d['hits'][0]['start_s']")

# ---- a video from a URL (yt-dlp's generic extractor, served on 127.0.0.1): its page
# kept, so "on the source at this second" has a second to follow ----
command -v yt-dlp > /dev/null || fail "yt-dlp is not installed (scripts/install-deps.sh)"
mkdir -p "$T/www"
gen_clip "$T/www/remote.mp4" 8 "Served talk"
python3 "$ROOT/tests/tools/httpserve.py" "$T/www" --log "$T/http.log" > "$T/http.port" &
HS_PID=$!
for _ in $(seq 100); do grep -q '^port ' "$T/http.port" && break; sleep 0.1; done
HP=$(sed -n 's/^port //p' "$T/http.port")
got=0
[[ -z $HP ]] || vt add "http://127.0.0.1:$HP/remote.mp4" > "$T/out" 2> "$T/err" || got=$?
kill "$HS_PID" 2> /dev/null || true
wait "$HS_PID" 2> /dev/null || true
[[ -n $HP ]] || fail "the test HTTP server did not start"
[[ $got == 0 ]] || fail "adding the URL exited $got: $(head -c 500 "$T/err")"
remote=$(cat "$T/out")

# ---- over HTTP, read-only: the strip, the poster picked, no poster form ----
start_server --read-only
req 200 "$B/v/$many"
python3 - "$T/body" "$T/many.json" << 'PY' || fail "the strip does not draw every shot"
import json, re, sys
page, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
strip = re.search(r'<svg class="shots".*?</svg>', page, re.S).group(0)
tiles = re.findall(r'<a class="shot"[^>]*data-shots="(\d+)"[^>]*>.*?<rect class="s\d" x="([0-9.]+)%" y="12" width="([0-9.]+)%"', strip, re.S)
assert 0 < len(tiles) <= 200, len(tiles)
assert sum(int(n) for n, _, _ in tiles) == len(d['shots']), (sum(int(n) for n, _, _ in tiles), len(d['shots']))
end = 0.0
for n, x, w in tiles:
    assert abs(float(x) - end) < 0.01, ("a gap in the strip", x, end)
    end = float(x) + float(w)
assert end > 99.9, ("the strip stops at %.2f%%" % end)
assert int(tiles[-1][0]) == 1, "the long shot is merged with others"
print("# strip: %d tiles for %d shots, to %.2f%%" % (len(tiles), len(d['shots']), end))
PY
grep -q 'class="dup" href="#frame-' "$T/body" || fail "no duplicate link on the page itself"
grep -q 'details class="noise"' "$T/body" && note "noise lines folded"
grep -q -e 'action="/v/[^"]*/poster"' "$T/body" && fail "read-only page has a poster form"
req 405 -d "frame=0" "$B/v/$many/poster"
req 200 "$B/v/$remote"
grep -qF "id=\"source-at\" rel=\"noopener noreferrer nofollow\" data-base=\"http://127.0.0.1:$HP/remote.mp4#t=\" data-tail=\"\" href=\"http://127.0.0.1:$HP/remote.mp4#t=0\"" "$T/body" ||
  fail "the source's link cannot follow playback: $(grep -o '<a id="source-at"[^>]*>' "$T/body")"
req 200 "$B/api/videos"
[[ $(json "$T/body" "[v['poster'] for v in d['videos'] if v['id'] == '$many'][0]") == "/api/videos/$many/frames/$long_kf.jpg" ]] ||
  fail "the card's poster is $(json "$T/body" "[v['poster'] for v in d['videos'] if v['id'] == '$many'][0]"), want the long shot's frame $long_kf"
RO=$B
RO_PID=$SRV_PID
SRV_PID=

# ---- signed in: choose another poster ----
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$T/token"
TOKEN=$(cat "$T/token")
start_server --token-file "$T/token"
req 303 -c "$T/jar" -d "token=$TOKEN" "$B/login"
req 200 -b "$T/jar" "$B/v/$many"
CSRF=$(grep -o 'name="csrf" value="[0-9a-f]*"' "$T/body" | head -n 1 | sed 's/.*value="//; s/"$//')
[[ $CSRF =~ ^[0-9a-f]{64}$ ]] || fail "no CSRF token on the signed-in video page"
grep -qF "the card's poster" "$T/body" || fail "the signed-in page does not say which frame is the poster"
grep -q 'action="/v/[^"]*/poster"' "$T/body" || fail "no poster form for a signed-in user"
req 403 -b "$T/jar" -H "Origin: $B" -d "frame=0" "$B/v/$many/poster"
req 400 -b "$T/jar" -H "Origin: $B" -d "csrf=$CSRF&frame=-1" "$B/v/$many/poster"
req 400 -b "$T/jar" -H "Origin: $B" -d "csrf=$CSRF&frame=1x" "$B/v/$many/poster"
poster() { curl -s "$B/api/videos" > "$T/v.json"; json "$T/v.json" "[v['poster'] for v in d['videos'] if v['id'] == '$many'][0]"; }
dupf=$(json "$T/many.json" "[f['index'] for f in d['frames'] if f.get('duplicate_of') is not None][0]")
req 303 -b "$T/jar" -H "Origin: $B" -d "csrf=$CSRF&frame=$dupf" "$B/v/$many/poster"
req 303 -b "$T/jar" -H "Origin: $B" -d "csrf=$CSRF&frame=0" "$B/v/$many/poster"
[[ $(hdr_loc=$(grep -i '^location:' "$T/hdr" | tr -d '\r' | cut -d' ' -f2); echo "$hdr_loc") == "/v/$many#frame-0" ]] ||
  fail "the poster form goes back to $(grep -i '^location:' "$T/hdr")"
for _ in $(seq 300); do [[ $(poster) == "/api/videos/$many/frames/0.jpg" ]] && break; sleep 0.1; done
[[ $(poster) == "/api/videos/$many/frames/0.jpg" ]] || fail "the chosen poster is $(poster), want frame 0"
req 200 -b "$T/jar" "$B/queue"
grep -q "job job-failed.*poster <code>$dupf</code>" "$T/body" || fail "the duplicate frame $dupf was not refused: $(grep poster "$T/body")"

# ---- in the browser, desktop and phone ----
shots=$ROOT/tests/out/screenshots
mkdir -p "$shots"
rc=0
timeout 300 node "$ROOT/tests/browser/viewer.mjs" "$RO" "$many" "$dis" "$dhit" "$shots" "$remote" \
  "http://127.0.0.1:$HP/remote.mp4" || rc=$?
kill "$RO_PID" 2> /dev/null || true
wait "$RO_PID" 2> /dev/null || true
[[ $rc == 0 ]] || fail "viewer.mjs exited $rc (server stderr: $(tail -c 500 "$T/srv.err"))"
echo "all good"
