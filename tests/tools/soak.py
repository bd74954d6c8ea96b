#!/usr/bin/env python3
"""A server soak for tests/e2e/t0940-soak.sh and bench/soak_bench.sh, on loopback only.

  soak.py PORT PID ID1 ID2 --requests N [--threads T] [--timeout S] [--token-file F]
          [--post-path FILE] [--margin-kb K] [--warmup W]

Sends N requests from T threads (keep-alive connections, one in ten requests on a fresh
connection) to the `vidtheque serve` on 127.0.0.1:PORT, drawn at random (seeded, so a run
can be repeated) from every route: the library page with its filters, the video page
with its paging parameters, /search, /api/videos, /api/videos/ID and its /shots /frames
/cues /chunks pages, /api/search with assorted queries and filters, frame images,
/media/ID whole, by Range and revalidated, static assets, and the errors (400, 401, 404,
405, 416, 421). Each answer's status is checked, JSON bodies are parsed, 206 bodies are
measured. A request not answered within --timeout seconds is a stall.

Meanwhile the server's VmRSS is read from /proc/PID/status every 20 ms. After W warm-up
requests (every route a few times, so the per-thread handles, statement caches and
allocator arenas are in place), the samples are cut in thirds: memory is flat when the
largest sample of the last third is at most --margin-kb above the largest of the first.

Prints '# ' lines (requests/s, RSS first and last, the thirds) and one line
'soak: requests N failures F rss_growth_kb G' and exits 0 when there was no failure, no
stall and memory was flat, 1 when not, 2 when the soak itself could not run.
Never asserts on time: the requests/s figure is for bench/soak_bench.sh to report.
"""
import argparse
import http.client
import json
import random
import sys
import threading
import time

HOST = "127.0.0.1"


def note(msg):
    print("# " + msg, flush=True)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def routes(a, b, size, size_b, etag_media, etag_frame, token, post_path):
    """(weight, method, path, headers, body, expected status, check) for every route."""
    auth = {"Authorization": "Bearer " + token} if token else {}
    json_hdr = {"Content-Type": "application/json"}
    r = []

    def add(w, path, status, method="GET", headers=None, body=None, check=None):
        r.append((w, method, path, headers or {}, body, status, check))

    for vid in (a, b):
        # pages
        add(3, f"/v/{vid}", 200)
        add(2, f"/v/{vid}?t=3", 200)
        add(2, f"/v/{vid}?frames=1&cues=1", 200)
        add(1, f"/v/{vid}?cues=2", 200)
        add(1, f"/v/{vid}?frames=3&cues=9", 200)
        add(1, f"/v/{vid}?frames=0", 400)
        add(1, f"/v/{vid}?cues=x1", 400)
        add(1, f"/v/{vid}/extra", 404)
        # the document and its lists
        add(4, f"/api/videos/{vid}", 200, check="json")
        add(2, f"/api/videos/{vid}/shots", 200, check="json")
        add(1, f"/api/videos/{vid}/shots?offset=1&limit=1", 200, check="json")
        add(2, f"/api/videos/{vid}/frames?limit=2", 200, check="json")
        add(2, f"/api/videos/{vid}/cues?offset=10&limit=7", 200, check="json")
        add(1, f"/api/videos/{vid}/cues?offset=115", 200, check="json")
        add(1, f"/api/videos/{vid}/cues?offset=5000", 200, check="json")
        add(2, f"/api/videos/{vid}/chunks", 200, check="json")
        add(1, f"/api/videos/{vid}/cues?limit=0", 400, check="json")
        add(1, f"/api/videos/{vid}/cues?limit=501", 400, check="json")
        add(1, f"/api/videos/{vid}/frames?offset=-1", 400, check="json")
        add(1, f"/api/videos/{vid}/words", 404, check="json")
        # frames (thumbnails) and media
        for n in range(3):
            add(2, f"/api/videos/{vid}/frames/{n}.jpg", 200)
        add(1, f"/api/videos/{vid}/frames/3.jpg", 404)
        add(1, f"/api/videos/{vid}/frames/01.jpg", 404)
        add(1, f"/api/videos/{vid}/frames/0.png", 404)
        add(1, f"/api/search?q=river&video={vid}", 200, check="json")
    add(3, "/", 200)
    add(1, "/?sort=title&state=ready", 200)
    add(1, "/?sort=duration&state=queued", 200)
    add(1, "/?sort=%3Cscript%3E", 400)
    add(1, "/?state=bogus", 400)
    add(2, "/search?q=garden", 200)
    add(1, "/search?q=", 200)
    add(4, "/api/videos", 200, check="json")
    for q in ("garden", "garden+window", "%22river+bridge%22", "cue+-window", "gardn",
              "market&source=screen", "tokens&source=speech&limit=5", "zzzqqqnothing",
              "%22%22%22(((***%20-%20NEAR%20OR%20source:", "caf%C3%A9+%E6%97%A5%E6%9C%AC",
              "title:second", "memory+cache&limit=1000"):
        add(2, "/api/search?q=" + q, 200, check="json")
    add(1, "/api/search", 400, check="json")
    add(1, "/api/search?q=x&limit=0", 400, check="json")
    add(1, "/api/search?q=x&source=bogus", 400, check="json")
    add(1, "/api/search?q=x&video=..%2Fetc", 400, check="json")
    add(1, "/api/search?q=" + "a" * 1001, 400, check="json")
    add(1, "/api/videos/nosuchvideo1", 404, check="json")
    add(1, "/api/videos/nosuchvideo1/cues", 404, check="json")
    add(1, "/api/videos/nosuchvideo1/frames/0.jpg", 404, check="json")
    add(1, "/api/nothing", 404, check="json")
    add(1, "/nothing/here", 404)
    add(1, "/v/nosuchvideo1", 404)
    add(1, "/static/app.css", 200)
    add(1, "/static/app.js", 200)
    add(3, f"/media/{a}", 200, check=size)
    add(1, f"/media/{a}", 200, method="HEAD")
    add(3, f"/media/{a}", 206, headers={"Range": "bytes=0-99"}, check=100)
    add(2, f"/media/{a}", 206, headers={"Range": "bytes=-100"}, check=100)
    add(2, f"/media/{b}", 206, headers={"Range": "bytes=100-"}, check=size_b - 100)
    add(1, f"/media/{a}", 206, headers={"Range": f"bytes=10-{size + 1000}"}, check=size - 10)
    add(1, f"/media/{a}", 416, headers={"Range": f"bytes={size}-"})
    add(1, f"/media/{a}", 416, headers={"Range": "bytes=x-y"})
    add(1, f"/media/{a}", 304, headers={"If-None-Match": etag_media})
    add(1, f"/api/videos/{a}/frames/0.jpg", 304, headers={"If-None-Match": etag_frame})
    add(1, "/media/nosuchvideo1", 404)
    add(1, "/", 421, headers={"Host": "evil.example"})
    add(1, "/", 405, method="PUT", body=b"x")
    add(1, f"/api/videos/{a}", 405, method="DELETE", check="json")
    add(1, "/api/videos", 401, method="POST", headers=json_hdr, body=b"{}", check="json")
    if token:
        add(1, "/api/videos", 400, method="POST", headers={**auth, **json_hdr}, body=b"[1]",
            check="json")
    if token and post_path:
        # the file is in the library already: registered again, queued, nothing to redo
        body = json.dumps({"path": post_path}).encode()
        add(1, "/api/videos", 202, method="POST", headers={**auth, **json_hdr}, body=body,
            check="json")
    return r


class Client(threading.Thread):
    def __init__(self, port, plan, timeout, fresh_every, seed):
        super().__init__(daemon=True)
        self.port, self.plan, self.timeout = port, plan, timeout
        self.fresh_every, self.rng = fresh_every, random.Random(seed)
        self.done, self.failures, self.stalls, self.slowest_s = 0, [], 0, 0.0
        self.conn = None

    def one(self, route):
        _, method, path, headers, body, want, check = route
        if self.conn is None or self.rng.randrange(self.fresh_every) == 0:
            if self.conn:
                self.conn.close()
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
        t0 = time.monotonic()
        try:
            self.conn.request(method, path, body=body, headers=headers)
            resp = self.conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            self.conn.close()
            self.conn = None
            if isinstance(e, TimeoutError) or "timed out" in str(e):
                self.stalls += 1
            return f"{method} {path[:80]}: {type(e).__name__}: {e}"
        finally:
            self.slowest_s = max(self.slowest_s, time.monotonic() - t0)
        if resp.will_close:
            self.conn.close()
            self.conn = None
        if resp.status != want:
            return f"{method} {path[:80]}: status {resp.status}, expected {want}: {data[:200]!r}"
        if check == "json":
            try:
                json.loads(data)
            except ValueError as e:
                return f"{method} {path[:80]}: not JSON ({e}): {data[:200]!r}"
        elif isinstance(check, int) and len(data) != check:
            return f"{method} {path[:80]}: {len(data)} bytes, expected {check}"
        return None

    def run(self):
        for route in self.plan:
            err = self.one(route)
            self.done += 1
            if err:
                self.failures.append(err)
        if self.conn:
            self.conn.close()


def head(port, path, headers=None):
    c = http.client.HTTPConnection(HOST, port, timeout=10)
    c.request("HEAD", path, headers=headers or {})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status, r.getheader("Content-Length"), r.getheader("ETag")


def run_phase(port, routes_, n, threads, timeout, rng):
    weights = [r[0] for r in routes_]
    per = [n // threads + (1 if i < n % threads else 0) for i in range(threads)]
    clients = [Client(port, rng.choices(routes_, weights, k=k), timeout, 10, rng.random())
               for k in per]
    t0 = time.monotonic()
    for c in clients:
        c.start()
    return clients, t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("pid", type=int)
    ap.add_argument("id1")
    ap.add_argument("id2")
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--token-file")
    ap.add_argument("--post-path")
    ap.add_argument("--margin-kb", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=600)
    ap.add_argument("--seed", type=int, default=10)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    try:
        st, size, etag_media = head(args.port, f"/media/{args.id1}")
        st2, _, etag_frame = head(args.port, f"/api/videos/{args.id1}/frames/0.jpg")
        st3, size_b, _ = head(args.port, f"/media/{args.id2}")
        if (st, st2, st3) != (200, 200, 200) or not size or not size_b or not etag_frame:
            note(f"setup: HEAD of the media and a frame gave {st}, {st3}, {st2}")
            return 2
        rss_kb(args.pid)
    except OSError as e:
        note(f"setup: {e}")
        return 2
    token = open(args.token_file).read().strip() if args.token_file else None
    table = routes(args.id1, args.id2, int(size), int(size_b), etag_media, etag_frame, token, args.post_path)
    note(f"{len(table)} request kinds, {args.threads} client threads, "
         f"{args.warmup} warm-up requests, then {args.requests}")

    failures, stalls, slowest = [], 0, 0.0
    # warm-up: every kind of request at least once per client thread, then at random
    warm = [r for r in table for _ in range(args.threads)]
    rng.shuffle(warm)
    clients, _ = run_phase(args.port, table, max(args.warmup - len(warm), 0), args.threads,
                           args.timeout, rng)
    extra = Client(args.port, warm, args.timeout, 10, rng.random())
    extra.start()
    for c in clients + [extra]:
        c.join()
        failures += c.failures
        stalls += c.stalls
        slowest = max(slowest, c.slowest_s)

    samples = [rss_kb(args.pid)]
    clients, t0 = run_phase(args.port, table, args.requests, args.threads, args.timeout, rng)
    while any(c.is_alive() for c in clients):
        time.sleep(0.02)
        try:
            samples.append(rss_kb(args.pid))
        except OSError:
            note("the server is gone")
            return 1
    took = time.monotonic() - t0
    samples.append(rss_kb(args.pid))
    done = 0
    for c in clients:
        c.join()
        done += c.done
        failures += c.failures
        stalls += c.stalls
        slowest = max(slowest, c.slowest_s)

    third = max(len(samples) // 3, 1)
    first_max, last_max = max(samples[:third]), max(samples[-third:])
    growth = last_max - first_max
    note(f"{done} requests in {took:.1f} s: {done / took:.0f} requests/s, slowest "
         f"{slowest * 1000:.0f} ms, {stalls} stalls")
    note(f"RSS first {samples[0]} kB, last {samples[-1]} kB; max of the first third "
         f"{first_max} kB, of the last third {last_max} kB ({len(samples)} samples)")
    kinds = {}
    for f in failures:
        kinds[f] = kinds.get(f, 0) + 1
    for f, k in sorted(kinds.items(), key=lambda x: -x[1])[:20]:
        note(f"failure ({k} times): {f}")
    print(f"soak: requests {done} failures {len(failures)} rss_growth_kb {growth}", flush=True)
    ok = not failures and done == args.requests and growth <= args.margin_kb
    if growth > args.margin_kb:
        note(f"memory grew {growth} kB, more than the margin of {args.margin_kb} kB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
