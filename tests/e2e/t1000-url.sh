#!/usr/bin/env bash
# URL ingest through yt-dlp, with nothing leaving the machine: a local HTTP server
# on 127.0.0.1 serves generated talks, caption files and info JSON fixtures made
# like YouTube's. Checks the whole pipeline from a URL, metadata and the source's
# captions (json3 with word timings, WebVTT), lists and update, --no-keep-media,
# injection and policy, retries with backoff, caps, and a download killed half-way.
source "$(dirname "$0")/lib.sh"
command -v yt-dlp > /dev/null || fail "yt-dlp is not installed (scripts/install-deps.sh)"
W=$T/www
mkdir -p "$W"
export VIDTHEQUE_RETRY_BASE=0.3

HS_PID=
start_http() { # start_http [--rate N]: sets HS_PID, HP (port), U (base URL)
  python3 "$ROOT/tests/tools/httpserve.py" "$W" --log "$T/http.log" "$@" > "$T/http.port" &
  HS_PID=$!
  for _ in $(seq 100); do
    grep -q '^port ' "$T/http.port" && break
    sleep 0.1
  done
  HP=$(sed -n 's/^port //p' "$T/http.port")
  [[ -n $HP ]] || fail "the test HTTP server did not start"
  U=http://127.0.0.1:$HP
}
stop_http() { [[ -z $HS_PID ]] || { kill "$HS_PID" 2> /dev/null || true; wait "$HS_PID" 2> /dev/null || true; HS_PID=; }; }
trap 'stop_http; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

gen_clip "$W/talk.mp4" 8 "Served over HTTP"
gen_clip "$W/a.mp4" 4 "Entry A"
gen_clip "$W/b.mp4" 4 "Entry B"
gen_clip "$W/c.mp4" 4 "Entry C"
gen_clip "$W/nokeep.mp4" 4 "Not kept"
gen_clip "$W/policy.mp4" 2 "Policy"
# a larger file for the kill test and the caps: 20 s of noise at a high bitrate (no sound:
# what is tested is the download, and its stt would only find silence)
ffmpeg -v error -y -f lavfi -i "testsrc2=s=640x360:d=20,noise=alls=60:allf=t" \
  -c:v libx264 -preset ultrafast -b:v 3M -pix_fmt yuv420p "$W/big.mp4"
start_http

note "a plain http URL goes through yt-dlp's generic extractor and the whole pipeline"
vt init
expect_exit 0 vt add "$U/talk.mp4"
id=$(cat "$T/out")
[[ $id == talk ]] || fail "the platform id 'talk' should be the video's id, got '$id'"
vt export "$id" --format json > "$T/talk.json"
[[ $(json "$T/talk.json" 'd["source"]["kind"]') == url ]] || fail "source kind"
[[ $(json "$T/talk.json" 'd["source"]["url"]') == "$U/talk.mp4" ]] || fail "source url"
json "$T/talk.json" '[s for s in d["stages"] if s["name"]=="fetch"][0]["model"]' | grep -q '^yt-dlp 20' ||
  fail "fetch's model is not yt-dlp's version"
[[ $(json "$T/talk.json" 'd["data_status"]') == ok ]] || fail "not indexed: $(cat "$T/talk.json")"
[[ $(json "$T/talk.json" 'len(d["shots"]) > 0 and len(d["frames"]) > 0') == True ]] || fail "no shots"
media=$(json "$T/talk.json" 'd["source"]["path"]')
[[ $(sha256sum < "$media") == $(sha256sum < "$W/talk.mp4") ]] || fail "downloaded media differs"
[[ $media == "$LIB/media/talk/video.mp4" ]] || fail "media not in the library: $media"
vt search "served" | grep -q "^talk" || fail "text on the downloaded video not searchable"

note "adding the same URL again adds nothing"
expect_exit 0 vt add "$U/talk.mp4"
[[ $(cat "$T/out") == talk ]] || fail "same URL, other id"
[[ $(vt ls | wc -l) == 1 ]] || fail "added twice"

note "a direct link to a media file: the title is the media's own (its metadata), not the file's name"
ffmpeg -v error -y -i "$W/b.mp4" -c copy -metadata title="Harbor Lecture: Tides" "$W/tides-talk.mp4"
expect_exit 0 vt add "$U/tides-talk.mp4"
tid=$(cat "$T/out")
vt export "$tid" --format json > "$T/tides.json"
[[ $(json "$T/tides.json" 'd["title"]') == "Harbor Lecture: Tides" ]] ||
  fail "the title of a direct link is not the media's: $(json "$T/tides.json" 'd["title"]')"
expect_exit 0 vt rm "$tid"

note "an info JSON like YouTube's: metadata, chapters, manual json3 captions, page links"
cat > "$W/talk.en.json3" << 'EOF'
{"wireMagic":"pb3","events":[
 {"tStartMs":0,"dDurationMs":2500,"segs":[{"utf8":"welcome to the long context talk"}]},
 {"tStartMs":2500,"dDurationMs":3000,"segs":[{"utf8":"ring attention splits the sequence"}]}]}
EOF
cat > "$W/talk.en.auto.json3" << 'EOF'
{"events":[{"tStartMs":500,"dDurationMs":3000,"wWinId":1,
 "segs":[{"utf8":"hello"},{"utf8":" automatic","tOffsetMs":400},{"utf8":" captions","tOffsetMs":900}]},
 {"tStartMs":3500,"dDurationMs":2000,"wWinId":1,"aAppend":1,"segs":[{"utf8":"\n"}]},
 {"tStartMs":3600,"dDurationMs":2000,"wWinId":1,"segs":[{"utf8":"second"},{"utf8":" line","tOffsetMs":300}]}]}
EOF
cat > "$W/talk.vtt" << 'EOF'
WEBVTT

00:00:01.000 --> 00:00:03.000
subtitles from a vimeo page

00:00:03.500 --> 00:00:05.000
second cue of the page
EOF
yt_info() { # yt_info ID EXTRACTOR SUBTITLES AUTOMATIC: an info JSON like yt-dlp -J writes
  cat << EOF
{"id": "$1", "title": "Road to 5M tokens <b>&amp;</b>", "channel": "AI Engineer",
 "uploader": "AI Engineer", "upload_date": "20260608", "duration": 8.0, "language": "en",
 "description": "A talk about long context.", "webpage_url": "https://www.youtube.com/watch?v=$1",
 "extractor": "$2", "extractor_key": "$2", "_type": "video",
 "thumbnails": [{"url": "$U/thumb.jpg", "preference": 1}],
 "chapters": [{"start_time": 0, "end_time": 4, "title": "Intro"},
              {"start_time": 4, "end_time": 8, "title": "Ring attention"}],
 "subtitles": $3, "automatic_captions": $4,
 "formats": [{"format_id": "18", "url": "$U/talk.mp4", "ext": "mp4", "protocol": "http",
              "vcodec": "avc1.64001f", "acodec": "mp4a.40.2", "width": 640, "height": 360},
             {"format_id": "bad", "url": "file:///etc/passwd", "ext": "mp4", "protocol": "file",
              "vcodec": "avc1", "acodec": "mp4a", "width": 4000, "height": 4000}],
 "_filename": "/tmp/pwned", "__postprocessors": [{"key": "Exec", "exec_cmd": "touch $T/PWNED"}]}
EOF
}
yt_info TUnPNY4E2fw Youtube \
  "{\"en\": [{\"ext\": \"vtt\", \"url\": \"$U/talk.vtt\"}, {\"ext\": \"json3\", \"url\": \"$U/talk.en.json3\"}]}" \
  "{\"en\": [{\"ext\": \"json3\", \"url\": \"$U/talk.en.auto.json3\"}], \"de\": [{\"ext\": \"json3\", \"url\": \"$U/talk.en.auto.json3&tlang=de\"}]}" \
  > "$T/yt.info.json"
expect_exit 0 vt add --info-json "$T/yt.info.json"
[[ $(cat "$T/out") == TUnPNY4E2fw ]] || fail "the YouTube id should be the video id: $(cat "$T/out")"
vt export TUnPNY4E2fw --format json > "$T/yt.json"
[[ $(json "$T/yt.json" 'd["channel"]') == "AI Engineer" ]] || fail "channel"
[[ $(json "$T/yt.json" 'd["published"]') == 2026-06-08 ]] || fail "published"
[[ $(json "$T/yt.json" 'd["language"]') == en ]] || fail "language"
[[ $(json "$T/yt.json" 'd["source"]["page_url"]') == "https://www.youtube.com/watch?v=TUnPNY4E2fw" ]] || fail "page url"
[[ $(json "$T/yt.json" '[(c["title"], c["start_s"]) for c in d["chapters"]]') == "[('Intro', 0.0), ('Ring attention', 4.0)]" ]] ||
  fail "chapters: $(json "$T/yt.json" 'd["chapters"]')"
[[ $(json "$T/yt.json" '[s for s in d["stages"] if s["name"]=="stt"][0]["model"]') == captions:youtube-manual ]] ||
  fail "stt model: $(json "$T/yt.json" 'd["stages"]')"
[[ $(json "$T/yt.json" '[c["text"] for c in d["cues"]]') == "['welcome to the long context talk', 'ring attention splits the sequence']" ]] ||
  fail "cues from the manual json3: $(json "$T/yt.json" 'd["cues"]')"
[[ ! -e $T/PWNED && ! -e /tmp/pwned ]] || fail "a key of the info JSON was obeyed"
vt search "ring attention" | grep -q '^TUnPNY4E2fw' || fail "captions not searchable"
vt show TUnPNY4E2fw > "$T/show.txt"
grep -q 'https://www.youtube.com/watch?v=TUnPNY4E2fw&t=2s' "$T/show.txt" ||
  fail "show gives no link to the source at the cue's second: $(grep -i youtube "$T/show.txt")"

note "automatic captions when there are no manual ones: word timings from json3"
yt_info autoOnly001 Youtube '{}' \
  "{\"en\": [{\"ext\": \"json3\", \"url\": \"$U/talk.en.auto.json3\"}]}" > "$T/auto.info.json"
expect_exit 0 vt add --info-json "$T/auto.info.json"
vt export autoOnly001 --format json > "$T/auto.json"
[[ $(json "$T/auto.json" '[s for s in d["stages"] if s["name"]=="stt"][0]["model"]') == captions:youtube-auto ]] ||
  fail "auto captions model"
[[ $(json "$T/auto.json" '[(w["text"], w["start_s"]) for w in d["cues"][0]["words"]]') == "[('hello', 0.5), ('automatic', 0.9), ('captions', 1.4)]" ]] ||
  fail "word timings of json3: $(json "$T/auto.json" 'd["cues"]')"

note "another site's WebVTT: captions:<site>; --stt=recognize downloads no captions"
yt_info vimeo42 Vimeo "{\"en\": [{\"ext\": \"vtt\", \"url\": \"$U/talk.vtt\"}]}" '{}' > "$T/vimeo.info.json"
expect_exit 0 vt add --info-json "$T/vimeo.info.json"
vt export vimeo42 --format json > "$T/vimeo.json"
[[ $(json "$T/vimeo.json" '[s for s in d["stages"] if s["name"]=="stt"][0]["model"]') == captions:vimeo ]] ||
  fail "site captions model: $(json "$T/vimeo.json" 'd["stages"]')"
yt_info recog01 Youtube "{\"en\": [{\"ext\": \"json3\", \"url\": \"$U/talk.en.json3\"}]}" '{}' > "$T/rec.info.json"
: > "$T/http.log"
vt add --stt=recognize --info-json "$T/rec.info.json" > /dev/null 2>&1 || true
! grep -q json3 "$T/http.log" || fail "--stt=recognize still fetched captions"
vt export recog01 --format json > "$T/rec.json"
json "$T/rec.json" '[s for s in d["stages"] if s["name"]=="stt"][0]["model"]' | grep -q pocketsphinx ||
  fail "--stt=recognize did not recognise"

note "a live stream waits for a later attempt; an info JSON with no usable format fails"
yt_info live01 Youtube '{}' '{}' | python3 -c 'import json,sys; d=json.load(sys.stdin); d["is_live"]=True; print(json.dumps(d))' > "$T/live.info.json"
expect_exit 1 vt add --info-json "$T/live.info.json"
vt export live01 --format json > "$T/live.json"
[[ $(json "$T/live.json" '[(s["state"], "live" in s["error"]) for s in d["stages"] if s["name"]=="fetch"][0]') == "('queued', True)" ]] ||
  fail "live stream: $(json "$T/live.json" 'd["stages"][0]')"
# its next attempt has no URL to ask again: it fails for good, and says why
sleep 0.5
vt resume 2> /dev/null || true
vt export live01 --format json > "$T/live.json"
[[ $(json "$T/live.json" '[(s["state"], s["attempts"], "live" in s["error"] and "URL" in s["error"]) for s in d["stages"] if s["name"]=="fetch"][0]') == "('failed', 2, True)" ]] ||
  fail "live stream, second attempt: $(json "$T/live.json" 'd["stages"][0]')"
yt_info nofmt01 Youtube '{}' '{}' | python3 -c 'import json,sys; d=json.load(sys.stdin); d["formats"]=d["formats"][1:]; print(json.dumps(d))' > "$T/nofmt.info.json"
expect_exit 1 vt add --info-json "$T/nofmt.info.json"
vt export nofmt01 --format json > "$T/nofmt.json"
[[ $(json "$T/nofmt.json" '[s["state"] for s in d["stages"] if s["name"]=="fetch"][0]') == failed ]] ||
  fail "no usable format: $(json "$T/nofmt.json" 'd["stages"][0]')"
vt rm live01 nofmt01

note "a playlist adds each entry once; update adds what is new"
cat > "$W/list.json" << EOF
{"_type": "playlist", "id": "PLtalks", "title": "Talks", "webpage_url": "$U/list",
 "entries": [{"_type": "url", "url": "$U/a.mp4", "id": "a", "title": "A"},
             {"_type": "url", "url": "$U/b.mp4", "id": "b", "title": "B"}]}
EOF
n0=$(vt ls | wc -l)
expect_exit 0 vt add --info-json "$W/list.json"
[[ $(sort "$T/out" | tr '\n' ' ') == "a b " ]] || fail "playlist entries: $(cat "$T/out")"
[[ $(vt ls | wc -l) == $((n0 + 2)) ]] || fail "playlist rows"
expect_exit 0 vt add --info-json "$W/list.json"
[[ ! -s $T/out ]] || fail "adding the list again added: $(cat "$T/out")"
expect_exit 0 vt update
[[ ! -s $T/out ]] || fail "update with nothing new added: $(cat "$T/out")"
python3 - "$W/list.json" "$U" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["entries"].insert(0, {"_type": "url", "url": sys.argv[2] + "/c.mp4", "id": "c", "title": "C"})
json.dump(d, open(sys.argv[1], "w"))
EOF
expect_exit 0 vt update
[[ $(cat "$T/out") == c ]] || fail "update did not add the new entry: $(cat "$T/out")"
[[ $(vt ls | wc -l) == $((n0 + 3)) ]] || fail "update rows"

note "--no-keep-media: the download goes once indexed, frames and text stay"
expect_exit 0 vt add --no-keep-media "$U/nokeep.mp4"
vt export nokeep --format json > "$T/nokeep.json"
[[ $(json "$T/nokeep.json" 'd["source"]["path"]') == None ]] || fail "media path kept"
[[ -z $(find "$LIB/media/nokeep" -name 'video.*') ]] || fail "media file kept"
[[ $(json "$T/nokeep.json" 'len([f for f in d["frames"] if f["state"]=="done"]) > 0') == True ]] || fail "frames gone"
vt search "kept" | grep -q '^nokeep' || fail "text of a video whose media went is not searchable"

note "the page links to the source at the second; media not kept plays from the source"
start_server --read-only
curl -fsS "$B/v/TUnPNY4E2fw?t=4" > "$T/yt.html"
grep -q 'href="https://www.youtube.com/watch?v=TUnPNY4E2fw&amp;t=0s">Open on YouTube</a>' "$T/yt.html" ||
  fail "no 'Open on YouTube' link: $(grep -o '<p class="source">.*' "$T/yt.html")"
grep -q 'href="https://www.youtube.com/watch?v=TUnPNY4E2fw&amp;t=4s">on YouTube at this second' "$T/yt.html" ||
  fail "no link to the source at ?t="
grep -q 'Road to 5M tokens &lt;b&gt;&amp;amp;&lt;/b&gt;' "$T/yt.html" || fail "title not escaped"
curl -fsS "$B/v/nokeep" > "$T/nokeep.html"
! grep -q '<video' "$T/nokeep.html" || fail "a player for media that was not kept"
grep -q 'not kept' "$T/nokeep.html" || fail "the page does not say the media was not kept"
[[ $(curl -s -o /dev/null -w '%{http_code}' "$B/media/nokeep") == 404 ]] || fail "media of nokeep served"
stop_server

note "injection and policy: refused or taken as data, nothing runs, nothing is read"
cd "$T"
mkdir -p "$T/home/.config/yt-dlp"
printf -- '--exec "touch %s/PWNED"\n' "$T" | tee "$T/yt-dlp.conf" > "$T/home/.config/yt-dlp/config"
expect_exit 2 vt add -oX "$U/a.mp4"
expect_exit 2 vt add --config-location=X "$U/a.mp4"
expect_exit 1 vt add -- "--exec=touch $T/PWNED"
one_line_err
expect_exit 1 vt add "file:///etc/passwd"
one_line_err
grep -q 'http' "$T/err" || fail "no clear message for file://: $(cat "$T/err")"
expect_exit 1 vt add "ftp://127.0.0.1/x.mp4"
one_line_err
expect_exit 1 vt add "$U/a.mp4 --exec touch"
one_line_err
n1=$(vt ls | wc -l)
HOME=$T/home expect_exit 0 vt add "$U/policy.mp4"
[[ ! -e $T/PWNED ]] || fail "a yt-dlp configuration file was obeyed"
[[ $(vt ls | wc -l) == $((n1 + 1)) ]] || fail "refused input changed the library"
vt rm "$(cat "$T/out")"
cd "$ROOT"

note "unreachable host: fetch fails with one line, resume retries with backoff, then failed"
expect_exit 1 vt add "http://127.0.0.1:9/gone.mp4"
uid=$(cat "$T/out")
[[ -n $uid ]] || fail "no id for the unreachable URL"
grep -q "fetch" "$T/err" || fail "no fetch error: $(cat "$T/err")"
vt export "$uid" --format json > "$T/u.json"
[[ $(json "$T/u.json" '[(s["state"], s["attempts"]) for s in d["stages"] if s["name"]=="fetch"][0]') == "('queued', 1)" ]] ||
  fail "first failure not queued for a retry: $(json "$T/u.json" 'd["stages"][0]')"
sleep 0.5 # update (what cron runs) retries a download that is due
vt update 2> /dev/null || true
vt export "$uid" --format json > "$T/u.json"
[[ $(json "$T/u.json" '[s["attempts"] for s in d["stages"] if s["name"]=="fetch"][0]') == 2 ]] ||
  fail "update did not retry the due download: $(json "$T/u.json" 'd["stages"][0]')"
for _ in $(seq 60); do # attempts 3 and 4 are due 1.2 and 4.8 s after the one before
  sleep 0.5
  vt resume 2> /dev/null || true
  vt export "$uid" --format json > "$T/u.json"
  [[ $(json "$T/u.json" '[s["state"] for s in d["stages"] if s["name"]=="fetch"][0]') == failed ]] && break
done
vt export "$uid" --format json > "$T/u.json"
[[ $(json "$T/u.json" '[(s["state"], s["attempts"]) for s in d["stages"] if s["name"]=="fetch"][0]') == "('failed', 4)" ]] ||
  fail "retries not bounded: $(json "$T/u.json" 'd["stages"][0]')"
json "$T/u.json" '[s for s in d["stages"] if s["name"]=="fetch"][0]["error"]' | grep -qi 'refused\|connect\|unable' ||
  fail "last error not kept: $(json "$T/u.json" 'd["stages"][0]')"
vt rm "$uid"

note "caps: a download over the size cap or the time cap stops with a clear error"
expect_exit 1 vt add --max-size 1 "$U/big.mp4"
grep -q "size cap" "$T/err" || fail "size cap: $(cat "$T/err")"
big=$(cat "$T/out")
[[ -z $(find "$LIB/media/$big" -name 'video.*') ]] || fail "a partial file became media"
vt rm "$big"

note "a download killed with SIGKILL half-way continues with resume, registered once"
stop_http
start_http --rate 1500000
"$VIDTHEQUE" -q -L "$LIB" add "$U/big.mp4" > "$T/kill.out" 2> "$T/kill.err" &
pid=$!
for _ in $(seq 200); do
  part=$(find "$LIB/media" -name '*.part' -size +1000k 2> /dev/null | head -n 1)
  [[ -n $part ]] && break
  sleep 0.1
done
[[ -n $part ]] || fail "the download never started: $(cat "$T/kill.err")"
kill -9 "$pid"
wait "$pid" 2> /dev/null || true
sleep 0.5
pgrep -f "yt-dlp.*$U/big" > /dev/null && fail "yt-dlp outlived the killed vidtheque"
big=$(cat "$T/kill.out")
[[ -n $big ]] || fail "no id printed before the kill"
expect_exit 0 vt resume
vt export "$big" --format json > "$T/big.json"
[[ $(json "$T/big.json" 'd["data_status"]') == ok ]] || fail "not finished after resume"
[[ $(sha256sum < "$(json "$T/big.json" 'd["source"]["path"]')") == $(sha256sum < "$W/big.mp4") ]] ||
  fail "resumed download differs from the served file"
[[ $(vt ls | grep -c "^$big") == 1 ]] || fail "registered more than once"
expect_exit 0 vt check

note "the time cap stops a slow download"
vt rm "$big"
expect_exit 1 vt add --max-time 2 "$U/big.mp4"
grep -q "time cap" "$T/err" || fail "time cap: $(cat "$T/err")"
[[ -z $(find "$LIB/media/$(cat "$T/out")" -name 'video.*') ]] || fail "a partial file became media"

note "only loopback was asked"
! grep -v '^GET /\|^HEAD /' "$T/http.log" | grep -q . || fail "unexpected requests: $(cat "$T/http.log")"
echo "ok"
