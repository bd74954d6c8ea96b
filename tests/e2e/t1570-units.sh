#!/usr/bin/env bash
# The systemd units (issue 26): `make install-units` (part of `make install`) honours
# DESTDIR and PREFIX, fills in the paths, and the units pass `systemd-analyze verify` (when
# systemd is here) without a warning: the web application, the worker template (drained by
# SIGTERM within its grace, TimeoutStopSec above it) and the hourly update timer.
. "$(dirname "$0")/lib.sh"

units="vidtheque-serve.service vidtheque-worker@.service vidtheque-update.service vidtheque-update.timer"
make -s -C "$ROOT" install-units DESTDIR="$T/dest" PREFIX=/opt/vt > "$T/make.out" 2>&1 || fail "make install-units: $(cat "$T/make.out")"
for u in $units; do
  f=$T/dest/opt/vt/lib/systemd/system/$u
  [[ -f $f ]] || fail "$u not installed under DESTDIR/PREFIX: $(find "$T/dest" -type f)"
  grep -q '@[A-Z]*@' "$f" && fail "$u: a path left unfilled: $(grep '@[A-Z]*@' "$f")"
done
grep -q '^ExecStart=/opt/vt/bin/vidtheque-full worker --grace 60 ' "$T/dest/opt/vt/lib/systemd/system/vidtheque-worker@.service" ||
  fail "the worker unit does not run PREFIX's binary with a grace"
grace=$(sed -n 's/^ExecStart=.*--grace \([0-9]*\).*/\1/p' "$T/dest/opt/vt/lib/systemd/system/vidtheque-worker@.service")
stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)$/\1/p' "$T/dest/opt/vt/lib/systemd/system/vidtheque-worker@.service")
((stop > grace)) || fail "TimeoutStopSec ($stop) must leave the worker its grace ($grace)"
[[ -z $(find "$T/dest" -path '*/systemd/*' -perm /022) ]] || fail "a unit is writable by others"

if ! command -v systemd-analyze > /dev/null; then
  note "no systemd-analyze: the units' syntax is not checked"
  exit 0
fi
# verify wants the binaries where the units say: a prefix of the test's own, no DESTDIR
make -s -C "$ROOT" install-units PREFIX="$T/p" > "$T/make.out" 2>&1 || fail "make install-units: $(cat "$T/make.out")"
mkdir -p "$T/p/bin"
cp "$VIDTHEQUE" "$T/p/bin/vidtheque"
cp "$(dirname "$VIDTHEQUE")/vidtheque-full" "$T/p/bin/vidtheque-full"
cd "$T/p/lib/systemd/system"
cp vidtheque-worker@.service vidtheque-worker@1.service
for u in vidtheque-serve.service vidtheque-worker@1.service vidtheque-update.service vidtheque-update.timer; do
  rc=0
  systemd-analyze verify "./$u" > "$T/verify.out" 2>&1 || rc=$?
  ((rc == 0)) && [[ ! -s $T/verify.out ]] || fail "systemd-analyze verify $u: $(cat "$T/verify.out")"
done
note "ok"
