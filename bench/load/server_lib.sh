# bench/load/server_lib.sh - what the load benchmarks (echo_bench.sh, http_bench.sh,
# https_bench.sh, serve_bench.sh, load_bench.sh) share: starting and stopping the servers
# under test pinned to a CPU, their ports, the processes left to end, waiting for the
# machine to be quiet, taking functions from another script, the test certificate, the HTTP
# peers' commands. Sourced, not run.
#
# The sourcing script sets: BENCH (its name, for messages), HERE (bench/load), WORK (a
# scratch directory), cmds[] and names[] (the servers' commands, {port} standing for the port, and names),
# port_base, server_cpu, client_cpu, wait_quiet (seconds, 0: don't wait) and max_other
# (the two CPUs' busy share, from 0 to 2, below which the machine counts as quiet).

die() { echo "$BENCH: $*" >&2; exit 2; }
say() { echo "$BENCH: $*" >&2; }

HZ=$(getconf CLK_TCK)

# The processes we started and have not reaped: ended (TERM, then KILL) by kill_live.
live_pids=()
kill_live() {
	local p
	for p in "${live_pids[@]}"; do
		kill -0 "$p" 2>/dev/null && { kill -TERM "$p" 2>/dev/null || true; }
	done
	for p in "${live_pids[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -0 "$p" 2>/dev/null && { kill -KILL "$p" 2>/dev/null || true; }
	done
	return 0 # (not the status of the last kill -0: under set -e it would end the EXIT trap)
}

forget_pid() {
	local p keep=()
	for p in "${live_pids[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
	live_pids=("${keep[@]}")
}

port_free() { ! ss -Htan "sport = :$1" | grep -q .; }

# resolve_cmd IDX -> sets srv_cmd and srv_port
resolve_cmd() {
	local cmd=${cmds[$1]}
	: "${next_port:=$port_base}" # the options are read by now
	if [[ $cmd == *"{port}"* ]]; then
		while ! port_free "$next_port"; do next_port=$((next_port + 1)); done
		srv_port=$next_port
		next_port=$((next_port + 1))
		srv_cmd=${cmd//\{port\}/$srv_port}
	elif [[ $cmd =~ (--port[=[:space:]]+|-p[[:space:]]+)([0-9]+) ]]; then
		srv_port=${BASH_REMATCH[2]}
		srv_cmd=$cmd
	else
		die "cannot tell the port of '$cmd': put {port} or --port N in it"
	fi
}

# start_server IDX -> sets srv_pid (the server's own PID: taskset execs it). Returns once
# the port listens, and 0.2 s more (a server with several processes, nginx, forks its
# worker after its master listens).
start_server() {
	local log=$WORK/server.${names[$1]}.log argv
	resolve_cmd "$1"
	port_free "$srv_port" || die "port $srv_port is already in use"
	eval "argv=($srv_cmd)"
	taskset -c "$server_cpu" "${argv[@]}" >>"$log" 2>&1 &
	srv_pid=$!
	live_pids+=("$srv_pid")
	for _ in $(seq 100); do
		kill -0 "$srv_pid" 2>/dev/null || { cat "$log" >&2; die "server '$srv_cmd' exited at start"; }
		ss -Hltn "sport = :$srv_port" | grep -q . && { sleep 0.2; return 0; }
		sleep 0.05
	done
	die "server '$srv_cmd' does not listen on port $srv_port after 5 s"
}

# http_peer NAME: sets peer_cmd, the command of http-peers/NAME.sh (nginx, h2o: the HTTP
# benchmarks' peers) with {port} and its directory in WORK; false, said, if NAME is not installed
http_peer() {
	command -v "$1" >/dev/null || { say "$1 not installed, skipped"; return 1; }
	# shellcheck disable=SC2034 # read by the caller
	peer_cmd="$HERE/http-peers/$1.sh {port} $WORK/$1"
}

# giong_peer NAME PROGRAM: sets peer_cmd, the command of giong's PROGRAM (build/bin/http,
# build/bin/echo; GIONG_BIN overrides the directory) as the built-in peer NAME: "giong" on the
# tier it picks (io_uring), "giong-epoll" with GIONG_RING_TIER=epoll (issue 27: both tiers in
# one interleaved run). False, said, if the program is not built.
giong_peer() {
	local bin=${GIONG_BIN:-$ROOT/build/bin}/$2 envs=""
	[[ -x $bin ]] || { say "$bin is missing (build the project), $1 skipped"; return 1; }
	[[ $1 == giong-epoll ]] && envs="env GIONG_RING_TIER=epoll "
	# shellcheck disable=SC2034 # read by the caller
	peer_cmd="$envs$bin --workers 1 --port {port}"
}

# add_peers LIST: the built-in peers named in LIST go before cmds[] and names[], in that
# order; peer_of NAME (the sourcing script's) sets peer_cmd, false to skip NAME. Then every
# server must have a name.
add_peers() {
	local p i pc=() pn=()
	for p in $1; do
		peer_of "$p" || continue
		pc+=("$peer_cmd")
		pn+=("$p")
	done
	cmds=("${pc[@]}" "${cmds[@]}")
	names=("${pn[@]}" "${names[@]}")
}

# check_servers: there is a server, and every one has a name
check_servers() {
	local i
	[[ ${#cmds[@]} -gt 0 ]] || die "no server to run"
	for i in "${!names[@]}"; do
		[[ -n ${names[$i]} ]] || die "--server '${cmds[$i]}' has no --name"
	done
}

stop_server() {
	local pid=$1 rc=0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		say "server $pid ignored SIGTERM for 5 s, killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || rc=$?
	forget_pid "$pid"
	[[ $rc -eq 0 ]] || say "server $pid exited with status $rc"
}

# Busy ticks of the server's and the client's CPUs so far (/proc/stat).
busy_ticks() {
	awk -v a="cpu$server_cpu" -v b="cpu$client_cpu" \
		'$1 == a || $1 == b { t += $2 + $3 + $4 + $7 + $8 } END { print t }' /proc/stat
}

# listen_drops: the system's count of connections its listen queues dropped (TcpExt
# ListenDrops in /proc/net/netstat: it includes ListenOverflows, a full accept queue). System
# wide: on loopback with only our servers listening, the server's; 0 where it is unreadable.
listen_drops() {
	awk '$1 == "TcpExt:" { if (!n) { for (i = 2; i <= NF; i++) if ($i == "ListenDrops") c = i; n = 1 }
		else v = $c } END { print v + 0 }' /proc/net/netstat 2>/dev/null || echo 0
}

# wait_for_quiet: until the two CPUs together are busy less than max_other (nothing of ours
# runs now, apart from an idle server: it is all others' load), for at most wait_quiet s
wait_for_quiet() {
	local t0 j0 j1 load=NA
	[[ $wait_quiet == 0 ]] && return 0
	t0=$SECONDS
	while ((SECONDS - t0 < ${wait_quiet%.*})); do
		j0=$(busy_ticks)
		sleep 0.5
		j1=$(busy_ticks)
		load=$(awk -v a="$j0" -v b="$j1" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) / hz / 0.5 }')
		awk -v l="$load" -v m="$max_other" 'BEGIN { exit !(l <= m) }' && return 0
	done
	say "CPUs still busy ($load) after ${wait_quiet}s; measuring anyway"
}

# import_fns FILE NAME...: define the named functions of FILE here. A function starts with a
# line "NAME() {" and goes on over the lines indented with a tab, up to a "}" of its own.
# (https_bench.sh and serve_bench.sh take http_bench.sh's measuring functions this way.)
import_fns() {
	local file=$1 f
	shift
	eval "$(awk -v want=" $* " '
		/^[a-z_]+\(\) \{/ { n = substr($0, 1, index($0, "(") - 1); on = index(want, " " n " ") > 0
			if (on) print; next }
		on && /^\t/ { print; next }
		on && /^\}$/ { print }
		{ on = 0 }' "$file")"
	for f in "$@"; do
		declare -F "$f" >/dev/null || die "$file no longer defines $f()"
	done
}

# make_cert DIR: DIR/cert.pem and DIR/key.pem, the certificate every HTTPS server of the
# benchmarks presents: ECDSA P-256, self-signed for localhost and 127.0.0.1, made now.
make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
		-subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
		-keyout "$1/key.pem" -out "$1/cert.pem" 2>"$1/openssl.log" ||
		{ cat "$1/openssl.log" >&2; die "openssl could not make the certificate"; }
}

# set_cmdline SCRIPT ARGS...: CMDLINE, the command as run (empty words and words with spaces
# quoted), for the output
set_cmdline() {
	local a
	CMDLINE=$1
	shift
	for a in "$@"; do
		if [[ -z $a || $a =~ [[:space:]] ]]; then CMDLINE+=" \"$a\""; else CMDLINE+=" $a"; fi
	done
}

# take_opt OPTION VALUE: sets the variable of an option every load benchmark takes (--rounds,
# --secs, --warmup, --syscalls, --syscall-secs, --server-cpu, --client-cpu, --port-base,
# --raw, --retries, --max-other, --wait-quiet: rounds ... wait_quiet, sys_secs, raw_out);
# false for another option. The caller shifts 2.
take_opt() {
	local v
	case $1 in
	--raw) v=raw_out ;;
	--syscall-secs) v=sys_secs ;;
	--rounds|--secs|--warmup|--syscalls|--server-cpu|--client-cpu|--port-base|--retries|--max-other|--wait-quiet)
		v=${1#--} v=${v//-/_} ;;
	*) return 1 ;;
	esac
	[[ $# -ge 2 ]] || die "$1 needs a value"
	printf -v "$v" '%s' "$2"
}

# perf_syscalls: true if perf can count system calls (raw_syscalls:sys_enter) here
perf_syscalls() {
	command -v perf >/dev/null &&
		perf stat -x, -e raw_syscalls:sys_enter -- true 2>&1 | grep -q '^[0-9]'
}

# make_work NAME KEEP: WORK, a new scratch directory /tmp/NAME.XXXXXX; on exit the processes
# still live are ended (kill_live) and WORK removed, unless the variable named KEEP is set
make_work() {
	WORK=$(mktemp -d "/tmp/$1.XXXXXX")
	keep_var=$2
	trap 'kill_live; if [[ -n ${!keep_var:-} ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi' EXIT
	trap 'exit 130' INT TERM
}
