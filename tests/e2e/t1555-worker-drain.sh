#!/usr/bin/env bash
# backends: sqlite postgresql
# Draining a worker (issue 26): SIGTERM while a stage runs, with a short --grace: once the
# grace is over the stage is handed back (queued again, its attempt not counted, no owner),
# not lost, and the worker exits 0. The stage is a download by a stand-in yt-dlp that never
# finishes once armed (nothing leaves the machine).
# alone: SIGTERM with a short grace while a stage runs
. "$(dirname "$0")/lib.sh"

cat > "$T/yt-dlp" << EOF
#!/bin/sh
[ -e "$T/armed" ] || exec yt-dlp "\$@"
echo \$\$ > "$T/started"
exec sleep 120
EOF
chmod +x "$T/yt-dlp"
export VIDTHEQUE_YTDLP=$T/yt-dlp
cat > "$T/info.json" << 'EOF'
{"id": "drain01", "title": "A long download", "webpage_url": "https://example.invalid/watch?v=drain01",
 "extractor": "generic", "extractor_key": "Generic", "_type": "video", "duration": 60,
 "formats": [{"format_id": "1", "url": "http://127.0.0.1:9/v.mp4", "ext": "mp4", "protocol": "http",
              "vcodec": "avc1", "acodec": "mp4a", "width": 320, "height": 180}]}
EOF
vt init
"$VIDTHEQUE" -q -L "$LIB" add --queue --info-json "$T/info.json" > /dev/null || fail "add --info-json"
touch "$T/armed"
"$VIDTHEQUE" -L "$LIB" worker --grace 1 2> "$T/w.err" &
w=$!
for _ in $(seq 200); do
  [[ -s $T/started ]] && break
  sleep 0.1
done
[[ -s $T/started ]] || fail "the stage never started: $(cat "$T/w.err")"
[[ $(lib_sql "SELECT state || '|' || attempts FROM stages WHERE video_id='drain01' AND name='fetch'") == 'running|1' ]] ||
  fail "fetch is not running: $(lib_sql "SELECT state, attempts FROM stages WHERE video_id='drain01'")"
t0=$(date +%s)
kill -TERM "$w"
rc=0
wait "$w" || rc=$?
t1=$(date +%s)
kill "$(cat "$T/started")" 2> /dev/null || true
((rc == 0)) || fail "the worker exited $rc: $(cat "$T/w.err")"
((t1 - t0 <= 10)) || fail "the worker took $((t1 - t0)) s to leave with a 1 s grace"
grep -q "drain01: fetch given back" "$T/w.err" || fail "the worker did not say it gave the stage back: $(cat "$T/w.err")"
row=$(lib_sql "SELECT state || '|' || attempts || '|' || coalesce(owner, '') FROM stages WHERE video_id='drain01' AND name='fetch'")
[[ $row == 'queued|0|' ]] || fail "the stage was not handed back (state|attempts|owner): $row"
note "ok"
