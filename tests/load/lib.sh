# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# lib.sh - sourced by giong-load's end-to-end scripts (run.sh, h2.sh): a work directory
# removed at exit with the server stopped by its PID, fail, the server's start on a free
# port, and the JSON report's numbers.
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../support/ports.sh
. "$(dirname "$0")/../support/ports.sh" # port_base
work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	cat "$work/out" "$work/server.log" 2>/dev/null
	exit 1
}

# serve READY OFFSET CMD ARG...: CMD in the background, its output in $work/server.log, each
# ARG "PORT" replaced by the port tried (port_base + OFFSET + 1 to 5, one another server may
# hold), until the log says READY (20 s at most a try, less if it died). Sets $port and $pid;
# returns 77 when CMD exits 77 (not built in), fails when no try started.
serve() {
	local ready=$1 off=$2 try a args
	shift 2
	for try in 1 2 3 4 5; do
		port=$((port_base + off + try))
		args=()
		for a in "$@"; do
			[ "$a" = PORT ] && a=$port
			args+=("$a")
		done
		"${args[@]}" >"$work/server.log" 2>&1 &
		pid=$!
		for _ in $(seq 200); do
			grep -q "$ready" "$work/server.log" 2>/dev/null && return 0
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		[ $? = 77 ] && pid= && return 77
		pid=
	done
	fail "the server did not start: $*"
}

# stop: the server started last, by its PID
stop() {
	kill "$pid" && wait "$pid" 2>/dev/null
	pid=
}

# num KEY: the number after "KEY": in the JSON on one line in $work/out
num() { grep -o "\"$1\":[0-9.]*" "$work/out" | head -n 1 | cut -d: -f2; }

# no_errors WHAT: the report in $work/out counts no error of any kind
no_errors() {
	grep -q '"errors":{"connect":0,"read":0,"write":0,"timeout":0,"status":0,"length":0}' \
		"$work/out" || fail "$1: errors in a clean run"
}
