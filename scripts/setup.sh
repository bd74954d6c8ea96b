#!/usr/bin/env bash
# Set everything up on a fresh Debian 12 machine (as root) and run the main job on a
# sample: install the Debian packages, build, generate a talk-like sample video, index
# it into ./sample/library and print what was found. It also installs what the test suite's
# browser test drives Chromium with (tests/browser/node_modules, from the npm registry), so
# that `make check` needs nothing more.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [[ ! -d tests/browser/node_modules/playwright-core || ! -d tests/browser/node_modules/axe-core ]]; then
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
fi
make -j"$(nproc)"
mkdir -p sample
if [[ ! -f sample/talk.mp4 ]]; then
  echo "generating a sample talk video (slides, cutaways, cuts, a dissolve, a fade, speech) ..."
  bash tests/fixtures/gen_talk.sh sample/gen 1 > /dev/null
  # real read speech (Debian's pocketsphinx-testdata) placed at known offsets
  lv=/usr/share/pocketsphinx/test/data/librivox
  inputs=() filters="" mix="" i=0
  for f in "$lv"/*.wav; do
    inputs+=(-i "$f")
    ms=$(((4 + 12 * i) * 1000))
    filters+="[$((i + 1)):a]adelay=${ms}|${ms}[a$i];"
    mix+="[a$i]"
    i=$((i + 1))
  done
  ffmpeg -v error -i sample/gen/talk.mp4 "${inputs[@]}" \
    -filter_complex "${filters}${mix}amix=inputs=$i:normalize=0,apad[a]" -map 0:v -map "[a]" \
    -c:v copy -c:a aac -shortest -metadata title="A sample talk" sample/talk.mp4
fi
export VIDTHEQUE_LIBRARY=$PWD/sample/library
# frames by likeness with the small real image model the tests use (MobileNet v1 0.25,
# tests/data): the sample's frame_embed stage runs instead of being skipped
[[ -d sample/library ]] || ./vidtheque init > /dev/null
./vidtheque config set frame_embed.model "$PWD/tests/data/mobilenet-v1-0.25-224"
# speech: Whisper (base.en) when it can be pulled from the Hugging Face hub, with the
# vocabularies and filterbanks it needs installed; else PocketSphinx, the fallback
make install-data > /dev/null
if ./vidtheque models pull whisper-base.en > sample/whisper-pull.log 2>&1; then
  ./vidtheque config set stt.model whisper-base.en
  echo "speech: whisper-base.en pulled and set (stt.model)"
else
  echo "speech: could not pull whisper-base.en ($(tail -n 1 sample/whisper-pull.log));" \
    "PocketSphinx transcribes instead (retry: ./vidtheque -L sample/library models pull" \
    "whisper-base.en && ./vidtheque -L sample/library config set stt.model whisper-base.en)"
fi
id=$(./vidtheque add sample/talk.mp4)
echo
./vidtheque show "$id"
word=$(python3 -c 'import json; print(json.load(open("sample/gen/truth.json"))["slides"][0]["words"][0])')
echo
echo "\$ ./vidtheque search '$word'          (a word shown on a slide)"
./vidtheque search "$word"
echo "\$ ./vidtheque search 'amiable woman'    (words said in the talk)"
./vidtheque search 'amiable woman'
cat <<MSG

The sample is indexed in $VIDTHEQUE_LIBRARY as video $id.
  ./vidtheque -L sample/library ls                          list the library
  ./vidtheque -L sample/library show $id                the text above
  ./vidtheque -L sample/library search --json 'QUERY'       moments said or shown
  ./vidtheque -L sample/library export $id --format json    the document other tools read
  ./vidtheque -L sample/library export $id --format vtt     the transcript as subtitles
  ./vidtheque -L sample/library add YOUR-VIDEO.mp4          index your own files
MSG
if ./vidtheque help serve > /dev/null 2>&1; then
  echo "  ./vidtheque -L sample/library serve --port 8080          browse it at http://127.0.0.1:8080/"
fi
