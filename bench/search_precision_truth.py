#!/usr/bin/env python3
"""The query set of search_precision_bench.sh, written from the generated talks' truth
files (TALKS/<seed>/truth.json, the videos of files talk<seed>.mp4): for every slide, one of
its words and two of its words side by side, with the moments that are relevant (every
shot of any talk showing a slide that holds all the query's words); then queries that
cannot match: random letters, slide words with their letters shuffled, and words that are
on no slide. One query a line: KIND<TAB>QUERY<TAB>RELEVANT, where KIND is "match" or
"nomatch" and RELEVANT is "talkN@START-END" moments joined by ";" (empty for nomatch)."""
import json, os, random, sys

talks = sys.argv[1]
seeds = sorted(int(d) for d in os.listdir(talks) if d.isdigit())
slides = []  # (title, words lowercased, [(start, end)])
for seed in seeds:
    t = json.load(open(os.path.join(talks, str(seed), "truth.json")))
    for sl in t["slides"]:
        spans = [(t["shots"][i]["start_s"], t["shots"][i]["end_s"]) for i in sl["shown"]]
        slides.append(("talk%d" % seed, [w.lower() for w in sl["words"]], sl["words"], spans))

def relevant(words):
    out = []
    for title, ws, _, spans in slides:
        if all(w in ws for w in words):
            out += ["%s@%.3f-%.3f" % (title, a, b) for a, b in spans]
    return ";".join(out)

rnd = random.Random(25)
seen, lines = set(), []
for title, ws, orig, spans in slides:
    body = orig[2:]  # the words under the title
    one = rnd.choice(body).lower()
    i = rnd.randrange(len(body) - 1)
    two = "%s %s" % (body[i].lower(), body[i + 1].lower())
    for q in (one, two):
        if q not in seen:
            seen.add(q)
            lines.append("match\t%s\t%s" % (q, relevant(q.split())))
vocab = {w for _, ws, _, _ in slides for w in ws}
nomatch = ["xyzzy"]
while len(nomatch) < 9:  # random letters
    w = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(4, 9)))
    if w not in vocab:
        nomatch.append(w)
for w in sorted(vocab)[::9][:8]:  # slide words, letters shuffled
    s = list(w)
    rnd.shuffle(s)
    if "".join(s) not in vocab:
        nomatch.append("".join(s))
# (none of them among the floor's own probes, lib/search/floor.c)
nomatch += ["basalt", "glacier", "orchid", "plumber", "saxophone", "tuesday", "sonata",
            "parliament"]
for q in nomatch:
    if q not in vocab:
        lines.append("nomatch\t%s\t" % q)
print("\n".join(lines))
