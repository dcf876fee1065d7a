#!/usr/bin/env bash
# check-layering.sh MANIFEST - a library's sources and headers include only giong headers of
# itself and of the libraries below it (net -> core, http -> net -> core, ...), and never a
# path into another library's directory (another library's private headers).
set -euo pipefail
declare -A allowed owner
files=()
while read -r kind lib rest; do
	case $kind in
	lib) allowed[$lib]=" $rest " ;;
	hdr) owner[$rest]=$lib ;;
	src) files+=("$lib $rest") ;;
	esac
done <"$1"

status=0
checked=0
for entry in "${files[@]}"; do
	lib=${entry%% *}
	file=${entry#* }
	checked=$((checked + 1))
	while IFS=: read -r line text; do
		if [[ $text =~ libgiong- ]]; then
			echo "FAIL $file:$line: reaches into another library's tree: $text"
			status=1
			continue
		fi
		[[ $text =~ [\<\"](giong/[^\>\"]+)[\>\"] ]] || continue
		hdr=${BASH_REMATCH[1]}
		own=${owner[$hdr]:-}
		if [ -z "$own" ]; then
			echo "FAIL $file:$line: <$hdr> is not a header of any built giong library"
			status=1
		elif [[ ${allowed[$lib]} != *" $own "* ]]; then
			echo "FAIL $file:$line: $lib may not include <$hdr> (it belongs to $own;" \
				"$lib may use:${allowed[$lib]% })"
			status=1
		fi
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*libgiong-|giong/)' "$file" || true)
done
[ "$status" -eq 0 ] && echo "ok   $checked files include only their own layer and the layers below"
exit $status
