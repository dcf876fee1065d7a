#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# load_bench.sh: issue 15's benchmark. giong-load (programs/load, `-t 1`) against wrk 4.1
# (`-t1`) as the load generator, on the same servers: giong's HTTP example (build/bin/http
# --workers 1), nginx and h2o (http-peers/, as http_bench.sh runs them), GET /json kept
# alive. Each server in turn is pinned to one CPU and each load generator to the other, in
# interleaved rounds (the order of the servers and of the load generators rotates each
# round); each run follows a warm-up run of the same load generator on the same server.
# Prints markdown tables of medians with the per-round spread (min–max): the load
# generator's CPU µs per request (the figure giong-load exists for) and its ratio giong-load
# ÷ wrk (the per-round ratios' median: both ran in the same round on the same server),
# requests/s, p50/p99 latency (wrk --latency; giong-load --latency --json), and the server's
# CPU µs per request (utime+stime of the server's processes from /proc/PID/stat over the run).
#
# The load generator's CPU is the user+system time of its process over its whole run,
# start-up and connects included: the rusage its parent gets when it is reaped (bash's
# `times` before and after; what GNU time's %U %S give; the timeout(1) bounding it adds next
# to nothing). It counts what /proc/PID/stat of the exited process says before it is reaped
# (bench/results/load.md's way), at a finer grain than clock ticks. Per request: that over
# the requests the load generator's own report counts.
#
# usage: bench/load/load_bench.sh [options]
#   --servers "LIST"  from: giong nginx h2o (default all three; nginx or h2o not installed:
#                     skipped with a message)
#   --loadgens "LIST" from: giong-load wrk (default both; the ratios need both)
#   --load BIN        giong-load (default $LOAD_BIN, else build/bin/load of this checkout)
#   --http BIN        giong's HTTP example (default $HTTP_BIN, else build/bin/http)
#   --conns "LIST"    connection counts (default "1 50 1000")
#   --pipeline D      also a case pipelined D deep (giong-load -P D, wrk with wrk/pipeline.lua)
#                     at --pipeline-conns C connections (default 50); 0: none (default 0)
#   --rounds R        interleaved rounds (default 5)
#   --secs S          measured seconds per run (default 5, whole seconds), each after a warm-up
#   --warmup W        run of W s (default 1) of the same load generator on the same server
#   --server-cpu N    CPU for the servers (default 1); --client-cpu N for the load (default 0)
#   --port-base P     the servers' first port (default 7500; ports in use are skipped)
#   --raw FILE        also write every measurement as tab-separated values
#   --max-other F     a run during which other processes used more than F of a CPU on the two
#   --retries N       CPUs (from /proc/stat) is repeated up to N times (defaults 0.2 and 1);
#                     the quietest try is kept
#   --wait-quiet S    before each run, wait up to S s (default 0) for the two CPUs to be
#                     quieter than --max-other (other sessions' builds and tests)
#   --tables RAW      print the tables of an earlier run's --raw file (nothing is run; the
#                     other options must match that run's)
#   --quick           1 round, 2 s runs, no warm-up
#
# A run fails, loudly (a message at once, a list at the end of the output, exit status 1),
# if its load generator gave no report or counted no request, if giong-load reported any
# error (connect, read, write, timeout, status, length) or a status other than 2xx, or if
# wrk reported socket errors or non-2xx responses; a failed run is not in the tables. Round 1
# also checks that every server sends the reference bodies (curl). LOAD_BENCH_KEEP=1 keeps
# the work directory (server logs, configs, raw tables). Every process is started by this
# script and stopped by its PID (an EXIT trap stops what is left); every run is bounded
# (-d and a timeout of -d + 30 s, request timeouts of 5 s); loopback only.
# Needs taskset, ss, wrk, curl, nginx and h2o (for those servers).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=load_bench
# die, say, the servers under test, their ports, the processes to end, wait_for_quiet
# shellcheck source=bench/load/server_lib.sh
. "$HERE/server_lib.sh"
ROOT=$(cd "$HERE/../.." && pwd)
LOAD=${LOAD_BIN:-$ROOT/build/bin/load}
HTTP=${HTTP_BIN:-$ROOT/build/bin/http}
LUA=$HERE/wrk/pipeline.lua
set_cmdline bench/load/load_bench.sh "$@"
import_fns "$HERE/http_bench.sh" tree cpu_ticks to_us to_bytes parse_wrk check_bodies \
	vals median spread med cell ratio
import_fns "$HERE/https_bench.sh" restart

rounds=5 secs=5 warmup=1 conns_list="1 50 1000" pipeline=0 pipeline_conns=50
server_list="giong nginx h2o" gen_list="giong-load wrk" server_cpu=1 client_cpu=0
port_base=7500 raw_out="" retries=1 max_other=0.2 wait_quiet=0 tables_from=""

while [[ $# -gt 0 ]]; do
	case $1 in
	--servers|--loadgens|--load|--http|--conns|--pipeline|--pipeline-conns)
		[[ $# -ge 2 ]] || die "$1 needs a value" ;;&
	--servers) server_list=$2; shift 2 ;;
	--loadgens) gen_list=$2; shift 2 ;;
	--load) LOAD=$2; shift 2 ;;
	--http) HTTP=$2; shift 2 ;;
	--conns) conns_list=$2; shift 2 ;;
	--pipeline) pipeline=$2; shift 2 ;;
	--pipeline-conns) pipeline_conns=$2; shift 2 ;;
	--quick) rounds=1 secs=2 warmup=0; shift ;;
	--tables) [[ $# -ge 2 ]] || die "$1 needs a value"; tables_from=$2; shift 2 ;;
	--syscalls|--syscall-secs) die "$1: not measured here (http_bench.sh counts system calls)" ;;
	-h|--help) sed -n '3,/^set -euo/{ /^#/p }' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) take_opt "$@" || die "unknown option '$1' (--help)"; shift 2 ;;
	esac
done
for v in rounds secs warmup pipeline pipeline_conns retries wait_quiet server_cpu client_cpu port_base; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "--${v//_/-} takes a whole number"
done
[[ $rounds -ge 1 && $secs -ge 1 ]] || die "--rounds and --secs take at least 1"

# --- cases: CONNS:DEPTH, GET /json ------------------------------------------------------------
cases=()
for c in $conns_list; do
	[[ $c =~ ^[1-9][0-9]*$ ]] || die "--conns: '$c' is not a connection count"
	cases+=("$c:1")
done
[[ $pipeline -gt 1 ]] && cases+=("$pipeline_conns:$pipeline")
[[ ${#cases[@]} -gt 0 ]] || die "no case to run"

gens=()
for g in $gen_list; do
	case $g in
	giong-load) [[ -x $LOAD ]] || die "giong-load '$LOAD' is missing: build it (target load), or --load BIN / LOAD_BIN" ;;
	wrk) command -v wrk >/dev/null || die "wrk is required (apt-get install wrk)" ;;
	*) die "--loadgens: unknown load generator '$g'" ;;
	esac
	gens+=("$g")
done
[[ ${#gens[@]} -gt 0 ]] || die "no load generator to run"
for t in taskset ss curl timeout; do command -v $t >/dev/null || die "$t is required"; done

# --- servers ----------------------------------------------------------------------------------
# the scratch directory, removed at the end (LOAD_BENCH_KEEP=1 keeps it)
make_work load_bench LOAD_BENCH_KEEP
failures=0 failed_runs=()
if [[ -n $tables_from ]]; then
	# --tables RAW: the tables of an earlier run's --raw file, nothing run
	[[ -r $tables_from ]] || die "--tables: cannot read '$tables_from'"
	RAW=$tables_from names=()
	for s in $server_list; do
		awk -F'\t' -v s="$s" 'NR > 1 && $2 == s { f = 1 } END { exit !f }' "$RAW" && names+=("$s")
	done
	rounds=$(awk -F'\t' 'NR > 1 && $1 > r { r = $1 } END { print r + 0 }' "$RAW")
else
names=() cmds=()
for s in $server_list; do
	case $s in
	giong)
		[[ -x $HTTP ]] || die "the HTTP example '$HTTP' is missing: build it (target http), or --http BIN / HTTP_BIN"
		cmds+=("$HTTP --workers 1 --host 127.0.0.1 --port {port}") ;;
	nginx|h2o) http_peer "$s" || continue; cmds+=("$peer_cmd") ;;
	*) die "--servers: unknown server '$s'" ;;
	esac
	names+=("$s")
done
[[ ${#cmds[@]} -gt 0 ]] || die "no server to run"

# Descriptors for 1,000 connections in the load generators and the servers.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
nofile=$(ulimit -n)
for c in "${cases[@]}"; do
	[[ $nofile == unlimited || ${c%:*} -lt $((nofile - 64)) ]] ||
		die "${c%:*} connections need more than ulimit -n $nofile"
done

# the reference bodies check_bodies() compares with
"$HERE/http-peers/make_bodies.sh" "$WORK/ref"

# loadgen_run GEN CONNS DEPTH SECS: runs the load generator, its report (wrk's text,
# giong-load's JSON) into $WORK/run.out, and sets client_us: its user+system CPU over its
# whole run, µs. That is what this shell's reaped children used meanwhile (times before and
# after): the load generator, and the timeout(1) bounding it, which adds next to nothing.
loadgen_run() {
	local url=http://127.0.0.1:$srv_port/json argv lg
	if [[ $1 == wrk ]]; then
		argv=(wrk -t1 -c "$2" -d "${4}s" --timeout 5s --latency)
		[[ $3 -gt 1 ]] && argv+=(-s "$LUA")
		argv+=("$url")
		[[ $3 -gt 1 ]] && argv+=(-- "$3")
	else
		argv=("$LOAD" "$url" -c "$2" -d "$4" -t 1 -P "$3" --timeout 5000 --latency --json)
	fi
	# nothing but builtins from here to the second times: no other child is reaped between
	times >"$WORK/times.0"
	timeout -k 5 $(($4 + 30)) taskset -c "$client_cpu" "${argv[@]}" >"$WORK/run.out" 2>&1 </dev/null &
	lg=$!
	live_pids+=("$lg")
	wait "$lg" || true
	times >"$WORK/times.1"
	forget_pid "$lg"
	# times' second line: the children's user and system time, "XmY.YYYs XmY.YYYs"
	client_us=$(cat "$WORK/times.0" "$WORK/times.1" | awk 'NR == 2 || NR == 4 {
			split($1, u, /[ms]/); split($2, k, /[ms]/); t[NR] = u[1] * 60 + u[2] + k[1] * 60 + k[2] }
		END { printf "%.0f", (t[4] - t[2]) * 1e6 }')
}

# parse_load OUT -> "reqs_per_s requests p50_us p99_us errors" from giong-load's JSON report
# (errors: the sum of its error counts and of its responses whose status is not 2xx); empty
# if there is no report or it counted no request
parse_load() {
	awk 'function num(key,   s) {
			if (!match(j, "\"" key "\":[0-9.]+")) return ""
			s = substr(j, RSTART, RLENGTH); sub(/.*:/, "", s); return s
		}
		# obj_sum KEY NOT2XX: the counts of the object KEY, only keys not 2xx if NOT2XX
		function obj_sum(key, not2xx,   s, n, i, kv, p, k, t) {
			if (!match(j, "\"" key "\":\\{[^}]*\\}")) return 1 # no such object: an error
			s = substr(j, RSTART + length(key) + 4, RLENGTH - length(key) - 5)
			n = split(s, kv, ",")
			for (i = 1; i <= n; i++) {
				split(kv[i], p, ":"); k = p[1]; gsub(/"/, "", k)
				if (!not2xx || k !~ /^2[0-9][0-9]$/) t += p[2]
			}
			return t + 0
		}
		/^\{"url":/ { j = $0 }
		END {
			if (j == "" || num("requests") + 0 == 0) { print ""; exit }
			printf "%s %s %.1f %.1f %d\n", num("requests_per_sec"), num("requests"),
				num("p50") / 1000, num("p99") / 1000, obj_sum("errors", 0) + obj_sum("status", 1)
		}' <<<"$1"
}

# parse_run GEN DEPTH OUT -> "reqs_per_s requests p50_us p99_us errors", or empty
parse_run() {
	local p
	if [[ $1 == wrk ]]; then
		p=$(parse_wrk "$3")
		[[ -n $p ]] || return 0
		# shellcheck disable=SC2086
		set -- "$1" "$2" $p
		# wrk's latencies are wrong when pipelining: its coordinated-omission correction
		# takes one response per batch (http_bench.sh shows none either)
		if [[ $2 -gt 1 ]]; then echo "$3 $4 NA NA $8"; else echo "$3 $4 $5 $6 $8"; fi
	else
		parse_load "$3"
	fi
}

# fail MESSAGE [OUT]: a failed run, said now and listed at the end; the tail of OUT with it
fail() {
	say "FAILED: $1"
	[[ -n ${2:-} ]] && tail -5 <<<"$2" | sed 's/^/    /' >&2
	failed_runs+=("$1")
	failures=$((failures + 1))
}

RAW=$WORK/raw.tsv
printf 'round\tserver\tcase\tloadgen\treqs_per_s\trequests\tload_cpu_us_per_req\tserver_cpu_us_per_req\tp50_us\tp99_us\tload_util\tserver_util\tother_load\ttries\n' >"$RAW"

# measure IDX CASE GEN: one run of GEN on the running server (retried when disturbed)
measure() {
	local i=$1 cs=$2 conns=${2%:*} depth=${2#*:} gen=$3 out parsed best="" best_other=99 try
	local what t0 t1 b0 b1 c0 c1 pids other lcpu scpu lutil sutil cticks dt
	what="round $round ${names[$i]} c=$conns d=$depth $gen"
	for ((try = 1; try <= retries + 1; try++)); do
		wait_for_quiet
		[[ $warmup -gt 0 ]] && loadgen_run "$gen" "$conns" "$depth" "$warmup"
		pids=$(tree "$srv_pid")
		c0=$(cpu_ticks "$pids") b0=$(busy_ticks) t0=$(date +%s.%N)
		loadgen_run "$gen" "$conns" "$depth" "$secs"
		t1=$(date +%s.%N) b1=$(busy_ticks) c1=$(cpu_ticks "$pids")
		out=$(<"$WORK/run.out")
		parsed=$(parse_run "$gen" "$depth" "$out")
		if [[ -z $parsed ]]; then
			fail "$what: no report, or no request counted" "$out"
			return 0
		fi
		# shellcheck disable=SC2086
		set -- $parsed
		if [[ $5 -ne 0 ]]; then
			if [[ $gen == wrk ]]; then
				fail "$what: wrk saw socket errors or non-2xx responses:$(grep -E 'errors|Non-2xx' <<<"$out" | tr -s ' \n' ' ')"
			else
				fail "$what: giong-load saw errors or non-2xx responses: $(grep -o '"status":{[^}]*},"errors":{[^}]*}' <<<"$out")"
			fi
			return 0
		fi
		dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
		cticks=$(awk -v u="$client_us" -v hz="$HZ" 'BEGIN { printf "%.3f", u / 1e6 * hz }')
		lcpu=$(awk -v u="$client_us" -v r="$2" 'BEGIN { printf "%.3f", u / r }')
		scpu=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v r="$2" 'BEGIN { printf "%.3f", c / hz * 1e6 / r }')
		lutil=$(awk -v u="$client_us" -v t="$dt" 'BEGIN { printf "%.2f", u / 1e6 / t }')
		sutil=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v t="$dt" 'BEGIN { printf "%.2f", c / hz / t }')
		other=$(awk -v bt=$((b1 - b0)) -v c=$((c1 - c0)) -v w="$cticks" -v hz="$HZ" -v t="$dt" \
			'BEGIN { o = (bt - c - w) / hz / t; if (o < 0) o = 0; printf "%.2f", o }')
		if awk -v a="$other" -v b="$best_other" 'BEGIN { exit !(a < b) }'; then
			best="$1 $2 $lcpu $scpu $3 $4 $lutil $sutil" best_other=$other
		fi
		awk -v a="$other" -v m="$max_other" 'BEGIN { exit !(a <= m) }' && break
		[[ $try -le $retries ]] && say "$what: other load $other, again"
	done
	((try > retries + 1)) && try=$((retries + 1))
	# shellcheck disable=SC2086
	set -- $best
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "${names[$i]}" \
		"$cs" "$gen" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$best_other" "$try" >>"$RAW"
	say "$what: $1 req/s, load $3 us/req, server $4 us/req, p50 $5 us, other load $best_other"
}

nsrv=${#cmds[@]} ngen=${#gens[@]} ncase=${#cases[@]}
est=$(awk -v r="$rounds" -v s="$nsrv" -v c="$ncase" -v g="$ngen" -v d="$secs" -v w="$warmup" \
	'BEGIN { printf "%d", r * s * (c * g * (d + w + 0.5) + 1) }')
say "$nsrv servers x $ncase cases x $ngen load generators x $rounds rounds, ${secs}s each" \
	"(+${warmup}s warm-up); about ${est}s (more when runs are retried)"

for ((round = 1; round <= rounds; round++)); do
	for ((k = 0; k < nsrv; k++)); do
		i=$(((k + round - 1) % nsrv)) # rotate the order so no server always runs first
		start_server "$i"
		[[ $round -eq 1 ]] && check_bodies "${names[$i]}"
		for c in "${cases[@]}"; do
			for ((m = 0; m < ngen; m++)); do
				gen=${gens[$(((m + round - 1) % ngen))]} # and no load generator
				measure "$i" "$c" "$gen"
				kill -0 "$srv_pid" 2>/dev/null || {
					failed_runs+=("round $round: server ${names[$i]} died (c=${c%:*} d=${c#*:} $gen)")
					restart "$i" # said, counted in failures and started again
				}
			done
		done
		stop_server "$srv_pid"
	done
done

fi # not --tables

# --- tables -----------------------------------------------------------------------------------
# KEYED: the raw rows with the case and the load generator in one key, CONNS:DEPTH/GEN
# (column 3, for vals()); RATIOS: per round, server and case, giong-load's load CPU per
# request and requests/s over wrk's (both ran in that round on that server process)
KEYED=$WORK/keyed.tsv RATIOS=$WORK/ratios.tsv
awk -F'\t' -v OFS='\t' 'NR > 1 { $3 = $3 "/" $4 } 1' "$RAW" >"$KEYED"
awk -F'\t' -v OFS='\t' 'NR == 1 { print "round", "server", "case", "load_cpu_ratio", "rps_ratio"; next }
	{ k = $1 SUBSEP $2 SUBSEP $3; cpu[k, $4] = $7; rps[k, $4] = $5; keys[k] = 1 }
	END {
		for (k in keys) {
			if (!((k, "giong-load") in cpu) || !((k, "wrk") in cpu)) continue
			if (cpu[k, "wrk"] <= 0 || rps[k, "wrk"] <= 0) continue
			split(k, a, SUBSEP)
			printf "%s\t%s\t%s\t%.4f\t%.4f\n", a[1], a[2], a[3],
				cpu[k, "giong-load"] / cpu[k, "wrk"], rps[k, "giong-load"] / rps[k, "wrk"]
		}
	}' "$RAW" >"$RATIOS"
[[ -n $raw_out ]] && { cp "$RAW" "$raw_out"; cp "$RATIOS" "${raw_out%.tsv}.ratios.tsv"; }

have_ratio=0
[[ " ${gens[*]} " == *" giong-load "* && " ${gens[*]} " == *" wrk "* ]] && have_ratio=1
# label CONNS:DEPTH -> the case as the tables name it
label() {
	local l="/json × ${1%:*}"
	[[ ${1#*:} -gt 1 ]] && l+=" pipelined ${1#*:}"
	echo "$l"
}
load_rev=$(git -C "$(dirname "$LOAD")" rev-parse --short HEAD 2>/dev/null) || load_rev="?"
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo
echo "Command: \`$CMDLINE\`"
echo
gen_desc=""
for g in "${gens[@]}"; do
	[[ -n $gen_desc ]] && gen_desc+=", "
	if [[ $g == wrk ]]; then
		gen_desc+="\`wrk -t1\` ($(wrk -v 2>&1 | awk 'NR == 1 { print $2 }' || true), --timeout 5s)"
	else
		gen_desc+="\`giong-load -t 1\` ($LOAD, in a checkout at $load_rev; --timeout 5000)"
	fi
done
echo "Machine: $(nproc) CPUs ($cpu_model), kernel $(uname -r); servers on CPU $server_cpu, the" \
	"load generator on CPU $client_cpu: $gen_desc; GET /json; $rounds round(s) of ${secs} s runs, each after a ${warmup} s warm-up run of" \
	"the same load generator on the same server; medians (min–max over the rounds)." \
	"$(date -u '+%Y-%m-%d %H:%M UTC')."
if [[ $have_ratio -eq 1 ]]; then
	echo
	echo "The load generator's CPU per request, giong-load ÷ wrk (each round's ratio, same" \
		"server process; medians (min–max); issue 15's target: at most 0.5 at 50 connections):"
	echo
	hdr="| case" sep="|---"
	for n in "${names[@]}"; do hdr+=" | $n" sep+="|---:"; done
	echo "$hdr |"
	echo "$sep|"
	for c in "${cases[@]}"; do
		row="| $(label "$c")"
		for n in "${names[@]}"; do row+=" | $(cell "$RATIOS" "$n" 3 "$c" 4 '%.2f')"; done
		echo "$row |"
	done
fi
echo
echo "| case | server | load generator | load CPU µs/req | × wrk | req/s | × wrk | p50 µs | p99 µs" \
	"| server CPU µs/req | load CPU | server CPU | other load |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
	for n in "${names[@]}"; do
		for g in "${gens[@]}"; do
			rc="–" rr="–"
			if [[ $have_ratio -eq 1 && $g == giong-load ]]; then
				rc=$(cell "$RATIOS" "$n" 3 "$c" 4 '%.2f') rr=$(cell "$RATIOS" "$n" 3 "$c" 5 '%.2f')
			fi
			row="| $(label "$c") | $n | $g | $(cell "$KEYED" "$n" 3 "$c/$g" 7 '%.2f') | $rc"
			row+=" | $(cell "$KEYED" "$n" 3 "$c/$g" 5 '%.0f') | $rr"
			row+=" | $(cell "$KEYED" "$n" 3 "$c/$g" 9 '%.0f') | $(cell "$KEYED" "$n" 3 "$c/$g" 10 '%.0f')"
			row+=" | $(cell "$KEYED" "$n" 3 "$c/$g" 8 '%.2f')"
			row+=" | $(med "$KEYED" "$n" 3 "$c/$g" 11) | $(med "$KEYED" "$n" 3 "$c/$g" 12)"
			row+=" | $(med "$KEYED" "$n" 3 "$c/$g" 13) |"
			echo "$row"
		done
	done
done
echo
echo "load CPU µs/req: the load generator's user+system time over its whole run (the rusage"\
	"of the reaped process) over the requests its report counts; server CPU µs/req:"\
	"utime+stime of the server's processes (/proc/PID/stat) over the run, over the same count;"\
	"× wrk: giong-load's figure over wrk's, per round; load CPU, server CPU: fraction of one"\
	"CPU over the run; other load: CPU used by other processes on the two CPUs (a run above"\
	"$max_other was retried up to $retries time(s), the quietest kept). Pipelined: no latency"\
	"for wrk (it measures one per batch, then corrects them as if each were one request);"\
	"giong-load's is per batch, from its write."
if [[ $failures -gt 0 ]]; then
	echo
	echo "**FAILED: $failures failure(s).** Runs not in the tables:"
	echo
	for f in "${failed_runs[@]}"; do echo "- $f"; done
	[[ $failures -gt ${#failed_runs[@]} ]] && echo "- and $((failures - ${#failed_runs[@]}))" \
		"body check(s): a server sent other bytes than the reference (the messages on stderr)"
	say "$failures failure(s); see the messages above"
	exit 1
fi
