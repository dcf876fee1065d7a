#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# h2.sh LOAD_BIN H2_SERVER_BIN MAKE_CERTS - giong-load --h2 end to end against an HTTP/2 server
# of libgiong-http2 (h2_server.c): -c 4 --streams 10 (as -m 10) -n 2000 gives exactly 2000
# 200s, protocol h2c, the right bytes, a latency each, no error; the same server answers
# HTTP/1.1 with -n too; request bodies go up (POST /echo), 1 MiB responses come down whole;
# streams that outlive --timeout are timeouts, 404s status errors; a 1 s run on 2 workers and
# a paced one count as the HTTP/1.1 runs do; a closed port ends a -n run with connect errors;
# over TLS (ALPN h2) the protocol is h2. Every process is stopped by its PID; every wait is
# bounded.
set -u
load=$1 server=$2 make_certs=$3
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" # work, fail, serve, stop, num, no_errors

# run WHAT ARGS...: giong-load's JSON report of ARGS into $work/out, bounded in time
run() {
	local what=$1
	shift
	timeout 30 "$load" "$@" --json >"$work/out" || fail "$what: exited $?"
}

serve listening 0 "$server" PORT
U=http://127.0.0.1:$port

run "-n 2000" "$U/json" --h2 -c 4 -m 10 -n 2000
[ "$(num requests)" = 2000 ] || fail "-n 2000: $(num requests) requests"
[ "$(grep -o '"2[0-9][0-9]":[0-9]*' "$work/out" | cut -d: -f2)" = 2000 ] || fail "-n 2000: not 2000 2xx"
grep -q '"protocol":"h2c","streams":10' "$work/out" || fail "-n 2000: not h2c with 10 streams"
[ "$(num bytes)" = $((2000 * 27)) ] || fail "-n 2000: bytes $(num bytes)"
[ "$(num count)" = 2000 ] || fail "-n 2000: $(num count) latencies"
no_errors "-n 2000"
echo "ok: --h2 -c 4 -m 10 -n 2000: 2000 200s over h2c, no error"

timeout 30 "$load" "$U/json" --h2 -c 2 --streams 4 -n 100 >"$work/out" || fail "the human report exited $?"
{ grep -q "^  Protocol: h2c, 4 streams per connection$" "$work/out" && grep -q "^  100 requests in" "$work/out"; } ||
	fail "the human report does not say h2c"
echo "ok: the human report says h2c"

run "HTTP/1.1 -n" "$U/json" -c 2 -n 300
{ [ "$(num requests)" = 300 ] && grep -q '"protocol":"http/1.1","streams":1' "$work/out"; } ||
	fail "HTTP/1.1 -n 300: $(num requests) requests"
no_errors "HTTP/1.1 -n 300"
echo "ok: the same server over HTTP/1.1, -n 300"

head -c 5000 /dev/urandom >"$work/body"
run "POST" "$U/echo" --h2 -c 2 -m 8 -n 200 --method POST --body "$work/body" -H "X-Test: 1"
{ [ "$(num requests)" = 200 ] && [ "$(num bytes)" = $((200 * 5000)) ]; } ||
	fail "POST /echo: $(num requests) requests, $(num bytes) bytes"
no_errors "POST /echo"
echo "ok: 200 POSTs of 5000 bytes echoed"

run "/big" "$U/big" --h2 -c 2 -m 4 -n 40
{ [ "$(num requests)" = 40 ] && [ "$(num bytes)" = $((40 << 20)) ]; } ||
	fail "/big: $(num requests) requests, $(num bytes) bytes"
no_errors "/big"
echo "ok: 40 responses of 1 MiB whole"

run "-d 1" "$U/json" --h2 -c 8 -t 2 -m 4 -d 1
req=$(num requests)
{ [ "${req:-0}" -gt 100 ] && [ "$(grep -o '"200":[0-9]*' "$work/out" | cut -d: -f2)" = "$req" ]; } ||
	fail "-d 1: ${req:-0} requests"
no_errors "-d 1"
echo "ok: --h2 -t 2 -d 1: $req requests, all 200"

run "paced" "$U/json" --h2 -c 2 -m 4 -d 2 -R 200
req=$(num requests)
{ [ "$req" -ge 240 ] && [ "$req" -le 410 ]; } || fail "-R 200 for 2 s made $req requests"
echo "ok: --h2 -R 200 for 2 s: $req requests"

run "/slow" "$U/slow" --h2 -c 1 -m 4 -n 4 --timeout 500
{ [ "$(num timeout)" = 4 ] && [ "$(num requests)" = 0 ]; } ||
	fail "/slow: timeouts $(num timeout), requests $(num requests)"
echo "ok: streams past --timeout are timeouts"

run "404" "$U/nope" --h2 -c 1 -m 4 -n 50
[ "$(grep -o '"status":[0-9]*' "$work/out" | tail -n 1 | cut -d: -f2)" = 50 ] ||
	fail "404s not all counted as status errors"
echo "ok: 404s counted as status errors"

"$load" "$U/json" --h2 -P 2 -n 10 >/dev/null 2>&1 && fail "--h2 -P 2 accepted"
"$load" "$U/json" --streams 2 -n 10 >/dev/null 2>&1 && fail "--streams without --h2 accepted"
echo "ok: -P with --h2 and --streams without it are refused"

stop
run "closed" "$U/json" --h2 -c 2 -m 4 -n 10
{ [ "$(num requests)" = 0 ] && [ "$(num connect)" = 10 ]; } ||
	fail "a closed port: requests $(num requests), connect errors $(num connect)"
echo "ok: a closed port ends a -n run with connect errors"

sh "$make_certs" "$work/certs" >/dev/null 2>&1 || fail "make-certs.sh failed"
serve listening 10 "$server" PORT --tls "$work/certs/server.pem" "$work/certs/server.key"
[ $? = 77 ] && {
	echo "ok: (no TLS in this build: h2 over TLS not tried)"
	exit 0
}
run "TLS" "https://127.0.0.1:$port/json" --h2 -k -c 2 -m 10 -n 500
{ [ "$(num requests)" = 500 ] && grep -q '"protocol":"h2","streams":10' "$work/out"; } ||
	fail "TLS: $(num requests) requests"
no_errors "TLS"
echo "ok: h2 over TLS (ALPN h2): 500 200s"
