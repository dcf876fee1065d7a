#!/bin/sh
# client_interop.sh FETCH CERTDIR [BACKEND...] - libgiong-http's client speaking HTTP/2 to
# servers it was not written with: nginx and h2o from Debian (bench/load/h2-peers: h2c by
# prior knowledge on one port, h2 by ALPN over TLS on another), driven through the client
# example (examples/fetch.c). For each peer: 20 fetches of the 8 KB /users at once over h2c
# and over TLS with each BACKEND (openssl, wolfssl), every body the file's bytes, every
# fetch HTTP/2, all of them streams of one connection; HEAD; and the same URL without --h2
# over TLS gets HTTP/1.1 (ALPN offers only http/1.1 then). CERTDIR holds the test
# certificates (tests/tls/make-certs.sh). Every process runs under timeout(1).
# One line per check, "pass NAME" or "FAIL NAME: why"; exit 0 when all passed, 1 otherwise.
set -u
fetch=$1
certs=$(cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "$0")" && pwd)
peers=$here/../../bench/load/h2-peers
# shellcheck source=tests/support/ports.sh
. "$here/../support/ports.sh" # port_base

# shellcheck source=tests/http2/checks.sh
. "$(dirname "$0")/checks.sh" # tmp, pid (stopped at exit), ok, fail, fails

# listening PORT: something accepts on 127.0.0.1:PORT.
listening() {
	timeout 2 sh -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null ||
		timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# start NAME SCRIPT ARGS...: a peer in the background on $port/$tport; 1 when it did not
# come up within 10 s.
start() {
	name=$1
	script=$2
	shift 2
	rm -rf "${tmp:?}/$name"
	mkdir -p "$tmp/$name"
	timeout 120 sh "$peers/$script" "$port" "$tport" "$tmp/$name" "$certs/server.pem" \
		"$certs/server.key" "$@" >"$tmp/$name.out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		listening "$port" && listening "$tport" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "$name" "did not start: $(tail -5 "$tmp/$name.out" "$tmp/$name/error.log" 2>/dev/null)"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
	return 1
}

stop() {
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}

# check NAME WANT_PROTO N FETCH_ARGS... URL: fetch N times at once; every body is www's
# /users, every line says 200 and WANT_PROTO, and (h2) they shared one connection.
check() {
	name=$1
	want=$2
	n=$3
	shift 3
	if ! timeout 60 "$fetch" --repeat "$n" "$@" >"$tmp/body" 2>"$tmp/err"; then
		fail "$name" "fetch failed: $(head -c 300 "$tmp/err")"
		return
	fi
	: >"$tmp/want"
	for _ in $(seq "$n"); do cat "$www/users.json" >>"$tmp/want"; done
	good=$(grep -c ": 200, $(wc -c <"$www/users.json") bytes, $want\$" "$tmp/err")
	if ! cmp -s "$tmp/body" "$tmp/want"; then
		fail "$name" "bodies differ ($(wc -c <"$tmp/body") bytes, $(wc -c <"$tmp/want") wanted)"
	elif [ "$good" != "$n" ]; then
		fail "$name" "$good of $n fetches were 200 over $want: $(head -3 "$tmp/err")"
	elif [ "$want" = h2 ] && ! grep -q "$n exchanges, 1 connections, $n HTTP/2 streams" "$tmp/err"; then
		fail "$name" "not $n streams on one connection: $(tail -1 "$tmp/err")"
	else
		ok "$name"
	fi
}

# head_check NAME FETCH_ARGS... URL: HEAD over HTTP/2: 200, no body.
head_check() {
	name=$1
	shift
	if timeout 30 "$fetch" --head "$@" >"$tmp/body" 2>"$tmp/err" &&
		grep -q ': 200, 0 bytes, h2$' "$tmp/err" && [ ! -s "$tmp/body" ]; then
		ok "$name"
	else
		fail "$name" "$(head -c 300 "$tmp/err")"
	fi
}

i=0
for peer in nginx h2o; do
	port=$((${port_base:?} + i))
	tport=$((port_base + i + 1))
	i=$((i + 2))
	if [ $peer = nginx ]; then
		start nginx nginx.sh TLS_AES_128_GCM_SHA256 || continue
	else
		start h2o h2o.sh || continue
	fi
	www=$tmp/$peer/www
	check "$peer: h2c, 20 at once" h2 20 --h2 --prior-knowledge "http://127.0.0.1:$port/users"
	head_check "$peer: h2c HEAD" --h2 --prior-knowledge "http://127.0.0.1:$port/users"
	for be in "$@"; do
		check "$peer: h2 over TLS ($be), 20 at once" h2 20 --h2 --insecure --tls-backend "$be" \
			"https://127.0.0.1:$tport/users"
		check "$peer: without --h2 over TLS ($be): http/1.1" http/1.1 2 --insecure \
			--tls-backend "$be" "https://127.0.0.1:$tport/users"
	done
	stop
done
[ "$fails" = 0 ] || exit 1
echo "client_interop: every check passed"
