#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# ktls.sh SERVE_BIN MIB BACKEND... - giong-serve over HTTPS with kernel TLS (issue 29), on each
# BACKEND: a file of MIB MiB fetched with curl over TLS 1.3 and over TLS 1.2, byte for byte,
# twice on one connection (where the kernel has the send direction, the body is spliced into
# the socket and the kernel seals it); then --metrics: where the kernel has TLS (the `tls`
# module: /proc/net/tls_stat), giong_tls_ktls_tx_total, _rx_total and _released_total count
# each connection (its second request came through the kernel's receive); where it has
# none, giong_tls_ktls_fallback_total{reason="module"} does; with GIONG_TLS_KTLS=off, nothing
# counts. Label ktls: the 6.1 guest runs it.
# KTLS_MIB in the environment overrides MIB (the 1 GiB run of bench/results/https.md).
# Prints one "ok:" or "FAIL:" line a check; exits 1 on a failure. Every wait is bounded;
# servers are stopped by their PID.
# shellcheck disable=SC1091,SC2034,SC2154 # e2e_lib.sh's variables (port, tport, show)
set -u
bin=$1 mib=${KTLS_MIB:-$2}
shift 2
backends=("$@")
command -v curl >/dev/null || { echo "FAIL: curl is not installed (scripts/install-deps)"; exit 1; }
[ ${#backends[@]} -gt 0 ] || { echo "SKIP: no TLS backend built"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
R=$work/replies
root=$work/root
mkdir -p "$R" "$root"
. "$here/e2e_lib.sh"
cleanup() {
	kill_servers
	[ "$failures" != 0 ] && print_logs
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

sh "$here/../tls/make-certs.sh" "$work/certs" >/dev/null 2>&1 || fatal "tests/tls/make-certs.sh failed"
head -c $((mib << 20)) /dev/urandom >"$root/big.bin"
kernel_tls=0
[ -r /proc/net/tls_stat ] && kernel_tls=1
# GIONG_TLS_KTLS=off (the suite run with kernel TLS off): nothing is tried, nothing counted.
ktls_off=0
case ${GIONG_TLS_KTLS:-} in off | 0) ktls_off=1 ;; esac

# metric NAME - the value of the sample NAME (labels included) in $R/m.b, or empty
metric() {
	awk -v n="$1" 'index($0, n " ") == 1 { print $2 }' "$R/m.b"
}

for b in "${backends[@]}"; do
	start "ktls-$b" 1 "$root" --bind 127.0.0.1 --workers 1 --metrics /metrics \
		--tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key" \
		--tls-backend "$b" || {
		begin "[$b] the HTTPS server starts"
		no "it did not: $(cat "$work/ktls-$b.err")"
		continue
	}
	S=https://localhost:$tport
	tc=(--cacert "$work/certs/ca.pem" --resolve "localhost:$tport:127.0.0.1" --http1.1)
	for v in --tlsv1.3 "--tlsv1.2 --tls-max 1.2"; do
		begin "[$b] $mib MiB over HTTPS ($v), twice on one connection, byte for byte"
		# shellcheck disable=SC2086 # v is curl options
		st=$(curl -sS --max-time $((120 + mib))  "${tc[@]}" $v -w '%{http_code} ' -o "$R/k1.b" \
			"$S/big.bin" -o "$R/k2.b" "$S/big.bin" 2>&1)
		[ "$st" = "200 200 " ] || no "statuses '$st'"
		cmp -s "$R/k1.b" "$root/big.bin" || no "the first copy differs"
		cmp -s "$R/k2.b" "$root/big.bin" || no "the second copy differs"
		rm -f "$R/k1.b" "$R/k2.b"
		finish
	done
	begin "[$b] --metrics counts the two connections' kernel TLS (kernel TLS here: $kernel_tls)"
	curl -sS --max-time 10 -o "$R/m.b" "http://127.0.0.1:$port/metrics" || no "no metrics"
	tx=$(metric giong_tls_ktls_tx_total)
	module=$(metric 'giong_tls_ktls_fallback_total{reason="module"}')
	rx=$(metric giong_tls_ktls_rx_total)
	released=$(metric giong_tls_ktls_released_total)
	if [ "$ktls_off" = 1 ]; then
		[ "${tx:-x}" = 0 ] || no "giong_tls_ktls_tx_total is '$tx' with GIONG_TLS_KTLS=off"
		[ "${module:-x}" = 0 ] || no "a fallback counted with GIONG_TLS_KTLS=off: '$module'"
	elif [ "$kernel_tls" = 1 ]; then
		[ "${tx:-0}" -ge 2 ] || no "giong_tls_ktls_tx_total is '$tx', not 2 or more"
		# The receive direction too: the second request of each connection came
		# through the kernel, and the TLS library's object was freed.
		[ "${rx:-0}" -ge 2 ] || no "giong_tls_ktls_rx_total is '$rx', not 2 or more"
		[ "${released:-0}" -ge 2 ] || no "giong_tls_ktls_released_total is '$released'"
	else
		[ "${module:-0}" -ge 2 ] || no "fallback for the module is '$module', not 2 or more"
		[ "${tx:-x}" = 0 ] || no "giong_tls_ktls_tx_total is '$tx' without kernel TLS"
		[ "${rx:-x}" = 0 ] || no "giong_tls_ktls_rx_total is '$rx' without kernel TLS"
	fi
	finish
	stop "ktls-$b"
	[ "$stop_status" = 0 ] || { begin "[$b] stops"; no "exit status $stop_status"; }
done
[ "$failures" = 0 ]
