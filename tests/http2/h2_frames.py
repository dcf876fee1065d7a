# SPDX-License-Identifier: MIT
"""h2_frames.py - HTTP/2 (RFC 9113) of libgiong-http2, frame by frame, against h2_server.

  /usr/bin/python3 h2_frames.py H2_SERVER [--tls CERTDIR --backend openssl|wolfssl] [-k NAME]

Starts H2_SERVER (tests/http2/h2_server.c) four times: once for the exchanges and the
attacks (h2_attacks.py, run last), once with settings of its own (giong_http2_new()), a body
limit and a short idle timeout for the idle close and the graceful shutdown (SIGTERM), once
with a long grace period for a shutdown under a slow download, once with a head timeout
shorter than the idle one (h2_head_timeout.py). Over a plain
socket the client speaks HTTP/2 with prior knowledge (h2c); with --tls over TLS with ALPN
h2, the server's certificate checked against CERTDIR/ca.pem (tests/tls/make-certs.sh). The
client is h2wire.py.
One line per check, "pass NAME", "FAIL NAME: why" or "skip NAME: why" (a TLS-only check on
a plain connection); -k runs the checks whose name holds NAME. Exit 0 when all passed, 1
otherwise, 77 (skip) without python3-h2's hpack and hyperframe, or when the server lacks the
TLS backend asked for.
"""
import argparse
import importlib
import os
import resource
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import h2wire as w
    from h2wire import expect
    importlib.import_module("h2_attacks")  # its checks: the attacks
    importlib.import_module("h2_head_timeout")  # its checks: the head timeout
except ImportError as e:  # hpack, hyperframe: Debian's python3-h2
    print("skip: %s (apt-get install python3-h2, and run /usr/bin/python3)" % e)
    sys.exit(77)

JSON, check, still_serves = w.JSON, w.check, w.still_serves


def reset_check(srv, extra, what, method="GET", path="/json", body=None):
    """A malformed request (RFC 9113 8.1.1): reset PROTOCOL_ERROR, a response before allowed."""
    with w.session(srv) as c:
        fields = c.request_fields(method, path, extra) if not callable(extra) else extra(c)
        sid = c.new_sid()
        c.headers(sid, w.block(fields), end_stream=body is None)
        if body is not None:
            c.send_body(sid, body)
        try:
            c.pump(lambda: c.streams[sid].reset is not None, 3)
        except w.Closed:  # a connection error where a stream error is due: said below
            pass
        s = c.streams[sid]
        expect(s.reset == w.PROTOCOL_ERROR and (s.status is None or 400 <= s.status < 500),
               "%s: want RST_STREAM PROTOCOL_ERROR, got %s%s" % (what, s.describe(), "".join(
                   "; GOAWAY %s %r" % (w.error_name(g[1]), g[2]) for g in c.goaways) +
                   ("; connection closed" if c.closed else "")))
        still_serves(c, what)


# --- exchanges ---------------------------------------------------------------------------
@check()
def alpn_or_prior_knowledge(srv):
    with w.session(srv) as c:
        st = c.settings
        expect(srv.cafile is None or c.alpn == "h2", "ALPN chose %r, not h2" % c.alpn)
        expect(w.S_MAX_CONCURRENT_STREAMS in st, "the server's SETTINGS set no concurrent "
               "stream limit: %s" % st)


@check()
def tls_prior_knowledge_without_alpn(srv):
    """A TLS client that offers no ALPN and starts with the preface gets HTTP/2 (protocol.h:
    the handover on a connection without ALPN)."""
    if srv.cafile is None:
        raise w.Skip("plain connections have no ALPN")
    c = srv.connect(alpn=False)
    expect(c.alpn is None, "ALPN %r chosen though none was offered" % c.alpn)
    c.start()
    still_serves(c, "a handshake without ALPN")
    c.close()


@check()
def get_json(srv):
    with w.session(srv) as c:
        s = c.get("/json")
        expect(s.status == 200 and bytes(s.body) == JSON and s.ended, s.describe())
        expect(s.header("content-type") == "application/json",
               "content-type %r" % s.header("content-type"))
        expect(s.header("content-length") in (None, str(len(JSON))),
               "content-length %r" % s.header("content-length"))
        expect(not any(n in ("connection", "keep-alive", "transfer-encoding") for n, _ in
                       s.headers), "a connection-specific field in %s" % s.headers)
        s = c.get("/nowhere")
        expect(s.status == 404, "GET /nowhere: %s" % s.describe())


@check()
def head_no_body(srv):
    """HEAD: GET's fields, no body, whichever way the handler sends it."""
    with w.session(srv) as c:
        for path, length in (("/json", len(JSON)), ("/big?n=100000", 100000),
                             ("/file", 1048576 + 123), ("/stream?n=3", None)):
            s = c.get(path, method="HEAD")
            expect(s.status == 200 and s.ended and not s.body, "HEAD %s: %s" % (path, s.describe()))
            expect(s.header("content-length") in (None, str(length)),
                   "HEAD %s content-length %r" % (path, s.header("content-length")))


@check()
def empty_bodies(srv):
    with w.session(srv) as c:
        s = c.get("/big?n=0")
        expect(s.status == 200 and s.ended and not s.body, "/big?n=0: %s" % s.describe())
        s = c.get("/echo", method="POST")  # END_STREAM on the HEADERS: no body at all
        expect(s.status == 200 and s.ended and not s.body, "POST without body: %s" % s.describe())
        sid = c.request("POST", "/echo", body=b"")  # an empty DATA frame ends it
        c.pump(lambda: c.streams[sid].done)
        s = c.streams[sid]
        expect(s.status == 200 and s.ended and not s.body, "POST, empty DATA: %s" % s.describe())


@check()
def client_cancels(srv):
    """RST_STREAM CANCEL while the handler writes a large body, writes a streamed one, reads
    a body: the stream ends there and the connection goes on (RFC 9113 8.1)."""
    with w.session(srv) as c:
        # the connection's window wide open, the streams' left at 65,535: /big stalls in its
        # handler's write, and /stream's pieces are not queued behind it
        c.send(w.window_update(0, 1 << 24))
        c.auto_window = False
        big = c.request("GET", "/big?n=8000000")
        slow = c.request("GET", "/stream?n=100&ms=20")
        up = c.request("POST", "/count?sleep_ms=20", end_stream=False)
        c.send_body(up, os.urandom(30000), end=False)
        c.pump(lambda: len(c.streams[big].body) >= w.DEFAULT_WINDOW and c.streams[slow].body, 5)
        expect(len(c.streams[big].body) == w.DEFAULT_WINDOW and c.streams[slow].body,
               "before the cancel: %s, %s" % (c.streams[big].describe(),
                                              c.streams[slow].describe()))
        c.send(b"".join(w.rst_stream(i, w.CANCEL) for i in (big, slow, up)))
        c.pump(timeout=0.3)
        for sid in (big, slow):
            expect(not c.streams[sid].ended, "stream %d ended after its cancel: %s"
                   % (sid, c.streams[sid].describe()))
        c.auto_window = True
        still_serves(c, "three cancelled streams")


@check()
def client_vanishes(srv):
    """The client closes its socket while handlers write and read: a new connection is
    served (and the server's exit, server_exit, finds nothing held)."""
    c = srv.connect()
    c.start()
    for _ in range(5):
        c.request("GET", "/big?n=4000000")
        c.request("GET", "/stream?n=100&ms=10")
        sid = c.request("POST", "/count?sleep_ms=10", end_stream=False)
        c.send_body(sid, b"x" * 20000, end=False)
    c.pump(timeout=0.2)
    c.close()
    with w.session(srv) as c:
        still_serves(c, "a client that vanished")
        deadline = time.monotonic() + 3
        while True:  # the server's connections: this one alone, once the handlers saw the end
            s = c.get("/stats")
            expect(s.status == 200, "GET /stats: %s" % s.describe())
            k = w.parse_counters(bytes(s.body).decode())
            if k.get("http.open") == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        expect(k.get("http.open") == 1, "3 s after its client vanished the server still holds %s "
               "connection(s): handlers waiting for a body or a window of a connection gone?"
               % (k.get("http.open", 0) - 1))


def server_fds(srv):
    return len(os.listdir("/proc/%d/fd" % srv.proc.pid))


@check()
def idle_connections_hold_nothing(srv):
    """1,000 h2c connections that each served one request, then idle: no task, no stack and
    no receive buffer each (the core's counters stay where they were), and the server's
    descriptors back where they were once they close."""
    n = 1000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 200), hard))
    with w.session(srv) as probe:
        def counters():
            s = probe.get("/stats")
            expect(s.status == 200, "GET /stats: %s" % s.describe())
            return w.parse_counters(bytes(s.body).decode())
        before, fds = counters(), server_fds(srv)
        conns = []
        try:
            for _ in range(n):
                c = srv.connect()
                c.start()
                s = c.get("/json")
                expect(s.status == 200, "a request on connection %d: %s" % (len(conns), s.describe()))
                conns.append(c)
            deadline = time.monotonic() + 3
            while True:  # parked: each connection's task ends once its answer is out
                k = counters()
                if k["http.idle"] >= n or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            expect(k["http.idle"] >= n, "%d of %d connections idle" % (k["http.idle"], n))
            # The /stats handler runs in both readings: what differs is the connections'.
            expect(k["core.stacks_live"] == before["core.stacks_live"],
                   "%d idle connections hold %d stacks" % (n, k["core.stacks_live"]
                                                          - before["core.stacks_live"]))
            expect(k["core.recvbufs_held"] <= before["core.recvbufs_held"] + 2,
                   "%d idle connections hold %d receive buffers" % (
                       n, k["core.recvbufs_held"] - before["core.recvbufs_held"]))
        finally:
            for c in conns:
                c.close()
        deadline = time.monotonic() + 3
        while server_fds(srv) > fds and time.monotonic() < deadline:
            time.sleep(0.05)
        expect(server_fds(srv) <= fds, "%d descriptors open 3 s after the connections closed, "
               "%d before" % (server_fds(srv), fds))


@check()
def handler_errors_only_for_cut_responses(srv):
    """A handler whose response went whole is no error, even when the client closes the
    connection the moment the last DATA came (h2load's way; 5 sendfile bodies at a time,
    10 times); one whose response the client cut is one (giong_http_stats.handler_errors,
    counted as the handler returns: read once every connection but the probe is gone)."""
    with w.session(srv) as probe:
        def settled():
            deadline = time.monotonic() + 3
            while True:
                s = probe.get("/stats")
                expect(s.status == 200, "GET /stats: %s" % s.describe())
                k = w.parse_counters(bytes(s.body).decode())
                if k["http.open"] == 1 or time.monotonic() > deadline:
                    return k["http.handler_errors"]
                time.sleep(0.05)
        before, size = settled(), 1048576 + 123
        for _ in range(10):
            c = srv.connect()
            try:
                c.start({w.S_INITIAL_WINDOW_SIZE: 1 << 24})
                c.send(w.window_update(0, 1 << 26))
                sids = [c.request("GET", "/file") for _ in range(5)]
                c.pump(lambda: all(c.streams[i].done for i in sids), 10)
                for i in sids:
                    expect(c.streams[i].ended and len(c.streams[i].body) == size,
                           "/file: %s" % c.streams[i].describe())
            finally:
                c.close()
        after = settled()
        expect(after == before, "%d handler errors for 50 whole responses" % (after - before))
        c = srv.connect()
        c.start()
        c.auto_window = False  # /big's handler waits in its write for our window
        sid = c.request("GET", "/big?n=8000000")
        c.pump(lambda: len(c.streams[sid].body) >= w.DEFAULT_WINDOW, 5)
        c.close()
        cut = settled()
        expect(cut == after + 1, "%d handler errors for one response cut, not 1" % (cut - after))


@check()
def status_204_no_body(srv):
    with w.session(srv) as c:
        s = c.get("/status/204")
        expect(s.status == 204 and s.ended and not s.body, s.describe())
        expect(s.header("content-length") is None, "204 with content-length %r (RFC 9110 8.6)"
               % s.header("content-length"))


@check()
def big_file_stream(srv):
    with w.session(srv) as c:
        n = 1 << 20
        s = c.get("/big?n=%d" % n, timeout=10)
        expect(s.status == 200 and s.ended and bytes(s.body) == w.pattern(n),
               "/big: %s%s" % (s.describe(), "" if bytes(s.body) == w.pattern(len(s.body))
                               else " (wrong bytes)"))
        s = c.get("/file", timeout=10)
        size = 1048576 + 123
        expect(s.status == 200 and s.ended and bytes(s.body) == w.pattern(size),
               "/file (sendfile): %s" % s.describe())
        expect(s.header("content-length") in (None, str(size)), "/file content-length %r"
               % s.header("content-length"))
        s = c.get("/stream?n=100")
        want = b"".join(b"piece %05d\n" % i for i in range(100))
        expect(s.status == 200 and s.ended and bytes(s.body) == want, "/stream: %s" % s.describe())


@check()
def file_large_frames(srv):
    """A client that takes 1 MiB frames: /file whole, in frames past 16 KiB on h2c (its
    payloads spliced), within our SETTINGS_MAX_FRAME_SIZE (h2wire checks every frame)."""
    big = 1 << 20
    with w.session(srv, {w.S_MAX_FRAME_SIZE: big, w.S_INITIAL_WINDOW_SIZE: 1 << 24}) as c:
        c.send(w.window_update(0, 1 << 24))
        c.max_frame = big
        largest = [0]
        handle = c._handle

        def note(f):
            if isinstance(f, w.hf.DataFrame):
                largest[0] = max(largest[0], len(f.data))
            handle(f)
        c._handle = note
        size = 1048576 + 123
        for _ in range(2):  # the second on the same connection: nothing left behind
            s = c.get("/file", timeout=10)
            expect(s.status == 200 and s.ended and bytes(s.body) == w.pattern(size),
                   "/file: %s" % s.describe())
        expect(srv.cafile or largest[0] > 16384, "the largest DATA frame of /file on h2c: "
               "%d bytes (16 KiB frames: not spliced?)" % largest[0])


@check()
def echo_1mib(srv):
    with w.session(srv) as c:
        body = os.urandom(1 << 20)
        sid = c.request("POST", "/echo", body=body, extra=[("content-length", str(len(body)))])
        c.pump(lambda: c.streams[sid].done, 15)
        s = c.streams[sid]
        expect(s.status == 200 and s.ended and bytes(s.body) == body, "echo: %s" % s.describe())
        # and without content-length: the body's end is END_STREAM
        sid = c.request("POST", "/echo", body=body[:100000])
        c.pump(lambda: c.streams[sid].done, 15)
        s = c.streams[sid]
        expect(s.status == 200 and bytes(s.body) == body[:100000], "echo without "
               "content-length: %s" % s.describe())


@check()
def server_honours_client_window(srv):
    with w.session(srv, settings={w.S_INITIAL_WINDOW_SIZE: 1000}) as c:
        c.auto_window = False
        n = 100000
        sid = c.request("GET", "/big?n=%d" % n)
        c.pump(lambda: len(c.streams[sid].body) >= 1000, 3)
        c.pump(timeout=0.3)  # what more it sends now is past our window
        s = c.streams[sid]
        expect(s.status == 200 and len(s.body) == 1000 and not s.done,
               "with a 1000-byte window the server sent %d bytes (%s)" % (len(s.body),
                                                                          s.describe()))
        c.send(w.window_update(0, n) + w.window_update(sid, n))
        c.pump(lambda: s.done, 5)
        expect(s.ended and bytes(s.body) == w.pattern(n), "after WINDOW_UPDATE: %s" % s.describe())


@check()
def backpressure(srv):
    """A handler reading 4 KiB every 40 ms: the window must follow its reads."""
    with w.session(srv) as c:
        st = c.settings
        window = st.get(w.S_INITIAL_WINDOW_SIZE, w.DEFAULT_WINDOW)
        size, sleep = window + 128 * 1024, 0.04
        sid = c.request("POST", "/count?sleep_ms=%d" % int(sleep * 1000), end_stream=False,
                        extra=[("content-length", str(size))])
        t0 = time.monotonic()
        samples, stalls = [], []

        def progress(sent, stalled):
            t = time.monotonic() - t0
            if stalled:
                if not stalls or stalls[-1][1] != sent:
                    stalls.append((t, sent))
            else:
                samples.append((t, sent))
        c.send_body(sid, os.urandom(size), on_progress=progress)
        c.pump(lambda: c.streams[sid].done, 20)
        s = c.streams[sid]
        expect(s.status == 200 and bytes(s.body) == b"%d\n" % size, "count: %s %r"
               % (s.describe(), bytes(s.body[:40])))
        expect(stalls and stalls[0][1] >= window - 16384,
               "the client never waited for the window (stalls %s)" % stalls[:3])
        expect(s.window_updates > 0, "no WINDOW_UPDATE for the stream")
        for t, sent in samples:
            # the handler has read at most t / sleep pieces; a frame of slack for granularity
            bound = window + (int(t / sleep) + 2) * 4096 + 32768
            expect(t > 0.5 or sent <= bound, "%d bytes sent %.2f s in, but the handler read at "
                   "most %d: the server grants window for what it did not read"
                   % (sent, t, (int(t / sleep) + 1) * 4096))


@check()
def concurrent_100(srv):
    with w.session(srv) as c:
        st = c.settings
        n = min(100, st.get(w.S_MAX_CONCURRENT_STREAMS, 100))
        sids = [c.request("GET", "/stream?n=20&ms=5") for _ in range(n)]
        c.pump(lambda: all(c.streams[i].done for i in sids), 15)
        want = b"".join(b"piece %05d\n" % i for i in range(20))
        bad = [c.streams[i].describe() for i in sids
               if c.streams[i].status != 200 or bytes(c.streams[i].body) != want]
        expect(not bad, "%d of %d streams wrong: %s" % (len(bad), n, bad[:3]))


@check()
def refused_past_max_concurrent(srv):
    with w.session(srv) as c:
        st = c.settings
        limit = st.get(w.S_MAX_CONCURRENT_STREAMS)
        expect(limit is not None and limit <= 1000, "SETTINGS_MAX_CONCURRENT_STREAMS %s" % limit)
        open_ = [c.request("POST", "/echo", end_stream=False) for _ in range(limit)]
        extra = c.request("GET", "/json")
        try:
            c.pump(lambda: c.streams[extra].done, 3)
        except w.Closed:
            pass
        s = c.streams[extra]
        # docs/http2.md: REFUSED_STREAM until the client acknowledged the limit; after it,
        # nghttp2 ends the connection (GOAWAY PROTOCOL_ERROR, "max concurrent streams
        # exceeded"), which RFC 9113 5.1.2 allows. This client acknowledged it.
        goaway = [g for g in c.goaways if g[1] == w.PROTOCOL_ERROR and g[0] < extra]
        expect(s.reset == w.REFUSED_STREAM or goaway,
               "stream %d of %d: want RST_STREAM REFUSED_STREAM or GOAWAY PROTOCOL_ERROR below it, "
               "got %s%s" % (limit + 1, limit, s.describe(), "".join(
                   "; GOAWAY %s %r" % (w.error_name(g[1]), g[2]) for g in c.goaways)))
        if goaway:
            return  # the connection is over; the server serves others (still_serves below)
        for sid in open_:  # the open ones end with an empty body: all answered
            c.send(w.frame(w.DATA, w.END_STREAM, sid))
        c.pump(lambda: all(c.streams[i].done for i in open_), 10)
        bad = [c.streams[i].describe() for i in open_ if c.streams[i].status != 200]
        expect(not bad, "%d held streams not answered: %s" % (len(bad), bad[:3]))
        still_serves(c, "a refused stream")
    with w.session(srv) as c:
        still_serves(c, "a connection ended past the stream limit")


@check()
def request_trailers(srv):
    """Fields after the body (a trailer section, RFC 9113 8.1): the request is served."""
    with w.session(srv) as c:
        sid = c.request("POST", "/echo", end_stream=False)
        c.send_body(sid, b"hello", end=False)
        c.headers(sid, w.block([("x-checksum", "5")]), end_stream=True)
        c.pump(lambda: c.streams[sid].done, 5)
        s = c.streams[sid]
        expect(s.status == 200 and bytes(s.body) == b"hello", "trailers: %s" % s.describe())


@check()
def unknown_frames_ignored(srv):
    """Frames of unknown types and PRIORITY are ignored (RFC 9113 5.5, 5.3.2)."""
    with w.session(srv) as c:
        c.send(w.frame(0x77, 0xFF, 0, b"extension") + w.frame(0x77, 0, 1, b"x") +
               w.frame(w.PRIORITY, 0, 1, bytes([0, 0, 0, 0, 15])))
        still_serves(c, "frames of an unknown type")


def connection_error(srv, data, code, what):
    """@data after the preface is a connection error: GOAWAY @code, then the close."""
    with w.session(srv) as c:
        c.send(data)
        closed = c.drain(3)
        got = ["%s %r" % (w.error_name(g[1]), g[2]) for g in c.goaways]
        expect(c.goaways and c.goaways[-1][1] == code and closed, "%s: want GOAWAY %s and the "
               "close, got GOAWAY %s, connection %s" % (what, w.error_name(code), got or "none",
                                                       "closed" if closed else "open"))


@check()
def data_on_stream_0(srv):
    connection_error(srv, w.frame(w.DATA, 0, 0, b"x"), w.PROTOCOL_ERROR, "DATA on stream 0")


@check()
def even_stream_id(srv):
    connection_error(srv, w.frame(w.HEADERS, w.END_STREAM | w.END_HEADERS, 2, w.block(
        [(":method", "GET"), (":scheme", "http"), (":path", "/json"),
         (":authority", "localhost")])), w.PROTOCOL_ERROR, "a client stream with an even id")


@check()
def window_overflow(srv):
    connection_error(srv, w.window_update(0, 0x7FFFFFFF), w.FLOW_CONTROL_ERROR,
                     "a connection window past 2^31 - 1")


@check()
def frame_too_large(srv):
    connection_error(srv, w.frame(w.DATA, 0, 1, b"x" * 16385), w.FRAME_SIZE_ERROR,
                     "a frame past SETTINGS_MAX_FRAME_SIZE")


# --- malformed requests (RFC 9113 8.1.1, 8.2, 8.3) ----------------------------------------
@check()
def uppercase_field_name(srv):
    reset_check(srv, [("X-Upper", "1")], "an uppercase field name")


@check()
def pseudo_after_regular(srv):
    reset_check(srv, lambda c: [(":method", "GET"), (":scheme", c.scheme), (":path", "/json"),
                                ("accept", "*/*"), (":authority", "localhost")],
                "a pseudo-header after a regular field")


@check()
def connection_keep_alive(srv):
    reset_check(srv, [("connection", "keep-alive")], "connection: keep-alive")


@check()
def te_gzip(srv):
    reset_check(srv, [("te", "gzip")], "te: gzip")


@check()
def te_trailers_ok(srv):
    with w.session(srv) as c:
        s = c.get("/json", extra=[("te", "trailers")])
        expect(s.status == 200 and bytes(s.body) == JSON, "te: trailers: %s" % s.describe())


@check()
def content_length_short(srv):
    reset_check(srv, [("content-length", "10")], "content-length 10 with 5 bytes",
                method="POST", path="/echo", body=b"hello")


@check()
def content_length_long(srv):
    reset_check(srv, [("content-length", "10")], "content-length 10 with 15 bytes",
                method="POST", path="/echo", body=b"hello, world!!!")


@check()
def missing_authority(srv):
    with w.session(srv) as c:
        sid = c.new_sid()
        c.headers(sid, w.block([(":method", "GET"), (":scheme", c.scheme), (":path", "/json")]))
        c.pump(lambda: c.streams[sid].done, 3)
        s = c.streams[sid]
        expect(s.status == 400 or s.reset is not None,
               "no :authority nor host: want 400 or a reset, got %s" % s.describe())
        still_serves(c, "a request without authority")


# --- the second server: --idle-ms 500 ----------------------------------------------------
@check("stop")
def idle_timeout(srv):
    with w.session(srv) as c:
        s = c.get("/json")
        expect(s.status == 200, s.describe())
        t0 = time.monotonic()
        closed = c.drain(5)
        took = time.monotonic() - t0
        expect(closed and 0.3 <= took <= 3, "idle 500 ms: %s after %.2f s" % (
            "closed" if closed else "still open", took))


@check("stop")
def options_advertised(srv):
    """giong_http2_new()'s settings (h2_server --h2-streams 50 --h2-window 262144) are the
    ones the server's SETTINGS say, and the window it holds a client to."""
    with w.session(srv) as c:
        st = c.settings
        expect(st.get(w.S_MAX_CONCURRENT_STREAMS) == 50 and
               st.get(w.S_INITIAL_WINDOW_SIZE) == 262144, "SETTINGS %s, not 50 streams and a "
               "window of 262144" % st)


@check("stop")
def body_limit_413(srv):
    """Past --body-limit 100000: 413, with a content-length (refused before the body) and
    without one (once the limit is crossed). Only the stream ends: the other streams of the
    connection are no business of that body."""
    for extra in ([("content-length", "200000")], []):
        how = "content-length" if extra else "no content-length"
        c = srv.connect()
        c.start()
        sid = c.request("POST", "/echo", end_stream=False, extra=extra)
        c.send_body(sid, os.urandom(200000))
        c.pump(lambda: c.streams[sid].done, 5)
        s = c.streams[sid]
        expect(s.status == 413, "200,000 bytes past a limit of 100,000 (%s): %s"
               % (how, s.describe()))
        still_serves(c, "a 413 (%s)" % how)
        c.close()


@check("stop")
def graceful_shutdown(srv):
    c = srv.connect()
    c.start()
    sid = c.request("GET", "/stream?n=10&ms=150")
    c.pump(lambda: len(c.streams[sid].body) > 0, 3)
    expect(c.streams[sid].body, "no first piece: %s" % c.streams[sid].describe())
    srv.signal(signal.SIGTERM)
    c.pump(lambda: c.streams[sid].done, 8)
    s = c.streams[sid]
    want = b"".join(b"piece %05d\n" % i for i in range(10))
    expect(c.goaways, "no GOAWAY after SIGTERM")
    last, code, _ = c.goaways[-1]
    expect(code == 0 and last >= sid, "GOAWAY %s last stream %d (ours %d)"
           % (w.error_name(code), last, sid))
    expect(s.status == 200 and s.ended and bytes(s.body) == want,
           "the open stream did not complete: %s" % s.describe())
    expect(c.drain(5), "the connection stays open after the shutdown")
    code = srv.stop()
    expect(code == 0, "h2_server exit status %s after SIGTERM" % code)


@check("grace")
def shutdown_slow_reader(srv):
    """SIGTERM while a client reads a large body slowly, its WINDOW_UPDATEs coming as it
    reads (curl's way): the body arrives whole, then GOAWAY and a clean end of the
    connection. A close once the last DATA was handed to the kernel reset the connection
    (the client's bytes unread, or coming after it), and the reset dropped the tail of the
    body still queued for the client (serve.h2's SIGTERM check: 11 of 20 MiB)."""
    n = 8 << 20
    c = srv.connect(rcvbuf=65536, timeout=10)
    try:
        # The whole body may leave at once: the windows are not what holds it back.
        c.start({w.S_INITIAL_WINDOW_SIZE: (1 << 31) - 1})
        c.send(w.window_update(0, (1 << 31) - 1 - w.DEFAULT_WINDOW))
        sid = c.request("GET", "/big?n=%d" % n)
        c.pump(lambda: len(c.streams[sid].body) > 0, 5)
        srv.signal(signal.SIGTERM)
        s = c.streams[sid]
        deadline = time.monotonic() + 30
        while not s.done and time.monotonic() < deadline:  # about 8 MB/s
            c.recv_frame(1)
            time.sleep(0.002)
        expect(s.status == 200 and s.ended and bytes(s.body) == w.pattern(n),
               "the body did not arrive whole: %s" % s.describe())
        expect(c.goaways and c.goaways[-1][1] == 0, "no GOAWAY NO_ERROR: %s" % c.goaways)
        try:
            c.pump(timeout=5)
            why = "still open 5 s after its last stream"
        except w.Closed as e:
            why = None if str(e) == "end of stream" else str(e)
        expect(why is None, "the connection did not end cleanly: %s" % why)
    finally:
        c.close()
    code = srv.stop()
    expect(code == 0, "h2_server exit status %s after SIGTERM" % code)


def server_counters(srv, failures):
    """The main server's exit: 0, with every HTTP/2 session freed."""
    code = srv.stop()
    k = srv.counters
    why = None
    if code != 0:
        why = "exit status %s after SIGTERM" % code
    elif srv.stop_seconds > 3:
        why = "%.1f s to stop (the grace period is 5 s): a connection outlived its client" \
            % srv.stop_seconds
    elif "h2.session_bytes" not in k:
        why = "no counters printed"
    elif k["h2.session_bytes"] != 0:
        why = "nghttp2 still holds %d bytes with every connection closed" % k["h2.session_bytes"]
    elif not k["h2.connections"] or not k["h2.streams"]:
        why = "counters say no HTTP/2: %s" % k
    elif not (k["h2.refused_streams"] or k["h2.protocol_errors"]) or not k["h2.resets_received"]:
        why = "refused streams (or the connection error past the limit) or resets not counted: %s" % k
    report("server_exit", why, failures)


def report(name, why, failures):
    if why is None:
        print("pass %s" % name, flush=True)
    else:
        print("FAIL %s: %s" % (name, why), flush=True)
        failures.append(name)


def run(name, fn, srv, failures):
    try:
        fn(srv)
        why = None
    except w.Skip as e:
        print("skip %s: %s" % (name, e), flush=True)
        return
    except w.Failed as e:
        why = str(e)
    except w.Closed as e:
        why = "the server closed the connection: %s" % e
    except Exception as e:  # a check that breaks is a failure, not a crash of the run
        why = "%s: %s" % (type(e).__name__, e)
    report(name, why, failures)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("server")
    ap.add_argument("--tls", metavar="CERTDIR")
    ap.add_argument("--backend", default="openssl")
    ap.add_argument("-k", dest="only", default="")
    a = ap.parse_args()
    failures = []
    chosen = sorted((c for c in w.CHECKS if a.only in c[0]), key=lambda c: c[3])
    # The main server's idle timeout is past what 1,000 TLS handshakes take under a
    # sanitizer (idle_connections_hold_nothing holds its probe and connections idle).
    for kind, args in (("main", ["--write-ms", "2000", "--idle-ms", "60000"]),
                       ("stop", ["--idle-ms", "500", "--body-limit", "100000",
                                 "--h2-streams", "50", "--h2-window", "262144"]),
                       ("grace", ["--grace-ms", "10000"]),
                       ("head", ["--head-ms", "1000", "--idle-ms", "20000"])):
        todo = [c for c in chosen if c[2] == kind]
        if not todo:
            continue
        try:
            srv = w.Server(a.server, a.tls, a.backend, args)
        except RuntimeError as e:
            if "exit 77" in str(e):
                print("skip: %s" % e)
                return 77
            report("start_" + kind, str(e), failures)
            continue
        for name, fn, _, _ in todo:
            run(name, fn, srv, failures)
            if not srv.alive() and kind == "main":
                report("server_alive", "h2_server died (exit %s) in %s"
                       % (srv.proc.returncode, name), failures)
                break
        if kind == "main" and not a.only:
            server_counters(srv, failures)
        elif srv.alive():
            srv.stop()
    print("%d failed" % len(failures) if failures else "all passed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
