#!/usr/bin/env python3
"""Check the house's rules (LAYERS at the repository's root) against the code.

    python3 scripts/check-layers.py [--root DIR] [--objects BUILD] [--max-lines N]

Each room is a folder of lib/, src/ or include/ (its subfolders are rooms of their own
when LAYERS names them). A file may use the files of its own room and of the rooms its
LAYERS line lists, and nothing else. What it checks:

  includes  every quoted #include resolves (the file's folder, then include/, lib/,
            src/, as the Makefile's -I) to a file of an allowed room
  calls     with --objects: the symbols each object file takes from another (nm)
            come from an allowed room, and no files call each other in a circle
  names     no two .c files of lib/ and src/ share a file name: the archive
            (ar) keeps one member per name
  length    no function is longer than --max-lines (120) lines, in lib/, src/ and
            the C of tests/ and bench/; generated tables (*.inc) are not read

It prints one line per breach and ends with "layers: N breach(es)"; exit 1 when N > 0.
It needs nothing but Python and, for --objects, binutils' nm.
"""
import argparse
import os
import re
import subprocess
import sys

SOURCE_DIRS = ("include", "lib", "src")


def read_layers(root):
    """{room: set of rooms it may use}, in the file's order (bottom first)."""
    rooms = {}
    path = os.path.join(root, "LAYERS")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            room = words[0].rstrip(":")
            for used in words[1:]:
                if used not in rooms:
                    sys.exit("%s:%d: %s uses %s, which is not a room above this line"
                             % (path, n, room, used))
            rooms[room] = set(words[1:])
    # what a room may use is also what those rooms may use: layers, not a graph
    for room in rooms:
        todo, seen = list(rooms[room]), set()
        while todo:
            r = todo.pop()
            if r not in seen:
                seen.add(r)
                todo.extend(rooms[r])
        rooms[room] = seen
    return rooms


def room_of(path, rooms):
    """The deepest room holding path (a path relative to the root), or None."""
    best = None
    for room in rooms:
        if path.startswith(room + "/") and (best is None or len(room) > len(best)):
            best = room
    return best


def source_files(root):
    for top in SOURCE_DIRS:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, name), root)


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_includes(root, rooms, breaches):
    for f in source_files(root):
        room = room_of(f, rooms)
        if room is None:
            breaches.append("%s: in no room of LAYERS" % f)
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            name = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            target = None
            for base in [os.path.dirname(f)] + list(SOURCE_DIRS):
                cand = os.path.normpath(os.path.join(base, name))
                if os.path.isfile(os.path.join(root, cand)):
                    target = cand
                    break
            if target is None:
                breaches.append('%s:%d: #include "%s" names no file' % (f, line, name))
                continue
            troom = room_of(target, rooms)
            if troom != room and troom not in rooms[room]:
                breaches.append('%s:%d: #include "%s": %s may not use %s'
                                % (f, line, name, room, troom))


def nm(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind == "U":
            used.add(sym)
        elif kind in ("T", "D", "B", "R", "C", "V", "W", "G", "S"):
            defined.add(sym)
    return defined, used


def check_calls(root, objects, rooms, breaches):
    """File-to-file uses from the object files under objects (BUILD/lib/.., BUILD/src/..)."""
    owner, uses = {}, {}
    for top in ("lib", "src"):
        for d, _, names in os.walk(os.path.join(objects, top)):
            for name in sorted(names):
                if not name.endswith(".o") or name.endswith("-front.o"):
                    continue
                obj = os.path.join(d, name)
                src = os.path.relpath(obj, objects)[:-2] + ".c"
                if not os.path.isfile(os.path.join(root, src)):
                    continue  # left by a build of a file since removed
                defined, used = nm(obj)
                for s in defined:
                    owner.setdefault(s, src)
                uses[src] = used
    if not uses:
        breaches.append("%s: no object files (run make first)" % objects)
        return
    graph = {f: {} for f in uses}
    for f, used in uses.items():
        for s in used:
            g = owner.get(s)
            if g and g != f:
                graph[f].setdefault(g, []).append(s)
    for f in sorted(graph):
        room = room_of(f, rooms)
        for g, syms in sorted(graph[f].items()):
            troom = room_of(g, rooms)
            if room and troom and troom != room and troom not in rooms[room]:
                breaches.append("%s: calls %s (%s): %s may not use %s"
                                % (f, g, ", ".join(sorted(syms)[:3]), room, troom))
    for cycle in strongly_connected(graph):
        if len(cycle) > 1:
            ties = []
            for f in cycle:
                for g, syms in sorted(graph[f].items()):
                    if g in cycle:
                        ties.append("%s -> %s (%s)" % (f, g, ", ".join(sorted(syms)[:2])))
            breaches.append("call cycle between %s: %s" % (", ".join(cycle), "; ".join(ties)))


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the graph's strongly connected sets, each sorted."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


STRIP = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def functions(text):
    """(name, first line, last line) of each function definition in C text."""
    text = STRIP.sub(blank, text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, text, flags=re.M)
    depth, start = 0, None
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                j = i - 1
                while j >= 0 and text[j].isspace():
                    j -= 1
                if j >= 0 and text[j] == ")":
                    # back to the parameter list's '(' and the name before it
                    k, par = j, 0
                    while k >= 0:
                        if text[k] == ")":
                            par += 1
                        elif text[k] == "(":
                            par -= 1
                            if par == 0:
                                break
                        k -= 1
                    m = re.search(r"(\w+)\s*$", text[:k])
                    start = (m.group(1) if m else "?", text.count("\n", 0, k) + 1)
                else:
                    start = None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and start:
                yield start[0], start[1], text.count("\n", 0, i) + 1
                start = None


def c_files(root):
    """The C files whose functions are measured: the sources, the tests, the benches."""
    yield from (f for f in source_files(root) if f.endswith(".c"))
    for top in ("tests", "bench"):
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x not in ("node_modules", "data", "out"))
            for name in sorted(names):
                if name.endswith(".c"):
                    yield os.path.relpath(os.path.join(d, name), root)


def check_names(root, breaches):
    seen = {}
    for f in source_files(root):
        if f.endswith(".c"):
            name = os.path.basename(f)
            if name in seen:
                breaches.append("%s: the same file name as %s (ar keeps one member per name)"
                                % (f, seen[name]))
            seen.setdefault(name, f)


def check_lengths(root, max_lines, breaches):
    for f in c_files(root):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for name, first, last in functions(text):
            if last - first + 1 > max_lines:
                breaches.append("%s:%d: %s is %d lines (at most %d)"
                                % (f, first, name, last - first + 1, max_lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--objects", help="the build folder (build/rel): check calls too")
    ap.add_argument("--max-lines", type=int, default=120)
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    rooms = read_layers(root)
    breaches = []
    check_includes(root, rooms, breaches)
    if args.objects:
        check_calls(root, os.path.abspath(args.objects), rooms, breaches)
    check_names(root, breaches)
    check_lengths(root, args.max_lines, breaches)
    for b in breaches:
        print(b)
    print("layers: %d breach(es)" % len(breaches))
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
