#!/bin/sh
# SPDX-License-Identifier: MIT
#
# h2o.sh PORT TPORT DIR CERT KEY: Debian's h2o (2.2.5) in the foreground as the HTTP/2
# benchmark's peer (h2_bench.sh): h2c by prior knowledge on 127.0.0.1:PORT, h2 over TLS on
# 127.0.0.1:TPORT with the certificate chain CERT and key KEY (PEM), the bodies of
# http-peers/make_bodies.sh as files (h2o has no handler for a fixed body but mruby).
# Everything it writes (config, bodies, pid file, error log) is in DIR. The shell execs
# h2o: this script's PID is h2o's, SIGTERM to it stops h2o. One process, one worker thread.
set -eu
[ $# -eq 5 ] || { echo "usage: h2o.sh PORT TPORT DIR CERT KEY" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
"$here/../http-peers/make_bodies.sh" "$3/www"
sed -e "s|@PORT@|$1|g; s|@TPORT@|$2|g; s|@DIR@|$3|g; s|@CERT@|$4|g; s|@KEY@|$5|g" \
	"$here/h2o.conf.in" >"$3/h2o.conf"
exec "${H2O:-h2o}" -c "$3/h2o.conf"
