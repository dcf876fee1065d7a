# shellcheck shell=bash disable=SC2034,SC2154 # variables shared with e2e.sh
# e2e_lib.sh - the helpers of tests/serve/e2e.sh (sourced, not run): checks that print one
# "ok:" line or "FAIL:" lines, requests through curl or a raw socket (bash's /dev/tcp), and
# servers started on ports tried from a pseudo-random base and stopped by their PID.
#
# The caller sets: bin (the program), work (a temporary directory), R (a directory for the
# replies, inside work).

failures=0 # checks that failed so far
cur=       # the current check's description
bad=0      # did the current check fail?
show=      # the reply the current check looks at: "curl ID", "raw ID" or empty
st=        # the last reply's status ("000 (curl exit N: ...)" when curl failed)
ver=       # the last curl reply's HTTP version ("1.1", "2"; "0" when none came)
rc=0       # the last curl's exit status
last=      # the last curl reply's ID: $R/ID.h headers, $R/ID.b body

declare -A spid # server NAME -> its PID
servers=()                   # the NAMEs started, in order
start_prefix=()              # a command start() runs the server under (timeout ...)
nextport=0
. "$(dirname "$0")/../support/ports.sh" # port_base

begin() {
	cur=$*
	bad=0
	show=
}

# no MESSAGE - the current check failed: MESSAGE and the reply it looked at.
no() {
	bad=1
	failures=$((failures + 1))
	echo "FAIL: $cur: $*"
	case $show in
	curl\ *)
		local id=${show#curl }
		if [ -f "$R/$id.h" ]; then
			echo "  reply headers:"
			tr -d '\r' <"$R/$id.h" | sed 's/^/    /'
			echo "  reply body (first 300 bytes):"
			head -c 300 "$R/$id.b" 2>/dev/null | cat -v | sed 's/^/    /'
			echo
		fi
		;;
	raw\ *)
		echo "  raw reply (first 600 bytes):"
		head -c 600 "$R/${show#raw }.raw" 2>/dev/null | cat -v | sed 's/^/    /'
		echo
		;;
	esac
	if [ -n "${E2E_FAIL_FAST:-}" ]; then
		exit 1
	fi
	return 0
}

# finish - "ok: DESCRIPTION" when the current check passed.
finish() {
	[ "$bad" = 0 ] && echo "ok: $cur"
	return 0
}

# fatal MESSAGE - a failure after which nothing else can be checked.
fatal() {
	failures=$((failures + 1))
	echo "FAIL: $*"
	exit 1
}

# kill_servers - SIGKILL to every server still running, reaped (a cleanup's).
kill_servers() {
	local n
	for n in "${!spid[@]}"; do
		[ -n "${spid[$n]}" ] || continue
		kill -KILL "${spid[$n]}" 2>/dev/null
		{ wait "${spid[$n]}"; } 2>/dev/null
	done
}

# print_logs - every server's stderr and stdout (their ends), for a failed run.
print_logs() {
	local n f
	for n in "${servers[@]}"; do
		for f in "$work/$n.err" "$work/$n.out"; do
			[ -s "$f" ] || continue
			echo "--- ${f##*/} (last 60 lines) ---"
			tail -n 60 "$f" | cat -v
		done
	done
}

# req ID [CURL OPTIONS...] URL - a request through curl: headers in $R/ID.h, the body in
# $R/ID.b, the status in st, the HTTP version in ver ("1.1", "2"; "0" for none), curl's exit
# status in rc. The check's reply becomes this one.
req() {
	local id=$1 out
	shift
	last=$id
	show="curl $id"
	: >"$R/$id.h"
	: >"$R/$id.b"
	out=$(timeout 20 curl -sS --max-time 10 -D "$R/$id.h" -o "$R/$id.b" \
		-w '%{http_code} %{http_version}' "$@" 2>"$R/$id.e")
	rc=$?
	st=${out% *} ver=${out#* }
	[ "$rc" = 0 ] || st="$st (curl exit $rc: $(head -c 200 "$R/$id.e"))"
}

# hdr NAME [ID] - the value of header NAME in reply ID (default the last), without the CR
# and the spaces around it; empty when absent.
hdr() {
	local n
	n=$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')
	tr -d '\r' <"$R/${2:-$last}.h" | awk -v n="$n" '
		index(tolower($0), n ":") == 1 {
			v = substr($0, length(n) + 2)
			sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
			print v; exit
		}'
}

# has_hdr NAME [ID] - is header NAME in reply ID at all?
has_hdr() {
	tr -d '\r' <"$R/${2:-$last}.h" | grep -qi "^$1:"
}

want_status() {
	local s
	for s in "$@"; do
		[ "$st" = "$s" ] && return 0
	done
	no "status $st, expected $*"
	return 1
}

want_hdr() { # want_hdr NAME VALUE
	local v
	v=$(hdr "$1")
	[ "$v" = "$2" ] || no "$1: '$v', expected '$2'"
}

want_hdr_ci() { # want_hdr_ci NAME VALUE - compared without regard to case
	local v
	v=$(hdr "$1")
	[ "${v,,}" = "${2,,}" ] || no "$1: '$v', expected '$2'"
}

want_hdr_re() { # want_hdr_re NAME ERE
	local v
	v=$(hdr "$1")
	[[ $v =~ $2 ]] || no "$1: '$v' does not match /$2/"
}

want_no_hdr() {
	has_hdr "$1" && no "unexpected $1: $(hdr "$1")"
	return 0
}

want_body_file() { # want_body_file FILE - the body is FILE's bytes exactly
	cmp -s "$R/$last.b" "$1" ||
		no "the body ($(wc -c <"$R/$last.b") bytes) differs from ${1#"$work"/} ($(wc -c <"$1") bytes)"
}

want_body() { # want_body STRING - the body is STRING exactly
	printf '%s' "$1" >"$R/expected"
	cmp -s "$R/$last.b" "$R/expected" ||
		no "the body ($(wc -c <"$R/$last.b") bytes) is not '$(printf '%s' "$1" | cat -v)'"
}

want_empty_body() {
	[ -s "$R/$last.b" ] && no "a body of $(wc -c <"$R/$last.b") bytes, expected none"
	return 0
}

# raw ID METHOD TARGET [SECONDS] - "METHOD TARGET HTTP/1.1" with Host and "Connection:
# close", its bytes sent as they are on a new connection to the current server's HTTP port;
# what comes back until the server closes or SECONDS (3) pass is $R/ID.raw, its status code
# in st.
raw() {
	local id=$1 req secs=${4:-3} rc
	printf -v req '%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$2" "$3"
	show="raw $id"
	# shellcheck disable=SC2016 # the inner script's own arguments
	timeout "$secs" bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 9
		printf "%s" "$2" >&3
		cat <&3' raw "$port" "$req" >"$R/$id.raw" 2>/dev/null
	rc=$?
	st=$(head -n 1 "$R/$id.raw" | tr -d '\r' | cut -d' ' -f2)
	[ -n "$st" ] || st="(no reply)"
	if [ $rc = 124 ]; then
		st="$st (the connection was still open after ${secs} s despite Connection: close)"
	elif [ $rc = 9 ]; then
		st="(could not connect)"
	fi
}

# wait_for SECONDS COMMAND... - COMMAND succeeds within SECONDS (polled every 0.1 s).
wait_for() {
	local n=$(($1 * 10)) i=0
	shift
	while ! "$@"; do
		i=$((i + 1))
		[ $i -ge $n ] && return 1
		sleep 0.1
	done
	return 0
}

serving() { # serving NAME - has server NAME printed its "serving" line?
	grep -q "giong-serve: serving" "$work/$1.err" 2>/dev/null
}

# start NAME TLS ARGS... - runs "$bin" ARGS --port P (and --https-port T when TLS is 1) in
# the directory $start_cwd (default: the current one), under $start_prefix (none by default;
# its PID is then spid's, a timeout passes SIGTERM on), until it prints "giong-serve:
# serving" (20 s at most: sanitizers, a busy machine); the ports are tried from a pseudo-random base, 5 times. Sets
# port, tport and spid[NAME]; returns 1 when the server did
# not start.
start() {
	local name=$1 tls=$2 try pid
	shift 2
	local extra=()
	servers+=("$name")
	for try in 1 2 3 4 5; do
		port=$((port_base + nextport)) tport=$((port + 1))
		nextport=$((nextport + 2))
		extra=(--port "$port")
		[ "$tls" = 1 ] && extra+=(--https-port "$tport")
		(cd "${start_cwd:-.}" && exec "${start_prefix[@]}" "$bin" "$@" "${extra[@]}") \
			>"$work/$name.out" 2>"$work/$name.err" &
		pid=$!
		local i=0
		while [ $i -lt 200 ] && ! serving "$name"; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
			i=$((i + 1))
		done
		if serving "$name"; then
			spid[$name]=$pid
			return 0
		fi
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		echo "  (server $name did not start on port $port, try $try)"
	done
	return 1
}

# activate NAME N FDNAMES ARGS... - "$bin" ARGS under systemd-socket-activate (what systemd
# does for a .socket unit): N listeners on consecutive ports of 127.0.0.1 from the
# pseudo-random base, handed in (LISTEN_FDS) with the names FDNAMES (colon-separated); the
# ports tried 10 times. The program starts at the first connection. Sets aport (the first
# port) and spid[NAME] (timeout's PID, the server its child: stop NAME works); the output
# in $work/NAME.out and NAME.err. Returns 1 when it could not listen.
activate() {
	local name=$1 n=$2 names=$3 try k pid last
	local ls=()
	shift 3
	servers+=("$name")
	for try in 1 2 3 4 5 6 7 8 9 10; do
		aport=$((port_base + nextport)) last=$((port_base + nextport + n - 1))
		nextport=$((nextport + n))
		ls=()
		for ((k = aport; k <= last; k++)); do
			ls+=(-l "127.0.0.1:$k")
		done
		timeout 60 systemd-socket-activate "${ls[@]}" --fdname="$names" "$bin" "$@" \
			>"$work/$name.out" 2>"$work/$name.err" &
		pid=$!
		for _ in $(seq 30); do
			grep -q "Listening on 127.0.0.1:$last" "$work/$name.err" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if grep -q "Listening on 127.0.0.1:$last" "$work/$name.err"; then
			spid[$name]=$pid
			return 0
		fi
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	return 1
}

# stop NAME [GRACE_S] - SIGTERM to server NAME; sets stop_status (its exit status, or
# "still running") and stop_ms (how long it took).
stop() {
	local name=$1 grace=${2:-3} pid=${spid[$1]} t0 t1
	t0=$(date +%s%N)
	kill -TERM "$pid" 2>/dev/null
	if wait_for $((grace + 6)) eval "! kill -0 $pid 2>/dev/null"; then # a sanitizer's exit too
		wait "$pid"
		stop_status=$?
	else
		stop_status="still running"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	t1=$(date +%s%N)
	stop_ms=$(((t1 - t0) / 1000000))
	spid[$name]=
}

# run_exit ID SECONDS ARGS... - "$bin" ARGS to its end (SECONDS at most); its status in
# run_status, its stderr in $R/ID.err.
run_exit() {
	local id=$1 secs=$2
	shift 2
	timeout -k 1 "$secs" "$bin" "$@" >"$R/$id.out" 2>"$R/$id.err" </dev/null
	run_status=$?
	[ $run_status = 124 ] && run_status="still running after $secs s"
	show=
}

# urlenc STRING - every byte but A-Z a-z 0-9 - . _ ~ / as %XX (upper-case hex).
urlenc() {
	local s=$1 out='' c h i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~/-]) out+=$c ;;
		*)
			printf -v h '%%%02X' "'$c"
			out+=$h
			;;
		esac
	done
	printf '%s' "$out"
}

# htmlunesc STRING - the five escapes (and the numeric forms of the quotes) undone.
htmlunesc() {
	local s=$1
	s=${s//&lt;/<}
	s=${s//&gt;/>}
	s=${s//&quot;/\"}
	s=${s//&#34;/\"}
	s=${s//&#x22;/\"}
	s=${s//&#39;/\'}
	s=${s//&#x27;/\'}
	s=${s//&apos;/\'}
	s=${s//&amp;/"&"}
	printf '%s' "$s"
}

fds() { # fds PID - how many descriptors the process has open
	local n=0 f
	for f in /proc/"$1"/fd/*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		n=$((n + 1))
	done
	echo "$n"
}
