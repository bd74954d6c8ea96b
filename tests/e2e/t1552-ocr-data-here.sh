#!/usr/bin/env bash
# backends: sqlite postgresql
# OCR language data this machine lacks (issue 26: errors that depend on the machine are
# retried elsewhere, not final): a worker whose Tesseract finds no data for the language
# (TESSDATA_PREFIX naming an empty folder, as on a machine without tesseract-ocr-eng)
# queues the ocr stage again with the reason (VT_EHERE), not `failed` at attempt 1; a
# worker that has the data reads the frames. A stage that finds no data on any attempt is
# a dead letter past the cap of 4 attempts, as any other. The worker's start check warns
# of the missing data once (worker_check.c), and not where the data is.
# (add runs as the binary itself: on PostgreSQL the test's `vt add` runs a worker of its own.)
. "$(dirname "$0")/lib.sh"

for v in a b; do
  ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Granite harbours $v':fontsize=28:x=20:y=60" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/$v.mp4"
done
mkdir -p "$T/no-tessdata"
# ocr_row ID: the ocr stage's state|attempts|error
ocr_row() { lib_sql "SELECT state || '|' || attempts || '|' || coalesce(error, '') FROM stages WHERE video_id='$1' AND name='ocr'"; }
vt init

# no machine has the data: each attempt is queued again until the cap, then a dead letter
idb=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/b.mp4")
[[ -n $idb ]] || fail "add printed no id"
TESSDATA_PREFIX=$T/no-tessdata VIDTHEQUE_RETRY_BASE=0 "$VIDTHEQUE" -L "$LIB" worker --drain \
  2> "$T/w0.err" || fail "worker: $(cat "$T/w0.err")"
row=$(ocr_row "$idb")
[[ $row == failed\|4\|*"cannot load tesseract language data on this machine"* ]] ||
  fail "not a dead letter after 4 attempts: $row; $(tail -5 "$T/w0.err")"
# the worker said so at its start, once, before its first claim
[[ $(grep -c "worker: ocr: .*cannot load tesseract language data on this machine" "$T/w0.err") == 1 ]] ||
  fail "the worker's start check did not warn once of the missing OCR data: $(head -5 "$T/w0.err")"
vt jobs --failed > "$T/failed.txt" || fail "jobs --failed"
grep -q "$idb" "$T/failed.txt" && grep -q ocr "$T/failed.txt" ||
  fail "jobs --failed does not list it: $(cat "$T/failed.txt")"

# the machine without the data: one attempt, queued again with the reason
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/a.mp4")
[[ -n $id ]] || fail "add printed no id"
first_attempt "$id" ocr "$T/w1.err" TESSDATA_PREFIX="$T/no-tessdata" VIDTHEQUE_RETRY_BASE=3600
row=$(ocr_row "$id")
[[ $row == queued\|1\|*"cannot load tesseract language data on this machine"* ]] ||
  fail "missing OCR data was final (or not tried): $row; $(cat "$T/w1.err")"
[[ $(lib_sql "SELECT state FROM stages WHERE video_id='$id' AND name='keyframe'") == done ]] ||
  fail "keyframe did not run on the machine without OCR data"
vt search granite | grep -q "$id" && fail "the screen text was found before any ocr ran"

# a machine that has the data (TESSDATA_PREFIX as the system has it) reads the frames; the
# dead letter stays as it is
lib_sql "UPDATE stages SET retry_at = 0 WHERE video_id='$id'"
"$VIDTHEQUE" -L "$LIB" worker --drain 2> "$T/w2.err" || fail "worker: $(cat "$T/w2.err")"
grep -q "worker: ocr:" "$T/w2.err" && fail "a machine with the data was warned: $(cat "$T/w2.err")"
[[ $(ocr_row "$id") == done\|2\| ]] || fail "the machine with the data did not run ocr: $(ocr_row "$id")"
[[ $(vt ls | awk -F'\t' -v id="$id" '$1 == id {print $4 "/" $5}') == ready/ok ]] ||
  fail "the video is not indexed once a machine with the data ran ocr: $(vt ls)"
vt search granite | grep -q "$id" || fail "search does not find the screen text"
[[ $(ocr_row "$idb") == failed\|4\|* ]] || fail "the dead letter was run again: $(ocr_row "$idb")"
note "ok"
