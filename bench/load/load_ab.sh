#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# load_ab.sh A_LOAD B_LOAD [ROUNDS] [SECS] [DEPTHS]: two giong-load binaries (a before and an
# after) against one giong HTTP example process, interleaved A, B, A, B... ROUNDS times
# (default 5) for SECS s each (default 3) per pipelining depth (default "1 8"), 50
# connections; prints each run's CPU per request (user+system of the load generator, GNU
# time) and the medians. The server is build/bin/http of this checkout (HTTP_BIN) on CPU 1,
# the load on CPU 0. Bounded: every run by -d; the server is stopped by its PID at the end.
set -euo pipefail
A=${1:?usage: load_ab.sh A_LOAD B_LOAD [ROUNDS] [SECS] [DEPTHS]} B=${2:?usage: load_ab.sh A_LOAD B_LOAD}
R=${3:-5} S=${4:-3} DEPTHS=${5:-1 8}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HTTP=${HTTP_BIN:-$ROOT/build/bin/http} PORT=${PORT:-7821}
command -v /usr/bin/time >/dev/null || { echo "load_ab.sh: GNU time is required (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/load_ab.XXXXXX)
taskset -c 1 "$HTTP" --workers 1 --host 127.0.0.1 --port "$PORT" >/dev/null 2>&1 &
srv=$!
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
sleep 0.5
for d in $DEPTHS; do
	for ((r = 1; r <= R; r++)); do
		for v in A B; do
			bin=$A
			[[ $v == B ]] && bin=$B
			/usr/bin/time -f "%U %S" -o "$tmp/t" taskset -c 0 "$bin" \
				"http://127.0.0.1:$PORT/json" -c 50 -d "$S" -P "$d" --json >"$tmp/o" 2>&1
			n=$(grep -oP '"requests":\K[0-9]+' "$tmp/o")
			read -r u s <"$tmp/t"
			awk -v d="$d" -v v="$v" -v u="$u" -v s="$s" -v n="$n" -v S="$S" \
				'BEGIN { printf "P%s %s %.3f us/req %d req/s\n", d, v, (u + s) * 1e6 / n, n / S }'
		done
	done
done | tee "$tmp/runs"
for k in $(awk '{ print $1 "_" $2 }' "$tmp/runs" | sort -u); do
	awk -v k="$k" '$1 "_" $2 == k { print $3 }' "$tmp/runs" | sort -n |
		awk -v k="${k/_/ }" '{ v[NR] = $1 } END { printf "%s median %.3f us/req (%d runs)\n", k, v[int((NR + 1) / 2)], NR }'
done
