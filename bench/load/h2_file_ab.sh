#!/bin/bash
# SPDX-License-Identifier: MIT
# h2_file_ab.sh OLD NEW ROUNDS - an A/B of HTTP/2 file bodies: two builds of tests/http2/h2_server
# (OLD and NEW, paths to the binaries), pinned to core 1, each in turn (interleaved) serving
# 1,200 GETs of its 1 MiB /file (sendfile) to h2load -c 2 -m 4 pinned to core 0 after 100
# warm-up requests; prints the server's CPU (utime + stime, in clock ticks) per round.
# Every h2load runs under timeout; each server is stopped by its PID after its round (and at
# exit), taskset exec'ing it so that the PID measured is the server's.
# H2LOAD_FLAGS: more h2load options for every run, e.g. "--max-frame-size=1M" (the
# client's SETTINGS_MAX_FRAME_SIZE; a server may then send larger DATA frames).
set -u
[ $# -eq 3 ] || {
	echo "usage: $0 OLD NEW ROUNDS" >&2
	exit 2
}
old=$1 new=$2 rounds=$3
read -r -a extra <<<"${H2LOAD_FLAGS:-}"
out=$(mktemp)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -f "$out" "$out.h2load"' EXIT

# ticks PID: the process's user + system CPU so far.
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# run BIN: one round against BIN; prints its ticks for the measured requests.
run() {
	local bin=$1 port a b
	: >"$out" # not the last round's port
	taskset -c 1 "$bin" --host 127.0.0.1 >"$out" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		grep -q '^port' "$out" && break
		sleep 0.1
	done
	port=$(awk '/^port/ { print $2 }' "$out")
	timeout 60 taskset -c 0 h2load -n 100 -c 2 -m 4 "${extra[@]}" "http://127.0.0.1:$port/file" >/dev/null 2>&1
	a=$(ticks "$pid")
	timeout 60 taskset -c 0 h2load -n 1200 -c 2 -m 4 "${extra[@]}" "http://127.0.0.1:$port/file" >"$out.h2load" 2>&1
	b=$(ticks "$pid")
	kill "$pid"
	wait "$pid" 2>/dev/null
	pid=
	grep -q "1200 succeeded" "$out.h2load" || echo "h2load failed against $bin" >&2
	echo $((b - a))
}

echo "clock ticks per second: $(getconf CLK_TCK)"
for r in $(seq "$rounds"); do
	o=$(run "$old")
	n=$(run "$new")
	echo "round $r: old $o ticks, new $n ticks (1,200 requests of 1 MiB)"
done
