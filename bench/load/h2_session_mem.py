#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""h2_session_mem.py [MAX_DEFLATE_TABLE]: what one idle nghttp2 server session holds, block
by block, after one GET answered with a head-only response, with libgiong-http2's options
(no automatic WINDOW_UPDATE, no closed streams kept, 1,000 outbound ACKs, 32 settings) and
its SETTINGS (100 streams, 65,535 window, 16,384 header list, no RFC 7540 priorities).

ctypes on Debian's libnghttp2.so.14 with an nghttp2_mem that records each live block: the
figure behind giong_http2_stats().session_bytes of an idle connection (h2_bench.sh's
memory measurement; bench/results/http2.md). MAX_DEFLATE_TABLE, if given, is passed to
nghttp2_option_set_max_deflate_dynamic_table_size (to see what the HPACK tables weigh).
"""
import collections
import ctypes as C
import struct
import sys

L = C.CDLL("libnghttp2.so.14")
libc = C.CDLL("libc.so.6")
libc.malloc.restype = C.c_void_p
libc.malloc.argtypes = [C.c_size_t]
libc.realloc.restype = C.c_void_p
libc.realloc.argtypes = [C.c_void_p, C.c_size_t]
libc.free.argtypes = [C.c_void_p]
L.nghttp2_session_mem_recv.restype = C.c_ssize_t
L.nghttp2_session_mem_send.restype = C.c_ssize_t

live = {}  # address -> (size, phase)
phase = ["session_new"]
MALLOC = C.CFUNCTYPE(C.c_void_p, C.c_size_t, C.c_void_p)
FREE = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)
CALLOC = C.CFUNCTYPE(C.c_void_p, C.c_size_t, C.c_size_t, C.c_void_p)
REALLOC = C.CFUNCTYPE(C.c_void_p, C.c_void_p, C.c_size_t, C.c_void_p)
FRAME_RECV = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_void_p)


def m_malloc(size, ud):
    p = libc.malloc(size)
    live[p] = (size, phase[0])
    return p


def m_free(p, ud):
    if p:
        live.pop(p, None)
        libc.free(p)


def m_calloc(n, size, ud):
    p = libc.malloc(n * size)
    C.memset(p, 0, n * size)
    live[p] = (n * size, phase[0])
    return p


def m_realloc(p, size, ud):
    q = libc.realloc(p, size)
    live.pop(p, None)
    live[q] = (size, phase[0])
    return q


class Mem(C.Structure):
    _fields_ = [("ud", C.c_void_p), ("malloc", MALLOC), ("free", FREE),
                ("calloc", CALLOC), ("realloc", REALLOC)]


class Settings(C.Structure):
    _fields_ = [("id", C.c_int32), ("value", C.c_uint32)]


class NV(C.Structure):
    _fields_ = [("name", C.c_char_p), ("value", C.c_char_p), ("namelen", C.c_size_t),
                ("valuelen", C.c_size_t), ("flags", C.c_uint8)]


requests = []


def on_frame(sess, frame, ud):
    # nghttp2_frame_hd: size_t length, int32 stream_id, uint8 type, uint8 flags
    hd = bytes(C.cast(frame, C.POINTER(C.c_uint8 * 16)).contents)
    stream_id = struct.unpack("<i", hd[8:12])[0]
    if hd[12] == 1 and hd[13] & 1:  # HEADERS with END_STREAM: a complete GET
        requests.append(stream_id)
    return 0


def frame(kind, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", sid) + payload


def literal(index, value):
    v = value.encode()
    return bytes([index, len(v)]) + v


def main():
    keep = [MALLOC(m_malloc), FREE(m_free), CALLOC(m_calloc), REALLOC(m_realloc), FRAME_RECV(on_frame)]
    mem = Mem(None, *keep[:4])
    cb = C.c_void_p()
    L.nghttp2_session_callbacks_new(C.byref(cb))
    L.nghttp2_session_callbacks_set_on_frame_recv_callback(cb, keep[4])
    opt = C.c_void_p()
    L.nghttp2_option_new(C.byref(opt))
    L.nghttp2_option_set_no_auto_window_update(opt, 1)
    L.nghttp2_option_set_no_closed_streams(opt, 1)
    L.nghttp2_option_set_max_outbound_ack(opt, C.c_size_t(1000))
    L.nghttp2_option_set_max_settings(opt, C.c_size_t(32))
    if len(sys.argv) > 1:
        L.nghttp2_option_set_max_deflate_dynamic_table_size(opt, C.c_size_t(int(sys.argv[1])))
    s = C.c_void_p()
    if L.nghttp2_session_server_new3(C.byref(s), cb, None, opt, C.byref(mem)):
        sys.exit("nghttp2_session_server_new3 failed")
    st = (Settings * 4)(Settings(3, 100), Settings(4, 65535), Settings(6, 16384), Settings(9, 1))
    L.nghttp2_submit_settings(s, 0, st, 4)
    print("after session_new and SETTINGS: %d bytes" % sum(v[0] for v in live.values()))
    phase[0] = "request"
    block = b"\x82\x86" + literal(4, "/json") + literal(1, "127.0.0.1:8080")
    data = (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(1, 5, 1, block)
            + frame(4, 1, 0))
    if L.nghttp2_session_mem_recv(s, data, C.c_size_t(len(data))) != len(data):
        sys.exit("nghttp2_session_mem_recv failed")
    fields = [(b":status", b"200"), (b"content-type", b"application/json"), (b"content-length", b"27")]
    nva = (NV * 3)(*[NV(a, b, len(a), len(b), 0) for a, b in fields])
    for sid in requests:
        L.nghttp2_submit_response(s, sid, nva, 3, None)
    buf = C.c_void_p()
    sent = 0
    for _ in range(100):
        k = L.nghttp2_session_mem_send(s, C.byref(buf))
        if k <= 0:
            break
        sent += k
    print("requests answered %d, %d bytes sent" % (len(requests), sent))
    print("idle session: %d bytes in %d blocks" % (sum(v[0] for v in live.values()), len(live)))
    for (size, ph), k in sorted(collections.Counter(live.values()).items(), key=lambda x: -x[0][0] * x[1]):
        print("%7d x %d  (allocated at %s)" % (size, k, ph))
    L.nghttp2_session_del(s)
    L.nghttp2_option_del(opt)
    L.nghttp2_session_callbacks_del(cb)


if __name__ == "__main__":
    main()
