#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cpu_split.sh: user and system CPU per request of one HTTP server under wrk, from the
# server's utime and stime in /proc/PID/stat (clock ticks) over a measured run. For changes
# that only touch user space, whose effect is smaller than the spread of the total on a
# shared machine: user time moves with them, the kernel's part does not. Run it for each
# server in turn, in interleaved rounds, and compare per-round ratios.
#
# usage: bench/load/cpu_split.sh [--secs S] [--depth D] NAME CMD PATH CONNS
#   CMD      the server's command, {port} replaced by the port; it must exec the server
#   PATH     the request path (/json); CONNS: wrk's connections
#   --secs S measured seconds (default 5), after a 1 s warm-up run
#   --depth D requests pipelined per connection (bench/load/wrk/pipeline.lua; default 1)
# Prints: NAME reqs N  us/req user U sys S total T
# The server runs on CPU 1, wrk -t1 on CPU 0; loopback only; the server is stopped by its
# PID (SIGTERM, then SIGKILL after 5 s); every wait is bounded.
set -euo pipefail
secs=5 depth=1
while [[ $# -gt 0 && $1 == --* ]]; do
	case $1 in
	--secs) secs=$2; shift 2 ;;
	--depth) depth=$2; shift 2 ;;
	*) echo "cpu_split: unknown option $1" >&2; exit 2 ;;
	esac
done
[[ $# -eq 4 ]] || { sed -n 3,17p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
name=$1 cmd=$2 path=$3 conns=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v wrk >/dev/null || { echo "cpu_split: wrk is required" >&2; exit 1; }
port=$((20000 + RANDOM % 10000))
out=$(mktemp)
# shellcheck disable=SC2086 # the command is split into words on purpose
taskset -c 1 ${cmd//\{port\}/$port} >/dev/null 2>&1 &
pid=$!
stop() {
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$out"
}
trap stop EXIT
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	sleep 0.05
done
lua=()
[[ $depth -gt 1 ]] && lua=(-s "$here/wrk/pipeline.lua")
wrk_run() { # seconds
	taskset -c 0 wrk -t1 -c"$conns" -d"$1" --timeout 5s "${lua[@]}" \
		"http://127.0.0.1:$port$path" -- "$depth"
}
wrk_run 1 >/dev/null 2>&1
read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
wrk_run "$secs" >"$out" 2>&1
read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
reqs=$(awk '/requests in/ {print $1}' "$out")
[[ -n $reqs && $reqs -gt 0 ]] || { echo "cpu_split: wrk made no request" >&2; exit 1; }
awk -v r="$reqs" -v n="$name" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$(getconf CLK_TCK)" \
	'BEGIN { printf "%-14s reqs %d  us/req user %.2f sys %.2f total %.2f\n", n, r,
		u / hz * 1e6 / r, s / hz * 1e6 / r, (u + s) / hz * 1e6 / r }'
