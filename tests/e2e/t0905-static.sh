#!/usr/bin/env bash
# The stylesheet and scripts (issue 25, item 9): gzip'ed at build time and sent so to a
# client that takes gzip (Content-Encoding: gzip, Vary: Accept-Encoding), the same bytes
# as the plain file once unzipped; plain to one that does not; named by the pages with
# their version (?v=HASH), kept a year under it (immutable), revalidated without it
# (ETag, 304). The same in the read-only demo, which never writes anything.
. "$(dirname "$0")/lib.sh"

vt init > /dev/null
trap 'stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
# get URL [CURL ARGS...]: the body into $T/body (as sent, not decoded), the headers into $T/hdr
get() {
  local url=$1; shift
  rm -f "$T/body"
  code=$(curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" "$url") || fail "curl $url"
}
hdr() { grep -i "^$1:" "$T/hdr" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }

check_assets() { # WHAT
  local what=$1 page f url plain gz etag etag_gz
  get "$B/"
  [[ $code == 200 ]] || fail "$what: / gave $code"
  page=$(cat "$T/body")
  for f in app.css:style.css app.js:app.js icon.svg:icon.svg; do
    url=$(grep -o "/static/${f%%:*}?v=[0-9a-f]\{16\}" <<< "$page" | head -n 1)
    [[ -n $url ]] || fail "$what: the page names no versioned /static/${f%%:*}"
    # plain: no Accept-Encoding
    get "$B$url"
    [[ $code == 200 ]] || fail "$what: $url gave $code"
    cmp -s "$T/body" "$ROOT/web/${f#*:}" || fail "$what: $url plain is not web/${f#*:}"
    [[ -z $(hdr Content-Encoding) ]] || fail "$what: $url plain has Content-Encoding $(hdr Content-Encoding)"
    [[ $(hdr Vary) == Accept-Encoding ]] || fail "$what: $url plain: Vary '$(hdr Vary)'"
    [[ $(hdr Cache-Control) == "public, max-age=31536000, immutable" ]] ||
      fail "$what: $url: Cache-Control '$(hdr Cache-Control)'"
    plain=$(stat -c %s "$T/body")
    etag=$(hdr ETag)
    # gzip, as browsers ask
    get "$B$url" -H 'Accept-Encoding: gzip, deflate, br'
    [[ $code == 200 && $(hdr Content-Encoding) == gzip ]] || fail "$what: $url with gzip: $code '$(hdr Content-Encoding)'"
    [[ $(hdr Vary) == Accept-Encoding ]] || fail "$what: $url gzip: Vary '$(hdr Vary)'"
    gzip -dc < "$T/body" | cmp -s - "$ROOT/web/${f#*:}" || fail "$what: $url gzip does not unzip to web/${f#*:}"
    gz=$(stat -c %s "$T/body")
    [[ $(hdr Content-Length) == "$gz" ]] || fail "$what: $url gzip: Content-Length $(hdr Content-Length), body $gz"
    etag_gz=$(hdr ETag)
    [[ -n $etag && -n $etag_gz && $etag != "$etag_gz" ]] || fail "$what: $url: ETags '$etag' and '$etag_gz'"
    note "$what: $url: $plain bytes, $gz gzip'ed"
    if [[ $f == app.css* ]]; then
      ((gz * 3 < plain)) || fail "$what: the stylesheet gzip'ed is $gz of $plain bytes"
    fi
    # gzip refused (q=0), or only another coding: plain
    get "$B$url" -H 'Accept-Encoding: gzip;q=0, identity'
    [[ -z $(hdr Content-Encoding) ]] && cmp -s "$T/body" "$ROOT/web/${f#*:}" || fail "$what: $url gzip;q=0 was not plain"
    get "$B$url" -H 'Accept-Encoding: br'
    [[ -z $(hdr Content-Encoding) ]] || fail "$what: $url br only: $(hdr Content-Encoding)"
    get "$B$url" -H 'Accept-Encoding: GZIP;q=0.5'
    [[ $(hdr Content-Encoding) == gzip ]] || fail "$what: $url GZIP;q=0.5 not gzip'ed"
    # without its version (or another): revalidated, 304 for the ETag of what is sent
    get "$B/static/${f%%:*}" -H 'Accept-Encoding: gzip'
    [[ $(hdr Cache-Control) == no-cache ]] || fail "$what: unversioned: Cache-Control '$(hdr Cache-Control)'"
    get "$B/static/${f%%:*}?v=0000000000000000" -H 'Accept-Encoding: gzip'
    [[ $(hdr Cache-Control) == no-cache ]] || fail "$what: another version: Cache-Control '$(hdr Cache-Control)'"
    get "$B$url" -H 'Accept-Encoding: gzip' -H "If-None-Match: $etag_gz"
    [[ $code == 304 ]] || fail "$what: $url If-None-Match (gzip) gave $code"
    [[ ! -s $T/body ]] || fail "$what: a 304 with a body"
    get "$B$url" -H "If-None-Match: $etag"
    [[ $code == 304 ]] || fail "$what: $url If-None-Match (plain) gave $code"
    get "$B$url" -H "If-None-Match: $etag_gz"
    [[ $code == 200 ]] || fail "$what: the gzip ETag matched the plain file ($code)"
    get "$B$url" --compressed
    cmp -s "$T/body" "$ROOT/web/${f#*:}" || fail "$what: curl --compressed does not get web/${f#*:}"
  done
  # the favicon is compressed already: sent as it is, whatever the client takes
  get "$B/favicon.ico" -H 'Accept-Encoding: gzip'
  [[ $code == 200 && -z $(hdr Content-Encoding) ]] || fail "$what: favicon $code '$(hdr Content-Encoding)'"
}

start_server
check_assets writable
stop_server
start_server --read-only
check_assets "read-only"
stop_server
echo "all good"
