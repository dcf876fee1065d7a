#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make_bodies.sh DIR: writes the HTTP benchmark's bodies (issue 12) into DIR, for the peers
# that serve files (nginx, h2o):
#   DIR/json.json    {"message":"Hello, World!"}                            27 bytes
#   DIR/users.json   the users document of epoll_http.c's users_build()   8,173 bytes
# The users document is, with no whitespace and no trailing newline, a JSON array of the
# 144 objects {"id":i,"name":"User i","email":"useri@example.com"} for i = 1..144, joined
# by ",". http_bench.sh checks that every server sends these bytes.
set -eu
dir=${1:?usage: make_bodies.sh DIR}
mkdir -p "$dir"
printf '%s' '{"message":"Hello, World!"}' >"$dir/json.json"
awk 'BEGIN {
	printf "[";
	for (i = 1; i <= 144; i++)
		printf "%s{\"id\":%d,\"name\":\"User %d\",\"email\":\"user%d@example.com\"}",
			(i > 1 ? "," : ""), i, i, i;
	printf "]";
}' >"$dir/users.json"
printf 'ok' >"$dir/health.txt"
