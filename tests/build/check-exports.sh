#!/usr/bin/env bash
# check-exports.sh NM MANIFEST [LIB FILE SONAME]... - what each giong shared library exports
# is a decision written down in three places that must agree:
#   libgiong-<lib>/giong-<lib>.sym   the linker version script: every exported name, listed
#   libgiong-<lib>/include/**.h      each of those names declared GIONG_API
#   the .so                          nm -D --defined-only
# Checked, for each library:
#   - it has its version script and was linked with it (every export carries its node);
#   - the script's node is GIONG_<SONAME major>[.<n>...], its global: names are explicit
#     (no wildcards) and its local: is "*";
#   - every exported symbol starts with "giong_" (giong__* internals never appear: they are
#     not GIONG_API), and there is at least one;
#   - every exported symbol is listed in the script, and every listed name is exported (a
#     function removed or renamed leaves its name behind in the script);
#   - every exported symbol is declared GIONG_API in the library's public headers, and every
#     GIONG_API declaration there is listed in the script (else it is silently not exported).
# MANIFEST (tests/build/CMakeLists.txt) gives "root - <source dir>", "inc <lib> <dir>" and
# "sym <lib> <version script>"; a GIONG_FAULTS=ON build adds "internal <lib> <name>" for the
# fault plan's internals (private/giong_faults.h), which its generated script exports in one
# more node, GIONG_FAULTS: they count as declared, and that node name is allowed.
set -euo pipefail
trap 'echo "check-exports.sh: stopped by an error at line $LINENO (a bug of this script)" >&2' ERR
nm=$1 manifest=$2
shift 2

declare -A incs syms internals
root=
while read -r kind lib rest; do
	case $kind in
	root) root=$rest ;;
	inc) incs[$lib]+="$rest"$'\n' ;;
	sym) syms[$lib]=$rest ;;
	internal) internals[$lib]+="$rest"$'\n' ;;
	esac
done <"$manifest"

rel() { # a path as the reader should edit it: relative to the source tree when inside it
	case $1 in
	"$root"/*) printf '%s' "${1#"$root"/}" ;;
	*) printf '%s' "$1" ;;
	esac
}

# parse_sym FILE: "node NAME", "global NAME", "local PATTERN" lines, "error TEXT" on nonsense.
# Understands what giong's scripts use: /* */ comments, NODE { global: ...; local: ...; } [PARENT];
parse_sym() {
	tr '\n' ' ' <"$1" | sed -e 's|/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/| |g' -e 's/\([{};]\)/ \1 /g' |
		awk '{
			for (i = 1; i <= NF; i++) {
				t = $i
				if (t == "{") { if (node == "") { print "error \"{\" without a node name"; exit } depth++; continue }
				if (t == "}") { depth--; sect = ""; after = 1; continue }
				if (t == ";") { if (depth == 0) { node = ""; after = 0 } continue }
				if (t == "global:" || t == "local:") { sect = substr(t, 1, length(t) - 1); continue }
				if (depth == 0) {
					if (after) continue          # the parent node after "}"
					node = t; print "node " t; continue
				}
				if (sect == "") { print "error \"" t "\" outside global: or local:"; exit }
				print sect " " t
			}
		}'
}

# api_decls DIR...: "NAME<TAB>FILE:LINE" for each declaration in the headers that carries
# GIONG_API (comments and preprocessor lines skipped; a declaration may span lines).
api_decls() {
	local f
	while IFS= read -r f; do
		awk -v file="$f" '
		function flush() {
			if (buf ~ /GIONG_API/ && buf !~ /(^|[^A-Za-z0-9_])static([^A-Za-z0-9_]|$)/) {
				name = ""
				s = buf
				# the first identifier followed by "(" that is not an attribute or a macro
				while (match(s, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
					id = substr(s, RSTART, RLENGTH)
					sub(/[ \t]*\($/, "", id)
					s = substr(s, RSTART + RLENGTH)
					if (id ~ /^__/ || id ~ /^[A-Z0-9_]+$/) continue
					name = id
					break
				}
				if (name == "") { # data: the last identifier
					s = buf
					while (match(s, /[A-Za-z_][A-Za-z0-9_]*/)) { name = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH) }
				}
				printf "%s\t%s:%d\n", name, file, at
			}
			buf = ""; at = 0
		}
		{
			line = $0
			if (cont || (!incomment && line ~ /^[ \t]*#/)) { cont = (line ~ /\\$/); next }
			out = ""
			while (line != "") {
				if (incomment) {
					p = index(line, "*/")
					if (!p) { line = ""; break }
					line = substr(line, p + 2); incomment = 0
					continue
				}
				p = index(line, "/*")
				q = index(line, "//")
				if (q && (!p || q < p)) { out = out substr(line, 1, q - 1); line = ""; break }
				if (!p) { out = out line; line = ""; break }
				out = out substr(line, 1, p - 1) " "
				line = substr(line, p + 2); incomment = 1
			}
			while (match(out, /[;{}]/)) {
				piece = substr(out, 1, RSTART - 1)
				if (piece ~ /GIONG_API/ && !at) at = NR
				buf = buf " " piece
				out = substr(out, RSTART + 1)
				flush()
			}
			if (out ~ /GIONG_API/ && !at) at = NR
			buf = buf " " out
		}' "$f"
	done < <(for d in "$@"; do if [ -d "$d" ]; then find "$d" -name '*.h'; fi; done | sort)
}

status=0
fail() {
	echo "FAIL $*"
	status=1
}

while [ $# -ge 3 ]; do
	lib=$1 so=$2 soname=$3
	shift 3
	sofile=$soname
	sym=${syms[$lib]:-}
	dirs=()
	while IFS= read -r d; do if [ -n "$d" ]; then dirs+=("$d"); fi; done <<<"${incs[$lib]:-}"
	lib_ok=1
	libfail() {
		fail "$@"
		lib_ok=0
	}

	# --- what the .so exports -------------------------------------------------------------
	exports=$("$nm" -D --defined-only "$so" | awk '{ print $2, $3 }')
	bad=$(printf '%s\n' "$exports" | awk '$2 != "" && $2 !~ /^giong_/ && !($1 == "A" && $2 ~ /^GIONG_([0-9]|FAULTS$)/) { print "  " $2 }')
	if [ -n "$bad" ]; then
		libfail "$sofile exports symbols without the giong_ prefix (missing static? wrong visibility?):"
		echo "$bad"
	fi
	# name and version node ("giong_x@@GIONG_0"; no "@" when no version script was used)
	exported=$(printf '%s\n' "$exports" | awk '$2 ~ /^giong_/ { n = $2; v = ""; p = index(n, "@");
		if (p) { v = substr(n, p); sub(/^@+/, "", v); n = substr(n, 1, p - 1) } print n, v }' | sort -u)
	names=$(printf '%s\n' "$exported" | awk 'NF { print $1 }')
	count=$(printf '%s\n' "$names" | awk 'NF' | wc -l)
	if [ "$count" -eq 0 ]; then
		libfail "$sofile exports no giong_ symbol at all (are the declarations marked GIONG_API," \
			"and listed in its version script?)"
	fi

	# --- its version script -------------------------------------------------------------
	if [ -z "$sym" ] || [ ! -f "$sym" ]; then
		want="giong-$lib.sym next to the library's CMakeLists.txt"
		[ -z "$sym" ] || want=$(rel "$sym")
		libfail "$sofile has no version script: create $want (copy the layout of" \
			"libgiong-core/giong-core.sym) listing what it exports today:"
		printf '%s\n' "$names" | awk 'NF { print "\t" $1 ";" }'
		continue
	fi
	symrel=$(rel "$sym")
	parsed=$(parse_sym "$sym")
	if grep -q '^error ' <<<"$parsed"; then
		libfail "$symrel: cannot read it: $(sed -n 's/^error //p' <<<"$parsed" | head -1)"
		continue
	fi
	major=${soname##*.so.}
	nodes=$(awk '$1 == "node" { print $2 }' <<<"$parsed")
	listed=$(awk '$1 == "global" { print $2 }' <<<"$parsed" | sort)
	if [ -z "$nodes" ]; then
		libfail "$symrel has no version node: write the names in GIONG_$major { global: ...; local: *; };"
	fi
	for n in $nodes; do
		[ "$n" = GIONG_FAULTS ] && [ -n "${internals[$lib]:-}" ] && continue
		if ! [[ $n =~ ^GIONG_${major}(\.[0-9]+)*$ ]]; then
			libfail "$symrel: version node $n does not belong to $soname: name it" \
				"GIONG_$major (or GIONG_$major.<n> for a later addition)"
		fi
	done
	wild=$(grep -E '[*?[]' <<<"$listed" || true)
	if [ -n "$wild" ]; then
		libfail "$symrel: global: must list names, not patterns: replace" \
			$wild "in $symrel by the names it is meant to export"
		listed=$(grep -vE '[*?[]' <<<"$listed" || true)
	fi
	if [ "$(awk '$1 == "local" { print $2 }' <<<"$parsed" | sort -u)" != "*" ]; then
		libfail "$symrel: its last node must end in 'local: *;' (everything not listed stays hidden)"
	fi
	dups=$(printf '%s\n' "$listed" | awk 'NF' | uniq -d)
	[ -z "$dups" ] || libfail "$symrel lists twice:" $dups "- remove the duplicates from $symrel"
	listed=$(printf '%s\n' "$listed" | awk 'NF' | sort -u)

	unversioned=$(printf '%s\n' "$exported" | awk 'NF && $2 == "" { print "  " $1 }')
	if [ -n "$unversioned" ]; then
		libfail "$sofile was not linked with $symrel (these exports carry no version node;" \
			"is the file giong-<lib>.sym next to the library's CMakeLists.txt? re-run cmake):"
		echo "$unversioned"
	fi

	# --- the GIONG_API declarations in the public headers ----------------------------------
	decls=$(api_decls "${dirs[@]}")
	declared=$( (printf '%s\n' "$decls" | awk -F'\t' 'NF { print $1 }'
		printf '%s' "${internals[$lib]:-}") | awk NF | sort -u)
	where() { printf '%s\n' "$decls" | awk -F'\t' -v n="$1" '$1 == n { print $2; exit }'; }
	hdrdirs=$(for d in "${dirs[@]}"; do if [[ $d == "$root"/* ]]; then printf '%s ' "$(rel "$d")"; fi; done)
	hdrdirs=${hdrdirs% }
	[ -n "$hdrdirs" ] || hdrdirs="include/"

	# exported, not listed: only when the script lets more through than it names
	for n in $(comm -23 <(printf '%s\n' "$names" | awk NF) <(printf '%s\n' "$listed")); do
		libfail "$sofile exports $n, which $symrel does not list by name: add \"	$n;\" to $symrel" \
			"(or make it static / drop its GIONG_API if it is not meant to be public)"
	done
	# listed, not exported: removed, renamed, made static, or never declared GIONG_API
	for n in $(comm -13 <(printf '%s\n' "$names" | awk NF) <(printf '%s\n' "$listed")); do
		w=$(where "$n")
		if [ -n "$w" ]; then
			libfail "$symrel lists $n, which $sofile does not export: it is declared GIONG_API at" \
				"$(rel "${w%:*}"):${w##*:} but not defined (or defined static) in the library's" \
				"sources; define it, or remove it from that header and from $symrel"
		else
			libfail "$symrel lists $n, which $sofile does not export and no header in" \
				"$hdrdirs declares GIONG_API (removed or renamed?):" \
				"remove \"$n;\" from $symrel (or add the new name), or declare it GIONG_API" \
				"in the library's public header"
		fi
	done
	# declared GIONG_API, not listed: the linker hides it (local: *)
	missing=$(comm -23 <(printf '%s\n' "$declared" | awk NF) <(printf '%s\n' "$listed"))
	for n in $missing; do
		w=$(where "$n")
		f=${w%:*} inc=
		for d in "${dirs[@]}"; do if [[ $f == "$d"/* ]]; then inc=${f#"$d"/}; fi; done
		libfail "$(rel "$f"):${w##*:} declares $n GIONG_API, but $symrel does not list it," \
			"so $sofile does not export it: add \"	$n;\" to $symrel (under /* <$inc> */)"
	done
	# exported, not declared GIONG_API in this library's headers
	for n in $(comm -23 <(printf '%s\n' "$names" | awk NF) <(printf '%s\n' "$declared")); do
		libfail "$sofile exports $n, but no public header of it ($hdrdirs) declares it" \
			"GIONG_API: declare it there, or remove it from $symrel and make it static"
	done

	if [ "$lib_ok" -eq 1 ]; then
		echo "ok   $sofile: $count giong_ symbols, the same as $symrel lists ($nodes)" \
			"and its headers declare GIONG_API"
	fi
done
if [ $# -ne 0 ]; then
	echo "check-exports.sh: arguments after the manifest come in threes: LIB FILE SONAME"
	exit 2
fi
exit $status
