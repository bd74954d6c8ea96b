#!/usr/bin/env bash
# backends: sqlite postgresql
# The recipe of docs/ARCHITECTURE.md, "Adding a stage", on a copy of the tree: a new stage
# (tests/data/example-stage/stage_wordcount.c, counting the words of the cues, one row per cue
# in its own table) is one line in the stage table (lib/model/stage.h), one file in
# lib/stages/ and one migration (both dialects) in lib/store/migrations.h. Nothing else of
# the tree changes. The copy builds, opens a library made by this build (its schema) and
# migrates it, indexes a clip with the new stage done and its rows stored; `rm` takes the
# rows with the video; this build then refuses the newer database.
. "$(dirname "$0")/lib.sh"

command -v git > /dev/null || fail "no git"
SRC=$T/src
mkdir -p "$SRC"
(cd "$ROOT" && git ls-files -z | xargs -0 cp --parents -t "$SRC")
(cd "$SRC" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base) ||
  fail "cannot make a repository of the copy"

# 1. the table line (after frame_embed, the last: its line gets a continuation)
python3 - "$SRC/lib/model/stage.h" << 'PY' || fail "cannot add the table line"
import sys
p = sys.argv[1]
s = open(p).read()
old = "VT_STAGE_ROWS_OF_DEPS)\n/* clang-format on */"
assert s.count(old) == 1
s = s.replace(old, "VT_STAGE_ROWS_OF_DEPS) \\\n    X(WORDCOUNT,   wordcount,   4,      VT_BIT(FETCH),    VT_BIT(STT),      0)\n/* clang-format on */")
open(p, "w").write(s)
PY
# 2. the stage's file
cp "$ROOT/tests/data/example-stage/stage_wordcount.c" "$SRC/lib/stages/stage_wordcount.c"
# 3. its migration: the list's next entry, SQLite's and PostgreSQL's SQL side by side
# (this build's schema version: the base and one per entry of the list)
CUR=$(($(sed -n 's/^#define VT_STORE_BASE_VERSION \([0-9]*\)$/\1/p' "$ROOT/lib/store/migrations.h") +
  $(grep -c '^    X([0-9]*,' "$ROOT/lib/store/migrations.h")))
NEXT=$((CUR + 1))
python3 - "$SRC/lib/store/migrations.h" "$NEXT" << 'PY' || fail "cannot add the migration"
import sys
p = sys.argv[1]
s = open(p).read()
end = "    /* the end of the list */\n"
assert s.count(end) == 1
s = s.replace(end, r'''    X(10, "CREATE TABLE wordcount_cues (" \
         " video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE," \
         " cue_idx INTEGER NOT NULL, words INTEGER NOT NULL," \
         " PRIMARY KEY (video_id, cue_idx)) WITHOUT ROWID;", \
         "CREATE TABLE wordcount_cues (" \
         " video_id text COLLATE \"C\" NOT NULL REFERENCES videos(id) ON DELETE CASCADE," \
         " cue_idx bigint NOT NULL, words bigint NOT NULL," \
         " PRIMARY KEY (video_id, cue_idx));") \
'''.replace("X(10,", "X(%s," % sys.argv[2]) + end)
open(p, "w").write(s)
PY

changed=$(cd "$SRC" && git add -A && git diff --cached --name-only | sort | tr '\n' ' ')
[[ $changed == "lib/model/stage.h lib/stages/stage_wordcount.c lib/store/migrations.h " ]] ||
  fail "changed: $changed"
[[ $(cd "$SRC" && git diff --cached --numstat lib/model/stage.h) == "2	1	lib/model/stage.h" ]] ||
  fail "stage.h: $(cd "$SRC" && git diff --cached lib/model/stage.h)"
[[ $(cd "$SRC" && git diff --cached --numstat lib/store/migrations.h) == "8	0	lib/store/migrations.h" ]] ||
  fail "migrations.h: $(cd "$SRC" && git diff --cached lib/store/migrations.h)"

(cd "$SRC" && make -j2 CFLAGS="-O0 -g" build/rel/vidtheque build/rel/vidtheque-full > "$T/build.log" 2>&1) ||
  fail "the copy does not build: $(tail -20 "$T/build.log")"

if on_pg; then version_sql="SELECT max(schema_version) FROM vt_meta"; else version_sql="PRAGMA user_version"; fi
# a library of this build, at schema CUR
vt init > /dev/null || fail "init"
[[ $(lib_sql "$version_sql") == "$CUR" ]] || fail "schema: $(lib_sql "$version_sql")"
OLD=$VIDTHEQUE
VIDTHEQUE=$SRC/build/rel/vidtheque

gen_clip "$T/a.mp4" 3 'Hello'
printf '1\n00:00:00,000 --> 00:00:01,000\nOne two three\n\n2\n00:00:01,000 --> 00:00:02,500\nfour five\n' > "$T/a.srt"
id=$(vt add "$T/a.mp4" 2> "$T/add.err") || fail "add: $(cat "$T/add.err")"
[[ $(lib_sql "$version_sql") == "$NEXT" ]] || fail "not migrated: $(lib_sql "$version_sql")"
vt export "$id" --format json > "$T/show.json" || fail "export"
python3 - "$T/show.json" << 'PY' || fail "the wordcount stage: $(cat "$T/show.json")"
import json, sys
v = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in v["stages"]}
w = st["wordcount"]
assert w["state"] == "done", w
assert w["model"] == "wordcount 1; 5 word(s)", w
PY
rows=$(lib_sql "SELECT cue_idx, words FROM wordcount_cues WHERE video_id = '$id' ORDER BY cue_idx" | tr '\n' ' ')
[[ $rows == "0|3 1|2 " ]] || fail "wordcount_cues: '$rows'"

vt rm "$id" > /dev/null 2> "$T/rm.err" || fail "rm: $(cat "$T/rm.err")"
[[ $(lib_sql "SELECT count(*) FROM wordcount_cues") == 0 ]] || fail "rows left after rm"

# this build is older than the library now
VIDTHEQUE=$OLD
! vt ls > /dev/null 2> "$T/err" || fail "the old build opened the newer library"
grep -q "schema version $NEXT is newer than this program ($CUR)" "$T/err" || fail "old build: $(cat "$T/err")"
echo "ok"
