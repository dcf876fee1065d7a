#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tls_conn_instr.sh: user-space instructions per new HTTPS connection of giong-serve (one
# request each, `curl --tlsv1.3`), counted by callgrind, which does not depend on what else
# the machine runs: the server answers N1 and then N2 connections under
# `valgrind --tool=callgrind`, and the difference of the totals over N2 - N1 is one
# connection's cost (handshake, request, close), start-up and shutdown cancelled.
#
# usage: bench/load/tls_conn_instr.sh [--rounds N1 N2] SERVE_BIN BACKEND [VAR=VALUE...]
#   BACKEND  wolfssl or openssl; VAR=VALUE: the server's environment (GIONG_TLS_KTLS=off)
# Loopback only; the server is stopped by its PID; every wait is bounded.
set -euo pipefail
n1=20 n2=120
if [[ ${1:-} == --rounds ]]; then
	n1=$2 n2=$3
	shift 3
fi
[[ $# -ge 2 ]] || { sed -n 3,12p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
bin=$1 backend=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
for c in valgrind curl callgrind_annotate; do
	command -v $c >/dev/null || { echo "tls_conn_instr: $c is required" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
echo hello >"$work/root/h.txt"
sh "$here/../../tests/tls/make-certs.sh" "$work/certs" >/dev/null 2>&1

# total N: the server's instructions for N connections
total() {
	local port=$((30000 + RANDOM % 5000)) pid _
	env "$@" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin" "$work/root" \
		--bind 127.0.0.1 --port "$port" --https-port $((port + 1)) --workers 1 \
		--tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
		--tls-backend "$backend" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		curl -sk -o /dev/null --max-time 5 "https://127.0.0.1:$((port + 1))/h.txt" 2>/dev/null && break
		sleep 0.1
	done
	for _ in $(seq "$n"); do
		curl -sk --tlsv1.3 --max-time 10 -o /dev/null "https://127.0.0.1:$((port + 1))/h.txt" ||
			{ echo "tls_conn_instr: a request failed (port $((port + 1)))" >&2; kill "$pid"; exit 1; }
	done
	kill -0 "$pid" 2>/dev/null || { echo "tls_conn_instr: the server ended early" >&2; exit 1; }
	kill "$pid"
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	callgrind_annotate "$work/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
n=$n1
a=$(total "$@")
n=$n2
b=$(total "$@")
echo "$backend ${*:-(default environment)}: $(((b - a) / (n2 - n1))) instructions per connection"
