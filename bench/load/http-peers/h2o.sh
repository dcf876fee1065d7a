#!/bin/sh
# SPDX-License-Identifier: MIT
#
# h2o.sh PORT [DIR]: runs Debian's h2o in the foreground as an HTTP benchmark peer
# (issue 12) on 127.0.0.1:PORT, with its config, bodies, pid file and error log in DIR
# (default: a new mktemp directory, left behind); no system file is read or written. The
# shell execs h2o, so this script's PID is h2o's: SIGTERM to it stops h2o. One process,
# one worker thread (num-threads: 1).
#   /json, /users, /health   the files from make_bodies.sh (file.file; h2o has no handler
#                            for a fixed body other than mruby), through h2o's file cache
# Keep-alive without a request limit (h2o has none), 20,000 connections, no access log.
set -eu
port=${1:?usage: h2o.sh PORT [DIR]}
dir=${2:-$(mktemp -d /tmp/h2o-peer.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
h2o=${H2O:-h2o}
command -v "$h2o" >/dev/null || { echo "h2o.sh: h2o not found (apt-get install h2o)" >&2; exit 2; }
mkdir -p "$dir/www"
"$here/make_bodies.sh" "$dir/www"
sed -e "s|@PORT@|$port|g" -e "s|@DIR@|$dir|g" -e "s|@USER@|$(id -un)|g" "$here/h2o.conf.in" >"$dir/h2o.conf"
exec "$h2o" -c "$dir/h2o.conf"
