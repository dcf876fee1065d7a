# SPDX-License-Identifier: MIT
"""h2_attacks.py - the published HTTP/2 attacks, as checks of h2_frames.py (which imports
this module): an HPACK bomb, CONTINUATION floods, Rapid Reset, PING and SETTINGS floods
whose ACKs are never read. Each asserts the server ends the connection (or refuses the
request) soon, within bounded memory; they run last on their server.
"""
import h2wire as w
from h2wire import check, expect, still_serves


@check(late=True)
def hpack_bomb(srv):
    """A 4 KiB field put in the dynamic table, then referenced 16,000 times: 64 MB decoded."""
    with w.session(srv) as c:
        peak = srv.reset_peak()
        before = srv.status_kb("VmHWM" if peak else "VmRSS")
        fields = w.block(c.request_fields("GET", "/json"))
        entry = w.literal("x-bomb", "a" * 4000, indexing=True)  # 4038 bytes in the table
        refs = bytes([0x80 | 62]) * 16000  # indexed field 62: the newest dynamic entry
        sid = c.new_sid()
        try:
            c.headers(sid, fields + entry + refs)
            c.pump(lambda: c.streams[sid].done or c.goaways, 5)
        except w.Closed:
            pass
        s = c.streams[sid]
        after = srv.status_kb("VmHWM" if peak else "VmRSS")
        expect(s.status in (400, 431) or s.reset is not None or c.goaways or c.closed,
               "the bomb was answered: %s" % s.describe())
        expect(s.status != 200, "the bomb was served 200")
        grew = (after - before) if before is not None and after is not None else 0
        expect(grew < 32 * 1024, "the server's %s grew %d KiB" % ("peak RSS" if peak else "RSS",
                                                                   grew))
    with w.session(srv) as c:
        still_serves(c, "an HPACK bomb")


def continuation_flood_of(srv, continuation, per_batch, what):
    """HEADERS without END_HEADERS, then CONTINUATIONs (continuation(sid) each) that never end
    the block: the server must close before 1 MiB."""
    with w.session(srv) as c:
        sid = c.new_sid()
        c.send(w.frame(w.HEADERS, w.END_STREAM, sid, w.block(c.request_fields("GET", "/json"))))
        closed, sent, how = w.flood(c, lambda n: b"".join(continuation(sid) for _ in range(n)),
                                    per_batch, 1 << 20, 5, read=True, pace=True)
        expect(closed and sent < 1 << 20, "%d bytes of %s taken (1 MiB allowed), connection %s"
               % (sent, what, how))


@check(late=True)
def continuation_flood(srv):
    seq = iter(range(1 << 30))
    continuation_flood_of(srv, lambda sid: w.frame(w.CONTINUATION, 0, sid, w.literal(
        "x-c%d" % next(seq), "a" * 1000)), 16, "CONTINUATION of 1 KiB fields")


@check(late=True)
def continuation_flood_empty(srv):
    continuation_flood_of(srv, lambda sid: w.frame(w.CONTINUATION, 0, sid), 1000,
                          "empty CONTINUATION")


@check(late=True)
def rapid_reset(srv):
    with w.session(srv) as c:
        head = w.block(c.request_fields("GET", "/json"))
        state = {"sid": 1, "pairs": 0}

        def frames(n):
            out = []
            for _ in range(n):
                sid = state["sid"]
                state["sid"] += 2
                out.append(w.frame(w.HEADERS, w.END_STREAM | w.END_HEADERS, sid, head) +
                           w.rst_stream(sid, w.CANCEL))
            state["pairs"] += n
            return b"".join(out)
        c.auto_window = False  # reading, but sending nothing back but what the flood sends
        pair = len(w.frame(w.HEADERS, 0, 1, head) + w.rst_stream(1, w.CANCEL))
        closed, sent, how = w.flood(c, frames, 100, 20000 * pair, 10, read=True)
        if not closed:
            try:
                closed = c.drain(3)
            except OSError:
                closed = True
        codes = [w.error_name(g[1]) for g in c.goaways]
        expect(c.goaways and c.goaways[-1][1] != 0 and closed,
               "after %d HEADERS+RST_STREAM pairs: GOAWAY %s, connection %s"
               % (state["pairs"], codes or "none", "closed" if closed else how))


def ack_flood(srv, frame_bytes, what):
    with w.session(srv, rcvbuf=4096) as c:
        c.auto_ping = False
        closed, sent, how = w.flood(c, lambda n: frame_bytes * n, 1000, 64 << 20, 5)
        expect(closed, "after %d %s frames whose ACKs were not read the connection is %s"
               % (sent // len(frame_bytes), what, how))


@check(late=True)
def ping_flood(srv):
    ack_flood(srv, w.ping(), "PING")


@check(late=True)
def settings_flood(srv):
    ack_flood(srv, w.settings_frame(), "SETTINGS")
