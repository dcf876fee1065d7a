#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# serve_bench.sh: giong-serve's benchmark. giong-serve (programs/serve, build/bin/serve
# --workers 1) against nginx (sendfile on, tcp_nopush on, open_file_cache, access_log off)
# and h2o (file.dir, no access log), all serving one directory: json.json (27 B) and
# users.json (8,173 B) from http-peers/make_bodies.sh and 1m.bin (1 MiB), kept alive, 50
# connections; and over HTTPS (TLS 1.3, one suite, the ECDSA P-256 certificate of
# server_lib.sh's make_cert) giong-serve with each TLS backend against nginx with OpenSSL.
# Each server in turn pinned to one CPU, `wrk -t1` pinned to the other, in interleaved
# rounds (the order rotates). Prints markdown tables of medians with the per-round spread:
# requests/s, server CPU µs per request (utime+stime of the server's processes from /proc
# over wrk's run: the figure that compares servers, since wrk is the limit for small
# files), for large bodies MB/s and server CPU µs per MB, system calls per request, ratios
# to nginx; the response head each server sends; perf profiles (top functions, and the
# share of the samples in copy and splice/sendfile functions: a server that sends files
# without copying them through user space shows no copy_user/memcpy of the body) and
# system calls by name (perf trace -s) of chosen servers.
#
# The machinery is http_bench.sh's, https_bench.sh's and server_lib.sh's: server_lib.sh is
# sourced; measure(), count_syscalls(), parse_wrk() and the table helpers are read from
# http_bench.sh, wrk_run(), profile(), label() and restart() from https_bench.sh.
#
# usage: bench/load/serve_bench.sh [options]
#   --servers "LIST"  from: nginx h2o serve (plain HTTP) and nginx-tls serve-openssl
#                     serve-wolfssl (HTTPS) (default: all six); serve-b: $GIONG_SERVE_B, for an
#                     A/B of two builds (a lib/ beside a binary is used for its libraries);
#                     serve is $GIONG_SERVE
#                     (default build/bin/serve; --serve BIN), serve-* the same with
#                     --tls-backend openssl|wolfssl
#   --serve BIN       giong-serve's binary (overrides $GIONG_SERVE)
#   --serve-args "A"  more arguments for giong-serve (e.g. "--cache 64", "--log")
#   --peer-log        nginx and h2o with their access logs on (serve-peers/peer.sh's
#                     PEER_ACCESS_LOG=1: nginx's buffered as --log's is), to set beside
#                     --serve-args "--log"
#   --cases "LIST"    plain-HTTP cases, PATH:CONNS (default "/json.json:50 /users.json:50
#                     /1m.bin:50")
#   --tls-cases "L"   HTTPS cases (default "/users.json:50")
#   --suite S         the TLS 1.3 suite (TLS_AES_128_GCM_SHA256): nginx is configured with it,
#                     giong-serve too if it has --tls-ciphers, and wrk and curl offer only it
#   --rounds R        interleaved rounds (default 5)
#   --secs S          measured seconds per run (default 4), after a --warmup W s run (1)
#   --perf "LIST"     servers to profile (default "serve nginx serve-openssl serve-wolfssl";
#                     "" for none): round 1, perf record over a --perf-secs S (3) run of
#                     each of its cases, perf_top.sh's top functions
#   --trace "LIST"    servers whose system calls are counted by name (perf trace -s) over a
#                     --perf-secs run of each case, with context switches and io_uring
#                     requests (perf stat), round 1 (default "serve nginx")
#   --syscalls M      auto|perf|none (default auto): system calls per request (round 1)
#   --server-cpu N    CPU for the servers (default 1); --client-cpu N for wrk (default 0)
#   --port-base P     first port (default 7800)
#   --raw FILE        also write every measurement as tab-separated values
#   --max-other F     a run during which other processes used more than F of a CPU on the
#   --retries N       two CPUs is repeated up to N times (defaults 0.2 and 1), quietest kept
#   --wait-quiet S    before each run, wait up to S s (default 0) for quieter CPUs
#   --quick           1 round, 2 s runs, no warm-up, 1 s syscall pass, --perf-secs 2
#
# Needs nginx (with ssl for nginx-tls), h2o, wrk, curl, openssl, taskset, ss; perf for the
# profiles. SERVE_BENCH_KEEP=1 keeps the work directory. Every process is started by this
# script, bounded in time and stopped by its PID; loopback only. Exit status is non-zero if
# a run failed, a server died, sent another body or length for a file, or negotiated
# another suite.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=serve_bench
# shellcheck source=bench/load/server_lib.sh
. "$HERE/server_lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
SERVE=${GIONG_SERVE:-$ROOT/build/bin/serve}
set_cmdline bench/load/serve_bench.sh "$@"
import_fns "$HERE/http_bench.sh" tree cpu_ticks rss_kib to_us to_bytes parse_wrk measure \
	count_syscalls vals median spread med cell ratio
import_fns "$HERE/https_bench.sh" wrk_run profile label restart

rounds=5 secs=4 warmup=1 cases_opt="/json.json:50 /users.json:50 /1m.bin:50"
tls_cases_opt="/users.json:50" suite=TLS_AES_128_GCM_SHA256 serve_args="" peer_env=""
server_list="nginx h2o serve nginx-tls serve-openssl serve-wolfssl"
# shellcheck disable=SC2034 # sys_secs: read by the imported count_syscalls()
syscalls=auto sys_secs=2 server_cpu=1 client_cpu=0 port_base=7800 raw_out="" retries=1
perf_list="serve nginx serve-openssl serve-wolfssl" trace_list="serve nginx" perf_secs=3
max_other=0.2 wait_quiet=0 stat_events=context-switches

while [[ $# -gt 0 ]]; do
	case $1 in
	--servers) server_list=$2; shift 2 ;;
	--serve) SERVE=$2; shift 2 ;;
	--serve-args) serve_args=$2; shift 2 ;;
	--peer-log) peer_env="env PEER_ACCESS_LOG=1 "; shift ;;
	--cases) cases_opt=$2; shift 2 ;;
	--tls-cases) tls_cases_opt=$2; shift 2 ;;
	--suite) suite=$2; shift 2 ;;
	--perf) perf_list=$2; shift 2 ;;
	--trace) trace_list=$2; shift 2 ;;
	--perf-secs) perf_secs=$2; shift 2 ;;
	--quick) rounds=1 secs=2 warmup=0 sys_secs=1 perf_secs=2; shift ;;
	-h|--help) sed -n '3,/^set -euo/{ /^#/p }' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) take_opt "$@" || die "unknown option '$1' (--help)"; shift 2 ;;
	esac
done
for v in rounds secs warmup sys_secs perf_secs retries wait_quiet; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "--${v//_/-} takes a whole number"
done
# to_cases VAR LIST: the cases of LIST (PATH:CONNS) into the array VAR, as PATH:CONNS:1
# (measure()'s PATH:CONNS:DEPTH; label()'s 1: kept alive)
plain_cases=() tls_cases=()
to_cases() {
	local -n cases_out=$1
	local c
	for c in $2; do
		[[ $c =~ ^/[^:]*:[0-9]+$ ]] || die "'$c' is not PATH:CONNS"
		cases_out+=("$c:1")
	done
}
to_cases plain_cases "$cases_opt"
to_cases tls_cases "$tls_cases_opt"
for t in taskset ss wrk curl openssl; do command -v $t >/dev/null || die "$t is required"; done
if [[ $syscalls == auto ]]; then
	syscalls=none
	perf_syscalls && syscalls=perf
fi
case $syscalls in perf|none) ;; *) die "--syscalls: auto, perf or none" ;; esac
command -v perf >/dev/null || { [[ -z $perf_list$trace_list ]] || say "no perf: no profiles"; perf_list="" trace_list=""; }
if [[ -n $trace_list ]] && perf stat -e io_uring:io_uring_submit_req,io_uring:io_uring_queue_async_work -- true >/dev/null 2>&1; then
	stat_events+=,io_uring:io_uring_submit_req,io_uring:io_uring_queue_async_work
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

make_work serve_bench SERVE_BENCH_KEEP

# The directory every server serves, and the reference copies the bodies are compared with.
WWW=$WORK/www
"$HERE/http-peers/make_bodies.sh" "$WWW"
yes 'giong-serve benchmark body, 1 MiB of it.' | head -c 1048576 >"$WWW/1m.bin" || true
[[ $(stat -c %s "$WWW/1m.bin") -eq 1048576 ]] || die "could not write $WWW/1m.bin"
cp -r "$WWW" "$WORK/ref"
cat "$WWW"/* >/dev/null # into the page cache
make_cert "$WORK"
# wrk's and curl's OpenSSL offers TLS 1.3 with the one suite only, whatever a server prefers.
printf '%s\n' 'openssl_conf = conf' '[conf]' 'ssl_conf = ssl' '[ssl]' 'system_default = sys' \
	'[sys]' 'MinProtocol = TLSv1.3' "Ciphersuites = $suite" >"$WORK/client.cnf"
# shellcheck disable=SC2034 # client_env, scheme: read by the imported wrk_run()
client_env=("OPENSSL_CONF=$WORK/client.cnf")

# --- the servers: cmds[], names[], schemes[] ----------------------------------------------------
# with_libs BIN: the command running BIN with the libraries of a lib/ directory beside it,
# if there is one (an A/B copy of a build: its own libgiong-*.so, not the RUNPATH's).
with_libs() {
	if [[ -d $(dirname "$1")/lib ]]; then echo "env LD_LIBRARY_PATH=$(dirname "$1")/lib $1"
	else echo "$1"; fi
}
serve_help=""
need_serve() {
	[[ -n $serve_help ]] && return 0
	[[ -x $SERVE ]] || die "$SERVE is missing (build giong, or --serve BIN / GIONG_SERVE)"
	serve_help=$(timeout 5 "$SERVE" --help 2>&1) || [[ -n $serve_help ]] ||
		die "$SERVE --help says nothing"
}
names=() cmds=() schemes=()
tls_plain_port=$((port_base + 500))
for s in $server_list; do
	case $s in
	nginx|h2o)
		command -v "$s" >/dev/null || die "$s is not installed"
		cmds+=("$peer_env$HERE/serve-peers/peer.sh $s {port} $WORK/$s $WWW") schemes+=(http) ;;
	nginx-tls)
		nginx -V 2>&1 | grep -q -- --with-http_ssl_module || die "this nginx has no ssl module"
		cmds+=("$peer_env$HERE/serve-peers/peer.sh nginx {port} $WORK/$s $WWW $WORK/cert.pem $WORK/key.pem $suite")
		schemes+=(https) ;;
	serve|serve-b)
		need_serve
		bin=$SERVE
		if [[ $s == serve-b ]]; then
			bin=${GIONG_SERVE_B:-}
			[[ -x $bin ]] || die "serve-b: \$GIONG_SERVE_B is not a program ('$bin')"
		fi
		cmds+=("$(with_libs "$bin") $WWW --port {port} --workers 1 --bind 127.0.0.1 $serve_args")
		schemes+=(http) ;;
	serve-openssl|serve-wolfssl)
		need_serve
		# the plain listener it also opens, on a port of its own (not measured)
		while ! port_free "$tls_plain_port"; do tls_plain_port=$((tls_plain_port + 1)); done
		c="$SERVE $WWW --port $tls_plain_port --https-port {port} --tls-cert $WORK/cert.pem"
		c+=" --tls-key $WORK/key.pem --tls-backend ${s#serve-} --workers 1 --bind 127.0.0.1"
		[[ $serve_help == *--tls-ciphers* ]] && c+=" --tls-ciphers $suite"
		cmds+=("$c $serve_args") schemes+=(https)
		tls_plain_port=$((tls_plain_port + 1)) ;;
	*) die "--servers: unknown server '$s'" ;;
	esac
	names+=("$s")
done
[[ ${#names[@]} -gt 0 ]] || die "no server to run"

# server_cases IDX: the cases of that server, one a line
server_cases() {
	if [[ ${schemes[$1]} == https ]]; then printf '%s\n' "${tls_cases[@]}"
	else printf '%s\n' "${plain_cases[@]}"; fi
}

# check_server IDX: each file once over one kept-alive connection (curl): status, length and
# bytes against the reference; the head sent for users.json; over HTTPS the suite and group
# negotiated with wrk's client settings and (for the table) the server's own choice when
# offered all TLS 1.3 suites.
failures=0
declare -A negotiated own_choice heads
check_server() {
	local f n=${names[$1]} args=() line k=0 want got conns=0
	local files=(json.json users.json 1m.bin)
	for f in "${files[@]}"; do args+=("$scheme://127.0.0.1:$srv_port/$f" -o "$WORK/got.$f"); done
	rm -f "$WORK"/got.*
	env "${client_env[@]}" curl -sk --max-time 20 -w '%{http_code} %{size_download} %{num_connects}\n' \
		"${args[@]}" >"$WORK/curl.out" 2>&1 || true
	for f in "${files[@]}"; do
		k=$((k + 1))
		line=$(sed -n "${k}p" "$WORK/curl.out")
		want=$(stat -c %s "$WORK/ref/$f")
		got=$(awk '{ print $2 }' <<<"$line")
		conns=$((conns + $(awk '{ print $3 + 0 }' <<<"$line")))
		if [[ ${line%% *} != 200 || $got != "$want" ]] || ! cmp -s "$WORK/got.$f" "$WORK/ref/$f"; then
			say "$n: GET /$f: '${line:-no answer}' (status, bytes, new connections), not 200 and the $want reference bytes"
			failures=$((failures + 1))
		fi
	done
	[[ $conns -le 1 ]] || say "$n: curl needed $conns connections for ${#files[@]} requests (keep-alive?)"
	heads[$n]=$(env "${client_env[@]}" curl -sk --max-time 5 -D - -o /dev/null \
		"$scheme://127.0.0.1:$srv_port/users.json" | tr -d '\r' | grep -v '^$' || true)
	[[ $scheme == https ]] || return 0
	got=$(timeout 10 env "${client_env[@]}" openssl s_client -connect "127.0.0.1:$srv_port" </dev/null 2>&1 |
		awk '/^Server Temp Key:/ { sub(/^Server Temp Key: /, ""); sub(/,.*/, ""); k = $0 }
			/Cipher is/ { c = $NF } END { print c " " k }')
	negotiated[$n]=$got
	own_choice[$n]=$(timeout 10 openssl s_client -connect "127.0.0.1:$srv_port" -tls1_3 </dev/null 2>&1 |
		awk '/Cipher is/ { c = $NF } END { print c }')
	if [[ ${got%% *} != "$suite" ]]; then
		say "$n: negotiated '$got', not $suite"
		failures=$((failures + 1))
	fi
}

# copy_share DATA: the share of a profile's samples in functions that copy bytes (kernel
# copy_user/iov_iter copies, user memcpy/memmove) and in the splice/sendfile path
PROF=$WORK/profiles.md
copy_share() {
	perf report -i "$1" --stdio --no-children --sort dso,sym -F overhead,dso,sym 2>/dev/null | awk '
		!/^#/ && $1 ~ /%$/ { v = $1 + 0; s = $NF
			if (s ~ /copy_user|rep_movs|copy_to_iter|copy_from_iter|copy_page_(to|from)_iter|memcpy|memmove|csum_partial_copy/) {
				c += v; if (v >= 0.1) cl = cl sprintf(" %s %.2f%%", s, v) }
			else if (s ~ /splice|sendfile|sendpage|filemap_get_pages|filemap_read/) {
				p += v; if (v >= 0.05) pl = pl sprintf(" %s %.2f%%", s, v) } }
		END { printf "copy functions: %.2f %% of the samples (%s ); splice/sendfile/page-cache" \
			" functions: %.2f %% (%s )\n", c, cl, p, pl }'
}

# trace_syscalls IDX CASE: system calls by name per request (perf trace -s over a run), and
# in the same run context switches, io_uring requests and those handed to io-wq workers
# (perf stat; the io_uring tracepoints where the kernel has them)
trace_syscalls() {
	local path=${2%%:*} rest=${2#*:} data=$WORK/trace.${names[$1]}.${2//[\/:]/_} tools=() t
	local wout reqs pids
	pids=$(tree "$srv_pid" | paste -sd,)
	rm -f "$data" "$data.stat"
	taskset -c "$client_cpu" timeout -s INT $((perf_secs + 20)) perf trace -s -o "$data" \
		-p "$pids" >/dev/null 2>&1 &
	tools+=($!)
	taskset -c "$client_cpu" timeout -s INT $((perf_secs + 20)) perf stat -x, -o "$data.stat" \
		-e "$stat_events" -p "$pids" >/dev/null 2>&1 &
	tools+=($!)
	live_pids+=("${tools[@]}")
	sleep 0.5
	wout=$(wrk_run "$path" "${rest%%:*}" 1 "$perf_secs" 2>&1) || true
	for t in "${tools[@]}"; do
		kill -INT "$t" 2>/dev/null || true
		wait "$t" 2>/dev/null || true
		forget_pid "$t"
	done
	reqs=$(parse_wrk "$wout" | awk '{ print $2 }')
	{
		echo
		echo "${names[$1]}, $(label "$2"): system calls per request (perf trace -s over a" \
			"${perf_secs} s run of ${reqs:-?} requests; perf trace slows the server), and other" \
			"counts per request over the same run (perf stat):"
		echo
		echo '```'
		awk -v r="${reqs:-0}" '$1 ~ /^[a-z_0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 8 { n[$1] += $2 }
			END { for (s in n) printf "%-16s %10d  %8.3f/req\n", s, n[s], (r ? n[s] / r : 0) }' \
			"$data" 2>/dev/null | sort -k2,2nr | head -12
		awk -F, -v r="${reqs:-0}" '$1 ~ /^[0-9]+$/ && $3 != "" {
			printf "%-40s %10d  %8.3f/req\n", $3, $1, (r ? $1 / r : 0) }' "$data.stat" 2>/dev/null
		echo '```'
	} >>"$PROF"
}

RAW=$WORK/raw.tsv
printf 'round\tserver\tcase\treqs_per_s\tcpu_us_per_req\tserver_util\tp50_us\tp99_us\trss_kib\tbytes_per_resp\terrors\tother_load\ttries\tsyscalls_per_req\tsys_pass_reqs_per_s\tclient_util\n' >"$RAW"
nsrv=${#names[@]}
nruns=0
for ((i = 0; i < nsrv; i++)); do nruns=$((nruns + $(server_cases "$i" | wc -l))); done
say "$nsrv servers, $nruns runs a round x $rounds rounds, ${secs}s each (+${warmup}s warm-up):" \
	"about $((rounds * (nruns * (secs + warmup + 1) + nsrv * 2) / 60 + 1)) min, more when runs are" \
	"repeated; profiles of '${perf_list}', system calls of '${trace_list}'"
for ((round = 1; round <= rounds; round++)); do
	for ((k = 0; k < nsrv; k++)); do
		i=$(((k + round - 1) % nsrv))
		# shellcheck disable=SC2034
		scheme=${schemes[$i]}
		start_server "$i"
		[[ $round -eq 1 ]] && check_server "$i"
		while read -r c; do
			measure "$i" "$c" "$round"
			if [[ $round -eq 1 && " $perf_list " == *" ${names[$i]} "* ]]; then
				profile "$i" "$c"
				copy_share "$WORK/perf.${names[$i]}.${c//[\/:]/_}" >>"$PROF"
			fi
			[[ $round -eq 1 && " $trace_list " == *" ${names[$i]} "* ]] && trace_syscalls "$i" "$c"
			kill -0 "$srv_pid" 2>/dev/null || restart "$i"
		done < <(server_cases "$i")
		stop_server "$srv_pid"
	done
done
[[ -n $raw_out ]] && cp "$RAW" "$raw_out"

# --- tables -----------------------------------------------------------------------------------
# per-round MB/s and server CPU µs per MB (10⁶ bytes as wrk counted them) of the large bodies
MB=$WORK/mb.tsv
awk -F'\t' 'NR == 1 { print "round\tserver\tcase\tmb_per_s\tcpu_us_per_mb"; next }
	$10 >= 65536 { printf "%s\t%s\t%s\t%.1f\t%.3f\n", $1, $2, $3, $4 * $10 / 1e6, $5 * 1e6 / $10 }' \
	"$RAW" >"$MB"

# table BASE KIND: one row per case and server of that kind (http, https), ratios to BASE
table() {
	local base=$1 c n j bm bc m row
	echo "| case | server | req/s | × $base | server CPU µs/req | × $base | syscalls/req | p50 µs | p99 µs | server CPU | wrk CPU | RSS KiB | B/resp | errors | other load |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	while read -r c; do
		bm=$(med "$RAW" "$base" 3 "$c" 4) bc=$(med "$RAW" "$base" 3 "$c" 5)
		for ((j = 0; j < nsrv; j++)); do
			[[ ${schemes[$j]} == "$2" ]] || continue
			n=${names[$j]} m=$(med "$RAW" "$n" 3 "$c" 5)
			row="| $(label "$c") | $n | $(cell "$RAW" "$n" 3 "$c" 4 '%.0f') | $(ratio "$(med "$RAW" "$n" 3 "$c" 4)" "$bm")"
			row+=" | $(cell "$RAW" "$n" 3 "$c" 5 '%.2f') | $(ratio "$m" "$bc") | $(med "$RAW" "$n" 3 "$c" 14)"
			row+=" | $(cell "$RAW" "$n" 3 "$c" 7 '%.0f') | $(cell "$RAW" "$n" 3 "$c" 8 '%.0f')"
			row+=" | $(med "$RAW" "$n" 3 "$c" 6) | $(med "$RAW" "$n" 3 "$c" 16) | $(med "$RAW" "$n" 3 "$c" 9)"
			row+=" | $(med "$RAW" "$n" 3 "$c" 10) | $(vals "$RAW" "$n" 3 "$c" 11 | awk '{ s += $1 } END { print s + 0 }')"
			echo "$row | $(med "$RAW" "$n" 3 "$c" 12) |"
		done
	done < <(if [[ $2 == https ]]; then printf '%s\n' "${tls_cases[@]}"; else printf '%s\n' "${plain_cases[@]}"; fi)
}
has() { [[ " ${names[*]} " == *" $1 "* ]]; }
echo
echo "Command: \`$CMDLINE\`"
echo
echo "Machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))," \
	"kernel $(uname -r); $(nginx -v 2>&1 | sed 's/.*: //'), h2o $(h2o --version 2>/dev/null | awk 'NR == 1 { print $3 }')," \
	"$(openssl version | awk '{print $1, $2}'), wolfSSL $(dpkg-query -W -f '${Version}' libwolfssl-dev 2>/dev/null || echo '?')," \
	"wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}'); giong-serve $SERVE${serve_args:+ $serve_args};" \
	"server on CPU $server_cpu, \`wrk -t1\` on CPU $client_cpu; $rounds round(s) of $secs s (after a" \
	"$warmup s warm-up run), medians (min–max over the rounds). $(date -u '+%Y-%m-%d %H:%M UTC')."
if has nginx || has h2o || has serve || has serve-b; then
	echo
	echo "Plain HTTP, ratios to nginx:"
	echo
	table nginx http
	if [[ $(wc -l <"$MB") -gt 1 ]]; then
		echo
		echo "Large bodies: MB/s (10⁶ bytes, as wrk read them) and server CPU µs per MB:"
		echo
		echo "| case | server | MB/s | × nginx | server CPU µs/MB | × nginx |"
		echo "|---|---|---:|---:|---:|---:|"
		for c in "${plain_cases[@]}"; do
			for n in nginx h2o serve; do
				if ! has "$n" || [[ $(med "$MB" "$n" 3 "$c" 4) == NA ]]; then continue; fi
				echo "| $(label "$c") | $n | $(cell "$MB" "$n" 3 "$c" 4 '%.0f') | $(ratio "$(med "$MB" "$n" 3 "$c" 4)" "$(med "$MB" nginx 3 "$c" 4)")" \
					"| $(cell "$MB" "$n" 3 "$c" 5 '%.1f') | $(ratio "$(med "$MB" "$n" 3 "$c" 5)" "$(med "$MB" nginx 3 "$c" 5)") |"
			done
		done
	fi
fi
if has nginx-tls || has serve-openssl || has serve-wolfssl; then
	echo
	echo "HTTPS (TLS 1.3, $suite; wrk and curl offer only that suite), ratios to nginx-tls:"
	echo
	echo "| server | negotiated (suite, group) | the server's own choice among all TLS 1.3 suites |"
	echo "|---|---|---|"
	for ((j = 0; j < nsrv; j++)); do
		[[ ${schemes[$j]} == https ]] || continue
		echo "| ${names[$j]} | ${negotiated[${names[$j]}]:-?} | ${own_choice[${names[$j]}]:-?} |"
	done
	echo
	table nginx-tls https
fi
echo
echo "server CPU, wrk CPU: fraction of one CPU over wrk's run; syscalls/req: perf's" \
	"raw_syscalls:sys_enter in a separate ${sys_secs} s pass (round 1; $syscalls); RSS: VmRSS" \
	"after the run; B/resp: bytes wrk read per response (head and body); errors: wrk's socket" \
	"errors and non-2xx, summed over the rounds; other load: other processes' CPU on the two" \
	"CPUs (above $max_other a run was repeated up to $retries time(s), the quietest kept)."
echo
echo "Per-round server CPU µs per request, sorted:"
echo
echo "| case | server | µs/req, each round |"
echo "|---|---|---|"
for ((j = 0; j < nsrv; j++)); do
	while read -r c; do
		echo "| $(label "$c") | ${names[$j]} | $(vals "$RAW" "${names[$j]}" 3 "$c" 5 | paste -sd' ') |"
	done < <(server_cases "$j")
done
echo
echo "Response head for /users.json (round 1):"
for n in "${names[@]}"; do
	echo
	echo "$n:"
	echo '```'
	echo "${heads[$n]:-?}"
	echo '```'
done
[[ -s $PROF ]] && { echo; echo "Profiles and system calls (round 1):"; cat "$PROF"; }
if [[ $failures -gt 0 ]]; then
	say "$failures failure(s); see the messages above"
	exit 1
fi
