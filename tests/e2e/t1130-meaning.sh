#!/usr/bin/env bash
# Search by meaning with the in-process Model2Vec backend and the test model of
# tests/data/model2vec-test-vocab-quantized (coarse: 128 distinct vectors, but "car" and
# "automobile" share one while "banana" has another). A talk whose captions say
# "automobile" at 0:21 and a slide that shows it: search by meaning finds both moments
# for words they do not hold; words mode finds nothing; hybrid says which signal
# matched. Nothing configured, the stage is skipped with the reason; a broken config fails
# it with one line; a model changed makes `redo --stage text_embed` re-embed, and vectors
# of the old model are never compared with the new one's.
# backends: sqlite postgresql (run-all.sh runs it on both)
. "$(dirname "$0")/lib.sh"

MODEL=$DATA/model2vec-test-vocab-quantized
[[ -f $MODEL/model.safetensors ]] || fail "no test model in $MODEL"

# a talk: 0:00-0:30 grey, 0:30-1:30 a slide reading AUTOMOBILE (a cut between); four
# spoken cues, one about an automobile at 0:21
fixture gen_automobile.sh "$T/in"

vt init > /dev/null
# nothing configured: skipped with the reason, search stays words only
id=$(vt add "$T/in/talk.mp4")
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='text_embed'][0]['state']") == skipped ]] ||
  fail "text_embed not skipped without a model"
json "$T/doc.json" "[s for s in d['stages'] if s['name']=='text_embed'][0]['error']" |
  grep -q "no text embedding model configured" || fail "skip reason missing"
vt search --json car > "$T/s.json"
[[ $(json "$T/s.json" "d['mode']") == words ]] || fail "auto mode without a model is not words"
expect_exit 1 vt search --mode meaning car
one_line_err
grep -q "no text embedding model configured" "$T/err" || fail "meaning without a model: $(cat "$T/err")"

# a model: redo embeds, provenance names it and its dimension
vt config set text_embed.model "$MODEL"
vt redo "$id" --stage text_embed
vt export "$id" > "$T/doc.json"
st=$(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='text_embed'][0]")
[[ $st == *"'state': 'done'"* && $st == *"model2vec"* && $st == *"(64 d)"* ]] ||
  fail "text_embed after configuring: $st"
[[ $st == *"1 frame(s)"* ]] || fail "the slide's text was not embedded: $st"

# meaning finds a moment that shares no word with the query; words does not
vt search --json --mode words car > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "words mode matched 'car'"
# (a chunk holds the four cues: "car" alone stands below the relevance floor there, t1131)
vt search --json --mode words "my car broke down on the road" > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "words mode matched the paraphrase"
vt search --json --mode meaning --source speech "my car broke down on the road" > "$T/s.json"
[[ $(json "$T/s.json" "d['hits'][0]['start_s']") == 21.0 ]] ||
  fail "meaning: first speech hit not the automobile cue: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "d['hits'][0]['matched']") == "['meaning']" ]] || fail "matched: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "d['mode']") == meaning ]] || fail "mode not meaning"
vt search --json --mode meaning --source screen car > "$T/s.json"
[[ $(json "$T/s.json" "d['hits'][0]['source']") == screen ]] || fail "no screen hit: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "d['hits'][0]['start_s'] >= 29 and d['hits'][0]['start_s'] <= 31") == True ]] ||
  fail "screen hit not at the slide's shot: $(cat "$T/s.json")"
vt search --json --mode meaning "sweet fruit" > "$T/s.json"
[[ $(json "$T/s.json" "d['hits'][0]['start_s']") == 41.0 ]] || fail "sweet fruit: $(cat "$T/s.json")"
# hybrid (the default once a model is configured): both signals on the same moment
vt search --json automobile > "$T/s.json"
[[ $(json "$T/s.json" "d['mode']") == hybrid ]] || fail "auto mode with a model is not hybrid"
# (the slide: the captions' chunk stands below the floor for one word, its hit is words')
json "$T/s.json" "[h['matched'] for h in d['hits'] if h['source']=='screen'][0]" | grep -q "'words', 'meaning'" ||
  fail "hybrid hit on the slide does not say words and meaning: $(cat "$T/s.json")"
[[ $(json "$T/s.json" "[h['matched'] for h in d['hits'] if h['start_s']==21.0][0]") == "['words']" ]] ||
  fail "hybrid hit at 0:21: $(cat "$T/s.json")"
# query filters apply to meaning hits too
vt search --json --mode meaning "my car broke down on the road video:$id source:speech" > "$T/s.json"
[[ $(json "$T/s.json" "all(h['source']=='speech' for h in d['hits']) and len(d['hits'])>0") == True ]] ||
  fail "filters in the query: $(cat "$T/s.json")"
vt search --json --mode meaning "car source:title" > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "meaning has no titles"

# another model (the same files, another identity): nothing comparable until re-embedded
cp -r "$MODEL" "$T/model2"
printf '\n' >> "$T/model2/config.json"
python3 - "$T/model2/model.safetensors" << 'PY'
import json, struct, sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
n = struct.unpack('<Q', b[:8])[0]
start = 8 + n + json.loads(b[8:8 + n])['embeddings']['data_offsets'][0]
b[start] ^= 1  # the lowest bit of the first weight: another file, another vector space
open(p, 'wb').write(b)
PY
vt config set text_embed.model "$T/model2"
vt search --json --mode meaning car > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits'])") == 0 ]] || fail "vectors of the old model compared with the new one"
vt redo --all --stage text_embed
vt search --json --mode meaning car > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits']) > 0") == True ]] || fail "not re-embedded with the new model"
expect_exit 2 vt redo --all "$id" --stage text_embed

# a model folder that is not there: the stage fails with one line, the video is partial
vt config set text_embed.model "$T/nowhere"
expect_exit 1 vt redo "$id" --stage text_embed
grep -q "nowhere" "$T/err" || fail "missing model folder not named: $(cat "$T/err")"
vt export "$id" > "$T/doc.json"
[[ $(json "$T/doc.json" "[s for s in d['stages'] if s['name']=='text_embed'][0]['state']") == failed ]] ||
  fail "text_embed not failed with a missing model"
# hybrid still answers with words, and says why meaning is missing
vt search --json automobile > "$T/s.json"
[[ $(json "$T/s.json" "len(d['hits']) > 0 and 'meaning left out' in d.get('warning', '')") == True ]] ||
  fail "hybrid with a broken model: $(cat "$T/s.json")"
vt config set text_embed.backend none
vt search --json car > "$T/s.json"
[[ $(json "$T/s.json" "d['mode']") == words ]] || fail "backend none is not words"
echo "ok meaning"
