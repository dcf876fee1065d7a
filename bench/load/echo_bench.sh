#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# echo_bench.sh: issue 4's echo benchmark. Runs echo servers, each pinned to one CPU, against
# the pingpong client pinned to the other, in interleaved rounds, and prints a markdown table
# of medians: messages/s, server CPU per message (utime+stime from /proc/PID/stat over the
# measured window), system calls per message (perf's raw_syscalls:sys_enter or strace -c,
# in a separate shorter pass) and round-trip percentiles, with ratios to a baseline server.
#
# usage: bench/load/echo_bench.sh [options] [--server CMD --name NAME]...
#   --server CMD      a server command; {port} in it is replaced by a free port, else the port
#                     is read from "--port N" / "-p N" in CMD. Repeatable; each needs --name.
#   --name NAME       the name of the preceding --server in the table
#   --no-peers        do not run the built-in peers (epoll, uring_naive)
#   --peers "LIST"    which built-in peers (default "epoll uring_naive"); also "giong"
#                     (build/bin/echo --workers 1) and "giong-epoll" (the same with
#                     GIONG_RING_TIER=epoll); GIONG_BIN: their directory
#   --baseline NAME   ratios are to this server (default: epoll)
#   --rounds R        interleaved rounds (default 3)
#   --secs S          measured seconds per run (default 4), after --warmup W (default 0.5)
#   --conns "LIST"    connection counts (default "1 50 1000")
#   --sizes "LIST"    message sizes in bytes (default "64 1024")
#   --syscalls M      auto|perf|strace|none (default auto: perf if it can count
#                     raw_syscalls:sys_enter here, else strace)
#   --syscall-secs S  length of the syscall pass (default 2); it runs in round 1 only
#   --server-cpu N    CPU for the servers (default 1); --client-cpu N for the client (default 0)
#   --client-threads N  pingpong threads (default 1)
#   --rate R          pace the client to at most R messages/s over all connections (pingpong
#                     -r): compares servers at the same load rather than each at its limit
#   --port-base P     first port handed to {port} (default 7300)
#   --raw FILE        also write every measurement as tab-separated values
#   --max-other F     a run during which other processes used more than F of a CPU (summed
#                     over the server's and the client's CPU, from /proc/stat) is repeated,
#   --retries N       up to N times (defaults 0.2 and 2); the quietest try is kept
#   --wait-quiet S    before each run, wait up to S s (default 0) for the two CPUs to be
#                     quieter than --max-other (other sessions' builds and tests)
#   --quick           1 round, 1.5 s per run, 1 s syscall pass
#
# Every server is started by this script and stopped by PID (SIGTERM, then SIGKILL after
# 5 s); an EXIT trap stops whatever is still running. Exit status is non-zero if any client
# run failed or a server died.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=echo_bench
# die, say, the servers under test, their ports, the processes to end, wait_for_quiet
# shellcheck source=bench/load/server_lib.sh
. "$HERE/server_lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${BENCH_LOAD_BIN:-$ROOT/build/bench-load}
PINGPONG=$BIN/pingpong
set_cmdline bench/load/echo_bench.sh "$@"

rounds=3 secs=4 warmup=0.5 conns_list="1 50 1000" sizes_list="64 1024"
syscalls=auto sys_secs=2 server_cpu=1 client_cpu=0 client_threads=1 port_base=7300
baseline=epoll peers=1 peer_list="epoll uring_naive" raw_out="" retries=2 max_other=0.2 wait_quiet=0 rate=0
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
	--sizes) sizes_list=$2; shift 2 ;;
	--client-threads) client_threads=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--quick) rounds=1 secs=1.5 warmup=0.3 sys_secs=1; shift ;;
	-h|--help) sed -n '3,41p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) take_opt "$@" || die "unknown option '$1' (--help)"; shift 2 ;;
	esac
done

# peer_of NAME: the built-in peer's command in peer_cmd (add_peers)
peer_of() {
	case $1 in
	epoll|uring_naive) peer_cmd="$BIN/${1}_echo {port}" ;;
	giong|giong-epoll) giong_peer "$1" echo ;;
	*) die "--peers: unknown peer '$1'" ;;
	esac
}
[[ $peers -eq 1 ]] && add_peers "$peer_list"
check_servers
[[ -x $PINGPONG ]] || die "$PINGPONG is missing: run 'make -C bench/load' first"
for t in taskset ss; do command -v $t >/dev/null || die "$t is required"; done

# --- syscall counting method -------------------------------------------------------------------
if [[ $syscalls == auto ]]; then
	if perf_syscalls; then
		syscalls=perf
	elif command -v strace >/dev/null; then
		syscalls=strace
	else
		syscalls=none
	fi
fi
case $syscalls in perf|strace|none) ;; *) die "--syscalls: auto, perf, strace or none" ;; esac

# --- cleanup -----------------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/echo_bench.XXXXXX)
cleanup() {
	kill_live
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


# --- servers -----------------------------------------------------------------------------------

# resolve_cmd IDX -> sets srv_cmd and srv_port

# start_server IDX -> sets srv_pid (the server's own PID: taskset execs it)


# --- measurements ------------------------------------------------------------------------------
kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

# run_client PORT PID CONNS SIZE SECS WARMUP -> prints pingpong's line, non-zero on failure
run_client() {
	taskset -c "$client_cpu" "$PINGPONG" -H 127.0.0.1 -p "$1" -P "$2" -c "$3" -s "$4" \
		-d "$5" -w "$6" -t "$client_threads" -C "$server_cpu,$client_cpu" -L -r "$rate"
}

# count_syscalls PORT PID CONNS SIZE -> prints "syscalls_per_msg msgs_per_s" or "NA NA"
count_syscalls() {
	local out n tool_pid file=$WORK/sys.out
	rm -f "$file"
	case $syscalls in
	perf)
		taskset -c "$client_cpu" perf stat -x, -o "$file" -e raw_syscalls:sys_enter \
			-p "$2" >/dev/null 2>&1 &
		;;
	strace)
		taskset -c "$client_cpu" strace -c -f -o "$file" -p "$2" >/dev/null 2>&1 &
		;;
	*) echo "NA NA"; return 0 ;;
	esac
	tool_pid=$!
	live_pids+=("$tool_pid")
	sleep 0.5 # let the tool attach
	out=$(run_client "$1" "$2" "$3" "$4" "$sys_secs" 0.2) || out=""
	kill -INT "$tool_pid" 2>/dev/null || true
	wait "$tool_pid" 2>/dev/null || true
	forget_pid "$tool_pid"
	if [[ $syscalls == perf ]]; then
		n=$(grep -v '^#' "$file" 2>/dev/null | awk -F, '$3 ~ /raw_syscalls/ {print $1}')
	else
		n=$(awk '$NF == "total" {print $4}' "$file" 2>/dev/null)
	fi
	if [[ -z $out || ! $n =~ ^[0-9]+$ ]]; then
		echo "NA NA"
	else
		awk -v n="$n" -v m="$(kv msgs_total "$out")" -v r="$(kv msgs_per_s "$out")" \
			'BEGIN { printf "%.4f %.1f\n", n / m, r }'
	fi
}

nsrv=${#cmds[@]}
nconf=$(($(wc -w <<<"$conns_list") * $(wc -w <<<"$sizes_list")))
est=$(awk -v r="$rounds" -v s="$nsrv" -v c="$nconf" -v d="$secs" -v w="$warmup" -v y="$sys_secs" \
	-v sc="$syscalls" -v x="$retries" 'BEGIN { t = r*s*c*(d+w+0.6) + s*r*1;
	if (sc != "none") t += s*c*(y+1.5); printf "%d to %d", t, t + r*s*c*(d+w+0.6)*x }')
echo "echo_bench: $nsrv servers x $nconf configs x $rounds rounds, ${secs}s each;" \
	"syscalls via $syscalls; about ${est}s (more when runs are retried)" >&2

RAW=$WORK/raw.tsv
printf 'round\tserver\tconns\tsize\tmsgs_per_s\tcpu_us_per_msg\tserver_util\tp50_us\tp99_us\tclient_util\tother_load\ttries\tsyscalls_per_msg\tsys_pass_msgs_per_s\n' >"$RAW"
failures=0

# other_load OUT: CPU used by other processes on the two CPUs during the window (fraction of
# one CPU). /proc/stat is tick-sampled, so this is a rough interference indicator, not exact.
other_load() {
	awk -v sb="$(kv "cpu${server_cpu}_busy" "$1")" -v su="$(kv server_cpu_util "$1")" \
		-v cb="$(kv "cpu${client_cpu}_busy" "$1")" -v cu="$(kv client_cpu_util "$1")" \
		'BEGIN { a = sb - su; b = cb - cu; if (a < 0) a = 0; if (b < 0) b = 0;
			printf "%.3f", a + b }'
}


# measure IDX CONNS SIZE ROUND: one table cell's run (retried when disturbed) + syscall pass
measure() {
	local i=$1 c=$2 s=$3 round=$4 out best="" best_other=99 o try sys="NA NA"
	for ((try = 1; try <= retries + 1; try++)); do
		wait_for_quiet
		if ! out=$(run_client "$srv_port" "$srv_pid" "$c" "$s" "$secs" "$warmup"); then
			echo "echo_bench: round $round ${names[$i]} conns=$c size=$s: client failed" >&2
			failures=$((failures + 1))
			return 0
		fi
		o=$(other_load "$out")
		if awk -v a="$o" -v b="$best_other" 'BEGIN { exit !(a < b) }'; then
			best=$out best_other=$o
		fi
		awk -v a="$o" -v m="$max_other" 'BEGIN { exit !(a <= m) }' && break
		[[ $try -le $retries ]] &&
			echo "echo_bench: ${names[$i]} conns=$c size=$s: other load $o, again" >&2
	done
	((try > retries + 1)) && try=$((retries + 1))
	if [[ $round -eq 1 ]]; then
		sys=$(count_syscalls "$srv_port" "$srv_pid" "$c" "$s")
	fi
	# shellcheck disable=SC2086 # $sys holds two fields
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$round" "${names[$i]}" "$c" "$s" "$(kv msgs_per_s "$best")" \
		"$(kv server_cpu_us_per_msg "$best")" "$(kv server_cpu_util "$best")" \
		"$(kv p50_us "$best")" "$(kv p99_us "$best")" "$(kv client_cpu_util "$best")" \
		"$best_other" "$try" ${sys} >>"$RAW"
	echo "echo_bench: round $round/$rounds ${names[$i]} conns=$c size=$s:" \
		"$(kv msgs_per_s "$best") msg/s, $(kv server_cpu_us_per_msg "$best") us/msg," \
		"other load $best_other" >&2
}

for ((round = 1; round <= rounds; round++)); do
	for ((k = 0; k < nsrv; k++)); do
		i=$(((k + round - 1) % nsrv)) # rotate the order so no server always runs first
		start_server "$i"
		for c in $conns_list; do
			for s in $sizes_list; do
				measure "$i" "$c" "$s" "$round"
				if ! kill -0 "$srv_pid" 2>/dev/null; then
					echo "echo_bench: server ${names[$i]} died" >&2
					failures=$((failures + 1))
					wait "$srv_pid" 2>/dev/null || true
					forget_pid "$srv_pid"
					start_server "$i"
				fi
			done
		done
		stop_server "$srv_pid"
	done
done

[[ -n $raw_out ]] && cp "$RAW" "$raw_out"

# --- table -------------------------------------------------------------------------------------
# median SERVER CONNS SIZE COL [all]: median of column COL over that cell's runs, skipping NA;
# only over its quiet runs (other load <= max_other) when it has one, unless "all"
nquiet() {
	awk -F'\t' -v sv="$1" -v c="$2" -v s="$3" -v m="$max_other" \
		'NR > 1 && $2 == sv && $3 == c && $4 == s { n++; if ($11 <= m) q++ }
		END { printf "%d/%d", q, n }' "$RAW"
}
median() {
	local quiet_only=1
	[[ ${5:-} == all || $(nquiet "$1" "$2" "$3") == 0/* ]] && quiet_only=0
	awk -F'\t' -v sv="$1" -v c="$2" -v s="$3" -v col="$4" -v qo="$quiet_only" -v m="$max_other" \
		'NR > 1 && $2 == sv && $3 == c && $4 == s && $col != "NA" && $col != "" &&
		(!qo || $11 <= m) { print $col }' "$RAW" | sort -g |
		awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2];
			else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b == 0) print "–";
	else printf "%.2f", a / b }'; }
fmt() { awk -v v="$1" -v f="$2" 'BEGIN { if (v == "NA") print "NA"; else printf f, v }'; }

have_base=0
for n in "${names[@]}"; do [[ $n == "$baseline" ]] && have_base=1; done

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo
echo "Command: \`$CMDLINE\`"
echo
echo "Machine: $(nproc) CPUs ($cpu_model), kernel $(uname -r); server on CPU $server_cpu," \
	"client on CPU $client_cpu; $rounds round(s) of ${secs} s (+${warmup} s warm-up)," \
	"medians; syscalls per message via $syscalls in a separate ${sys_secs} s pass" \
	"(round 1). $(date -u '+%Y-%m-%d %H:%M UTC')."
if [[ $rate != 0 ]]; then
	echo
	echo "Client paced to at most $rate messages/s over all connections (\`pingpong -r\`)."
fi
echo
hdr="| server | conns | size | msgs/s"
sep="|---|---:|---:|---:"
[[ $have_base -eq 1 ]] && hdr+=" | × $baseline" sep+="|---:"
hdr+=" | server CPU µs/msg"
sep+="|---:"
[[ $have_base -eq 1 ]] && hdr+=" | × $baseline" sep+="|---:"
hdr+=" | syscalls/msg | p50 µs | p99 µs | server CPU | client CPU | other load | quiet runs |"
sep+="|---:|---:|---:|---:|---:|---:|---:|"
echo "$hdr"
echo "$sep"
for c in $conns_list; do
	for s in $sizes_list; do
		bm=$(median "$baseline" "$c" "$s" 5)
		bc=$(median "$baseline" "$c" "$s" 6)
		for n in "${names[@]}"; do
			m=$(median "$n" "$c" "$s" 5)
			cpu=$(median "$n" "$c" "$s" 6)
			row="| $n | $c | $s | $(fmt "$m" '%.0f')"
			[[ $have_base -eq 1 ]] && row+=" | $(ratio "$m" "$bm")"
			row+=" | $(fmt "$cpu" '%.2f')"
			[[ $have_base -eq 1 ]] && row+=" | $(ratio "$cpu" "$bc")"
			row+=" | $(fmt "$(median "$n" "$c" "$s" 13 all)" '%.3f')"
			row+=" | $(fmt "$(median "$n" "$c" "$s" 8)" '%.1f')"
			row+=" | $(fmt "$(median "$n" "$c" "$s" 9)" '%.1f')"
			row+=" | $(fmt "$(median "$n" "$c" "$s" 7)" '%.2f')"
			row+=" | $(fmt "$(median "$n" "$c" "$s" 10)" '%.2f')"
			row+=" | $(fmt "$(median "$n" "$c" "$s" 11)" '%.2f') | $(nquiet "$n" "$c" "$s") |"
			echo "$row"
		done
	done
done
echo
echo "server/client CPU: fraction of one CPU over the window; other load: CPU used by other" \
	"processes on those two CPUs (a run above $max_other was retried up to $retries times);" \
	"medians are over the quiet runs (other load <= $max_other) when a cell has any, else" \
	"over all; syscalls/msg comes from round 1's pass whatever its load."
if [[ $syscalls != none ]]; then
	echo "Throughput during the syscall pass (tracing overhead), msgs/s:"
	for n in "${names[@]}"; do
		line="- $n:"
		for c in $conns_list; do
			for s in $sizes_list; do
				line+=" ${c}x${s}=$(fmt "$(median "$n" "$c" "$s" 14 all)" '%.0f')"
			done
		done
		echo "$line"
	done
fi
if [[ $failures -gt 0 ]]; then
	echo "echo_bench: $failures failure(s); see the messages above" >&2
	exit 1
fi
