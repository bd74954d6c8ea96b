#!/usr/bin/env bash
# alone: SIGSTOPs a worker and waits on its peers' 2 s looks
# Waking one idle worker per runnable stage (issue 26, "every settle wakes every idle
# worker"): the wake goes to the worker idle the longest, and when that one is frozen
# (SIGSTOP while it waits: a VM pause) the wake is lost with it, but the stage is not
# stranded: another idle worker's unwoken look (every 2 s) takes it, and the video is
# indexed while the frozen one stays stopped. Runs on a PostgreSQL database of its own.
. "$(dirname "$0")/lib.sh"

pg_database vt_t1579
psql() { command psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
ffmpeg -v error -y -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Sleeping owl':fontsize=28:x=20:y=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$T/v.mp4"
vt init --db "$url" || fail "init --db"

note "the worker idle the longest is frozen"
"$VIDTHEQUE" -q -L "$LIB" worker --concurrency 1 2> "$T/a.err" &
a=$!
b=
# a stopped worker left behind would hold its session (and the test's pipes) for ever
trap 'kill -KILL $a $b 2> /dev/null || true; e2e_pg_drop; pg_cleanup; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for _ in $(seq 300); do
  [[ $(psql "$url" -c "SELECT count(*) FROM waiters WHERE idle_since IS NOT NULL") == 1 ]] && break
  sleep 0.1
done
ch=$(psql "$url" -c "SELECT channel FROM waiters WHERE idle_since IS NOT NULL") || fail "no waiters table"
[[ -n $ch ]] || fail "the first worker never waited: $(tail -3 "$T/a.err")"
kill -STOP "$a"
"$VIDTHEQUE" -q -L "$LIB" worker --concurrency 2 2> "$T/b.err" &
b=$!
for _ in $(seq 300); do
  [[ $(psql "$url" -c "SELECT count(*) FROM waiters WHERE idle_since IS NOT NULL") == 3 ]] && break
  sleep 0.1
done
[[ $(psql "$url" -c "SELECT count(*) FROM waiters WHERE idle_since IS NOT NULL") == 3 ]] ||
  fail "the second worker's threads are not waiting: $(psql "$url" -c "SELECT * FROM waiters")"

note "a new video: its fetch wakes the frozen one only, and the other worker indexes it"
id=$("$VIDTHEQUE" -q -L "$LIB" add --queue "$T/v.mp4") || fail "add --queue"
for _ in $(seq 100); do
  [[ $(psql "$url" -c "SELECT idle_since IS NULL FROM waiters WHERE channel = '$ch'") == t ]] && break
  sleep 0.1
done
[[ $(psql "$url" -c "SELECT idle_since IS NULL FROM waiters WHERE channel = '$ch'") == t ]] ||
  fail "the frozen worker, idle the longest, was not the one woken: $(psql "$url" -c "SELECT * FROM waiters")"
for _ in $(seq 900); do
  [[ $(psql "$url" -c "SELECT index_state FROM videos WHERE id = '$id'") == ready ]] && break
  sleep 0.1
done
[[ $(psql "$url" -c "SELECT index_state FROM videos WHERE id = '$id'") == ready ]] ||
  fail "the video is stranded behind the frozen worker: $(psql "$url" -c "SELECT name, state, owner FROM stages WHERE video_id = '$id'") $(tail -3 "$T/b.err")"
[[ $(psql "$url" -c "SELECT count(*) FROM stages WHERE video_id = '$id' AND owner LIKE '%:$a:%'") == 0 ]] ||
  fail "the frozen worker holds a stage"
[[ $(ps -o state= -p "$a") == T* ]] || fail "the first worker is no longer stopped"

note "thawed, the frozen worker looks, finds nothing, and both leave cleanly"
kill -CONT "$a"
kill -TERM "$a" "$b"
wait "$a" || fail "the first worker's exit"
wait "$b" || fail "the second worker's exit"
[[ $(psql "$url" -c "SELECT count(*) FROM waiters") == 0 ]] ||
  fail "waiters left behind: $(psql "$url" -c "SELECT * FROM waiters")"
echo "ok"
