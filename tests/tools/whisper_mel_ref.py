#!/usr/bin/python3
"""The reference for Whisper's log-mel front end (lib/speech/whisper_mel.c).

Computes log_mel_spectrogram of tests/data/speech/jfk.wav as openai/whisper's audio.py does
it, with PyTorch's torch.stft, and writes the expected values the unit tests
(tests/unit/test_whisper_mel.c) compare against into tests/data/whisper-mel/. Needs Debian's
PyTorch and NumPy (apt-get install python3-torch python3-numpy); make check never runs it.

Regenerate, from the top of the tree:
    /usr/bin/python3 tests/tools/whisper_mel_ref.py
Time one 30 s window on one core (PyTorch's own speed, for the benchmark):
    /usr/bin/python3 tests/tools/whisper_mel_ref.py --bench

Files (float32 little-endian, no header, [n_mels][frames] row-major; shapes in
expected.json):
  jfk-mel80.f32       80 bins, as transcribe computes it: log_mel_spectrogram(audio, 80,
                      padding=N_SAMPLES), its content frames (mel.shape[-1] - N_FRAMES = 1100)
  jfk-mel128-head.f32 128 bins, log_mel_spectrogram(audio, 128) (no padding: the reflection
                      at both ends), frames 0 to 299 (3 s)
  jfk-mel128-tail.f32 the same spectrogram's last 20 frames
"""
import json
import os
import sys
import time
import wave

import numpy as np
import torch
import torch.nn.functional as F

# audio.py's constants
SAMPLE_RATE = 16000
N_FFT = 400
HOP_LENGTH = 160
N_SAMPLES = 30 * SAMPLE_RATE
N_FRAMES = N_SAMPLES // HOP_LENGTH

WAV = "tests/data/speech/jfk.wav"
NPZ = "tests/data/whisper-assets/mel_filters.npz"
OUT = "tests/data/whisper-mel"


def load_audio(path):
    """16 kHz mono 16-bit PCM as float32 in [-1, 1), as audio.py's load_audio (ffmpeg s16le / 32768)."""
    with wave.open(path) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, SAMPLE_RATE)
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return pcm.astype(np.float32) / 32768.0


def mel_filters(n_mels):
    with np.load(NPZ, allow_pickle=False) as f:
        return torch.from_numpy(f[f"mel_{n_mels}"])


def log_mel_spectrogram(audio, n_mels, padding=0):
    """audio.py's log_mel_spectrogram, step for step."""
    audio = torch.from_numpy(audio)
    if padding > 0:
        audio = F.pad(audio, (0, padding))
    window = torch.hann_window(N_FFT)
    stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    mel_spec = mel_filters(n_mels) @ magnitudes
    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


def pad_or_trim(audio, length=N_SAMPLES):
    return audio[:length] if len(audio) >= length else np.pad(audio, (0, length - len(audio)))


def write(name, arr):
    arr = np.ascontiguousarray(arr.numpy(), dtype="<f4")
    arr.tofile(os.path.join(OUT, name))
    return {"file": name, "shape": list(arr.shape)}


def bench(audio):
    torch.set_num_threads(1)
    clip = pad_or_trim(audio)
    for n_mels in (80, 128):
        log_mel_spectrogram(clip, n_mels)
        runs = 20
        t0 = time.perf_counter()
        for _ in range(runs):
            log_mel_spectrogram(clip, n_mels)
        ms = (time.perf_counter() - t0) / runs * 1000
        print(f"pytorch {torch.__version__} log_mel_spectrogram(pad_or_trim(audio), {n_mels}), "
              f"one 30 s window, 1 thread: {ms:.2f} ms")


def main():
    audio = load_audio(WAV)
    if "--bench" in sys.argv:
        bench(audio)
        return
    os.makedirs(OUT, exist_ok=True)
    mel80 = log_mel_spectrogram(audio, 80, padding=N_SAMPLES)
    content = mel80.shape[-1] - N_FRAMES
    mel128 = log_mel_spectrogram(audio, 128)
    meta = {
        "command": "/usr/bin/python3 tests/tools/whisper_mel_ref.py",
        "torch": torch.__version__,
        "numpy": np.__version__,
        "audio": WAV,
        "samples": len(audio),
        "mel80": dict(write("jfk-mel80.f32", mel80[:, :content]), padding=N_SAMPLES,
                      frames=[0, content], total_frames=mel80.shape[-1]),
        "mel128_head": dict(write("jfk-mel128-head.f32", mel128[:, :300]), padding=0,
                            frames=[0, 300], total_frames=mel128.shape[-1]),
        "mel128_tail": dict(write("jfk-mel128-tail.f32", mel128[:, -20:]), padding=0,
                            frames=[mel128.shape[-1] - 20, mel128.shape[-1]],
                            total_frames=mel128.shape[-1]),
    }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
