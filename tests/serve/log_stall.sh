#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# log_stall.sh SERVE_BIN [LOAD_BIN] - giong-serve --log whose standard output stops taking
# lines (a pipe nobody reads, as a stuck log shipper leaves it): the worker must go on
# serving, every request answered at once, the lines it cannot hold dropped and counted,
# and a stop must not wait for the pipe; once the pipe is read again, every line that was
# kept comes out whole and well formed, and the count said at exit plus the lines read is
# the number of requests. (A worker that wrote its log with write(2) would stop, with every
# connection it serves, once the pipe was full.) With LOAD_BIN (giong-load): two workers
# under load into a file opened with ">" and one opened with ">>": no line lost or broken.
# Every wait is bounded; the server is stopped by its PID.
set -u
bin=$1 load=${2:-}
command -v curl >/dev/null || { echo "FAIL: curl is not installed (scripts/install-deps)"; exit 1; }
work=$(mktemp -d)
pid= reader=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "$reader" ] && kill "$reader" 2>/dev/null
	exec 3<&- 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # a timeout's signal: the EXIT trap still ends the server
fail() {
	echo "FAIL: $*"
	cat "$work/server.err"
	exit 1
}
mkdir "$work/root"
echo stalled >"$work/root/hello.txt"
# fresh_pipe - a new FIFO as $fifo, held open on descriptor 3 and not read: the pipe fills
# (64 KiB) and stays full. Each phase has its own: what a server of an earlier phase left
# in its pipe cannot come out in a later phase's reading (its lines + dropped = requests).
fifos=0
fresh_pipe() {
	exec 3<&- 2>/dev/null
	fifos=$((fifos + 1))
	fifo=$work/log$fifos
	mkfifo "$fifo" || fail "mkfifo $fifo"
	exec 3<>"$fifo"
}
requests=6000       # ~450 KB of lines: more than the pipe and the worker's two buffers
. "$(dirname "$0")/../support/ports.sh" # port_base
next_port=0
# start_server OUT APPEND WORKERS [ARGS...] - the server with --log into OUT (opened to
# append when APPEND is 1, else at its start) on a free port; sets pid and port
start_server() {
	local out=$1 append=$2 workers=$3 try
	shift 3
	for try in 1 2 3 4 5; do
		port=$((port_base + next_port))
		next_port=$((next_port + 1))
		if [ "$append" = 1 ]; then exec 5>>"$out"; else exec 5>"$out"; fi
		"$bin" "$work/root" --port $port --bind 127.0.0.1 --workers "$workers" --log \
			--grace-ms 1000 "$@" >&5 2>"$work/server.err" 5>&- &
		pid=$!
		exec 5>&-
		for _ in $(seq 200); do # 20 s at most: it stops early if the server died
			grep -q "serving" "$work/server.err" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		grep -q "serving" "$work/server.err" && return 0
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		pid=
	done
	fail "the server did not start"
}
# start_stalled - one worker, its standard output into a fresh pipe nobody reads
start_stalled() {
	fresh_pipe
	start_server "$fifo" 0 1 --metrics /metrics
}
# load - $requests on one kept-alive connection, one after another (curl's URL globbing):
# every one answered 200 while the log's pipe is full; ms is how long they took
load() {
	local start codes ok
	start=$(date +%s%N)
	codes=$(curl -sS --max-time 60 -o /dev/null -w '%{http_code}\n' \
		"http://127.0.0.1:$port/hello.txt?n=[1-$requests]") || fail "curl: $?"
	ms=$((($(date +%s%N) - start) / 1000000))
	ok=$(grep -c '^200$' <<<"$codes")
	[ "$ok" = "$requests" ] || fail "$ok of $requests requests answered 200 while the log stalled"
}
# stop_server - SIGTERM, then it must be gone within 10 s (grace 1 s), with exit status 0
stop_server() {
	local status
	kill -TERM "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && fail "no stop 10 s after SIGTERM"
	wait "$pid"
	status=$?
	pid=
	[ "$status" = 0 ] || fail "exit status $status"
}

# 1. The output stalls for good: the server stops all the same, saying what it dropped.
start_stalled
load
t0=$(date +%s%N)
stop_server
stop_ms=$((($(date +%s%N) - t0) / 1000000))
grep -q "worker 0: [0-9]* access-log lines dropped" "$work/server.err" ||
	fail "stopped with its log stalled, and no count of the lines dropped"
# What it could not write is still in that pipe: the next phase has a pipe of its own.
exec 3<&-
echo "ok: with the log's pipe full for good: $requests requests answered in $ms ms, stopped in $stop_ms ms"

# 2. The output stalls, then is read again.
start_stalled
load
grep -q "lines are dropped" "$work/server.err" ||
	fail "the log stalled and the server did not say it drops lines"
metrics=$(curl -sS --max-time 10 "http://127.0.0.1:$port/metrics") || fail "GET /metrics: $?"
live=$(sed -n 's/^giong_serve_access_log_dropped_total \([0-9]*\)$/\1/p' <<<"$metrics")
[ -n "$live" ] && [ "$live" -gt 0 ] ||
	fail "giong_serve_access_log_dropped_total is '$live' while lines are dropped"
requests=$((requests + 1)) # the metrics request is logged (or dropped) too
# Read the pipe again, then stop the server: what it kept comes out, the count on stderr.
# (Its own read-only descriptor: with ours, which can write, it would see no end.)
timeout 20 cat "$fifo" >"$work/out" 3<&- &
reader=$!
stop_server
exec 3<&- # the last writer gone: the reader reads to the end
wait "$reader"
reader=
dropped=$(sed -n 's/.*worker 0: \([0-9]*\) access-log lines dropped.*/\1/p' "$work/server.err")
[ -n "$dropped" ] || fail "no count of dropped lines at exit"
lines=$(wc -l <"$work/out")
clf='^127\.0\.0\.1 - - \[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} \+0000\] "GET (/hello\.txt\?n=[0-9]+ HTTP/1\.1" 200 8|/metrics HTTP/1\.1" 200 [0-9]+)$'
good=$(grep -Ec "$clf" "$work/out")
[ "$good" = "$lines" ] || fail "$((lines - good)) of $lines lines are not whole log lines: $(grep -Ev "$clf" "$work/out" | head -n 2 | cat -v)"
[ $((lines + dropped)) = "$requests" ] ||
	fail "$lines lines read and $dropped dropped, for $requests requests"
[ "$dropped" -gt 0 ] || fail "no line was dropped: the pipe did not stall the log"
echo "ok: $requests requests in $ms ms with the log's pipe full; $lines lines kept, $dropped dropped and counted"

[ -n "$load" ] || { echo "(no giong-load given: the files' part is left out)"; exit 0; }
# 3. Two workers into a file, opened at its position (">") and to append (">>"): every
# line comes out whole, none written over another's (the batches of two workers in flight
# at once must not land at one offset).
for how in trunc append; do
	out=$work/file-$how.log
	start_server "$out" "$([ $how = append ] && echo 1 || echo 0)" 2
	# 32 connections for 2 s as fast as they go (giong-load), over both workers: the
	# batches of the two are often in flight at once
	report=$("$load" "http://127.0.0.1:$port/hello.txt?n=1" -c 32 -d 2 --json) ||
		fail "giong-load: $?"
	answered=$(sed -n 's/.*"status":{"200":\([0-9]*\)}.*/\1/p' <<<"$report")
	[ -n "$answered" ] && [ "$answered" -gt 100 ] || fail "giong-load: $report"
	stop_server
	lines=$(wc -l <"$out")
	good=$(grep -Ec "$clf" "$out")
	# Every answer was logged before it went out; a few more may have been cut off.
	[ "$good" = "$lines" ] && [ "$lines" -ge "$answered" ] ||
		fail "file ($how): $lines lines, $good whole, for $answered answers"
	! grep -q dropped "$work/server.err" || fail "file ($how): $(grep dropped "$work/server.err")"
	echo "ok: two workers into a file ($how): $lines lines for $answered answers, each whole"
done
