#!/usr/bin/env python3
"""Slow, many and long-lived HTTP clients for tests/e2e/t0920-slowclient.sh, on loopback only.

  slowclient.py trickle PORT --every S --within L [--src ADDR] [--pause P] [--body]
      a request whose head comes one header line every S seconds: the server must end
      the connection (408, or closed) within L seconds of the first byte; with --pause,
      on a keep-alive connection that first made a quick request, then was idle P s;
      with --body, a POST whose head is whole but whose body comes a byte every S s
  slowclient.py keepalive PORT --for D --every S
      one keep-alive connection asking GET /api/videos every S seconds for D seconds:
      every answer must be 200, on the same connection
  slowclient.py flood PORT --addrs N --per-addr M --every S --for D --probe-src ADDR
      M connections from each of N source addresses (127.0.0.2, 127.0.0.3, ...) trickle
      a header line every S seconds and reconnect as soon as they are cut; meanwhile a
      client from a fresh address (--probe-src) asks GET /api/videos on a new connection
      every second: at least 90% must get 200 within --probe-timeout seconds

Each prints '# ' lines saying what it saw and exits 0 when the server behaved, 1 when
not, 2 when the test itself could not run (e.g. a source address cannot be bound).
"""
import argparse
import selectors
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def note(msg):
    print("# " + msg, flush=True)


def connect(port, src=None, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect((HOST, port))
    return s


def read_response(s, buf=b""):
    """One response from s: (status, rest of buf); status None when the server closed."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(buf) < length:
        chunk = s.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
    return status, buf[length:]


def cmd_trickle(a):
    if a.body:
        lines = [b"POST /api/videos HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 9000\r\n"
                 b"Content-Type: application/json\r\n\r\n"] + [b" "] * 9000
    else:
        lines = [b"GET /api/videos HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n"]
        lines += [b"X-Slow-%d: %d\r\n" % (i, i) for i in range(1000)]
    s = connect(a.port, a.src)
    if a.pause is not None:
        s.sendall(b"GET /api/videos HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, rest = read_response(s)
        if status != 200 or rest:
            note("the first request on the connection got %s" % status)
            return 1
        time.sleep(a.pause)
    t0 = time.monotonic()
    got = b""
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_READ)
    ended = None
    for line in lines:
        try:
            s.sendall(line)
        except OSError as e:
            ended = "send failed (%s)" % e.strerror
            break
        if sel.select(timeout=a.every):
            try:
                chunk = s.recv(4096)
            except OSError as e:
                ended = "reset (%s)" % e.strerror
                break
            got += chunk
            if not chunk:
                ended = "closed"
                break
        if time.monotonic() - t0 > a.within + 30:
            break
    # read what is left: the answer may arrive just before the end of the stream
    s.settimeout(2)
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    except OSError:
        pass
    took = time.monotonic() - t0
    status = got.split(b"\r\n", 1)[0].decode("latin-1") if got else "(no answer)"
    note("trickled %s every %gs%s: %s after %.1fs, %s"
         % ("body, a byte" if a.body else "head, a line", a.every, "" if a.pause is None else " (after a request and %gs idle)" % a.pause,
            ended, took, status))
    if ended is None:
        note("the server never ended the connection")
        return 1
    if took > a.within:
        note("cut after %.1fs, more than %gs" % (took, a.within))
        return 1
    if got and not status.startswith("HTTP/1.1 408"):
        note("expected 408, got %s" % status)
        return 1
    return 0


def cmd_keepalive(a):
    s = connect(a.port, timeout=5)
    t0 = time.monotonic()
    n = 0
    buf = b""
    while time.monotonic() - t0 < a.duration:
        try:
            s.sendall(b"GET /api/videos HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status, buf = read_response(s, buf)
        except OSError as e:
            status = "error (%s)" % e.strerror
        n += 1
        if status != 200:
            note("request %d on a %.1fs old keep-alive connection: %s"
                 % (n, time.monotonic() - t0, status if status else "closed"))
            return 1
        time.sleep(a.every)
    note("%d requests over %.1fs on one keep-alive connection: all 200" % (n, time.monotonic() - t0))
    return 0


class Attacker:
    """Slow-header connections from several source addresses, reconnecting when cut."""

    def __init__(self, a):
        self.a = a
        self.sel = selectors.DefaultSelector()
        self.srcs = ["127.0.0.%d" % (2 + i) for i in range(a.addrs)]
        self.conns = {}  # socket -> [src, opened, next_send, n_lines]
        self.opened = self.cut = self.refused = self.peak = 0
        self.lifetimes = []

    def open(self, src):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((src, 0))
        try:
            s.connect((HOST, self.a.port))
        except BlockingIOError:
            pass
        now = time.monotonic()
        self.conns[s] = [src, now, now, 0]
        self.sel.register(s, selectors.EVENT_READ)
        self.opened += 1

    def drop(self, s, was_cut):
        src, opened = self.conns.pop(s)[:2]
        self.sel.unregister(s)
        s.close()
        if was_cut:
            self.cut += 1
            self.lifetimes.append(time.monotonic() - opened)
        return src

    def run(self, stop):
        for src in self.srcs:
            for _ in range(self.a.per_addr):
                self.open(src)
        while not stop.is_set():
            for key, _ in self.sel.select(timeout=0.1):
                s = key.fileobj
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if not data:  # cut by the server: come back at once, as slowhttptest does
                    self.open(self.drop(s, True))
            now = time.monotonic()
            for s, st in list(self.conns.items()):
                if st[2] > now:
                    continue
                line = b"GET / HTTP/1.1\r\n" if st[3] == 0 else b"X-Slow-%d: 1\r\n" % st[3]
                try:
                    s.send(line)
                    st[3] += 1
                    st[2] = now + self.a.every
                except BlockingIOError:  # not connected yet (still in the listen queue)
                    st[2] = now + 0.2
                except OSError:
                    self.refused += 1
                    self.open(self.drop(s, False))
            established = sum(1 for st in self.conns.values() if st[3] > 0)
            self.peak = max(self.peak, established)
        for s in list(self.conns):
            self.drop(s, False)


def cmd_flood(a):
    try:
        for i in range(a.addrs):
            socket.socket().bind(("127.0.0.%d" % (2 + i), 0))
        socket.socket().bind((a.probe_src, 0))
    except OSError as e:
        note("cannot bind a loopback source address: %s" % e)
        return 2
    atk = Attacker(a)
    stop = threading.Event()
    t = threading.Thread(target=atk.run, args=(stop,))
    t.start()
    time.sleep(a.warmup)
    results = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < a.duration:
        start = time.monotonic()
        try:
            s = connect(a.port, a.probe_src, a.probe_timeout)
            s.sendall(b"GET /api/videos HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            status, _ = read_response(s)
            s.close()
        except OSError as e:
            status = "timeout" if isinstance(e, socket.timeout) else (e.strerror or str(e))
        took = time.monotonic() - start
        results.append((status, took))
        time.sleep(max(0.0, 1.0 - took))
    stop.set()
    t.join()
    ok = [took for status, took in results if status == 200]
    note("attack: %d addresses x %d slow connections, a line every %gs; peak %d held, "
         "%d opened, %d cut by the server (longest lived %.1fs), %d failed to connect"
         % (a.addrs, a.per_addr, a.every, atk.peak, atk.opened, atk.cut,
            max(atk.lifetimes, default=0), atk.refused))
    note("fresh address %s: %d/%d requests got 200 (slowest %.2fs): %s"
         % (a.probe_src, len(ok), len(results), max(ok, default=0),
            " ".join(str(st) for st, _ in results)))
    rc = 0
    if len(ok) * 10 < len(results) * 9 or len(results) < 3:
        note("a client from a fresh address was not served during the attack")
        rc = 1
    if a.cut_within and max(atk.lifetimes, default=0) > a.cut_within:
        note("a slow connection lived %.1fs, more than %gs" % (max(atk.lifetimes), a.cut_within))
        rc = 1
    if a.cut_within and atk.cut == 0:
        note("no slow connection was cut")
        rc = 1
    return rc


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trickle")
    t.add_argument("port", type=int)
    t.add_argument("--every", type=float, required=True)
    t.add_argument("--within", type=float, required=True)
    t.add_argument("--src")
    t.add_argument("--pause", type=float)
    t.add_argument("--body", action="store_true")
    k = sub.add_parser("keepalive")
    k.add_argument("port", type=int)
    k.add_argument("--for", dest="duration", type=float, required=True)
    k.add_argument("--every", type=float, required=True)
    f = sub.add_parser("flood")
    f.add_argument("port", type=int)
    f.add_argument("--addrs", type=int, required=True)
    f.add_argument("--per-addr", type=int, required=True)
    f.add_argument("--every", type=float, required=True)
    f.add_argument("--for", dest="duration", type=float, required=True)
    f.add_argument("--warmup", type=float, default=2.0)
    f.add_argument("--probe-src", required=True)
    f.add_argument("--probe-timeout", type=float, default=3.0)
    f.add_argument("--cut-within", type=float, default=0.0,
                   help="fail when a slow connection lives longer than this")
    a = p.parse_args()
    return {"trickle": cmd_trickle, "keepalive": cmd_keepalive, "flood": cmd_flood}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
