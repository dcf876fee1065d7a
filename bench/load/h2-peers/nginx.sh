#!/bin/sh
# SPDX-License-Identifier: MIT
#
# nginx.sh PORT TPORT DIR CERT KEY SUITES: Debian's nginx (1.22, http2 module) in the
# foreground as the HTTP/2 benchmark's peer (h2_bench.sh): h2c by prior knowledge on
# 127.0.0.1:PORT, h2 over TLS 1.3 on 127.0.0.1:TPORT with the cipher suites SUITES
# (OpenSSL's syntax), the certificate chain CERT and key KEY (PEM), and the bodies of
# http-peers/make_bodies.sh. Everything it writes (config, bodies, pid file, logs, temp
# directories) is in DIR. The shell execs nginx: this script's PID is nginx's master,
# SIGTERM to it stops nginx. One master, one worker.
set -eu
[ $# -eq 6 ] || { echo "usage: nginx.sh PORT TPORT DIR CERT KEY SUITES" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$3/tmp"
"$here/../http-peers/make_bodies.sh" "$3/www"
# shellcheck disable=SC3045 # dash and bash both know ulimit -H
lim=$(ulimit -Hn)
[ "$lim" = unlimited ] && lim=1048576
sed -e "s|@PORT@|$1|g; s|@TPORT@|$2|g; s|@DIR@|$3|g; s|@CERT@|$4|g; s|@KEY@|$5|g" \
	-e "s|@SUITES@|$6|g; s|@NOFILE@|$lim|g; s|@USER@|$(id -un)|g" "$here/nginx.conf.in" >"$3/nginx.conf"
exec "${NGINX:-nginx}" -p "$3" -e "$3/error.log" -c "$3/nginx.conf"
