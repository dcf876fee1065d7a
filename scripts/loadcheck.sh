#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# loadcheck.sh - the load check of the echo example (build/bin/echo), or with --http of the
# HTTP example (build/bin/http), loopback only.
#
#   scripts/loadcheck.sh [--http]   (environment: BIN, PORT, HOLD, TOTAL, KILLS,
#                                  CONCURRENT, SOURCES, LOAD_SECONDS, RSS_SLACK_MIB)
#
#  1. raises the soft descriptor limit to the hard one (ulimit -n; the
#     server and the client inherit it) and starts
#     build/bin/echo (or build/bin/http) --host 127.0.0.1 --port $PORT --workers 2;
#  2. measures the server's idle descriptor count (ls /proc/PID/fd | wc -l) and its
#     resident memory (VmRSS);
#  3. hold: build/bin/churn opens $HOLD (5,000) connections at once and checks
#     an echo on each (--http: a POST /echo answered on each, and the connection kept
#     alive, idle); with all of them open the server must hold at least
#     idle + $HOLD descriptors; then the client is killed with SIGKILL;
#  4. churn: $TOTAL (250,000) connections opened and closed, at most
#     $CONCURRENT at a time, within $LOAD_SECONDS (120 s); the client is
#     killed with SIGKILL $KILLS (4) times at random moments (after a random
#     50..100% of a 1/($KILLS+1) share of the total) and restarted for
#     the connections still to do (counted from its last progress line;
#     what a killed client had in flight is not counted, so at least $TOTAL
#     are opened). Most connections end with SO_LINGER {1, 0} (a reset, no
#     TIME_WAIT); the 10% that close with a FIN are spread over $SOURCES
#     source addresses 127.0.0.1 .. 127.0.0.$SOURCES, so TIME_WAIT never
#     exhausts the ephemeral ports;
#     (--http: each connection is a POST /echo of 1..64 bytes, checked byte for byte);
#  5. after the hold, after each kill and after the churn, the server must be up and its
#     descriptor count back to idle within 20 s; with --http its resident memory too:
#     at most the idle figure measured after the hold (the first time the server has
#     held $HOLD connections: what its allocator keeps from then on is its working
#     set) plus 10% and RSS_SLACK_MIB (8) MiB; each figure is printed;
#  6. SIGINT must stop the server with exit code 0 within 15 s.
#
# Prints PASS or FAIL (with the reason) and exits 0 or 1.
set -u

MODE=echo
case "${1:-}" in
--http) MODE=http ;;
"") ;;
*) echo "usage: scripts/loadcheck.sh [--http]" >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
PORT=${PORT:-7400}
HOLD=${HOLD:-5000}
TOTAL=${TOTAL:-250000}
KILLS=${KILLS:-4}
CONCURRENT=${CONCURRENT:-512}
SOURCES=${SOURCES:-8}
LOAD_SECONDS=${LOAD_SECONDS:-120}
THREADS=${THREADS:-4}
RSS_SLACK_MIB=${RSS_SLACK_MIB:-8}
if [ "$MODE" = http ]; then
	SERVER=http READY="HTTP on" CHURN_MODE=--http
else
	SERVER=echo READY=listening CHURN_MODE=
fi

WORK=$(mktemp -d /tmp/loadcheck.XXXXXX)
SRV=
CL=

log() { echo "loadcheck: $*"; }

cleanup() {
	[ -n "$CL" ] && kill -9 "$CL" 2>/dev/null && wait "$CL" 2>/dev/null
	if [ -n "$SRV" ] && kill -0 "$SRV" 2>/dev/null; then
		kill -9 "$SRV" 2>/dev/null
		wait "$SRV" 2>/dev/null
	fi
	CL=
	SRV=
}

fail() {
	log "$*"
	if [ -f "$WORK/server.log" ]; then
		log "server log (last lines):"
		tail -5 "$WORK/server.log" | sed 's/^/    /'
	fi
	cleanup
	log "logs in $WORK"
	echo "loadcheck: FAIL"
	exit 1
}

trap 'fail "interrupted"' INT TERM

fdcount() { ls "/proc/$SRV/fd" 2>/dev/null | wc -l; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SRV/status" 2>/dev/null; }
RSS_IDLE=
RSS_LIMIT=

# With --http: the server's resident memory back to idle ($1: after what). The first call
# (after the hold) sets the idle figure; every later one must stay within it.
check_rss() {
	[ "$MODE" = http ] || return 0
	local what=$1 kib until=$((SECONDS + 10))
	kib=$(rss_kib)
	if [ -z "$RSS_LIMIT" ]; then
		RSS_IDLE=$kib
		RSS_LIMIT=$((kib + kib / 10 + RSS_SLACK_MIB * 1024))
		log "after $what: server resident memory $((kib / 1024)) MiB (at start $((RSS_START / 1024)) MiB): the idle figure from now on, limit $((RSS_LIMIT / 1024)) MiB"
		return 0
	fi
	while [ "$kib" -gt "$RSS_LIMIT" ] && [ "$SECONDS" -lt "$until" ]; do
		sleep 0.5
		kib=$(rss_kib)
	done
	[ "$kib" -le "$RSS_LIMIT" ] || fail "resident memory did not return to idle after $what: $((kib / 1024)) MiB, limit $((RSS_LIMIT / 1024)) MiB"
	log "after $what: server resident memory $((kib / 1024)) MiB (idle $((RSS_IDLE / 1024)) MiB, limit $((RSS_LIMIT / 1024)) MiB), back to idle"
}
alive() { kill -0 "$SRV" 2>/dev/null && [ -d "/proc/$SRV/fd" ]; }

# Wait up to 20 s for the server's descriptor count to come back to $IDLE ($1: after what).
wait_idle() {
	local what=$1 until=$((SECONDS + 20)) n
	while :; do
		alive || fail "the server died ($what)"
		n=$(fdcount)
		[ "$n" -le "$IDLE" ] && break
		[ "$SECONDS" -ge "$until" ] && fail "descriptors did not return to idle after $what: $n, idle $IDLE"
		sleep 0.2
	done
	log "after $what: server descriptors $n (idle $IDLE), back to idle"
}

# The closed= count of a churn log's last progress line.
closed_of() { local n; n=$(grep -o 'closed=[0-9]*' "$1" 2>/dev/null | tail -1 | cut -d= -f2); echo "${n:-0}"; }
opened_of() { local n; n=$(grep -o 'opened=[0-9]*' "$1" 2>/dev/null | tail -1 | cut -d= -f2); echo "${n:-0}"; }

for b in "$SERVER" churn; do
	[ -x "$BIN/$b" ] || fail "$BIN/$b is not built (cmake --build build)"
done

# 1. Descriptors: the soft limit up to the hard one.
ulimit -n "$(ulimit -Hn)" || fail "cannot raise the descriptor limit"
NOFILE=$(ulimit -n)
[ "$NOFILE" -ge $((HOLD + 1000)) ] || fail "descriptor limit $NOFILE is below $HOLD + 1000"
log "machine: $(nproc) CPUs, kernel $(uname -r); ulimit -n $NOFILE"

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
	fail "port $PORT is in use (set PORT)"
fi

"$BIN/$SERVER" --host 127.0.0.1 --port "$PORT" --workers 2 >"$WORK/server.log" 2>&1 &
SRV=$!
for _ in $(seq 1 50); do
	grep -q "$READY" "$WORK/server.log" && break
	alive || fail "the server did not start"
	sleep 0.1
done
grep -q "$READY" "$WORK/server.log" || fail "the server is not listening after 5 s"
sleep 1
# 2. Idle count.
IDLE=$(fdcount)
RSS_START=$(rss_kib)
log "$SERVER server pid $SRV on 127.0.0.1:$PORT, idle descriptors $IDLE, resident memory $((RSS_START / 1024)) MiB"

# 3. Hold.
"$BIN/churn" $CHURN_MODE --port "$PORT" --hold "$HOLD" --hold-seconds 10 --threads "$THREADS" \
	--sources "$SOURCES" --seconds 60 >"$WORK/hold.log" 2>&1 &
CL=$!
until=$((SECONDS + 60))
while ! grep -q '^hold:' "$WORK/hold.log"; do
	kill -0 "$CL" 2>/dev/null || { wait "$CL"; CL=; tail -5 "$WORK/hold.log"; fail "hold: the client ended before holding $HOLD connections"; }
	[ "$SECONDS" -ge "$until" ] && fail "hold: $HOLD connections not established within 60 s"
	sleep 0.1
done
PEAK=$(fdcount)
log "$(grep '^hold:' "$WORK/hold.log"); server descriptors $PEAK"
[ "$PEAK" -ge $((IDLE + HOLD)) ] || fail "hold: the server holds $PEAK descriptors, expected at least $((IDLE + HOLD))"
alive || fail "the server died during the hold"
kill -9 "$CL"
wait "$CL" 2>/dev/null
CL=
KILLED=1
log "hold: client killed with SIGKILL while holding $HOLD connections"
wait_idle "the hold"
check_rss "the hold"

# 4. Churn with kills.
START=$SECONDS
DEADLINE=$((START + LOAD_SECONDS))
DONE=0
OPENED=0
RUN=0
while [ "$DONE" -lt "$TOTAL" ]; do
	RUN=$((RUN + 1))
	left=$((DEADLINE - SECONDS))
	[ "$left" -gt 0 ] || fail "churn: only $DONE of $TOTAL connections within $LOAD_SECONDS s"
	"$BIN/churn" $CHURN_MODE --port "$PORT" --total $((TOTAL - DONE)) --concurrent "$CONCURRENT" \
		--threads "$THREADS" --sources "$SOURCES" --seconds "$left" --progress-ms 200 \
		>"$WORK/churn$RUN.log" 2>&1 &
	CL=$!
	if [ "$KILLED" -le "$KILLS" ]; then
		# Kill it once it has done a random 50..100% of a 1/(KILLS+1) share
		# of the total, if it is still running then.
		share=$((TOTAL / (KILLS + 1)))
		target=$((share / 2 + RANDOM * (share / 2) / 32768))
		while kill -0 "$CL" 2>/dev/null && [ "$(closed_of "$WORK/churn$RUN.log")" -lt "$target" ]; do
			[ "$SECONDS" -ge "$DEADLINE" ] && break
			sleep 0.05
		done
		if kill -9 "$CL" 2>/dev/null; then
			wait "$CL" 2>/dev/null
			CL=
			n=$(closed_of "$WORK/churn$RUN.log")
			o=$(opened_of "$WORK/churn$RUN.log")
			DONE=$((DONE + ${n:-0}))
			OPENED=$((OPENED + ${o:-0}))
			grep -q 'errors=[1-9]' "$WORK/churn$RUN.log" && { tail -3 "$WORK/churn$RUN.log"; fail "churn run $RUN reported errors"; }
			log "churn run $RUN: killed with SIGKILL after ${n:-0} connections (total $DONE of $TOTAL)"
			KILLED=$((KILLED + 1))
			alive || fail "the server died after kill $KILLED"
			wait_idle "kill $KILLED"
			check_rss "kill $KILLED"
			continue
		fi
	fi
	wait "$CL"
	rc=$?
	CL=
	n=$(closed_of "$WORK/churn$RUN.log")
	o=$(opened_of "$WORK/churn$RUN.log")
	DONE=$((DONE + ${n:-0}))
	OPENED=$((OPENED + ${o:-0}))
	[ "$rc" -eq 0 ] || { tail -5 "$WORK/churn$RUN.log" | sed 's/^/    /'; fail "churn run $RUN failed (exit $rc)"; }
	log "churn run $RUN: $(tail -1 "$WORK/churn$RUN.log" | sed 's/^churn: //')"
done
ELAPSED=$((SECONDS - START))
[ "$ELAPSED" -le "$LOAD_SECONDS" ] || fail "churn: took $ELAPSED s, bound $LOAD_SECONDS s"
log "churn: $DONE connections closed ($OPENED opened) in $ELAPSED s, client killed $((KILLED - 1)) times mid-run"
alive || fail "the server died during the churn"
log "TIME_WAIT sockets on the machine now: $(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "06"' | wc -l)"
wait_idle "the churn"
check_rss "the churn"

# 6. SIGINT.
kill -INT "$SRV"
for _ in $(seq 1 150); do
	kill -0 "$SRV" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$SRV" 2>/dev/null; then
	fail "the server did not stop within 15 s of SIGINT"
fi
wait "$SRV"
rc=$?
SRV=
[ "$rc" -eq 0 ] || fail "the server exited with $rc after SIGINT"
log "server stopped by SIGINT with exit code 0 ($(tail -1 "$WORK/server.log"))"
log "summary ($SERVER): idle $IDLE descriptors, $PEAK with $HOLD held, $DONE connections churned in $ELAPSED s, $KILLED client kills, back to idle each time${RSS_IDLE:+; resident memory idle $((RSS_IDLE / 1024)) MiB, limit $((RSS_LIMIT / 1024)) MiB}"
rm -rf "$WORK"
echo "loadcheck: PASS"
exit 0
