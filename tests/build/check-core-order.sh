#!/usr/bin/env bash
# check-core-order.sh [-v] [--lib NAME] [--exported LIST] NM UPCALLS OBJECT...|@LIST - a
# library's files call each other in one direction (core's by default; --lib http for http's).
#
# The objects come in the order of the library's source list (GIONG_CORE_SOURCES in
# libgiong-core/CMakeLists.txt, GIONG_HTTP_SOURCES in libgiong-http's), which is its call
# order: each file may call only functions defined by the files before it. UPCALLS is a
# comma-separated list of the functions a lower file may still call up (documented where
# they are defined: core's giong__active_put, http's giong__http_pipeline_cache_free). Every
# other call to a later file fails, naming the caller, the callee and the symbol. Calls
# through a function pointer (http's protocol table) are not symbol references and are not
# seen. --exported LIST (comma-separated) names internals the library exports to the other
# libraries (the fault plan of a GIONG_FAULTS=ON build) or that only its white-box tests
# call, which no other file of the library need call. With -v, prints every edge:
#   bash tests/build/check-core-order.sh -v nm giong__active_put build/libgiong-core/CMakeFiles/giong-core-obj.dir/src/*.o
set -euo pipefail
verbose=0 lib=core
exported=,
while [ $# -gt 0 ]; do
	case $1 in
	-v) verbose=1; shift ;;
	--lib) lib=$2; shift 2 ;;
	--exported) exported="$exported$2,"; shift 2 ;;
	*) break ;;
	esac
done
nm=$1 upcall_list=$2 upcalls=",$2,"
shift 2
# "@FILE": the objects, one per line (what CMake writes from $<TARGET_OBJECTS>).
if [ $# -eq 1 ] && [[ $1 == @* ]]; then
	mapfile -t objs <"${1#@}"
	set -- "${objs[@]}"
fi
[ $# -ge 2 ] || { echo "FAIL expected $lib's object files, got $#: $*"; exit 1; }
declare -A rank definer
i=0
declare -A used_outside
for o in "$@"; do
	f=$(basename "$o" .o)
	r=$i
	[[ $o == *.S.o ]] && r=-1 # the context switch in assembly: a leaf below everything
	while read -r sym; do
		rank[$sym]=$r
		definer[$sym]=$f
	done < <("$nm" --defined-only -g "$o" | awk '$2 == "T" { print $3 }')
	i=$((i + 1))
done
status=0 edges=0 up=0
i=0
for o in "$@"; do
	f=$(basename "$o" .o)
	[[ $o == *.S.o ]] && { i=$((i + 1)); continue; }
	while read -r sym; do
		[ -n "${rank[$sym]:-}" ] || continue # liburing, libc
		edges=$((edges + 1))
		used_outside[$sym]=1
		r=${rank[$sym]}
		if [ "$r" -gt "$i" ]; then
			if [[ $upcalls == *",$sym,"* ]]; then
				up=$((up + 1))
				[ $verbose -eq 1 ] && echo "up   $f -> ${definer[$sym]} $sym (allowed)"
			else
				echo "FAIL $f calls up into ${definer[$sym]}: $sym (move the function, or document it as an upcall)"
				status=1
			fi
		elif [ "$r" -eq "$i" ]; then
			: # a call inside the file
		elif [ $verbose -eq 1 ]; then
			echo "down $f -> ${definer[$sym]} $sym"
		fi
	done < <("$nm" -u "$o" | awk '{ print $NF }' | sort -u)
	i=$((i + 1))
done
# An internal function no other file calls should be static.
for sym in "${!definer[@]}"; do
	if [[ $sym == giong__* ]] && [ -z "${used_outside[$sym]:-}" ] && [[ $exported != *",$sym,"* ]]; then
		echo "FAIL ${definer[$sym]} defines $sym, which no other file of $lib calls: make it static"
		status=1
	fi
done
[ $status -eq 0 ] && echo "ok   $# files, $edges calls between them, all downwards but $up to the documented upcall(s) ($upcall_list)"
exit $status
