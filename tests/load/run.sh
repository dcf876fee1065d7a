#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh LOAD_BIN HTTP_BIN - giong-load end to end against giong's HTTP example (examples/http):
# a 1 s run whose JSON report counts only 200s, as many as requests, no error, a latency for
# each, the right bytes (27 per /json response); the same with -P 8 (8 requests a write, their
# responses read in order, each batch counted whole: a multiple of 8 requests) and a paced
# -P 4; -R paces (a 200/s run makes about 200
# requests, not thousands); a 404 route is counted as a status error; a port nobody listens
# on gives connect errors, not a hang; the human report has its lines. Every process is
# stopped by its PID; every wait is bounded.
set -u
load=$1 http=$2
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" # work, fail, serve, stop, num, no_errors
serve "HTTP on" 0 "$http" --workers 1 --host 127.0.0.1 --port PORT
U=http://127.0.0.1:$port

# clean DEPTH: a 1 s run of 8 connections on 2 workers with -P DEPTH counts only 200s, as
# many as requests (whole batches of DEPTH), the right bytes, a latency each, no error
clean() {
	local d=$1 req ok
	timeout 20 "$load" "$U/json" -c 8 -d 1 -t 2 -P "$d" --json >"$work/out" ||
		fail "-P $d: a plain run exited $?"
	req=$(num requests) ok=$(grep -o '"200":[0-9]*' "$work/out" | cut -d: -f2)
	[ "${req:-0}" -gt $((100 * d)) ] || fail "-P $d: only ${req:-0} requests in 1 s"
	[ "$(num depth)" = "$d" ] || fail "-P $d: depth $(num depth) in the report"
	[ $((req % d)) = 0 ] || fail "-P $d: $req requests, not whole batches of $d"
	[ "$ok" = "$req" ] || fail "-P $d: 200s $ok, requests $req"
	[ "$(num bytes)" = $((req * 27)) ] || fail "-P $d: bytes $(num bytes), want $((req * 27))"
	[ "$(num count)" = "$req" ] || fail "-P $d: latencies $(num count), requests $req"
	no_errors "-P $d"
	echo "ok: -P $d: $req requests in 1 s, all 200 with 27 bytes, no error"
}
clean 1
clean 8

# Paced runs of 2 s: at most the rate's count (and a batch), at least 60 % of it: a stall of
# the machine near the end (TSan, -j2 beside another test) loses what it was due to send,
# while an unpaced run would make thousands.
timeout 20 "$load" "$U/json" -c 2 -d 2 -P 4 -R 400 --json >"$work/out" || fail "a paced -P 4 run exited $?"
req=$(num requests)
{ [ "$req" -ge 480 ] && [ "$req" -le 812 ]; } || fail "-P 4 -R 400 for 2 s made $req requests"
echo "ok: -P 4 -R 400 for 2 s: $req requests"

timeout 20 "$load" "$U/json" -c 4 -d 2 -R 200 --json >"$work/out" || fail "a paced run exited $?"
req=$(num requests)
{ [ "$req" -ge 240 ] && [ "$req" -le 410 ]; } || fail "-R 200 for 2 s made $req requests"
echo "ok: -R 200 for 2 s: $req requests"

timeout 20 "$load" "$U/nope" -c 2 -d 1 --json >"$work/out" || fail "a 404 run exited $?"
[ "$(grep -o '"status":[0-9]*' "$work/out" | tail -n 1 | cut -d: -f2)" = "$(num requests)" ] ||
	fail "404s not all counted as status errors"
echo "ok: 404s counted as status errors"

timeout 20 "$load" "$U/json" -c 1 -d 1 --latency >"$work/out" || true
{ grep -q "Latency Distribution" "$work/out" && grep -q "Requests/sec:" "$work/out"; } ||
	fail "the human report lacks its lines"
echo "ok: the human report"

stop
timeout 20 "$load" "$U/json" -c 2 -d 1 --json >"$work/out" || fail "a refused run exited $?"
{ [ "$(num requests)" = 0 ] && [ "$(num connect)" -gt 0 ]; } || fail "no connect errors for a closed port"
echo "ok: a closed port gives connect errors"

