#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# echo_tools.sh ECHO_BIN UDP_ECHO_BIN - the example servers examples/echo.c and examples/udp_echo.c
# end to end, through bash's /dev/tcp and /dev/udp (no other client needed):
#  - by default each answers on 127.0.0.1 and on [::1] (programs/hosts.h), and says both in its
#    start-up line; on a host without IPv6 loopback, on 127.0.0.1 and says "IPv4 only";
#  - --host 127.0.0.1 answers there and not on [::1]; --host ::1 the other way round;
#  - SIGINT stops each with exit status 0.
# Each check prints "ok: ..." or "FAIL: ..."; the servers' logs follow a failure. Ports are
# tried from a pseudo-random base until the server listens; every wait is bounded; servers
# are stopped by their PID. Skips (77) under valgrind: it would watch bash, not the servers.
set -u
export LC_ALL=C
[ $# -eq 2 ] || { echo "usage: $0 ECHO_BIN UDP_ECHO_BIN" >&2; exit 2; }
case ${LD_PRELOAD:-} in *vgpreload*)
	echo "SKIP: under valgrind (it would watch bash, not the servers)"
	exit 77 ;;
esac
echo_bin=$1 udp_bin=$2
for b in "$echo_bin" "$udp_bin"; do
	[ -x "$b" ] || { echo "FAIL: $b is not an executable"; exit 1; }
done

work=$(mktemp -d)
failures=0
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
		{ wait "$p"; } 2>/dev/null
	done
	if [ "$failures" != 0 ]; then
		for f in "$work"/*.err; do
			[ -e "$f" ] && { echo "--- $(basename "$f")"; tail -20 "$f"; }
		done
		echo "echo_tools: $failures check(s) failed"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { echo "ok: $*"; }
no() { echo "FAIL: $*"; failures=$((failures + 1)); }

# IPv6 loopback here? (A kernel without IPv6, or lo without ::1, as in some containers.)
v6=0
grep -qi '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null && v6=1
[ $v6 = 1 ] || echo "note: no IPv6 loopback (::1) here: the IPv6 checks are left out"

# start NAME BIN READY ARGS...: BIN on a free port (tried from a random base) with ARGS and
# --workers 2, until its stderr has READY. Sets port and pid; returns 1 if it never started.
start() {
	local name=$1 bin=$2 ready=$3 try
	shift 3
	for try in 1 2 3 4 5 6 7 8; do
		port=$((20000 + (RANDOM * 7 + try * 613) % 12000)) # below the ephemeral ports
		"$bin" --port "$port" --workers 2 "$@" >"$work/$name.out" 2>"$work/$name.err" &
		pid=$!
		for _ in $(seq 200); do # 20 s at most: it stops early if the server died
			grep -q "$ready" "$work/$name.err" && { pids+=("$pid"); return 0; }
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		{ wait "$pid"; } 2>/dev/null
		grep -q "in use" "$work/$name.err" || break # not a taken port: say why below
	done
	no "$name did not start: $(tail -3 "$work/$name.err")"
	return 1
}

# stop NAME: SIGINT, then its exit status must be 0 within 10 s.
stop() {
	local name=$1 st=0
	kill -INT "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		no "$name is still running 10 s after SIGINT"
		return
	fi
	wait "$pid" || st=$?
	pids=() # one server at a time: none left to stop
	[ $st = 0 ] && ok "$name: SIGINT stops it with status 0" ||
		no "$name: exit status $st after SIGINT"
}

# tcp_echo HOST: a line through the TCP echo server at HOST:port; prints what came back.
tcp_echo() {
	timeout 5 bash -c '
		exec 3<>"/dev/tcp/$1/$2" || exit 1
		printf "hello %s\n" "$1" >&3
		IFS= read -r -t 3 line <&3 && printf "%s\n" "$line"' _ "$1" "$port" 2>/dev/null
}

# udp_echo HOST: a datagram to HOST:port and its answer (three tries: UDP may drop one).
# The answer is read whole by one dd read: bash's read takes a byte per read(2), which on a
# datagram socket would keep the first byte of the datagram and drop the rest.
udp_echo() {
	timeout 10 bash -c '
		exec 3<>"/dev/udp/$1/$2" || exit 1
		for _ in 1 2 3; do
			printf "ping %s\n" "$1" >&3
			got=$(timeout 1 dd bs=4096 count=1 status=none <&3) && [ -n "$got" ] &&
				{ printf "%s\n" "$got"; exit 0; }
		done
		exit 1' _ "$1" "$port" 2>/dev/null
}

# answers KIND HOST: the server answers on HOST; refuses KIND HOST: it does not.
answers() {
	local got
	got=$("${1}_echo" "$2")
	[ "$got" = "$([ "$1" = tcp ] && echo hello || echo ping) $2" ] &&
		ok "$1 echo answers on $2 port $port" || no "$1 echo on $2 port $port: got '$got'"
}
refuses() {
	local got
	got=$("${1}_echo" "$2")
	[ -z "$got" ] && ok "$1 echo does not answer on $2" || no "$1 echo answered on $2: '$got'"
}

# check_tool KIND NAME BIN READY: the default is both loopbacks (or IPv4 alone, said, on a
# host without IPv6); --host 127.0.0.1 and --host ::1 each serve that address alone.
check_tool() {
	local kind=$1 name=$2 bin=$3 ready=$4 line
	if start "$name" "$bin" "$ready"; then
		line=$(grep "$ready" "$work/$name.err")
		answers "$kind" 127.0.0.1
		if [ $v6 = 1 ]; then
			[[ $line == *"127.0.0.1:$port and [::1]:$port"* ]] &&
				ok "$name names both addresses: $line" || no "$name's line: $line"
			answers "$kind" ::1
		else
			grep -q "IPv4 only" "$work/$name.err" && ok "$name says IPv4 only" ||
				no "$name does not say it serves IPv4 only: $line"
		fi
		stop "$name"
	fi
	if start "${name}4" "$bin" "$ready" --host 127.0.0.1; then
		answers "$kind" 127.0.0.1
		[ $v6 = 1 ] && refuses "$kind" ::1
		stop "${name}4"
	fi
	if [ $v6 = 1 ] && start "${name}6" "$bin" "$ready" --host ::1; then
		answers "$kind" ::1
		refuses "$kind" 127.0.0.1
		stop "${name}6"
	fi
}

check_tool tcp echo "$echo_bin" "listening on"
check_tool udp udp_echo "$udp_bin" "udp_echo: on"

[ "$failures" = 0 ] || exit 1
echo "echo_tools: all checks passed"
