#!/usr/bin/env bash
# check-headers.sh MANIFEST CC WORKDIR - every public header compiles on its own, twice in a
# row (include guard), as strict C11: -std=c11 -Wpedantic -Wall -Wextra -Werror.
set -euo pipefail
manifest=$1 cc=$2 work=$3
mkdir -p "$work"
incs=()
hdrs=()
while read -r kind lib rest; do
	case $kind in
	inc) incs+=("-I$rest") ;;
	hdr) hdrs+=("$rest") ;;
	esac
done <"$manifest"

status=0
for h in "${hdrs[@]}"; do
	tu="$work/$(printf '%s' "$h" | tr '/.' '__').c"
	printf '#include <%s>\n#include <%s>\ntypedef int giong__header_check;\n' "$h" "$h" >"$tu"
	if ! out=$("$cc" -std=c11 -Wpedantic -Wall -Wextra -Werror -fsyntax-only "${incs[@]}" "$tu" 2>&1); then
		echo "FAIL <$h> does not compile alone:"
		echo "$out"
		status=1
	fi
done
[ "$status" -eq 0 ] && echo "ok   ${#hdrs[@]} public headers compile alone as C11 -Wpedantic -Werror"
exit $status
