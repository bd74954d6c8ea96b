#!/usr/bin/env python3
"""A fake Hugging Face hub on 127.0.0.1 for the `models pull` tests: the revision and
tree APIs and the resolve URLs of one repo whose files are those of a local folder
(files over 100 kB are listed as LFS files, with their SHA-256; the others by git blob
id). Writes its port to PORT_FILE once listening and logs "METHOD PATH RANGE" per
request to LOG. Reads MODE_FILE (whitespace-separated words) on every request, so a
test switches misbehaviours without restarting it:

  commit2       the revision "main" is at another commit
  badsha        the tree lists a wrong SHA-256 for model.safetensors
  badoid        the tree lists a wrong git blob id for config.json
  huge          the tree lists model.safetensors as 3 GB
  truncate      file bodies lack their last 100 bytes (Content-Length says so too)
  drop-once     the first request for each file sends half its body, then hangs up
  drop          every file request sends half its body, then hangs up
  norange       Range headers are ignored (200 with the whole file)
  redirect      LFS files are redirected (302) to /cdn/<sha256>
  redirect-ftp  LFS files are redirected to an ftp:// URL
  redirect-localhost  LFS files are redirected to http://localhost:PORT/cdn/<sha256>
                (another host name, as a CDN is)
  drip          file bodies come 120 bytes every 0.1 s (1,200 bytes a second)
  500           file requests get HTTP 500
  private       the API and resolve URLs answer 401 without "Authorization: Bearer
                secret-token"; a request to /cdn/ that carries it is answered 400

usage: fakehub.py --repo OWNER/NAME --dir DIR --port-file F --log F --mode-file F
"""
import argparse
import hashlib
import http.server
import json
import os
import socketserver
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--repo", required=True)
ap.add_argument("--dir", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--mode-file", required=True)
args = ap.parse_args()

COMMIT1 = hashlib.sha1(b"commit one").hexdigest()
COMMIT2 = hashlib.sha1(b"commit two").hexdigest()
LFS_MIN = 100 * 1000

files = {}
for name in sorted(os.listdir(args.dir)):
    path = os.path.join(args.dir, name)
    if not os.path.isfile(path):
        continue
    data = open(path, "rb").read()
    files[name] = {
        "data": data,
        "sha256": hashlib.sha256(data).hexdigest(),
        "oid": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(),
    }
by_sha = {f["sha256"]: f for f in files.values()}
lock = threading.Lock()
served = set()  # paths already dropped once (drop-once)
log = open(args.log, "a", buffering=1)


def modes():
    try:
        return set(open(args.mode_file).read().split())
    except FileNotFoundError:
        return set()


def tree(m):
    out = [{"type": "directory", "oid": "0" * 40, "size": 0, "path": "onnx"}]
    for name, f in files.items():
        e = {"type": "file", "oid": f["oid"], "size": len(f["data"]), "path": name}
        if name == "config.json" and "badoid" in m:
            e["oid"] = "1" * 40
        if len(f["data"]) > LFS_MIN:
            e["lfs"] = {"oid": f["sha256"], "size": len(f["data"]), "pointerSize": 134}
            e["oid"] = hashlib.sha1(name.encode()).hexdigest()  # the pointer's blob id
            if name == "model.safetensors" and "badsha" in m:
                e["lfs"]["oid"] = "0" * 64
            if name == "model.safetensors" and "huge" in m:
                e["lfs"]["size"] = e["size"] = 3 * 1024**3
        out.append(e)
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        m = modes()
        log.write("GET %s %s\n" % (self.path, self.headers.get("Range", "-")))
        commit = COMMIT2 if "commit2" in m else COMMIT1
        auth = self.headers.get("Authorization")
        if "private" in m:
            if self.path.startswith("/cdn/"):
                if auth:
                    return self.send_json(400, {"error": "token sent to the CDN"})
            elif auth != "Bearer secret-token":
                return self.send_json(401, {"error": "Invalid credentials"})
        api = "/api/models/%s/" % args.repo
        if self.path.startswith(api + "revision/"):
            rev = self.path[len(api + "revision/"):]
            if rev not in ("main", COMMIT1, COMMIT2):
                return self.send_json(404, {"error": "Invalid rev id: " + rev})
            sha = commit if rev == "main" else rev
            return self.send_json(200, {"id": args.repo, "sha": sha,
                                        "siblings": [{"rfilename": n} for n in files]})
        if self.path.startswith(api + "tree/"):
            if self.path[len(api + "tree/"):] not in ("main", COMMIT1, COMMIT2):
                return self.send_json(404, {"error": "Invalid rev id"})
            return self.send_json(200, tree(m))
        if self.path.startswith("/api/"):
            return self.send_json(401, {"error": "Repository Not Found"})
        res = "/%s/resolve/" % args.repo
        if self.path.startswith(res):
            rest = self.path[len(res):]
            rev, _, name = rest.partition("/")
            f = files.get(name)
            if rev not in (COMMIT1, COMMIT2) or not f:
                return self.send_json(404, {"error": "Entry not found"})
            if "500" in m:
                return self.send_json(500, {"error": "Internal Error"})
            if len(f["data"]) > LFS_MIN and "redirect-localhost" in m:
                return self.redirect("http://localhost:%d/cdn/%s"
                                     % (self.server.server_address[1], f["sha256"]))
            if len(f["data"]) > LFS_MIN and "redirect" in m:
                return self.redirect("/cdn/" + f["sha256"])
            if len(f["data"]) > LFS_MIN and "redirect-ftp" in m:
                return self.redirect("ftp://127.0.0.1:1/" + f["sha256"])
            return self.send_file(name, f, m)
        if self.path.startswith("/cdn/"):
            f = by_sha.get(self.path[5:])
            if f:
                return self.send_file(self.path, f, m)
        self.send_json(404, {"error": "not found"})

    def redirect(self, where):
        self.send_response(302)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_file(self, key, f, m):
        data = f["data"]
        if "truncate" in m:
            data = data[:-100]
        start = 0
        rng = self.headers.get("Range")
        if rng and "norange" not in m and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Repo-Commit", COMMIT1)
        self.end_headers()
        drop = "drop" in m
        if "drop-once" in m:
            with lock:
                drop = key not in served
                served.add(key)
        if "drip" in m:
            try:
                for i in range(0, len(body), 120):
                    self.wfile.write(body[i : i + 120])
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass  # the client gave up
            self.close_connection = True
            return
        if drop and len(body) > 1:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
tmp = args.port_file + ".tmp"
with open(tmp, "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(tmp, args.port_file)
srv.serve_forever()
