#!/usr/bin/env bash
# The recipe of docs/ARCHITECTURE.md, "Adding a stage", on a copy of the tree: a new stage
# (tests/data/example-stage/wordcount.c, counting the words of the cues) is one line in the
# stage table (lib/model/stage.h) and one file in lib/stages/; the copy builds and indexes a
# clip with the new stage's row done and its provenance. Nothing else of the tree changes.
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
cp "$ROOT/tests/data/example-stage/wordcount.c" "$SRC/lib/stages/wordcount.c"

changed=$(cd "$SRC" && git add -A && git diff --cached --name-only | sort | tr '\n' ' ')
[[ $changed == "lib/model/stage.h lib/stages/wordcount.c " ]] || fail "changed: $changed"
[[ $(cd "$SRC" && git diff --cached --numstat lib/model/stage.h) == "2	1	lib/model/stage.h" ]] ||
  fail "stage.h: $(cd "$SRC" && git diff --cached lib/model/stage.h)"

(cd "$SRC" && make -j2 CFLAGS="-O0 -g" build/rel/vidtheque build/rel/vidtheque-full > "$T/build.log" 2>&1) ||
  fail "the copy does not build: $(tail -20 "$T/build.log")"

VIDTHEQUE=$SRC/build/rel/vidtheque
gen_clip "$T/a.mp4" 3 'Hello'
id=$(vt add "$T/a.mp4" 2> "$T/add.err") || fail "add: $(cat "$T/add.err")"
vt export "$id" --format json > "$T/show.json" || fail "export"
python3 - "$T/show.json" << 'PY' || fail "the wordcount stage: $(cat "$T/show.json")"
import json, sys
v = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in v["stages"]}
w = st["wordcount"]
assert w["state"] == "done", w
assert w["model"].startswith("wordcount 1; ") and w["model"].endswith(" word(s)"), w
PY
echo "ok"
