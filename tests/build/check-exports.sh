#!/usr/bin/env bash
# check-exports.sh NM LIB... - every symbol a giong shared library exports starts with
# "giong_" (giong__* is exported-but-internal, liburing style), and each exports something.
# Linker version-script nodes (GIONG_0.1 ...) are allowed.
set -euo pipefail
nm=$1
shift
status=0
for lib in "$@"; do
	syms=$("$nm" -D --defined-only "$lib" | awk '{ print $2, $3 }')
	bad=$(printf '%s\n' "$syms" | awk '$2 != "" && $2 !~ /^giong_/ && !($1 == "A" && $2 ~ /^GIONG_[0-9]/) { print "  " $2 }')
	count=$(printf '%s\n' "$syms" | awk '$2 ~ /^giong_/' | wc -l)
	if [ -n "$bad" ]; then
		echo "FAIL $lib exports symbols without the giong_ prefix (missing static? wrong visibility?):"
		echo "$bad"
		status=1
	elif [ "$count" -eq 0 ]; then
		echo "FAIL $lib exports no giong_ symbol at all (are the declarations marked GIONG_API?)"
		status=1
	else
		echo "ok   $lib: $count giong_ symbols"
	fi
done
exit $status
