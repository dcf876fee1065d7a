#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# http_bench.sh: issue 12's HTTP benchmark. Runs HTTP servers one at a time pinned to one CPU
# against `wrk -t1` pinned to the other, in interleaved rounds, and prints markdown tables of
# medians with the per-round spread: requests/s, p50/p99 latency (wrk --latency), server CPU
# per request (utime+stime of the server's processes from /proc/PID/stat over wrk's run),
# system calls per request (perf's raw_syscalls:sys_enter in a separate shorter pass, round 1),
# resident memory (VmRSS of the server's processes after each run), listen-queue drops
# during each run (TcpExt ListenDrops) and, unless --idle 0,
# resident memory per idle keep-alive connection (idle_conns: N connections that each made
# one request; the server's RSS before and after, divided by N).
#
# usage: bench/load/http_bench.sh [options] [--server CMD --name NAME]...
#   --server CMD     a server command; {port} in it is replaced by a free port, else the port
#                    is read from "--port N" / "-p N" in CMD. Repeatable; each needs --name.
#                    The command must exec the server (or be it): its PID is the server's,
#                    and its descendants count with it (nginx's worker).
#   --name NAME      the name of the preceding --server in the tables
#   --no-peers       do not run the built-in peers (epoll, nginx, h2o)
#   --peers "LIST"   which built-in peers (default "epoll nginx h2o"; those not installed are
#                    skipped with a message); also "giong" (build/bin/http --workers 1) and
#                    "giong-epoll" (the same with GIONG_RING_TIER=epoll); GIONG_BIN: their dir
#   --baseline NAME  ratios are to this server (default: epoll)
#   --rounds R       interleaved rounds (default 5)
#   --secs S         measured seconds per run (default 4, whole seconds), after a warm-up
#                    run of --warmup W seconds (default 1) on the same server
#   --conns "LIST"   connection counts for GET /json (default "1 50 1000 5000")
#   --paths "LIST"   further paths, each at --path-conns C (default "/users" at 50)
#   --pipeline D     GET /json pipelined D deep (wrk/pipeline.lua) at --path-conns; 0: none
#                    (default 16)
#   --cases "LIST"   instead of the three above: cases as PATH:CONNS:DEPTH, e.g. "/json:50:1"
#   --idle N         idle keep-alive connections for the memory measurement (default 10000;
#                    0: skip it); it runs once per round on each freshly started server
#   --syscalls M     auto|perf|none (default auto: perf if it can count raw_syscalls here)
#   --syscall-secs S length of the syscall pass (default 2)
#   --server-cpu N   CPU for the servers (default 1); --client-cpu N for wrk (default 0)
#   --port-base P    first port handed to {port} (default 7400)
#   --raw FILE       also write every measurement as tab-separated values
#   --max-other F    a run during which other processes used more than F of a CPU on the two
#   --retries N      CPUs (from /proc/stat) is repeated up to N times (defaults 0.2 and 1);
#                    the quietest try is kept
#   --wait-quiet S   before each run, wait up to S s (default 0) for the two CPUs to be
#                    quieter than --max-other (other sessions' builds and tests)
#   --quick          1 round, 2 s runs, no warm-up, 1 s syscall pass, --idle 2000
#
# HTTP_BENCH_KEEP=1 keeps the work directory (server logs, configs, raw tables).
# Every server is started by this script and stopped by PID (SIGTERM, then SIGKILL after
# 5 s); an EXIT trap stops whatever is still running. Every run is bounded: wrk by -d and
# --timeout, idle_conns by -t, the waits by counts. Loopback only. Exit status is non-zero
# if a run failed, a server died, or a server sent other bytes than the reference bodies.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=http_bench
# die, say, the servers under test, their ports, the processes to end, wait_for_quiet
# shellcheck source=bench/load/server_lib.sh
. "$HERE/server_lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${BENCH_LOAD_BIN:-$ROOT/build/bench-load}
LUA=$HERE/wrk/pipeline.lua
set_cmdline bench/load/http_bench.sh "$@"

rounds=5 secs=4 warmup=1 conns_list="1 50 1000 5000" paths_list="/users" path_conns=50
pipeline=16 cases_opt="" idle=10000 syscalls=auto sys_secs=2 server_cpu=1 client_cpu=0
port_base=7400 baseline=epoll peers=1 peer_list="epoll nginx h2o" raw_out="" retries=1
max_other=0.2 wait_quiet=0
names=() cmds=()

while [[ $# -gt 0 ]]; do
	case $1 in
	--server) [[ $# -ge 2 ]] || die "--server needs a command"; cmds+=("$2"); names+=(""); shift 2 ;;
	--name)
		[[ $# -ge 2 && ${#cmds[@]} -gt 0 ]] || die "--name must follow --server CMD"
		names[${#names[@]}-1]=$2; shift 2 ;;
	--no-peers) peers=0; shift ;;
	--peers) peer_list=$2; shift 2 ;;
	--baseline) baseline=$2; shift 2 ;;
	--conns) conns_list=$2; shift 2 ;;
	--paths) paths_list=$2; shift 2 ;;
	--path-conns) path_conns=$2; shift 2 ;;
	--pipeline) pipeline=$2; shift 2 ;;
	--cases) cases_opt=$2; shift 2 ;;
	--idle) idle=$2; shift 2 ;;
	--quick) rounds=1 secs=2 warmup=0 sys_secs=1 idle=2000; shift ;;
	-h|--help) sed -n '3,45p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) take_opt "$@" || die "unknown option '$1' (--help)"; shift 2 ;;
	esac
done
for v in rounds secs warmup sys_secs idle pipeline path_conns retries wait_quiet; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "--${v//_/-} takes a whole number"
done

# --- cases: PATH:CONNS:DEPTH ------------------------------------------------------------------
cases=()
if [[ -n $cases_opt ]]; then
	for c in $cases_opt; do
		[[ $c =~ ^/[^:]*:[0-9]+:[0-9]+$ ]] || die "--cases: '$c' is not PATH:CONNS:DEPTH"
		cases+=("$c")
	done
else
	for c in $conns_list; do cases+=("/json:$c:1"); done
	for p in $paths_list; do cases+=("$p:$path_conns:1"); done
	[[ $pipeline -gt 1 ]] && cases+=("/json:$path_conns:$pipeline")
fi
[[ ${#cases[@]} -gt 0 ]] || die "no case to run"

# --- servers ----------------------------------------------------------------------------------
# the scratch directory, removed at the end (HTTP_BENCH_KEEP=1 keeps it)
make_work http_bench HTTP_BENCH_KEEP
# peer_of NAME: the built-in peer's command in peer_cmd (add_peers)
peer_of() {
	case $1 in
	epoll)
		[[ -x $BIN/epoll_http ]] || die "$BIN/epoll_http is missing: run 'make -C bench/load'"
		peer_cmd="$BIN/epoll_http {port}" ;;
	nginx|h2o) http_peer "$1" ;;
	giong|giong-epoll) giong_peer "$1" http ;;
	*) die "--peers: unknown peer '$1'" ;;
	esac
}
[[ $peers -eq 1 ]] && add_peers "$peer_list"
check_servers
for t in taskset ss wrk; do command -v $t >/dev/null || die "$t is required"; done
[[ $idle -eq 0 || -x $BIN/idle_conns ]] || die "$BIN/idle_conns is missing: run 'make -C bench/load'"

# Descriptors for 5,000 connections (and 10,000 idle ones) in wrk, idle_conns and the servers.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
nofile=$(ulimit -n)
for c in "${cases[@]}"; do
	n=${c#*:} n=${n%%:*}
	[[ $nofile == unlimited || $n -lt $((nofile - 64)) ]] || die "$n connections need more than ulimit -n $nofile"
done

if [[ $syscalls == auto ]]; then
	if perf_syscalls; then
		syscalls=perf
	else
		syscalls=none
	fi
fi
case $syscalls in perf|none) ;; *) die "--syscalls: auto, perf or none" ;; esac

"$HERE/http-peers/make_bodies.sh" "$WORK/ref"



# resolve_cmd IDX -> sets srv_cmd and srv_port

# tree PID: PID and its descendants, one a line
tree() {
	local p c
	echo "$1"
	for p in /proc/"$1"/task/*/children; do
		[[ -r $p ]] || continue
		for c in $(<"$p"); do tree "$c"; done
	done
}

# cpu_ticks PIDS: utime+stime summed (clock ticks). Fields after the ")" of comm.
cpu_ticks() {
	local p t=0 s
	for p in $1; do
		s=$(cat /proc/"$p"/stat 2>/dev/null) || continue
		s=${s##*) }
		# shellcheck disable=SC2086
		set -- $s
		t=$((t + ${12} + ${13}))
	done
	echo "$t"
}

# rss_kib PIDS: VmRSS summed, KiB
rss_kib() {
	local p t=0 v
	for p in $1; do
		v=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null) || v=0
		t=$((t + ${v:-0}))
	done
	echo "$t"
}


# wait_for_quiet: until the two CPUs together are busy less than max_other (nothing of ours
# runs now, apart from an idle server), for at most wait_quiet seconds

# start_server IDX -> sets srv_pid (the server's own PID: taskset execs it)


# check_bodies NAME: the server sends the reference bytes for /json and /users (curl)
failures=0
check_bodies() {
	local f
	command -v curl >/dev/null || { say "no curl: bodies not checked"; return 0; }
	for f in json users; do
		if ! curl -sf --max-time 5 "http://127.0.0.1:$srv_port/$f" -o "$WORK/got.$f" ||
			! cmp -s "$WORK/got.$f" "$WORK/ref/$f.json"; then
			say "$1: GET /$f does not send the reference body ($WORK/ref/$f.json)"
			failures=$((failures + 1))
		fi
	done
}

# to_us VALUE-WITH-UNIT (wrk's "263.00us", "1.20ms", "2.00s") -> microseconds
to_us() {
	awk -v v="$1" 'BEGIN { u = v; sub(/^[0-9.]+/, "", u); x = v + 0;
		if (u == "ms") x *= 1000; else if (u == "s") x *= 1000000; else if (u == "m") x *= 60000000;
		printf "%.1f", x }'
}
# to_bytes "45.18MB" -> bytes
to_bytes() {
	awk -v v="$1" 'BEGIN { u = v; sub(/^[0-9.]+/, "", u); x = v + 0;
		if (u == "KB") x *= 1024; else if (u == "MB") x *= 1048576; else if (u == "GB") x *= 1073741824;
		printf "%.0f", x }'
}

# wrk_run PATH CONNS DEPTH SECS -> wrk's output, then "CLIENT_TICKS n" (wrk's user+sys)
wrk_run() {
	local args=(-t1 -c "$2" -d "${4}s" --timeout 5s --latency)
	[[ $3 -gt 1 ]] && args+=(-s "$LUA")
	args+=("http://127.0.0.1:$srv_port$1")
	[[ $3 -gt 1 ]] && args+=(-- "$3")
	(
		timeout -k 5 $(($4 + 30)) taskset -c "$client_cpu" wrk "${args[@]}"
		# (times in a pipeline would run in a fork with no children: through a file)
		times >"$WORK/times"
		awk -v hz="$HZ" 'NR == 2 {
			split($1, a, /[ms]/); split($2, b, /[ms]/);
			printf "CLIENT_TICKS %.0f\n", (a[1] * 60 + a[2] + b[1] * 60 + b[2]) * hz }' "$WORK/times"
	)
}

# parse_wrk OUT -> "reqs_per_s requests p50_us p99_us bytes_per_resp errors client_ticks"
parse_wrk() {
	local rps reqs p50 p99 bytes err ct
	rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' <<<"$1")
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' <<<"$1")
	bytes=$(sed -n 's/.* requests in [^,]*, *\([0-9.]*[KMG]*B\) read.*/\1/p' <<<"$1")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$1")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$1")
	err=$(awk '/Socket errors:/ { gsub(/,/, ""); s += $4 + $6 + $8 + $10 }
		/Non-2xx/ { s += $NF } END { print s + 0 }' <<<"$1")
	ct=$(sed -n 's/^CLIENT_TICKS //p' <<<"$1")
	[[ -n $rps && -n $reqs && $reqs -gt 0 ]] || { echo ""; return; }
	echo "$rps $reqs $(to_us "${p50:-0}") $(to_us "${p99:-0}")" \
		"$(awk -v b="$(to_bytes "${bytes:-0}")" -v r="$reqs" 'BEGIN { printf "%.0f", b / r }')" \
		"$err ${ct:-0}"
}

RAW=$WORK/raw.tsv
printf 'round\tserver\tcase\treqs_per_s\tcpu_us_per_req\tserver_util\tp50_us\tp99_us\trss_kib\tbytes_per_resp\terrors\tother_load\ttries\tsyscalls_per_req\tsys_pass_reqs_per_s\tclient_util\tlisten_drops\n' >"$RAW"
IDLE=$WORK/idle.tsv
printf 'round\tserver\tconns\trss_before_kib\trss_after_kib\tbytes_per_conn\n' >"$IDLE"

# measure IDX CASE ROUND: one table cell's run (retried when disturbed) + syscall pass
measure() {
	local i=$1 cs=$2 path=${2%%:*} rest=${2#*:} conns depth out parsed best="" best_other=99 try
	local t0 t1 b0 b1 c0 c1 pids other util cutil cpu rss sys="NA NA" best_cutil=NA
	local d0 d1 drops best_drops=NA
	conns=${rest%%:*} depth=${rest#*:}
	for ((try = 1; try <= retries + 1; try++)); do
		wait_for_quiet
		[[ $warmup -gt 0 ]] && { wrk_run "$path" "$conns" "$depth" "$warmup" >/dev/null 2>&1 || true; }
		pids=$(tree "$srv_pid")
		d0=$(listen_drops) c0=$(cpu_ticks "$pids") b0=$(busy_ticks) t0=$(date +%s.%N)
		out=$(wrk_run "$path" "$conns" "$depth" "$secs" 2>&1) || true
		t1=$(date +%s.%N) b1=$(busy_ticks) c1=$(cpu_ticks "$pids") d1=$(listen_drops)
		drops=$((d1 - d0))
		rss=$(rss_kib "$(tree "$srv_pid")")
		parsed=$(parse_wrk "$out")
		if [[ -z $parsed ]]; then
			say "round $round ${names[$i]} $cs: wrk failed:"; echo "$out" | tail -5 >&2
			failures=$((failures + 1))
			return 0
		fi
		# shellcheck disable=SC2086
		set -- $parsed
		util=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", c / hz / (b - a) }')
		other=$(awk -v bt=$((b1 - b0)) -v c=$((c1 - c0)) -v w="$7" -v hz="$HZ" -v a="$t0" -v b="$t1" \
			'BEGIN { o = (bt - c - w) / hz / (b - a); if (o < 0) o = 0; printf "%.2f", o }')
		cpu=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v r="$2" 'BEGIN { printf "%.3f", c / hz * 1e6 / r }')
		cutil=$(awk -v c="$7" -v hz="$HZ" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", c / hz / (b - a) }')
		if awk -v a="$other" -v b="$best_other" 'BEGIN { exit !(a < b) }'; then
			best="$1 $cpu $util $3 $4 $rss $5 $6" best_other=$other best_cutil=$cutil
			best_drops=$drops
			# wrk's latencies are wrong when pipelining: its coordinated-omission
			# correction takes one response per batch (its p99 even comes out as 0).
			[[ $depth -gt 1 ]] && best="$1 $cpu $util NA NA $rss $5 $6"
		fi
		awk -v a="$other" -v m="$max_other" 'BEGIN { exit !(a <= m) }' && break
		[[ $try -le $retries ]] && say "${names[$i]} $cs: other load $other, again"
	done
	((try > retries + 1)) && try=$((retries + 1))
	if [[ $round -eq 1 && $syscalls == perf ]]; then
		sys=$(count_syscalls "$path" "$conns" "$depth")
	fi
	# shellcheck disable=SC2086
	set -- $best
	if [[ $8 -ne 0 ]]; then
		say "${names[$i]} $cs: $8 socket errors or non-2xx responses:"
		grep -E 'errors|Non-2xx' <<<"$out" >&2 || true
		failures=$((failures + 1))
	fi
	# shellcheck disable=SC2086
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" \
		"${names[$i]}" "$cs" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$best_other" "$try" $sys \
		"$best_cutil" "$best_drops" >>"$RAW"
	say "round $round/$rounds ${names[$i]} $path c=$conns d=$depth: $1 req/s, $2 us/req," \
		"p50 $4 us, rss $6 KiB, other load $best_other"
}

# count_syscalls PATH CONNS DEPTH -> "syscalls_per_req reqs_per_s" (perf over the server's tree)
count_syscalls() {
	local out parsed n file=$WORK/sys.out pids tool
	rm -f "$file"
	pids=$(tree "$srv_pid" | paste -sd,)
	taskset -c "$client_cpu" perf stat -x, -o "$file" -e raw_syscalls:sys_enter -p "$pids" \
		>/dev/null 2>&1 &
	tool=$!
	live_pids+=("$tool")
	sleep 0.5 # let perf attach
	out=$(wrk_run "$1" "$2" "$3" "$sys_secs" 2>&1) || true
	kill -INT "$tool" 2>/dev/null || true
	wait "$tool" 2>/dev/null || true
	forget_pid "$tool"
	n=$(grep -v '^#' "$file" 2>/dev/null | awk -F, '$3 ~ /raw_syscalls/ {print $1}')
	parsed=$(parse_wrk "$out")
	if [[ -z $parsed || ! $n =~ ^[0-9]+$ ]]; then
		echo "NA NA"
	else
		# shellcheck disable=SC2086
		set -- $parsed
		awk -v n="$n" -v r="$2" -v s="$1" 'BEGIN { printf "%.4f %.0f\n", n / r, s }'
	fi
}

# idle_measure IDX ROUND: RSS per idle keep-alive connection on the fresh server
idle_measure() {
	local i=$1 before after out pids cpid fifo=$WORK/idle.fifo
	[[ $idle -gt 0 ]] || return 0
	curl -sf --max-time 5 "http://127.0.0.1:$srv_port/json" -o /dev/null 2>&1 || true
	sleep 0.3
	before=$(rss_kib "$(tree "$srv_pid")")
	rm -f "$fifo"
	mkfifo "$fifo"
	taskset -c "$client_cpu" "$BIN/idle_conns" -p "$srv_port" -n "$idle" -t 60 <"$fifo" \
		>"$WORK/idle.out" 2>&1 &
	cpid=$!
	live_pids+=("$cpid")
	exec 7>"$fifo"
	for _ in $(seq 600); do
		grep -qE '^(ready|failed)' "$WORK/idle.out" 2>/dev/null && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.5 # the last connections' state settles
	pids=$(tree "$srv_pid")
	after=$(rss_kib "$pids")
	exec 7>&- # EOF on the client's stdin: it closes its connections
	wait "$cpid" 2>/dev/null || true
	forget_pid "$cpid"
	if ! grep -q '^ready' "$WORK/idle.out"; then
		say "${names[$i]}: idle_conns failed: $(tail -2 "$WORK/idle.out" | tr '\n' ' ')"
		failures=$((failures + 1))
		return 0
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "${names[$i]}" "$idle" "$before" "$after" \
		"$(awk -v a="$before" -v b="$after" -v n="$idle" 'BEGIN { printf "%.0f", (b - a) * 1024 / n }')" >>"$IDLE"
	say "round $2 ${names[$i]}: $idle idle connections: RSS $before -> $after KiB"
	sleep 1 # the closed connections' cleanup
}

nsrv=${#cmds[@]}
ncase=${#cases[@]}
est=$(awk -v r="$rounds" -v s="$nsrv" -v c="$ncase" -v d="$secs" -v w="$warmup" -v y="$sys_secs" \
	-v sc="$syscalls" -v i="$idle" 'BEGIN { t = r*s*(c*(d+w+0.8) + 2 + (i ? 4 : 0));
	if (sc != "none") t += s*c*(y+1); printf "%d", t }')
say "$nsrv servers x $ncase cases x $rounds rounds, ${secs}s each (+${warmup}s warm-up);" \
	"syscalls via $syscalls; about ${est}s (more when runs are retried)"

for ((round = 1; round <= rounds; round++)); do
	for ((k = 0; k < nsrv; k++)); do
		i=$(((k + round - 1) % nsrv)) # rotate the order so no server always runs first
		start_server "$i"
		[[ $round -eq 1 ]] && check_bodies "${names[$i]}"
		idle_measure "$i" "$round"
		for c in "${cases[@]}"; do
			measure "$i" "$c" "$round"
			if ! kill -0 "$srv_pid" 2>/dev/null; then
				say "server ${names[$i]} died"
				failures=$((failures + 1))
				wait "$srv_pid" 2>/dev/null || true
				forget_pid "$srv_pid"
				start_server "$i"
			fi
		done
		stop_server "$srv_pid"
	done
done

[[ -n $raw_out ]] && { cp "$RAW" "$raw_out"; cp "$IDLE" "${raw_out%.tsv}.idle.tsv"; }

# --- tables -----------------------------------------------------------------------------------
# vals FILE SERVER KEYCOL KEY COL: the column's values for that server and key, sorted
vals() {
	awk -F'\t' -v sv="$2" -v kc="$3" -v k="$4" -v col="$5" \
		'NR > 1 && $2 == sv && $kc == k && $col != "NA" && $col != "" { print $col }' "$1" | sort -g
}
median() { awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2];
	else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
spread() { awk -v f="$1" '{ a[NR] = $1 } END { if (NR < 2) print ""; else printf " (" f "–" f ")", a[1], a[NR] }'; }
med() { vals "$@" | median; }
cell() { # cell FILE SERVER KEYCOL KEY COL FORMAT: median (min–max)
	local v
	v=$(med "$1" "$2" "$3" "$4" "$5")
	[[ $v == NA ]] && { echo NA; return; }
	printf "$6%s" "$v" "$(vals "$1" "$2" "$3" "$4" "$5" | spread "$6")"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "–";
	else printf "%.2f", a / b }'; }

have_base=0
for n in "${names[@]}"; do [[ $n == "$baseline" ]] && have_base=1; done
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo
echo "Command: \`$CMDLINE\`"
echo
echo "Machine: $(nproc) CPUs ($cpu_model), kernel $(uname -r); server on CPU $server_cpu," \
	"\`wrk -t1\` ($(wrk -v 2>&1 | head -1 | awk '{print $2}')) on CPU $client_cpu; $rounds round(s) of ${secs} s" \
	"(after a ${warmup} s warm-up run), medians (min–max over the rounds); system calls per" \
	"request via $syscalls in a separate ${sys_secs} s pass (round 1). $(date -u '+%Y-%m-%d %H:%M UTC')."
echo
hdr="| case | server | req/s"
sep="|---|---|---:"
[[ $have_base -eq 1 ]] && hdr+=" | × $baseline" sep+="|---:"
hdr+=" | server CPU µs/req"
sep+="|---:"
[[ $have_base -eq 1 ]] && hdr+=" | × $baseline" sep+="|---:"
hdr+=" | syscalls/req | p50 µs | p99 µs | server CPU | wrk CPU | RSS KiB | B/resp | other load | listen drops |"
sep+="|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
echo "$hdr"
echo "$sep"
for c in "${cases[@]}"; do
	p=${c%%:*} r=${c#*:} cn=${r%%:*} d=${r#*:}
	label="$p × $cn"
	[[ $d -gt 1 ]] && label+=" pipelined $d"
	bm=$(med "$RAW" "$baseline" 3 "$c" 4)
	bc=$(med "$RAW" "$baseline" 3 "$c" 5)
	for n in "${names[@]}"; do
		row="| $label | $n | $(cell "$RAW" "$n" 3 "$c" 4 '%.0f')"
		[[ $have_base -eq 1 ]] && row+=" | $(ratio "$(med "$RAW" "$n" 3 "$c" 4)" "$bm")"
		row+=" | $(cell "$RAW" "$n" 3 "$c" 5 '%.2f')"
		[[ $have_base -eq 1 ]] && row+=" | $(ratio "$(med "$RAW" "$n" 3 "$c" 5)" "$bc")"
		row+=" | $(med "$RAW" "$n" 3 "$c" 14)"
		row+=" | $(cell "$RAW" "$n" 3 "$c" 7 '%.0f') | $(cell "$RAW" "$n" 3 "$c" 8 '%.0f')"
		row+=" | $(med "$RAW" "$n" 3 "$c" 6) | $(med "$RAW" "$n" 3 "$c" 16)"
		row+=" | $(cell "$RAW" "$n" 3 "$c" 9 '%.0f')"
		row+=" | $(med "$RAW" "$n" 3 "$c" 10) | $(med "$RAW" "$n" 3 "$c" 12)"
		row+=" | $(cell "$RAW" "$n" 3 "$c" 17 '%.0f') |"
		echo "$row"
	done
done
echo
echo "server CPU, wrk CPU: fraction of one CPU over wrk's run (all the server's processes; wrk's user+system); RSS: VmRSS of" \
	"the server's processes after the run; B/resp: bytes read by wrk per response (head + body);" \
	"other load: CPU used by other processes on the two CPUs (a run above $max_other was" \
	"retried up to $retries time(s), the quietest kept); no latency for pipelined runs: wrk" \
	"measures one per batch and then corrects them as if each were one request; listen drops:" \
	"connections the system's listen queues dropped during the measured run (TcpExt ListenDrops)."
if [[ $syscalls == perf ]]; then
	line="Throughput during the syscall pass (perf attached), req/s:"
	for n in "${names[@]}"; do
		line+=" $n"
		for c in "${cases[@]}"; do line+=" $(med "$RAW" "$n" 3 "$c" 15)"; done
		line+=";"
	done
	echo "$line"
fi
if [[ $idle -gt 0 ]]; then
	echo
	echo "Resident memory per idle keep-alive connection ($idle connections, one request each," \
		"RSS of the server's processes before and after; medians (min–max) over the rounds):"
	echo
	echo "| server | RSS before KiB | RSS after KiB | bytes per connection |"
	echo "|---|---:|---:|---:|"
	for n in "${names[@]}"; do
		echo "| $n | $(med "$IDLE" "$n" 3 "$idle" 4) | $(med "$IDLE" "$n" 3 "$idle" 5)" \
			"| $(cell "$IDLE" "$n" 3 "$idle" 6 '%.0f') |"
	done
fi
if [[ $failures -gt 0 ]]; then
	say "$failures failure(s); see the messages above"
	exit 1
fi
