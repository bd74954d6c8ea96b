#!/usr/bin/env bash
# Whole-add benchmark on a 1080p talk: peak memory (target < 400 MB) and the realtime
# factor (video seconds per wall second) of the whole add and of each stage.
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bash tests/fixtures/gen_talk.sh "$t/src" 2 > /dev/null
ffmpeg -v error -i "$t/src/talk.mp4" -vf scale=1920:1080 -c:v libx264 -preset veryfast -bf 3 \
  -g 250 -c:a copy "$t/talk1080.mp4"
start=$(date +%s.%N)
/usr/bin/time -f '%M' -o "$t/rss" "$VIDTHEQUE" -q -L "$t/lib" add "$t/talk1080.mp4" > "$t/id"
end=$(date +%s.%N)
"$VIDTHEQUE" -q -L "$t/lib" export "$(cat "$t/id")" > "$t/doc.json"
python3 - "$t/doc.json" "$(tail -n 1 "$t/rss")" "$start" "$end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rss_mb = int(sys.argv[2]) / 1024
wall = float(sys.argv[4]) - float(sys.argv[3]); dur = d['duration_s']
print(f"add on a 1080p talk ({dur:.1f} s of video)")
print(f"  {'what':<12} {'took_s':>8} {'realtime x':>11}")
for s in d['stages']:
    rt = dur / s['took_s'] if s['took_s'] > 0 else float('inf')
    print(f"  {s['name']:<12} {s['took_s']:>8.2f} {rt:>11.1f}")
print(f"  {'whole add':<12} {wall:>8.2f} {dur / wall:>11.1f}")
print(f"peak memory of add: {rss_mb:.0f} MB (target < 400 MB) -> {'ok' if rss_mb < 400 else 'OVER'}")
PY
