#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# ktls_guest.sh: kernel TLS (issue 29) measured on a kernel that has it. Our hosts' kernels have
# no CONFIG_TLS, so this runs in the Debian 6.1 guest of scripts/kernel-vm.sh (which loads
# tls.ko), on the host's build tree:
#
#   cmake -S bench/load -B build/bench-load-cmake && cmake --build build/bench-load-cmake --target idle_tls
#   GIONG_VM_RUN="bench/load/ktls_guest.sh" scripts/kernel-vm.sh
#
# For each backend (openssl, wolfssl) and kernel TLS on (GIONG_TLS_KTLS unset: auto) and off
# (GIONG_TLS_KTLS=off), giong-serve (--workers 1, HTTPS on loopback, an ECDSA P-256
# certificate made now; --idle-ms of an hour: emulated handshakes take ~40 ms, so 1,000 take
# longer than the default 15 s idle timeout, which would close the first ones):
#   1. memory of idle HTTPS connections: KTLS_CONNS connections from idle_tls (a full TLS 1.3
#      handshake, TLS_AES_128_GCM_SHA256, and one GET of an 8 KiB file each, then held open);
#      the server's VmRSS and RssAnon (its heap and other anonymous memory; /proc/PID/status)
#      before and after, per connection, and the kernel's Slab (/proc/meminfo: both ends of
#      every connection, the kernel's TLS state included), per connection; the connections the
#      server has open over HTTPS then (giong_http_connections_open) and the kernel's
#      TlsCurrTxSw (sockets with the send direction in the kernel now);
#   2. callgrind's user-space instructions per 8 KiB HTTPS response: under valgrind, one
#      connection with N1 keep-alive requests of the file (curl, URL globbing), then another
#      with N2, a callgrind dump after each (and one before, after a first request);
#      (I(N2) - I(N1)) / (N2 - N1) is one response's cost, the handshake, start-up and
#      shutdown cancelled.
# The server's /metrics (giong_tls_ktls_tx_total, _rx_total, _released_total and the
# fallbacks) show what kernel TLS did.
# Optionally (KTLS_GIB=G) 3.: a G GiB random file (made on the guest's /tmp) fetched once with
# curl over HTTPS with kernel TLS on (the first backend), compared byte for byte (cmp), the
# counters before and after. Emulated kernel TLS seals ~3-5 MB/s: 1 GiB is minutes; raise
# GIONG_VM_TIMEOUT (seconds, default 1500) with it. (The write timeouts are printed when the
# fetch fails: before main's fix of 2026-12-06 a spliced body had one write timeout for all
# of it, and was cut after 30 s.)
# Prints progress lines, then markdown tables. Exit status 1 when a step failed.
#
# Environment:
#   KTLS_CONNS     idle connections (default 1000; 0: no part 1)
#   KTLS_REQS      "N1 N2" requests of the callgrind connections (default "10 110"; "0 0":
#                  no part 2)
#   KTLS_BACKENDS  (default "openssl wolfssl")
#   KTLS_GIB       GiB of the big fetch (default 0: none)
#   KTLS_BUILD     the build tree (default build, as kernel-vm.sh's GIONG_VM_BUILD)
#   IDLE_TLS       the client (default build/bench-load-cmake/idle_tls)
# Every server is on 127.0.0.1, stopped by its PID; every wait is bounded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${KTLS_BUILD:-$src/build}
serve=$build/bin/serve
idle_tls=${IDLE_TLS:-$src/build/bench-load-cmake/idle_tls}
conns=${KTLS_CONNS:-1000}
read -r n1 n2 <<<"${KTLS_REQS:-10 110}"
read -ra backends <<<"${KTLS_BACKENDS:-openssl wolfssl}"
gib=${KTLS_GIB:-0}
t_start=$(date +%s)

say() { echo "ktls_guest: [$(($(date +%s) - t_start)) s] $*" >&2; }
die() {
	say "$*"
	exit 1
}
[[ -x $serve ]] || die "$serve is missing (cmake --build $build --target serve)"
[[ -x $idle_tls ]] || die "$idle_tls is missing (see the header)"
[[ $n2 -gt $n1 || $n2$n1 == 00 ]] || die "KTLS_REQS: N2 must be more than N1"
for c in curl openssl valgrind callgrind_control; do
	command -v $c >/dev/null || die "$c is required"
done
[[ -r /proc/net/tls_stat ]] || say "no /proc/net/tls_stat: this kernel has no TLS (kTLS on will fall back)"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work=$(mktemp -d)
pids=() # every process started, for the cleanup
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$work/root"
head -c 8192 /dev/urandom >"$work/root/f8k.bin"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
	-days 2 -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1 || die "openssl req failed"
failures=0
port=$((20000 + RANDOM % 20000))

# start BACKEND KTLS(on|off) [PREFIX...]: the server (under PREFIX: valgrind ...) on new ports;
# sets spid, hport (HTTP, /metrics), sport (HTTPS). 1 when it is not up within 600 s.
start() {
	local be=$1 k=$2 envs=() _
	shift 2
	[[ $k == off ]] && envs=(GIONG_TLS_KTLS=off)
	port=$((port + 2))
	hport=$port sport=$((port + 1))
	env "${envs[@]}" "$@" "$serve" "$work/root" --bind 127.0.0.1 --port "$hport" \
		--https-port "$sport" --workers 1 --metrics /metrics --tls-cert "$work/cert.pem" \
		--tls-key "$work/key.pem" --tls-backend "$be" --idle-ms 3600000 >"$work/serve.log" 2>&1 &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 1200); do
		curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$hport/metrics" && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.5
	done
	say "$be kTLS $k: the server did not start: $(tail -3 "$work/serve.log")"
	return 1
}

# stop: SIGTERM to the server, 120 s to end (valgrind writes its profile), then SIGKILL.
stop() {
	local _
	kill -TERM "$spid" 2>/dev/null || true
	for _ in $(seq 240); do kill -0 "$spid" 2>/dev/null || break; sleep 0.5; done
	kill -KILL "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
}

# metrics FILE: the server's /metrics into FILE; "tx/rx/released/module/cipher/other" on stdout.
metrics() {
	curl -s --max-time 30 -o "$1" "http://127.0.0.1:$hport/metrics" || : >"$1"
	awk 'index($0, "giong_tls_ktls_tx_total ") == 1 { t = $2 }
		index($0, "giong_tls_ktls_rx_total ") == 1 { r = $2 }
		index($0, "giong_tls_ktls_released_total ") == 1 { f = $2 }
		index($0, "giong_tls_ktls_fallback_total{reason=\"module\"} ") == 1 { m = $2 }
		index($0, "giong_tls_ktls_fallback_total{reason=\"cipher\"} ") == 1 { c = $2 }
		index($0, "giong_tls_ktls_fallback_total{reason=\"other\"} ") == 1 { o = $2 }
		END { printf "%s/%s/%s/%s/%s/%s\n", t, r, f, m, c, o }' "$1"
}

# msum NAME FILE: the sum of the samples of NAME (any labels, or NAME{labels}) in /metrics FILE
msum() { awk -v n="$1" 'index($0, n "{") == 1 || index($0, n " ") == 1 { s += $NF } END { print s + 0 }' "$2"; }
# kib PID FIELD: a field of /proc/PID/status in KiB; slab: the kernel's Slab in KiB.
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
slab() { awk '$1 == "Slab:" { print $2 }' /proc/meminfo; }
tls_curr() { awk '$1 == "TlsCurrTxSw" { print $2 }' /proc/net/tls_stat 2>/dev/null || echo -; }
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.0f", (b - a) * 1024 / n }'; }

# 1. idle connections -----------------------------------------------------------------------
idle_rows=()
idle() {
	local be=$1 k=$2 r0 a0 s0 r1 a1 s1 m c secs t0 curr open _
	start "$be" "$k" || { failures=$((failures + 1)); return 0; }
	curl -sk --max-time 60 -o /dev/null "https://127.0.0.1:$sport/f8k.bin" || true
	sleep 1
	r0=$(kib "$spid" VmRSS) a0=$(kib "$spid" RssAnon) s0=$(slab)
	t0=$(date +%s)
	"$idle_tls" -p "$sport" -n "$conns" -u /f8k.bin -t 1800 >"$work/idle.out" 2>&1 &
	c=$!
	pids+=("$c")
	for _ in $(seq 3600); do # 30 minutes at most
		grep -qE '^(ready|failed)' "$work/idle.out" 2>/dev/null && break
		kill -0 "$c" 2>/dev/null || break
		sleep 0.5
	done
	sleep 2
	r1=$(kib "$spid" VmRSS) a1=$(kib "$spid" RssAnon) s1=$(slab)
	m=$(metrics "$work/m.idle")
	curr=$(tls_curr) open=$(msum 'giong_http_connections_open{worker="0",scheme="https"}' "$work/m.idle")
	kill -TERM "$c" 2>/dev/null || true
	wait "$c" 2>/dev/null || true
	if ! grep -q '^ready' "$work/idle.out"; then
		say "$be kTLS $k: idle_tls failed: $(tail -3 "$work/idle.out" | tr '\n' ' ')"
		failures=$((failures + 1))
		stop
		return 0
	fi
	secs=$(awk '/^ready/ { print $3 }' "$work/idle.out")
	say "$be kTLS $k: $conns idle connections in ${secs}s ($(($(date +%s) - t0)) s): VmRSS $r0 -> $r1 KiB, RssAnon $a0 -> $a1 KiB, Slab $s0 -> $s1 KiB; tx/rx/released/module/cipher/other $m; open $open; TlsCurrTxSw $curr"
	idle_rows+=("| $be | $k | $conns | $secs | $r0 → $r1 | $(per "$r0" "$r1" "$conns") | $(per "$a0" "$a1" "$conns") | $(per "$s0" "$s1" "$conns") | $m | $open | $curr |")
	stop
}

# 2. instructions per response ----------------------------------------------------------------
declare -A ir # BACKEND.KTLS -> instructions per response
instr_rows=()
# total FILE: the instructions of a callgrind dump
total() { awk '$1 == "totals:" { print $2 }' "$1"; }
# fetch N: N keep-alive requests of the file on one connection; 1 if a body is missing.
fetch() {
	local got
	got=$(curl -sk --http1.1 --max-time 900 "https://127.0.0.1:$sport/f8k.bin?[1-$1]" | wc -c)
	[[ $got -eq $(($1 * 8192)) ]] || { say "$1 requests: $got bytes, not $(($1 * 8192))"; return 1; }
}
instr() {
	local be=$1 k=$2 cg=$work/cg.out i1 i2 m ok=1
	rm -f "$cg"*
	start "$be" "$k" valgrind --tool=callgrind --callgrind-out-file="$cg" ||
		{ failures=$((failures + 1)); return 0; }
	fetch 1 || ok=0 # first-time costs (the file opened and cached, allocations) go in .1
	callgrind_control -d "$spid" >/dev/null 2>&1 || ok=0 # .1: start-up
	fetch "$n1" || ok=0
	callgrind_control -d "$spid" >/dev/null 2>&1 || ok=0 # .2: N1 requests
	fetch "$n2" || ok=0
	callgrind_control -d "$spid" >/dev/null 2>&1 || ok=0 # .3: N2 requests
	m=$(metrics "$work/m.cg")
	stop
	i1=$(total "$cg.2" 2>/dev/null || true) i2=$(total "$cg.3" 2>/dev/null || true)
	if [[ $ok -eq 0 || -z $i1 || -z $i2 ]]; then
		say "$be kTLS $k: the callgrind run failed ($(ls "$work"))"
		failures=$((failures + 1))
		return 0
	fi
	ir[$be.$k]=$(((i2 - i1) / (n2 - n1)))
	say "$be kTLS $k: $n1 requests $i1, $n2 requests $i2 instructions: ${ir[$be.$k]} per response; tx/rx/released/module/cipher/other $m"
	instr_rows+=("| $be | $k | $i1 | $i2 | ${ir[$be.$k]} | $m |")
}

# 3. the big fetch ---------------------------------------------------------------------------
big_rows=()
big() {
	local be=$1 f=$work/root/big.bin m0 m1 t0 secs st s0 s1 rate
	say "making a $gib GiB file"
	head -c $((gib << 30)) /dev/urandom >"$f"
	start "$be" on || { failures=$((failures + 1)); return 0; }
	m0=$(metrics "$work/m.b0") s0=$(tls_curr)
	t0=$(date +%s)
	st=ok
	curl -sSk --http1.1 --max-time $((gib * 3600)) "https://127.0.0.1:$sport/big.bin" |
		cmp -s - "$f" || st=FAILED
	secs=$(($(date +%s) - t0))
	m1=$(metrics "$work/m.b1") s1=$(tls_curr)
	stop
	rm -f "$f"
	if [[ $st != ok ]]; then
		failures=$((failures + 1))
		# giong-serve closes a response not sent within its write timeout (30 s); where
		# the body is spliced (plain HTTP, and HTTPS with kernel TLS) that holds for the
		# whole file, not for each write: at emulated speed, 1 GiB needs minutes.
		say "write timeouts: $(msum giong_http_write_timeouts_total "$work/m.b1"); the server's log: $(tail -3 "$work/serve.log" | tr '\n' ' ')"
	fi
	say "$be kTLS on: $gib GiB in $secs s, byte for byte: $st; tx/rx/released/module/cipher/other $m0 -> $m1"
	rate=- # of a fetch that ended early: none
	[[ $st == ok ]] && rate=$(awk -v g="$gib" -v s="$secs" 'BEGIN { printf "%.2f", g * 1073.741824 / (s ? s : 1) }')
	big_rows+=("| $be | $gib GiB | $secs | $rate | $st | $m0 → $m1 | $s0 → $s1 |")
}

say "kernel $(uname -r); $conns idle connections; callgrind $n1 and $n2 requests; backends ${backends[*]}"
for be in "${backends[@]}"; do
	for k in on off; do [[ $conns -eq 0 ]] || idle "$be" "$k"; done
done
for be in "${backends[@]}"; do
	for k in on off; do [[ $n2 -eq 0 ]] || instr "$be" "$k"; done
done
[[ $gib -gt 0 ]] && big "${backends[0]}"

echo
echo "Kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'); giong-serve --workers 1; kTLS on: GIONG_TLS_KTLS unset (auto), off: GIONG_TLS_KTLS=off."
if [[ ${#idle_rows[@]} -gt 0 ]]; then
	echo
	echo "Idle HTTPS connections (idle_tls: TLS 1.3 handshake, TLS_AES_128_GCM_SHA256, one GET of 8 KiB each); per connection: the server's VmRSS and RssAnon growth, the kernel's Slab growth (both ends):"
	echo
	echo "| backend | kTLS | conns | handshakes s | VmRSS KiB | RSS B/conn | RssAnon B/conn | kernel Slab B/conn | ktls tx/rx/released/module/cipher/other | open | TlsCurrTxSw |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"
	printf '%s\n' "${idle_rows[@]}"
fi
if [[ ${#instr_rows[@]} -gt 0 ]]; then
	echo
	echo "Callgrind: the server's user-space instructions per 8 KiB HTTPS response (keep-alive, HTTP/1.1, one connection of $n1 then one of $n2 requests):"
	echo
	echo "| backend | kTLS | instr, $n1 requests | instr, $n2 requests | per response | on / off | ktls tx/rx/released/module/cipher/other |"
	echo "|---|---|---:|---:|---:|---:|---|"
	for row in "${instr_rows[@]}"; do
		be=$(awk -F'|' '{ gsub(/ /, "", $2); print $2 }' <<<"$row")
		ratio=-
		[[ $row == *"| on |"* && -n ${ir[$be.on]:-} && -n ${ir[$be.off]:-} && ${ir[$be.off]} -gt 0 ]] &&
			ratio=$(awk -v a="${ir[$be.on]}" -v b="${ir[$be.off]}" 'BEGIN { printf "%.3f", a / b }')
		# the ratio goes before the counters' column
		echo "${row% | *} | $ratio | ${row##* | }"
	done
fi
if [[ ${#big_rows[@]} -gt 0 ]]; then
	echo
	echo "Big fetch (curl, HTTP/1.1, kTLS on), compared with cmp:"
	echo
	echo "| backend | size | s | MB/s | bytes | ktls tx/rx/released/module/cipher/other | TlsCurrTxSw |"
	echo "|---|---|---:|---:|---|---|---|"
	printf '%s\n' "${big_rows[@]}"
fi
echo
echo "Run time: $(($(date +%s) - t_start)) s; failures: $failures"
[[ $failures -eq 0 ]]
