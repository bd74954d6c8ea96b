#!/usr/bin/env bash
# Install the Debian 12 packages vidtheque builds, runs and tests with. Run as root.
set -euo pipefail
pkgs=(
  build-essential pkg-config clang libclang-rt-14-dev
  ffmpeg libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev
  libtesseract-dev libleptonica-dev tesseract-ocr tesseract-ocr-eng
  libsqlite3-dev sqlite3 libjansson-dev libjpeg62-turbo-dev libmicrohttpd-dev libuchardet-dev zlib1g-dev
  libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us pocketsphinx-testdata pocketsphinx
  flite flite1-dev
  postgresql-15 postgresql-contrib libpq-dev pgbouncer
  fonts-dejavu-core fonts-liberation python3 time
  chromium slowhttptest wrk nodejs curl yt-dlp
)
# any flavour of libcurl's headers will do (the NSS and OpenSSL ones conflict)
pkg-config --exists libcurl 2>/dev/null || pkgs+=(libcurl4-openssl-dev)
# Debian's npm conflicts with a nodejs that bundles its own npm (NodeSource's)
command -v npm > /dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
