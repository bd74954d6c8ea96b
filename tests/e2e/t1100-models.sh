#!/usr/bin/env bash
# config get/set/unset, `models` and `models pull` against a fake hub on loopback
# (tests/tools/fakehub.py serving the test Model2Vec model): the installed files are the
# served bytes, the manifest records them, and every misbehaviour of the hub (wrong
# digest, short body, dropped connection, Range ignored, redirects, 404, 500, a file over
# its cap) ends in one error line and exit 1 with nothing installed, or is recovered from.
. "$(dirname "$0")/lib.sh"

SRC=$DATA/model2vec-test-vocab-quantized
REPO=testorg/m2v-test
FOLDER=testorg--m2v-test
HUB_DIR=$T/hub
mkdir -p "$HUB_DIR"
cp "$SRC"/* "$HUB_DIR/"

# ---- config ----
expect_exit 0 vt init
expect_exit 0 vt config
[[ ! -s $T/out ]] || fail "config of a new library lists: $(cat "$T/out")"
expect_exit 0 vt config set text_embed.backend model2vec
expect_exit 0 vt config set text_embed.api_key 'sk-secret-123'
expect_exit 0 vt config get text_embed.backend
[[ $(cat "$T/out") == model2vec ]] || fail "config get: $(cat "$T/out")"
expect_exit 0 vt config
grep -qx 'text_embed.backend = model2vec' "$T/out" || fail "config list: $(cat "$T/out")"
grep -qx 'text_embed.api_key = \*\*\*\*\*\*\*\*' "$T/out" || fail "api_key not masked: $(cat "$T/out")"
! grep -q secret "$T/out" || fail "config list shows the key"
expect_exit 0 vt config get text_embed.api_key
[[ $(cat "$T/out") == sk-secret-123 ]] || fail "config get api_key"
[[ $(stat -c %a "$LIB/config") == 600 ]] || fail "config mode $(stat -c %a "$LIB/config")"
expect_exit 0 vt config unset text_embed.api_key
expect_exit 1 vt config get text_embed.api_key; one_line_err
grep -q "'text_embed.api_key' is not set" "$T/err" || fail "unset key: $(cat "$T/err")"
expect_exit 2 vt config set no.such.key x
grep -q "'no.such.key' is not a config key" "$T/err" || fail "unknown key: $(cat "$T/err")"
expect_exit 2 vt config set text_embed.backend word2vec
expect_exit 2 vt config set stt.url ftp://x
expect_exit 2 vt config frob
expect_exit 2 vt config get
cp "$LIB/config" "$T/config.before"
expect_exit 2 vt config set stt.backend whisperx
cmp -s "$LIB/config" "$T/config.before" || fail "a refused set changed the config"
# a folder given relative to the current directory is stored absolute
(cd "$DATA" && "$VIDTHEQUE" -q -L "$LIB" config set text_embed.model ./model2vec-test-vocab-quantized) ||
  fail "config set relative folder"
expect_exit 0 vt config get text_embed.model
[[ $(cat "$T/out") == "$SRC" ]] || fail "relative folder stored as $(cat "$T/out")"
expect_exit 0 vt models
grep -q "text_embed  model2vec  model $SRC  ready: $SRC" "$T/out" || fail "models: $(cat "$T/out")"
grep -q "none ('vidtheque models pull" "$T/out" || fail "models lists pulled ones: $(cat "$T/out")"
expect_exit 1 "$VIDTHEQUE" -L "$T/nolib" config; one_line_err

# ---- the fake hub ----
: > "$T/mode"
python3 "$ROOT/tests/tools/fakehub.py" --repo "$REPO" --dir "$HUB_DIR" --port-file "$T/hub.port" \
  --log "$T/hub.log" --mode-file "$T/mode" 2> "$T/hub.err" &
HUB_PID=$!
trap 'kill $HUB_PID 2> /dev/null || true; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
for _ in $(seq 100); do [[ -s $T/hub.port ]] && break; sleep 0.1; done
[[ -s $T/hub.port ]] || fail "fakehub did not start: $(cat "$T/hub.err")"
export HF_ENDPOINT=http://127.0.0.1:$(cat "$T/hub.port")
NEEDED="LICENSE README.md config.json model.safetensors modules.json tokenizer.json"
mode() { echo "$*" > "$T/mode"; : > "$T/hub.log"; }
fresh() { rm -rf "$LIB/models/.partial"; }
# nothing installed, and no model folder but the partial area
nothing_installed() {
  [[ ! -e $LIB/models/$FOLDER ]] || fail "$1: something was installed"
  [[ -z $(find "$LIB/models" -mindepth 1 -maxdepth 1 ! -name .partial) ]] ||
    fail "$1: models/ holds $(ls -A "$LIB/models")"
}
# pull_fails WHAT PATTERN: the pull exits 1 with one error line matching PATTERN
pull_fails() {
  fresh
  expect_exit 1 vt models pull "$REPO"; one_line_err
  grep -q -- "$2" "$T/err" || fail "$1: error line: $(cat "$T/err")"
  nothing_installed "$1"
}

# misbehaviours that fail the pull
mode badsha;       pull_fails badsha "'model.safetensors': SHA-256 mismatch (the hub lists 0000"
[[ ! -e $LIB/models/.partial/$FOLDER/model.safetensors ]] || fail "a file that failed its check is kept"
mode badoid;       pull_fails badoid "'config.json': git blob id mismatch"
mode huge;         pull_fails huge "'model.safetensors': 3221225472 bytes, over the cap of 2048 MiB"
grep -q resolve "$T/hub.log" && fail "huge: a file was downloaded anyway"
mode truncate;     pull_fails truncate "'model.safetensors': the server stops short of the 387288 bytes the hub lists (HTTP 416 for the rest from byte 387188"
mode 500;          pull_fails 500 "'model.safetensors': HTTP status 500"
[[ $(grep -c 'resolve.*model.safetensors' "$T/hub.log") == 3 ]] || fail "500: not retried 3 times: $(cat "$T/hub.log")"
mode redirect-ftp; pull_fails redirect-ftp "'model.safetensors': .*ftp"
mode;
expect_exit 1 vt models pull testorg/no-such-model; one_line_err
grep -q "model 'testorg/no-such-model' at revision 'main': not found on the hub (HTTP 401" "$T/err" ||
  fail "missing repo: $(cat "$T/err")"
expect_exit 1 vt models pull "$REPO" --revision nosuchbranch; one_line_err
grep -q "revision 'nosuchbranch': not found on the hub (HTTP 404" "$T/err" || fail "missing revision: $(cat "$T/err")"
expect_exit 1 vt models pull 'bad name!'; one_line_err
expect_exit 2 vt models pull
expect_exit 1 vt models pull '../evil'; one_line_err
grep -q "is not a model name" "$T/err" || fail "bad name: $(cat "$T/err")"
nothing_installed "bad names"

# a second pull of the same model while one runs is refused
mode
expect_exit 1 flock "$LIB/models/.partial/$FOLDER.lock" "$VIDTHEQUE" -q -L "$LIB" models pull "$REPO"
one_line_err
grep -q "another pull of '$REPO' is running" "$T/err" || fail "concurrent pull: $(cat "$T/err")"
nothing_installed "concurrent pull"

# a connection dropped on every attempt leaves a partial file; the next pull continues it
mode drop
pull_fails drop "'model.safetensors': transfer closed with"
[[ $(grep -c 'resolve.*model.safetensors' "$T/hub.log") == 3 ]] || fail "drop: not retried 3 times: $(cat "$T/hub.log")"
grep -q 'model.safetensors bytes=193644-' "$T/hub.log" || fail "drop: the retry did not continue: $(cat "$T/hub.log")"
part=$LIB/models/.partial/$FOLDER/model.safetensors
have=$(stat -c %s "$part")
((have > 0 && have < 387288)) || fail "drop: partial file has $have bytes"
mode
expect_exit 0 vt models pull "$REPO"
grep -q "GET /$REPO/resolve/[0-9a-f]*/model.safetensors bytes=$have-" "$T/hub.log" ||
  fail "the second pull did not continue with a Range request: $(cat "$T/hub.log")"
grep -q "installed in $LIB/models/$FOLDER (6 files" "$T/out" || fail "pull output: $(cat "$T/out")"

# the installed files are the served bytes, and only those a model needs
[[ $(ls -A "$LIB/models/$FOLDER" | LC_ALL=C sort | tr '\n' ' ') == \
   "$(printf '%s\n' $NEEDED manifest.json | LC_ALL=C sort | tr '\n' ' ')" ]] ||
  fail "installed files: $(ls -A "$LIB/models/$FOLDER")"
for f in $NEEDED; do cmp -s "$SRC/$f" "$LIB/models/$FOLDER/$f" || fail "installed $f differs"; done
M=$LIB/models/$FOLDER/manifest.json
[[ $(json "$M" "d['repo'], d['revision'], len(d['commit']), d['endpoint']") == "('$REPO', 'main', 40, '$HF_ENDPOINT')" ]] ||
  fail "manifest head: $(cat "$M")"
[[ $(json "$M" "d['pulled_at'][:2], d['pulled_at'][-1]") == "('20', 'Z')" ]] || fail "pulled_at"
for f in $NEEDED; do
  [[ $(json "$M" "[(x['size'], x['sha256']) for x in d['files'] if x['path']=='$f'][0]") == \
     "($(stat -c %s "$SRC/$f"), '$(sha256sum "$SRC/$f" | cut -c1-64)')" ]] || fail "manifest entry for $f"
done
[[ $(json "$M" "[x['path'] for x in d['files'] if x['lfs']]") == "['model.safetensors', 'tokenizer.json']" ]] ||
  fail "lfs flags"
[[ $(json "$M" "[x['git_oid'] for x in d['files'] if x['path']=='config.json'][0]") == \
   "$(git hash-object "$SRC/config.json")" ]] || fail "git blob id of config.json"

# the same commit again does nothing
mode
expect_exit 0 vt models pull "$REPO"
grep -q "is already at .* (nothing to do)" "$T/out" || fail "second pull: $(cat "$T/out")"
grep -q resolve "$T/hub.log" && fail "second pull downloaded again"

# `models` lists it; the config can name it; the resolve finds it
expect_exit 0 vt config set text_embed.model "$REPO"
expect_exit 0 vt models
grep -q "ready: $LIB/models/$FOLDER" "$T/out" || fail "models (configured): $(cat "$T/out")"
grep -Eq "^  $REPO  main [0-9a-f]{12}  .*6 files  pulled 20.*Z  ok  \(folder $FOLDER\)$" "$T/out" ||
  fail "models (pulled): $(cat "$T/out")"
# a damaged install is reported
cp "$M" "$T/manifest.json"
truncate -s 10 "$LIB/models/$FOLDER/config.json"
expect_exit 0 vt models
grep -q "damaged: 'config.json' has 10 bytes, the manifest says" "$T/out" || fail "damage: $(cat "$T/out")"
cp "$SRC/config.json" "$LIB/models/$FOLDER/config.json"
expect_exit 0 vt config set text_embed.model "$FOLDER"
expect_exit 0 vt models
grep -q "ready: $LIB/models/$FOLDER" "$T/out" || fail "by folder name: $(cat "$T/out")"
expect_exit 0 vt config set text_embed.model testorg/other
expect_exit 0 vt models
grep -q "not usable: model 'testorg/other' is not in the library (run 'vidtheque models pull testorg/other')" "$T/out" ||
  fail "unpulled model: $(cat "$T/out")"

# a new commit: dropped once then continued, with redirects and Range ignored, replaces the old
mode commit2 drop-once redirect norange
expect_exit 0 vt models pull "$REPO"
grep -q "GET /cdn/" "$T/hub.log" || fail "redirect not followed: $(cat "$T/hub.log")"
# the retry after the drop asks for the rest, gets the whole file and starts over cleanly
grep -q "GET /cdn/[0-9a-f]* bytes=[1-9]" "$T/hub.log" || fail "no ranged retry after the drop: $(cat "$T/hub.log")"
[[ $(json "$M" "d['commit']") == "$(python3 -c 'import hashlib; print(hashlib.sha1(b"commit two").hexdigest())')" ]] ||
  fail "new commit not installed"
for f in $NEEDED; do cmp -s "$SRC/$f" "$LIB/models/$FOLDER/$f" || fail "after restart, $f differs"; done
[[ -z $(find "$LIB/models" -mindepth 1 -maxdepth 1 ! -name .partial ! -name "$FOLDER") ]] ||
  fail "old install left: $(ls -A "$LIB/models")"
# --revision pins the first commit again
c1=$(python3 -c 'import hashlib; print(hashlib.sha1(b"commit one").hexdigest())')
mode
expect_exit 0 vt models pull "$REPO" --revision "$c1"
[[ $(json "$M" "d['commit'], d['revision']") == "('$c1', '$c1')" ]] || fail "--revision: $(cat "$M")"

# a resolve of a folder that is not a model
expect_exit 0 vt config set text_embed.model "$T"
expect_exit 0 vt models
grep -q "not usable: model '$T' is incomplete" "$T/out" || fail "folder without model: $(cat "$T/out")"
# a private repo: refused without HF_TOKEN, pulled with it (the token not sent to the CDN)
rm -rf "$LIB/models/$FOLDER"
mode private redirect-localhost
pull_fails private "not found on the hub (HTTP 401"
HF_TOKEN=secret-token expect_exit 0 vt models pull "$REPO"
grep -q "GET /cdn/" "$T/hub.log" || fail "private: no redirect: $(cat "$T/hub.log")"
for f in $NEEDED; do cmp -s "$SRC/$f" "$LIB/models/$FOLDER/$f" || fail "private: $f differs"; done
! grep -rq secret-token "$LIB/models" || fail "the token was written down"

# rm: the model goes (with a note when the config names it); a second rm finds nothing
expect_exit 0 vt config set text_embed.model "$REPO"
expect_exit 0 "$VIDTHEQUE" -L "$LIB" models rm "$REPO"
grep -q "removed '$LIB/models/$FOLDER'" "$T/err" || fail "rm: $(cat "$T/err")"
grep -q "note: text_embed.model still names '$REPO'" "$T/err" || fail "rm note: $(cat "$T/err")"
[[ ! -e $LIB/models/$FOLDER ]] || fail "rm left the folder"
expect_exit 1 vt models rm "$REPO"; one_line_err
grep -q "model '$REPO' is not in the library" "$T/err" || fail "rm again: $(cat "$T/err")"
expect_exit 1 vt models rm ../x; one_line_err
expect_exit 2 vt models rm
expect_exit 0 vt models
grep -q "none ('vidtheque models pull" "$T/out" || fail "models after rm: $(cat "$T/out")"
note "ok"
