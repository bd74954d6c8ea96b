#!/usr/bin/python3
"""The reference for Whisper's encoder-decoder and greedy decoding (issue 23).

openai/whisper's model.py (AudioEncoder, TextDecoder, ResidualAttentionBlock,
MultiHeadAttention, sinusoids) and decoding.py's greedy path (SuppressBlank, SuppressTokens,
ApplyTimestampRules, GreedyDecoder, the no-speech probability) and transcribe.py's
segmentation of one window, rewritten step for step in PyTorch (release 20250625, c0d2f624),
without the package. The tokenizer's special tokens and non_speech_tokens come from the real
.tiktoken vocabularies through tests/tools/tiktoken_ref.py. Needs Debian's PyTorch and NumPy
(/usr/bin/python3, apt-get install python3-torch python3-numpy); make check never runs it.

From the top of the tree:
  /usr/bin/python3 tests/tools/whisper_ref.py --make
      writes the generated test checkpoint tests/data/whisper-test/ (model.safetensors in F16,
      config.json, generation_config.json: Hugging Face's WhisperForConditionalGeneration
      layout) from fixed seeds; --f32 DIR also writes the same values in F32 into DIR.
  /usr/bin/python3 tests/tools/whisper_ref.py
      loads tests/data/whisper-test/model.safetensors, runs it on tests/data/speech/jfk.wav
      and writes tests/data/whisper-test/expected.json (the values the C tests demand).
  /usr/bin/python3 tests/tools/whisper_ref.py --check
      computes everything twice and compares with the committed expected.json (determinism).
Options: --dir DIR (another checkpoint), --en (make an English-only model: 51864 tokens).
"""
import json
import math
import os
import re
import struct
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiktoken_ref  # noqa: E402
import whisper_mel_ref  # noqa: E402
from whisper_names import hf_name  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(TOP, 'tests', 'data', 'whisper-test')
WAV = os.path.join(TOP, 'tests', 'data', 'speech', 'jfk.wav')

# audio.py's constants
SAMPLE_RATE, HOP_LENGTH, CHUNK_LENGTH = 16000, 160, 30
N_SAMPLES = CHUNK_LENGTH * SAMPLE_RATE
N_FRAMES = N_SAMPLES // HOP_LENGTH  # 3000
FRAMES_PER_SECOND = SAMPLE_RATE // HOP_LENGTH  # 100

# The generated model: Whisper's structure, tiny dimensions, the real vocabulary.
DIMS = dict(n_mels=80, n_audio_ctx=1500, n_audio_state=64, n_audio_head=2, n_audio_layer=2,
            n_vocab=51865, n_text_ctx=448, n_text_state=64, n_text_head=2, n_text_layer=2)
SEED = 23

LANGUAGES = ["en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar",
             "sv", "it", "id", "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu",
             "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk", "te", "fa",
             "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn",
             "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc",
             "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn",
             "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw",
             "su", "yue"]


# ---------------------------------------------------------------------------- model.py

def sinusoids(length, channels, max_timescale=10000):
    """model.py's sinusoids: the encoder's positional embedding."""
    assert channels % 2 == 0
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_state, n_head):
        super().__init__()
        self.n_head = n_head
        self.query = nn.Linear(n_state, n_state)
        self.key = nn.Linear(n_state, n_state, bias=False)
        self.value = nn.Linear(n_state, n_state)
        self.out = nn.Linear(n_state, n_state)

    def forward(self, x, xa=None, mask=None):
        q = self.query(x)
        k = self.key(x if xa is None else xa)
        v = self.value(x if xa is None else xa)
        wv, qk = self.qkv_attention(q, k, v, mask)
        return self.out(wv), qk

    def qkv_attention(self, q, k, v, mask=None):
        """The non-SDPA path of model.py: q and k each scaled by head_dim ** -0.25."""
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = (q * scale) @ (k * scale).transpose(-1, -2)
        if mask is not None:
            qk = qk + mask[:n_ctx, :n_ctx]
        w = F.softmax(qk.float(), dim=-1)
        out = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        return out, qk.detach()


class ResidualAttentionBlock(nn.Module):
    def __init__(self, n_state, n_head, cross_attention=False):
        super().__init__()
        self.attn = MultiHeadAttention(n_state, n_head)
        self.attn_ln = nn.LayerNorm(n_state)
        self.cross_attn = MultiHeadAttention(n_state, n_head) if cross_attention else None
        self.cross_attn_ln = nn.LayerNorm(n_state) if cross_attention else None
        n_mlp = n_state * 4
        self.mlp = nn.Sequential(nn.Linear(n_state, n_mlp), nn.GELU(), nn.Linear(n_mlp, n_state))
        self.mlp_ln = nn.LayerNorm(n_state)

    def forward(self, x, xa=None, mask=None):
        x = x + self.attn(self.attn_ln(x), mask=mask)[0]
        if self.cross_attn:
            x = x + self.cross_attn(self.cross_attn_ln(x), xa)[0]
        x = x + self.mlp(self.mlp_ln(x))
        return x


class AudioEncoder(nn.Module):
    def __init__(self, n_mels, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, n_state, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(n_ctx, n_state))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(n_state, n_head) for _ in range(n_layer)])
        self.ln_post = nn.LayerNorm(n_state)

    def forward(self, x):
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
        x = x + self.positional_embedding
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


class TextDecoder(nn.Module):
    def __init__(self, n_vocab, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.token_embedding = nn.Embedding(n_vocab, n_state)
        self.positional_embedding = nn.Parameter(torch.empty(n_ctx, n_state))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(n_state, n_head, cross_attention=True)
                                     for _ in range(n_layer)])
        self.ln = nn.LayerNorm(n_state)
        mask = torch.empty(n_ctx, n_ctx).fill_(-np.inf).triu_(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x, xa, last_only=False):
        """model.py's forward without a KV cache (the whole sequence every step); last_only
        projects only the last position onto the vocabulary (the only row decoding reads)."""
        x = self.token_embedding(x) + self.positional_embedding[:x.shape[-1]]
        for block in self.blocks:
            x = block(x, xa, mask=self.mask)
        x = self.ln(x)
        if last_only:
            x = x[:, -1:]
        return (x @ torch.transpose(self.token_embedding.weight, 0, 1)).float()


class Whisper(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims
        self.encoder = AudioEncoder(dims['n_mels'], dims['n_audio_ctx'], dims['n_audio_state'],
                                    dims['n_audio_head'], dims['n_audio_layer'])
        self.decoder = TextDecoder(dims['n_vocab'], dims['n_text_ctx'], dims['n_text_state'],
                                   dims['n_text_head'], dims['n_text_layer'])

    @property
    def is_multilingual(self):
        return self.dims['n_vocab'] >= 51865

    @property
    def num_languages(self):
        return self.dims['n_vocab'] - 51765 - int(self.is_multilingual)


# ------------------------------------------------------------------ safetensors

DTYPES = {"F32": (torch.float32, 4), "F16": (torch.float16, 2)}


def write_safetensors(path, tensors, dtype):
    """safetensors: u64 LE header length, a JSON header (padded with spaces to 8 bytes), then
    the raw little-endian data in header order."""
    tdtype, _ = DTYPES[dtype]
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        b = tensors[name].to(tdtype).contiguous().numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        dt, _ = DTYPES[t["dtype"]]
        buf = bytearray(data[8 + n + a:8 + n + b])
        out[name] = torch.frombuffer(buf, dtype=dt).reshape(t["shape"]).float()
    return out


# -------------------------------------------------------------------------- tokenizer.py

class Tokenizer:
    """tokenizer.py's Tokenizer over the real .tiktoken ranks: special token ids as get_encoding
    numbers them, the start sequence, non_speech_tokens, decode."""

    def __init__(self, multilingual, num_languages=99, language=None, task=None):
        name = "multilingual" if multilingual else "gpt2"
        self.ranks = tiktoken_ref.load(name)
        self.pat = tiktoken_ref.pattern()
        n = len(self.ranks)
        specials = (["<|endoftext|>", "<|startoftranscript|>"]
                    + ["<|%s|>" % lang for lang in LANGUAGES[:num_languages]]
                    + ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>",
                       "<|nospeech|>", "<|notimestamps|>"]
                    + ["<|%.2f|>" % (i * 0.02) for i in range(1501)])
        self.num_languages = num_languages
        self.special = {s: n + i for i, s in enumerate(specials)}
        self.n_vocab = n + len(specials)
        self.bytes = {v: k for k, v in self.ranks.items()}
        self.bytes.update({v: k.encode() for k, v in self.special.items()})
        sp = self.special
        self.eot, self.sot = sp["<|endoftext|>"], sp["<|startoftranscript|>"]
        self.translate, self.transcribe = sp["<|translate|>"], sp["<|transcribe|>"]
        self.sot_lm, self.sot_prev = sp["<|startoflm|>"], sp["<|startofprev|>"]
        self.no_speech, self.no_timestamps = sp["<|nospeech|>"], sp["<|notimestamps|>"]
        self.timestamp_begin = sp["<|0.00|>"]
        self.all_language_tokens = [sp["<|%s|>" % lang] for lang in LANGUAGES[:num_languages]]
        if multilingual:
            language, task = language or "en", task or "transcribe"
        else:
            language, task = None, None
        self.language = language
        seq = [self.sot]
        if language is not None:
            seq.append(self.sot + 1 + LANGUAGES.index(language))
        if task is not None:
            seq.append(self.transcribe if task == "transcribe" else self.translate)
        self.sot_sequence = tuple(seq)

    def encode(self, text):
        return tiktoken_ref.encode(self.ranks, self.pat, text)

    def decode(self, ids):
        return b"".join(self.bytes[i] for i in ids if i < self.timestamp_begin).decode(
            "utf-8", errors="replace")

    def decode_with_timestamps(self, ids):
        return b"".join(self.bytes[i] for i in ids).decode("utf-8", errors="replace")

    def non_speech_tokens(self):
        """tokenizer.py's non_speech_tokens, word for word."""
        symbols = list('"#()*+/:;<=>@[\\]^_`{|}~「」『』')
        symbols += "<< >> <<< >>> -- --- -( -[ (' (\" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪".split()
        miscellaneous = set("♩♪♫♬♭♮♯")
        assert all(0x2640 <= ord(c) <= 0x267F for c in miscellaneous)
        result = {self.encode(" -")[0], self.encode(" '")[0]}
        for symbol in symbols + list(miscellaneous):
            for tokens in [self.encode(symbol), self.encode(" " + symbol)]:
                if len(tokens) == 1 or symbol in miscellaneous:
                    result.add(tokens[0])
        return tuple(sorted(result))

    def suppress_tokens(self):
        """DecodingTask._get_suppress_tokens for the default "-1"."""
        s = list(self.non_speech_tokens())
        s += [self.transcribe, self.translate, self.sot, self.sot_prev, self.sot_lm,
              self.no_speech]
        return tuple(sorted(set(s)))


# --------------------------------------------------------------------------- decoding.py

def apply_filters(logits, tokens, sample_begin, tok, suppress, max_initial_timestamp_index):
    """SuppressBlank, SuppressTokens, ApplyTimestampRules, in DecodingTask's order, on one row
    (logits: [n_vocab], tokens: the list so far)."""
    if len(tokens) == sample_begin:  # SuppressBlank
        logits[tok.encode(" ") + [tok.eot]] = -np.inf
    logits[list(suppress)] = -np.inf  # SuppressTokens
    tb = tok.timestamp_begin
    # ApplyTimestampRules
    logits[tok.no_timestamps] = -np.inf
    seq = tokens[sample_begin:]
    last_was_timestamp = len(seq) >= 1 and seq[-1] >= tb
    penultimate_was_timestamp = len(seq) < 2 or seq[-2] >= tb
    if last_was_timestamp:
        if penultimate_was_timestamp:
            logits[tb:] = -np.inf
        else:
            logits[:tok.eot] = -np.inf
    timestamps = [t for t in seq if t >= tb]
    if timestamps:
        if last_was_timestamp and not penultimate_was_timestamp:
            timestamp_last = timestamps[-1]
        else:
            timestamp_last = timestamps[-1] + 1
        logits[tb:timestamp_last] = -np.inf
    if len(tokens) == sample_begin:
        logits[:tb] = -np.inf
        if max_initial_timestamp_index is not None:
            logits[tb + max_initial_timestamp_index + 1:] = -np.inf
    logprobs = F.log_softmax(logits.float(), dim=-1)
    if logprobs[tb:].logsumexp(dim=-1) > logprobs[:tb].max():
        logits[:tb] = -np.inf


def greedy_decode(model, tok, audio_features, max_initial_timestamp=1.0, sample_len=None,
                  prompt=None):
    """DecodingTask.run with DecodingOptions(temperature=0, language given, timestamps on,
    suppress_tokens "-1", suppress_blank), batch 1, with prompt (a list of token ids, as
    transcribe passes it) or without."""
    n_ctx = model.dims['n_text_ctx']
    sample_len = sample_len or n_ctx // 2
    initial = list(tok.sot_sequence)
    if prompt:  # DecodingTask._get_initial_tokens
        initial = [tok.sot_prev] + list(prompt)[-(n_ctx // 2 - 1):] + initial
    sample_begin, sot_index = len(initial), initial.index(tok.sot)
    precision = CHUNK_LENGTH / model.dims['n_audio_ctx']
    mit_index = round(max_initial_timestamp / precision) if max_initial_timestamp else None
    suppress = tok.suppress_tokens()
    tokens, sum_logprob, no_speech_prob, steps = list(initial), 0.0, None, []
    for i in range(sample_len):
        if i == 0:
            all_logits = model.decoder(torch.tensor([tokens]), audio_features)[0]
            no_speech_prob = all_logits[sot_index].softmax(dim=-1)[tok.no_speech].item()
            logits = all_logits[-1].clone()
        else:
            logits = model.decoder(torch.tensor([tokens]), audio_features, last_only=True)[0, -1]
        raw = logits.clone()
        apply_filters(logits, tokens, sample_begin, tok, suppress, mit_index)
        top2 = torch.topk(logits, 2)
        nxt = int(logits.argmax())
        logprob = F.log_softmax(logits.float(), dim=-1)[nxt].item()
        sum_logprob += logprob
        steps.append({"token": nxt, "logprob": round(logprob, 6),
                      "raw_logit": round(raw[nxt].item(), 6),
                      "margin": round((top2.values[0] - top2.values[1]).item(), 6)})
        tokens.append(nxt)
        if nxt == tok.eot or len(tokens) > n_ctx:
            break
    sampled = tokens[sample_begin:]
    if tok.eot in sampled:
        sampled = sampled[:sampled.index(tok.eot)]
    text = tok.decode(sampled).strip()
    return {"initial_tokens": initial, "tokens": sampled, "text": text,
            "compression_ratio": compression_ratio(text),
            "ended_with_eot": tokens[-1] == tok.eot,
            "sum_logprob": round(sum_logprob, 5),
            "avg_logprob": round(sum_logprob / (len(sampled) + 1), 6),
            "no_speech_prob": no_speech_prob,
            "suppress_tokens": list(suppress), "max_initial_timestamp_index": mit_index,
            "sample_len": sample_len, "steps": steps}


def compression_ratio(text):
    """utils.py's compression_ratio"""
    b = text.encode("utf-8")
    return len(b) / len(zlib.compress(b))


def get_end(segments):
    """utils.py's get_end: the last word's end, else the last segment's end, else None."""
    return next((w["end"] for s in reversed(segments) for w in reversed(s["words"])),
                segments[-1]["end"] if segments else None)


def transcribe(model, tok, audio, initial_prompt=None, compression_ratio_threshold=2.4,
               logprob_threshold=-1.0, no_speech_threshold=0.6,
               condition_on_previous_text=True, add_words=None):
    """transcribe.py's loop with temperature=(0.0,) (so decode_with_fallback decodes once),
    the language given (tok's), no clip_timestamps, no hallucination_silence_threshold,
    carry_initial_prompt False. word_timestamps False unless add_words is given:
    add_words(segments, mel_segment, num_frames, last_speech_timestamp) stands for
    timing.py's add_word_timestamps (whisper_align_ref.py passes it), and the loop then
    does what transcribe.py does with word_timestamps True."""
    n_mels = model.dims['n_mels']
    old = os.getcwd()
    os.chdir(TOP)
    try:
        mel = whisper_mel_ref.log_mel_spectrogram(audio, n_mels, padding=N_SAMPLES)
    finally:
        os.chdir(old)
    content_frames = mel.shape[-1] - N_FRAMES
    input_stride = N_FRAMES // model.dims['n_audio_ctx']
    time_precision = input_stride * HOP_LENGTH / SAMPLE_RATE
    seek, all_tokens, all_segments, prompt_reset_since, windows = 0, [], [], 0, []
    last_speech_timestamp = 0.0
    if initial_prompt is not None:
        all_tokens.extend(tok.encode(" " + initial_prompt.strip()))
    tb = tok.timestamp_begin
    while seek < content_frames:
        time_offset = float(seek * HOP_LENGTH / SAMPLE_RATE)
        segment_size = min(N_FRAMES, content_frames - seek)
        window = F.pad(mel[:, seek:seek + segment_size], (0, N_FRAMES - segment_size))
        prompt = all_tokens[prompt_reset_since:]
        with torch.no_grad():
            xa = model.encoder(window[None])
            res = greedy_decode(model, tok, xa, prompt=prompt)
        # decode_with_fallback with one temperature: the result as it is
        win = {"seek": seek, "segment_size": segment_size, "n_prompt": len(prompt),
               "tokens": res["tokens"], "avg_logprob": res["avg_logprob"],
               "no_speech_prob": res["no_speech_prob"],
               "compression_ratio": res["compression_ratio"], "skipped": False}
        windows.append(win)
        if no_speech_threshold is not None:
            should_skip = res["no_speech_prob"] > no_speech_threshold
            if logprob_threshold is not None and res["avg_logprob"] > logprob_threshold:
                should_skip = False
            if should_skip:
                win["skipped"] = True
                seek += segment_size
                continue
        tokens = res["tokens"]
        current = []

        def new_segment(start, end, toks):
            return {"seek": seek, "start": start, "end": end,
                    "text": tok.decode([t for t in toks if t < tok.eot]), "tokens": list(toks),
                    "temperature": 0.0, "avg_logprob": res["avg_logprob"],
                    "compression_ratio": res["compression_ratio"],
                    "no_speech_prob": res["no_speech_prob"]}
        ts = [t >= tb for t in tokens]
        single_timestamp_ending = ts[-2:] == [False, True]
        consecutive = [i + 1 for i in range(len(ts) - 1) if ts[i] and ts[i + 1]]
        if consecutive:
            slices = consecutive + ([len(tokens)] if single_timestamp_ending else [])
            last_slice = 0
            for cur in slices:
                s = tokens[last_slice:cur]
                current.append(new_segment(time_offset + (s[0] - tb) * time_precision,
                                           time_offset + (s[-1] - tb) * time_precision, s))
                last_slice = cur
            if single_timestamp_ending:
                seek += segment_size
            else:
                seek += (tokens[last_slice - 1] - tb) * input_stride
        else:
            duration = segment_size * HOP_LENGTH / SAMPLE_RATE
            stamps = [t for t in tokens if t >= tb]
            if stamps and stamps[-1] != tb:
                duration = (stamps[-1] - tb) * time_precision
            current.append(new_segment(time_offset, time_offset + duration, tokens))
            seek += segment_size
        if add_words is not None:  # transcribe.py's word_timestamps True
            win["last_speech_timestamp"] = last_speech_timestamp
            add_words(current, window, segment_size, last_speech_timestamp)
            if not single_timestamp_ending:
                last_word_end = get_end(current)
                if last_word_end is not None and last_word_end > time_offset:
                    seek = round(last_word_end * FRAMES_PER_SECOND)
            last_word_end = get_end(current)
            if last_word_end is not None:
                last_speech_timestamp = last_word_end
            win["next_seek"] = seek
        for segment in current:
            if segment["start"] == segment["end"] or segment["text"].strip() == "":
                segment["text"] = ""
                segment["tokens"] = []
                if add_words is not None:
                    segment["words"] = []
        all_segments.extend(current)
        all_tokens.extend(t for segment in current for t in segment["tokens"])
        if not condition_on_previous_text:  # temperature is 0 here, never > 0.5
            prompt_reset_since = len(all_tokens)
    return {"initial_prompt": initial_prompt, "content_frames": content_frames,
            "windows": windows, "segments": all_segments,
            "seeks": [w["seek"] for w in windows]}


def detect_language(model, tok, audio_features):
    """decoding.py's detect_language: one step from <|startoftranscript|>, non-language tokens
    masked, softmax over the rest."""
    logits = model.decoder(torch.tensor([[tok.sot]]), audio_features)[0, 0]
    mask = torch.ones(logits.shape[-1], dtype=torch.bool)
    mask[tok.all_language_tokens] = False
    logits[mask] = -np.inf
    probs = logits.softmax(dim=-1)
    ranked = sorted(((probs[t].item(), LANGUAGES[i]) for i, t in enumerate(tok.all_language_tokens)),
                    reverse=True)
    return {"language": ranked[0][1], "token": int(logits.argmax()),
            "top5": [[code, p] for p, code in ranked[:5]]}


def segments(tok, tokens, seek, segment_size, n_audio_ctx=1500):
    """transcribe.py's cutting of one window's tokens into segments and its seek advance."""
    input_stride = N_FRAMES // n_audio_ctx
    time_precision = input_stride * HOP_LENGTH / SAMPLE_RATE
    time_offset = seek * HOP_LENGTH / SAMPLE_RATE
    tb = tok.timestamp_begin
    ts = [t >= tb for t in tokens]
    single_timestamp_ending = ts[-2:] == [False, True]
    consecutive = [i + 1 for i in range(len(ts) - 1) if ts[i] and ts[i + 1]]
    out = []

    def seg(start, end, toks):
        out.append({"start": round(start, 2), "end": round(end, 2), "tokens": toks,
                    "text": tok.decode(toks)})
    if consecutive:
        slices = consecutive + ([len(tokens)] if single_timestamp_ending else [])
        last = 0
        for cur in slices:
            s = tokens[last:cur]
            seg(time_offset + (s[0] - tb) * time_precision,
                time_offset + (s[-1] - tb) * time_precision, s)
            last = cur
        if single_timestamp_ending:
            seek += segment_size
        else:
            seek += (tokens[last - 1] - tb) * input_stride
    else:
        duration = segment_size * HOP_LENGTH / SAMPLE_RATE
        stamps = [t for t in tokens if t >= tb]
        if stamps and stamps[-1] != tb:
            duration = (stamps[-1] - tb) * time_precision
        seg(time_offset, time_offset + duration, tokens)
        seek += segment_size
    return out, seek


# ------------------------------------------------------------------------ the generation

def make_model(dims, seed):
    """Seeded weights, rounded to F16 (the committed file's precision) so that the F16 file,
    an F32 copy and the reference hold the very same values. Scales chosen so activations stay
    O(1) and the logits spread over several units (clear argmax margins)."""
    g = torch.Generator().manual_seed(seed)
    model = Whisper(dims)
    sd = model.state_dict()
    new = {}
    for name, t in sd.items():
        if name == "encoder.positional_embedding":
            v = t.clone()  # sinusoids, as openai's checkpoints store the buffer
        elif name.endswith("_ln.weight") or name.endswith("ln.weight") or name.endswith("ln_post.weight"):
            v = 1.0 + 0.1 * torch.randn(t.shape, generator=g)
        elif name.endswith(".bias"):
            v = 0.1 * torch.randn(t.shape, generator=g)
        elif name == "decoder.token_embedding.weight":
            v = 0.5 * torch.randn(t.shape, generator=g)
        elif name == "decoder.positional_embedding":
            v = 0.3 * torch.randn(t.shape, generator=g)
        else:  # Linear [out, in] and Conv1d [out, in, k]
            fan_in = t[0].numel()
            v = torch.randn(t.shape, generator=g) / math.sqrt(fan_in)
        new[name] = v
    # Plain random rows make the greedy decoder repeat one text token forever. The timestamp
    # rows scaled by 2.5 and the <|endoftext|> row scaled by -3 (found by trying a few) make
    # it emit an initial timestamp, timestamp pairs, text between them and then stop, so the
    # expected sequence exercises every timestamp rule. Only the values change, not the shape.
    emb = new["decoder.token_embedding.weight"]
    ts_begin = dims['n_vocab'] - 1501
    eot = 50257 if dims['n_vocab'] >= 51865 else 50256
    emb[ts_begin:] *= 2.5
    emb[eot] *= -3.0
    model.load_state_dict({k: v.half().float() for k, v in new.items()})
    return model


def hf_config(dims, tok):
    d = dims
    return {
        "_name_or_path": "vidtheque/whisper-test (generated, random weights)",
        "architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper",
        "vocab_size": d['n_vocab'], "num_mel_bins": d['n_mels'], "d_model": d['n_audio_state'],
        "encoder_layers": d['n_audio_layer'], "encoder_attention_heads": d['n_audio_head'],
        "encoder_ffn_dim": 4 * d['n_audio_state'],
        "decoder_layers": d['n_text_layer'], "decoder_attention_heads": d['n_text_head'],
        "decoder_ffn_dim": 4 * d['n_text_state'],
        "max_source_positions": d['n_audio_ctx'], "max_target_positions": d['n_text_ctx'],
        "activation_function": "gelu", "scale_embedding": False, "tie_word_embeddings": True,
        "bos_token_id": tok.eot, "eos_token_id": tok.eot, "pad_token_id": tok.eot,
        "decoder_start_token_id": tok.sot,
        "begin_suppress_tokens": tok.encode(" ") + [tok.eot],
        "suppress_tokens": list(tok.non_speech_tokens()),
        "torch_dtype": "float16", "use_cache": True,
    }


def hf_generation_config(dims, tok, multilingual):
    alignment = [[layer, head] for layer in range(dims['n_text_layer'] // 2, dims['n_text_layer'])
                 for head in range(dims['n_text_head'])]  # model.py's default: the last half
    g = {"alignment_heads": alignment, "begin_suppress_tokens": tok.encode(" ") + [tok.eot],
         "bos_token_id": tok.eot, "eos_token_id": tok.eot, "pad_token_id": tok.eot,
         "decoder_start_token_id": tok.sot, "is_multilingual": multilingual,
         "max_initial_timestamp_index": 50, "max_length": dims['n_text_ctx'],
         "no_timestamps_token_id": tok.no_timestamps, "prev_sot_token_id": tok.sot_prev,
         "suppress_tokens": list(tok.non_speech_tokens())}
    if multilingual:
        g["lang_to_id"] = {"<|%s|>" % lang: tok.special["<|%s|>" % lang] for lang in LANGUAGES[:tok.num_languages]}
        g["task_to_id"] = {"transcribe": tok.transcribe, "translate": tok.translate}
    return g


def dump_json(path, obj):
    """Indented JSON with every list of numbers on one line (small, and diffs stay readable)."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    num = r'-?[0-9.eE+-]+|true|false|null'
    text = re.sub(r'\[\n\s*((?:%s)(?:,\n\s*(?:%s))*)\n\s*\]' % (num, num),
                  lambda m: '[' + ', '.join(x.strip() for x in m.group(1).split(',')) + ']', text)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def cmd_make(out, english, f32dir):
    dims = dict(DIMS, n_vocab=51864 if english else 51865)
    model = make_model(dims, SEED)
    tok = Tokenizer(model.is_multilingual, model.num_languages)
    assert tok.n_vocab == dims['n_vocab'], (tok.n_vocab, dims['n_vocab'])
    tensors = {hf_name(k): v for k, v in model.state_dict().items()}
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, "F16")
    if f32dir:
        os.makedirs(f32dir, exist_ok=True)
        write_safetensors(os.path.join(f32dir, "model.safetensors"), tensors, "F32")
    for d in [out] + ([f32dir] if f32dir else []):
        cfg = hf_config(dims, tok)
        if d == f32dir:
            cfg["torch_dtype"] = "float32"
        dump_json(os.path.join(d, "config.json"), cfg)
        dump_json(os.path.join(d, "generation_config.json"),
                  hf_generation_config(dims, tok, model.is_multilingual))
    print("wrote", out, "(%d tensors)" % len(tensors))


# ------------------------------------------------------------------------- the reference

def load_model(d):
    with open(os.path.join(d, "config.json")) as f:
        c = json.load(f)
    dims = dict(n_mels=c["num_mel_bins"], n_audio_ctx=c["max_source_positions"],
                n_audio_state=c["d_model"], n_audio_head=c["encoder_attention_heads"],
                n_audio_layer=c["encoder_layers"], n_vocab=c["vocab_size"],
                n_text_ctx=c["max_target_positions"], n_text_state=c["d_model"],
                n_text_head=c["decoder_attention_heads"], n_text_layer=c["decoder_layers"])
    model = Whisper(dims)
    st = read_safetensors(os.path.join(d, "model.safetensors"))
    sd = {k: st.pop(hf_name(k)) for k in model.state_dict()}
    assert not st, "unused tensors: %s" % sorted(st)
    model.load_state_dict(sd)
    return model.eval()


def r(x, n=6):
    return [round(float(v), n) for v in x]


def stats(t):
    t = t.double()
    return {"mean": t.mean().item(), "std": t.std().item(), "min": t.min().item(),
            "max": t.max().item(), "sum_abs": t.abs().sum().item()}


def reference(d):
    torch.manual_seed(0)
    model = load_model(d)
    tok = Tokenizer(model.is_multilingual, model.num_languages, language="en" if model.is_multilingual else None)
    n_mels = model.dims['n_mels']
    audio = whisper_mel_ref.load_audio(WAV)
    # transcribe.py: the mel of the audio padded with 30 s of zeros, its content frames, the
    # window [seek, seek + segment_size) zero-padded (pad_or_trim) to 3000 frames
    old = os.getcwd()
    os.chdir(TOP)  # whisper_mel_ref reads its filterbank relative to the top
    try:
        mel = whisper_mel_ref.log_mel_spectrogram(audio, n_mels, padding=N_SAMPLES)
    finally:
        os.chdir(old)
    content_frames = mel.shape[-1] - N_FRAMES
    seek = 0
    segment_size = min(N_FRAMES, content_frames - seek)
    window = F.pad(mel[:, seek:seek + segment_size], (0, N_FRAMES - segment_size))
    with torch.no_grad():
        xa = model.encoder(window[None])
        start = model.decoder(torch.tensor([list(tok.sot_sequence)]), xa)[0]
        lang = detect_language(model, tok, xa) if model.is_multilingual else None
        dec = greedy_decode(model, tok, xa)
    segs, next_seek = segments(tok, dec["tokens"], seek, segment_size, model.dims['n_audio_ctx'])
    enc = xa[0]
    tb = tok.timestamp_begin
    logit_rows = []
    for pos, tid in enumerate(tok.sot_sequence):
        row = start[pos]
        top = torch.topk(row, 20)
        logit_rows.append({
            "position": pos, "input_token": tid,
            "top20_ids": [int(i) for i in top.indices], "top20_values": r(top.values),
            "first64": r(row[:64]), "specials": r(row[tok.eot:tb + 8]),
            "specials_from": tok.eot, "logsumexp": row.logsumexp(-1).item(), **stats(row)})
    return {
        "command": "/usr/bin/python3 tests/tools/whisper_ref.py",
        "made_by": "/usr/bin/python3 tests/tools/whisper_ref.py --make (seed %d)" % SEED,
        "torch": torch.__version__, "numpy": np.__version__,
        "tolerance": {"encoder": 1e-3, "logits": 1e-3, "note": "absolute; tokens identical"},
        "dims": model.dims, "audio": "tests/data/speech/jfk.wav",
        "mel": {"n_mels": n_mels, "content_frames": content_frames, "seek": seek,
                "segment_size": segment_size, "window_frames": N_FRAMES,
                "note": "the window: content frames [seek, seek+segment_size) of "
                        "log_mel_spectrogram(audio, padding=N_SAMPLES), zero-padded to 3000",
                **stats(window)},
        "tokenizer": {"vocabulary": "multilingual" if model.is_multilingual else "gpt2",
                      "eot": tok.eot, "sot": tok.sot, "transcribe": tok.transcribe,
                      "translate": tok.translate, "sot_lm": tok.sot_lm, "sot_prev": tok.sot_prev,
                      "no_speech": tok.no_speech, "no_timestamps": tok.no_timestamps,
                      "timestamp_begin": tb, "sot_sequence": list(tok.sot_sequence),
                      "non_speech_tokens": list(tok.non_speech_tokens())},
        "encoder": {"shape": list(enc.shape), "first_frames": [r(enc[i]) for i in range(8)],
                    "frame_1499": r(enc[-1]),
                    "frame_l2": r(enc.norm(dim=-1), 5), **stats(enc)},
        "start_logits": logit_rows,
        "detect_language": lang,
        "greedy": dec,
        "text_with_timestamps": tok.decode_with_timestamps(dec["tokens"]),
        "segments": segs, "next_seek": next_seek,
    }


TRANSCRIBE_PROMPT = "Kennedy, Apollo."


def reference_transcribe(d):
    """transcribe.py over jfk.wav repeated 6 times back to back (66 s: several windows),
    temperature (0.0,), condition_on_previous_text, once without and once with an
    initial_prompt."""
    torch.manual_seed(0)
    model = load_model(d)
    tok = Tokenizer(model.is_multilingual, model.num_languages,
                    language="en" if model.is_multilingual else None)
    audio = whisper_mel_ref.load_audio(WAV)
    audio = np.concatenate([audio] * 6) if isinstance(audio, np.ndarray) else torch.cat([audio] * 6)
    runs = [transcribe(model, tok, audio), transcribe(model, tok, audio, TRANSCRIBE_PROMPT)]
    return {
        "command": "/usr/bin/python3 tests/tools/whisper_ref.py --transcribe",
        "audio": "tests/data/speech/jfk.wav repeated 6 times back to back",
        "samples": int(audio.shape[-1]), "language": tok.language,
        "options": {"temperature": [0.0], "compression_ratio_threshold": 2.4,
                    "logprob_threshold": -1.0, "no_speech_threshold": 0.6,
                    "condition_on_previous_text": True, "word_timestamps": False,
                    "max_initial_timestamp": 1.0, "sample_len": 224},
        "runs": runs,
    }


def main():
    args = sys.argv[1:]
    torch.set_num_threads(1)
    d = args[args.index("--dir") + 1] if "--dir" in args else OUT
    if "--make" in args:
        f32 = args[args.index("--f32") + 1] if "--f32" in args else None
        cmd_make(d, "--en" in args, f32)
        return
    if "--transcribe" in args:
        path = os.path.join(d, "expected-transcribe.json")
        a = reference_transcribe(d)
        if "--check" in args:
            assert a == reference_transcribe(d), "two runs differ"
            with open(path) as f:
                assert json.loads(json.dumps(a)) == json.load(f), "differs from " + path
            print("ok: two runs identical and equal to", path)
            return
        dump_json(path, a)
        for run in a["runs"]:
            print("prompt", run["initial_prompt"], "seeks", run["seeks"])
            for sgm in run["segments"]:
                print(" %7.2f %7.2f %r" % (sgm["start"], sgm["end"], sgm["text"]))
        return
    if "--check" in args:
        a, b = reference(d), reference(d)
        assert a == b, "two runs differ"
        with open(os.path.join(d, "expected.json")) as f:
            committed = json.load(f)
        assert json.loads(json.dumps(a)) == committed, "differs from the committed expected.json"
        print("ok: two runs identical and equal to", os.path.join(d, "expected.json"))
        return
    res = reference(d)
    dump_json(os.path.join(d, "expected.json"), res)
    print(json.dumps({k: res[k] for k in ("detect_language", "text_with_timestamps", "segments",
                                          "next_seek")}, indent=1, ensure_ascii=False))
    print("tokens:", res["greedy"]["tokens"])
    print("no_speech_prob", res["greedy"]["no_speech_prob"], "avg_logprob",
          res["greedy"]["avg_logprob"], "min margin",
          min(s["margin"] for s in res["greedy"]["steps"]))


if __name__ == "__main__":
    main()
