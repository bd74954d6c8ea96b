#!/usr/bin/env bash
# PostgreSQL going away and coming back (pg_ctl stop/start and restart) under a running
# server: while it is down every request that needs the catalog gets a 503 with a clear
# message and a Retry-After (never a crash, a hang or a 500), static files still come;
# once it is back the same server answers as before, without a restart of its own.
# Always on a cluster of its own: stopping the suite's shared one would break the others.
# alone: stops and restarts PostgreSQL under a running server
. "$(dirname "$0")/lib.sh"

pg_database vt_t1520 own

# one short video to serve (what the outage tests is the server, not the indexing)
gen_clip "$T/talk.mp4" 4 "Harbor the tides"
vt init --db "$url" || fail "init --db"
id=$(vt add "$T/talk.mp4") || fail "add (queues it on PostgreSQL)"
vt worker --drain || fail "worker --drain"
start_server
# every thread of the server holds a connection: ask enough pages to open several
for p in / "/v/$id" "/api/videos/$id" "/search?q=the" /api/videos; do
  curl -fsS -o /dev/null "$B$p" || fail "GET $p before the outage"
done

status() { curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' --max-time 20 "$B$1"; }
bash "$ROOT/tests/pg/cluster.sh" stop "$PGDIR" || fail "pg_ctl stop"
for p in "/v/$id" "/api/videos/$id" "/api/search?q=the" /; do
  code=$(status "$p")
  [[ $code == 503 ]] || fail "GET $p with PostgreSQL down: $code $(head -c 300 "$T/body")"
  grep -qi '^retry-after: 5' "$T/hdr" || fail "GET $p: no Retry-After"
  grep -q "database is unavailable" "$T/body" || fail "GET $p: unclear message: $(head -c 300 "$T/body")"
done
[[ $(status /static/app.css) == 200 ]] || fail "static files need no database"
kill -0 "$SRV_PID" || fail "the server died during the outage"

bash "$ROOT/tests/pg/cluster.sh" start "$PGDIR" > /dev/null || fail "pg_ctl start"
for p in "/v/$id" "/api/videos/$id" "/api/search?q=the" /; do
  code=$(status "$p")
  [[ $code == 200 ]] || fail "GET $p once PostgreSQL is back: $code $(head -c 300 "$T/body")"
done
# a restart between two requests: the next one reconnects
bash "$ROOT/tests/pg/cluster.sh" restart "$PGDIR" || fail "pg_ctl restart"
ok=0
for _ in 1 2 3; do
  code=$(status "/api/videos/$id")
  [[ $code == 200 ]] && ok=1 && break
  [[ $code == 503 ]] || fail "after a restart: $code $(head -c 300 "$T/body")"
done
((ok)) || fail "the server did not reconnect after pg_ctl restart"
stop_cleanly

# workers through an outage: three videos queued, two workers, PostgreSQL restarted
# while they index and then stopped for a few seconds; they reconnect and every video
# ends ready, each stage run to done once its outputs are committed (talks of a minute,
# which keep the workers busy through the outage: the seeds t0100-talk.sh indexes, made
# once a run under tests/run-all.sh)
ids=()
for seed in 1 2 3; do
  fixture gen_talk.sh "$T/w$seed" "$seed" > /dev/null
  ids+=("$(vt add "$T/w$seed/talk.mp4")") || fail "add (queue) $seed"
done
"$VIDTHEQUE" -q -L "$LIB" worker --lease 6 --drain 2> "$T/w1.err" &
W1=$!
"$VIDTHEQUE" -q -L "$LIB" worker --lease 6 --drain 2> "$T/w2.err" &
W2=$!
sleep 3
bash "$ROOT/tests/pg/cluster.sh" restart "$PGDIR" || fail "pg_ctl restart under the workers"
sleep 2
bash "$ROOT/tests/pg/cluster.sh" stop "$PGDIR" || fail "pg_ctl stop under the workers"
sleep 3
kill -0 $W1 2> /dev/null || kill -0 $W2 2> /dev/null || note "both workers finished before the outage"
bash "$ROOT/tests/pg/cluster.sh" start "$PGDIR" > /dev/null || fail "pg_ctl start"
rc1=0 rc2=0
wait $W1 || rc1=$?
wait $W2 || rc2=$?
((rc1 == 0 && rc2 == 0)) || fail "workers exited $rc1 $rc2: $(tail -3 "$T/w1.err") $(tail -3 "$T/w2.err")"
for i in "${ids[@]}"; do
  vt export "$i" > "$T/$i.json" || fail "export $i"
  [[ $(json "$T/$i.json" "d['index_state']") == ready ]] ||
    fail "video $i is $(json "$T/$i.json" "d['index_state']") after the outage: $(json "$T/$i.json" "[(s['name'], s['state'], s.get('error')) for s in d['stages']]")"
done
vt jobs > "$T/jobs" || fail "jobs"
echo "all good"
