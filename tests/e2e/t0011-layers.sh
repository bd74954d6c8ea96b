#!/usr/bin/env bash
# The house's rules (LAYERS, scripts/check-layers.py): every quoted #include and every call
# between files goes to the file's own room or a room below it, no files call each other in a
# circle, and no function is longer than 120 lines. First the checker itself is tested on a
# small tree of its own, where each rule is broken once and then kept; then the real tree,
# with the objects of the build being tested.
. "$(dirname "$0")/lib.sh"
check=$ROOT/scripts/check-layers.py

# ---- the checker on a tree made here ----
mk() { mkdir -p "$(dirname "$T/h/$1")"; cat > "$T/h/$1"; }
mk LAYERS << 'L'
include
lib/low    include
lib/high   lib/low
L
mk include/api.h <<< '#define API 1'
mk lib/low/low.h <<< 'int low(int x);'
mk lib/low/low.c << 'C'
#include "api.h"
#include "low/low.h"
int low(int x) { return x + API; }
C
mk lib/high/high.c << 'C'
#include "low/low.h"
int high(int x);
int high(int x) { return low(x) * 2; }
C
build_objects() {
  local f
  rm -rf "$T/h/build"
  for f in lib/low/low.c lib/high/high.c lib/low/extra.c; do
    [[ -f $T/h/$f ]] || continue
    mkdir -p "$T/h/build/$(dirname "$f")"
    cc -c -I"$T/h/include" -I"$T/h/lib" -o "$T/h/build/${f%.c}.o" "$T/h/$f" || fail "cc $f"
  done
}
build_objects
expect_exit 0 python3 "$check" --root "$T/h" --objects "$T/h/build"
grep -q '^layers: 0 breach' "$T/out" || fail "a tree that keeps the rules: $(cat "$T/out")"

# a forbidden include: the low room includes the high one
cp "$T/h/lib/low/low.c" "$T/low.c"
sed -i '1i #include "../high/high.h"' "$T/h/lib/low/low.c"
mk lib/high/high.h <<< 'int high(int x);'
expect_exit 1 python3 "$check" --root "$T/h"
grep -q 'lib/low/low.c:1: #include "../high/high.h": lib/low may not use lib/high' "$T/out" ||
  fail "the forbidden include was not named: $(cat "$T/out")"
cp "$T/low.c" "$T/h/lib/low/low.c"

# a forbidden call, through a declaration the file writes itself (no include to see)
mk lib/low/extra.c << 'C'
int high(int x);
int extra(int x);
int extra(int x) { return high(x); }
C
build_objects
expect_exit 1 python3 "$check" --root "$T/h" --objects "$T/h/build"
grep -q 'lib/low/extra.c: calls lib/high/high.c (high): lib/low may not use lib/high' "$T/out" ||
  fail "the forbidden call was not named: $(cat "$T/out")"
# and the circle it closes (high -> low -> extra -> high), within one room it is still a cycle
sed -i 's/low(x)/low(x) + extra(x)/; 2i int extra(int x);' "$T/h/lib/high/high.c"
build_objects
expect_exit 1 python3 "$check" --root "$T/h" --objects "$T/h/build"
grep -q '^call cycle between lib/high/high.c, lib/low/extra.c' "$T/out" ||
  fail "the call cycle was not named: $(cat "$T/out")"
rm "$T/h/lib/low/extra.c"
sed -i 's/ + extra(x)//; /^int extra/d' "$T/h/lib/high/high.c"

# two files of one name (the archive would keep one of them)
echo 'int low2(void);' > "$T/h/lib/high/low.c"
expect_exit 1 python3 "$check" --root "$T/h"
grep -q 'lib/low/low.c: the same file name as lib/high/low.c' "$T/out" ||
  fail "the shared file name was not named: $(cat "$T/out")"
rm "$T/h/lib/high/low.c"

# a function over 120 lines
{ echo 'int long_one(int x)'; echo '{'; for i in $(seq 120); do echo "    x += $i;"; done
  echo '    return x;'; echo '}'; } > "$T/h/lib/high/long.c"
expect_exit 1 python3 "$check" --root "$T/h"
grep -q 'lib/high/long.c:1: long_one is 124 lines (at most 120)' "$T/out" ||
  fail "the long function was not named: $(cat "$T/out")"
rm "$T/h/lib/high/long.c"
build_objects
expect_exit 0 python3 "$check" --root "$T/h" --objects "$T/h/build"

# ---- the real tree, with the build's objects ----
objects=$(dirname "$VIDTHEQUE")
[[ -d $objects/lib && -d $objects/src ]] || fail "no objects beside $VIDTHEQUE"
python3 "$check" --root "$ROOT" --objects "$objects" > "$T/out" 2>&1 ||
  fail "the tree breaks the rules of LAYERS:"$'\n'"$(cat "$T/out")"
echo "ok"
