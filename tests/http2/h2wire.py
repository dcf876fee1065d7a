# SPDX-License-Identifier: MIT
"""h2wire - the raw HTTP/2 client, the flood sender and the server process of
tests/http2/h2_frames.py.

Frames are built by hand (frame()) so that a test can send what no library would: an
uppercase field name, a pseudo-header after a regular field, a header block that never
ends. Header blocks are encoded without the dynamic table (literals, never indexed) unless a
test builds its own, so the encoder holds no state; what the server sends is decoded with
hpack's Decoder and parsed with hyperframe. Every wait is bounded by a deadline.
"""
import contextlib
import fcntl
import os
import select
import signal
import socket
import ssl
import struct
import subprocess
import termios
import time

import hpack
from hyperframe import frame as hf

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY = range(8)
WINDOW_UPDATE, CONTINUATION = 8, 9
END_STREAM = ACK = 0x1
END_HEADERS = 0x4
ERRORS = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
          "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
          "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY",
          "HTTP_1_1_REQUIRED"]
PROTOCOL_ERROR, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR = 1, 3, 6
REFUSED_STREAM, CANCEL, ENHANCE_YOUR_CALM = 7, 8, 11
S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, S_INITIAL_WINDOW_SIZE, S_MAX_FRAME_SIZE = 2, 3, 4, 5
DEFAULT_WINDOW = 65535


# What a send raises once the server closed or reset the connection (TLS: its alert).
GONE = (BrokenPipeError, ConnectionResetError, ssl.SSLError)


def error_name(code):
    return ERRORS[code] if 0 <= code < len(ERRORS) else "0x%x" % code


class Failed(Exception):
    """A check's assertion did not hold: the message says what was seen."""


class Skip(Exception):
    """The check does not apply here (a TLS check on a plain connection)."""


class Closed(Exception):
    """The server closed the connection (or reset it)."""


def expect(cond, why):
    if not cond:
        raise Failed(why)


def pattern(n, start=0):
    """The bytes of h2_server's /big and /file: byte i is i % 251."""
    period = bytes(range(251))
    first = start % 251
    out = (period[first:] + period * (n // 251 + 2))[:n]
    return out


def hpack_int(value, prefix_bits, first=0):
    """An HPACK integer (RFC 7541 5.1) with @first's high bits in the first byte."""
    top = (1 << prefix_bits) - 1
    if value < top:
        return bytes([first | value])
    out = [first | top]
    value -= top
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def _b(s):
    return s if isinstance(s, bytes) else s.encode()


def literal(name, value, indexing=False):
    """A field as a literal with a new name (no Huffman): "without indexing" (0x00), or
    "with incremental indexing" (0x40) to put it in the server's dynamic table."""
    name, value = _b(name), _b(value)
    first = b"\x40" if indexing else b"\x00"
    return first + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def block(fields):
    return b"".join(literal(n, v) for n, v in fields)


def frame(ftype, flags, sid, payload=b""):
    """One frame as bytes, whatever it holds."""
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", sid & 0x7FFFFFFF) + payload


def settings_frame(settings=None, ack=False):
    body = b"".join(struct.pack(">HI", k, v) for k, v in (settings or {}).items())
    return frame(SETTINGS, ACK if ack else 0, 0, body)


def window_update(sid, n):
    return frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", n))


def rst_stream(sid, code):
    return frame(RST_STREAM, 0, sid, struct.pack(">I", code))


def ping(payload=b"12345678", ack=False):
    return frame(PING, ACK if ack else 0, 0, payload)


class Stream:
    def __init__(self, sid):
        self.sid = sid
        self.status = None
        self.headers = []      # the final response's fields (pseudo-headers left out)
        self.body = bytearray()
        self.ended = False     # END_STREAM came
        self.reset = None      # the RST_STREAM's error code
        self.send_window = DEFAULT_WINDOW
        self.window_updates = 0

    @property
    def done(self):
        return self.ended or self.reset is not None

    def header(self, name):
        for n, v in self.headers:
            if n == name:
                return v
        return None

    def describe(self):
        if self.reset is not None:
            return "stream %d reset %s" % (self.sid, error_name(self.reset))
        return "stream %d status %s body %d bytes%s" % (
            self.sid, self.status, len(self.body), "" if self.ended else " (not ended)")


class Conn:
    """One HTTP/2 connection to the server: prior knowledge on a plain socket, or TLS with
    ALPN h2 verified against the test CA."""

    def __init__(self, server, rcvbuf=None, timeout=5.0, alpn=True):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:  # before connect: the window the kernel offers follows it
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        raw.settimeout(timeout)
        raw.connect((server.host, server.port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.scheme = "http"
        self.alpn = None
        if server.cafile:
            ctx = ssl.create_default_context(cafile=server.cafile)
            if alpn:
                ctx.set_alpn_protocols(["h2"])
            raw = ctx.wrap_socket(raw, server_hostname="localhost")
            self.alpn = raw.selected_alpn_protocol()
            self.scheme = "https"
        self.sock = raw
        self.port = server.port
        self.timeout = timeout
        self.inbuf = bytearray()
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 1 << 24
        self.settings = {}          # the server's
        self.settings_seen = False
        self.streams = {}
        self.goaways = []           # (last_stream_id, error_code, debug) in order
        self.closed = False
        self.send_window = DEFAULT_WINDOW
        self.auto_window = True     # give back what each DATA frame took
        self.auto_ping = True
        self.counts = {}            # received frames by type
        self.next_sid = 1
        self.max_frame = 16384      # ours (SETTINGS_MAX_FRAME_SIZE): the default
        self._block = None          # [sid, bytes, end_stream] while CONTINUATIONs are due

    # --- bytes ------------------------------------------------------------------------
    def send(self, data):
        try:
            self.sock.sendall(data)
        except GONE as e:
            self.closed = True
            raise Closed("send: %s" % e) from e

    def peer_gone(self):
        """Whether the server closed or reset the socket, without reading what it sent."""
        p = select.poll()
        p.register(self.sock.fileno(), select.POLLERR | select.POLLHUP | select.POLLRDHUP)
        return any(ev & (select.POLLERR | select.POLLHUP | select.POLLRDHUP)
                   for _, ev in p.poll(0))

    def backlog(self):
        """The bytes we sent that the server's program has not read yet: ours still queued
        (TIOCOUTQ) and its socket's receive queue (/proc/net/tcp, both ends on this
        machine); None once the connection is gone."""
        ours = self.sock.getsockname()[1]
        want = ":%04X" % self.port, ":%04X" % ours
        try:
            queued = struct.unpack("i", fcntl.ioctl(self.sock.fileno(), termios.TIOCOUTQ,
                                                    b"\0" * 4))[0]
            with open("/proc/net/tcp") as f:
                for line in f:
                    fields = line.split()
                    if fields[1].endswith(want[0]) and fields[2].endswith(want[1]):
                        return queued + int(fields[4].split(":")[1], 16)
        except OSError:
            pass
        return None

    def _fill(self, deadline):
        """Read more bytes; False at the deadline; Closed at the end of the stream."""
        pending = self.sock.pending() if isinstance(self.sock, ssl.SSLSocket) else 0
        if not pending:
            left = max(0.0, deadline - time.monotonic())  # 0: only what is there
            if not select.select([self.sock], [], [], left)[0]:
                return False
        try:
            got = self.sock.recv(1 << 16)
        except (ConnectionResetError, BrokenPipeError) as e:
            self.closed = True
            raise Closed("recv: %s" % e) from e
        except (ssl.SSLWantReadError, socket.timeout):  # a TLS record not whole yet
            return True
        except ssl.SSLError as e:
            self.closed = True
            raise Closed("TLS: %s" % e) from e
        if not got:
            self.closed = True
            raise Closed("end of stream")
        self.inbuf += got
        return True

    def recv_frame(self, timeout=None):
        """The next frame (hyperframe's), or None when none came within @timeout."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while len(self.inbuf) < 9 or len(self.inbuf) < 9 + int.from_bytes(self.inbuf[:3], "big"):
            if self.inbuf.startswith(b"HTTP/1."):  # no HTTP/2 at all: say what came instead
                raise Failed("the server answered HTTP/1: %r"
                             % bytes(self.inbuf.split(b"\r\n")[0]))
            if not self._fill(deadline):
                return None
        f, length = hf.Frame.parse_frame_header(memoryview(bytes(self.inbuf[:9])))
        if length > self.max_frame:  # RFC 9113 4.2: never past what we allowed
            raise Failed("a %s frame of %d bytes, past our SETTINGS_MAX_FRAME_SIZE %d"
                         % (type(f).__name__, length, self.max_frame))
        body = bytes(self.inbuf[9:9 + length])
        del self.inbuf[:9 + length]
        f.parse_body(memoryview(body))
        self.counts[f.type] = self.counts.get(f.type, 0) + 1
        self._handle(f)
        return f

    # --- what arrives -------------------------------------------------------------------
    def stream(self, sid):
        if sid not in self.streams:
            s = Stream(sid)
            s.send_window = self.settings.get(S_INITIAL_WINDOW_SIZE, DEFAULT_WINDOW)
            self.streams[sid] = s
        return self.streams[sid]

    def _handle(self, f):
        if f.type == SETTINGS and "ACK" not in f.flags:
            old = self.settings.get(S_INITIAL_WINDOW_SIZE, DEFAULT_WINDOW)
            self.settings.update(f.settings)
            delta = self.settings.get(S_INITIAL_WINDOW_SIZE, DEFAULT_WINDOW) - old
            for s in self.streams.values():
                s.send_window += delta
            self.settings_seen = True
            self.send(settings_frame(ack=True))
        elif f.type == PING and "ACK" not in f.flags and self.auto_ping:
            self.send(ping(f.opaque_data, ack=True))
        elif f.type == GOAWAY:
            self.goaways.append((f.last_stream_id, f.error_code, f.additional_data))
        elif f.type == WINDOW_UPDATE:
            if f.stream_id == 0:
                self.send_window += f.window_increment
            else:
                s = self.stream(f.stream_id)
                s.send_window += f.window_increment
                s.window_updates += 1
        elif f.type == RST_STREAM:
            self.stream(f.stream_id).reset = f.error_code
        elif f.type in (HEADERS, CONTINUATION):
            if f.type == HEADERS:
                self._block = [f.stream_id, bytes(f.data), "END_STREAM" in f.flags]
            else:
                self._block[1] += bytes(f.data)
            if "END_HEADERS" in f.flags:
                sid, data, end = self._block
                self._block = None
                self._headers(self.stream(sid), self.decoder.decode(data, raw=False), end)
        elif f.type == DATA:
            s = self.stream(f.stream_id)
            s.body += f.data
            s.ended = s.ended or "END_STREAM" in f.flags
            n = f.flow_controlled_length
            if self.auto_window and n:
                self.send(window_update(0, n) + (window_update(f.stream_id, n)
                                                 if not s.ended else b""))

    @staticmethod
    def _headers(s, fields, end):
        bad = [n for n, _ in fields if n != n.lower()]
        expect(not bad, "uppercase field names in a response (RFC 9113 8.2.1): %s" % bad)
        status = dict(fields).get(":status")
        expect(status is not None or s.status is not None, "a response without :status on "
               "stream %d: %s" % (s.sid, fields))
        if status is not None and status.startswith("1"):
            return  # an interim response
        if s.status is None:
            s.status = int(status) if status is not None else None
            s.headers = [(n, v) for n, v in fields if not n.startswith(":")]
        s.ended = s.ended or end

    def pump(self, until=lambda: False, timeout=None):
        """Handle frames until @until() holds (True) or @timeout passed (False). Closed
        when the server ends the connection first."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not until():
            left = deadline - time.monotonic()
            if left <= 0 or self.recv_frame(left) is None:
                return until()
        return True

    def drain(self, timeout):
        """Read until the server closes (True) or @timeout passes (False)."""
        try:
            self.pump(timeout=timeout)
        except Closed:
            return True
        return False

    # --- what we send -------------------------------------------------------------------
    def start(self, settings=None):
        """The preface and our SETTINGS (no push: a PUSH_PROMISE's header block would have
        to be decoded too); back once the server's SETTINGS came."""
        settings = {S_ENABLE_PUSH: 0, **(settings or {})}
        self.max_frame = settings.get(S_MAX_FRAME_SIZE, self.max_frame)
        self.send(PREFACE + settings_frame(settings))
        expect(self.pump(lambda: self.settings_seen), "no SETTINGS from the server")
        return self.settings

    def new_sid(self):
        sid = self.next_sid
        self.next_sid += 2
        return sid

    def request_fields(self, method, path, extra=()):
        return [(":method", method), (":scheme", self.scheme), (":path", path),
                (":authority", "localhost")] + list(extra)

    def headers(self, sid, fields_block, end_stream=True):
        """A header block on @sid: HEADERS, then CONTINUATIONs past the frame size."""
        size = self.settings.get(S_MAX_FRAME_SIZE, 16384)
        parts = [fields_block[i:i + size] for i in range(0, len(fields_block), size)] or [b""]
        out = []
        for i, part in enumerate(parts):
            flags = (END_HEADERS if i == len(parts) - 1 else 0)
            if i == 0:
                out.append(frame(HEADERS, flags | (END_STREAM if end_stream else 0), sid, part))
            else:
                out.append(frame(CONTINUATION, flags, sid, part))
        self.stream(sid)
        self.send(b"".join(out))

    def request(self, method, path, body=None, extra=(), end_stream=None):
        sid = self.new_sid()
        if end_stream is None:
            end_stream = body is None
        self.headers(sid, block(self.request_fields(method, path, extra)), end_stream)
        if body is not None:
            self.send_body(sid, body)
        return sid

    def send_body(self, sid, data, end=True, on_progress=None):
        """@data in DATA frames within the server's windows, waiting for WINDOW_UPDATEs; the
        count sent. Stops early when the server ended or reset the stream (it may answer
        before the whole request came, RFC 9113 8.1): the caller judges that."""
        s, sent = self.stream(sid), 0
        size = self.settings.get(S_MAX_FRAME_SIZE, 16384)
        deadline = time.monotonic() + 30
        while sent < len(data) or (end and sent == 0 and not data):
            if s.done:
                break
            n = min(size, self.send_window, s.send_window, len(data) - sent)
            if n <= 0 and data:
                if on_progress:
                    on_progress(sent, True)
                expect(time.monotonic() < deadline, "no window for 30 s (%d of %d sent)"
                       % (sent, len(data)))
                self.recv_frame(0.2)
                continue
            last = sent + n == len(data)
            self.send(frame(DATA, END_STREAM if end and last else 0, sid, data[sent:sent + n]))
            self.send_window -= n
            s.send_window -= n
            sent += n
            if on_progress:
                on_progress(sent, False)
            if not data:
                break
        return sent

    def get(self, path, method="GET", extra=(), timeout=None):
        sid = self.request(method, path, extra=extra)
        self.pump(lambda: self.streams[sid].done, timeout)
        return self.streams[sid]

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# --- the checks' registry (h2_frames.py, h2_attacks.py) ----------------------------------
JSON = b'{"message":"Hello, World!"}'  # h2_server's /json
CHECKS = []  # (name, function, which server: "main" or "stop", late)


def check(server="main", late=False):
    """Register a check of @server's; @late ones run after the others on it (an attack that
    brings the server down then spoils no other check)."""
    def add(fn):
        CHECKS.append((fn.__name__, fn, server, late))
        return fn
    return add


def still_serves(c, what):
    """The connection goes on after a stream error: a GET on it is answered."""
    s = c.get("/json")
    expect(s.status == 200 and bytes(s.body) == JSON,
           "after %s the connection does not answer: %s" % (what, s.describe()))


def read_all(c):
    """Handle the frames there are now (a close's GOAWAY stays readable before the reset)."""
    try:
        while c.recv_frame(0) is not None:
            pass
    except Closed as e:
        return str(e)
    return None


def flood(c, frames, per_batch, limit_bytes, seconds, read=False, pace=False):
    """Send @frames() batches until the server closes: (closed, bytes the server read, how).
    @pace: each batch waits (0.5 s at most) until the server's program read the one before,
    so that what the kernel buffers (megabytes on loopback) does not count as read. A server
    that stops reading is given the rest of @seconds to close."""
    sent, deadline = 0, time.monotonic() + seconds
    c.sock.settimeout(0.5)
    stalled = False

    def taken():  # what the server read of it (a batch cut short by a close may be in part)
        return max(0, sent - (c.backlog() or 0))
    while sent < limit_bytes and time.monotonic() < deadline and not stalled:
        batch = frames(per_batch)
        try:
            c.sock.sendall(batch)
        except GONE as e:
            if read:
                read_all(c)
            return True, taken(), "send: %s" % e
        except OSError:  # a send timeout: the server reads no more; does it close?
            break
        sent += len(batch)
        until = time.monotonic() + 0.5
        while True:
            gone = read_all(c) if read else None
            if gone:
                return True, taken(), gone
            if c.peer_gone():  # its end may have come after what read_all() read: a GOAWAY
                if read:
                    read_all(c)
                return True, taken(), "closed"
            if not pace or not c.backlog() or time.monotonic() > until:
                stalled = pace and bool(c.backlog())
                break
            time.sleep(0.001)
    while time.monotonic() < deadline:
        if read:
            read_all(c)
        if c.peer_gone():
            if read:
                read_all(c)
            return True, taken(), "closed (after it stopped reading)"
        time.sleep(0.05)
    return False, taken(), "open" + (" (it stopped reading)" if stalled else "")


@contextlib.contextmanager
def session(server, settings=None, **kw):
    """A Conn to @server (Conn's keywords), started with our @settings, closed at the end
    whatever the check found."""
    c = Conn(server, **kw)
    try:
        c.start(settings)
        yield c
    finally:
        c.close()


class Server:
    """h2_server as a child process: started with --port 0, its port read from its first
    line; stopped with SIGTERM, its counters read from its last lines."""

    def __init__(self, program, certs=None, backend=None, args=()):
        cmd = [program, "--port", "0"] + list(args)
        self.cafile = None
        if certs:
            cmd += ["--tls", certs, "--backend", backend]
            self.cafile = os.path.join(certs, "ca.pem")
        self.host = "127.0.0.1"
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        self.port = None
        deadline = time.monotonic() + 10
        while self.port is None and time.monotonic() < deadline:
            if not select.select([self.proc.stdout], [], [], deadline - time.monotonic())[0]:
                break
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith("port "):
                self.port = int(line.split()[1])
        if self.port is None:
            code = self.proc.poll()
            if code is None:
                self.proc.kill()
                code = self.proc.wait()
            self.exit_code = code
            raise RuntimeError("%s did not say its port (exit %s)" % (" ".join(cmd), code))
        self.exit_code = None
        self.stop_seconds = None
        self.counters = {}

    def connect(self, **kw):
        return Conn(self, **kw)

    def alive(self):
        return self.proc.poll() is None

    def status_kb(self, field):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def reset_peak(self):
        """Start VmHWM (the peak RSS) again from the present RSS, when the kernel lets us."""
        try:
            with open("/proc/%d/clear_refs" % self.proc.pid, "w") as f:
                f.write("5")
            return True
        except OSError:
            return False

    def signal(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)

    def stop(self, timeout=15):
        """SIGTERM, then the exit status and the counters it printed (a kill past
        @timeout: exit status None)."""
        t0 = time.monotonic()
        if self.alive():
            self.signal()
        try:
            out, _ = self.proc.communicate(timeout=timeout)
            self.stop_seconds = time.monotonic() - t0
            self.exit_code = self.proc.returncode
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            self.exit_code = None
        self.counters = parse_counters(out)
        return self.exit_code


def parse_counters(text):
    """h2_server's counter lines ("h2 connections 3 streams 9 ...", "http ...", at its exit
    and from /stats) as {"h2.connections": 3, ...}."""
    out = {}
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in ("h2", "http", "core"):
            for k, v in zip(words[1::2], words[2::2]):
                out["%s.%s" % (words[0], k)] = int(v)
    return out
