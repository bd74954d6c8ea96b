#!/usr/bin/env python3
"""Check Prometheus text exposition (format 0.0.4) strictly, and compare two scrapes.

promcheck.py FIRST [SECOND]: every line of FIRST (and SECOND) is a HELP, a TYPE or a sample
of a family announced before it by both; label values are escaped; no series twice; a
histogram's buckets are cumulative, end with +Inf equal to its _count. With SECOND, every
counter series (and every histogram series) of FIRST is in SECOND with a value no smaller.
Prints the samples of the last scrape as "name{labels} value" lines on stdout, for greps.
Exit 1 with one line per problem on stderr.
"""
import math
import re
import sys

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(r'^(' + NAME + r')(\{(?:' + LABEL + r')(?:,' + LABEL + r')*\})? (\S+)$')
TYPES = {'counter', 'gauge', 'histogram', 'summary', 'untyped'}


def family_of(name, types):
    if name in types:
        return name
    for suf in ('_bucket', '_sum', '_count'):
        if name.endswith(suf) and types.get(name[:-len(suf)]) in ('histogram', 'summary'):
            return name[:-len(suf)]
    return None


def value(s):
    if s in ('+Inf', '-Inf', 'NaN'):
        return float(s.replace('Inf', 'inf').replace('NaN', 'nan'))
    return float(s)  # raises on garbage


def parse(path, errs):
    helps, types, series = set(), {}, {}
    text = open(path, 'rb').read()
    try:
        text = text.decode('utf-8')
    except UnicodeDecodeError:
        errs.append(f'{path}: not UTF-8')
        return types, series
    if text and not text.endswith('\n'):
        errs.append(f'{path}: the last line has no newline')
    for no, line in enumerate(text.split('\n')[:-1], 1):
        where = f'{path}:{no}'
        if line.startswith('# HELP '):
            parts = line.split(' ', 3)
            if len(parts) < 4 or not re.fullmatch(NAME, parts[2]) or parts[2] in helps:
                errs.append(f'{where}: bad or repeated HELP: {line}')
            helps.add(parts[2])
            continue
        if line.startswith('# TYPE '):
            parts = line.split(' ')
            if len(parts) != 4 or parts[3] not in TYPES or parts[2] in types:
                errs.append(f'{where}: bad or repeated TYPE: {line}')
            elif parts[2] not in helps:
                errs.append(f'{where}: TYPE before HELP: {line}')
            else:
                types[parts[2]] = parts[3]
            continue
        if line.startswith('#') or not line:
            errs.append(f'{where}: not a line of the format: {line!r}')
            continue
        m = SAMPLE.match(line)
        if not m:
            errs.append(f'{where}: not a sample: {line!r}')
            continue
        name, labels, v = m.group(1), m.group(2) or '', m.group(3)
        fam = family_of(name, types)
        if fam is None:
            errs.append(f'{where}: sample of a family without HELP/TYPE: {name}')
            continue
        try:
            val = value(v)
        except ValueError:
            errs.append(f'{where}: bad value {v!r}')
            continue
        key = name + labels
        if key in series:
            errs.append(f'{where}: series twice: {key}')
        series[key] = (fam, val)
    check_histograms(path, types, series, errs)
    return types, series


def check_histograms(path, types, series, errs):
    groups = {}
    for key, (fam, val) in series.items():
        if types.get(fam) != 'histogram' or not key.startswith(fam + '_bucket'):
            continue
        labels = key[len(fam + '_bucket'):]
        le = re.search(r'le="([^"]*)"', labels).group(1)
        rest = re.sub(r',?le="[^"]*"', '', labels).replace('{,', '{')
        groups.setdefault((fam, rest), []).append((value(le), val))
    for (fam, rest), buckets in groups.items():
        buckets.sort()
        counts = [c for _, c in buckets]
        if counts != sorted(counts):
            errs.append(f'{path}: {fam}{rest}: buckets not cumulative')
        if not math.isinf(buckets[-1][0]):
            errs.append(f'{path}: {fam}{rest}: no +Inf bucket')
        cnt = series.get(fam + '_count' + ('' if rest == '{}' else rest))
        if not cnt or cnt[1] != counts[-1]:
            errs.append(f'{path}: {fam}{rest}: +Inf bucket is not _count')


def main():
    errs = []
    scrapes = [parse(p, errs) for p in sys.argv[1:3]]
    if len(scrapes) == 2:
        (t1, s1), (_, s2) = scrapes
        for key, (fam, v) in s1.items():
            if t1.get(fam) not in ('counter', 'histogram'):
                continue
            if key not in s2:
                errs.append(f'counter series gone in the second scrape: {key}')
            elif s2[key][1] < v:
                errs.append(f'counter went down: {key}: {v} then {s2[key][1]}')
    for e in errs:
        print(e, file=sys.stderr)
    for key, (_, v) in scrapes[-1][1].items():
        print(f'{key} {v:g}')
    sys.exit(1 if errs else 0)


if __name__ == '__main__':
    main()
