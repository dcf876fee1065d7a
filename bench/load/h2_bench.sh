#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# h2_bench.sh: the HTTP/2 benchmark. giong's example server (build/bin/http --h2 --workers 1,
# libgiong-http2; over TLS with the OpenSSL backend) against nginx 1.22 and h2o 2.2.5, all
# serving the same bodies (/json 27 bytes, /users 8,173: http-peers/make_bodies.sh), over
# TLS 1.3 (h2 by ALPN; the same ECDSA P-256 certificate, made now with the openssl command,
# and the same suite, checked) and over cleartext (h2c by prior knowledge). Each server in
# turn pinned to one CPU, h2load pinned to the other, in interleaved rounds (the order
# rotates); each case is a fixed number of requests (h2load -n), after a warm-up run of a
# tenth of them. Prints markdown tables of medians with the per-round spread: requests/s,
# server CPU µs per request (utime+stime of the server's processes from /proc/PID/stat over
# h2load's run, divided by its requests) with the ratios to nginx and h2o, h2load's CPU, RSS;
# resident memory per idle h2c connection (idle_h2.py: N connections that each served one
# request, the server's RSS before and after, divided by N); optionally perf profiles (call
# graphs) of chosen servers.
#
# The measuring helpers (tree, cpu_ticks, rss_kib and the table ones) are http_bench.sh's,
# read from that file (server_lib.sh's import_fns); starting and stopping servers is
# server_lib.sh's.
#
# usage: bench/load/h2_bench.sh [options]
#   --servers "LIST"  from: giong nginx h2o (default all three; a peer not installed is
#                     skipped with a message); giong is $GIONG_HTTP (default build/bin/http);
#                     giong-b: the same from $GIONG_HTTP_B, a command (words: it may start
#                     with env VAR=VALUE), for an A/B run of two builds or settings
#   --backend B       giong's TLS backend: openssl (default, the library nginx and h2o use)
#                     or wolfssl
#   --suite S         the TLS 1.3 suite (default TLS_AES_128_GCM_SHA256): giong's
#                     --tls-ciphers, nginx's Ciphersuites, and the only one h2load offers
#                     (h2o 2.2.5 cannot be limited to one)
#   --cases "LIST"    MODE:PATH:CONNS:STREAMS:REQUESTS, MODE tls or h2c (default: /json with
#                     300,000 and /users with 100,000 requests, each at 50 connections x 10
#                     streams and 1 connection x 100 streams, over tls and h2c)
#   --rounds R        interleaved rounds (default 5)
#   --idle N          idle h2c connections for the memory measurement (default 1000; 0: skip
#                     it), once per round on the freshly started server
#   --perf "LIST"     servers to profile (default ""): in round 1, perf record -g over a run
#                     of each case of --perf-cases (default "tls:/json:50:10 h2c:/json:50:10")
#   --server-cpu N    CPU for the servers (default 1); --client-cpu N for h2load (default 0)
#   --port-base P     first port (default 7900); each server also takes a TLS port from P+500
#   --raw FILE        also write every measurement as tab-separated values
#   --max-other F     a run during which other processes used more than F of a CPU on the
#   --retries N       two CPUs is repeated up to N times (defaults 0.2 and 1), quietest kept
#   --wait-quiet S    before each run, wait up to S s (default 0) for quieter CPUs
#   --quick           1 round, a fifth of the requests, --idle 200
#
# Needs h2load (nghttp2-client), nginx with the http2 module, h2o, curl, openssl, taskset,
# ss, /usr/bin/python3. H2_BENCH_KEEP=1 keeps the work directory (server logs, configs, raw
# tables, profiles). Every process is started by this script, bounded in time (h2load by
# timeout, idle_h2.py by -t) and stopped by its PID; loopback only. Exit status is non-zero
# if a run failed or was incomplete, a server died, sent other bodies, or negotiated
# another protocol or suite.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=h2_bench
# shellcheck source=bench/load/server_lib.sh
. "$HERE/server_lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
HTTP=${GIONG_HTTP:-$ROOT/build/bin/http}
set_cmdline bench/load/h2_bench.sh "$@"

import_fns "$HERE/http_bench.sh" tree cpu_ticks rss_kib vals median spread med cell ratio

server_list="giong nginx h2o" backend=openssl suite=TLS_AES_128_GCM_SHA256 rounds=5 idle=1000
cases_opt="" perf_list="" perf_cases="tls:/json:50:10 h2c:/json:50:10" server_cpu=1
client_cpu=0 port_base=7900 raw_out="" retries=1 max_other=0.2 wait_quiet=0 scale=1

while [[ $# -gt 0 ]]; do
	case $1 in
	--servers) server_list=$2; shift 2 ;;
	--backend) backend=$2; shift 2 ;;
	--suite) suite=$2; shift 2 ;;
	--cases) cases_opt=$2; shift 2 ;;
	--idle) idle=$2; shift 2 ;;
	--perf) perf_list=$2; shift 2 ;;
	--perf-cases) perf_cases=$2; shift 2 ;;
	--quick) rounds=1 scale=5 idle=200; shift ;;
	-h|--help) sed -n '3,51p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--secs|--warmup|--syscalls|--syscall-secs) die "$1: not an option of this benchmark" ;;
	*) take_opt "$@" || die "unknown option '$1' (--help)"; shift 2 ;;
	esac
done
for v in rounds idle retries wait_quiet; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "--${v//_/-} takes a whole number"
done
case $backend in openssl|wolfssl) ;; *) die "--backend: openssl or wolfssl" ;; esac
if [[ -z $cases_opt ]]; then
	for m in tls h2c; do
		cases_opt+=" $m:/json:50:10:300000 $m:/users:50:10:100000"
		cases_opt+=" $m:/json:1:100:300000 $m:/users:1:100:100000"
	done
fi
cases=()
for c in $cases_opt; do
	[[ $c =~ ^(tls|h2c):/[^:]*:[0-9]+:[0-9]+:[0-9]+$ ]] ||
		die "--cases: '$c' is not MODE:PATH:CONNS:STREAMS:REQUESTS (MODE tls or h2c)"
	cases+=("$c")
done
[[ ${#cases[@]} -gt 0 ]] || die "no case to run"
for t in taskset ss h2load curl openssl; do command -v $t >/dev/null || die "$t is required"; done
[[ $idle -eq 0 || -x /usr/bin/python3 ]] || die "/usr/bin/python3 is required for --idle"
[[ -z $perf_list ]] || command -v perf >/dev/null || { say "no perf: no profiles"; perf_list=""; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

make_work h2_bench H2_BENCH_KEEP
make_cert "$WORK"
"$HERE/http-peers/make_bodies.sh" "$WORK/ref"

# --- the servers: cmds[] ({port}: h2c, {tport}: TLS) and names[] ---------------------------
names=() cmds=()
for s in $server_list; do
	case $s in
	giong|giong-b)
		bin=$HTTP
		[[ $s == giong-b ]] && bin=${GIONG_HTTP_B:?"giong-b needs GIONG_HTTP_B (a second build's bin/http)"}
		# shellcheck disable=SC2086 # GIONG_HTTP_B's words
		$bin --help 2>&1 | grep -q -- --h2 || die "$bin has no --h2 (missing, or built without libgiong-http2?)"
		cmds+=("$bin --h2 --workers 1 --host 127.0.0.1 --port {port} --https-port {tport} --tls-cert $WORK/cert.pem --tls-key $WORK/key.pem --tls-backend $backend --tls-ciphers $suite") ;;
	nginx)
		command -v nginx >/dev/null || { say "nginx not installed, skipped"; continue; }
		nginx -V 2>&1 | grep -q -- --with-http_v2_module || { say "this nginx has no http2 module, skipped"; continue; }
		cmds+=("$HERE/h2-peers/nginx.sh {port} {tport} $WORK/nginx $WORK/cert.pem $WORK/key.pem $suite") ;;
	h2o)
		command -v h2o >/dev/null || { say "h2o not installed, skipped"; continue; }
		cmds+=("$HERE/h2-peers/h2o.sh {port} {tport} $WORK/h2o $WORK/cert.pem $WORK/key.pem") ;;
	*) die "--servers: unknown server '$s'" ;;
	esac
	names+=("$s")
done
[[ ${#names[@]} -gt 0 ]] || die "no server to run"

# start_h2 IDX: start_server with {tport} a free port of its own (tport); waits for it too
next_tport=$((port_base + 500))
start_h2() {
	local save=${cmds[$1]}
	while ! port_free "$next_tport"; do next_tport=$((next_tport + 1)); done
	tport=$next_tport
	next_tport=$((next_tport + 1))
	cmds[$1]=${save//\{tport\}/$tport}
	mkdir -p "$WORK/${names[$1]}"
	start_server "$1"
	cmds[$1]=$save
	for _ in $(seq 100); do
		ss -Hltn "sport = :$tport" | grep -q . && return 0
		sleep 0.05
	done
	die "${names[$1]} does not listen on its TLS port $tport"
}

url() { # url MODE PATH
	if [[ $1 == tls ]]; then echo "https://127.0.0.1:$tport$2"; else echo "http://127.0.0.1:$srv_port$2"; fi
}

# check_server IDX: the bodies over h2 and h2c (curl, which must have spoken HTTP/2), and the
# protocol, suite and group of a TLS 1.3 handshake offering h2 and the suite (what h2load
# offers); then what the server picks when offered all TLS 1.3 suites (for the record)
failures=0
declare -A negotiated
check_server() {
	local f m v got all
	for f in json users; do
		for m in tls h2c; do
			v=$(curl -sk --max-time 5 --http2-prior-knowledge -o "$WORK/got.$f" -w '%{http_version}' \
				"$(url "$m" "/$f")" 2>/dev/null) || v=fail
			if [[ $v != 2 ]] || ! cmp -s "$WORK/got.$f" "$WORK/ref/$f.json"; then
				say "${names[$1]}: GET /$f ($m) answered over HTTP '$v' or not the reference body"
				failures=$((failures + 1))
			fi
		done
	done
	got=$(timeout 10 openssl s_client -connect "127.0.0.1:$tport" -tls1_3 -alpn h2 \
		-ciphersuites "$suite" </dev/null 2>&1 |
		awk '/^Server Temp Key:/ { sub(/^Server Temp Key: /, ""); sub(/,.*/, ""); k = $0 }
			/^ALPN protocol:/ { a = $3 } /Cipher is/ { c = $NF } END { print c " " k " " a }')
	all=$(timeout 10 openssl s_client -connect "127.0.0.1:$tport" -tls1_3 -alpn h2 </dev/null 2>&1 |
		awk '/Cipher is/ { c = $NF } END { print c }')
	negotiated[${names[$1]}]="$got; offered all TLS 1.3 suites: $all"
	if [[ ${got%% *} != "$suite" || ${got##* } != h2 ]]; then
		say "${names[$1]}: negotiated '$got', not $suite with h2"
		failures=$((failures + 1))
	fi
}

# h2load_run MODE PATH CONNS STREAMS N -> h2load's output, then "CLIENT_TICKS n" (its user+sys)
h2load_run() {
	local TIMEFORMAT='CLIENT_SECS %U %S'
	{ time timeout -k 5 120 taskset -c "$client_cpu" h2load --tls13-ciphers "$suite" \
		-c "$3" -m "$4" -n "$5" "$(url "$1" "$2")"; } 2>&1 |
		awk -v hz="$HZ" '$1 == "CLIENT_SECS" { printf "CLIENT_TICKS %.0f\n", ($2 + $3) * hz; next }
			/^progress:/ { next } 1'
}

# parse_h2load OUT N -> "reqs_per_s mean_us bytes_per_resp errors client_ticks", or "" if the
# run did not finish; errors: requests not answered 2xx
parse_h2load() {
	local fin
	fin=$(sed -n 's/^finished in \([0-9.]*\)\(m\{0,1\}s\), *\([0-9.]*\) req\/s.*/\1 \2 \3/p' <<<"$1")
	[[ -n $fin ]] || { echo ""; return; }
	awk -v n="$2" -v fin="$fin" '
		/^requests:/ { done = $4 }
		/^status codes:/ { ok = $3 }
		/^traffic:/ { t = $2; gsub(/[()]/, "", $3); bytes = $3 }
		/^time for request:/ { m = $5 }
		/^CLIENT_TICKS/ { ct = $2 }
		END {
			split(fin, f, " ")
			u = m; sub(/^[0-9.]+/, "", u); x = m + 0
			if (u == "ms") x *= 1000; else if (u == "s") x *= 1000000
			printf "%s %.1f %.0f %d %d\n", f[3], x, (done ? bytes / done : 0), n - ok, ct
		}' <<<"$1"
}

RAW=$WORK/raw.tsv
printf 'round\tserver\tcase\treqs_per_s\tcpu_us_per_req\tserver_util\tmean_us\tclient_util\trss_kib\tbytes_per_resp\terrors\tother_load\ttries\n' >"$RAW"

# measure IDX CASE ROUND: one table cell's run (retried when disturbed)
measure() {
	local i=$1 cs=$2 m p c s n out parsed best="" best_other=99 try t0 t1 b0 b1 c0 c1 pids other
	local util cutil cpu rss
	IFS=: read -r m p c s n <<<"$cs"
	n=$((n / scale))
	for ((try = 1; try <= retries + 1; try++)); do
		wait_for_quiet
		h2load_run "$m" "$p" "$c" "$s" $((n / 10)) >/dev/null 2>&1 || true # warm-up
		pids=$(tree "$srv_pid")
		c0=$(cpu_ticks "$pids") b0=$(busy_ticks) t0=$(date +%s.%N)
		out=$(h2load_run "$m" "$p" "$c" "$s" "$n" 2>&1) || true
		t1=$(date +%s.%N) b1=$(busy_ticks) c1=$(cpu_ticks "$pids")
		rss=$(rss_kib "$(tree "$srv_pid")")
		parsed=$(parse_h2load "$out" "$n")
		if [[ -z $parsed ]]; then
			say "round $round ${names[$i]} $cs: h2load failed:"; tail -5 <<<"$out" >&2
			failures=$((failures + 1))
			return 0
		fi
		# shellcheck disable=SC2086
		set -- $parsed
		util=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", c / hz / (b - a) }')
		cutil=$(awk -v c="$5" -v hz="$HZ" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", c / hz / (b - a) }')
		other=$(awk -v bt=$((b1 - b0)) -v c=$((c1 - c0)) -v w="$5" -v hz="$HZ" -v a="$t0" -v b="$t1" \
			'BEGIN { o = (bt - c - w) / hz / (b - a); if (o < 0) o = 0; printf "%.2f", o }')
		cpu=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v r="$n" 'BEGIN { printf "%.3f", c / hz * 1e6 / r }')
		if awk -v a="$other" -v b="$best_other" 'BEGIN { exit !(a < b) }'; then
			best="$1 $cpu $util $2 $cutil $rss $3 $4" best_other=$other
		fi
		awk -v a="$other" -v x="$max_other" 'BEGIN { exit !(a <= x) }' && break
		[[ $try -le $retries ]] && say "${names[$i]} $cs: other load $other, again"
	done
	((try > retries + 1)) && try=$((retries + 1))
	# shellcheck disable=SC2086
	set -- $best
	if [[ $8 -ne 0 ]]; then
		say "${names[$i]} $cs: $8 requests not answered 2xx:"
		grep -E '^(requests|status codes):' <<<"$out" >&2 || true
		failures=$((failures + 1))
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "${names[$i]}" "$cs" \
		"$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$best_other" "$try" >>"$RAW"
	say "round $round/$rounds ${names[$i]} $m $p c=$c m=$s n=$n: $1 req/s, $2 us/req," \
		"server CPU $3, h2load CPU $5, other load $best_other"
}

# idle_measure IDX ROUND: RSS per idle h2c connection on the fresh server
IDLE=$WORK/idle.tsv
printf 'round\tserver\tconns\trss_before_kib\trss_after_kib\tbytes_per_conn\tsecs\n' >"$IDLE"
idle_measure() {
	local before after cpid fifo=$WORK/idle.fifo
	[[ $idle -gt 0 ]] || return 0
	curl -s --max-time 5 --http2-prior-knowledge "$(url h2c /json)" -o /dev/null || true
	sleep 0.3
	before=$(rss_kib "$(tree "$srv_pid")")
	rm -f "$fifo"
	mkfifo "$fifo"
	taskset -c "$client_cpu" /usr/bin/python3 "$HERE/idle_h2.py" -p "$srv_port" -n "$idle" -t 120 \
		<"$fifo" >"$WORK/idle.out" 2>&1 &
	cpid=$!
	live_pids+=("$cpid")
	exec 7>"$fifo"
	for _ in $(seq 1200); do # 120 s at most
		grep -qE '^(ready|failed)' "$WORK/idle.out" 2>/dev/null && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.5 # the last connections' state settles
	after=$(rss_kib "$(tree "$srv_pid")")
	exec 7>&- # EOF on the client's stdin: it closes its connections
	wait "$cpid" 2>/dev/null || true
	forget_pid "$cpid"
	if ! grep -q '^ready' "$WORK/idle.out"; then
		say "${names[$1]}: idle_h2.py failed: $(tail -2 "$WORK/idle.out" | tr '\n' ' ')"
		failures=$((failures + 1))
		return 0
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "${names[$1]}" "$idle" "$before" "$after" \
		"$(awk -v a="$before" -v b="$after" -v n="$idle" 'BEGIN { printf "%.0f", (b - a) * 1024 / n }')" \
		"$(awk '/^ready/ { print $3 }' "$WORK/idle.out")" >>"$IDLE"
	say "round $2 ${names[$1]}: $idle idle h2c connections: RSS $before -> $after KiB"
	sleep 1 # the closed connections' cleanup
}

# profile IDX CASE: perf record -g of the server over a run of the case; its top symbols
PROF=$WORK/profiles.md
profile() {
	local m p c s n tool data=$WORK/perf.${names[$1]}.${2//[\/:]/_}
	IFS=: read -r m p c s n <<<"$2"
	rm -f "$data"
	taskset -c "$client_cpu" perf record -q -g -o "$data" -p "$(tree "$srv_pid" | paste -sd,)" \
		>/dev/null 2>&1 &
	tool=$!
	live_pids+=("$tool")
	sleep 0.5
	h2load_run "$m" "$p" "$c" "$s" 200000 >/dev/null 2>&1 || true
	kill -INT "$tool" 2>/dev/null || true
	wait "$tool" 2>/dev/null || true
	forget_pid "$tool"
	{
		echo
		echo "${names[$1]}, $(label "$2") (perf record -g over 200,000 requests; self time" \
			"by function, \`perf report --no-children\`, the top 25):"
		echo
		echo '```'
		perf report -i "$data" --stdio --no-children --sort dso -g none 2>/dev/null |
			awk '!/^#/ && $1 ~ /%$/ { printf "%s %s; ", $1, $2 }' | sed 's/^/by DSO: /; s/; $//'
		echo
		perf report -i "$data" --stdio --no-children --sort dso,sym -g none --percent-limit 0.7 \
			2>/dev/null | grep -v '^#' | grep -v '^$' | head -25 || echo "(perf report failed)"
		echo '```'
	} >>"$PROF"
}

label() {
	local m p c s n
	IFS=: read -r m p c s n <<<"$1"
	echo "$m $p, $c conn × $s streams"
}

restart() {
	say "server ${names[$1]} died: $(tail -3 "$WORK/server.${names[$1]}.log" | tr '\n' ' ')"
	failures=$((failures + 1))
	wait "$srv_pid" 2>/dev/null || true
	forget_pid "$srv_pid"
	start_h2 "$1"
}

nsrv=${#names[@]}
say "$nsrv servers x ${#cases[@]} cases x $rounds rounds; idle $idle; profiles of '${perf_list}'"
for ((round = 1; round <= rounds; round++)); do
	for ((k = 0; k < nsrv; k++)); do
		i=$(((k + round - 1) % nsrv))
		start_h2 "$i"
		[[ $round -eq 1 ]] && check_server "$i"
		idle_measure "$i" "$round"
		for c in "${cases[@]}"; do
			measure "$i" "$c" "$round"
			kill -0 "$srv_pid" 2>/dev/null || restart "$i"
		done
		if [[ $round -eq 1 && " $perf_list " == *" ${names[$i]} "* ]]; then
			for c in $perf_cases; do profile "$i" "$c:0"; done
		fi
		stop_server "$srv_pid"
	done
done
[[ -n $raw_out ]] && { cp "$RAW" "$raw_out"; cp "$IDLE" "${raw_out%.tsv}.idle.tsv"; }

# --- tables -----------------------------------------------------------------------------------
have() { [[ " ${names[*]} " == *" $1 "* ]]; }
echo
echo "Command: \`$CMDLINE\`"
echo
echo "Machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))," \
	"kernel $(uname -r); $(nginx -v 2>&1 | sed 's/.*: //'), h2o $(h2o --version 2>/dev/null |
	awk 'NR == 1 { print $3 }'), $(h2load --version | awk '{ print $2 }') h2load," \
	"$(openssl version | awk '{ print $1, $2 }'); giong's TLS backend $backend. Servers on CPU" \
	"$server_cpu, h2load on CPU $client_cpu; $rounds round(s), medians (min–max over the" \
	"rounds). $(date -u '+%Y-%m-%d %H:%M UTC')."
echo
echo "| server | TLS 1.3 offering h2 and $suite: suite, group, ALPN (openssl s_client) |"
echo "|---|---|"
for n in "${names[@]}"; do echo "| $n | ${negotiated[$n]:-?} |"; done
echo
hdr="| case | server | req/s | server CPU µs/req"
sep="|---|---|---:|---:"
for b in nginx h2o; do have "$b" && hdr+=" | × $b" sep+="|---:"; done
echo "$hdr | server CPU | h2load CPU | mean µs/req | RSS KiB | B/resp | errors | other load |"
echo "$sep|---:|---:|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
	for n in "${names[@]}"; do
		mc=$(med "$RAW" "$n" 3 "$c" 5)
		row="| $(label "$c") | $n | $(cell "$RAW" "$n" 3 "$c" 4 '%.0f') | $(cell "$RAW" "$n" 3 "$c" 5 '%.2f')"
		for b in nginx h2o; do have "$b" && row+=" | $(ratio "$mc" "$(med "$RAW" "$b" 3 "$c" 5)")"; done
		row+=" | $(med "$RAW" "$n" 3 "$c" 6) | $(med "$RAW" "$n" 3 "$c" 8) | $(med "$RAW" "$n" 3 "$c" 7)"
		row+=" | $(med "$RAW" "$n" 3 "$c" 9) | $(med "$RAW" "$n" 3 "$c" 10)"
		row+=" | $(vals "$RAW" "$n" 3 "$c" 11 | awk '{ s += $1 } END { print s + 0 }')"
		echo "$row | $(med "$RAW" "$n" 3 "$c" 12) |"
	done
done
echo
echo "server CPU, h2load CPU: fraction of one CPU over h2load's run (h2load's own user+system);" \
	"mean µs/req: h2load's mean time for a request; RSS: VmRSS of the server's processes after" \
	"the run; B/resp: bytes h2load read per response (frames included); errors: requests not" \
	"answered 2xx, summed over the rounds; other load: other processes' CPU on the two CPUs" \
	"(above $max_other a run was retried up to $retries time(s), the quietest kept)."
for gn in giong giong-b; do
	have "$gn" || continue
	have nginx || have h2o || continue
	echo
	echo "Targets ($gn's CPU per request as ratios of the medians; ≤ 0.8 × nginx, ≤ 1.0 × h2o):"
	echo
	for c in "${cases[@]}"; do
		g=$(med "$RAW" "$gn" 3 "$c" 5) line="- $(label "$c"):"
		if have nginx; then
			r=$(ratio "$g" "$(med "$RAW" nginx 3 "$c" 5)")
			line+=" $r × nginx ($(awk -v r="$r" 'BEGIN { print (r != "–" && r <= 0.8) ? "met" : "**missed**" }'))"
		fi
		if have h2o; then
			r=$(ratio "$g" "$(med "$RAW" h2o 3 "$c" 5)")
			line+=", $r × h2o ($(awk -v r="$r" 'BEGIN { print (r != "–" && r <= 1.0) ? "met" : "**missed**" }'))"
		fi
		echo "$line"
	done
done
if [[ $idle -gt 0 ]]; then
	echo
	echo "Resident memory per idle h2c connection ($idle connections, each the preface, SETTINGS and" \
		"one GET /json answered, then idle; RSS of the server's processes before and after;" \
		"medians (min–max) over the rounds):"
	echo
	hdr="| server | RSS before KiB | RSS after KiB | bytes per connection"
	sep="|---|---:|---:|---:"
	have h2o && hdr+=" | × h2o" sep+="|---:"
	echo "$hdr | s to open |"
	echo "$sep|---:|"
	bi=$(med "$IDLE" h2o 3 "$idle" 6)
	for n in "${names[@]}"; do
		row="| $n | $(med "$IDLE" "$n" 3 "$idle" 4) | $(med "$IDLE" "$n" 3 "$idle" 5)"
		row+=" | $(cell "$IDLE" "$n" 3 "$idle" 6 '%.0f')"
		have h2o && row+=" | $(ratio "$(med "$IDLE" "$n" 3 "$idle" 6)" "$bi")"
		echo "$row | $(med "$IDLE" "$n" 3 "$idle" 7) |"
	done
fi
[[ -s $PROF ]] && { echo; echo "Profiles (round 1):"; cat "$PROF"; }
if [[ $failures -gt 0 ]]; then
	say "$failures failure(s); see the messages above"
	exit 1
fi
