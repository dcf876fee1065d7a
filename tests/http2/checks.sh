# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# checks.sh - sourced by the interop scripts of tests/http2: a scratch directory ($tmp), the
# one server in the background ($pid: stopped and $tmp removed at exit), and the check lines
# ok NAME / fail NAME WHY ("pass NAME", "FAIL NAME: WHY"; $fails counts the failures).
tmp=$(mktemp -d)
pid=
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fails=0
ok() { echo "pass $1"; }
fail() {
	echo "FAIL $1: $2"
	fails=$((fails + 1))
}
