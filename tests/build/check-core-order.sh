#!/usr/bin/env bash
# check-core-order.sh NM UPCALLS OBJECT...|@LIST - core's files call each other in one direction.
#
# The objects come in the order of GIONG_CORE_SOURCES (libgiong-core/CMakeLists.txt), which is
# core's call order: each file may call only functions defined by the files before it. UPCALLS
# is a comma-separated list of the functions a lower file may still call up (documented where
# they are defined; today only giong__active_put). Every other call to a later file fails,
# naming the caller, the callee and the symbol. --exported LIST (comma-separated) names
# internals core exports to the other libraries (the fault plan of a GIONG_FAULTS=ON build),
# which no other file of core need call. With -v, prints every edge of the graph:
#   bash tests/build/check-core-order.sh -v nm giong__active_put build/libgiong-core/CMakeFiles/giong-core-obj.dir/src/*.o
set -euo pipefail
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
exported=,
[ "${1:-}" = --exported ] && { exported=",$2,"; shift 2; }
nm=$1 upcall_list=$2 upcalls=",$2,"
shift 2
# "@FILE": the objects, one per line (what CMake writes from $<TARGET_OBJECTS>).
if [ $# -eq 1 ] && [[ $1 == @* ]]; then
	mapfile -t objs <"${1#@}"
	set -- "${objs[@]}"
fi
[ $# -ge 2 ] || { echo "FAIL expected core's object files, got $#: $*"; exit 1; }
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
		echo "FAIL ${definer[$sym]} defines $sym, which no other file of core calls: make it static"
		status=1
	fi
done
[ $status -eq 0 ] && echo "ok   $# files, $edges calls between them, all downwards but $up to the documented upcall(s) ($upcall_list)"
exit $status
