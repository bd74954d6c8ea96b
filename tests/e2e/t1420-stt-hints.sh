#!/usr/bin/env bash
# Slide words as speech hints. A generated talk (tests/tools/hint_fixture.py devops: flite
# reading sentences full of software terms, each shown on its slide) is indexed twice: with
# `stt.hints false` and with the default. Its speech says words PocketSphinx's dictionary
# lacks (kubernetes, grafana, postgres, nginx, microservice, endpoint...: 10 of its 67
# words), which the plain recogniser can never write, so the fixture guarantees a margin:
# with the slides' words (read by the ocr stage) the word error rate must be at most 0.85x
# the plain one, those words must be heard, and stt's provenance says it used hints and
# how many words. stt runs after ocr (its stage row starts after ocr's ended).
. "$(dirname "$0")/lib.sh"

command -v flite > /dev/null || fail "flite: not found (scripts/install-deps.sh installs it)"
python3 "$ROOT/tests/tools/hint_fixture.py" devops "$T/fx" --video || fail "cannot make the fixture"

index() { # LIBDIR [config-value]: index the talk, export its document to LIBDIR.json
  local lib=$1
  expect_exit 0 "$VIDTHEQUE" -q -L "$lib" init
  if [[ -n ${2:-} ]]; then
    expect_exit 0 "$VIDTHEQUE" -q -L "$lib" config set stt.hints "$2"
  fi
  expect_exit 0 "$VIDTHEQUE" -q -L "$lib" add --stt=recognize "$T/fx/talk.mp4"
  local id; id=$(cat "$T/out")
  expect_exit 0 "$VIDTHEQUE" -q -L "$lib" export "$id" --format json
  cp "$T/out" "$lib.json"
}
model() { json "$1" "[s['model'] for s in d['stages'] if s['name'] == 'stt'][0]"; }
wer() { python3 "$ROOT/tests/tools/score_wer.py" "$T/fx/truth.json" "$1" --slack-s 1.0 |
  sed -n 's/.*wer_ours=\([0-9.]*\).*/\1/p'; }
words() { json "$1" "' '.join(w['text'] for c in d['cues'] for w in c['words'])"; }

note "without hints"
index "$T/plain" false
note "with hints"
index "$T/hinted"

plain_model=$(model "$T/plain.json")
hinted_model=$(model "$T/hinted.json")
note "plain:  $plain_model"
note "hinted: $hinted_model"
[[ $plain_model != *hints* ]] || fail "stt.hints false still used hints: $plain_model"
[[ $hinted_model =~ \;\ hints\ ([0-9]+)\ rare\ of\ ([0-9]+)\ word\(s\)\ \(([0-9]+)\ new\) ]] ||
  fail "the provenance does not say hints were used: $hinted_model"
((BASH_REMATCH[1] >= 10 && BASH_REMATCH[3] >= 5)) ||
  fail "too few hint words taken from the slides: $hinted_model"

# stt waited for ocr: its run started once ocr's had ended
python3 - "$T/hinted.json" << 'EOF' || fail "stt did not run after ocr"
import datetime, json, sys
st = {s["name"]: s for s in json.load(open(sys.argv[1]))["stages"]}
at = lambda s: datetime.datetime.strptime(s["started_at"], "%Y-%m-%dT%H:%M:%SZ").timestamp()
assert st["ocr"]["state"] == "done", st["ocr"]
# whole seconds: the end of ocr, rounded down, is no later than the start of stt
assert at(st["stt"]) >= int(at(st["ocr"]) + st["ocr"]["took_s"]), st
EOF

w0=$(wer "$T/plain.json")
w1=$(wer "$T/hinted.json")
note "WER without hints $w0 %, with hints $w1 %"
note "plain:  $(words "$T/plain.json")"
note "hinted: $(words "$T/hinted.json")"
python3 -c "import sys; w0, w1 = map(float, sys.argv[1:]); sys.exit(0 if w0 > 0 and w1 <= 0.85 * w0 else 1)" \
  "$w0" "$w1" || fail "hints did not bring the WER to 0.85x: $w1 % against $w0 %"

# the words only the slides know are heard with hints, never without
python3 - "$T/plain.json" "$T/hinted.json" << 'EOF' || fail "the slides' own words"
import json, sys
oov = {"kubernetes", "grafana", "postgres", "nginx", "microservice"}
said = [{w["text"] for c in json.load(open(p))["cues"] for w in c["words"]} for p in sys.argv[1:]]
assert not (said[0] & oov), "plain decoder wrote %s" % (said[0] & oov)
assert len(said[1] & oov) >= 3, "hinted decoder heard only %s" % (said[1] & oov)
EOF

# a bad value is refused
expect_exit 2 "$VIDTHEQUE" -q -L "$T/plain" config set stt.hints maybe
grep -q "stt.hints 'maybe' is not true or false" "$T/err" || fail "bad value: $(cat "$T/err")"
echo "all good"
