#!/bin/sh
# interop.sh H2_SERVER CERTDIR [BACKEND...] - h2_server (tests/http2/h2_server.c) against the
# HTTP/2 clients of the machine: curl (prior knowledge, h2c; and ALPN h2 over TLS with each
# BACKEND: openssl, wolfssl), nghttp -nv and h2load. Asserts that HTTP/2 was spoken, the
# status codes and the body bytes: /big (a sized send) and /file (sendfile) must be the same
# bytes, and the same as HTTP/1.1 gives; /echo gives back 1 MiB. CERTDIR holds the test
# certificates (tests/tls/make-certs.sh). Every process runs under timeout(1).
# One line per check, "pass NAME" or "FAIL NAME: why"; exit 0 when all passed, 1 otherwise,
# 77 (skip) when curl has no HTTP/2.
set -u
server=$1
certs=$2
shift 2

if ! curl --version | grep -q 'HTTP2'; then
	echo "skip: this curl has no HTTP/2"
	exit 77
fi
# shellcheck source=tests/http2/checks.sh
. "$(dirname "$0")/checks.sh" # tmp, pid (stopped at exit), ok, fail, fails
head -c 1048576 /dev/urandom >"$tmp/upload"

# start NAME ARGS...: h2_server in the background, its port in $port ("" when it did not
# start: the check NAME fails; 77 when it lacks the backend: the caller skips).
start() {
	name=$1
	shift
	: >"$tmp/out"
	timeout 120 "$server" --port 0 "$@" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	port=
	for _ in $(seq 50); do
		port=$(sed -n 's/^port \([0-9][0-9]*\)$/\1/p' "$tmp/out")
		[ -n "$port" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	pid=
	[ "$rc" = 77 ] && return 77
	fail "$name" "h2_server $* did not start (exit $rc): $(cat "$tmp/err")"
	return 1
}

# stop NAME WANT_H2: SIGTERM; exit 0 and, when WANT_H2, HTTP/2 connections counted and
# every nghttp2 session freed.
stop() {
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	pid=
	line=$(grep '^h2 ' "$tmp/out")
	conns=$(echo "$line" | sed -n 's/.* connections \([0-9]*\) .*/\1/p')
	held=$(echo "$line" | sed -n 's/.* session_bytes \([0-9]*\).*/\1/p')
	if [ "$rc" != 0 ]; then
		fail "$1.exit" "h2_server exit status $rc: $(tail -3 "$tmp/err")"
	elif [ "$2" = yes ] && { [ "${conns:-0}" = 0 ] || [ "$held" != 0 ]; }; then
		fail "$1.exit" "counters: $line"
	else
		ok "$1.exit"
	fi
}

# fetch NAME WANT OPTS... URL: curl with OPTS; WANT is "code version bytes"; the body is
# left in $tmp/body.
fetch() {
	name=$1
	want=$2
	shift 2
	rm -f "$tmp/body"
	# the caller may give a -w of its own: curl keeps the last
	got=$(timeout 30 curl -s -o "$tmp/body" -w '%{http_code} %{http_version} %{size_download}' "$@")
	got=$(echo "$got" | sed 's/^ //')
	if [ "$got" = "$want" ]; then
		ok "$name"
	else
		fail "$name" "curl $*: '$got', want '$want'"
	fi
}

# same NAME FILE1 FILE2: the same bytes.
same() {
	if cmp -s "$2" "$3"; then ok "$1"; else fail "$1" "$2 and $3 differ"; fi
}

# curls PREFIX BASE OPTS...: the exchanges with curl over one kind of connection.
curls() {
	p=$1
	base=$2
	shift 2
	fetch "$p.json" "200 2 27" "$@" "$base/json"
	grep -q '"Hello, World!"' "$tmp/body" ||
		fail "$p.json_body" "$(head -c 100 "$tmp/body" | tr -cd '[:print:]')"
	fetch "$p.head" "200 2 0" "$@" -I "$base/json"
	fetch "$p.204" "204 2 0" "$@" "$base/status/204"
	fetch "$p.404" "404 2" "$@" -w ' %{http_code} %{http_version}' "$base/nowhere"
	fetch "$p.big" "200 2 1048699" "$@" "$base/big?n=1048699"
	mv "$tmp/body" "$tmp/big"
	fetch "$p.file" "200 2 1048699" "$@" "$base/file"
	same "$p.file_bytes" "$tmp/big" "$tmp/body"
	fetch "$p.big_http1" "200 1.1 1048699" "$@" --http1.1 "$base/big?n=1048699"
	same "$p.big_bytes" "$tmp/big" "$tmp/body"
	fetch "$p.stream" "200 2 12000" "$@" "$base/stream?n=1000"
	fetch "$p.echo" "200 2 1048576" "$@" --data-binary "@$tmp/upload" "$base/echo"
	same "$p.echo_bytes" "$tmp/upload" "$tmp/body"
	fetch "$p.count" "200 2 8" "$@" --data-binary "@$tmp/upload" "$base/count"
	[ "$(cat "$tmp/body")" = 1048576 ] ||
		fail "$p.count_body" "$(head -c 40 "$tmp/body" | tr -cd '[:print:]')"
}

# tool NAME SECONDS PROGRAM PATTERN... -- ARG...: PROGRAM ARG... (skipped when the machine
# lacks it) passes when its output holds every PATTERN (fixed strings).
tool() {
	name=$1
	secs=$2
	prog=$3
	shift 3
	: >"$tmp/patterns"
	while [ "$1" != -- ]; do
		printf '%s\n' "$1" >>"$tmp/patterns"
		shift
	done
	shift
	if ! command -v "$prog" >/dev/null; then
		echo "skip $name: no $prog (nghttp2-client)"
		return
	fi
	timeout "$secs" "$prog" "$@" >"$tmp/tool" 2>&1
	while read -r pat; do
		if ! grep -qF -- "$pat" "$tmp/tool"; then
			fail "$name" "no '$pat' in: $(grep -E 'requests:|status|protocol|ERROR|error' \
				"$tmp/tool" | head -5 | tr '\n' ' ')"
			return
		fi
	done <"$tmp/patterns"
	ok "$name"
}

# tools PREFIX URL: nghttp -nv and h2load on URL's server.
tools() {
	tool "$1.nghttp" 30 nghttp ':status: 200' 'recv DATA frame <length=27, flags=0x01' \
		-- -nv "$2/json"
	tool "$1.h2load" 60 h2load '2000 succeeded, 0 failed, 0 errored' 'status codes: 2000 2xx' \
		'Application protocol: h2' -- -n 2000 -c 10 -m 10 "$2/json"
}

# h2c: prior knowledge on a plain connection
if start h2c; then
	curls h2c "http://127.0.0.1:$port" --http2-prior-knowledge
	tools h2c "http://127.0.0.1:$port"
	stop h2c yes
fi

# h2 over TLS, chosen by ALPN, with each backend; http/1.1 still there for who asks
for b in "$@"; do
	start "tls_$b" --tls "$certs" --backend "$b"
	case $? in
	0) ;;
	77)
		echo "skip tls_$b: h2_server has no $b backend"
		continue
		;;
	*) continue ;;
	esac
	curls "tls_$b" "https://localhost:$port" --http2 --cacert "$certs/ca.pem"
	fetch "tls_$b.alpn_http1" "200 1.1 27" --http1.1 --cacert "$certs/ca.pem" \
		"https://localhost:$port/json"
	tools "tls_$b" "https://localhost:$port"
	stop "tls_$b" yes
done

# --no-h2: the same server without HTTP/2 answers HTTP/1.1 (ALPN http/1.1 over TLS)
if [ $# -gt 0 ] && start no_h2 --no-h2 --tls "$certs" --backend "$1"; then
	fetch no_h2.alpn "200 1.1 27" --http2 --cacert "$certs/ca.pem" "https://localhost:$port/json"
	stop no_h2 no
fi

if [ "$fails" -gt 0 ]; then
	echo "$fails failed"
	exit 1
fi
echo "all passed"
exit 0
