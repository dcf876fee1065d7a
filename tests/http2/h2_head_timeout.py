# SPDX-License-Identifier: MIT
"""h2_head_timeout.py - the head timeout of HTTP/2 (issue 26), as checks of h2_frames.py
(which imports this module), on its "head" server: --head-ms 1000 --idle-ms 20000. A header
block begun and not ended (HEADERS without END_HEADERS and no CONTINUATION, or a HEADERS
frame cut mid-payload) ends the connection at the head timeout, not the idle one, whether or
not a handler runs on another stream: GOAWAY PROTOCOL_ERROR, then the end, counted in the
server's head_timeouts. A block sent slowly but whole within it is served, and a block
nghttp2 ignores (no callback tells its end) ends the head timeout too. The bounds on
time are wide (a loaded machine): the close after 0.5 s and before 8 s.
"""
import time

import h2wire as w
from h2wire import check, expect, still_serves


def head_timeouts(srv):
    """The server's head_timeouts now (its one worker's, GET /stats on a connection apart)."""
    with w.session(srv) as probe:
        s = probe.get("/stats")
        expect(s.status == 200, "GET /stats: %s" % s.describe())
        return w.parse_counters(bytes(s.body).decode())["http.head_timeouts"]


def closed_at_head_timeout(srv, c, what):
    """@c ends with GOAWAY PROTOCOL_ERROR after about the head timeout (1 s; idle 20 s),
    the server's head_timeouts one more than before."""
    before = head_timeouts(srv)
    t0 = time.monotonic()
    closed = c.drain(10)
    took = time.monotonic() - t0
    codes = [w.error_name(g[1]) for g in c.goaways]
    expect(closed and 0.5 <= took <= 8, "%s: the connection %s after %.2f s (head timeout "
           "1 s, idle 20 s)" % (what, "closed" if closed else "still open", took))
    expect(codes and codes[-1] == "PROTOCOL_ERROR", "%s: GOAWAY %s, not PROTOCOL_ERROR"
           % (what, codes or "none"))
    after = head_timeouts(srv)
    expect(after == before + 1, "%s: head_timeouts %d, then %d" % (what, before, after))


@check("head")
def head_without_continuation(srv):
    """HEADERS without END_HEADERS, and no CONTINUATION ever."""
    with w.session(srv) as c:
        sid = c.new_sid()
        c.send(w.frame(w.HEADERS, w.END_STREAM, sid, w.block(c.request_fields("GET", "/json"))))
        closed_at_head_timeout(srv, c, "HEADERS without END_HEADERS")


@check("head")
def head_cut_mid_frame(srv):
    """A HEADERS frame (END_HEADERS) whose payload stops halfway."""
    with w.session(srv) as c:
        sid = c.new_sid()
        f = w.frame(w.HEADERS, w.END_STREAM | w.END_HEADERS, sid,
                    w.block(c.request_fields("GET", "/json")))
        c.send(f[:9 + (len(f) - 9) // 2])
        closed_at_head_timeout(srv, c, "a HEADERS frame cut mid-payload")


@check("head")
def head_timeout_while_handler_runs(srv):
    """HEADERS without END_HEADERS on one stream while the handler of another waits for
    its body (POST /count, its body never ended): the head timeout still ends the
    connection (parked while handlers run, it had no timeout of its own)."""
    with w.session(srv) as c:
        up = c.request("POST", "/count", end_stream=False)
        c.send_body(up, b"x" * 1000, end=False)
        c.pump(timeout=0.2)
        expect(not c.streams[up].done, "POST /count answered before its body ended: %s"
               % c.streams[up].describe())
        sid = c.new_sid()
        c.send(w.frame(w.HEADERS, w.END_STREAM, sid, w.block(c.request_fields("GET", "/json"))))
        closed_at_head_timeout(srv, c, "HEADERS without END_HEADERS beside a running handler")


@check("head")
def head_sent_slowly_in_time(srv):
    """A header block over HEADERS and two CONTINUATIONs, 0.15 s apart (0.3 s of the 1 s):
    answered; then the connection idles past the head timeout and still serves (the
    block's end ended the head timeout)."""
    with w.session(srv) as c:
        before = head_timeouts(srv)
        sid = c.new_sid()
        blk = w.block(c.request_fields("GET", "/json"))
        third = len(blk) // 3
        c.stream(sid)
        c.send(w.frame(w.HEADERS, w.END_STREAM, sid, blk[:third]))
        time.sleep(0.15)
        c.send(w.frame(w.CONTINUATION, 0, sid, blk[third:2 * third]))
        time.sleep(0.15)
        c.send(w.frame(w.CONTINUATION, w.END_HEADERS, sid, blk[2 * third:]))
        c.pump(lambda: c.streams[sid].done, 5)
        s = c.streams[sid]
        expect(s.status == 200 and bytes(s.body) == w.JSON, "the slow block: %s"
               % s.describe())
        c.pump(timeout=1.5)  # past the head timeout: raises Closed if the server ended it
        still_serves(c, "a header block sent slowly")
        expect(head_timeouts(srv) == before, "head_timeouts counted a block that came whole")


@check("head")
def head_ignored_block_ends(srv):
    """A header block nghttp2 ignores (HEADERS, then a CONTINUATION, on a stream that was
    answered and closed: no callback tells its end) ends the head timeout as well: the
    connection then idles past it and still serves, nothing counted."""
    with w.session(srv) as c:
        before = head_timeouts(srv)
        s = c.get("/json")
        expect(s.status == 200, "GET /json: %s" % s.describe())
        blk = w.block(c.request_fields("GET", "/json"))
        c.send(w.frame(w.HEADERS, w.END_STREAM, s.sid, blk[:4]) +
               w.frame(w.CONTINUATION, w.END_HEADERS, s.sid, blk[4:]))
        c.pump(timeout=1.5)  # past the head timeout: raises Closed if the server ended it
        still_serves(c, "an ignored header block")
        expect(head_timeouts(srv) == before, "head_timeouts counted an ignored block")
