#!/usr/bin/env python3
"""A reference for lib/ml/tiktoken.c in pure Python (no tiktoken, no regex package):
the .tiktoken ranks read with base64, the GPT-2 pre-split pattern of openai/whisper's
tokenizer.py run by Python's re with \\p{L}, \\p{N} and \\s spelt out as character classes
from unicodedata (\\s as the White_Space property, as in tiktoken's Rust regex), then
byte-level BPE as tiktoken's byte_pair_merge (lowest rank first, leftmost on ties).
Writes the ids of CASES under both vocabularies to
tests/data/whisper-assets/tiktoken-expected.tsv, which tests/unit/test_tiktoken.c demands:
    python3 tests/tools/tiktoken_ref.py > tests/data/whisper-assets/tiktoken-expected.tsv
Each line: vocabulary name, the text as hex, its ids separated by spaces."""
import base64
import os
import re
import sys
import unicodedata as ud

ASSETS = os.path.join(os.path.dirname(__file__), '..', 'data', 'whisper-assets')
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
               (0x3000, 0x3000)]

CASES = [
    "Hello", "Hello world", " the", " world", "The quick brown fox jumps over the lazy dog.",
    "I'm sure they'll say it's what we've done, and I'd agree: don't.",
    "SHOUTING'S 'QUOTED' THEY'LL", "''s !!'s x's",
    "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade, \u00fcber Stra\u00dfe",
    "e\u0301 combining, \u00c5ngstr\u00f6m",
    "\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u5427\u3002",
    "\u3053\u3093\u306b\u3061\u306f\u3001\u4e16\u754c\uff01\u30ab\u30bf\u30ab\u30ca",
    "\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0427\u0442\u043e \u043d\u043e\u0432\u043e\u0433\u043e?",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a",
    "emoji \U0001F600\U0001F44D\U0001F3FD \U0001F468\u200d\U0001F469\u200d\U0001F467 \U0001F1EB\U0001F1F7!",
    "\u266a\u266a music \u266b and \u00a9 \u20ac5",
    "tabs\tand\nnewlines\r\n  two spaces   three\n\n\nend  ",
    "   leading spaces", "trailing spaces   ", " ", "\n", "a \u00a0b\u3000c\u2003d",
    "12345 3.14159 1,000,000 2024-05-01 x\u00b2 \u00bd \u2167",
    "x = f(y) + 3; // see https://example.com/path?q=1&r=2",
    "<|endoftext|> <|en|> <|0.00|> as plain text",
    "Ask not what your country can do for you, ask what you can do for your country.",
    "MiXeD cAsE wOrDs and CamelCaseIdentifiers_with_underscores",
]


def load(name):
    ranks = {}
    with open(os.path.join(ASSETS, name + '.tiktoken'), 'rb') as f:
        for line in f:
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def ranges(pred):
    out, start = [], None
    for cp in range(0x110001):
        ok = cp <= 0x10FFFF and not (0xD800 <= cp <= 0xDFFF) and pred(cp)
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            out.append((start, cp - 1))
            start = None
    return out


def cls(rs):
    return ''.join('\\U%08x-\\U%08x' % (a, b) for a, b in rs)


def pattern():
    letter = cls(ranges(lambda cp: ud.category(chr(cp)).startswith('L')))
    number = cls(ranges(lambda cp: ud.category(chr(cp)).startswith('N')))
    space = cls(WHITE_SPACE)
    pat = (r"'s|'t|'re|'ve|'m|'ll|'d| ?[L]+| ?[N]+| ?[^SLN]+|[S]+(?![^S])|[S]+"
           .replace('L', letter).replace('N', number).replace('S', space))
    return re.compile(pat)


def bpe(ranks, piece):
    if piece in ranks:
        return [ranks[piece]]
    parts = [bytes([b]) for b in piece]
    while True:
        best = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


def encode(ranks, pat, text):
    ids = []
    for m in pat.finditer(text):
        ids += bpe(ranks, m.group().encode('utf-8'))
    return ids


def main():
    pat = pattern()
    for name in ('gpt2', 'multilingual'):
        ranks = load(name)
        for text in CASES:
            ids = encode(ranks, pat, text)
            assert b''.join({v: k for k, v in ranks.items()}[i] for i in ids) == text.encode()
            sys.stdout.write('%s\t%s\t%s\n' % (name, text.encode('utf-8').hex(),
                                               ' '.join(map(str, ids))))


if __name__ == '__main__':
    main()
