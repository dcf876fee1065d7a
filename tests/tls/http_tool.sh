#!/bin/sh
# http_tool.sh HTTP_BIN CERTS BACKEND - the example server examples/http serves HTTPS that curl
# accepts with --cacert: GET /json and /users, POST /echo of 200 KB byte-exact, TLS 1.2 and
# 1.3, HTTP on the other port at the same time, then SIGTERM stops it cleanly. The ports are
# tried from a pseudo-random start until the server can listen (at most 5 tries, 20 s each). Skips (77)
# without curl. Every wait is bounded; the server is stopped by its PID.
set -u
bin=$1 certs=$2 backend=$3
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	cat "$work/server.log" 2>/dev/null
	exit 1
}

. "$(dirname "$0")/../support/ports.sh" # port_base
for try in 1 2 3 4 5; do
	port=$((port_base + try * 2)) tport=$((port_base + try * 2 + 1))
	"$bin" --workers 1 --host 127.0.0.1 --port "$port" --https-port "$tport" \
		--tls-cert "$certs/server.pem" --tls-key "$certs/server.key" --tls-backend "$backend" \
		>"$work/server.log" 2>&1 &
	pid=$!
	i=0
	while [ $i -lt 200 ] && ! grep -q "HTTPS on" "$work/server.log"; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "HTTPS on" "$work/server.log" && break
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
done
[ -n "$pid" ] || fail "the server did not start"

url=https://localhost:$tport
# The name the certificate carries, on the address the server listens on: "localhost" is
# ::1 first, where another test's server (examples/http listens on both by default) may hold
# this port and answer plain HTTP (curl's "wrong version number", seen once under -j2).
pin="--resolve localhost:$tport:127.0.0.1"
c="curl -sS --max-time 10 $pin --cacert $certs/ca.pem"
[ "$($c $url/json)" = '{"message":"Hello, World!"}' ] || fail "GET /json over TLS 1.3"
[ "$($c --tlsv1.2 --tls-max 1.2 $url/json)" = '{"message":"Hello, World!"}' ] ||
	fail "GET /json over TLS 1.2"
n=$($c -o /dev/null -w '%{size_download} %{http_code} %{ssl_verify_result}' $url/users)
[ "$n" = "8173 200 0" ] || fail "GET /users: $n"
head -c 200000 /dev/urandom >"$work/body"
$c --data-binary "@$work/body" $url/echo >"$work/echoed" || fail "POST /echo"
cmp -s "$work/body" "$work/echoed" || fail "POST /echo: the body came back different"
[ "$(curl -sS --max-time 10 http://127.0.0.1:$port/health)" = ok ] || fail "plain HTTP beside it"
# A client that does not trust the server's CA is refused (curl's 60), and the server goes on.
curl -sS --max-time 10 $pin -o /dev/null $url/json 2>/dev/null
[ $? -eq 60 ] || fail "curl without --cacert was not refused for the certificate"
[ "$($c $url/json)" = '{"message":"Hello, World!"}' ] || fail "GET /json after a refused client"
kill -TERM "$pid"
i=0
while [ $i -lt 100 ] && kill -0 "$pid" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
kill -0 "$pid" 2>/dev/null && fail "SIGTERM did not stop the server within 10 s"
wait "$pid"
st=$?
pid=
[ $st -eq 0 ] || fail "the server exited with $st"
echo "ok: examples/http over HTTPS with $backend (ports $port, $tport)"
