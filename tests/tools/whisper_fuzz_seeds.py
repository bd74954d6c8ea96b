#!/usr/bin/env python3
"""Write the seed corpus of tests/fuzz/fuzz_whisper_model.c: Whisper checkpoints as small as
the loader accepts (d_model 8, one head, one layer a side, 80 mel bins, 2 audio and 4 text
positions, 8 tokens), so the fuzzer starts past the dimension checks and reaches the shape,
dtype, conversion, finiteness and alignment-head checks and the network itself.

An input is one byte choosing the format, then:
  'h' (even): config.json, generation_config.json, model.safetensors, separated by SEP
              (an empty part: that file is absent);
  'g' (odd):  a whisper.cpp ggml file.
Run: python3 tests/tools/whisper_fuzz_seeds.py tests/fuzz/corpus_whisper_model
(needs only the standard library; the values are seeded, so the output is reproducible).
"""
import json
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whisper_names import hf_name  # noqa: E402

SEP = b"\n--8<--\n"
S, MELS, ACTX, TCTX, VOCAB, HEADS = 8, 80, 2, 4, 8, 1
F = 4 * S


def shapes():
    """(openai name, shape) of every tensor, in PyTorch's order."""
    out = [
        ("encoder.conv1.weight", (S, MELS, 3)), ("encoder.conv1.bias", (S,)),
        ("encoder.conv2.weight", (S, S, 3)), ("encoder.conv2.bias", (S,)),
        ("encoder.positional_embedding", (ACTX, S)),
        ("encoder.ln_post.weight", (S,)), ("encoder.ln_post.bias", (S,)),
        ("decoder.token_embedding.weight", (VOCAB, S)),
        ("decoder.positional_embedding", (TCTX, S)),
        ("decoder.ln.weight", (S,)), ("decoder.ln.bias", (S,)),
    ]
    block = [("attn_ln.weight", (S,)), ("attn_ln.bias", (S,)),
             ("attn.query.weight", (S, S)), ("attn.query.bias", (S,)),
             ("attn.key.weight", (S, S)), ("attn.value.weight", (S, S)),
             ("attn.value.bias", (S,)), ("attn.out.weight", (S, S)), ("attn.out.bias", (S,)),
             ("mlp_ln.weight", (S,)), ("mlp_ln.bias", (S,)),
             ("mlp.0.weight", (F, S)), ("mlp.0.bias", (F,)),
             ("mlp.2.weight", (S, F)), ("mlp.2.bias", (S,))]
    cross = [("cross_attn_ln.weight", (S,)), ("cross_attn_ln.bias", (S,)),
             ("cross_attn.query.weight", (S, S)), ("cross_attn.query.bias", (S,)),
             ("cross_attn.key.weight", (S, S)), ("cross_attn.value.weight", (S, S)),
             ("cross_attn.value.bias", (S,)), ("cross_attn.out.weight", (S, S)),
             ("cross_attn.out.bias", (S,))]
    out += [("encoder.blocks.0." + n, s) for n, s in block]
    out += [("decoder.blocks.0." + n, s) for n, s in block + cross]
    return out


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def values(rng, n):
    return [rng.gauss(0, 0.5) for _ in range(n)]


def pack(dtype, vals):
    if dtype == "F32":
        return struct.pack("<%df" % len(vals), *vals)
    if dtype == "F16":
        return struct.pack("<%de" % len(vals), *vals)
    if dtype == "BF16":
        return b"".join(struct.pack("<f", v)[2:] for v in vals)
    raise ValueError(dtype)


def safetensors(dtype, rng):
    header, data = {}, b""
    for name, shape in shapes():
        raw = pack(dtype, values(rng, count(shape)))
        header[hf_name(name)] = {"dtype": dtype, "shape": list(shape),
                                 "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + data


def config():
    return json.dumps({
        "vocab_size": VOCAB, "num_mel_bins": MELS, "d_model": S,
        "encoder_layers": 1, "encoder_attention_heads": HEADS, "encoder_ffn_dim": F,
        "decoder_layers": 1, "decoder_attention_heads": HEADS, "decoder_ffn_dim": F,
        "max_source_positions": ACTX, "max_target_positions": TCTX}).encode()


def q8_0(vals):
    """ggml's quantize_row_q8_0: per 32 values an F16 scale amax / 127 and 32 int8."""
    out = b""
    for i in range(0, len(vals), 32):
        blk = vals[i:i + 32]
        d = max(abs(v) for v in blk) / 127.0
        out += struct.pack("<e", d)
        out += bytes((round(v / d) if d else 0) & 0xff for v in blk)
    return out


def ggml(rng, q8):
    b = struct.pack("<I", 0x67676D6C)
    b += struct.pack("<11i", VOCAB, ACTX, S, HEADS, 1, TCTX, S, HEADS, 1, MELS, 7 if q8 else 1)
    b += struct.pack("<ii", 1, 1) + struct.pack("<f", 0.0)  # one filter of one bin
    b += struct.pack("<i", 1) + struct.pack("<I", 1) + b"!"  # one word
    for name, shape in shapes():
        vals = values(rng, count(shape))
        ne = list(reversed(shape))
        if "conv" in name and name.endswith(".bias"):
            ne = [1] + ne  # whisper.cpp's converter writes the conv biases as [S, 1]
        if len(shape) == 1 or "positional" in name:
            typ, raw = 0, pack("F32", vals)
        elif q8 and ne[0] % 32 == 0:
            typ, raw = 8, q8_0(vals)
        else:
            typ, raw = 1, pack("F16", vals)
        nb = name.encode()
        b += struct.pack("<iii", len(ne), len(nb), typ) + struct.pack("<%di" % len(ne), *ne)
        b += nb + raw
    return b


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(23)
    gen = json.dumps({"alignment_heads": [[0, 0]]}).encode()
    seeds = {
        "hf-f16": b"h" + config() + SEP + gen + SEP + safetensors("F16", rng),
        "hf-f32-nogen": b"h" + config() + SEP + SEP + safetensors("F32", rng),
        "hf-bf16": b"h" + config() + SEP + gen + SEP + safetensors("BF16", rng),
        "ggml-f16": b"g" + ggml(rng, False),
        "ggml-q8_0": b"g" + ggml(rng, True),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
