#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_http2_client (tests/fuzz/corpus/http2_client/).

Each seed is the target's input: a control byte (see fuzz_http2_client.c:
bits 0-3 the largest piece 2^k, 15 for one write; bit 4 the POST asks for
100-continue; bit 5 the server writes at
once, not waiting for the four requests; bit 6 the small client limits; bit 7
a pipeline of two GETs instead of the HEAD), then HTTP/2 frames
as a server sends them after its empty SETTINGS (the target adds it). The
client's four exchanges are, as a rule, streams 1 (GET /a), 3 (GET /b), 5
(POST /c) and 7 (HEAD /d; with bit 7 the pipeline's GETs, 7 and 9). Header
blocks are encoded with python3-h2's hpack, one encoder per seed as one
connection has. Run with Debian's /usr/bin/python3 (python3-hpack); the files
are committed, so this only runs when a seed changes:
/usr/bin/python3 tests/fuzz/http2_client_seeds.py
"""
import os
import struct
import sys

from hpack import Encoder

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIO = 0x1, 0x1, 0x4, 0x8, 0x20
NO_ERROR, PROTOCOL_ERROR, CANCEL, REFUSED_STREAM = 0, 1, 8, 7
SMALL, PIPELINE = 0x40, 0x80


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", stream & 0x7fffffff) + payload


def head(enc, stream, status, extra=(), end=False):
    block = enc.encode([(":status", str(status))] + list(extra))
    return frame(HEADERS, END_HEADERS | (END_STREAM if end else 0), stream, block)


def ack():
    return frame(SETTINGS, ACK, 0)


def answer(enc, stream, body=b"hello\n", status=200):
    """A whole response: HEADERS with content-length, then one DATA ending the stream."""
    return head(enc, stream, status, [("content-length", str(len(body)))]) + \
        frame(DATA, END_STREAM, stream, body)


def all_four(enc, streams=(1, 3, 5)):
    """Responses to the three first exchanges, and the HEAD's (no body) on 7."""
    out = b"".join(answer(enc, s, b"body of %d\n" % s) for s in streams)
    return out + head(enc, 7, 200, [("content-length", "42")], end=True)


def seeds():
    out = {}

    e = Encoder()
    out["ok_1"] = (15, ack() + answer(e, 1))

    e = Encoder()
    out["ok_all"] = (15, ack() + all_four(e))

    e = Encoder()
    out["ok_all_pieces"] = (0x23, ack() + all_four(e))

    e = Encoder()
    out["ok_pipeline"] = (PIPELINE | 15, ack() + answer(e, 1) + answer(e, 3) + answer(e, 5) +
                          answer(e, 7, b"e\n") + answer(e, 9, b"f\n"))

    e = Encoder()
    out["interim_100_103"] = (15, ack() + head(e, 1, 100) + head(e, 1, 103, [("link", "</x>")]) +
                              answer(e, 1) + head(e, 3, 100) + answer(e, 3))

    e = Encoder()
    out["expect_continue"] = (0x10 | 15, ack() + head(e, 5, 100) + all_four(e))

    e = Encoder()
    out["rst_stream"] = (15, ack() + frame(RST_STREAM, 0, 1, struct.pack(">I", REFUSED_STREAM)) +
                         frame(RST_STREAM, 0, 3, struct.pack(">I", CANCEL)) +
                         head(e, 5, 200) + frame(RST_STREAM, 0, 5, struct.pack(">I", NO_ERROR)) +
                         answer(e, 9))

    e = Encoder()
    out["goaway"] = (15, ack() + answer(e, 1) +
                     frame(GOAWAY, 0, 0, struct.pack(">II", 3, NO_ERROR)) + answer(e, 3))

    e = Encoder()
    out["goaway_error"] = (4, ack() + head(e, 1, 200) +
                           frame(GOAWAY, 0, 0, struct.pack(">II", 1, PROTOCOL_ERROR) + b"bye"))

    e = Encoder()
    out["window_update"] = (15, ack() + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 20)) +
                            frame(WINDOW_UPDATE, 0, 5, struct.pack(">I", 1 << 16)) +
                            all_four(e))

    e = Encoder()
    promised = e.encode([(":method", "GET"), (":scheme", "http"), (":path", "/pushed"),
                         (":authority", "127.0.0.1")])
    out["push_promise"] = (15, ack() + frame(PUSH_PROMISE, END_HEADERS, 1,
                                             struct.pack(">I", 2) + promised) + answer(e, 1))

    e = Encoder()
    block = e.encode([(":status", "200"), ("x-long", "v" * 60), ("content-length", "6")])
    out["continuation"] = (15, ack() + frame(HEADERS, 0, 1, block[:5]) +
                           frame(CONTINUATION, 0, 1, block[5:30]) +
                           frame(CONTINUATION, END_HEADERS, 1, block[30:]) +
                           frame(DATA, END_STREAM, 1, b"hello\n"))

    e = Encoder()
    out["trailers"] = (15, ack() + head(e, 1, 200) + frame(DATA, 0, 1, b"part one, ") +
                       frame(DATA, PADDED, 1, bytes([3]) + b"part two\n" + b"\0" * 3) +
                       frame(HEADERS, END_HEADERS | END_STREAM, 1,
                             e.encode([("x-checksum", "abc")])) +
                       head(e, 3, 200) + frame(DATA, 0, 3, b"b" * 40) +
                       frame(HEADERS, END_HEADERS | END_STREAM, 3, e.encode([("x-t", "1")])))

    e = Encoder()
    out["bad_content_length"] = (15, ack() +
                                 head(e, 1, 200, [("content-length", "10")]) +
                                 frame(DATA, END_STREAM, 1, b"abc") +
                                 head(e, 3, 200, [("content-length", "2")]) +
                                 frame(DATA, END_STREAM, 3, b"too long"))

    e = Encoder()
    out["bad_status"] = (15, ack() + head(e, 1, 101, end=True) + head(e, 3, 99, end=True) +
                         frame(HEADERS, END_HEADERS | END_STREAM, 5,
                               e.encode([("content-type", "x")])) +
                         head(e, 7, 600, end=True))

    e = Encoder()
    out["small_limits"] = (SMALL | 15, ack() +
                           head(e, 1, 200, [("x-%d" % i, "v") for i in range(12)], end=True) +
                           head(e, 3, 200, [("x-big", "v" * 300)], end=True) +
                           answer(e, 5, b"z" * 5000))

    e = Encoder()
    out["big_body"] = (0x09, ack() + head(e, 1, 200) +
                       b"".join(frame(DATA, 0, 1, b"d" * 4000) for _ in range(5)) +
                       frame(DATA, END_STREAM, 1, b"") + head(e, 3, 200) +
                       b"".join(frame(DATA, 0, 3, b"r" * 1000) for _ in range(3)) +
                       frame(DATA, END_STREAM, 3))

    e = Encoder()
    out["settings_ping"] = (15, frame(SETTINGS, 0, 0, struct.pack(">HI", 3, 1) +
                                      struct.pack(">HI", 4, 100)) + ack() +
                            frame(PING, 0, 0, b"fuzzping") + answer(e, 1))

    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    dest = os.path.join(here, "corpus", "http2_client")
    os.makedirs(dest, exist_ok=True)
    for name, (ctl, frames) in sorted(seeds().items()):
        with open(os.path.join(dest, name), "wb") as f:
            f.write(bytes([ctl]) + frames)
    return 0


if __name__ == "__main__":
    sys.exit(main())
