#!/usr/bin/env bash
# backends: sqlite postgresql
# redo gives a dead letter its retries again: an operator who mended the cause (here OCR
# language data this machine lacks, VT_EHERE) and ran `redo` expects the usual budget of
# 4 attempts, counted from the redo, while the stage's attempts (its history, the fencing
# token) count on. Two dead letters of 4 failed attempts each, then:
#  a: redone while the cause is still there: the redo's own run fails, and the stage is
#     queued for a retry (attempt 1 of 4 since the redo), not failed for good; jobs and
#     export say so; mended, a worker runs it.
#  b: redone, and the redo's run is killed right after its claim (a crash: SIGKILL by
#     VIDTHEQUE_TEST_STOP_AT=ocr:claimed:kill): `resume` takes it over and runs it
#     (attempt 2 since the redo), not a dead letter at once.
# (On main both were failed again at once: "attempt 5 of 4".)
. "$(dirname "$0")/lib.sh"

for v in a b; do
  ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Basalt $v columns':fontsize=28:x=20:y=60" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/$v.mp4"
done
mkdir -p "$T/no-tessdata"
nodata=(env TESSDATA_PREFIX="$T/no-tessdata")
# ocr_row ID: the ocr stage's state|attempts|error
ocr_row() { lib_sql "SELECT state || '|' || attempts || '|' || coalesce(error, '') FROM stages WHERE video_id='$1' AND name='ocr'"; }
ocr_retry_at() { lib_sql "SELECT CAST(retry_at AS integer) FROM stages WHERE video_id='$1' AND name='ocr'"; }
nolang="cannot load tesseract language data on this machine"
vt init

ida=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/a.mp4")
idb=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/b.mp4")
[[ -n $ida && -n $idb ]] || fail "add printed no id"
"${nodata[@]}" VIDTHEQUE_RETRY_BASE=0 "$VIDTHEQUE" -L "$LIB" worker --drain 2> "$T/w0.err" ||
  fail "worker: $(cat "$T/w0.err")"
for id in "$ida" "$idb"; do
  [[ $(ocr_row "$id") == failed\|4\|*"$nolang"* ]] ||
    fail "$id: not a dead letter after 4 attempts: $(ocr_row "$id")"
done

note "a: redone, its run fails again: queued for a retry, not failed"
rc=0
"${nodata[@]}" VIDTHEQUE_RETRY_BASE=3600 "$VIDTHEQUE" -q -L "$LIB" redo "$ida" --stage ocr \
  > /dev/null 2> "$T/redo.err" || rc=$?
((rc == 1)) || fail "redo whose run failed exited $rc: $(cat "$T/redo.err")"
grep -q "ocr failed (attempt 1 of 4; 'vidtheque resume' tries again in 3600 s)" "$T/redo.err" ||
  fail "the redo's failure is not attempt 1 of 4 with a retry: $(cat "$T/redo.err")"
[[ $(ocr_row "$ida") == queued\|5\|*"$nolang"* ]] ||
  fail "a redone dead letter failed for good at its first new failure: $(ocr_row "$ida")"
(($(ocr_retry_at "$ida") > $(date +%s) + 3000)) || fail "no retry time: $(ocr_retry_at "$ida")"
vt jobs > "$T/jobs.txt" || fail "jobs"
grep -q "$ida  ocr  after attempt 5 (1 since redo), next try" "$T/jobs.txt" ||
  fail "jobs does not list the retry with its attempts since the redo: $(cat "$T/jobs.txt")"
vt jobs --json > "$T/jobs.json" || fail "jobs --json"
[[ $(json "$T/jobs.json" "[(j['attempts'], j['attempts_since_redo']) for j in d['retrying'] if j['video'] == '$ida']") == "[(5, 1)]" ]] ||
  fail "jobs --json: $(cat "$T/jobs.json")"
vt export "$ida" > "$T/a.json" || fail "export"
[[ $(json "$T/a.json" "[(s['state'], s['attempts'], s['attempts_since_redo']) for s in d['stages'] if s['name'] == 'ocr'][0]") == "('queued', 5, 1)" ]] ||
  fail "export: $(json "$T/a.json" "[s for s in d['stages'] if s['name'] == 'ocr'][0]")"
# mended (the system's data) and due: a worker runs it
lib_sql "UPDATE stages SET retry_at = 0 WHERE video_id='$ida' AND name='ocr'"
"$VIDTHEQUE" -q -L "$LIB" worker --drain 2> "$T/w1.err" || fail "worker: $(cat "$T/w1.err")"
[[ $(ocr_row "$ida") == done\|6\| ]] || fail "the mended stage did not run: $(ocr_row "$ida")"
vt search basalt | grep -q "$ida" || fail "search does not find the screen text"
[[ $(ocr_row "$idb") == failed\|4\|* ]] || fail "the other dead letter was run without redo: $(ocr_row "$idb")"

note "b: redone, its run crashes at the claim: taken over, not a dead letter"
rc=0
{ VIDTHEQUE_TEST_STOP_AT=ocr:claimed:kill "$VIDTHEQUE" -q -L "$LIB" redo "$idb" --stage ocr \
  > /dev/null 2> "$T/redo2.err"; } 2> /dev/null || rc=$? # (the shell's "Killed" line)
((rc == 137)) || fail "the redo was not killed at its claim (exit $rc): $(cat "$T/redo2.err")"
[[ $(ocr_row "$idb") == running\|5\|* ]] || fail "ocr after the killed redo: $(ocr_row "$idb")"
# on PostgreSQL the redo's run held a lease: made to have run out (on SQLite its owner's
# lock file says it is gone)
on_pg && lib_sql "UPDATE stages SET lease_until = 1 WHERE video_id = '$idb' AND state = 'running'" > /dev/null
rc=0
"${nodata[@]}" VIDTHEQUE_RETRY_BASE=3600 "$VIDTHEQUE" -q -L "$LIB" resume > /dev/null 2> "$T/resume.err" || rc=$?
((rc <= 1)) || fail "resume exited $rc: $(cat "$T/resume.err")"
[[ $(ocr_row "$idb") == queued\|6\|*"$nolang"* ]] ||
  fail "a crash on the redone stage's first attempt made it a dead letter: $(ocr_row "$idb"); $(cat "$T/resume.err")"
lib_sql "UPDATE stages SET retry_at = 0 WHERE video_id='$idb' AND name='ocr'"
"$VIDTHEQUE" -q -L "$LIB" worker --drain 2> "$T/w2.err" || fail "worker: $(cat "$T/w2.err")"
[[ $(ocr_row "$idb") == done\|7\| ]] || fail "the mended stage did not run: $(ocr_row "$idb")"
[[ $(vt ls | awk -F'\t' -v a="$ida" -v b="$idb" '$1 == a || $1 == b {print $4 "/" $5}' | sort -u) == ready/ok ]] ||
  fail "not both indexed: $(vt ls)"
expect_exit 0 vt check
echo "all good"
