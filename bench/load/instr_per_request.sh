#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# instr_per_request.sh: user-space instructions per HTTP request of one or more servers,
# counted by callgrind, which does not depend on what else the machine runs (wall-clock CPU
# on a shared 2-core machine moves by ±10-20 % between rounds; this does not). Each server
# runs under `valgrind --tool=callgrind` twice, answering N1 and then N2 requests of
# `GET /json` from a small client (4 connections, DEPTH requests per write); the difference
# of the two instruction totals over N2 - N1 is the cost of one request, start-up and
# shutdown cancelled. The kernel's work is not counted.
#
# usage: bench/load/instr_per_request.sh [--depth D] [--rounds R1 R2] NAME=CMD...
#   CMD is the server's command with {port} for its port, e.g.
#   bench/load/instr_per_request.sh before="/tmp/old/bin/http --workers 1 --port {port}" \
#                                   after="build/bin/http --workers 1 --port {port}"
#   --depth D      requests per write on each connection (default 1)
#   --rounds R1 R2 writes per connection in the two runs (default 250 1250)
# Loopback only; every server is stopped by its PID (SIGTERM); every wait is bounded.
set -euo pipefail
depth=1 r1=250 r2=1250
while [[ $# -gt 0 && $1 == --* ]]; do
	case $1 in
	--depth) depth=$2; shift 2 ;;
	--rounds) r1=$2 r2=$3; shift 3 ;;
	*) echo "instr_per_request: unknown option $1" >&2; exit 2 ;;
	esac
done
[[ $# -gt 0 ]] || { sed -n 3,19p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
command -v valgrind >/dev/null || { echo "instr_per_request: valgrind is required" >&2; exit 1; }
PY=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/client.py" <<'PY'
import socket, sys
port, conns, depth, rounds = map(int, sys.argv[1:5])
req = b"GET /json HTTP/1.1\r\nHost: localhost\r\n\r\n"
ss = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(conns)]
for _ in range(rounds):
    for s in ss:
        s.sendall(req * depth)
    for s in ss:
        buf = b""
        while buf.count(b"HTTP/1.1 200") < depth:
            d = s.recv(65536)
            if not d:
                sys.exit("instr_per_request: the server closed a connection")
            buf += d
for s in ss:
    s.close()
PY

# instructions CMD ROUNDS: the server's total instructions for 4 x depth x ROUNDS requests
instructions() {
	local port=$((20000 + RANDOM % 10000)) out="$work/cg.out" pid _
	rm -f "$out"
	# shellcheck disable=SC2086 # the command is split into words on purpose
	valgrind --tool=callgrind --callgrind-out-file="$out" ${1//\{port\}/$port} >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 150); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		kill -0 $pid 2>/dev/null || { echo "instr_per_request: '$1' died" >&2; return 1; }
		sleep 0.2
	done
	timeout 300 $PY "$work/client.py" "$port" 4 "$depth" "$2" || { kill $pid; return 1; }
	kill -TERM $pid
	wait $pid || true
	awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

printf '| server | instructions per request (depth %s, %s vs %s writes per connection) |\n|---|---:|\n' \
	"$depth" "$r1" "$r2"
for spec in "$@"; do
	name=${spec%%=*} cmd=${spec#*=}
	a=$(instructions "$cmd" "$r1")
	b=$(instructions "$cmd" "$r2")
	printf '| %s | %d |\n' "$name" $(((b - a) / (4 * depth * (r2 - r1))))
done
