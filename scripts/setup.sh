#!/usr/bin/env bash
# Set everything up on a fresh Debian 12 machine (as root) and run the main job on a
# sample: install the Debian packages, build, generate a talk-like sample video, index
# it into ./sample/library and print what was found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
make -j"$(nproc)"
mkdir -p sample
if [[ ! -f sample/talk.mp4 ]]; then
  echo "generating a sample talk video (slides, cutaways, cuts, a dissolve, a fade) ..."
  bash tests/fixtures/gen_talk.sh sample 1 > /dev/null
fi
export VIDTHEQUE_LIBRARY=$PWD/sample/library
id=$(./vidtheque add sample/talk.mp4)
echo
./vidtheque show "$id"
cat <<MSG

The sample is indexed in $VIDTHEQUE_LIBRARY as video $id.
  ./vidtheque -L sample/library ls                       list the library
  ./vidtheque -L sample/library show $id             the text above
  ./vidtheque -L sample/library export $id --format json   the document other tools read
  ./vidtheque -L sample/library add YOUR-VIDEO.mp4       index your own files
Search ('vidtheque search') and the web pages ('vidtheque serve') come with the
speech-and-search and web issues; this build indexes what is shown on screen.
MSG
