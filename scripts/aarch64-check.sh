#!/usr/bin/env bash
# scripts/aarch64-check.sh - the AArch64 fiber switch, cross-built and run under qemu-user
# (scripts/check aarch64).
#
# libgiong-core and its tests are cross-built by the project's CMake with
# cmake/aarch64-linux-gnu.cmake (Debian's gcc-aarch64-linux-gnu, warnings as errors) against
# Debian's arm64 liburing and libcmocka (their .debs unpacked into $B/sysroot: nothing arm64 is
# installed), and run under qemu-aarch64-static. qemu-user has no io_uring (ENOSYS), so the
# runtime's tests run on the epoll tier core falls back to, and all must pass; those that need
# no ring must have run: core.context, core.stack_overflow, core.timer_wheel, core.error, and
# the build.* hygiene tests (on the arm64 objects). Twice:
#
#   plain  the default flags
#   bti    -mbranch-protection=standard (BTI + pac-ret). Every object of libgiong-core must
#          carry "AArch64 feature: BTI, PAC" (readelf -n), switch.S's included. Then the
#          four tests again, with BTI enforced: Debian 12's crt1.o, crti.o and crtbegin*.o
#          carry no note, and the linker ANDs the notes of its inputs, so an executable or a
#          shared library linked with them has no BTI and qemu-user would not guard its
#          pages. So each test is linked here with core's objects into a shared object
#          without startup files (-nostartfiles), which keeps the note, and a small launcher
#          calls its main: ld.so guards the object's pages (mprotect PROT_BTI) because qemu's
#          default cpu (max) has BTI; it has pointer authentication too. A probe first shows
#          that the guard is enforced: a blr to a function without a landing pad must die of
#          SIGILL.
#
# Prints pass/FAIL per step and a last PASS or FAIL line; exits 0, 1, or 77 (SKIP, with the
# reason) only when the cross tools or the arm64 packages cannot be had here.
#
# Environment: AARCH64_BUILD (build-aarch64), JOBS (nproc), AARCH64_TIMEOUT per test (120 s).
# As root, missing packages are installed (gcc-aarch64-linux-gnu, qemu-user-static), and arm64
# is added to dpkg's architectures (for apt-get download) if it is not there.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

B=${AARCH64_BUILD:-build-aarch64}
JOBS=${JOBS:-$(nproc)}
TIMEOUT=${AARCH64_TIMEOUT:-120}
CC=aarch64-linux-gnu-gcc
READELF=aarch64-linux-gnu-readelf
QEMU=qemu-aarch64-static
LIBC_PREFIX=/usr/aarch64-linux-gnu # libc6-arm64-cross: the guest's ld.so and libc
NO_RING_TESTS=(context stack_overflow timer_wheel error)
DEBS=(libcmocka0 libcmocka-dev liburing2 liburing-dev)

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}

# --- the cross tools ----------------------------------------------------------------------------
if ! command -v "$CC" >/dev/null || ! command -v "$QEMU" >/dev/null; then
	pkgs=(gcc-aarch64-linux-gnu qemu-user-static)
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		skip "$CC or $QEMU missing, and not root: apt-get install ${pkgs[*]}"
	fi
	echo "installing ${pkgs[*]}"
	apt_log=$(mktemp)
	apt_install() {
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"${pkgs[@]}" </dev/null >"$apt_log" 2>&1
	}
	if ! apt_install && ! { apt-get update -qq </dev/null >/dev/null 2>&1 && apt_install; }; then
		tail -5 "$apt_log"
		rm -f "$apt_log"
		skip "apt-get could not install ${pkgs[*]}"
	fi
	rm -f "$apt_log"
fi
"$CC" --version | head -1
"$QEMU" --version | head -1

# --- arm64 liburing and libcmocka, unpacked, not installed ----------------------------------------
SYSROOT=$PWD/$B/sysroot
SYSLIB=$SYSROOT/usr/lib/aarch64-linux-gnu
if [ ! -e "$SYSROOT/.complete" ]; then
	rm -rf "$B/debs" "$SYSROOT"
	mkdir -p "$B/debs" "$SYSROOT"
	download() { (cd "$B/debs" && apt-get download -qq "${DEBS[@]/%/:arm64}" 2>&1); }
	if ! out=$(download); then
		if ! dpkg --print-foreign-architectures | grep -qx arm64; then
			[ "$(id -u)" -eq 0 ] ||
				skip "arm64 is not a dpkg architecture, and not root: dpkg --add-architecture arm64 && apt-get update"
			echo "adding arm64 to dpkg's architectures (for apt-get download only)"
			if ! dpkg --add-architecture arm64 || ! apt-get update -qq </dev/null >/dev/null 2>&1; then
				skip "dpkg --add-architecture arm64 && apt-get update failed"
			fi
		elif [ "$(id -u)" -eq 0 ]; then
			apt-get update -qq </dev/null >/dev/null 2>&1
		fi
		out=$(download) || { echo "$out"; skip "apt-get download ${DEBS[*]/%/:arm64} failed"; }
	fi
	for deb in "$B"/debs/*_arm64.deb; do
		dpkg-deb -x "$deb" "$SYSROOT" || fail "dpkg-deb -x $deb"
	done
	for so in libcmocka.so liburing.so; do
		[ -e "$SYSLIB/$so" ] || fail "$so missing from the unpacked .debs"
	done
	touch "$SYSROOT/.complete"
fi
export LD_LIBRARY_PATH=$SYSLIB QEMU_LD_PREFIX=$LIBC_PREFIX # for the guest's ld.so

ulimit -c 0 # the tests' and the probe's deliberate crashes: no qemu core files
t0=$SECONDS
rc=0

# cmake_variant NAME C_FLAGS: configure and build core and its tests in $B/NAME.
cmake_variant() {
	cmake -S . -B "$B/$1" --toolchain cmake/aarch64-linux-gnu.cmake \
		-DGIONG_AARCH64_SYSROOT="$SYSROOT" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGIONG_WERROR=ON \
		-DCMAKE_C_FLAGS="$2" -DCMAKE_ASM_FLAGS="$2" \
		-DGIONG_BUILD_NET=OFF -DGIONG_BUILD_FS=OFF -DGIONG_BUILD_HTTP=OFF -DGIONG_BUILD_TLS=OFF \
		-DGIONG_BUILD_TOOLS=OFF -DGIONG_INSTALL=OFF >"$B/$1.configure.log" 2>&1 ||
		{ tail -20 "$B/$1.configure.log"; return 1; }
	cmake --build "$B/$1" -j"$JOBS" >"$B/$1.build.log" 2>&1 ||
		{ grep -E -A5 'error|warning' "$B/$1.build.log" | head -40; return 1; }
}

# ctest_variant NAME: the suite under qemu (the epoll tier); the no-ring tests must have run
# and passed. Left out: core.epoll_reads, which finds its helper threads inside a system call
# through /proc/PID/task/*/syscall: under qemu-user that file shows the emulator's own
# (x86-64) calls, never the program's AArch64 ones (it runs on x86-64, and on the epoll tier
# under ASan and TSan there).
ctest_variant() {
	local log=$B/$1.ctest.log t ok=0
	ctest --test-dir "$B/$1" -j"$JOBS" --timeout "$TIMEOUT" --output-on-failure \
		-E '^core\.epoll_reads$' >"$log" 2>&1 ||
		ok=1
	grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" | sed 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: /      /'
	for t in "${NO_RING_TESTS[@]}"; do
		grep -Eq "Test +#[0-9]+: core\.$t \.+ +Passed" "$log" ||
			{ echo "FAIL  core.$t did not pass ($log)"; ok=1; }
	done
	[ $ok -eq 0 ] || { grep -E -B2 -A30 'Failed|\*\*\*' "$log" | head -80; return 1; }
	echo "pass  $1: $(grep -E 'tests passed' "$log"); skipped:" \
		"$(grep -c '(Skipped)' "$log")"
}

notes() { "$READELF" -n "$1" 2>/dev/null | sed -n 's/.*AArch64 feature: //p' | head -1; }

# --- plain ----------------------------------------------------------------------------------------
echo "--- plain"
cmake_variant plain "" || fail "the plain build ($B/plain.*.log)"
ctest_variant plain || rc=1
n=$(notes "$B/plain/libgiong-core/CMakeFiles/giong-core-obj.dir/src/arch/aarch64/switch.S.o")
if [ -z "$n" ]; then
	echo "pass  plain switch.S.o: no property note"
else
	echo "FAIL  plain switch.S.o claims '$n' in a build without branch protection"
	rc=1
fi

# --- -mbranch-protection=standard ----------------------------------------------------------------
BP=-mbranch-protection=standard
# -mno-outline-atomics: by default GCC calls libgcc.a's __aarch64_* helpers for an atomic
# read-modify-write (core makes them), and Debian 12's carry no BTI note: linked into the
# shared objects below, they would turn BTI off there.
BP_FLAGS=("$BP" -mno-outline-atomics)
echo "--- $BP"
cmake_variant bti "${BP_FLAGS[*]}" || fail "the $BP build ($B/bti.*.log)"
mapfile -t core_objs <"$B/bti/tests/build/core-objects.txt"
[ ${#core_objs[@]} -gt 10 ] || fail "$B/bti/tests/build/core-objects.txt lists too few objects"
bad=0
for o in "${core_objs[@]}"; do
	n=$(notes "$o")
	[ "$n" = "BTI, PAC" ] || { echo "FAIL  ${o#"$PWD/"}: AArch64 feature: '${n:-none}', want 'BTI, PAC'"; bad=1; }
done
[ $bad -eq 0 ] && echo "pass  the ${#core_objs[@]} objects of libgiong-core (switch.S.o too): AArch64 feature: BTI, PAC"
rc=$((rc | bad))
n=$(notes "$B/bti/lib/libgiong-core.so")
echo "note  libgiong-core.so linked by CMake: AArch64 feature: ${n:-none} (Debian 12's crti.o and crtbeginS.o carry no note)"

# The probe: are a BTI-marked shared object's pages guarded here?
d=$B/bti/enforced
mkdir -p "$d"
cat >"$d/probe.S" <<-'EOF'
	.text
	.globl probe_pad, probe_nopad
	.type probe_pad, %function
	.type probe_nopad, %function
	probe_pad:
		hint #34 /* bti c */
		mov w0, #1
		ret
	probe_nopad:
		mov w0, #2
		ret
	.section .note.GNU-stack,"",%progbits
	.section .note.gnu.property, "a"
	.p2align 3
	.long 4, 16, 5 /* namesz, descsz, NT_GNU_PROPERTY_TYPE_0 */
	.asciz "GNU"
	.long 0xc0000000, 4, 1, 0 /* GNU_PROPERTY_AARCH64_FEATURE_1_AND: BTI */
EOF
cat >"$d/probe_main.c" <<-'EOF'
	int probe_pad(void), probe_nopad(void);
	int main(int argc, char **argv)
	{
		int (*volatile f)(void) = argc > 1 ? probe_nopad : probe_pad;

		(void)argv;
		return f() == 1 ? 0 : 3;
	}
EOF
# A subshell that waits (not one that execs): its report of the SIGILL goes to /dev/null.
run_probe() { (timeout 30 "$QEMU" "$d/probe" "$@"; exit $?) >/dev/null 2>&1; }
if "$CC" -shared -nostartfiles -o "$d/libprobe.so" "$d/probe.S" &&
	"$CC" -O2 -o "$d/probe" "$d/probe_main.c" "-L$d" -lprobe -Wl,-rpath,"\$ORIGIN"; then
	run_probe
	pad=$?
	run_probe nopad
	nopad=$?
	if [ $pad -eq 0 ] && [ $nopad -eq $((128 + 4)) ]; then
		echo "pass  BTI enforced: a blr to a function without a landing pad died of SIGILL"
	elif [ $pad -eq 0 ] && [ $nopad -eq 3 ]; then
		echo "note  BTI is NOT enforced here: the run below shows the code works with branch"
		echo "      protection on, not that every landing pad is in place"
	else
		echo "FAIL  the BTI probe: with a landing pad exit $pad, without exit $nopad"
		rc=1
	fi
else
	echo "FAIL  the BTI probe did not build"
	rc=1
fi

# The no-ring tests as BTI-marked shared objects, started by a launcher.
cat >"$d/launcher.c" <<-'EOF'
	int giong_test_main(void);
	int main(void)
	{
		return giong_test_main();
	}
EOF
cflags=(-std=c17 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -fPIC "${BP_FLAGS[@]}"
	-Ilibgiong-core/include "-I$B/bti/libgiong-core/include" -Ilibgiong-core/src -Iprivate
	-Itests/support "-I$SYSROOT/usr/include")
"$CC" "${cflags[@]}" -c "$d/launcher.c" -o "$d/launcher.o" || fail "the launcher"
for t in "${NO_RING_TESTS[@]}"; do
	log=$d/test_$t.log
	if ! "$CC" "${cflags[@]}" -Dmain=giong_test_main -c "tests/core/test_$t.c" -o "$d/test_$t.o" ||
		! "$CC" "${BP_FLAGS[@]}" -shared -nostartfiles -Wl,-z,defs -o "$d/libtest_$t.so" "$d/test_$t.o" \
			"${core_objs[@]}" "-L$SYSLIB" -lcmocka -luring -lm -pthread ||
		! "$CC" "${BP_FLAGS[@]}" -o "$d/test_$t" "$d/launcher.o" "-L$d" "-ltest_$t" \
			-Wl,-rpath,"\$ORIGIN" "-Wl,-rpath-link,$SYSLIB"; then
		echo "FAIL  core.$t: the BTI build"
		rc=1
		continue
	fi
	n=$(notes "$d/libtest_$t.so")
	if [ "$n" != "BTI, PAC" ]; then
		echo "FAIL  libtest_$t.so: AArch64 feature: '${n:-none}', want 'BTI, PAC'"
		rc=1
		continue
	fi
	st=0
	timeout "$TIMEOUT" "$QEMU" "$d/test_$t" >"$log" 2>&1 || st=$?
	if [ $st -eq 0 ]; then
		msg=$(sed -n 's/^\[  PASSED  \] //p' "$log")
		grep -q '^\[  SKIPPED \]' "$log" && msg="$msg; $(grep -c '^\[  SKIPPED \]' "$log") skipped ($log)"
		echo "pass  core.$t in libtest_$t.so (BTI, PAC): $msg"
	else
		echo "FAIL  core.$t in libtest_$t.so (exit $st): $log"
		tail -30 "$log"
		rc=1
	fi
done
if grep -q '^\[       OK \] test_pac_saved_lr' "$d/test_context.log" 2>/dev/null; then
	echo "pass  pointer authentication: a saved x30 is signed, a forged one does not resume a fiber"
else
	echo "note  test_pac_saved_lr did not pass or did not run (no pointer authentication?)"
fi

echo "aarch64: $((SECONDS - t0)) s"
[ $rc -eq 0 ] && echo "PASS" || echo "FAIL"
exit $rc
