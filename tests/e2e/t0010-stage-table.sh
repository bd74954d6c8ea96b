#!/usr/bin/env bash
# The stage table (lib/model/stage.h) is the one place that names the stages: no other source
# file spells a stage's name as a string. No call cycle between fetch.c, library.c and
# pipeline.c. And a video made before a stage existed gets
# that stage's row, queued, when the pipeline first looks at it (resume runs it).
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"

table=$ROOT/lib/model/stage.h
mapfile -t names < <(sed -n 's/^ *X([A-Z_]*, *\([a-z_][a-z0-9_]*\),.*/\1/p' "$table")
((${#names[@]} >= 7)) || fail "cannot read the stage names from $table: ${names[*]}"

# The same words used for something that is not a stage (file: fixed string, and why).
allowed=(
  'lib/run/export.c:json_object_set_new(o, "ocr", ocr_json('      # a frame's OCR lines (JSON key)
  'src/cli/cmd_show.c:json_object_get(v, "ocr")'                  # reads that key
  'src/web/web_video.c:json_object_get(f, "ocr")'                 # reads that key
  'src/cli/cmd_add.c:{"stt", required_argument'                   # the --stt option of add
)
bad=
for name in "${names[@]}"; do
  while IFS= read -r hit; do
    file=${hit%%:*} rest=${hit#*:} line=${rest#*:}
    ok=
    for a in "${allowed[@]}"; do
      [[ $file == "${a%%:*}" && $line == *"${a#*:}"* ]] && ok=1
    done
    [[ -n $ok ]] || bad+="$hit"$'\n'
  done < <(cd "$ROOT" && grep -rnE --include="*.[ch]" "[\"']$name[\"']" lib src include |
           grep -v '^lib/model/stage\.[ch]:' || true)
done
[[ -z $bad ]] || fail "a stage name as a string outside the stage table:"$'\n'"$bad"

# No call cycle between fetch.c, library.c and pipeline.c: the handle (library.c) calls
# neither, and the pipeline does not call into fetch (fetch's step after indexing is its
# stage's indexed hook).
calls() { grep -nE "\<($2)\(" "$ROOT/$1" | grep -vE '^[0-9]+:(int|void|static) ' || true; }
hits=$(calls lib/core/library.c 'vt_pipeline_[a-z_]+|vt_process|vt_redo|vt_resume|vt_fetch_[a-z_]+|vt_add_[a-z_]+|vt_update|vt_is_url|vt_source_url_at|vt_library_set_fetch')
[[ -z $hits ]] || fail "library.c calls the pipeline or fetch: $hits"
hits=$(calls lib/run/pipeline.c 'vt_fetch_[a-z_]+|vt_add_[a-z_]+|vt_update|vt_is_url|vt_source_url_at|vt_library_set_fetch')
[[ -z $hits ]] || fail "pipeline.c calls into fetch: $hits"

# ---- lazily created stage rows ----
expect_exit 0 vt init
gen_clip "$T/a.mp4" 2 'Lazy Row'
expect_exit 0 vt add "$T/a.mp4"
id=$(cat "$T/out")
expect_exit 0 vt export "$id" --format json
cp "$T/out" "$T/before.json"
# as if the last stage had been added to the table after this video was indexed
last=${names[${#names[@]} - 1]}
lib_sql "DELETE FROM stages WHERE video_id = '$id' AND name = '$last'"
expect_exit 0 vt export "$id" --format json
[[ $(json "$T/out" "[s['name'] for s in d['stages']].count('$last')") == 0 ]] ||
  fail "the row of '$last' is still there"
expect_exit 0 vt resume
expect_exit 0 vt export "$id" --format json
[[ $(json "$T/out" "[s['name'] for s in d['stages']] == [s['name'] for s in json.load(open('$T/before.json'))['stages']]") == True ]] ||
  fail "resume did not give the video back its '$last' row: $(json "$T/out" "[(s['name'], s['state']) for s in d['stages']]")"
[[ $(json "$T/out" "[s['state'] for s in d['stages'] if s['name'] == '$last'][0] != 'queued'") == True ]] ||
  fail "the '$last' row was created but not run"
[[ $(json "$T/out" "d['index_state']") == ready ]] || fail "index_state $(json "$T/out" "d['index_state']")"
echo "ok"
