#!/usr/bin/env bash
# A video whose content a bound cut (issue 27 failure 10): a container of 28 h (three
# frames 14 h apart) is stored as its first 24 h and a caption cue at 25 h is dropped; the
# video is `partial`, not "ok", and says why in `ls`, `show`, the export, the web video
# page and the library's card, not only in provenance. A video inside the bound whose
# captions hold a cue past its end (hostile captions, nothing of the media cut) stays ok.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/in"
ffmpeg -v error -y -f lavfi -i "color=gray:s=160x120:r=1" -frames:v 3 -vf "setpts=N*50400/TB" \
  -fps_mode passthrough -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/in/long.mkv"
printf '1\n00:00:01,000 --> 00:00:04,000\nThe opening words.\n\n2\n25:00:00,000 --> 25:00:04,000\nWords past the bound.\n' > "$T/in/long.srt"
ffmpeg -v error -y -f lavfi -i "color=gray:s=160x120:r=1" -frames:v 3 -c:v libx264 -preset veryfast \
  -pix_fmt yuv420p "$T/in/short.mkv"
printf '1\n00:00:01,000 --> 00:00:02,000\nA short one.\n\n2\n05:00:00,000 --> 05:00:04,000\nA cue past its end.\n' > "$T/in/short.srt"

vt init > /dev/null
expect_exit 1 vt add "$T/in/long.mkv"
long=$(cat "$T/out")
grep -q "^error: $long: fetch done, but not all of it: cut: the media lasts 28.0 h; only its first 24 h are indexed$" "$T/err" ||
  fail "add says nothing of the cut: $(cat "$T/err")"
short=$(vt add "$T/in/short.mkv")
vt ls > "$T/ls"
grep -q "^$long	long.mkv	24:00:00	ready	partial$" "$T/ls" || fail "ls: $(cat "$T/ls")"
grep -q "^$short	short.mkv	.*	ready	ok$" "$T/ls" || fail "ls (short): $(cat "$T/ls")"
vt show "$long" > "$T/show"
grep -q "data_status partial" "$T/show" || fail "show: $(head -5 "$T/show")"
grep -q "^warning: not all of it is indexed (fetch): cut: the media lasts 28.0 h; only its first 24 h are indexed$" "$T/show" ||
  fail "show has no warning: $(head -5 "$T/show")"
grep -q "^warning: not all of it is indexed (stt): cut: 1 cue(s) past the first 24 h of the media are not indexed$" "$T/show" ||
  fail "show has no stt warning: $(head -6 "$T/show")"
vt show "$short" > "$T/show2"
! grep -q "^warning:" "$T/show2" || fail "short video warned: $(head -5 "$T/show2")"
vt export "$long" > "$T/doc.json"
[[ $(json "$T/doc.json" "d['data_status'], [s['error'] for s in d['stages'] if s['name']=='fetch'][0]") == \
   "('partial', 'cut: the media lasts 28.0 h; only its first 24 h are indexed')" ]] || fail "export: $(cat "$T/doc.json" | head -c 600)"

start_server --read-only
curl -sf "$B/v/$long" > "$T/page.html" || fail "video page"
grep -q "Not all of this video is indexed (fetch): cut: the media lasts 28.0 h; only its first 24 h are indexed." "$T/page.html" ||
  fail "video page has no warning"
grep -q 'id="data-words">Partial<' "$T/page.html" || fail "video page not partial"
curl -sf "$B/v/$short" > "$T/page2.html" || fail "short video page"
! grep -q "Not all of this video is indexed" "$T/page2.html" || fail "short video page warned"
curl -sf "$B/" > "$T/library.html" || fail "library page"
python3 - "$T/library.html" "$long" "$short" << 'PY' || fail "library card"
import re, sys
page, long_id, short_id = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
def card(i):
    at = page.index('/v/' + i)
    end = min([x for x in (page.find('/v/' + short_id if i == long_id else '/v/' + long_id, at + 5), len(page)) if x > 0])
    return page[at:end]
assert 'Some parts missing' in card(long_id), card(long_id)[:400]
assert 'Some parts missing' not in card(short_id), card(short_id)[:400]
PY
stop_cleanly
note "ok"
