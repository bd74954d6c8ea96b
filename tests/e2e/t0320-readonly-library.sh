#!/usr/bin/env bash
# A library that cannot be written (a read-only mount, files without write permission)
# is read by ls, show, search, export, check and serve --read-only as it is; the
# commands that write refuse with one line, "library 'DIR' is read-only". Root ignores
# permissions, so as root the library is put behind a read-only bind mount (in a
# private mount namespace, gone with the test) and read as the user nobody; as
# anyone else, chmod a-w is enough.
if [[ $(id -u) == 0 && -z ${VT_MOUNT_NS:-} ]] && unshare -m --propagation private true 2> /dev/null; then
  VT_MOUNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || fail "curl is needed"

vt init
gen_clip "$T/clip.mp4" 3 'Read Only Words'
id=$(vt add "$T/clip.mp4")
# what the reading commands say while the library is writable
vt ls > "$T/ls.rw"
vt show "$id" > "$T/show.rw"
vt search 'words' > "$T/search.rw"
vt export "$id" > "$T/export.rw"
vt export "$id" --format txt > "$T/txt.rw"
grep -q "^$id " "$T/search.rw" || fail "the clip's screen text is not found: $(cat "$T/search.rw")"

RUN=() # prefix running vidtheque as someone else
ran=0

# reads DIR: every reading command works and says what it said on the writable library
reads_ok() {
  local dir=$1 what=$2
  local v=("${RUN[@]}" "$VIDTHEQUE" -q -L "$dir")
  "${v[@]}" ls > "$T/ls.ro" 2> "$T/err" || fail "$what: ls: $(cat "$T/err")"
  cmp -s "$T/ls.rw" "$T/ls.ro" || fail "$what: ls differs: $(cat "$T/ls.ro")"
  "${v[@]}" show "$id" > "$T/show.ro" 2> "$T/err" || fail "$what: show: $(cat "$T/err")"
  # the media copied into the library moves with it: its path is said from where it is now
  sed -i "s|$dir/|$LIB/|g" "$T/show.ro"
  cmp -s "$T/show.rw" "$T/show.ro" || fail "$what: show differs: $(diff "$T/show.rw" "$T/show.ro")"
  "${v[@]}" search 'words' > "$T/search.ro" 2> "$T/err" || fail "$what: search: $(cat "$T/err")"
  cmp -s "$T/search.rw" "$T/search.ro" || fail "$what: search differs: $(cat "$T/search.ro")"
  "${v[@]}" export "$id" > "$T/export.ro" 2> "$T/err" || fail "$what: export: $(cat "$T/err")"
  sed -i "s|$dir/|$LIB/|g" "$T/export.ro"
  cmp -s "$T/export.rw" "$T/export.ro" || fail "$what: export differs"
  "${v[@]}" export "$id" --format txt > "$T/txt.ro" 2> "$T/err" || fail "$what: export txt: $(cat "$T/err")"
  cmp -s "$T/txt.rw" "$T/txt.ro" || fail "$what: export txt differs"
  [[ $("${v[@]}" check 2> "$T/err") == ok ]] || fail "$what: check: $(cat "$T/err")"
  # serve --read-only: the API lists the video; serve without it refuses
  : > "$T/ro.srv" # made before the server starts: a loaded machine may run sed first
  "${RUN[@]}" "$VIDTHEQUE" -L "$dir" serve --read-only --port 0 2> "$T/ro.srv" &
  local pid=$! port=
  for _ in $(seq 100); do
    port=$(sed -n 's|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$T/ro.srv")
    [[ -n $port ]] && break
    kill -0 "$pid" 2> /dev/null || fail "$what: serve --read-only exited: $(cat "$T/ro.srv")"
    sleep 0.1
  done
  [[ -n $port ]] || fail "$what: serve --read-only did not listen: $(cat "$T/ro.srv")"
  curl -sf "http://127.0.0.1:$port/api/videos" > "$T/api.json" || fail "$what: GET /api/videos failed"
  curl -sf "http://127.0.0.1:$port/v/$id" > /dev/null || fail "$what: GET /v/$id failed"
  kill "$pid"; wait "$pid" || true
  [[ $(json "$T/api.json" "[v['id'] for v in d['videos']]") == "['$id']" ]] ||
    fail "$what: /api/videos: $(cat "$T/api.json")"
}

# writes to DIR are refused, each with exactly one line naming the library
writes_refused() {
  local dir=$1 what=$2
  local v=("${RUN[@]}" "$VIDTHEQUE" -q -L "$dir")
  local cmd
  for cmd in "add $T/clip.mp4" "rm $id" "redo $id --stage ocr" "resume" "update" "init" "serve"; do
    # shellcheck disable=SC2086
    expect_exit 1 "${v[@]}" $cmd
    one_line_err
    [[ $(cat "$T/err") == "vidtheque: library '$dir' is read-only" ]] ||
      fail "$what: $cmd: $(cat "$T/err")"
  done
  ran=$((ran + 1))
}

if [[ $(id -u) == 0 ]]; then
  # 1. a read-only bind mount: even root cannot write it
  odd="$T/r o?#%25&x"
  unmount_all() { for m in "$T/ro" "$T/ro2" "$odd"; do umount "$m" 2> /dev/null || true; done; }
  trap 'unmount_all; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
  mkdir "$T/ro"
  if mount --bind "$LIB" "$T/ro" 2> /dev/null && mount -o remount,bind,ro "$T/ro" 2> /dev/null; then
    touch "$T/ro/x" 2> /dev/null && fail "the read-only mount can be written"
    reads_ok "$T/ro" "read-only mount"
    writes_refused "$T/ro" "read-only mount"
    [[ ! -e $T/ro/library.db-shm && ! -e $T/ro/library.db-wal ]] || fail "a -wal or -shm appeared"
    umount "$T/ro"
    # a path SQLite would misread in a URI unless encoded
    mkdir "$odd"
    mount --bind "$LIB" "$odd" && mount -o remount,bind,ro "$odd"
    "$VIDTHEQUE" -q -L "$odd" ls > "$T/ls.odd" 2> "$T/err" || fail "odd path: ls: $(cat "$T/err")"
    cmp -s "$T/ls.rw" "$T/ls.odd" || fail "odd path: ls differs: $(cat "$T/ls.odd")"
    umount "$odd"
    # 1b. a copy taken while a writer had changes in its WAL (and its -shm): read with
    # them; without the -shm it cannot be read safely, and says so
    mkdir "$T/walcopy" "$T/ro2"
    cp -r "$LIB" "$T/writer"
    python3 - "$T/writer/library.db" "$T/walcopy" << 'PY'
import shutil, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("UPDATE videos SET title = 'Changed In The WAL'")
c.commit()
for ext in ("", "-wal", "-shm"):
    shutil.copy(sys.argv[1] + ext, sys.argv[2] + "/library.db" + ext)
c.close()
PY
    [[ -s $T/walcopy/library.db-wal ]] || fail "the copy has no WAL content"
    cp -r "$LIB/frames" "$T/walcopy/"
    mount --bind "$T/walcopy" "$T/ro2" && mount -o remount,bind,ro "$T/ro2"
    "$VIDTHEQUE" -q -L "$T/ro2" ls > "$T/ls.wal" 2> "$T/err" || fail "WAL copy: ls: $(cat "$T/err")"
    [[ $(cut -f 2 "$T/ls.wal") == "Changed In The WAL" ]] || fail "WAL copy: changes not read: $(cat "$T/ls.wal")"
    umount "$T/ro2"
    rm "$T/walcopy/library.db-shm"
    mount --bind "$T/walcopy" "$T/ro2" && mount -o remount,bind,ro "$T/ro2"
    expect_exit 1 "$VIDTHEQUE" -q -L "$T/ro2" ls
    one_line_err
    grep -q "^vidtheque: library '$T/ro2' is read-only and its last changes are still in library.db-wal" "$T/err" ||
      fail "WAL copy without -shm: $(cat "$T/err")"
    umount "$T/ro2"
  else
    note "no read-only bind mount here (no CAP_SYS_ADMIN?): that part skipped"
  fi
  # 2. as nobody, on a copy it may read but not write
  if setpriv --reuid=nobody --regid=nogroup --clear-groups true 2> /dev/null; then
    RUN=(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent)
    chmod 755 "$T"
    # the binary must be reachable by nobody
    if ! "${RUN[@]}" test -x "$VIDTHEQUE"; then
      mkdir -p "$T/bin" && cp "$VIDTHEQUE" "$T/bin/" && chmod 755 "$T/bin" && VIDTHEQUE=$T/bin/$(basename "$VIDTHEQUE")
    fi
    cp -r "$LIB" "$T/nb"
    chmod -R a+rX,a-w "$T/nb"
    reads_ok "$T/nb" "as nobody, nothing writable"
    writes_refused "$T/nb" "as nobody, nothing writable"
    # the directory writable but not the database file
    chmod 777 "$T/nb"
    reads_ok "$T/nb" "as nobody, database file not writable"
    writes_refused "$T/nb" "as nobody, database file not writable"
    chmod -R u+w "$T/nb"
    RUN=()
  else
    note "setpriv cannot switch to nobody here: that part skipped"
  fi
else
  cp -r "$LIB" "$T/nw"
  chmod -R a-w "$T/nw"
  trap 'chmod -R u+w "$T/nw" || true; stop_server; [[ -n ${KEEP:-} ]] || rm -rf "$T"' EXIT
  reads_ok "$T/nw" "without write permission"
  writes_refused "$T/nw" "without write permission"
fi
if [[ $ran == 0 ]]; then
  echo "SKIP: no way to make a read-only library here (no mount, no setpriv, running as root)"
  exit 0
fi
note "$ran read-only setups checked"
echo "all good"
