#!/usr/bin/python3
"""The reference for Whisper's word timings (issue 23; lib/speech/whisper_align.h).

openai/whisper's timing.py (median_filter, dtw_cpu, backtrace, find_alignment,
merge_punctuations, add_word_timestamps) and tokenizer.py's split_to_word_tokens, copied
from release 20250625 (c0d2f624; MIT licence, Copyright (c) 2022 OpenAI, see
tests/data/whisper-assets/LICENSE-openai-whisper) with only these changes: no numba (the
same loops in plain Python), no CUDA paths, the model and tokenizer are whisper_ref.py's,
and find_alignment is cut in two at the forward pass (find_alignment_qk takes the heads'
q.k and the text tokens' probabilities) so that the steps after it can be fed synthetic
inputs. Needs Debian's PyTorch and NumPy (/usr/bin/python3); make check never runs it.

From the top of the tree:
  /usr/bin/python3 tests/tools/whisper_align_ref.py
      runs the test checkpoint (tests/data/whisper-test) on the first window of
      tests/data/speech/jfk.wav, decodes it greedily again (whisper_ref.greedy_decode, checked
      equal to expected.json's segments), aligns the words and writes
      tests/data/whisper-test/expected-align.json and align-qk.f32 (the alignment heads' q.k
      over the window's content positions, float32 [heads][tokens][positions]).
  /usr/bin/python3 tests/tools/whisper_align_ref.py --check
      computes everything again and compares with the committed files.
  /usr/bin/python3 tests/tools/whisper_align_ref.py --transcribe [--check]
      transcribe.py with word_timestamps True (whisper_ref.transcribe's loop with
      add_word_timestamps) over jfk.wav six times, without and with an initial prompt:
      writes (or checks) tests/data/whisper-test/expected-transcribe-words.json.
"""
import itertools
import json
import os
import string
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import whisper_mel_ref  # noqa: E402
import whisper_ref  # noqa: E402

HOP_LENGTH, SAMPLE_RATE, TOKENS_PER_SECOND = 160, 16000, 50
OUT = whisper_ref.OUT


# ------------------------------------------------------------------- tokenizer.py (copied)

class Tokenizer(whisper_ref.Tokenizer):
    def split_to_word_tokens(self, tokens):
        if self.language in {"zh", "ja", "th", "lo", "my", "yue"}:
            # These languages don't typically use spaces, so it is difficult to split words
            # without morpheme analysis. Here, we instead split words at any
            # position where the tokens are decoded as valid unicode points
            return self.split_tokens_on_unicode(tokens)

        return self.split_tokens_on_spaces(tokens)

    def split_tokens_on_unicode(self, tokens):
        decoded_full = self.decode_with_timestamps(tokens)
        replacement_char = "\ufffd"

        words = []
        word_tokens = []
        current_tokens = []
        unicode_offset = 0

        for token in tokens:
            current_tokens.append(token)
            decoded = self.decode_with_timestamps(current_tokens)

            if (
                replacement_char not in decoded
                or decoded_full[unicode_offset + decoded.index(replacement_char)]
                == replacement_char
            ):
                words.append(decoded)
                word_tokens.append(current_tokens)
                current_tokens = []
                unicode_offset += len(decoded)

        return words, word_tokens

    def split_tokens_on_spaces(self, tokens):
        subwords, subword_tokens_list = self.split_tokens_on_unicode(tokens)
        words = []
        word_tokens = []

        for subword, subword_tokens in zip(subwords, subword_tokens_list):
            special = subword_tokens[0] >= self.eot
            with_space = subword.startswith(" ")
            punctuation = subword.strip() in string.punctuation
            if special or with_space or punctuation or len(words) == 0:
                words.append(subword)
                word_tokens.append(subword_tokens)
            else:
                words[-1] = words[-1] + subword
                word_tokens[-1].extend(subword_tokens)

        return words, word_tokens


# ---------------------------------------------------------------------- timing.py (copied)

def median_filter(x: torch.Tensor, filter_width: int):
    """Apply a median filter of width `filter_width` along the last dimension of `x`"""
    pad_width = filter_width // 2
    if x.shape[-1] <= pad_width:
        # F.pad requires the padding width to be smaller than the input dimension
        return x

    if (ndim := x.ndim) <= 2:
        # `F.pad` does not support 1D or 2D inputs for reflect padding but supports 3D and 4D
        x = x[None, None, :]

    assert (
        filter_width > 0 and filter_width % 2 == 1
    ), "`filter_width` should be an odd number"

    x = F.pad(x, (filter_width // 2, filter_width // 2, 0, 0), mode="reflect")
    # sort() is faster than torch.median (https://github.com/pytorch/pytorch/issues/51450)
    result = x.unfold(-1, filter_width, 1).sort()[0][..., filter_width // 2]

    if ndim <= 2:
        result = result[0, 0]

    return result


def backtrace(trace: np.ndarray):
    i = trace.shape[0] - 1
    j = trace.shape[1] - 1
    trace[0, :] = 2
    trace[:, 0] = 1

    result = []
    while i > 0 or j > 0:
        result.append((i - 1, j - 1))

        if trace[i, j] == 0:
            i -= 1
            j -= 1
        elif trace[i, j] == 1:
            i -= 1
        elif trace[i, j] == 2:
            j -= 1
        else:
            raise ValueError("Unexpected trace[i, j]")

    result = np.array(result)
    return result[::-1, :].T


def dtw_cpu(x: np.ndarray):
    N, M = x.shape
    cost = np.ones((N + 1, M + 1), dtype=np.float32) * np.inf
    trace = -np.ones((N + 1, M + 1), dtype=np.float32)

    cost[0, 0] = 0
    for j in range(1, M + 1):
        for i in range(1, N + 1):
            c0 = cost[i - 1, j - 1]
            c1 = cost[i - 1, j]
            c2 = cost[i, j - 1]

            if c0 < c1 and c0 < c2:
                c, t = c0, 0
            elif c1 < c0 and c1 < c2:
                c, t = c1, 1
            else:
                c, t = c2, 2

            # numba adds the float32 c to the float64 x in float64 (numpy scalars would
            # stay float32 when c is a numpy float32 scalar: make the promotion explicit)
            cost[i, j] = float(x[i - 1, j - 1]) + float(c)
            trace[i, j] = t

    return backtrace(trace)


def dtw(x: torch.Tensor) -> np.ndarray:
    return dtw_cpu(x.double().cpu().numpy())


class WordTiming:
    def __init__(self, word, tokens, start, end, probability):
        self.word, self.tokens, self.start, self.end = word, tokens, start, end
        self.probability = probability


def forward_qk(model, tokenizer, alignment_heads, text_tokens, mel):
    """find_alignment's forward pass: the alignment heads' q.k ([heads][tokens][frames])
    and the text tokens' probabilities."""
    tokens = torch.tensor(
        [
            *tokenizer.sot_sequence,
            tokenizer.no_timestamps,
            *text_tokens,
            tokenizer.eot,
        ]
    )

    # install hooks on the cross attention layers to retrieve the attention weights
    QKs = [None] * model.dims['n_text_layer']
    hooks = [
        block.cross_attn.register_forward_hook(
            lambda _, ins, outs, index=i: QKs.__setitem__(index, outs[-1][0])
        )
        for i, block in enumerate(model.decoder.blocks)
    ]

    with torch.no_grad():
        logits = model.decoder(tokens.unsqueeze(0), model.encoder(mel.unsqueeze(0)))[0]
        sampled_logits = logits[len(tokenizer.sot_sequence):, : tokenizer.eot]
        token_probs = sampled_logits.softmax(dim=-1)
        text_token_probs = token_probs[np.arange(len(text_tokens)), text_tokens]
        text_token_probs = text_token_probs.tolist()

    for hook in hooks:
        hook.remove()

    # heads * tokens * frames
    weights = torch.stack([QKs[_l][_h] for _l, _h in alignment_heads])
    return weights, text_token_probs


def find_alignment_qk(tokenizer, text_tokens, weights, text_token_probs, num_frames, *,
                      medfilt_width=7, qk_scale=1.0, trace=None):
    """find_alignment past the forward pass; trace (a dict) gets the matrix and the path."""
    if len(text_tokens) == 0:
        return []
    weights = weights[:, :, : num_frames // 2]
    weights = (weights * qk_scale).softmax(dim=-1)
    std, mean = torch.std_mean(weights, dim=-2, keepdim=True, unbiased=False)
    weights = (weights - mean) / std
    weights = median_filter(weights, medfilt_width)

    matrix = weights.mean(axis=0)
    matrix = matrix[len(tokenizer.sot_sequence): -1]
    text_indices, time_indices = dtw(-matrix)
    if trace is not None:
        trace.update(matrix=matrix, text_indices=text_indices, time_indices=time_indices)

    words, word_tokens = tokenizer.split_to_word_tokens(text_tokens + [tokenizer.eot])
    if len(word_tokens) <= 1:
        # return on eot only
        # >>> np.pad([], (1, 0))
        # array([0.])
        # This results in crashes when we lookup jump_times with float, like
        # IndexError: arrays used as indices must be of integer (or boolean) type
        return []
    word_boundaries = np.pad(np.cumsum([len(t) for t in word_tokens[:-1]]), (1, 0))

    jumps = np.pad(np.diff(text_indices), (1, 0), constant_values=1).astype(bool)
    jump_times = time_indices[jumps] / TOKENS_PER_SECOND
    start_times = jump_times[word_boundaries[:-1]]
    end_times = jump_times[word_boundaries[1:]]
    word_probabilities = [
        np.mean(text_token_probs[i:j])
        for i, j in zip(word_boundaries[:-1], word_boundaries[1:])
    ]

    return [
        WordTiming(word, tokens, start, end, probability)
        for word, tokens, start, end, probability in zip(
            words, word_tokens, start_times, end_times, word_probabilities
        )
    ]


def merge_punctuations(alignment, prepended: str, appended: str):
    # merge prepended punctuations
    i = len(alignment) - 2
    j = len(alignment) - 1
    while i >= 0:
        previous = alignment[i]
        following = alignment[j]
        if previous.word.startswith(" ") and previous.word.strip() in prepended:
            # prepend it to the following word
            following.word = previous.word + following.word
            following.tokens = previous.tokens + following.tokens
            previous.word = ""
            previous.tokens = []
        else:
            j = i
        i -= 1

    # merge appended punctuations
    i = 0
    j = 1
    while j < len(alignment):
        previous = alignment[i]
        following = alignment[j]
        if not previous.word.endswith(" ") and following.word in appended:
            # append it to the previous word
            previous.word = previous.word + following.word
            previous.tokens = previous.tokens + following.tokens
            following.word = ""
            following.tokens = []
        else:
            i = j
        j += 1


def add_word_timestamps(*, segments, tokenizer, align, prepend_punctuations="\"'“¿([{-",
                        append_punctuations="\"'.。,，!！?？:：”)]}、", last_speech_timestamp):
    """align(text_tokens) stands for find_alignment(model, tokenizer, text_tokens, mel,
    num_frames)."""
    if len(segments) == 0:
        return

    text_tokens_per_segment = [
        [token for token in segment["tokens"] if token < tokenizer.eot]
        for segment in segments
    ]

    text_tokens = list(itertools.chain.from_iterable(text_tokens_per_segment))
    alignment = align(text_tokens)
    word_durations = np.array([t.end - t.start for t in alignment])
    word_durations = word_durations[word_durations.nonzero()]
    median_duration = np.median(word_durations) if len(word_durations) > 0 else 0.0
    median_duration = min(0.7, float(median_duration))
    max_duration = median_duration * 2

    # hack: truncate long words at sentence boundaries.
    # a better segmentation algorithm based on VAD should be able to replace this.
    if len(word_durations) > 0:
        sentence_end_marks = ".。!！?？"
        # ensure words at sentence boundaries are not longer than twice the median word duration.
        for i in range(1, len(alignment)):
            if alignment[i].end - alignment[i].start > max_duration:
                if alignment[i].word in sentence_end_marks:
                    alignment[i].end = alignment[i].start + max_duration
                elif alignment[i - 1].word in sentence_end_marks:
                    alignment[i].start = alignment[i].end - max_duration

    merge_punctuations(alignment, prepend_punctuations, append_punctuations)

    time_offset = segments[0]["seek"] * HOP_LENGTH / SAMPLE_RATE
    word_index = 0

    for segment, text_tokens in zip(segments, text_tokens_per_segment):
        saved_tokens = 0
        words = []

        while word_index < len(alignment) and saved_tokens < len(text_tokens):
            timing = alignment[word_index]

            if timing.word:
                words.append(
                    dict(
                        word=timing.word,
                        start=round(time_offset + timing.start, 2),
                        end=round(time_offset + timing.end, 2),
                        probability=timing.probability,
                    )
                )

            saved_tokens += len(timing.tokens)
            word_index += 1

        # hack: truncate long words at segment boundaries.
        # a better segmentation algorithm based on VAD should be able to replace this.
        if len(words) > 0:
            # ensure the first and second word after a pause is not longer than
            # twice the median word duration.
            if words[0]["end"] - last_speech_timestamp > median_duration * 4 and (
                words[0]["end"] - words[0]["start"] > max_duration
                or (
                    len(words) > 1
                    and words[1]["end"] - words[0]["start"] > max_duration * 2
                )
            ):
                if (
                    len(words) > 1
                    and words[1]["end"] - words[1]["start"] > max_duration
                ):
                    boundary = max(words[1]["end"] / 2, words[1]["end"] - max_duration)
                    words[0]["end"] = words[1]["start"] = boundary
                words[0]["start"] = max(0, words[0]["end"] - max_duration)

            # prefer the segment-level start timestamp if the first word is too long.
            if (
                segment["start"] < words[0]["end"]
                and segment["start"] - 0.5 > words[0]["start"]
            ):
                words[0]["start"] = max(
                    0, min(words[0]["end"] - median_duration, segment["start"])
                )
            else:
                segment["start"] = words[0]["start"]

            # prefer the segment-level end timestamp if the last word is too long.
            if (
                segment["end"] > words[-1]["start"]
                and segment["end"] + 0.5 < words[-1]["end"]
            ):
                words[-1]["end"] = max(
                    words[-1]["start"] + median_duration, segment["end"]
                )
            else:
                segment["end"] = words[-1]["end"]

            last_speech_timestamp = segment["end"]

        segment["words"] = words


# --------------------------------------------------------------------------- the reference

def words_of(alignment):
    return [{"word": t.word, "tokens": [int(x) for x in t.tokens], "start": float(t.start),
             "end": float(t.end), "probability": float(t.probability)} for t in alignment]


def align_case(tok, segs, seek, weights, probs, num_frames, trace=None):
    """add_word_timestamps on segs (dicts with start, end, tokens), last_speech_timestamp the
    window's start (what the C tests pass as last_speech); returns (find_alignment's words, segments)."""
    segs = [{"seek": seek, "start": s["start"], "end": s["end"], "tokens": list(s["tokens"])}
            for s in segs]
    raw = []

    def align(text_tokens):
        a = find_alignment_qk(tok, text_tokens, weights, probs, num_frames, trace=trace)
        raw.extend(words_of(a))
        return a

    add_word_timestamps(segments=segs, tokenizer=tok, align=align,
                        last_speech_timestamp=seek * HOP_LENGTH / SAMPLE_RATE)
    out = [{"start": s["start"], "end": s["end"],
            "words": [{"word": w["word"], "start": float(w["start"]), "end": float(w["end"]),
                       "probability": float(w["probability"])} for w in s["words"]]}
           for s in segs]
    return raw, out


def f32(t):
    """float32 values as their shortest repr: a C float read from the double is the same."""
    return [float(str(v)) for v in t.float().numpy()]


def synthetic_qk(g, n_heads, n_tok, n_frames):
    """q.k with a diagonal (token t attends near frame t * n_frames / n_tok) and noise, so
    that the path and the heuristics see plausible words."""
    t = torch.arange(n_tok, dtype=torch.float32)[:, None]
    f = torch.arange(n_frames, dtype=torch.float32)[None, :]
    centre = (t + 0.5) * n_frames / max(n_tok, 1)
    base = -((f - centre) ** 2) / (2.0 * (n_frames / max(n_tok, 1)) ** 2 + 1.0)
    return (base[None] + torch.randn(n_heads, n_tok, n_frames, generator=g) * 1.5).float()


def pipeline_cases(g):
    cases = []
    specs = [
        ("en", [" Ask not what your country can do for you,",
                " ask what you can do for your country."], 1234, 160),
        ("en", [" \"Hello,\" she said (quietly) - ¿Qué? ¡Sí! [laughs] don't-stop...",
                " “Quoted” words: end. Next!"], 0, 200),
        ("zh", ["你好，世界。", "我们走吧！好的。"], 300, 100),
        ("ja", [" こんにちは、世界！"], 0, 60),
        ("en", [" party 🎉🎉 time", "...", " ?!"], 50, 100),
        ("en", [" tiny window", " two"], 0, 6),
        ("en", [" one frame"], 0, 2),
        ("en", [" no frames"], 0, 1),
        ("en", [".", " !", "?"], 0, 40),
    ]
    for lang, texts, seek, num_frames in specs:
        tok = Tokenizer(True, 99, language=lang)
        tb = tok.timestamp_begin
        segs, at = [], 0
        for i, text in enumerate(texts):
            ids = tok.encode(text)
            a, b = at, at + 40 + 13 * i
            segs.append({"start": round(seek / 100 + a * 0.02, 2),
                         "end": round(seek / 100 + b * 0.02, 2),
                         "tokens": [tb + a] + ids + [tb + b]})
            at = b
        text_tokens = [t for s in segs for t in s["tokens"] if t < tok.eot]
        n_tok = len(tok.sot_sequence) + len(text_tokens) + 2
        m = num_frames // 2
        weights = synthetic_qk(g, 2, n_tok, m)
        probs = f32(torch.rand(len(text_tokens), generator=g))
        raw, out = align_case(tok, segs, seek, weights, probs, num_frames)
        cases.append({"language": lang, "sot_sequence": list(tok.sot_sequence), "seek": seek,
                      "t0": seek * HOP_LENGTH / SAMPLE_RATE, "num_frames": num_frames,
                      "segments_in": segs, "n_heads": 2, "n_tok": n_tok, "n_frames": m,
                      "qk": f32(weights.flatten()), "probs": probs,
                      "alignment": raw, "segments": out})
    return cases


def synthetic(seed=23):
    g = torch.Generator().manual_seed(seed)
    med = []
    for n in (1, 3, 4, 5, 7, 10, 31):
        x = torch.randn(n, generator=g).float()
        if n >= 10:
            x = (x * 2).round() / 2  # ties
        med.append({"x": f32(x), "width": 7, "out": f32(median_filter(x, 7))})
    dtws = []
    for n, m, ties in ((1, 1, 0), (1, 5, 0), (5, 1, 0), (3, 7, 0), (12, 40, 0), (20, 30, 0),
                       (9, 25, 1), (15, 15, 1)):
        x = torch.randn(n, m, generator=g).float()
        if ties:
            x = torch.randint(0, 3, (n, m), generator=g).float()
        ti, tj = dtw(x)
        dtws.append({"n": n, "m": m, "x": f32(x.flatten()),
                     "text_indices": [int(v) for v in ti], "time_indices": [int(v) for v in tj]})
    return {"median": med, "dtw": dtws, "pipeline": pipeline_cases(g)}


def window(model):
    audio = whisper_mel_ref.load_audio(whisper_ref.WAV)
    old = os.getcwd()
    os.chdir(whisper_ref.TOP)
    try:
        mel = whisper_mel_ref.log_mel_spectrogram(audio, model.dims['n_mels'],
                                                  padding=whisper_ref.N_SAMPLES)
    finally:
        os.chdir(old)
    content_frames = mel.shape[-1] - whisper_ref.N_FRAMES
    segment_size = min(whisper_ref.N_FRAMES, content_frames)
    return F.pad(mel[:, :segment_size], (0, whisper_ref.N_FRAMES - segment_size)), segment_size


def reference(d):
    torch.manual_seed(0)
    model = whisper_ref.load_model(d)
    tok = Tokenizer(model.is_multilingual, model.num_languages, language="en")
    with open(os.path.join(d, "generation_config.json")) as f:
        heads = json.load(f)["alignment_heads"]
    with open(os.path.join(d, "expected.json")) as f:
        expected = json.load(f)
    mel, num_frames = window(model)
    with torch.no_grad():
        dec = whisper_ref.greedy_decode(model, tok, model.encoder(mel[None]))
    segs, _ = whisper_ref.segments(tok, dec["tokens"], 0, num_frames)
    assert segs == expected["segments"], "the greedy segments differ from expected.json's"
    text_tokens = [t for s in segs for t in s["tokens"] if t < tok.eot]
    weights, probs = forward_qk(model, tok, heads, text_tokens, mel)
    m = num_frames // 2
    qk = weights[:, :, :m].contiguous().float()
    trace = {}
    raw, out = align_case(tok, segs, 0, weights, probs, num_frames, trace)
    matrix = trace["matrix"]
    res = {
        "command": "/usr/bin/python3 tests/tools/whisper_align_ref.py",
        "upstream": "openai/whisper 20250625 (c0d2f624): timing.py, tokenizer.py",
        "tolerance": {"times": 1e-6, "probability": 1e-3, "matrix": 1e-3},
        "sot_sequence": list(tok.sot_sequence), "no_timestamps": tok.no_timestamps,
        "eot": tok.eot, "alignment_heads": heads, "num_frames": num_frames, "t0": 0.0,
        "segments_in": [{"start": s["start"], "end": s["end"], "tokens": s["tokens"]}
                        for s in segs],
        "text_tokens": text_tokens, "token_probs": probs,
        "qk": {"file": "align-qk.f32", "shape": list(qk.shape),
               "note": "float32 [heads][tokens][positions]: sot, notimestamps, text, eot; "
                       "the first num_frames // 2 positions"},
        "matrix": {"shape": list(matrix.shape),
                   "rows": {str(i): [round(float(v), 6) for v in matrix[i]]
                            for i in (0, 1, matrix.shape[0] - 1)},
                   **whisper_ref.stats(matrix)},
        "text_indices": [int(v) for v in trace["text_indices"]],
        "time_indices": [int(v) for v in trace["time_indices"]],
        "alignment": raw, "segments": out,
        "synthetic": synthetic(),
    }
    return res, qk.numpy().astype("<f4").tobytes()


def reference_transcribe_words(d):
    """transcribe.py with word_timestamps True over the 66 s of expected-transcribe.json
    (jfk.wav six times), without and with its initial prompt: whisper_ref.transcribe's loop
    with add_word_timestamps and find_alignment (forward_qk on the window's padded mel,
    then find_alignment_qk) as transcribe.py calls them."""
    torch.manual_seed(0)
    model = whisper_ref.load_model(d)
    tok = Tokenizer(model.is_multilingual, model.num_languages,
                    language="en" if model.is_multilingual else None)
    with open(os.path.join(d, "generation_config.json")) as f:
        heads = json.load(f)["alignment_heads"]
    audio = whisper_mel_ref.load_audio(whisper_ref.WAV)
    audio = np.concatenate([audio] * 6)

    def add_words(segments, mel, num_frames, last_speech_timestamp):
        def align(text_tokens):
            if len(text_tokens) == 0:  # find_alignment returns before the forward pass
                return []
            weights, probs = forward_qk(model, tok, heads, text_tokens, mel)
            return find_alignment_qk(tok, text_tokens, weights, probs, num_frames)
        add_word_timestamps(segments=segments, tokenizer=tok, align=align,
                            last_speech_timestamp=last_speech_timestamp)
        for s in segments:  # plain floats (np.float64 and np.mean's values otherwise)
            s["start"], s["end"] = float(s["start"]), float(s["end"])
            s["words"] = [{"word": w["word"], "start": float(w["start"]),
                           "end": float(w["end"]), "probability": float(w["probability"])}
                          for w in s["words"]]

    runs = [whisper_ref.transcribe(model, tok, audio, prompt, add_words=add_words)
            for prompt in (None, whisper_ref.TRANSCRIBE_PROMPT)]
    return {
        "command": "/usr/bin/python3 tests/tools/whisper_align_ref.py --transcribe",
        "upstream": "openai/whisper 20250625 (c0d2f624): transcribe.py, timing.py",
        "audio": "tests/data/speech/jfk.wav repeated 6 times back to back",
        "samples": int(audio.shape[-1]), "language": tok.language,
        "options": {"temperature": [0.0], "compression_ratio_threshold": 2.4,
                    "logprob_threshold": -1.0, "no_speech_threshold": 0.6,
                    "condition_on_previous_text": True, "word_timestamps": True,
                    "prepend_punctuations": "\"'“¿([{-",
                    "append_punctuations": "\"'.。,，!！?？:：”)]}、",
                    "max_initial_timestamp": 1.0, "sample_len": 224},
        "tolerance": {"times": 1e-6, "probability": 1e-3, "note": "tokens, text, seeks identical"},
        "alignment_heads": heads,
        "runs": runs,
    }


def main_transcribe(d, check):
    path = os.path.join(d, "expected-transcribe-words.json")
    a = reference_transcribe_words(d)
    if check:
        assert a == reference_transcribe_words(d), "two runs differ"
        with open(path) as f:
            assert json.loads(json.dumps(a)) == json.load(f), "differs from " + path
        print("ok: two runs identical and equal to", path)
        return
    whisper_ref.dump_json(path, a)
    for run in a["runs"]:
        print("prompt", run["initial_prompt"], "seeks", run["seeks"])
        for sgm in run["segments"]:
            print(" %7.2f %7.2f %r %s" % (sgm["start"], sgm["end"], sgm["text"],
                                          [(w["word"], w["start"], w["end"]) for w in sgm["words"]]))


def main():
    torch.set_num_threads(1)
    d = OUT
    if "--transcribe" in sys.argv[1:]:
        main_transcribe(d, "--check" in sys.argv[1:])
        return
    res, qk = reference(d)
    path = os.path.join(d, "expected-align.json")
    if "--check" in sys.argv[1:]:
        with open(path) as f:
            committed = json.load(f)
        with open(os.path.join(d, "align-qk.f32"), "rb") as f:
            assert f.read() == qk, "align-qk.f32 differs"
        assert json.loads(json.dumps(res)) == committed, "differs from " + path
        print("ok: equal to", path, "and align-qk.f32")
        return
    whisper_ref.dump_json(path, res)
    with open(os.path.join(d, "align-qk.f32"), "wb") as f:
        f.write(qk)
    for s in res["segments"]:
        print(s["start"], s["end"], [(w["word"], w["start"], w["end"],
                                      round(w["probability"], 4)) for w in s["words"]])


if __name__ == "__main__":
    main()
