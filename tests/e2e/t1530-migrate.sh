#!/usr/bin/env bash
# migrate: an indexed SQLite library moved into PostgreSQL and back. Each move copies,
# proves every export document equal, and only then switches the config; the documents,
# subtitles, searches and pages are the same on either side; a destination that already
# holds a catalog is refused and nothing changes. Runs on VT_TEST_PG's server
# (tests/run-all.sh) or on a cluster of its own.
. "$(dirname "$0")/lib.sh"

pg_database vt_t1530
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }

fixture gen_talk.sh "$T/talk" 2 > /dev/null
vt init
id=$(vt add "$T/talk/talk.mp4") || fail "add"
# queries from the words on the slides: plain, phrase, prefix, filtered, excluded
vt export "$id" > "$T/doc0.json" || fail "export"
mapfile -t words < <(json "$T/doc0.json" "'\\n'.join(w.lower() for f in d['frames'] for l in f['ocr'] if not l.get('noise') for w in l['text'].split() if w.isalpha() and len(w) > 3)")
((${#words[@]} >= 2)) || fail "too few words on the slides: ${#words[@]}"
queries=("${words[0]}" "\"${words[0]} ${words[1]}\"" "${words[0]:0:3}*" "source:screen ${words[1]}" "${words[0]} -zzzz" "video:$id ${words[1]}")
snapshot() { # DIR: every document, subtitle and search answer of the library
  mkdir -p "$1"
  vt export "$id" > "$1/doc.json" || fail "export"
  vt export "$id" --format vtt > "$1/doc.vtt" || fail "export vtt"
  vt ls > "$1/ls" || fail "ls"
  local i=0
  for q in "${queries[@]}"; do
    vt search --json -- "$q" > "$T/s.json" || fail "search '$q'"
    # the hits, their order and scores: all but how long it took
    python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("took_ms"); print(json.dumps(d))' \
      < "$T/s.json" > "$1/search$i.json" || fail "search '$q': no JSON"
    i=$((i + 1))
  done
}
same() { # A B
  for f in "$1"/*; do
    cmp -s "$f" "$2/$(basename "$f")" || fail "$(basename "$f") differs after the move: $(diff "$f" "$2/$(basename "$f")" | head -10)"
  done
}
snapshot "$T/before"
[[ $(json "$T/before/doc.json" "len(d['frames'])") -gt 3 ]] || fail "too few frames to compare"
[[ $(json "$T/before/search0.json" "len(d['hits'])") -gt 0 ]] || fail "the search finds nothing to compare"

# bad destinations: one line, nothing changed
expect_exit 2 vt migrate
expect_exit 1 vt migrate --to "mysql://x@y/z"
grep -q "postgresql:// URL or 'sqlite'" "$T/err" || fail "bad --to: $(cat "$T/err")"
expect_exit 1 vt migrate --to sqlite
grep -q "already there" "$T/err" || fail "--to sqlite on SQLite: $(cat "$T/err")"
[[ ! -e $LIB/config ]] || ! grep -q '^db' "$LIB/config" || fail "a failed migrate changed the config"

# into PostgreSQL
vt migrate --to "$url" > "$T/out" || fail "migrate --to PostgreSQL: $(cat "$T/err")"
grep -q "^1 video copied and verified" "$T/out" || fail "migrate said: $(cat "$T/out")"
[[ $(sed -n 's/^db = //p' "$LIB/config") == "$url" ]] || fail "config db: $(cat "$LIB/config")"
[[ $(psql "$url" -Atc "SELECT count(*) FROM videos") == 1 ]] || fail "no video row in PostgreSQL"
snapshot "$T/pg"
same "$T/before" "$T/pg"
start_server
curl -fsS "$B/v/$id" > "$T/video.html" || fail "GET /v/ID on PostgreSQL"
stop_cleanly
# into a database that holds a catalog: refused, the config stays
expect_exit 1 vt migrate --to "${url}"
grep -q "already there" "$T/err" || fail "migrate to itself: $(cat "$T/err")"

# and back: the old library.db is still there (left as it was) and must be moved first
expect_exit 1 vt migrate --to sqlite
grep -q "move it away first" "$T/err" || fail "old library.db: $(cat "$T/err")"
[[ $(sed -n 's/^db = //p' "$LIB/config") == "$url" ]] || fail "a refused migrate changed the config"
mv "$LIB/library.db" "$T/old.db"
rm -f "$LIB/library.db-wal" "$LIB/library.db-shm"
vt migrate --to sqlite > "$T/out" || fail "migrate --to sqlite: $(cat "$T/err")"
! grep -q '^db' "$LIB/config" || fail "config still names PostgreSQL"
snapshot "$T/back"
same "$T/before" "$T/back"
echo "all good"
