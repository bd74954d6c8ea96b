#!/usr/bin/env bash
# Generated talks whose truth is known (tests/fixtures/gen_talk.sh): shot boundaries
# (F1 >= 0.95 with 2 frames' tolerance, the whole transition for gradual ones), every
# repeated slide skipped as a duplicate, >= 98 % of the slide words read by OCR.
. "$(dirname "$0")/lib.sh"
vt init
for seed in 1 2 3; do
  fixture gen_talk.sh "$T/talk$seed" "$seed" > /dev/null
  id=$(vt add "$T/talk$seed/talk.mp4") || fail "seed $seed: add failed"
  vt export "$id" > "$T/talk$seed/export.json"
  note "seed $seed:"
  python3 "$ROOT/tests/tools/score_cuts.py" "$T/talk$seed/truth.json" "$T/talk$seed/export.json" ||
    fail "seed $seed: shot boundaries or duplicates below target"
  python3 "$ROOT/tests/tools/score_ocr.py" "$T/talk$seed/truth.json" "$T/talk$seed/export.json" ||
    fail "seed $seed: OCR below target"
done
vt check > /dev/null || fail "check"
echo "all good"
