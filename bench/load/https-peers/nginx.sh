#!/bin/sh
# SPDX-License-Identifier: MIT
#
# nginx.sh PORT DIR CERT KEY SUITES: Debian's nginx in the foreground as the HTTPS
# benchmark's peer (https_bench.sh) on 127.0.0.1:PORT: TLS 1.3 only with the TLS 1.3 cipher
# suites SUITES (OpenSSL's syntax, e.g. TLS_AES_128_GCM_SHA256), the certificate chain CERT
# and key KEY (PEM), and the bodies of http-peers/make_bodies.sh. Everything it writes
# (config, bodies, pid file, logs, temp directories) is in DIR. The shell execs nginx: this
# script's PID is nginx's master, SIGTERM to it stops nginx. One master, one worker.
set -eu
[ $# -eq 5 ] || { echo "usage: nginx.sh PORT DIR CERT KEY SUITES" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$2/tmp"
"$here/../http-peers/make_bodies.sh" "$2/www"
# shellcheck disable=SC3045 # dash and bash both know ulimit -H
lim=$(ulimit -Hn)
[ "$lim" = unlimited ] && lim=1048576
sed -e "s|@PORT@|$1|g; s|@DIR@|$2|g; s|@CERT@|$3|g; s|@KEY@|$4|g; s|@SUITES@|$5|g" \
	-e "s|@NOFILE@|$lim|g; s|@USER@|$(id -un)|g" "$here/nginx.conf.in" >"$2/nginx.conf"
exec "${NGINX:-nginx}" -p "$2" -e "$2/error.log" -c "$2/nginx.conf"
