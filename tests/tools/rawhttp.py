#!/usr/bin/env python3
"""Send raw bytes to an HTTP server on loopback and say what came back, for
tests/e2e/t0950-framing.sh.

  rawhttp.py PORT REQUEST [--then REQUEST] [--wait S]

REQUEST is the bytes to send, with Python escapes (\\r\\n, \\x00) and {BODY:N} standing for
N bytes of 'a' and {CHUNKED:N} for a chunked body of N bytes of 'a' in 1 KiB chunks,
ended by the last chunk. With --then, a second request is sent on the same connection
after the first response (or at once if none came): a server that closed the
connection does not answer it.

Prints one line per response, 'status NNN' (and the error's code when the body is
JSON's {"error": {"code": ...}}), then 'closed' when the server ended the
connection (end of stream or reset) or 'open' when it was still open after S seconds
(--wait, 3) of quiet. Exit 0; 2 when it could not connect.
"""
import json
import re
import socket
import sys

HOST = "127.0.0.1"


def expand(spec):
    def chunked(n):
        out, left = b"", n
        while left:
            k = min(left, 1024)
            out += b"%x\r\n" % k + b"a" * k + b"\r\n"
            left -= k
        return out + b"0\r\n\r\n"

    raw = spec.encode("latin-1").decode("unicode_escape").encode("latin-1")
    raw = re.sub(rb"\{BODY:(\d+)\}", lambda m: b"a" * int(m.group(1)), raw)
    return re.sub(rb"\{CHUNKED:(\d+)\}", lambda m: chunked(int(m.group(1))), raw)


def responses(buf):
    """The complete responses at the start of buf: (statuses, bytes used)."""
    out, used = [], 0
    while True:
        end = buf.find(b"\r\n\r\n", used)
        if end < 0:
            return out, used
        lines = buf[used:end].decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if len(buf) < end + 4 + length:
            return out, used
        parts = lines[0].split()
        status = parts[1] if len(parts) > 1 else "?"
        try:
            status += " " + json.loads(buf[end + 4 : end + 4 + length])["error"]["code"]
        except (ValueError, KeyError, TypeError):
            pass
        out.append(status)
        used = end + 4 + length


def send(s, data):
    try:
        s.sendall(data)
    except OSError:
        pass  # the server may close before it has read everything: read() tells


def read(s, buf, want):
    """Reads into buf until want responses are in (None: until quiet or closed):
    (buf, whether the server closed the connection)."""
    while want is None or len(responses(buf)[0]) < want:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return buf, False
        except OSError:
            return buf, True
        if not chunk:
            return buf, True
        buf += chunk
    return buf, False


def main():
    args = sys.argv[1:]
    wait_s, then = 3.0, None
    if "--wait" in args:
        i = args.index("--wait")
        wait_s = float(args[i + 1])
        del args[i : i + 2]
    if "--then" in args:
        i = args.index("--then")
        then = expand(args[i + 1])
        del args[i : i + 2]
    port, first = int(args[0]), expand(args[1])
    try:
        s = socket.create_connection((HOST, port), timeout=5)
    except OSError as e:
        print("cannot connect: %s" % e, file=sys.stderr)
        return 2
    s.settimeout(wait_s)
    send(s, first)
    buf, closed = b"", False
    if then is not None:
        buf, closed = read(s, buf, 1)
        if not closed:
            send(s, then)
    if not closed:
        buf, closed = read(s, buf, None)
    for status in responses(buf)[0]:
        print("status " + status)
    print("closed" if closed else "open")
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
