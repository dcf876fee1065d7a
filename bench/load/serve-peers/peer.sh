#!/bin/sh
# SPDX-License-Identifier: MIT
#
# peer.sh nginx|h2o PORT DIR WWW [CERT KEY SUITES]: Debian's nginx or h2o in the foreground
# as serve_bench.sh's peer, serving the directory WWW on 127.0.0.1:PORT; with CERT, KEY and
# SUITES (nginx only) over TLS 1.3 with those suites. Its config (from nginx.conf.in or
# h2o.conf.in beside this script), pid file, logs and temp directories go into DIR; no
# system file is read or written. The shell execs the server, so this script's PID is the
# server's (nginx's master): SIGTERM to it stops the server. PEER_ACCESS_LOG=1 turns on
# the access log, into DIR/access.log: nginx's buffered (64 KiB, flushed after 100 ms, as
# giong-serve's --log), h2o's as it comes (it has no buffer setting).
set -eu
[ $# -eq 4 ] || [ $# -eq 7 ] || { echo "usage: peer.sh nginx|h2o PORT DIR WWW [CERT KEY SUITES]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
kind=$1 dir=$3
case $kind in nginx|h2o) ;; *) echo "peer.sh: nginx or h2o, not '$kind'" >&2; exit 2 ;; esac
mkdir -p "$dir/tmp"
ssl=""
: >"$dir/tls.conf"
if [ $# -eq 7 ]; then
	[ "$kind" = nginx ] || { echo "peer.sh: TLS is for nginx only" >&2; exit 2; }
	ssl=" ssl"
	printf 'ssl_certificate %s;\nssl_certificate_key %s;\nssl_protocols TLSv1.3;\nssl_conf_command Ciphersuites %s;\n' \
		"$5" "$6" "$7" >"$dir/tls.conf"
fi
access_log="access_log off;" h2o_log=""
if [ "${PEER_ACCESS_LOG:-0}" = 1 ]; then
	access_log="access_log $dir/access.log combined buffer=64k flush=100ms;"
	h2o_log="access-log: $dir/access.log"
fi
# shellcheck disable=SC3045 # dash and bash both know ulimit -H
lim=$(ulimit -Hn)
[ "$lim" = unlimited ] && lim=1048576
sed -e "s|@PORT@|$2|g; s|@DIR@|$dir|g; s|@WWW@|$4|g; s|@SSL@|$ssl|g" \
	-e "s|@ACCESS_LOG@|$access_log|g; s|@H2O_ACCESS_LOG@|$h2o_log|g" \
	-e "s|@NOFILE@|$lim|g; s|@USER@|$(id -un)|g" "$here/$kind.conf.in" >"$dir/$kind.conf"
if [ "$kind" = nginx ]; then
	exec "${NGINX:-nginx}" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
fi
exec "${H2O:-h2o}" -c "$dir/h2o.conf"
