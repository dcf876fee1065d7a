#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# uring_blocked.sh HARNESS PROGRAM... - each PROGRAM (giong-serve, giong-load, the example
# server: every one reports giong_runtime_new()'s error with giong_strerror()) run under
# HARNESS (uring_blocked.c: io_uring_setup fails with the errno given, as under a seccomp
# profile) with EPERM (Docker's default profile), EOPNOTSUPP (other profiles) and ENOSYS (no
# io_uring, or a filter that says so). Each must exit non-zero within 20 s and say that
# io_uring is unavailable and why: never only the errno's text ("Operation not supported").
# Exits 77 when the harness finds no seccomp here (valgrind, an old kernel).
set -u
# Forced onto the epoll tier, no program asks for io_uring: nothing to see refused.
if [ "${GIONG_RING_TIER:-}" = epoll ]; then
	echo "skip: GIONG_RING_TIER=epoll (io_uring is not asked for)"
	exit 77
fi
harness=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# The arguments each program is run with: whatever it needs to reach giong_runtime_new.
args_for() {
	case ${1##*/} in
	serve | giong-serve) echo "$work --reuse-port --port 1 --workers 1" ;; # no port probe
	load | giong-load) echo "http://127.0.0.1:1/ -c 1 -d 1 -t 1" ;;
	*) echo "--port 1 --workers 1 --reuse-port" ;;
	esac
}

for prog in "$@"; do
	# errno|what the message must say (an ERE)
	for c in "1|io_uring is disabled.*seccomp" "95|io_uring is disabled.*seccomp" \
		"38|has no io_uring.*Linux 6\.0"; do
		IFS='|' read -r err want <<<"$c"
		# shellcheck disable=SC2046 # args_for's words, split on purpose
		timeout -k 1 20 "$harness" "$err" "$prog" $(args_for "$prog") \
			>"$work/out" 2>"$work/err" </dev/null
		st=$?
		if [ $st = 77 ]; then
			echo "skip: $(cat "$work/err")"
			exit 77
		fi
		name="${prog##*/} with io_uring_setup failing with errno $err"
		if [ $st = 0 ] || [ $st = 124 ] || [ $st -gt 128 ]; then
			echo "FAIL: $name: exit status $st"
		elif ! grep -Eq "$want" "$work/err"; then
			echo "FAIL: $name: the message does not say io_uring is unavailable and why"
		else
			echo "ok: $name: $(head -c 100 "$work/err")..."
			continue
		fi
		failures=$((failures + 1))
		sed 's/^/    /' "$work/err"
	done
done
[ $failures = 0 ]
