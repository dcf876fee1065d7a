#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perf_top.sh DATA [N] [MIN%]: the top N (default 20) functions of a perf.data file
# (perf record without call graphs), at least MIN % each (default 0.8), as "share  dso
# function", with the share of each DSO first. For libraries shipped without a symbol table
# (Debian's libwolfssl: only the exported functions are named), perf gives one line per
# address inside a static function; here those addresses are gathered into the function that
# holds them, found from the library's .eh_frame (every function has a frame description
# there, static ones too), and named "static@0xSTART <- CALLER", CALLER being an exported
# function that calls it (from objdump), which is usually enough to tell what it is.
# Needs perf, readelf, objdump (binutils). Used by https_bench.sh.
set -euo pipefail
data=${1:?usage: perf_top.sh DATA [N] [MIN%]}
top=${2:-20} min=${3:-0.8}
tmp=$(mktemp -d /tmp/perf_top.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

perf report -i "$data" --stdio --no-children --sort dso 2>/dev/null |
	awk '!/^#/ && NF >= 2 && $1 ~ /%$/ { printf "%s %s; ", $1, $2 }' >"$tmp/dsos"
echo "by DSO: $(head -c 600 "$tmp/dsos")"
# "share dso sym" per line; sym is an address (0x...) where perf had no name
perf report -i "$data" --stdio --no-children --sort dso,sym -F overhead,dso,sym 2>/dev/null |
	awk '!/^#/ && $1 ~ /%$/ { sub(/%/, "", $1); s = $NF; print $1, $2, s }' >"$tmp/lines"

# the DSOs with addresses left: their paths from the data's build-id list
perf buildid-list -i "$data" 2>/dev/null | awk '{ print $2 }' >"$tmp/paths" || true
: >"$tmp/named"
while read -r pct dso sym; do
	if [[ $sym != 0x* ]]; then echo "$pct $dso $sym" >>"$tmp/named"; continue; fi
	echo "$pct $dso $sym" >>"$tmp/anon.$dso"
done <"$tmp/lines"
for f in "$tmp"/anon.*; do
	[[ -e $f ]] || continue
	dso=${f##*/anon.}
	path=$(grep -m1 "/$dso\$" "$tmp/paths" || true)
	if [[ -z $path || ! -r $path ]]; then cat "$f" >>"$tmp/named"; continue; fi
	# function ranges (start end, hex without 0x) from the frame descriptions
	readelf --debug-dump=frames "$path" 2>/dev/null |
		sed -n 's/.* FDE .*pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1 \2/p' >"$tmp/fde"
	# exported names by start address
	nm -D --defined-only "$path" 2>/dev/null | awk '$2 ~ /[tTwW]/ { print $1, $3 }' >"$tmp/syms"
	# "target call-site" for every direct call
	objdump -d --no-show-raw-insn "$path" 2>/dev/null |
		awk '$2 == "call" && $3 ~ /^[0-9a-f]+$/ { a = $1; sub(/:$/, "", a); print $3, a }' >"$tmp/calls"
	awk -v dso="$dso" '
		function hex(x,   i, v) { sub(/^0x/, "", x); v = 0
			for (i = 1; i <= length(x); i++) v = v * 16 + index("0123456789abcdef", substr(x, i, 1)) - 1
			return v }
		function fn(a,   lo, hi, m) { lo = 1; hi = n  # the start of the function holding a
			while (lo <= hi) { m = int((lo + hi) / 2)
				if (a < s[m]) hi = m - 1; else if (a >= e[m]) lo = m + 1; else return s[m] }
			return a }
		function label(k, depth) { # an exported name, or static@START <- its callers
			if (k in name) return name[k]
			if (!(k in caller) || depth >= 3) return sprintf("static@0x%x", k)
			return sprintf("static@0x%x", k) " <- " label(caller[k], depth + 1) }
		FILENAME ~ /fde$/ { n++; s[n] = hex($1); e[n] = hex($2); next }
		FILENAME ~ /syms$/ { sub(/@.*/, "", $2); name[hex($1)] = $2; next }
		FILENAME ~ /calls$/ { t = hex($1); c = fn(hex($2))
			# prefer an exported caller, else the first static one
			if (!(t in caller) || (!(caller[t] in name) && (c in name))) if (c != t) caller[t] = c
			next }
		{ sum[fn(hex($3))] += $1 }
		END { for (k in sum) printf "%.2f %s %s\n", sum[k], dso, label(k, 0) }' \
		"$tmp/fde" "$tmp/syms" "$tmp/calls" "$f" >>"$tmp/named"
done
# named functions again summed (perf's named lines and the gathered ones)
awk '{ k = $2 "\t" substr($0, index($0, $3)); v[k] += $1 }
	END { for (k in v) { split(k, p, "\t"); printf "%7.2f%%  %-28s %s\n", v[k], p[1], p[2] } }' \
	"$tmp/named" | sort -rn | awk -v m="$min" '$1 + 0 >= m' | head -n "$top"
