#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# https_bench.sh: the HTTPS benchmark. giong's example server (examples/http.c) with its two TLS
# backends against nginx with OpenSSL, all serving the same bodies (/json 27 bytes, /users
# 8,173) with the same ECDSA P-256 certificate (made now with the openssl command) and TLS
# 1.3 with one cipher suite; each server in turn pinned to one CPU, `wrk -t1` pinned to the
# other, in interleaved rounds. Cases: kept-alive connections, and a new TLS connection per
# request (wrk -H "Connection: close": wrk reconnects after each response, so requests/s is
# handshakes/s and CPU per request is CPU per handshake, TCP connect and close included).
# Prints markdown tables of medians with the per-round spread: requests/s, server CPU µs per
# request (utime+stime of the server's processes from /proc over wrk's run) and its inverse
# (requests per server CPU-second), p50/p99, RSS; resident memory per idle HTTPS connection
# (idle_tls: N full handshakes and one request each, the server's RSS before and after,
# divided by N); the suite and key exchange each server negotiates (openssl s_client);
# optionally perf profiles (top symbols) of chosen servers.
#
# The measuring machinery is http_bench.sh's and server_lib.sh's: server_lib.sh is sourced,
# and http_bench.sh's measure(), count_syscalls(), parse_wrk() and its table helpers are
# read from that file (server_lib.sh's import_fns), with wrk_run() replaced by an HTTPS one.
#
# usage: bench/load/https_bench.sh [options]
#   --servers "LIST"  which servers, from: nginx openssl wolfssl (the suite of --suite) and
#                     nginx-chacha openssl-chacha wolfssl-chacha (TLS_CHACHA20_POLY1305_SHA256)
#                     (default "nginx openssl wolfssl wolfssl-chacha"); openssl and wolfssl
#                     are build/bin/http --workers 1 --tls-backend openssl|wolfssl;
#                     openssl-b, wolfssl-b: the same from $GIONG_HTTP_B (A/B of two builds)
#   --suite S         the TLS 1.3 suite of nginx, openssl, wolfssl (TLS_AES_128_GCM_SHA256)
#   --baseline NAME   ratios are to this server (default: nginx)
#   --rounds R        interleaved rounds (default 5)
#   --secs S          measured seconds per run (default 4), after a --warmup W s run (1)
#   --cases "LIST"    PATH:CONNS:MODE, MODE 1: kept alive, 0: a new connection per request
#                     (default "/json:50:1 /users:50:1 /json:50:0")
#   --idle N          idle HTTPS connections for the memory measurement (default 10000; 0:
#                     skip it), on the freshly started server, in the first --idle-rounds K
#                     rounds (default 2); two idle_tls processes on both CPUs make them
#   --perf "LIST"     servers to profile (default "openssl wolfssl"; "" for none): in round 1,
#                     perf record over a --perf-secs S (default 3) run of each case; the top
#                     functions (perf_top.sh: static ones of stripped libraries too) go into
#                     the output
#   --syscalls M      auto|perf|none (default none): system calls per request, round 1
#   --server-cpu N    CPU for the servers (default 1); --client-cpu N for wrk (default 0)
#   --port-base P     first port (default 7600)
#   --raw FILE        also write every measurement as tab-separated values
#   --max-other F     a run during which other processes used more than F of a CPU on the
#   --retries N       two CPUs is repeated up to N times (defaults 0.2 and 1), quietest kept
#   --wait-quiet S    before each run, wait up to S s (default 0) for quieter CPUs
#   --quick           1 round, 2 s runs, no warm-up, --idle 1000, --perf-secs 2
#
# Needs build/bin/http (built with libgiong-tls and both backends), build/bench-load/idle_tls
# or build/bench-load-cmake/idle_tls (cmake -S bench/load -B build/bench-load-cmake && cmake
# --build build/bench-load-cmake --target idle_tls; or IDLE_TLS=path), nginx with ssl, wrk,
# curl, openssl, taskset, ss. HTTPS_BENCH_KEEP=1 keeps the work directory. Every process is
# started by this script, bounded in time and stopped by its PID; loopback only. Exit status
# is non-zero if a run failed, a server died, sent other bodies, or negotiated another suite.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=https_bench
# shellcheck source=bench/load/server_lib.sh
. "$HERE/server_lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${BENCH_LOAD_BIN:-$ROOT/build/bench-load}
HTTP=${GIONG_HTTP:-$ROOT/build/bin/http}
set_cmdline bench/load/https_bench.sh "$@"

import_fns "$HERE/http_bench.sh" tree cpu_ticks rss_kib to_us to_bytes parse_wrk measure \
	count_syscalls vals median spread med cell ratio

CHACHA=TLS_CHACHA20_POLY1305_SHA256
rounds=5 secs=4 warmup=1 cases_opt="/json:50:1 /users:50:1 /json:50:0" idle=10000
# shellcheck disable=SC2034 # sys_secs: read by the imported count_syscalls()
idle_rounds=2 syscalls=none sys_secs=2 server_cpu=1 client_cpu=0 port_base=7600
baseline=nginx server_list="nginx openssl wolfssl wolfssl-chacha" suite=TLS_AES_128_GCM_SHA256
perf_list="openssl wolfssl" perf_secs=3 raw_out="" retries=1 max_other=0.2 wait_quiet=0

while [[ $# -gt 0 ]]; do
	case $1 in
	--servers) server_list=$2; shift 2 ;;
	--suite) suite=$2; shift 2 ;;
	--baseline) baseline=$2; shift 2 ;;
	--cases) cases_opt=$2; shift 2 ;;
	--idle) idle=$2; shift 2 ;;
	--idle-rounds) idle_rounds=$2; shift 2 ;;
	--perf) perf_list=$2; shift 2 ;;
	--perf-secs) perf_secs=$2; shift 2 ;;
	--quick) rounds=1 secs=2 warmup=0 idle=1000 idle_rounds=1 perf_secs=2; shift ;;
	-h|--help) sed -n '3,54p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) take_opt "$@" || die "unknown option '$1' (--help)"; shift 2 ;;
	esac
done
for v in rounds secs warmup idle idle_rounds perf_secs retries wait_quiet; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "--${v//_/-} takes a whole number"
done
cases=()
for c in $cases_opt; do
	[[ $c =~ ^/[^:]*:[0-9]+:[01]$ ]] || die "--cases: '$c' is not PATH:CONNS:MODE (MODE 0 or 1)"
	cases+=("$c")
done
[[ ${#cases[@]} -gt 0 ]] || die "no case to run"
for t in taskset ss wrk curl openssl nginx; do command -v $t >/dev/null || die "$t is required"; done
nginx -V 2>&1 | grep -q -- --with-http_ssl_module || die "this nginx has no ssl module"
IDLE_TLS=${IDLE_TLS:-}
for f in "$BIN/idle_tls" "$ROOT/build/bench-load-cmake/idle_tls"; do
	[[ -z $IDLE_TLS && -x $f ]] && IDLE_TLS=$f
done
[[ $idle -eq 0 || -x $IDLE_TLS ]] ||
	die "no idle_tls: cmake -S bench/load -B build/bench-load-cmake && cmake --build build/bench-load-cmake --target idle_tls"
if [[ $syscalls == auto ]]; then
	syscalls=none
	perf_syscalls && syscalls=perf
fi
case $syscalls in perf|none) ;; *) die "--syscalls: auto, perf or none" ;; esac
[[ -z $perf_list ]] || command -v perf >/dev/null || { say "no perf: no profiles"; perf_list=""; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

make_work https_bench HTTPS_BENCH_KEEP

make_cert "$WORK"
"$HERE/http-peers/make_bodies.sh" "$WORK/ref"

# --- the servers: cmds[], names[], and suites[] (the suite each must negotiate) ---------------
names=() cmds=() suites=()
for s in $server_list; do
	case $s in
	*-chacha) su=$CHACHA ;;
	*) su=$suite ;;
	esac
	case ${s%-chacha} in
	nginx) cmds+=("$HERE/https-peers/nginx.sh {port} $WORK/$s $WORK/cert.pem $WORK/key.pem $su") ;;
	openssl|wolfssl|openssl-b|wolfssl-b)
		# NAME-b: the same with the binary in $GIONG_HTTP_B, for an A/B run of two builds.
		bin=$HTTP
		[[ $s == *-b* ]] && bin=${GIONG_HTTP_B:?"$s needs GIONG_HTTP_B (a second build's bin/http)"}
		[[ -x $bin ]] || die "$bin is missing: build giong (cmake --build build)"
		be=${s%-chacha}
		cmds+=("$bin --workers 1 --host 127.0.0.1 --port 0 --https-port {port} --tls-cert $WORK/cert.pem --tls-key $WORK/key.pem --tls-backend ${be%-b} --tls-ciphers $su") ;;
	*) die "--servers: unknown server '$s'" ;;
	esac
	names+=("$s") suites+=("$su")
done
[[ ${#names[@]} -gt 0 ]] || die "no server to run"

# wrk_run PATH CONNS MODE SECS -> wrk's output, then "CLIENT_TICKS n" (wrk's user+sys), as
# http_bench.sh's, over HTTPS; MODE 0 closes the connection after each response. (Also
# serve_bench.sh's, which sets $scheme, http or https, and $client_env, VAR=VALUE words
# for wrk's environment.)
client_env=()
wrk_run() {
	local args=(-t1 -c "$2" -d "${4}s" --timeout 5s --latency) TIMEFORMAT='CLIENT_SECS %U %S'
	[[ $3 -eq 0 ]] && args+=(-H "Connection: close")
	{ time timeout -k 5 $(($4 + 30)) env "${client_env[@]}" taskset -c "$client_cpu" wrk \
		"${args[@]}" "${scheme:-https}://127.0.0.1:$srv_port$1"; } 2>&1 |
		awk -v hz="$HZ" '$1 == "CLIENT_SECS" { printf "CLIENT_TICKS %.0f\n", ($2 + $3) * hz; next } 1'
}

# check_server IDX: the bodies over kept-alive and closed connections (curl), and the suite
# and key exchange the server picks for an OpenSSL client offering all of TLS 1.3's
failures=0
declare -A negotiated
check_server() {
	local f h got
	for f in json users; do
		for h in keep-alive close; do
			if ! curl -skf --max-time 5 -H "Connection: $h" "https://127.0.0.1:$srv_port/$f" \
				-o "$WORK/got.$f" || ! cmp -s "$WORK/got.$f" "$WORK/ref/$f.json"; then
				say "${names[$1]}: GET /$f ($h) does not send the reference body"
				failures=$((failures + 1))
			fi
		done
	done
	got=$(timeout 10 openssl s_client -connect "127.0.0.1:$srv_port" -tls1_3 </dev/null 2>&1 |
		awk '/^Server Temp Key:/ { sub(/^Server Temp Key: /, ""); sub(/,.*/, ""); k = $0 }
			/Cipher is/ { c = $NF } END { print c " " k }')
	negotiated[${names[$1]}]=$got
	if [[ ${got%% *} != "${suites[$1]}" ]]; then
		say "${names[$1]}: negotiated '$got', not ${suites[$1]}"
		failures=$((failures + 1))
	fi
}

# idle_tls_measure IDX ROUND: RSS per idle HTTPS connection on the fresh server (two clients)
IDLE=$WORK/idle.tsv
printf 'round\tserver\tconns\trss_before_kib\trss_after_kib\tbytes_per_conn\tsecs\n' >"$IDLE"
idle_tls_measure() {
	local before after k cp=() ok=1 half=$((idle / 2)) secs
	curl -skf --max-time 5 "https://127.0.0.1:$srv_port/json" -o /dev/null || true
	sleep 0.3
	before=$(rss_kib "$(tree "$srv_pid")")
	for k in 0 1; do
		rm -f "$WORK/idle.$k"
		"$IDLE_TLS" -p "$srv_port" -n $((k ? idle - half : half)) -c "${suites[$1]}" -t 120 \
			>"$WORK/idle.$k" 2>&1 &
		cp+=($!)
		live_pids+=($!)
	done
	for _ in $(seq 1200); do # 120 s at most
		grep -qE '^(ready|failed)' "$WORK/idle.0" 2>/dev/null &&
			grep -qE '^(ready|failed)' "$WORK/idle.1" 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5
	after=$(rss_kib "$(tree "$srv_pid")")
	for k in 0 1; do
		grep -q '^ready' "$WORK/idle.$k" || ok=0
		kill -TERM "${cp[$k]}" 2>/dev/null || true
		wait "${cp[$k]}" 2>/dev/null || true
		forget_pid "${cp[$k]}"
	done
	if [[ $ok -eq 0 ]]; then
		say "${names[$1]}: idle_tls failed: $(tail -3 "$WORK"/idle.[01] | tr '\n' ' ')"
		failures=$((failures + 1))
		return 0
	fi
	secs=$(awk '{ if ($3 > s) s = $3 } END { print s }' "$WORK/idle.0" "$WORK/idle.1")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "${names[$1]}" "$idle" "$before" "$after" \
		"$(awk -v a="$before" -v b="$after" -v n="$idle" 'BEGIN { printf "%.0f", (b - a) * 1024 / n }')" \
		"$secs" >>"$IDLE"
	say "round $2 ${names[$1]}: $idle idle HTTPS connections (${secs}s): RSS $before -> $after KiB"
	sleep 1
}

# profile IDX CASE: perf record of the server over a perf_secs run; its top symbols
PROF=$WORK/profiles.md
profile() {
	local path=${2%%:*} rest=${2#*:} tool data=$WORK/perf.${names[$1]}.${2//[\/:]/_}
	rm -f "$data"
	taskset -c "$client_cpu" perf record -q -o "$data" -p "$(tree "$srv_pid" | paste -sd,)" \
		>/dev/null 2>&1 &
	tool=$!
	live_pids+=("$tool")
	sleep 0.5
	wrk_run "$path" "${rest%%:*}" "${rest#*:}" "$perf_secs" >/dev/null 2>&1 || true
	kill -INT "$tool" 2>/dev/null || true
	wait "$tool" 2>/dev/null || true
	forget_pid "$tool"
	{
		echo
		echo "${names[$1]}, $(label "$2") (perf record over a ${perf_secs} s run, no call graphs;" \
			"perf_top.sh: functions of 0.8 % and more of the server's samples):"
		echo
		echo '```'
		"$HERE/perf_top.sh" "$data" 20 0.8 || echo "(perf_top.sh failed)"
		echo '```'
	} >>"$PROF"
}

label() {
	local p=${1%%:*} r=${1#*:}
	if [[ ${r#*:} == 0 ]]; then echo "$p × ${r%%:*} new connection per request"
	else echo "$p × ${r%%:*} kept alive"; fi
}

# restart IDX: the server died during a case; counted as a failure, started again
restart() {
	say "server ${names[$1]} died: $(tail -3 "$WORK/server.${names[$1]}.log" | tr '\n' ' ')"
	failures=$((failures + 1))
	wait "$srv_pid" 2>/dev/null || true
	forget_pid "$srv_pid"
	start_server "$1"
}

RAW=$WORK/raw.tsv
printf 'round\tserver\tcase\treqs_per_s\tcpu_us_per_req\tserver_util\tp50_us\tp99_us\trss_kib\tbytes_per_resp\terrors\tother_load\ttries\tsyscalls_per_req\tsys_pass_reqs_per_s\tclient_util\n' >"$RAW"
nsrv=${#names[@]}
say "$nsrv servers x ${#cases[@]} cases x $rounds rounds, ${secs}s each (+${warmup}s warm-up);" \
	"idle $idle in $idle_rounds round(s); profiles of '${perf_list}'"
for ((round = 1; round <= rounds; round++)); do
	for ((k = 0; k < nsrv; k++)); do
		i=$(((k + round - 1) % nsrv))
		start_server "$i"
		[[ $round -eq 1 ]] && check_server "$i"
		[[ $idle -gt 0 && $round -le $idle_rounds ]] && idle_tls_measure "$i" "$round"
		for c in "${cases[@]}"; do
			measure "$i" "$c" "$round"
			[[ $round -eq 1 && " $perf_list " == *" ${names[$i]} "* ]] && profile "$i" "$c"
			kill -0 "$srv_pid" 2>/dev/null || restart "$i"
		done
		stop_server "$srv_pid"
	done
done
[[ -n $raw_out ]] && { cp "$RAW" "$raw_out"; cp "$IDLE" "${raw_out%.tsv}.idle.tsv"; }

# --- tables -----------------------------------------------------------------------------------
per_cpu_s() { awk -v c="$1" 'BEGIN { if (c == "NA" || c == 0) print "NA"; else printf "%.0f", 1e6 / c }'; }
have_base=0
for n in "${names[@]}"; do [[ $n == "$baseline" ]] && have_base=1; done
echo
echo "Command: \`$CMDLINE\`"
echo
echo "Machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))," \
	"kernel $(uname -r); $(nginx -v 2>&1 | sed 's/.*: //'), $(openssl version | awk '{print $1, $2}')," \
	"wolfSSL $(dpkg-query -W -f '${Version}' libwolfssl-dev 2>/dev/null || echo '?'); server on CPU" \
	"$server_cpu, \`wrk -t1\` on CPU $client_cpu; $rounds round(s) of $secs s (after a $warmup s warm-up" \
	"run), medians (min–max over the rounds). $(date -u '+%Y-%m-%d %H:%M UTC')."
echo
echo "| server | suite, key exchange (openssl s_client -tls1_3) |"
echo "|---|---|"
for n in "${names[@]}"; do echo "| $n | ${negotiated[$n]:-?} |"; done
echo
bx=""
[[ $have_base -eq 1 ]] && bx=" × $baseline |"
echo "| case | server | req/s |$bx server CPU µs/req |$bx req per CPU-s | p50 µs | p99 µs | server CPU | wrk CPU | RSS KiB | B/resp | errors | other load |"
echo "|---|---|---:|${bx:+---:|}---:|${bx:+---:|}---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
	bm=$(med "$RAW" "$baseline" 3 "$c" 4)
	bc=$(med "$RAW" "$baseline" 3 "$c" 5)
	for n in "${names[@]}"; do
		m=$(med "$RAW" "$n" 3 "$c" 5)
		row="| $(label "$c") | $n | $(cell "$RAW" "$n" 3 "$c" 4 '%.0f')"
		[[ $have_base -eq 1 ]] && row+=" | $(ratio "$(med "$RAW" "$n" 3 "$c" 4)" "$bm")"
		row+=" | $(cell "$RAW" "$n" 3 "$c" 5 '%.2f')"
		[[ $have_base -eq 1 ]] && row+=" | $(ratio "$m" "$bc")"
		row+=" | $(per_cpu_s "$m") | $(cell "$RAW" "$n" 3 "$c" 7 '%.0f') | $(cell "$RAW" "$n" 3 "$c" 8 '%.0f')"
		row+=" | $(med "$RAW" "$n" 3 "$c" 6) | $(med "$RAW" "$n" 3 "$c" 16) | $(med "$RAW" "$n" 3 "$c" 9)"
		row+=" | $(med "$RAW" "$n" 3 "$c" 10) | $(vals "$RAW" "$n" 3 "$c" 11 | awk '{ s += $1 } END { print s + 0 }')"
		echo "$row | $(med "$RAW" "$n" 3 "$c" 12) |"
	done
done
echo
echo "A new connection per request: req/s are handshakes/s, CPU per request is per handshake" \
	"(TCP accept and close included); req per CPU-s = 10⁶ / server CPU µs per request. server" \
	"CPU, wrk CPU: fraction of one CPU over wrk's run; RSS: VmRSS after the run; B/resp: bytes" \
	"wrk read per response; errors: wrk's socket errors and non-2xx, summed over the rounds;" \
	"other load: other processes' CPU on the two CPUs (above $max_other a run was retried up to" \
	"$retries time(s), the quietest kept)."
if [[ $syscalls == perf ]]; then
	echo
	echo "| case | server | syscalls/req (round 1, perf) |"
	echo "|---|---|---:|"
	for c in "${cases[@]}"; do
		for n in "${names[@]}"; do echo "| $(label "$c") | $n | $(med "$RAW" "$n" 3 "$c" 14) |"; done
	done
fi
if [[ $idle -gt 0 ]]; then
	echo
	echo "Resident memory per idle HTTPS connection ($idle connections, each a full TLS 1.3" \
		"handshake and one GET /json; RSS of the server's processes before and after; medians" \
		"(min–max) over $idle_rounds round(s)):"
	echo
	echo "| server | RSS before KiB | RSS after KiB | bytes per connection |${bx} time to open s |"
	echo "|---|---:|---:|---:|${bx:+---:|}---:|"
	bi=$(med "$IDLE" "$baseline" 3 "$idle" 6)
	for n in "${names[@]}"; do
		row="| $n | $(med "$IDLE" "$n" 3 "$idle" 4) | $(med "$IDLE" "$n" 3 "$idle" 5)"
		row+=" | $(cell "$IDLE" "$n" 3 "$idle" 6 '%.0f')"
		[[ $have_base -eq 1 ]] && row+=" | $(ratio "$(med "$IDLE" "$n" 3 "$idle" 6)" "$bi")"
		echo "$row | $(med "$IDLE" "$n" 3 "$idle" 7) |"
	done
fi
[[ -s $PROF ]] && { echo; echo "Profiles (round 1):"; cat "$PROF"; }
if [[ $failures -gt 0 ]]; then
	say "$failures failure(s); see the messages above"
	exit 1
fi
