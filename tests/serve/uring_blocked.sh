#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# uring_blocked.sh [--expect refuse|fallback] NORING PROGRAM... - each PROGRAM (giong-serve,
# giong-load, the example server: every one reports giong_runtime_new()'s error with
# giong_strerror()) run under NORING (tests/harness/noring: io_uring_setup, io_uring_enter and
# io_uring_register fail with the errno given, as under a seccomp profile) with EPERM
# (Docker's and containerd's default profiles), EOPNOTSUPP (other profiles) and ENOSYS
# (gVisor, no io_uring). The expectation also comes from URING_BLOCKED_EXPECT; --expect wins.
#
#   refuse    asked for io_uring only (GIONG_RING_TIER=uring), each must exit non-zero within
#             20 s and say that io_uring is unavailable and why: never only the errno's text
#             ("Operation not supported").
#   fallback  giong-serve falls back to the epoll tier by itself (issue 27), says so once on
#             standard error, serves a file on 127.0.0.1 and stops with status 0 on SIGTERM;
#             giong-load runs against it with status 0. The example server is left to the
#             suite run with GIONG_RING_TIER=epoll.
#
# Exits 77 when NORING finds no seccomp here (valgrind, an old kernel).
set -u
expect=${URING_BLOCKED_EXPECT:-refuse}
if [ "${1:-}" = --expect ]; then
	expect=${2:-}
	shift 2
fi
case $expect in
refuse | fallback) ;;
*)
	echo "usage: uring_blocked.sh [--expect refuse|fallback] NORING PROGRAM..." >&2
	exit 2
	;;
esac
# Forced onto the epoll tier, no program asks for io_uring: nothing to see refused.
if [ "${GIONG_RING_TIER:-}" = epoll ]; then
	echo "skip: GIONG_RING_TIER=epoll (io_uring is not asked for)"
	exit 77
fi
noring=$1
shift
work=$(mktemp -d)
R=$work
failures=0
# shellcheck source=tests/serve/e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh" # start, stop, req, wait_for; failures, spid, port
trap 'kill_servers; rm -rf "$work"' EXIT

# The arguments each program is run with in refuse mode: whatever it needs to reach
# giong_runtime_new.
args_for() {
	case ${1##*/} in
	serve | giong-serve) echo "$work --reuse-port --port 1 --workers 1" ;; # no port probe
	load | giong-load) echo "http://127.0.0.1:1/ -c 1 -d 1 -t 1" ;;
	*) echo "--port 1 --workers 1 --reuse-port" ;;
	esac
}

# refuse PROG ERRNO WANT - PROG under noring --errno ERRNO stops, non-zero, saying WANT (an ERE).
# GIONG_RING_TIER=uring: io_uring or nothing (giong_config.uring_only), so no epoll fallback.
refuse() {
	local prog=$1 err=$2 want=$3 st name
	# shellcheck disable=SC2046 # args_for's words, split on purpose
	GIONG_RING_TIER=uring timeout -k 1 20 "$noring" --errno "$err" -- "$prog" $(args_for "$prog") \
		>"$work/out" 2>"$work/err" </dev/null
	st=$?
	if [ $st = 77 ]; then # noring installed no filter (and ran nothing)
		echo "skip: $(cat "$work/err")"
		exit 77
	fi
	name="${prog##*/} with io_uring refused with $err"
	if [ $st = 0 ] || [ $st = 124 ] || [ $st -gt 128 ]; then
		echo "FAIL: $name: exit status $st"
	elif ! grep -Eq "$want" "$work/err"; then
		echo "FAIL: $name: the message does not say io_uring is unavailable and why"
	else
		echo "ok: $name: $(head -c 100 "$work/err")..."
		return
	fi
	failures=$((failures + 1))
	sed 's/^/    /' "$work/err"
}

# fallback ERRNO - giong-serve ($bin) under noring --errno ERRNO: one line saying it runs on
# epoll, a file served, status 0 at SIGTERM; giong-load ($load, when given) against it.
fallback() {
	local err=$1 n
	start_prefix=("$noring" --errno "$err" --)
	begin "giong-serve with io_uring refused with $err falls back to epoll and serves"
	if ! start "serve-$err" 0 "$work/root" --workers 2 --bind 127.0.0.1; then
		if grep -q '^noring: no seccomp' "$work/serve-$err.err"; then
			echo "skip: $(cat "$work/serve-$err.err")"
			exit 77
		fi
		no "it did not start: $(head -c 300 "$work/serve-$err.err")"
		return
	fi
	req "f-$err" "http://127.0.0.1:$port/f.txt"
	want_status 200 && want_body "noring"
	show= # what follows is about its standard error, not the reply
	# "Says so once": the line naming the tier is the issue's; its wording is core's.
	n=$(grep -ci 'epoll' "$work/serve-$err.err")
	[ "$n" = 1 ] || no "$n lines on standard error name epoll, expected 1"
	if [ -n "$load" ]; then
		timeout -k 1 20 "$noring" --errno "$err" -- "$load" "http://127.0.0.1:$port/f.txt" \
			-c 2 -d 1 -t 1 >"$work/load.out" 2>"$work/load.err" </dev/null ||
			no "giong-load under noring --errno $err: status $?: $(head -c 300 "$work/load.err")"
	fi
	stop "serve-$err"
	[ "$stop_status" = 0 ] || no "status $stop_status at SIGTERM, expected 0"
	finish
	[ "$bad" = 0 ] || print_logs
}

bin='' load=''
for prog in "$@"; do
	case ${prog##*/} in
	serve | giong-serve) bin=$prog ;;
	load | giong-load) load=$prog ;;
	esac
done

if [ "$expect" = fallback ]; then
	[ -n "$bin" ] || fatal "--expect fallback needs giong-serve among the programs"
	mkdir -p "$work/root"
	printf noring >"$work/root/f.txt"
	# The tier is giong's to choose here: a forced one (the suite's tier runs) never falls back.
	for err in EPERM EOPNOTSUPP ENOSYS; do
		GIONG_RING_TIER='' fallback $err
	done
fi

# Either way, a program asked for io_uring only (GIONG_RING_TIER=uring) refuses to start.
for prog in "$@"; do
	refuse "$prog" EPERM "io_uring is disabled.*seccomp"
	refuse "$prog" EOPNOTSUPP "io_uring is disabled.*seccomp"
	refuse "$prog" ENOSYS "has no io_uring.*Linux 6\.0"
done
[ $failures = 0 ]
