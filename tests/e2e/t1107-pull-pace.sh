#!/usr/bin/env bash
# A model pull has an overall deadline and a minimum rate (issue 27, failure 6): a fake hub
# on loopback (tests/tools/fakehub.py, mode drip) sends file bodies at 1,200 bytes a second.
# With the limits made small (--min-rate 4096 --rate-window 2; --deadline 3), the pull is
# abandoned within seconds, not retried, with one error line giving the reason, and
# nothing is installed; bad values of the options are usage errors. With the defaults
# (10,000 bytes a second over any 30 s) the drip is abandoned after 30 s.
# alone: a pull's deadline and minimum rate, in seconds
. "$(dirname "$0")/lib.sh"

REPO=testorg/m2v-test
FOLDER=testorg--m2v-test
mkdir -p "$T/hub"
cp "$DATA"/model2vec-test-vocab-quantized/* "$T/hub/"
expect_exit 0 vt init

for bad in '--deadline 0' '--deadline x' '--min-rate -1' '--rate-window 0' '--rate-window 3601'; do
  # shellcheck disable=SC2086
  expect_exit 2 vt models pull $bad "$REPO"
  grep -q -- "bad value '${bad#* }' for ${bad%% *}" "$T/err" || fail "models pull $bad: $(cat "$T/err")"
done

echo drip > "$T/mode"
python3 "$ROOT/tests/tools/fakehub.py" --repo "$REPO" --dir "$T/hub" --port-file "$T/hub.port" \
  --log "$T/hub.log" --mode-file "$T/mode" 2> "$T/hub.err" &
HUB_PID=$!
trap 'kill $HUB_PID 2> /dev/null || true; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for _ in $(seq 100); do [[ -s $T/hub.port ]] && break; sleep 0.1; done
[[ -s $T/hub.port ]] || fail "fakehub did not start: $(cat "$T/hub.err")"
export HF_ENDPOINT=http://127.0.0.1:$(cat "$T/hub.port")

# pull_abandoned WHAT PATTERN OPTIONS...: exit 1, one error line matching PATTERN, the file
# asked for once (not retried), nothing installed
pull_abandoned() {
  local what=$1 pattern=$2
  shift 2
  rm -rf "$LIB/models/.partial"
  : > "$T/hub.log"
  # (timeout: without a minimum rate this pull would take over 5 minutes)
  expect_exit 1 timeout 150 "$VIDTHEQUE" -q -L "$LIB" models pull "$@" "$REPO"; one_line_err
  grep -q -- "$pattern" "$T/err" || fail "$what: error line: $(cat "$T/err")"
  [[ $(grep -c 'resolve.*model.safetensors' "$T/hub.log") == 1 ]] ||
    fail "$what: the dripping file was asked for again: $(cat "$T/hub.log")"
  [[ ! -e $LIB/models/$FOLDER ]] || fail "$what: something was installed"
  note "$what: $(cat "$T/err")"
}
pull_abandoned 'under the minimum rate' \
  "'model.safetensors': the hub sent [0-9]* bytes in [0-9]* s, under the minimum rate of 4096 bytes/s" \
  --min-rate 4096 --rate-window 2
pull_abandoned 'past the deadline' \
  "'model.safetensors': the pull took longer than its deadline of 3 s, with [0-9]* of 387288 bytes" \
  --min-rate 100 --rate-window 2 --deadline 3
# the defaults (10,000 bytes a second over any 30 s): abandoned after 30 s, not 5 minutes
pull_abandoned 'the default minimum rate' \
  "'model.safetensors': the hub sent [0-9]* bytes in [0-9]* s, under the minimum rate of 10000 bytes/s"
echo "ok: a dripping hub is abandoned at the minimum rate and at the deadline"
