#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""shutdown_tool.py HTTP_BIN [N] - graceful shutdown of the example server examples/http under load.

First, without --host, the server must listen on IPv4 and IPv6 both: GET /health answered
on 127.0.0.1 and on [::1] (the IPv6 half skipped, said, on a machine without IPv6).
Then twice, each time with a fresh server (--workers 2 --host 127.0.0.1):
  1. with a grace period (--grace-ms 10000): N (200) connections each send
     GET /slow?ms=3000; once the server holds all N (its descriptors, in /proc) and has
     had 0.5 s to read them, SIGTERM. Every one of the N must be answered 200
     "slept 3000 ms" with Connection: close, and the server must exit 0 within the
     sleep plus 5 s;
  2. without one (--grace-ms 0: the requests in progress are cancelled at once): the
     same N, SIGTERM; the server must exit 0 within 5 s and every connection must end
     (answered or closed, none left hanging); the count answered is printed (0 is
     expected: a sleeping handler is cancelled, and a cancelled task sends nothing).
The ports are tried from 20000-31999 (below the ephemeral range), in an order of the
process's own, each free on 127.0.0.1 and [::1] first. Every wait is bounded; the server is
stopped by its PID. Exit 0 (pass) or 1 (fail: a server that cannot start is one).
"""
import os
import re
import selectors
import socket
import subprocess
import sys
import time

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 200
SLEEP_MS = 3000


# Ports to try: from 20000-31999, below the ephemeral range (32768-60999) where the kernel
# hands out the ports of other tests' connections, in an order of this process's own (its
# PID: the tests started beside it under ctest -j2 have others).
PORT_LO, PORT_SPAN = 20000, 12000
port_next = (os.getpid() * 131) % PORT_SPAN


def bind_free(family, addr, port):
    """Can @addr:@port be bound (no SO_REUSEPORT: a listener of another server there, which
    examples/http would refuse, counts; IPv6 only, as examples/http binds [::] beside 0.0.0.0)?"""
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((addr, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def has_ipv6():
    try:
        s = socket.socket(socket.AF_INET6)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def free_port():
    """The next port of our order free on 127.0.0.1 and (where there is IPv6) [::1]."""
    global port_next
    v6 = has_ipv6()
    for _ in range(200):
        port = PORT_LO + port_next
        port_next = (port_next + 1) % PORT_SPAN
        if bind_free(socket.AF_INET, "0.0.0.0", port) and (
                not v6 or bind_free(socket.AF_INET6, "::", port)):
            return port
    fail("no free port in 200 tries from 20000-31999")


def fdcount(pid):
    """The server's descriptors, and the sockets in its rings' tables of direct
    descriptors (accepted TCP connections have no descriptor there: libgiong-net's
    tcp.h), which each ring's fdinfo lists as "<slot>: socket:[inode]"."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return -1
    n = len(fds)
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:[io_uring]":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                n += sum(1 for line in f if re.match(r"\s*\d+: socket:", line))
        except OSError:
            pass
    return n


def start(grace_ms, host=("--host", "127.0.0.1")):
    # A port taken between our test and its bind ("in use by another server": examples/http
    # refuses a port another server holds) is tried again; any other failure to start fails.
    for _ in range(5):
        port = free_port()
        log = open(f"/tmp/shutdown_tool.{os.getpid()}.log", "w+")
        srv = subprocess.Popen([BIN, "--workers", "2", *host, "--port", str(port),
                                "--grace-ms", str(grace_ms)], stdout=log, stderr=log)
        until = time.monotonic() + 20  # stops early if the server died
        while time.monotonic() < until and srv.poll() is None:
            log.seek(0)
            if "HTTP on" in log.read():
                return srv, port, log
            time.sleep(0.05)
        log.seek(0)
        said = log.read()
        if srv.poll() is None:
            fail(f"the server did not start on port {port} in 20 s", srv, log)
        if "in use" not in said:
            fail(f"the server exited with {srv.returncode} on port {port}", srv, log)
        srv.wait()
        log.close()
        os.unlink(log.name)
    fail("the server did not start in five tries: each port was taken before it bound it")


def fail(msg, srv=None, log=None):
    print(f"FAIL: {msg}")
    if log:
        log.seek(0)
        sys.stdout.write(log.read()[-2000:])
    if srv and srv.poll() is None:
        srv.kill()
        srv.wait()
    sys.exit(1)


def run(grace_ms):
    srv, port, log = start(grace_ms)
    idle = fdcount(srv.pid)
    conns = []
    req = (f"GET /slow?ms={SLEEP_MS} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").encode()
    for _ in range(N):
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(req)
        c.setblocking(False)
        conns.append(c)
    # All N accepted (a descriptor each), then time to read their requests (20 s at most: a
    # sanitized build beside other tests; it goes on as soon as they are).
    until = time.monotonic() + 20
    while fdcount(srv.pid) < idle + N:
        if time.monotonic() > until:
            fail(f"the server holds {fdcount(srv.pid)} descriptors, expected {idle + N}", srv, log)
        time.sleep(0.02)
    time.sleep(0.5)
    t0 = time.monotonic()
    srv.terminate()  # SIGTERM
    sel = selectors.DefaultSelector()
    got = {}
    for c in conns:
        sel.register(c, selectors.EVENT_READ)
        got[c] = b""
    open_conns = len(conns)
    until = t0 + SLEEP_MS / 1000 + 10
    while open_conns and time.monotonic() < until:
        for key, _ in sel.select(timeout=0.2):
            c = key.fileobj
            try:
                data = c.recv(65536)
            except ConnectionResetError:
                data = b""
            if data:
                got[c] += data
            else:
                sel.unregister(c)
                c.close()
                open_conns -= 1
    if open_conns:
        fail(f"{open_conns} connections neither answered nor closed within "
             f"{SLEEP_MS / 1000 + 10:.0f} s of SIGTERM", srv, log)
    try:
        rc = srv.wait(timeout=max(0.1, t0 + SLEEP_MS / 1000 + 5 - time.monotonic()))
    except subprocess.TimeoutExpired:
        fail("the server did not exit after SIGTERM", srv, log)
    took = time.monotonic() - t0
    if rc != 0:
        fail(f"the server exited with {rc}", srv, log)
    body = f"slept {SLEEP_MS} ms\n".encode()
    answered = 0
    for data in got.values():
        head, _, rest = data.partition(b"\r\n\r\n")
        if (head.startswith(b"HTTP/1.1 200 ") and b"\r\nconnection: close" in head.lower()
                and rest == body):
            answered += 1
        elif data:
            fail(f"an answer that is not the slow request's: {data[:200]!r}", None, log)
    log.close()
    os.unlink(log.name)
    return answered, took


def health(family, addr, port):
    c = socket.socket(family, socket.SOCK_STREAM)
    c.settimeout(5)
    c.connect((addr, port))
    c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        d = c.recv(4096)
        if not d:
            break
        data += d
    c.close()
    return data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"\r\n\r\nok")


def listens_both():
    srv, port, log = start(1000, ())
    try:
        if not health(socket.AF_INET, "127.0.0.1", port):
            fail("GET /health on 127.0.0.1 (the default listeners)", srv, log)
        try:
            v6 = socket.socket(socket.AF_INET6)
            v6.bind(("::1", 0))
            v6.close()
        except OSError:
            print("no IPv6 on this machine: [::1] not tried")
        else:
            if not health(socket.AF_INET6, "::1", port):
                fail("GET /health on [::1] (the default listeners)", srv, log)
            print(f"default listeners: 127.0.0.1 and [::1] port {port} answer")
    except OSError as e:
        fail(f"default listeners: {e}", srv, log)
    srv.terminate()
    if srv.wait(timeout=10) != 0:
        fail("the server did not exit 0 after SIGTERM", None, log)
    log.close()
    os.unlink(log.name)


listens_both()
answered, took = run(10000)
print(f"grace 10 s: {answered} of {N} slow requests ({SLEEP_MS} ms) in progress at SIGTERM answered; "
      f"server exited 0 {took:.1f} s after it")
if answered != N:
    fail(f"with the grace period only {answered} of {N} were answered")
answered, took = run(0)
print(f"grace 0: {answered} of {N} answered, the other {N - answered} closed unanswered; "
      f"server exited 0 {took:.1f} s after SIGTERM")
if took > 5:
    fail("without a grace period the server took over 5 s to stop")
print("ok: graceful shutdown under load")
