#!/bin/bash
# h2.sh SERVE_BIN [BACKEND...] - giong-serve's HTTP/2, end to end with curl (and h2load when
# installed): by default h2c with prior knowledge on the HTTP port and h2 by ALPN on the
# HTTPS port, once per BACKEND (--tls-backend wolfssl, openssl; no BACKEND: HTTP only), each
# asked for a file (its bytes exactly), HEAD, 304 for If-None-Match and for
# If-Modified-Since, 206, 404, a listing, many streams at once; /metrics's HTTP/2 counters
# moving; the access log's "HTTP/2.0". Then --no-h2: the same curl commands get HTTP/1.1
# over HTTPS (curl falls back by ALPN), --http2-prior-knowledge fails (505), /metrics has no
# HTTP/2 figures. Last, on a server of one worker: a download the client aborts (its
# connection freed at once, its handler counted failed), h2load of the 1 MiB file 40 times
# (no handler error, no connection left idle), SIGTERM during a download (it finishes within
# --grace-ms).
#
# Each check prints "ok: ..." or "FAIL: ..." lines (tests/serve/e2e_lib.sh); the status is 1
# after a failure. Skips (77) without curl, without HTTP/2 in curl, or when giong-serve was
# built without libgiong-http2. Every server runs under timeout, every curl has --max-time.
set -u
export LC_ALL=C
[ $# -ge 1 ] || {
	echo "usage: $0 SERVE_BIN [BACKEND...]" >&2
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
shift
backends=("$@")
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
command -v curl >/dev/null || {
	echo "SKIP: curl is not installed"
	exit 77
}
curl -V | grep -q 'HTTP2' || {
	echo "SKIP: this curl has no HTTP/2"
	exit 77
}
[ -x "$bin" ] || {
	echo "FAIL: $bin is not an executable"
	exit 1
}
if timeout 10 "$bin" --help | grep -q 'not in this build'; then
	echo "SKIP: giong-serve was built without libgiong-http2"
	exit 77
fi
work=$(mktemp -d)
R=$work/replies
mkdir -p "$R"
# shellcheck source=tests/serve/e2e_lib.sh
. "$here/e2e_lib.sh"
# A server never outlives the test. Its -k counts from any signal timeout passes on, stop's
# SIGTERM too: longer than every --grace-ms here.
start_prefix=(timeout -k 20 120)

cleanup() {
	kill_servers
	if [ "$failures" != 0 ]; then
		print_logs
		echo "h2: $failures check(s) failed"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The tree: a file of 1 MiB + 3 bytes (past the 64 KiB stream window and 16 KiB frames, an
# odd tail), a small one with a fixed time, a directory to list.
root=$work/root
mkdir -p "$root/sub"
head -c $((1024 * 1024 + 3)) /dev/urandom >"$root/big.bin"
printf 'Hello, h2\n' >"$root/hello.txt"
touch -d '2021-03-04 05:06:07 UTC' "$root/hello.txt"
lm_hello=$(date -u -r "$root/hello.txt" '+%a, %d %b %Y %H:%M:%S GMT')
for i in 1 2 3; do printf '%s\n' "$i" >"$root/sub/f$i.txt"; done
head -c 100 "$root/big.bin" >"$work/big.head"

exp_streams=0 # HTTP/2 streams and connections the checks made on the current server
exp_conns=0

want_ver() { # want_ver V - the last reply came in HTTP version V
	[ "$ver" = "$1" ] || no "HTTP version '$ver', expected $1"
}

# metric NAME PORT - the sum over workers of NAME's samples at PORT's /metrics (plain HTTP).
metric() {
	timeout 10 curl -sS --max-time 5 --http1.1 "http://127.0.0.1:$2/metrics" |
		awk -v n="$1" 'index($0, n "{") == 1 || $1 == n { s += $NF } END { print s + 0 }'
}

# metric_at_least NAME PORT MIN - NAME's sum reaches MIN (the other workers publish theirs
# once a second).
metric_at_least() {
	[ "$(metric "$1" "$2")" -ge "$3" ]
}

# h2_requests PORT - the requests giong-serve counted as HTTP/2's at PORT's /metrics.
h2_requests() {
	timeout 10 curl -sS --max-time 5 --http1.1 "http://127.0.0.1:$1/metrics" |
		awk '/^giong_serve_requests_by_protocol_total/ && /protocol="h2"/ { s += $NF }
			END { print s + 0 }'
}

# h2_requests_at_least PORT MIN - as metric_at_least, for the HTTP/2 requests.
h2_requests_at_least() {
	[ "$(h2_requests "$1")" -ge "$2" ]
}

# open_only_scrape - is the scrape's own connection the only one open on $port?
open_only_scrape() {
	[ "$(metric giong_http_connections_open "$port")" = 1 ]
}

# h2_checks TAG CURL_MODE BASE - the HTTP/2 checks against BASE (http://... or https://...)
# with CURL_MODE (--http2-prior-knowledge, or "--http2 -k").
h2_checks() {
	local tag=$1 base=$3 etag n
	local -a mode
	read -ra mode <<<"$2"

	begin "$tag: GET of a 1 MiB file: HTTP/2, 200, its bytes"
	req "$tag-big" "${mode[@]}" "$base/big.bin"
	want_status 200 && want_ver 2 && want_body_file "$root/big.bin"
	finish

	begin "$tag: HEAD: HTTP/2, 200, Content-Length, no body"
	req "$tag-head" "${mode[@]}" -I "$base/big.bin"
	# curl -I writes the head as the body: anything more would be a body
	want_status 200 && want_ver 2 && want_hdr content-length $((1024 * 1024 + 3)) &&
		{ cmp -s "$R/$tag-head.b" "$R/$tag-head.h" || no "a body after the head"; }
	finish

	begin "$tag: If-None-Match with the ETag: 304"
	req "$tag-v" "${mode[@]}" "$base/hello.txt"
	etag=$(hdr etag)
	want_status 200 && want_ver 2 && want_body $'Hello, h2\n'
	req "$tag-inm" "${mode[@]}" -H "If-None-Match: $etag" "$base/hello.txt"
	want_status 304 && want_ver 2 && want_empty_body && want_hdr etag "$etag"
	finish

	begin "$tag: If-Modified-Since the file's time: 304"
	req "$tag-ims" "${mode[@]}" -H "If-Modified-Since: $lm_hello" "$base/hello.txt"
	want_status 304 && want_ver 2 && want_empty_body
	finish

	begin "$tag: Range 0-99: 206, those bytes"
	req "$tag-range" "${mode[@]}" -r 0-99 "$base/big.bin"
	want_status 206 && want_ver 2 && want_body_file "$work/big.head"
	finish

	begin "$tag: a missing file: 404"
	req "$tag-404" "${mode[@]}" "$base/no-such-file"
	want_status 404 && want_ver 2
	finish

	begin "$tag: a directory's listing"
	req "$tag-list" "${mode[@]}" "$base/sub/"
	want_status 200 && want_ver 2
	for n in f1.txt f2.txt f3.txt; do
		grep -q "$n" "$R/$tag-list.b" || no "the listing lacks $n"
	done
	finish

	exp_streams=$((exp_streams + 8)) exp_conns=$((exp_conns + 8)) # the 8 curls above
	# Not with prior knowledge: curl 7.88's reuse of such a connection fails by itself
	# (curl/curl#10634, fixed in 8.0): it closes the connection without sending the streams.
	if [ "${mode[0]}" != --http2-prior-knowledge ]; then
		par_checks "$tag" "$base" "${mode[@]}"
	fi

	if command -v h2load >/dev/null; then
		begin "$tag: h2load, 2,000 requests on 4 connections, 10 streams each: all 2xx"
		h2load_run "$tag-h2load" -n 2000 -c 4 -m 10 "$base/hello.txt"
		finish
		begin "$tag: h2load, the 1 MiB file 40 times on 2 connections, 20 streams each"
		h2load_run "$tag-h2big" -n 40 -c 2 -m 20 "$base/big.bin"
		finish
		exp_streams=$((exp_streams + 2040)) exp_conns=$((exp_conns + 6))
	fi
}

# h2load_run ID ARGS... - h2load ARGS (-n N first): every request done and 2xx.
h2load_run() {
	local id=$1 n=$3
	shift
	timeout 60 h2load "$@" >"$R/$id" 2>&1 || no "h2load failed: $(tail -n 3 "$R/$id")"
	if ! grep -q "requests: $n total, $n started, $n done, $n succeeded" "$R/$id" ||
		! grep -q "status codes: $n 2xx" "$R/$id"; then
		no "$(grep -E '^(requests|status codes):' "$R/$id")"
	fi
}

# par_checks TAG BASE CURL_MODE... - 20 downloads of the big file at once.
par_checks() {
	local tag=$1 base=$2 n
	shift 2
	begin "$tag: 20 downloads at once (curl --parallel, multiplexed), each whole"
	local -a urls=()
	for n in $(seq 20); do
		urls+=("$base/big.bin" -o "$R/$tag-par$n.b")
	done
	timeout 30 curl -sS --max-time 25 --parallel --parallel-max 20 "$@" \
		"${urls[@]}" 2>"$R/$tag-par.e" || no "curl: $(head -c 200 "$R/$tag-par.e")"
	for n in $(seq 20); do
		cmp -s "$R/$tag-par$n.b" "$root/big.bin" || {
			no "file $n differs ($(wc -c <"$R/$tag-par$n.b") bytes)"
			break
		}
	done
	finish
	exp_streams=$((exp_streams + 20)) exp_conns=$((exp_conns + 1))
}

# The servers: HTTPS once per backend, HTTP alone when none was built.
runs=("${backends[@]}")
[ ${#runs[@]} = 0 ] && runs=(none)
for be in "${runs[@]}"; do
	tls=1 extra=(--self-signed --tls-backend "$be")
	[ "$be" = none ] && tls=0 extra=()
	name=h2-$be
	start "$name" "$tls" "$root" --bind 127.0.0.1 --workers 2 --log --metrics /metrics \
		--grace-ms 1000 "${extra[@]}" || fatal "giong-serve ($be) did not start"
	exp_streams=0 exp_conns=0 # what h2_checks made: the least /metrics must count
	h2_checks "h2c ($be)" --http2-prior-knowledge "http://127.0.0.1:$port"
	[ "$tls" = 1 ] && h2_checks "h2 ($be)" "--http2 -k" "https://127.0.0.1:$tport"

	begin "$be: curl --http2 on plain HTTP (an Upgrade giong-serve does not take): 1.1, 200"
	req "up-$be" --http2 "http://127.0.0.1:$port/hello.txt"
	want_status 200 && want_ver 1.1 && want_body $'Hello, h2\n'
	finish

	begin "$be: /metrics: HTTP/2 connections and streams counted, requests by protocol"
	want_streams=$exp_streams want_conns=$exp_conns
	wait_for 5 metric_at_least giong_http2_streams_total "$port" "$want_streams" ||
		no "giong_http2_streams_total $(metric giong_http2_streams_total "$port"), expected >= $want_streams"
	wait_for 5 metric_at_least giong_http2_connections_total "$port" "$want_conns" ||
		no "giong_http2_connections_total $(metric giong_http2_connections_total "$port"), expected >= $want_conns"
	wait_for 5 h2_requests_at_least "$port" "$want_streams" ||
		no "giong_serve_requests_by_protocol_total{protocol=\"h2\"} $(h2_requests "$port"), expected >= $want_streams"
	wait_for 5 metric_at_least giong_serve_requests_by_protocol_total "$port" $((want_streams + 1)) ||
		no "no HTTP/1.1 request counted beside HTTP/2's"
	finish

	begin "$be: the access log says HTTP/2.0 for a stream, HTTP/1.1 for the rest"
	wait_for 3 grep -q '"GET /big.bin HTTP/2.0" 200 1048579$' "$work/$name.out" ||
		no "no \"GET /big.bin HTTP/2.0\" 200 line"
	wait_for 3 grep -q '"HEAD /big.bin HTTP/2.0" 200 -$' "$work/$name.out" ||
		no "no \"HEAD /big.bin HTTP/2.0\" 200 line"
	wait_for 3 grep -q '"GET /hello.txt HTTP/1.1" 200 10$' "$work/$name.out" ||
		no "no \"GET /hello.txt HTTP/1.1\" 200 line"
	finish

	stop "$name"
	begin "$be: SIGTERM: exit status 0"
	[ "$stop_status" = 0 ] || no "exit status $stop_status"
	finish
done

# --no-h2: the same curl commands get HTTP/1.1 (by ALPN), prior knowledge fails.
be=${backends[0]:-none}
tls=1 extra=(--self-signed --tls-backend "$be")
[ "$be" = none ] && tls=0 extra=()
start no-h2 "$tls" "$root" --bind 127.0.0.1 --workers 2 --metrics /metrics --no-h2 \
	--grace-ms 1000 "${extra[@]}" || fatal "giong-serve --no-h2 did not start"
grep -q 'HTTP/1.1 only' "$work/no-h2.err" || no "--no-h2: the serving line does not say HTTP/1.1 only"

begin "--no-h2: curl --http2-prior-knowledge fails, no HTTP/2"
req noh2-pk --http2-prior-knowledge "http://127.0.0.1:$port/hello.txt"
[ "$rc" = 0 ] && no "curl succeeded: status $st, HTTP version $ver"
[ "$ver" = 2 ] && no "HTTP/2 answered"
finish

begin "--no-h2: the HTTP/2 preface on plain HTTP gets 505 and the connection closes"
# shellcheck disable=SC2016 # the inner script's own argument
timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 9
	printf "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" >&3
	cat <&3' pk "$port" >"$R/noh2-pri.raw" 2>/dev/null
prc=$?
show="raw noh2-pri"
[ "$(head -n 1 "$R/noh2-pri.raw" | tr -d '\r' | cut -d' ' -f2)" = 505 ] || no "no 505"
[ "$prc" = 124 ] && no "the connection was still open after 5 s"
finish

begin "--no-h2: curl --http2 on plain HTTP: 1.1, 200"
req noh2-up --http2 "http://127.0.0.1:$port/hello.txt"
want_status 200 && want_ver 1.1 && want_body $'Hello, h2\n'
finish

if [ "$tls" = 1 ]; then
	begin "--no-h2 ($be): curl --http2 -k over HTTPS falls back to 1.1: the file, HEAD, 304, 404"
	req noh2-big --http2 -k "https://127.0.0.1:$tport/big.bin"
	want_status 200 && want_ver 1.1 && want_body_file "$root/big.bin"
	req noh2-head --http2 -k -I "https://127.0.0.1:$tport/big.bin"
	want_status 200 && want_ver 1.1 && want_hdr content-length $((1024 * 1024 + 3))
	req noh2-ims --http2 -k -H "If-Modified-Since: $lm_hello" "https://127.0.0.1:$tport/hello.txt"
	want_status 304 && want_ver 1.1
	req noh2-404 --http2 -k "https://127.0.0.1:$tport/no-such-file"
	want_status 404 && want_ver 1.1
	finish
fi

begin "--no-h2: /metrics has no HTTP/2 figures and counts every request HTTP/1.1's"
timeout 10 curl -sS --max-time 5 "http://127.0.0.1:$port/metrics" >"$R/noh2-metrics" ||
	no "no /metrics"
grep -q '^giong_http2_' "$R/noh2-metrics" && no "giong_http2_* samples present"
awk '/^giong_serve_requests_by_protocol_total/ && /protocol="h2"/ && $NF != 0 { bad = 1 }
	END { exit bad }' "$R/noh2-metrics" || no "h2 requests counted"
finish

stop no-h2
begin "--no-h2: SIGTERM: exit status 0"
[ "$stop_status" = 0 ] || no "exit status $stop_status"
finish

# Aborted and cut downloads, on a server of their own (one worker: its /metrics is whole
# at once).
head -c $((20 * 1024 * 1024)) /dev/zero >"$root/big20.bin"
start pend 0 "$root" --bind 127.0.0.1 --workers 1 --metrics /metrics --grace-ms 10000 ||
	fatal "giong-serve did not start"

begin "an HTTP/2 download the client aborts frees its connection at once, its handler failed"
timeout 5 curl -s --http2-prior-knowledge --limit-rate 1M --max-time 0.3 -o /dev/null \
	"http://127.0.0.1:$port/big20.bin"
# 1: the scrape's own connection (HTTP/1.1 closes its aborted ones at once)
wait_for 3 open_only_scrape ||
	no "$(metric giong_http_connections_open "$port") connections open 3 s later"
# Its response was cut: that handler failed (and no other).
errs=$(metric giong_http_handler_errors_total "$port")
[ "$errs" = 1 ] || no "$errs handler errors, expected 1 (the aborted download's)"
finish

if command -v h2load >/dev/null; then
	begin "5 streams of the 1 MiB file at a time, 40 times over: no handler error, no connection left idle"
	errs0=$(metric giong_http_handler_errors_total "$port")
	for i in $(seq 40); do
		h2load_run "pend-h2load$i" -n 20 -c 1 -m 5 "http://127.0.0.1:$port/big.bin"
		idle=$(metric giong_http_connections_idle "$port")
		[ "$idle" = 0 ] || {
			no "run $i: $idle connection(s) idle with no client (a SIGTERM now crashes)"
			break
		}
	done
	errs=$(metric giong_http_handler_errors_total "$port")
	[ "$errs" = "$errs0" ] || no "$((errs - errs0)) handler errors, every response whole"
	finish
fi

# stop() signals timeout(1), which passes SIGTERM on twice (to the server, then to its
# process group): the same request, the grace goes on.
begin "SIGTERM during an HTTP/2 download: it finishes within --grace-ms, exit status 0"
timeout 20 curl -sS --http2-prior-knowledge --limit-rate 8M -o "$R/pend.b" \
	"http://127.0.0.1:$port/big20.bin" 2>"$R/pend.e" &
cpid=$!
sleep 0.7
stop pend 10
wait "$cpid" || no "curl: $(head -c 200 "$R/pend.e")"
cmp -s "$R/pend.b" "$root/big20.bin" || no "$(wc -c <"$R/pend.b") of 20 MiB received"
[ "$stop_status" = 0 ] || no "exit status $stop_status"
finish

[ "$failures" = 0 ] || exit 1
echo "h2: every check passed"
