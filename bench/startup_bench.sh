#!/usr/bin/env bash
# Start-up of the reading commands on a 10-video library: `vidtheque ls` and
# `vidtheque search` against `sqlite3 library.db 'select count(*) from videos'` (the
# floor: one process opening the same database), and against vidtheque-full, the same
# code linked with FFmpeg, Tesseract and PocketSphinx (what every command was before the
# front binary). Target: ls and search at most 3x sqlite3. Runs alternate; best of 5
# rounds of 20 runs each.
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
full=$(dirname "$(readlink -f "$VIDTHEQUE")")/vidtheque-full
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
for i in $(seq 10); do
  ffmpeg -v error -f lavfi -i "color=white:s=320x180:d=2,drawtext=fontfile=$font:text='Slide $i harbor':fontsize=24:x=10:y=10" \
    -c:v libx264 -preset ultrafast -pix_fmt yuv420p -metadata title="Talk $i" "$t/v$i.mp4"
done
"$VIDTHEQUE" -q -L "$t/lib" add "$t"/v*.mp4 > /dev/null
db=$t/lib/library.db
# best wall time in ms of 20 runs of a command, best of 5 rounds (printed per name)
python3 - "$VIDTHEQUE" "$full" "$t/lib" "$db" <<'PY'
import os, subprocess, sys, time
vt, full, lib, db = sys.argv[1:5]
env = dict(os.environ); env.pop("OMP_THREAD_LIMIT", None)
cmds = {
    "sqlite3 count": ["sqlite3", db, "select count(*) from videos"],
    "vidtheque ls": [vt, "-L", lib, "ls"],
    "vidtheque search": [vt, "-L", lib, "search", "harbor"],
    "vidtheque-full ls": [full, "-L", lib, "ls"],
}
best = {k: float("inf") for k in cmds}
for _ in range(5):
    for name, argv in cmds.items():
        t0 = time.perf_counter()
        for _ in range(20):
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
        best[name] = min(best[name], (time.perf_counter() - t0) / 20 * 1000)
base = best["sqlite3 count"]
print(f"  {'command':<20} {'ms':>7} {'x sqlite3':>10}")
for name, ms in best.items():
    print(f"  {name:<20} {ms:>7.1f} {ms / base:>10.2f}")
ok = all(best[n] <= 3 * base for n in ("vidtheque ls", "vidtheque search"))
print(f"ls and search within 3x of sqlite3: {'PASS' if ok else 'FAIL'}")
PY
