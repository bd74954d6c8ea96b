#!/usr/bin/env python3
"""A static file server on 127.0.0.1 for the URL tests: byte ranges (so a resumed
download can continue), an optional rate limit (so a test can kill a download
half-way), a log of every request. Prints "port N" on stdout once listening.

usage: httpserve.py DIR [--rate BYTES_PER_S] [--log FILE]
"""
import http.server
import os
import socketserver
import sys
import time

root = os.path.abspath(sys.argv[1])
rate = 0
log = None
args = sys.argv[2:]
while args:
    if args[0] == "--rate":
        rate = int(args[1])
        args = args[2:]
    elif args[0] == "--log":
        log = open(args[1], "a", buffering=1)
        args = args[2:]
    else:
        sys.exit("unknown option " + args[0])

TYPES = {".mp4": "video/mp4", ".json3": "application/json", ".vtt": "text/vtt",
         ".json": "application/json"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        if log:
            log.write("%s %s\n" % (self.command, self.path))

    def do_HEAD(self):
        self.serve(False)

    def do_GET(self):
        self.serve(True)

    def serve(self, body):
        self.log_message("")
        name = os.path.normpath(self.path.split("?")[0].lstrip("/"))
        path = os.path.join(root, name)
        if name.startswith("..") or not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        rng = self.headers.get("Range")
        status = 200
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].split(",")[0].partition("-")
            if a:
                start = int(a)
                end = int(b) if b else size - 1
            else:
                start = max(0, size - int(b))
            end = min(end, size - 1)
            if start > end:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", TYPES.get(os.path.splitext(path)[1], "application/octet-stream"))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        self.end_headers()
        if not body:
            return
        with open(path, "rb") as f:
            f.seek(start)
            left = end - start + 1
            chunk = 16384
            while left > 0:
                data = f.read(min(chunk, left))
                if not data:
                    break
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return
                left -= len(data)
                if rate:
                    time.sleep(len(data) / rate)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
print("port", srv.server_address[1], flush=True)
srv.serve_forever()
