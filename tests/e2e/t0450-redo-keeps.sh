#!/usr/bin/env bash
# backends: sqlite postgresql
# Nothing disappears during a redo (issue 25, item 5): a redone stage's rows stay until
# its new ones replace them in the commit that saves them, and so do the rows of the
# stages redone with it (a redo of ocr re-runs stt, which takes its hints from the
# slides: the transcript stays meanwhile). With the redo stopped at a stage's claim
# (VIDTHEQUE_TEST_STOP_AT), search, the API and the video page still serve the old rows;
# killed there, the old rows are what is left; resumed, the new ones replace them.
. "$(dirname "$0")/lib.sh"

f=$T/talk.mp4
ffmpeg -v error -f lavfi -i "color=white:s=480x270:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Rivers':fontsize=40:x=40:y=60" \
  -f lavfi -i "color=navy:s=480x270:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf:text='Mountains':fontsize=40:fontcolor=white:x=40:y=120" \
  -f lavfi -i "color=white:s=480x270:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf:text='Forests':fontsize=40:x=40:y=160" \
  -f lavfi -i "sine=d=6" \
  -filter_complex "[0:v][1:v][2:v]concat=n=3:v=1:a=0,format=yuv420p[v]" -map "[v]" -map 3:a \
  -c:v libx264 -preset veryfast -c:a aac -shortest "$f"
cat > "$T/talk.srt" << 'EOF'
1
00:00:00,500 --> 00:00:02,000
rivers run to the sea

2
00:00:02,500 --> 00:00:04,000
mountains stand still

3
00:00:04,200 --> 00:00:05,800
forests grow slowly
EOF

vt init > /dev/null
vt config set text_embed.model "$DATA/model2vec-test-vocab-quantized" > /dev/null
id=$(vt add "$f")
[[ $(vt ls | cut -f4,5) == "ready	ok" ]] || fail "not indexed: $(vt ls)"
start_server
trap 'stop_server; on_pg && e2e_pg_drop; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT

proc_state() { # PID: R, S, T (stopped), Z (zombie) or gone
  local s
  s=$(cat "/proc/$1/stat" 2> /dev/null) || { echo gone; return; }
  s=${s##*) }
  echo "${s%% *}"
}
stage_state() { lib_sql "SELECT state FROM stages WHERE video_id = '$id' AND name = '$1'"; }
# hits SOURCE WORDS: how many hits of that source the CLI, /api/search and /search find
hits() {
  local cli api page
  cli=$(vt search --json --mode words "source:$1 $2" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["hits"]))')
  api=$(curl -sf -G "$B/api/search" --data-urlencode "q=$2" --data-urlencode "source=$1" -d mode=words |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["hits"]))')
  page=$(curl -sf -G "$B/search" --data-urlencode "q=$2" --data-urlencode "source=$1" -d mode=words |
    grep -c "href=\"/v/$id?t=" || true)
  [[ $cli == "$api" ]] || fail "'$2' ($1): the CLI finds $cli, /api/search $api"
  [[ $((page > 0)) == $((cli > 0)) ]] || fail "'$2' ($1): the CLI finds $cli, /search $page links"
  echo "$cli"
}
# serves WHAT: the old rows (or the new) are there everywhere a reader looks
serves_transcript() { # WORDS
  local n
  n=$(hits speech "$1")
  ((n > 0)) || fail "$2: search finds no '$1' in the transcript"
  curl -sf "$B/api/videos/$id" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(not any(sys.argv[1] in c["text"] for c in d["cues"]))' "$1" ||
    fail "$2: /api/videos/ID has no cue '$1'"
  curl -sf "$B/v/$id" > "$T/page.html" || fail "$2: the video page: $(cat "$T/srv.err")"
  grep -q "$1" "$T/page.html" || fail "$2: the video page shows no '$1'"
}
serves_screen() { # WORD WHEN
  ((($(hits screen "$1")) > 0)) || fail "$2: search finds no '$1' on screen"
  [[ $(curl -sf "$B/api/videos/$id" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["frames"]) > 0 and any(any(sys.argv[1] in l["text"] for l in f["ocr"]) for f in d["frames"]))' "$1") == True ]] ||
    fail "$2: /api/videos/ID has no frame reading '$1'"
}
# redo_stopped STAGE AT: vt redo ID --stage STAGE, stopped just after AT's claim; sets RPID
redo_stopped() {
  VIDTHEQUE_TEST_STOP_AT=$2:claimed "$VIDTHEQUE" -q -L "$LIB" redo "$id" --stage "$1" > /dev/null 2> "$T/redo.err" &
  RPID=$!
  for _ in $(seq 1500); do
    st=$(proc_state "$RPID")
    [[ $st == T || $st == Z || $st == gone ]] && break
    sleep 0.02
  done
  [[ $st == T ]] || fail "redo --stage $1 never stopped at $2:claimed ($st): $(cat "$T/redo.err")"
  [[ $(stage_state "$2") == running ]] || fail "$2 is '$(stage_state "$2")' at its claim"
}
# killed: SIGKILL the stopped redo; on PostgreSQL its lease is made to have run out
killed() {
  kill -9 "$RPID"
  wait "$RPID" 2> /dev/null || true
  on_pg && lib_sql "UPDATE stages SET lease_until = 1 WHERE video_id = '$id' AND state = 'running'" > /dev/null
  return 0
}

# vecs KIND: how many text vectors of that kind (speech: chunks; screen: frames' lines)
vecs() { lib_sql "SELECT count(*) FROM vectors WHERE video_id = '$id' AND kind = '$1'"; }

serves_transcript "mountains stand still" "indexed"
serves_screen Mountains "indexed"
speech0=$(vecs speech)
((speech0 > 0 && $(vecs screen) > 0)) || fail "indexed: $speech0 speech and $(vecs screen) screen vectors"
frames_before=$(vt export "$id" | python3 -c 'import json,sys; print(sorted({f["image"].rsplit("/", 1)[0] for f in json.load(sys.stdin)["frames"]}))')

note "redo ocr, stopped at ocr's claim: the frames' lines and the transcript stay"
redo_stopped ocr ocr
serves_screen Mountains "redo ocr, ocr running"
serves_transcript "mountains stand still" "redo ocr, ocr running"
((speech0 == $(vecs speech) && $(vecs screen) > 0)) || fail "redo ocr, ocr running: vectors went"
kill -CONT "$RPID"
wait "$RPID" || fail "the continued redo failed: $(cat "$T/redo.err")"
serves_screen Mountains "redo ocr, done"

note "redo ocr, stopped at stt's claim (ocr saved): the transcript stays until stt saves"
# the sidecar captions stt reads (the library's copy, made by add) say something else
# now: new rows are told from old
sed -i 's/mountains stand still/glaciers carve valleys/' "$LIB/media/$id/talk.srt"
redo_stopped ocr stt
serves_transcript "mountains stand still" "redo ocr, stt running"
# ocr's new lines replaced its old ones, and the vectors of those lines went with them;
# the chunks' vectors point elsewhere and stay until text_embed's own commit
[[ $(vecs speech) == "$speech0" ]] || fail "redo ocr, stt running: $(vecs speech) speech vectors, not $speech0"
(($(hits speech glaciers) == 0)) || fail "the new transcript is served before its commit"
serves_screen Mountains "redo ocr, stt running"
note "killed there: the old transcript is what is left"
killed
serves_transcript "mountains stand still" "redo ocr killed at stt"
[[ $(stage_state stt) == running ]] || fail "stt is '$(stage_state stt)' after the kill"
"$VIDTHEQUE" -q -L "$LIB" resume 2> "$T/resume.err" || fail "resume: $(cat "$T/resume.err")"
[[ $(vt ls | cut -f4,5) == "ready	ok" ]] || fail "after resume: $(vt ls)"
serves_transcript "glaciers carve valleys" "resumed"
((speech0 == $(vecs speech) && $(vecs screen) > 0)) || fail "resumed: $(vecs speech) speech, $(vecs screen) screen vectors"
(($(hits speech "mountains stand") == 0)) || fail "the old transcript is still served after the new one's commit"

note "redo keyframe, stopped at keyframe's claim: frames and their lines stay; killed, too"
redo_stopped keyframe keyframe
serves_screen Mountains "redo keyframe, keyframe running"
serves_transcript "glaciers carve valleys" "redo keyframe, keyframe running"
curl -sf -o /dev/null "$B/api/videos/$id/frames/0.jpg" || fail "redo keyframe: frame 0's picture is gone"
killed
serves_screen Mountains "redo keyframe killed"
curl -sf -o /dev/null "$B/api/videos/$id/frames/0.jpg" || fail "killed redo: frame 0's picture is gone"
"$VIDTHEQUE" -q -L "$LIB" resume 2> "$T/resume.err" || fail "resume: $(cat "$T/resume.err")"
[[ $(vt ls | cut -f4,5) == "ready	ok" ]] || fail "after resume: $(vt ls)"
serves_screen Mountains "keyframe redone"
frames_after=$(vt export "$id" | python3 -c 'import json,sys; print(sorted({f["image"].rsplit("/", 1)[0] for f in json.load(sys.stdin)["frames"]}))')
[[ $frames_after != "$frames_before" ]] || fail "the redone keyframe kept the old run's frames: $frames_after"

note "redo keyframe, stopped at ocr's claim (keyframe saved): the screen text stays until ocr saves"
# the frames are made again, in the same places: their lines stay, the index's screen rows
# and their vectors too; ocr's commit replaces them (a new word on the second slide tells
# the new rows from the old)
ffmpeg -v error -y -i "$f" -vf "drawbox=x=30:y=110:w=300:h=60:color=navy:t=fill:enable='between(t,2,4)',drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf:text='Volcanoes':fontsize=40:fontcolor=white:x=40:y=120:enable='between(t,2,4)'" \
  -c:v libx264 -preset veryfast -c:a copy "$T/talk2.mp4"
for m in "$LIB/media/$id"/*; do cp "$T/talk2.mp4" "$m"; done
screen0=$(vecs screen)
redo_stopped keyframe ocr
(($(hits screen Mountains) == 1)) || fail "redo keyframe, ocr running: 'Mountains' found $(hits screen Mountains) times on screen"
serves_screen Mountains "redo keyframe, ocr running"
[[ $(vecs screen) == "$screen0" ]] || fail "redo keyframe, ocr running: $(vecs screen) screen vectors, not $screen0"
(($(hits screen Volcanoes) == 0)) || fail "redo keyframe, ocr running: the new slide is read before ocr's commit"
kill -CONT "$RPID"
wait "$RPID" || fail "the continued redo failed: $(cat "$T/redo.err")"
[[ $(vt ls | cut -f4,5) == "ready	ok" ]] || fail "keyframe redone again: $(vt ls)"
serves_screen Volcanoes "ocr saved"
(($(hits screen Volcanoes) == 1)) || fail "ocr saved: 'Volcanoes' found $(hits screen Volcanoes) times on screen"
(($(hits screen Mountains) == 0)) || fail "ocr saved: the old slide's 'Mountains' is still found"
(($(hits screen Rivers) == 1)) || fail "ocr saved: 'Rivers' found $(hits screen Rivers) times on screen"
(($(vecs screen) > 0)) || fail "ocr saved: no screen vectors"
[[ $(vt check) == ok ]] || fail "check: $(vt check)"
echo "all good"
