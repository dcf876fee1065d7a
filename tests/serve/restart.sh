#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# restart.sh SERVE_BIN - giong-serve restarts without failing a request: steady clients (a
# new connection per request) run while a second server starts on the same port
# (SO_REUSEPORT) and the first one gets SIGTERM; every request must succeed, and both servers
# must have answered some. Runs in a network namespace of its own (unshare -rn: no root
# needed where user namespaces are allowed) with net.ipv4.tcp_migrate_req = 1, the Linux
# 5.14 setting that moves the connections queued on a closing listener to another one of
# its port (docs/serve.md, "Running it as a service"). Skips (77) on a kernel without that
# setting, or without namespaces, or without curl. Every wait is bounded; every process is
# stopped by its PID.
set -u
bin=$1
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
if [ -z "${GIONG_RESTART_IN_NS:-}" ]; then
	if ! unshare -rn true 2>/dev/null; then
		echo "SKIP: no network namespace (unshare -rn: user namespaces are off in this kernel)"
		exit 77
	fi
	exec unshare -rn env GIONG_RESTART_IN_NS=1 bash "$0" "$@"
fi
[ -e /proc/sys/net/ipv4/tcp_migrate_req ] ||
	{ echo "SKIP: the kernel has no net.ipv4.tcp_migrate_req (Linux 5.14+)"; exit 77; }
ip link set lo up || { echo "FAIL: cannot bring up lo in the namespace"; exit 1; }
echo 1 >/proc/sys/net/ipv4/tcp_migrate_req || { echo "FAIL: cannot set tcp_migrate_req"; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$work"/*.err; do echo "--- $f"; cat "$f"; done
	exit 1
}

mkdir "$work/root"
head -c 5000 /dev/urandom >"$work/root/file.bin"
port=8080 # a namespace of its own: the port is free

# start NAME: a server on the port, logging requests; waits until it listens (20 s at most:
# a sanitizer's start-up on a busy machine; it stops early if the server died).
start() {
	"$bin" "$work/root" --port $port --bind 127.0.0.1 --workers 2 --log --grace-ms 3000 --reuse-port \
		>"$work/$1.log" 2>"$work/$1.err" &
	eval "pid_$1=$!"
	pids+=($!)
	for _ in $(seq 200); do
		grep -q "giong-serve: serving" "$work/$1.err" && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.1
	done
	fail "server $1 did not start"
}
# answered NAME: how many requests server NAME has answered 200 (its --log lines).
answered() { grep -c '" 200 ' "$work/$1.log"; }
# until_s N CMD...: polls CMD every 0.1 s for N s at most; its status is CMD's last.
until_s() {
	local n=$1 i
	shift
	for ((i = 0; i < n * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

start old
t0=$SECONDS
# Four clients, each a loop of single requests on new connections, until told to stop (by
# $work/stop: once the new server has answered and the old one is gone), 60 s at most.
for c in 1 2 3 4; do
	(
		end=$((SECONDS + 60))
		while [ ! -e "$work/stop" ] && [ $SECONDS -lt $end ]; do
			curl -s -o /dev/null -w '%{http_code} %{size_download}\n' --max-time 5 \
				"http://127.0.0.1:$port/file.bin" || echo "curl-error $?"
		done >"$work/client$c.out"
	) &
	pids+=($!)
	clients+=" $!"
done
until_s 20 eval '[ "$(answered old)" -gt 0 ]' || fail "the old server answered no client in 20 s"
sleep 0.5
start new
sleep 0.5
kill -TERM "$pid_old"
until_s 10 eval '! kill -0 "$pid_old" 2>/dev/null' || fail "the old server did not stop within 10 s"
wait "$pid_old"
rc=$?
[ $rc -eq 0 ] || fail "the old server exited with $rc"
# The clients go on until the new server has answered (alone on the port now: at once,
# unless it is slow), for 4 s in all and until they made 60 requests: a count, not a time,
# so that a loaded machine (a curl process per request) still makes enough of them; 30 s
# at most.
made() { cat "$work"/client*.out | wc -l; }
until_s 20 eval '[ "$(answered new)" -gt 0 ]'
while [ $((SECONDS - t0)) -lt 4 ] || { [ "$(made)" -lt 60 ] && [ $((SECONDS - t0)) -lt 30 ]; }; do
	sleep 0.1
done
touch "$work/stop"
for c in $clients; do wait "$c"; done

total=$(made)
good=$(cat "$work"/client*.out | grep -c '^200 5000$')
old=$(answered old)
new=$(answered new)
[ "$total" -gt 50 ] || fail "only $total requests were made"
[ "$good" -eq "$total" ] || {
	grep -v '^200 5000$' "$work"/client*.out | sort | uniq -c
	fail "$((total - good)) of $total requests failed across the restart"
}
[ "$old" -gt 0 ] && [ "$new" -gt 0 ] || fail "old answered $old, new $new: both should have"
kill -TERM "$pid_new"
wait "$pid_new" || fail "the new server did not stop cleanly"
echo "ok: $total requests across a restart, none failed (old server $old, new $new)"
