#!/usr/bin/env python3
"""A fake OpenAI-compatible server on 127.0.0.1 for the embeddings and transcription
clients' tests and benchmark (python3 standard library only; never any other address).

  fake_openai.py --port-file F [--mode-file M] [--dim D] [--vectors V] [--speech S]
                 [--delay-ms MS] [--stats-file J] [--model NAME] [--api-key K]

Listens on a free port (written to F once listening). Each request reads the mode file M
(when given; missing or empty: "ok"), one line "MODE [ARG]"; a new content restarts the
request counter that "fail500 N" uses.

POST /v1/embeddings {"model", "input": [texts]}: the vector of a text is
  v[j] = (sha256((text + "#" + str(j // 32)).encode())[j % 32] - 127.5) / 127.5, j < D
(not normalised: the client's caller normalises), or the one given for that text in V
(a JSON object {text: [numbers]}). The answer lists the items in REVERSE order, each
with its "index", so a client that ignores the index gets them wrong. The model must be
the one given by --model (default "fake-embed"), else 404 {"error": {"message"}}.

Images (CLIP-class servers) on the same route, in either request shape:
  Infinity / OpenAI-compatible: {"model", "input": ["data:image/jpeg;base64,..."],
    "modality": "image"} (with "modality": "image" every item must be such a data URL,
    else 400; without it, strings are texts, as Infinity reads them)
  Jina: {"model", "input": [{"image": "<base64 or data URL>"}, {"text": "..."}]}
An image must be a whole JPEG (FFD8 ... FFD9, with a SOF marker), else 400. Its vector
is that of the text "image:WxH" (W x H its size read from the SOF marker: so a test knows
what each of its pictures becomes, and sees how the client scaled it), from V as well:
V may map "image:WxH" to a vector, and a text to one close to it. --received-file R gets
one line "image WxH BYTES" or "text TEXT" per input received, in order.

POST /v1/audio/transcriptions (multipart: file = a 16 kHz mono 16-bit WAV, model,
response_format, timestamp_granularities[], language): S is a JSON file
  {"sources": [{"pcm": "/path/16k-mono-s16.wav or raw", "words": [["And", 0.32, 0.6], ...]}]}
with every word's time in that source. The request's audio is looked up byte for byte in
the sources' samples (half a second from its middle; so the test's media must carry them
losslessly, and the source is best the media's whole audio track); the words whose
middle falls inside it are returned with times relative to the request's audio, as
verbose_json with "segments" (one per run of words without a 1 s gap) and top-level
"words". Audio found in no source gets 400 "unknown audio".

Modes: ok; slow [S] (sleep S seconds, default 30, before answering); fail500 [N] (500 for
the first N requests, default 2, then ok); truncated (half of the JSON); garbage (not
JSON); wrongdim (embeddings: inputs other than the clients' probes, the text "hello" and
a 32x32 image, get D+1 dimensions); notext (embeddings: any text input gets 400, as from
an image-only model); wrongcount
(embeddings with more than one text: the last item missing); notfound (404 model not
found); badtimes (transcription: the last word ends 60 s after the audio); segwords
(transcription: words inside each segment, as whisper.cpp and faster-whisper put them,
no top-level "words"); nowords (transcription: segments only); 429 (429 with
Retry-After: 1 once, then ok); huge (a 5 MB JSON answer).

--arrivals-file A gets one line "POST PATH" per request as it arrives (before any mode's
delay: a test counts the requests a client made to a server that never answers).
--dump-dir D keeps the last audio received as D/last.wav, the last image as D/last.jpg.
With --api-key, a request without "Authorization: Bearer K" gets 401.
--delay-ms adds a fixed delay to every transcription request; --stats-file gets, after
each request, {"requests": n, "busy_s": seconds during which at least one request was
being served, "served_s": the sum of the requests' own times, "first_at" and "last_at":
the wall-clock times (epoch s) the first request arrived and the last answer was sent}.
"""
import argparse
import base64
import binascii
import hashlib
import json
import os
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
STATE = {"mode_text": None, "count": 0, "requests": 0, "active": 0, "busy_since": 0.0,
         "busy_s": 0.0, "served_s": 0.0, "sent429": False, "first_at": 0.0, "last_at": 0.0}
SOURCES = []
VECTORS = {}


def current_mode():
    text = ""
    if ARGS.mode_file:
        try:
            with open(ARGS.mode_file) as f:
                text = f.read().strip()
        except OSError:
            text = ""
    with LOCK:
        if text != STATE["mode_text"]:
            STATE["mode_text"] = text
            STATE["count"] = 0
            STATE["sent429"] = False
        STATE["count"] += 1
        count = STATE["count"]
    parts = text.split()
    return (parts[0] if parts else "ok"), (parts[1] if len(parts) > 1 else None), count


def vector(text, dim):
    if text in VECTORS:
        return VECTORS[text]
    out = []
    for j in range(dim):
        h = hashlib.sha256((text + "#" + str(j // 32)).encode()).digest()
        out.append((h[j % 32] - 127.5) / 127.5)
    return out


def jpeg_size(data):
    """(width, height) of a whole JPEG file, or None."""
    if data[:2] != b"\xff\xd8" or data[-2:] != b"\xff\xd9":
        return None
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        size = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2) and pos + 9 <= len(data):
            h, w = struct.unpack(">HH", data[pos + 5:pos + 9])
            return w, h
        pos += 2 + size
    return None


def image_key(b64):
    """The key "image:WxH" of a base64 JPEG (a data URL or bare) and its size in bytes, or
    None; with --dump-dir, the JPEG is kept as D/last.jpg."""
    if b64.startswith("data:"):
        head, _, b64 = b64.partition(",")
        if not head.startswith("data:image/") or not head.endswith(";base64"):
            return None
    try:
        data = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return None
    size = jpeg_size(data)
    if size and ARGS.dump_dir:
        with open(os.path.join(ARGS.dump_dir, "last.jpg"), "wb") as f:
            f.write(data)
    return ("image:%dx%d" % size, len(data)) if size else None


def wav_pcm(data):
    """The samples of a RIFF WAVE (16-bit PCM) as bytes; raw bytes when not a WAV."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return data
    pos = 12
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if cid == b"data":
            return data[pos + 8:pos + 8 + size]
        pos += 8 + size + (size & 1)
    return b""


def parse_multipart(ctype, body):
    boundary = None
    for p in ctype.split(";"):
        p = p.strip()
        if p.startswith("boundary="):
            boundary = p[9:].strip('"')
    if not boundary:
        return {}
    fields = {}
    for part in body.split(b"--" + boundary.encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, value = part.partition(b"\r\n\r\n")
        value = value[:-2] if value.endswith(b"\r\n") else value
        name = None
        for line in head.decode("latin-1").split("\r\n"):
            if line.lower().startswith("content-disposition"):
                for item in line.split(";"):
                    item = item.strip()
                    if item.startswith("name="):
                        name = item[5:].strip('"')
        if name:
            fields.setdefault(name, []).append(value)
    return fields


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, body, ctype="application/json", extra=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def do_GET(self):
        self.send(404, {"error": {"message": "no such route"}})

    def do_POST(self):
        # the request's time runs from its headers' arrival to the answer's last byte
        t0 = time.monotonic()
        with LOCK:
            if not STATE["first_at"]:
                STATE["first_at"] = time.time()
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        with LOCK:
            STATE["requests"] += 1
            if ARGS.arrivals_file:
                with open(ARGS.arrivals_file, "a") as f:
                    f.write("POST %s\n" % self.path)
            if STATE["active"] == 0:
                STATE["busy_since"] = t0
            STATE["active"] += 1
        try:
            self.route(body)
        finally:
            t1 = time.monotonic()
            with LOCK:
                STATE["active"] -= 1
                STATE["served_s"] += t1 - t0
                STATE["last_at"] = time.time()
                if STATE["active"] == 0:
                    STATE["busy_s"] += t1 - STATE["busy_since"]
                if ARGS.stats_file:
                    tmp = ARGS.stats_file + ".tmp"
                    with open(tmp, "w") as f:
                        json.dump({"requests": STATE["requests"], "busy_s": STATE["busy_s"],
                                   "served_s": STATE["served_s"], "first_at": STATE["first_at"],
                                   "last_at": STATE["last_at"]}, f)
                    os.replace(tmp, ARGS.stats_file)

    def common_faults(self, mode, arg, count):
        """Faults shared by both routes; True when the answer was sent."""
        if mode == "slow":
            time.sleep(float(arg or 30))
        elif mode == "fail500" and count <= int(arg or 2):
            self.send(500, {"error": {"message": "internal trouble %d" % count}})
            return True
        elif mode == "429":
            with LOCK:
                first = not STATE["sent429"]
                STATE["sent429"] = True
            if first:
                self.send(429, {"error": "slow down"}, extra={"Retry-After": "1"})
                return True
        elif mode == "huge":
            self.send(200, '{"pad": "' + "x" * (5 << 20) + '"}')
            return True
        elif mode == "garbage":
            self.send(200, "<html><body>502 bad gateway</body></html>")
            return True
        elif mode == "notfound":
            self.send(404, {"error": {"message": "model \"%s\" not found, try pulling it first"
                                      % ARGS.model}})
            return True
        return False

    def reply(self, mode, obj):
        if mode == "truncated":
            raw = json.dumps(obj)
            self.send(200, raw[:len(raw) // 2])
        else:
            self.send(200, obj)

    def route(self, body):
        mode, arg, count = current_mode()
        if ARGS.api_key and self.headers.get("Authorization") != "Bearer " + ARGS.api_key:
            self.send(401, {"error": {"message": "invalid api key"}})
            return
        if self.path == "/v1/embeddings":
            self.embeddings(body, mode, arg, count)
        elif self.path == "/v1/audio/transcriptions":
            if ARGS.delay_ms:
                time.sleep(ARGS.delay_ms / 1000.0)
            self.transcriptions(body, mode, arg, count)
        else:
            self.send(404, {"error": {"message": "no route %s" % self.path}})

    def embeddings(self, body, mode, arg, count):
        if self.common_faults(mode, arg, count):
            return
        try:
            req = json.loads(body)
            texts = req["input"]
            if isinstance(texts, str):
                texts = [texts]
            model = req["model"]
            modality = req.get("modality", "text")
        except (ValueError, KeyError, TypeError, AttributeError):
            self.send(400, {"error": {"message": "bad request"}})
            return
        if model != ARGS.model:
            self.send(404, {"error": {"message": "model \"%s\" not found" % model}})
            return
        # each input as the key of its vector: the text itself, or "image:WxH"
        keys, received = [], []
        for i, t in enumerate(texts):
            img = None
            if isinstance(t, dict) and "image" in t:
                img = image_key(t["image"]) if isinstance(t["image"], str) else None
            elif isinstance(t, dict) and isinstance(t.get("text"), str):
                t = t["text"]
            elif isinstance(t, str) and modality == "image":
                img = image_key(t)
                t = None
            elif not isinstance(t, str):
                t = None
            if img is None and not isinstance(t, str):
                self.send(400, {"error": {"message": "input %d is neither a text nor a JPEG "
                                          "image" % i}})
                return
            if img is None and mode == "notext":
                self.send(400, {"error": {"message": "model \"%s\" embeds no text" % model}})
                return
            keys.append(img[0] if img else t)
            received.append("image %s %d" % (img[0][6:], img[1]) if img else "text " + t)
        if ARGS.received_file:
            with LOCK, open(ARGS.received_file, "a") as f:
                f.write("".join(r + "\n" for r in received))
        data = []
        for i, t in enumerate(keys):
            probe = t in ("hello", "image:32x32")
            dim = ARGS.dim + 1 if mode == "wrongdim" and not probe else ARGS.dim
            data.append({"object": "embedding", "index": i, "embedding": vector(t, dim)})
        if mode == "wrongcount" and len(data) > 1:
            data.pop()
        data.reverse()
        self.reply(mode, {"object": "list", "model": model, "data": data})

    def transcriptions(self, body, mode, arg, count):
        if self.common_faults(mode, arg, count):
            return
        fields = parse_multipart(self.headers.get("Content-Type", ""), body)
        if "file" not in fields or "model" not in fields:
            self.send(400, {"error": {"message": "file and model are required"}})
            return
        model = fields["model"][0].decode()
        if model != ARGS.model:
            self.send(404, {"error": {"message": "model \"%s\" not found" % model}})
            return
        pcm = wav_pcm(fields["file"][0])
        if ARGS.dump_dir:
            with open(os.path.join(ARGS.dump_dir, "last.wav"), "wb") as f:
                f.write(fields["file"][0])
        dur = len(pcm) / 32000.0
        words = None
        # half a second from the middle of the request (the edges may be padding silence)
        mid = (len(pcm) // 4) * 2
        probe = pcm[mid:mid + 16000]
        for src in SOURCES:
            at = src["pcm"].find(probe) if probe else -1
            while at >= 0 and at % 2:
                at = src["pcm"].find(probe, at + 1)
            if at >= 0:
                off = (at - mid) / 32000.0
                words = [[w, round(s - off, 3), round(e - off, 3)] for w, s, e in src["words"]
                         if off <= (s + e) / 2 < off + dur]
                break
        if words is None:
            self.send(400, {"error": {"message": "unknown audio (%d bytes)" % len(pcm)}})
            return
        segs, cur = [], None
        for w in words:
            if cur is None or w[1] - cur["end"] > 1.0:
                cur = {"id": len(segs), "start": w[1], "end": w[2], "text": "", "words": []}
                segs.append(cur)
            cur["end"] = w[2]
            cur["text"] += " " + w[0]
            cur["words"].append({"word": " " + w[0], "start": w[1], "end": w[2]})
        if mode == "badtimes" and segs:
            segs[-1]["end"] = dur + 60
            segs[-1]["words"][-1]["end"] = dur + 60
        out = {"task": "transcribe", "language": "english", "duration": dur,
               "text": "".join(s["text"] for s in segs), "segments": segs,
               "model": ARGS.model}
        if mode == "segwords":
            pass
        elif mode == "nowords":
            for s in segs:
                del s["words"]
        else:
            out["words"] = [w for s in segs for w in s["words"]]
            for s in segs:
                del s["words"]
        self.reply(mode, out)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--mode-file")
    ap.add_argument("--dim", type=int, default=8)
    ap.add_argument("--vectors")
    ap.add_argument("--speech")
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--stats-file")
    ap.add_argument("--model", default="fake-embed")
    ap.add_argument("--api-key")
    ap.add_argument("--dump-dir")
    ap.add_argument("--received-file")
    ap.add_argument("--arrivals-file")
    ARGS = ap.parse_args()
    if ARGS.vectors:
        VECTORS.update(json.load(open(ARGS.vectors)))
    if ARGS.speech:
        for s in json.load(open(ARGS.speech))["sources"]:
            with open(s["pcm"], "rb") as f:
                SOURCES.append({"pcm": wav_pcm(f.read()), "words": s["words"]})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, ARGS.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
