#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""idle_h2.py -p PORT [-n N] [-t SECS] [--path P]: N idle h2c connections (HTTP/2 by prior
knowledge, cleartext) to 127.0.0.1:PORT, each of which served one request first.

Each connection, one after the other: the connection preface, an empty SETTINGS, one
HEADERS frame GET PATH (default /json) with END_STREAM, then frames are read until the
response's END_STREAM on stream 1 (SETTINGS are acknowledged, PINGs answered). Then it is
left open and idle. Prints "ready N SECS" once all are open (SECS: the time it took), or
"failed: WHY" and exits 1. Then holds them until standard input ends or -t SECS (default
60) pass, whichever is first, and closes them. For h2_bench.sh's memory measurement (the
server's RSS before and after, divided by N). Raw sockets and hand-made frames: no library
beyond Python's; every wait is bounded (5 s per connection, -t in all).
"""
import argparse
import select
import socket
import struct
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, ACK = 0x1, 0x1


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(index, value):
    """An HPACK literal without indexing, its name from the static table (index < 15)."""
    v = value.encode()
    return bytes([index]) + bytes([len(v)]) + v  # lengths < 127: no Huffman, one byte


def request(path, authority):
    # :method GET (static 2), :scheme http (6), :path (name 4), :authority (name 1)
    block = b"\x82\x86" + literal(4, path) + literal(1, authority)
    return PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, 0x4 | END_STREAM, 1, block)


def recv_exact(s, n, deadline):
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no complete frame within 5 s")
        s.settimeout(left)
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the server")
        buf += chunk
    return buf


def one(port, path):
    """A connection that made one request and read its whole response."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(request(path, "127.0.0.1:%d" % port))
    deadline = time.monotonic() + 5
    while True:
        head = recv_exact(s, 9, deadline)
        length = struct.unpack(">I", b"\0" + head[:3])[0]
        kind, flags = head[3], head[4]
        stream = struct.unpack(">I", head[5:9])[0] & 0x7FFFFFFF
        payload = recv_exact(s, length, deadline) if length else b""
        if kind == SETTINGS and not flags & ACK:
            s.sendall(frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            s.sendall(frame(PING, ACK, 0, payload))
        elif kind in (GOAWAY, RST_STREAM):
            raise ConnectionError("the server sent frame type %d" % kind)
        elif kind in (DATA, HEADERS) and stream == 1 and flags & END_STREAM:
            s.settimeout(None)
            return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-p", "--port", type=int, required=True)
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-t", type=float, default=60.0)
    ap.add_argument("--path", default="/json")
    a = ap.parse_args()
    t0 = time.monotonic()
    conns = []
    try:
        for _ in range(a.n):
            conns.append(one(a.port, a.path))
            if time.monotonic() - t0 > a.t:
                raise TimeoutError("-t %g s passed while opening" % a.t)
    except (OSError, TimeoutError, ConnectionError) as e:
        print("failed: after %d connections: %s" % (len(conns), e), flush=True)
        return 1
    print("ready %d %.2f" % (len(conns), time.monotonic() - t0), flush=True)
    left = a.t - (time.monotonic() - t0)
    if left > 0:
        # until standard input ends (h2_bench.sh closes its end of the fifo) or -t
        select.select([sys.stdin], [], [], left)
    for s in conns:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
