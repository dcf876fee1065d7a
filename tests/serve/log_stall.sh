#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# log_stall.sh SERVE_BIN - giong-serve --log whose standard output stops taking lines (a pipe
# nobody reads, as a stuck log shipper leaves it): the worker must go on serving, every
# request answered at once, the lines it cannot hold dropped and counted; once the pipe is
# read again, every line that was kept comes out whole and well formed, and the count said
# at exit plus the lines read is the number of requests. (A worker that wrote its log with
# write(2) would stop, with every connection it serves, once the pipe was full.)
# Every wait is bounded; the server is stopped by its PID.
set -u
bin=$1
command -v curl >/dev/null || { echo "FAIL: curl is not installed (tools/install-deps)"; exit 1; }
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
mkfifo "$work/log"
exec 3<>"$work/log" # held open and not read: the pipe fills (64 KiB) and stays full
requests=6000       # ~450 KB of lines: more than the pipe and the worker's two buffers
base=$((20000 + $$ % 12000))
for try in 1 2 3 4 5; do
	port=$((base + try))
	"$bin" "$work/root" --port $port --bind 127.0.0.1 --workers 1 --log --grace-ms 1000 \
		>"$work/log" 2>"$work/server.err" &
	pid=$!
	for _ in $(seq 50); do
		grep -q "serving" "$work/server.err" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "serving" "$work/server.err" && break
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
done
[ -n "$pid" ] || fail "the server did not start"
# One kept-alive connection, the requests one after another (curl's URL globbing).
start=$(date +%s%N)
codes=$(curl -sS --max-time 60 -o /dev/null -w '%{http_code}\n' \
	"http://127.0.0.1:$port/hello.txt?n=[1-$requests]") || fail "curl: $?"
ms=$((($(date +%s%N) - start) / 1000000))
ok=$(grep -c '^200$' <<<"$codes")
[ "$ok" = "$requests" ] || fail "$ok of $requests requests answered 200 while the log stalled"
grep -q "lines are dropped" "$work/server.err" ||
	fail "the log stalled and the server did not say it drops lines"
# Read the pipe again, then stop the server: what it kept comes out, the count on stderr.
# (Its own read-only descriptor: with ours, which can write, it would see no end.)
timeout 20 cat "$work/log" >"$work/out" 3<&- &
reader=$!
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
exec 3<&- # the last writer gone: the reader reads to the end
wait "$reader"
reader=
dropped=$(sed -n 's/.*worker 0: \([0-9]*\) access-log lines dropped.*/\1/p' "$work/server.err")
[ -n "$dropped" ] || fail "no count of dropped lines at exit"
lines=$(wc -l <"$work/out")
clf='^127\.0\.0\.1 - - \[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} \+0000\] "GET /hello\.txt\?n=[0-9]+ HTTP/1\.1" 200 8$'
good=$(grep -Ec "$clf" "$work/out")
[ "$good" = "$lines" ] || fail "$((lines - good)) of $lines lines are not whole log lines: $(grep -Ev "$clf" "$work/out" | head -n 2 | cat -v)"
[ $((lines + dropped)) = "$requests" ] ||
	fail "$lines lines read and $dropped dropped, for $requests requests"
[ "$dropped" -gt 0 ] || fail "no line was dropped: the pipe did not stall the log"
echo "ok: $requests requests in $ms ms with the log's pipe full; $lines lines kept, $dropped dropped and counted"
