#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# noring.sh NORING PROBE - the launcher itself (CTest harness.noring): under `noring --errno
# E`, liburing's io_uring_queue_init and the raw io_uring_enter and io_uring_register calls
# of noring_probe (probe.c) each fail with E, for EPERM, ENOSYS and EOPNOTSUPP; without it
# they do not; a bad command line exits 2, a program that cannot be exec'd 127, and a
# program's own exit status comes back as it is. Exits 77 where no seccomp filter can be
# installed (valgrind, an old kernel) or io_uring is not allowed here to begin with.
set -u
noring=$1
probe=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# probe_says OUT CALL WANT - did the probe print "CALL: WANT"?
probe_says() {
	grep -qx "$2: $3" "$1"
}

# Without the launcher: the baseline the filter must change.
timeout -k 1 20 "$probe" >"$work/plain" 2>&1
if ! probe_says "$work/plain" io_uring_queue_init OK; then
	echo "skip: io_uring is not allowed here to begin with: $(tr '\n' ' ' <"$work/plain")"
	exit 77
fi
for call in io_uring_enter io_uring_register; do
	probe_says "$work/plain" $call EBADF ||
		fail "without noring, $call on a closed descriptor: $(grep "^$call:" "$work/plain")"
done

for err in EPERM ENOSYS EOPNOTSUPP; do
	timeout -k 1 20 "$noring" --errno $err -- "$probe" >"$work/out" 2>"$work/err"
	st=$?
	if [ $st = 77 ]; then
		echo "skip: $(cat "$work/err")"
		exit 77
	fi
	[ $st = 0 ] || fail "noring --errno $err -- noring_probe: exit status $st: $(cat "$work/err")"
	for call in io_uring_queue_init io_uring_enter io_uring_register; do
		if probe_says "$work/out" $call $err; then
			echo "ok: under noring --errno $err, $call fails with $err"
		else
			fail "under noring --errno $err: $(grep "^$call:" "$work/out")"
		fi
	done
done

# The default errno is EPERM, what Docker's and containerd's default profiles answer.
timeout -k 1 20 "$noring" -- "$probe" >"$work/out" 2>&1
if probe_says "$work/out" io_uring_queue_init EPERM; then
	echo "ok: the default errno is EPERM"
else
	fail "without --errno: $(head -n 1 "$work/out")"
fi

# exit_is WANT DESCRIPTION NORING-ARGS... - noring's exit status, and a message when it is
# noring's own error.
exit_is() {
	local want=$1 what=$2
	shift 2
	timeout -k 1 20 "$noring" "$@" >"$work/out" 2>"$work/err" </dev/null
	local st=$?
	if [ $st != "$want" ]; then
		fail "$what: exit status $st, expected $want"
	elif [ "$want" != 0 ] && [ "$want" != 5 ] && ! grep -q '^noring: ' "$work/err"; then
		fail "$what: exit status $st but no message on standard error"
	else
		echo "ok: $what: exit status $st $(head -n 1 "$work/err")"
	fi
}
exit_is 2 "no arguments"
exit_is 2 "no -- before the program" --errno EPERM true
exit_is 2 "an errno it does not know" --errno EBADF -- true
exit_is 2 "--errno without a value" --errno
exit_is 2 "nothing after --" --errno ENOSYS --
exit_is 127 "a program that does not exist" -- "$work/no-such-program"
exit_is 0 "a program found on PATH" --errno EOPNOTSUPP -- true
exit_is 5 "the program's own exit status" -- sh -c 'exit 5'

[ $failures = 0 ]
