#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_http2_server (tests/fuzz/corpus/http2_server/).

Each seed is the target's input: a control byte (see fuzz_http2_server.c: bits
0-3 the largest piece 2^k, 15 for one write; bit 7 the small configuration),
then HTTP/2 frames as a client sends them after the preface and its empty
SETTINGS (the target adds those). Header blocks are encoded with python3-h2's
hpack, one encoder per seed as one connection has. Run with Debian's
/usr/bin/python3 (python3-hpack); the files are committed, so this only runs
when a seed changes: /usr/bin/python3 tests/fuzz/http2_seeds.py
"""
import os
import struct
import sys

from hpack import Encoder

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIO = 0x1, 0x1, 0x4, 0x8, 0x20


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", stream & 0x7fffffff) + payload


def req(enc, method, path, extra=()):
    fields = [(":method", method), (":scheme", "http"), (":path", path),
              (":authority", "fuzz.test")] + list(extra)
    return enc.encode(fields)


def settings_ack():
    return frame(SETTINGS, ACK, 0)


def seeds():
    out = {}

    e = Encoder()
    out["get"] = (15, settings_ack() +
                  frame(HEADERS, END_HEADERS | END_STREAM, 1, req(e, "GET", "/")))

    e = Encoder()
    body = b"a" * 300
    out["post_data"] = (3, settings_ack() +
                        frame(HEADERS, END_HEADERS, 1,
                              req(e, "POST", "/body", [("content-length", str(len(body)))])) +
                        frame(DATA, 0, 1, body[:100]) +
                        frame(DATA, PADDED | END_STREAM, 1, bytes([4]) + body[100:] + b"\0" * 4))

    e = Encoder()
    block = req(e, "POST", "/echo", [("x-long", "v" * 40)])
    out["continuation"] = (15, settings_ack() +
                           frame(HEADERS, 0, 1, block[:10]) +
                           frame(CONTINUATION, 0, 1, block[10:30]) +
                           frame(CONTINUATION, END_HEADERS, 1, block[30:]) +
                           frame(DATA, END_STREAM, 1, b"echo me"))

    e = Encoder()
    out["rst_stream"] = (0x85, settings_ack() +
                         frame(HEADERS, END_HEADERS, 1, req(e, "POST", "/echo")) +
                         frame(RST_STREAM, 0, 1, struct.pack(">I", 8)) +
                         frame(HEADERS, END_HEADERS | END_STREAM, 3, req(e, "GET", "/stream")) +
                         frame(RST_STREAM, 0, 3, struct.pack(">I", 0)))

    e = Encoder()
    out["window_update"] = (0x8f, settings_ack() +
                            frame(HEADERS, END_HEADERS | END_STREAM, 1,
                                  req(e, "GET", "/stream")) +
                            frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 20)) +
                            frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", 1 << 20)))

    out["ping"] = (15, settings_ack() + frame(PING, 0, 0, b"fuzzping") +
                   frame(PING, ACK, 0, b"12345678"))

    e = Encoder()
    out["goaway"] = (4, settings_ack() +
                     frame(HEADERS, END_HEADERS | END_STREAM, 1, req(e, "GET", "/file")) +
                     frame(GOAWAY, 0, 0, struct.pack(">II", 1, 0) + b"bye"))

    e = Encoder()
    out["priority"] = (15, settings_ack() +
                       frame(PRIORITY, 0, 3, struct.pack(">IB", 1, 16)) +
                       frame(HEADERS, END_HEADERS | END_STREAM | PRIO, 5,
                             struct.pack(">IB", 0x80000003, 200) + req(e, "GET", "/nothere")))

    e = Encoder()
    # SETTINGS_HEADER_TABLE_SIZE 0, ENABLE_PUSH 0, INITIAL_WINDOW_SIZE 100,
    # MAX_FRAME_SIZE 16384: the server's response DATA waits on a small window.
    params = struct.pack(">HIHIHIHI", 1, 0, 2, 0, 4, 100, 5, 16384)
    out["settings"] = (0x86, settings_ack() + frame(SETTINGS, 0, 0, params) +
                       frame(HEADERS, END_HEADERS | END_STREAM, 1, req(e, "GET", "/stream")) +
                       frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", 30000)))

    # Regression seeds from the fuzzer's findings (/work/notes/h2-crashes/ has each one's
    # trace). An empty streamed body: the last DATA frame has no payload.
    e = Encoder()
    out["post_empty_echo"] = (15, frame(HEADERS, END_HEADERS | END_STREAM, 1,
                                        req(e, "POST", "/echo")))
    # A body that never comes: the client's end must wake the handler that waits for it.
    e = Encoder()
    out["eof_open_body"] = (15, frame(HEADERS, END_HEADERS, 1, req(e, "POST", "/body")))
    # The same, ended by a connection error (DATA on stream 0: GOAWAY) and sent a byte
    # at a time: the client's next byte comes while the handler still runs.
    e = Encoder()
    out["goaway_open_body"] = (0, frame(HEADERS, END_HEADERS, 1, req(e, "POST", "/echo")) +
                               frame(DATA, 0, 0, b"x"))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    d = os.path.join(here, "corpus", "http2_server")
    os.makedirs(d, exist_ok=True)
    for name, (ctl, frames) in seeds().items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(bytes([ctl]) + frames)
    return 0


if __name__ == "__main__":
    sys.exit(main())
