#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# syscall_mix.sh: which system calls an HTTP server makes per request, one server at a time:
# each is started pinned to CPU 1, `wrk -t1` (CPU 0) loads it for a warm-up second and then
# SECS more while `perf stat -e syscalls:sys_enter_<name>` counts over the server's process;
# prints a markdown table, a row per server, a column per call (those no server made left
# out), counts divided by wrk's requests. Shows where a gap in CPU per request comes from
# (http_bench.sh counts only the total). With --counters also the CPU cycles and
# instructions per request (user and kernel, the server's process only: unlike its CPU
# time, they do not move much with what the machine's other guests do).
#
# usage: bench/load/syscall_mix.sh [--path P] [--conns C] [--secs S] [--rounds R]
#                                  [--counters] NAME=CMD...
#   CMD is the server's command with {port} for its port, e.g.
#   bench/load/syscall_mix.sh epoll="build/bench-load/epoll_http {port}" \
#       giong-epoll="env GIONG_RING_TIER=epoll build/bin/http --workers 1 --port {port}"
#   --path P   the path requested (default /json); --conns C connections (default 50);
#   --secs S   counted seconds (default 2); --rounds R: R interleaved rounds (the servers'
#              order rotating), medians (default 1); --counters: cycles and instructions
# Loopback only; every server is stopped by its PID (SIGTERM, then SIGKILL); every run is
# bounded by wrk's -d and timeout.
set -euo pipefail
path=/json conns=50 secs=2 port=7790 rounds=1 counters=0
while [[ $# -gt 0 && $1 == --* ]]; do
	case $1 in
	--path) path=$2; shift 2 ;;
	--conns) conns=$2; shift 2 ;;
	--secs) secs=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--counters) counters=1; shift ;;
	*) echo "syscall_mix: unknown option $1" >&2; exit 2 ;;
	esac
done
[[ $# -gt 0 ]] || { sed -n 3,23p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "syscall_mix: --rounds takes 1 to 99" >&2; exit 2; }
for t in perf wrk taskset ss; do
	command -v $t >/dev/null || { echo "syscall_mix: $t is required" >&2; exit 2; }
done
calls="read readv recvfrom recvmsg write writev sendto sendmsg sendfile64 splice epoll_wait
	epoll_pwait epoll_pwait2 epoll_ctl io_uring_enter accept4 close futex poll ppoll fcntl"
events=raw_syscalls:sys_enter
for c in $calls; do events+=",syscalls:sys_enter_$c"; done
[[ $counters -eq 1 ]] && events="cycles,instructions,$events"
tmp=$(mktemp -d /tmp/syscall_mix.XXXXXX)
srv=""
trap '[[ -n $srv ]] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT

specs=("$@")
for ((round = 1; round <= rounds; round++)); do
for ((k = 0; k < ${#specs[@]}; k++)); do
	spec=${specs[$(((k + round - 1) % ${#specs[@]}))]}
	name=${spec%%=*} cmd=${spec#*=}
	while ss -Htan "sport = :$port" | grep -q .; do port=$((port + 1)); done
	eval "argv=(${cmd//\{port\}/$port})"
	# shellcheck disable=SC2154 # argv is set by the eval
	taskset -c 1 "${argv[@]}" >"$tmp/$name.log" 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.05
	done
	sleep 0.2
	url=http://127.0.0.1:$port$path
	timeout 30 taskset -c 0 wrk -t1 -c "$conns" -d 1s "$url" >/dev/null 2>&1 || true
	taskset -c 0 perf stat -x, -o "$tmp/$name.perf" -e "$events" -p "$srv" >/dev/null 2>&1 &
	tool=$!
	sleep 0.5
	timeout $((secs + 30)) taskset -c 0 wrk -t1 -c "$conns" -d "${secs}s" "$url" >"$tmp/$name.wrk" 2>&1 || true
	kill -INT "$tool" 2>/dev/null || true
	wait "$tool" 2>/dev/null || true
	kill -TERM "$srv" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	srv=""
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$tmp/$name.wrk")
	[[ -n $reqs && $reqs -gt 0 ]] || { echo "syscall_mix: $name: wrk failed" >&2; exit 1; }
	awk -F, -v n="$name" -v r="$reqs" '!/^#/ && $3 != "" && $1 ~ /^[0-9]/ { e = $3;
		sub(/^.*:(sys_enter_)?/, "", e); sub(/:.*/, "", e); printf "%s %s %.4f\n", n, e, $1 / r }' \
		"$tmp/$name.perf" >>"$tmp/all"
	port=$((port + 1))
done
done

echo "System calls per request, \`GET $path\` × $conns connections, ${secs} s after a 1 s warm-up" \
	"(perf stat -e syscalls:sys_enter_*), medians of $rounds round(s), $(date -u '+%Y-%m-%d %H:%M UTC'):"
echo
# median of each server and event over the rounds
sort -k1,1 -k2,2 -k3,3g "$tmp/all" | awk '
	function flush() { print last, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2); n = 0 }
	{ k = $1 " " $2; if (k != last && last != "") flush(); last = k; v[++n] = $3 }
	END { if (n) flush() }' >"$tmp/med"
# the columns in perf's order; a call no server made left out
order=$(awk '!seen[$2]++ { print $2 }' "$tmp/all" | paste -sd' ')
awk -v names="$(printf '%s\n' "$@" | sed 's/=.*//' | paste -sd' ')" -v order="$order" '
	{ v[$1, $2] = $3; if ($3 > 0.0005) used[$2] = 1 }
	END {
		k = split(order, col, " "); h = "| server"; s = "|---"
		for (i = 1; i <= k; i++) if (col[i] in used) {
			h = h " | " (col[i] == "sys_enter" ? "all calls" : col[i]); s = s "|---:" }
		print h " |"; print s "|"
		n = split(names, nm, " ")
		for (j = 1; j <= n; j++) {
			row = "| " nm[j]
			for (i = 1; i <= k; i++) if (col[i] in used) {
				x = v[nm[j], col[i]] + 0
				row = row " | " (x >= 100 ? sprintf("%.0f", x) : sprintf("%.3f", x)) }
			print row " |"
		}
	}' "$tmp/med"
