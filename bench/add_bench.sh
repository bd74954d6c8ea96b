#!/usr/bin/env bash
# Whole-add benchmark on a 1080p talk: peak memory (target < 400 MB) and the realtime
# factor (video seconds per wall second) of the whole add and of each stage. Then what
# frame_embed costs: the same talk added to a library without an image model and to one
# with the shipped MobileNet v1 0.25 (tests/data), alternately, best of ADD_BENCH_RUNS
# (default 2) each; target: frame_embed adds <= 10 % to add time.
set -euo pipefail
: "${VIDTHEQUE:=$PWD/vidtheque}"
runs=${ADD_BENCH_RUNS:-2}
model=$PWD/tests/data/mobilenet-v1-0.25-224
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

# frame_embed's share: a fresh library each time (nothing cached between runs)
one_add() { # one_add NAME WITH_MODEL: wall seconds of the add on stdout
  local lib=$t/$1
  rm -rf "$lib"
  "$VIDTHEQUE" -q -L "$lib" init > /dev/null
  [[ $2 == 1 ]] && "$VIDTHEQUE" -q -L "$lib" config set frame_embed.model "$model"
  local s e
  s=$(date +%s.%N)
  "$VIDTHEQUE" -q -L "$lib" add "$t/talk1080.mp4" > "$t/id"
  e=$(date +%s.%N)
  "$VIDTHEQUE" -q -L "$lib" export "$(cat "$t/id")" > "$t/$1.json"
  python3 -c "print(float('$e') - float('$s'))"
}
: > "$t/times"
for r in $(seq "$runs"); do
  echo "without $(one_add plain$r 0)" >> "$t/times"
  echo "with $(one_add model$r 1)" >> "$t/times"
done
python3 - "$t/times" "$t/model1.json" <<'PY'
import json, sys
times = {'without': [], 'with': []}
for line in open(sys.argv[1]):
    k, v = line.split(); times[k].append(float(v))
d = json.load(open(sys.argv[2]))
st = [s for s in d['stages'] if s['name'] == 'frame_embed'][0]
if st['state'] != 'done':
    sys.exit(f"frame_embed is {st['state']}: {st.get('error')}")
a, b = min(times['without']), min(times['with'])
pct = (b - a) / a * 100
print(f"frame_embed on the same talk: {st['model']}")
print(f"  add without an image model {a:.2f} s, with {b:.2f} s (best of {len(times['with'])} each;"
      f" all: {' '.join(f'{x:.2f}' for x in times['without'])} / {' '.join(f'{x:.2f}' for x in times['with'])})")
print(f"  frame_embed stage {st['took_s']:.2f} s; add x{b / a:.3f}, +{pct:.1f} % "
      f"(target <= 10 %) -> {'ok' if pct <= 10 else 'OVER'}")
PY
