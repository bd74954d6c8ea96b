#!/usr/bin/env bash
# backends: sqlite postgresql
# Media every machine can reach (issue 26, failure 5): `add` copies a local file (a hard
# link on the same file system) into LIBRARY/media/<id>/, so a worker that cannot see the
# original path (the file moved after add, as on another machine) still indexes the video;
# `add --in-place` records the absolute path as before, and a worker that cannot read it
# queues the stage again with the reason (VT_EHERE: this machine lacks it), not `failed` at
# attempt 1. A worker that cannot write the library says so in one line and does not start.
# (add runs as the binary itself: on PostgreSQL the test's `vt add` runs a worker of its own.)
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/src"
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Copied rivers':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/src/a.mp4"
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='In place lakes':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/src/b.mp4"

vt init
# a caption file beside the media goes with it (the captions stage reads it there)
printf '1\n00:00:00,200 --> 00:00:01,500\ncaptions beside the copy\n' > "$T/src/a.srt"
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/src/a.mp4")
[[ -n $id ]] || fail "add printed no id"
copy=$LIB/media/$id/a.mp4
[[ -f $copy ]] || fail "add did not put the file into the library: $(ls -R "$LIB/media" 2>&1)"
cmp -s "$copy" "$T/src/a.mp4" || fail "the library's copy differs from the file"
cmp -s "$LIB/media/$id/a.srt" "$T/src/a.srt" || fail "the caption file beside it was not taken: $(ls "$LIB/media/$id")"
# same file system: a hard link, no bytes copied
[[ $(stat -c %i "$copy") == $(stat -c %i "$T/src/a.mp4") ]] || fail "not hard-linked on the same file system"
[[ $(lib_sql "SELECT source_path FROM videos WHERE id='$id'") == "media/$id/a.mp4" ]] ||
  fail "source path is not the library's copy: $(lib_sql "SELECT source_path FROM videos WHERE id='$id'")"
ls -A "$LIB/media" | grep -q '^\.add-' && fail "a staged copy was left in media/"

# the original goes away (another machine would not have it): the worker reads the copy
mv "$T/src/a.mp4" "$T/a-moved.mp4"
"$VIDTHEQUE" -q -L "$LIB" worker --drain 2> "$T/w1.err" || fail "worker: $(cat "$T/w1.err")"
[[ $(vt ls | awk -F'\t' -v id="$id" '$1 == id {print $4 "/" $5}') == ready/ok ]] ||
  fail "the copied video is not indexed: $(vt ls) $(cat "$T/w1.err")"
vt search rivers | grep -q "$id" || fail "search does not find the copied video's text"
# check looks after the library's copy
expect_exit 0 vt check
mv "$copy" "$T/copy-away.mp4"
expect_exit 1 vt check
grep -q "$id: the copied media 'media/$id/a.mp4' is missing" "$T/err" || fail "check: $(cat "$T/err")"
mv "$T/copy-away.mp4" "$copy"
# rm removes the library's copy, never the user's file
vt rm "$id"
[[ ! -e $LIB/media/$id ]] || fail "rm left the library's copy"
[[ -f $T/a-moved.mp4 ]] || fail "rm touched the user's file"

# --in-place: the absolute path, and a machine that cannot read it retries, not fails
id2=$("$VIDTHEQUE" -q -L "$LIB" add --queue --in-place "$T/src/b.mp4")
[[ $(lib_sql "SELECT source_path FROM videos WHERE id='$id2'") == "$T/src/b.mp4" ]] ||
  fail "--in-place did not record the absolute path"
[[ ! -e $LIB/media/$id2 ]] || fail "--in-place copied the file"
mv "$T/src/b.mp4" "$T/b-elsewhere.mp4"
first_attempt "$id2" fetch "$T/w2.err" VIDTHEQUE_RETRY_BASE=3600
row=$(lib_sql "SELECT state || '|' || attempts || '|' || error FROM stages WHERE video_id='$id2' AND name='fetch'")
[[ $row == queued\|1\|*"not found on this machine"* ]] || fail "a machine-dependent error was final: $row"
# the machine that has the file (here: it came back) indexes it
mv "$T/b-elsewhere.mp4" "$T/src/b.mp4"
lib_sql "UPDATE stages SET retry_at = 0 WHERE video_id='$id2'"
"$VIDTHEQUE" -q -L "$LIB" worker --drain 2> "$T/w3.err" || fail "worker: $(cat "$T/w3.err")"
[[ $(vt ls | awk -F'\t' -v id="$id2" '$1 == id {print $4 "/" $5}') == ready/ok ]] ||
  fail "the in-place video is not indexed once its file is there: $(vt ls)"

# a worker that cannot make the library's frames folder (a file stands there; root is not
# stopped by permissions): one line saying so, and it does not start
rm -rf "$LIB/frames"
touch "$LIB/frames"
expect_exit 1 "$VIDTHEQUE" -q -L "$LIB" worker --drain
grep -q "^error: worker: cannot .* the frames folder" "$T/err" || fail "no line about the frames folder: $(cat "$T/err")"
rm "$LIB/frames"
note "ok"
