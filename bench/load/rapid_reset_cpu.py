#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rapid_reset_cpu.py: the server's CPU under a Rapid Reset flood (CVE-2023-44487) beside its
CPU for normal requests, as issue 26 bounds it: 20,000 HEADERS+RST_STREAM pairs must cost at
most twice what 2,000 whole requests do.

usage: bench/load/rapid_reset_cpu.py H2_SERVER [ROUNDS [SCALE]]
  H2_SERVER: tests/http2's h2_server (build/bin/h2_server), started here on a free port.
Each round: 2,000 x SCALE GET /json with h2load (-c 1 -m 10), then 20,000 x SCALE pairs
(SCALE 10 by default: the kernel counts CPU time in 10 ms ticks) sent by raw h2c
connections (a new one whenever the server ends one, as it does past its reset limit); the
server's utime+stime from /proc/PID/stat around each. Prints each round and the medians.
Loopback only; every wait is bounded; the server is stopped by its PID."""
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "http2"))
import h2wire as w  # noqa: E402  (the tests' frame helpers)

HZ = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def flood(port, pairs):
    """Send @pairs HEADERS+RST_STREAM pairs over as many connections as it takes: (connections)."""
    import hpack
    head = hpack.Encoder().encode([(":method", "GET"), (":path", "/json"), (":scheme", "http"),
                                   (":authority", "127.0.0.1")])
    sent, conns, deadline = 0, 0, time.monotonic() + 60
    while sent < pairs and time.monotonic() < deadline:
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(2)
        conns += 1
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + w.frame(w.SETTINGS, 0, 0, b""))
        sid = 1
        try:
            while sent < pairs:
                batch = []
                for _ in range(100):
                    batch.append(w.frame(w.HEADERS, w.END_STREAM | w.END_HEADERS, sid, head) +
                                 w.rst_stream(sid, w.CANCEL))
                    sid += 2
                s.sendall(b"".join(batch))
                sent += 100
                s.setblocking(False)
                try:
                    while True:  # what the server sent, unread, would stall it
                        if not s.recv(65536):
                            raise ConnectionResetError
                except BlockingIOError:
                    pass
                s.settimeout(2)
        except OSError:
            pass  # ended by the server (GOAWAY): the next connection goes on
        s.close()
    return conns


def main():
    server = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    scale = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    p = subprocess.Popen([server, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        port = None
        while port is None:
            line = p.stdout.readline()
            if not line:
                sys.exit("h2_server did not start")
            if line.startswith("port "):
                port = int(line.split()[1])
        normal, attack = [], []
        for r in range(rounds):
            c0 = cpu(p.pid)
            subprocess.run(["timeout", "60", "h2load", "-n", str(2000 * scale), "-c", "1", "-m", "10",
                            "http://127.0.0.1:%d/json" % port], check=True,
                           stdout=subprocess.DEVNULL)
            c1 = cpu(p.pid)
            conns = flood(port, 20000 * scale)
            time.sleep(0.2)
            c2 = cpu(p.pid)
            normal.append(c1 - c0)
            attack.append(c2 - c1)
            print("round %d: %d requests %.2f s CPU; %d HEADERS+RST pairs %.2f s CPU over %d "
                  "connections" % (r + 1, 2000 * scale, c1 - c0, 20000 * scale, c2 - c1, conns))
        n, a = statistics.median(normal), statistics.median(attack)
        print("median: requests %.3f s, pairs %.3f s: the flood costs %.2f x the requests "
              "(bound: 2 x)" % (n, a, a / n if n else float("inf")))
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


if __name__ == "__main__":
    main()
