#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# proxy.sh SERVE_BIN [tls] - giong-serve --proxy-protocol, as behind HAProxy's send-proxy and
# send-proxy-v2: requests sent after a v1 header (TCP4, TCP6) and a v2 header (TCP4, TCP6,
# LOCAL), raw over bash's /dev/tcp, are answered and logged (--log) with the client the header
# names (LOCAL: the connection's own); a request without a header is refused (400) and no
# file is served for it. With "tls" (a TLS backend was built): HTTPS through curl's
# --haproxy-protocol (the header before the handshake), and HTTPS without a header refused.
# Then the socket-activation path: the same with the listener handed in by
# systemd-socket-activate (LISTEN_FDS). Prints one "ok:" or "FAIL:" line a check; exits 1
# on a failure. Every wait is bounded; servers are stopped by their PID.
# shellcheck disable=SC1091,SC2034,SC2154 # e2e_lib.sh's show and tport; the headers are
# named indirectly (${!hdr})
set -u
bin=$1
tls=${2:-}
for c in curl systemd-socket-activate; do
	command -v $c >/dev/null || { echo "FAIL: $c is not installed (scripts/install-deps)"; exit 1; }
done
work=$(mktemp -d)
R=$work/replies
root=$work/root
mkdir -p "$R" "$root"
. "$(dirname "$0")/e2e_lib.sh"
cleanup() {
	local n
	for n in "${!spid[@]}"; do
		[ -n "${spid[$n]}" ] && kill -KILL "${spid[$n]}" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
for f in v1 v1six v2 v2six local none tls act; do
	echo proxied >"$root/$f.txt" # 8 bytes
done

# pp ID HEADER PATH [PORT] - HEADER (printf escapes: v2's bytes, NULs too, as \xHH) then
# "GET PATH HTTP/1.1" with "Connection: close", on a new connection to PORT (default: the
# server's HTTP port); the reply in $R/ID.raw, its status in st.
pp() {
	local id=$1 hdr=$2 path=$3 p=${4:-$port} rc
	show="raw $id"
	# shellcheck disable=SC2016 # the inner script's own arguments
	timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 9
		printf "$2" >&3
		printf "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" "$3" >&3
		cat <&3' pp "$p" "$hdr" "$path" >"$R/$id.raw" 2>/dev/null
	rc=$?
	st=$(head -n 1 "$R/$id.raw" | tr -d '\r' | cut -d' ' -f2)
	[ -n "$st" ] || st="(no reply)"
	[ $rc = 9 ] && st="(could not connect)"
	[ $rc = 124 ] && st="$st (the connection was still open after 5 s)"
}

# The headers. v2: the 12-byte signature, version 2 with PROXY (0x21) or LOCAL (0x20), the
# family (0x11 TCP over IPv4, 0x21 over IPv6), the length, source and destination addresses,
# then ports.
sig='\x0d\x0a\x0d\x0a\x00\x0d\x0a\x51\x55\x49\x54\x0a'
v1_4='PROXY TCP4 192.0.2.10 127.0.0.1 40000 8080\r\n'
v1_6='PROXY TCP6 2001:db8::5 2001:db8::1 40001 8080\r\n'
v2_4="$sig"'\x21\x11\x00\x0c\xc6\x33\x64\x14\x7f\x00\x00\x01\x9c\x42\x1f\x90' # 198.51.100.20
v2_6="$sig"'\x21\x21\x00\x24\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x07'
v2_6+='\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x9c\x43\x01\xbb' # 2001:db8::7
v2_local="$sig"'\x20\x00\x00\x00'

# logged OUT ADDR PATH - OUT has the line of ADDR's 200 for PATH (8 bytes).
logged() {
	local a=${2//./\\.}
	# HTTP/2.0: curl picks h2 by ALPN over HTTPS (giong-serve's default)
	grep -Eq "^$a - - \[[^]]+\] \"GET ${3//./\\.} HTTP/(1\.1|2\.0)\" 200 8\$" "$1"
}

# check_proxied OUT [PORT] - the five headers on PORT, each answered and logged in OUT; a
# request without one refused.
check_proxied() {
	local out=$1 p=${2:-$port} c id hdr addr
	for c in "v1|v1_4|192.0.2.10" "v1six|v1_6|2001:db8::5" "v2|v2_4|198.51.100.20" \
		"v2six|v2_6|2001:db8::7" "local|v2_local|127.0.0.1"; do
		IFS='|' read -r id hdr addr <<<"$c"
		begin "$id header ($hdr) on port $p: 200, the access log names $addr"
		pp "$id" "${!hdr}" "/$id.txt" "$p"
		if want_status 200; then
			grep -q '^proxied' "$R/$id.raw" || no "not the file"
		fi
		wait_for 2 logged "$out" "$addr" "/$id.txt" ||
			no "no log line for $addr: $(grep "/$id.txt" "$out")"
		finish
	done
	begin "no header on port $p: 400, nothing served"
	pp none "" /none.txt "$p"
	want_status 400
	grep -q '^proxied' "$R/none.raw" && no "the file was served"
	sleep 0.2 # the log's batch (0.1 s)
	grep -q 'none\.txt' "$out" && no "logged as a request: $(grep none.txt "$out")"
	finish
}

# --- listened -----------------------------------------------------------------------------
extra=()
[ "$tls" = tls ] && extra=(--self-signed)
start pp "${tls:+1}" "$root" --bind 127.0.0.1 --workers 2 --log --proxy-protocol \
	--grace-ms 1000 "${extra[@]}" || {
	print_logs
	fatal "giong-serve --proxy-protocol did not start"
}
check_proxied "$work/pp.out"
if [ "$tls" = tls ]; then
	begin "HTTPS with curl's --haproxy-protocol (v1 before the handshake): 200, logged"
	req tls -k --haproxy-protocol "https://127.0.0.1:$tport/tls.txt"
	want_status 200 && want_body "proxied"$'\n'
	wait_for 2 logged "$work/pp.out" 127.0.0.1 /tls.txt || no "no log line"
	finish
	begin "HTTPS without a header: refused"
	req tls0 -k "https://127.0.0.1:$tport/tls.txt"
	[ "$st" = 200 ] && no "served"
	finish
fi
stop pp
[ "$stop_status" = 0 ] || no "giong-serve --proxy-protocol: exit status $stop_status at SIGTERM"

# --- socket activation (what systemd does for a .socket unit) ------------------------------
if ! activate act 1 http "$root" --workers 2 --port 1 --log --proxy-protocol --grace-ms 1000; then
	no "systemd-socket-activate could not listen: $(cat "$work/act.err")"
else
	begin "socket activation: a v2 header on the socket handed in, logged"
	pp act "$v2_4" /act.txt "$aport"
	want_status 200
	wait_for 2 logged "$work/act.out" 198.51.100.20 /act.txt ||
		no "no log line: $(cat "$work/act.out")"
	grep -q "listeners from systemd" "$work/act.err" || no "not the sockets handed in"
	finish
	check_proxied "$work/act.out" "$aport"
	stop act
	if [ "$stop_status" != 0 ] || ! grep -q "giong-serve: stopped" "$work/act.err"; then
		no "no clean stop on SIGTERM: exit status $stop_status"
	fi
fi
[ "$failures" = 0 ] || {
	print_logs
	exit 1
}
