#!/usr/bin/env bash
# The relevance floor of search by meaning (lib/search/floor.c), with the test text model:
# queries that cannot match (random letters, shuffled letters) get no hit by meaning, in
# hybrid and meaning mode, and the search page says "Nothing found" with its suggestions;
# a paraphrase (a word the talk never says nor shows) is still found by meaning and says
# how strong it is, in the CLI's text, --json, /api/search and the search page; word hits
# are never dropped. The floor is measured once, kept in LIBRARY/calibration.json (shown
# by `models` and `search --explain`), and measured again when the vectors changed by
# more than a tenth; a library that cannot be written still searches.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"

MODEL=$DATA/model2vec-test-vocab-quantized
[[ -f $MODEL/model.safetensors ]] || fail "no test model in $MODEL"
command -v curl > /dev/null || fail "curl is needed"

# a talk: 0:00-0:30 grey, 0:30-1:30 a slide reading AUTOMOBILE (a cut between); four
# spoken cues, one about an automobile at 0:21
fixture gen_automobile.sh "$T/in"

vt init > /dev/null
vt config set text_embed.model "$MODEL"
id=$(vt add "$T/in/talk.mp4")
[[ ! -e $LIB/calibration.json ]] || fail "calibration before any search"

# queries that cannot match: no hit by meaning, in either mode; the floor says why
for q in xyzzy "qzvkex brotux" "ehtr nvegie" flembicorp; do
  vt search --json "$q" > "$T/s.json"
  [[ $(json "$T/s.json" "d['mode']") == hybrid ]] || fail "not hybrid: $(cat "$T/s.json")"
  [[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "'$q' has hits: $(cat "$T/s.json")"
  [[ $(json "$T/s.json" "d['floors'][0]['below_floor'] > 0") == True ]] ||
    fail "'$q': nothing below the floor: $(cat "$T/s.json")"
  vt search --json --mode meaning "$q" > "$T/s.json"
  [[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "'$q' meaning hits: $(cat "$T/s.json")"
done
# the floor stands above chance, measured once over the probes, then kept
[[ -f $LIB/calibration.json ]] || fail "no LIBRARY/calibration.json"
f="d['floors'][0]"
[[ $(json "$T/s.json" "$f['signal'] == 'meaning' and $f['space'].startswith('model2vec:')") == True ]] ||
  fail "floor's space: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "$f['probes'] >= 48 and $f['vectors'] == 2") == True ]] || fail "probes: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "$f['floor'] > $f['chance_mean'] and $f['strong'] > $f['floor']") == True ]] ||
  fail "floor not above chance: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "$f['measured_now']") == False ]] || fail "measured again: $(cat "$T/s.json")"

# a paraphrase: "car" is said nowhere, the slide reads AUTOMOBILE
vt search --json --mode words car > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "words found car"
vt search --json car > "$T/s.json"
h="d['hits'][0]"
[[ $(json "$T/s.json" "$h['source'] == 'screen' and 29 <= $h['start_s'] <= 31") == True ]] ||
  fail "car: not the slide: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "$h['matched'] == ['meaning'] and $h['relevance'] == 'strong'") == True ]] ||
  fail "car: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "$h['similarity'] >= d['floors'][0]['strong']") == True ]] ||
  fail "strong below the strong level: $(cat "$T/s.json")"
vt search --json --mode meaning --source speech "my car broke down on the road" > "$T/s.json"
[[ $(json "$T/s.json" "$h['start_s'] == 21.0 and $h['relevance'] in ('weak', 'strong')") == True ]] ||
  fail "spoken paraphrase: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "all(x['similarity'] >= d['floors'][0]['floor'] for x in d['hits'])") == True ]] ||
  fail "a hit below the floor: $(cat "$T/s.json")"
# word hits are never dropped, whatever their meaning scores; they carry no label
vt search --json thank > "$T/s.json"
[[ $(json "$T/s.json" "[(x['start_s'], x['matched']) for x in d['hits']]") == "[(61.0, ['words'])]" ]] ||
  fail "word hit: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "'relevance' in $h") == False ]] || fail "a word hit with a label"

# the CLI's text says it, --explain shows the floor, models lists it
vt search car > "$T/out"
grep -q "screen (meaning) strong" "$T/out" || fail "text output: $(cat "$T/out")"
vt search --explain xyzzy > "$T/out"
grep -q "^meaning: floor 0\.[0-9]*, strong from 0\.[0-9]*; chance .* over [0-9]* queries that cannot match, 2 vectors (kept)" "$T/out" ||
  fail "--explain: $(cat "$T/out")"
vt search --explain --mode words xyzzy > "$T/out"
grep -q "words only: no relevance floor" "$T/out" || fail "--explain words: $(cat "$T/out")"
vt models > "$T/out"
grep -q "model2vec model2vec-test-vocab-quantized (64 d) \[model2vec:[0-9a-f]*\]: floor 0\.[0-9]*, strong from" "$T/out" ||
  fail "models: $(cat "$T/out")"

# the web: the nothing-found page and its suggestions; the label on a hit; /api/search
start_server
curl -s "$B/search?q=xyzzy" > "$T/body"
grep -q 'Nothing found' "$T/body" || fail "xyzzy: no nothing-found page"
grep -q 'class="suggest"' "$T/body" || fail "xyzzy: no suggestions"
curl -s "$B/search?q=car" > "$T/body"
grep -q 'class="badge rel-strong"' "$T/body" || fail "car: no strong badge"
! grep -q 'Nothing found' "$T/body" || fail "car: nothing found"
curl -s "$B/api/search?q=car" > "$T/s.json"
[[ $(json "$T/s.json" "$h['relevance']") == strong ]] || fail "api: $(cat "$T/s.json")"
curl -s "$B/api/search?q=xyzzy" > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "api xyzzy: $(cat "$T/s.json")"
stop_server

# a file that is not ours is not believed: measured again, and written back
printf '{"spaces": [{"space": 1}' > "$LIB/calibration.json"
vt search --json xyzzy > "$T/s.json"
[[ $(json "$T/s.json" "d['floors'][0]['measured_now']") == True ]] || fail "broken file believed"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$LIB/calibration.json" || fail "not rewritten"

# vectors changed by more than a tenth: another talk, measured again on four vectors
ffmpeg -v error -y -i "$T/in/talk.mp4" -c copy -metadata title=again "$T/in/again.mp4"
sed 's/automobile/bicycle/' "$T/in/talk.srt" > "$T/in/again.srt"
vt add "$T/in/again.mp4" > /dev/null
vt search --json xyzzy > "$T/s.json"
[[ $(json "$T/s.json" "d['floors'][0]['measured_now'] and d['floors'][0]['vectors'] == 4") == True ]] ||
  fail "not measured again: $(cat "$T/s.json")"
vt search --json xyzzy > "$T/s.json"
[[ $(json "$T/s.json" "d['floors'][0]['measured_now']") == False ]] || fail "measured each time"

# a library that cannot be written: searches, measuring in memory
if ! on_pg && [[ $(id -u) != 0 ]]; then
  rm "$LIB/calibration.json"
  chmod a-w "$LIB"
  vt search --json car > "$T/s.json" || { chmod u+w "$LIB"; fail "read-only library"; }
  chmod u+w "$LIB"
  [[ $(json "$T/s.json" "$h['relevance']") == strong ]] || fail "read-only: $(cat "$T/s.json")"
fi
echo "ok floor"
