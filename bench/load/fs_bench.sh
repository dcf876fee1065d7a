#!/usr/bin/env bash
# fs_bench.sh - build libgiong-fs (Release) and bench/load/fs_bench.c, then run it.
#
#   bench/load/fs_bench.sh [fs_bench options: -r ROUNDS -n OPS -d DIR -f FILTER]
#
# Builds into build/bench-fs/ at the top of the tree (BUILD=... to change it).
# Needs liburing-dev and libuv1-dev. The data set (64 MiB + 1024 small files) goes
# to /tmp/giong-fs-bench unless -d says otherwise; fs_bench keeps it in the page
# cache with a helper process that maps and mlocks it, and checks residency with
# mincore() before every round.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build/bench-fs}

cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGIONG_BUILD_TESTS=OFF \
	-DGIONG_BUILD_TOOLS=OFF -DGIONG_INSTALL=OFF >/dev/null
cmake --build "$build" --target giong-fs -j"$(nproc)" >/dev/null
${CC:-cc} -O2 -g -std=c17 -Wall -Wextra \
	-I"$top/libgiong-core/include" -I"$build/libgiong-core/include" -I"$top/libgiong-fs/include" \
	"$top/bench/load/fs_bench.c" -o "$build/fs_bench" \
	-L"$build/lib" -Wl,-rpath,"$build/lib" -lgiong-fs -lgiong-core -luring -luv -lpthread
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
	"$(nproc) CPUs; gcc $(${CC:-cc} -dumpfullversion); liburing $(pkg-config --modversion liburing);" \
	"libuv $(pkg-config --modversion libuv)"
exec "$build/fs_bench" "$@"
