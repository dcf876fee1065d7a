#!/bin/sh
# SPDX-License-Identifier: MIT
#
# nginx.sh PORT [DIR]: runs Debian's nginx in the foreground as an HTTP benchmark peer
# (issue 12) on 127.0.0.1:PORT, with everything (config, bodies, pid file, error log, temp
# directories) in DIR (default: a new mktemp directory, left behind); no system file is
# read or written. The shell execs nginx, so this script's PID is nginx's master: SIGTERM
# to it stops nginx (fast shutdown). One master and one worker process.
#   /json    return 200 with the 27-byte body from memory (application/json)
#   /users   the 8,173-byte file from make_bodies.sh (sendfile, open_file_cache)
#   /health  ok;  anything else 404
# Keep-alive without a request limit, 20,000 connections, access log off.
set -eu
port=${1:?usage: nginx.sh PORT [DIR]}
dir=${2:-$(mktemp -d /tmp/nginx-peer.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
nginx=${NGINX:-nginx}
command -v "$nginx" >/dev/null || { echo "nginx.sh: nginx not found (apt-get install nginx-light)" >&2; exit 2; }
mkdir -p "$dir/www" "$dir/tmp"
"$here/make_bodies.sh" "$dir/www"
# shellcheck disable=SC3045 # dash and bash both know ulimit -H
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] && nofile=1048576
sed -e "s|@PORT@|$port|g" -e "s|@DIR@|$dir|g" -e "s|@NOFILE@|$nofile|g" -e "s|@USER@|$(id -un)|g" "$here/nginx.conf.in" >"$dir/nginx.conf"
exec "$nginx" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
