#!/usr/bin/env bash
# scripts/kernel-vm.sh [CTEST ARGS...] - run a build tree's tests in a QEMU guest booted on
# Debian 12's own kernel (6.1), the kernel most Debian 12 users run. scripts/check kernel runs it.
#
# Nothing is installed on the host: the kernel package is fetched with apt-get download and
# unpacked into $GIONG_VM_DIR (build-kernel/). The guest's userland is the host's own / shared
# read-only over 9p; the source tree (with its build directories) is shared read-write at the
# same path, so CMake's absolute paths work; /tmp is a fresh ext4 disk (tmpfs behaves unlike
# the host's /tmp). The guest prints its uname -r and the ring tier giong gets, runs
#   ctest --test-dir $GIONG_VM_BUILD -LE "$GIONG_VM_EXCLUDE" [CTEST ARGS...]
# (labels that compile code stay on the host: 35x slower emulated), and exits with ctest's
# status. Without hardware KVM (these machines have kvm_pvm, which cannot boot a stock
# kernel) QEMU emulates (TCG); real KVM is used where there is one.
#
# Environment:
#   GIONG_VM_BUILD    the build tree to test (default build), configured and built already
#   GIONG_VM_DIR      where the kernel, initramfs and disk live (default build-kernel)
#   GIONG_VM_KERNEL   a kernel package name (default: what linux-image-amd64 depends on)
#   GIONG_VM_TIMEOUT  seconds before the guest is killed (default 1500)
#   GIONG_VM_SMP      guest CPUs (default: the host's, at most 4)
#   GIONG_VM_ENV      "NAME=value ..." set for ctest (or GIONG_VM_RUN) in the guest
#                     (GIONG_RING_TIER=coop, say)
#   GIONG_VM_RUN      a command the guest runs instead of ctest (below)
#   GIONG_VM_EXCLUDE  the labels left out in the guest, a ctest regex (default
#                     '^(build|install|tls|tools)$': tls is user space over net's streams, with
#                     no ring use of its own, and its RSA and ECDSA handshakes are 35x slower
#                     emulated; tools are the programs end to end, curl-driven, 20 s on the
#                     host and over ten minutes emulated, on ring paths the fs, net and http
#                     tests cover; 'build|install' runs them). Anchored: label ktls (kernel
#                     TLS, net.ktls_kernel) runs; tls_openssl and tls_wolfssl tests are tls too.
#   Kernel TLS: the guest loads tls.ko and its crypto modules (optional: one missing or
#   refused is reported); scripts/kernel-vm.sh -L ktls runs those tests alone.
#
# One command in place of ctest: GIONG_VM_RUN="COMMAND ARGS..." (bash syntax, run in the source
# tree, its output through a pipe like ctest's), for measurements that need the guest's kernel:
#   GIONG_VM_RUN="bench/load/ktls_guest.sh" scripts/kernel-vm.sh
# The exit status is then the command's; CTEST ARGS are refused with it.
#
# Exit status: ctest's in the guest (GIONG_VM_RUN's command's with it); 3 when the guest could
# not be started or said nothing (a missing tool or package, a boot that failed or timed out):
# never a silent pass.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$(realpath -m "${GIONG_VM_BUILD:-build}")
vmdir=$(realpath -m "${GIONG_VM_DIR:-build-kernel}")
timeout_s=${GIONG_VM_TIMEOUT:-1500}
smp=${GIONG_VM_SMP:-$(nproc)}
[ "$smp" -gt 4 ] && smp=4

cannot() {
	echo "kernel: cannot start the guest: $*" >&2
	exit 3
}

for tool in qemu-system-x86_64 cpio xz dpkg-deb mkfs.ext4 timeout; do
	command -v "$tool" >/dev/null || cannot "$tool is missing (scripts/install-deps installs it)"
done
busybox=$(command -v busybox || true)
# shellcheck disable=SC2015 # either test failing is the same refusal
[ -n "$busybox" ] && file -L "$busybox" | grep -q 'statically linked' ||
	cannot "a static busybox is missing (apt-get install busybox-static)"
# shellcheck disable=SC2015 # either test failing is the same refusal
[ -f "$build/CTestTestfile.cmake" ] && [ -x "$build/bin/ring_info" ] ||
	cannot "$build is not a built tree (cmake -S . -B build && cmake --build build)"
case $build/ in
"$src"/*) ;;
*) cannot "$build must be inside the source tree $src (it is shared with the guest from there)" ;;
esac
[ -z "${GIONG_VM_RUN:-}" ] || [ $# -eq 0 ] || cannot "GIONG_VM_RUN takes no ctest arguments ($*)"
mkdir -p "$vmdir"

# --- the kernel: Debian's package, unpacked, never installed -----------------------------------
pkg=${GIONG_VM_KERNEL:-}
if [ -z "$pkg" ]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	fi
	[ -n "$pkg" ] || cannot "no Debian kernel package found (apt-cache depends linux-image-amd64 names none: run apt-get update)"
fi
kroot=$vmdir/$pkg
if [ ! -d "$kroot/boot" ]; then
	rm -rf "$vmdir/download" "$kroot"
	mkdir -p "$vmdir/download"
	chmod 777 "$vmdir/download" # apt-get download drops to the _apt user where it can
	(cd "$vmdir/download" && apt-get download "$pkg" >/dev/null 2>&1) ||
		cannot "apt-get download $pkg failed"
	dpkg-deb -x "$vmdir"/download/"$pkg"_*.deb "$kroot.tmp" && mv "$kroot.tmp" "$kroot"
	rm -rf "$vmdir/download"
fi
kver=${pkg#linux-image-}
vmlinuz=$kroot/boot/vmlinuz-$kver
[ -f "$vmlinuz" ] || cannot "$vmlinuz is not in $pkg"

# The compressed kernel spends ~5 s decompressing itself under emulation: boot the ELF inside
# it (an xz stream) through its PVH entry instead.
vmlinux=$vmdir/vmlinux-$kver
if [ ! -s "$vmlinux" ]; then
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1 || true)
	[ -n "$off" ] || cannot "no xz stream in $vmlinuz"
	tail -c +$((off + 1)) "$vmlinuz" | xz -dc --single-stream >"$vmlinux.tmp" 2>/dev/null || true
	file "$vmlinux.tmp" | grep -q ELF || cannot "could not unpack the kernel ELF from $vmlinuz"
	mv "$vmlinux.tmp" "$vmlinux"
fi

# --- the initramfs: busybox and the modules a 9p root and an ext4 /tmp need ---------------------
modules=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache
	9pnet 9pnet_virtio 9p virtio_blk crc16 mbcache jbd2 crc32c_generic ext4)
# Kernel TLS (net.ktls_kernel, issue 29): tls.ko and the crypto it asks for (gcm(aes),
# rfc7539(chacha20,poly1305)), which the guest cannot autoload (no modules.dep, no modprobe in
# the initramfs), in dependency order. Optional: one that is missing or refused (the CPU-specific
# ones may be, under TCG) is reported and the boot goes on; the tests that need it say so.
optional=(gf128mul ghash-generic ctr gcm cryptd crypto_simd aesni-intel ghash-clmulni-intel
	libchacha chacha_generic chacha-x86_64 libpoly1305 poly1305_generic poly1305-x86_64
	chacha20poly1305 tls)
initrd=$vmdir/initrd-$kver.cpio.gz
if [ ! -s "$initrd" ] || [ "$0" -nt "$initrd" ]; then
	ird=$vmdir/initrd.d
	rm -rf "$ird"
	mkdir -p "$ird"/{bin,dev,proc,sys,mnt,lib/modules}
	cp "$busybox" "$ird/bin/busybox"
	ln -s busybox "$ird/bin/sh"
	# stage MODULE LIST: copy MODULE's .ko into the initramfs and append it to LIST (the order
	# the guest loads them in); 1 when the package has it neither as a file nor built in.
	stage() {
		local ko
		ko=$(find "$kroot/lib/modules/$kver" -name "$1.ko" -o -name "$1.ko.xz" | head -1)
		if [ -z "$ko" ]; then
			grep -q "/$1.ko\$" "$kroot/lib/modules/$kver/modules.builtin" 2>/dev/null && return 0
			return 1
		fi
		case $ko in
		*.xz) xz -dc "$ko" >"$ird/lib/modules/$1.ko" ;;
		*) cp "$ko" "$ird/lib/modules/$1.ko" ;;
		esac
		echo "$1" >>"$ird/lib/modules/$2"
	}
	for m in "${modules[@]}"; do
		stage "$m" order || cannot "module $m is neither in $pkg nor built in"
	done
	: >"$ird/lib/modules/optional"
	for m in "${optional[@]}"; do
		stage "$m" optional || echo "$m" >>"$ird/lib/modules/absent"
	done
	cat >"$ird/init" <<'EOF'
#!/bin/sh
# The guest's first process: load the modules, mount the host's / (read-only) and the source
# tree (read-write) over 9p and a scratch ext4 as /tmp, then run the job in a chroot.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
ip link set lo up || echo "guest: no loopback"
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m.ko || echo "guest: insmod $m failed"; done
for m in $(cat /lib/modules/absent 2>/dev/null); do echo "guest: optional module $m: not in the kernel package"; done
for m in $(cat /lib/modules/optional); do
	err=$(insmod /lib/modules/$m.ko 2>&1) || echo "guest: optional module $m not loaded: ${err##*: }"
done
set -- $(cat /proc/cmdline)
for a; do case $a in giong.src=*) src=${a#giong.src=} ;; giong.job=*) job=${a#giong.job=} ;; esac; done
opts=trans=virtio,version=9p2000.L,msize=524288,cache=none
mount -t 9p -o ro,$opts hostroot /mnt || echo "guest: cannot mount the host's /"
mount -t ext4 /dev/vda /mnt/tmp || echo "guest: cannot mount /tmp"
chmod 1777 /mnt/tmp
# After /tmp: a source tree under /tmp (a CI clone) goes on top of the scratch disk.
mkdir -p "/mnt$src"
mount -t 9p -o rw,$opts srctree "/mnt$src" || echo "guest: cannot mount $src"
mount -t proc proc /mnt/proc
mount -t sysfs sys /mnt/sys
mount -t devtmpfs dev /mnt/dev
mkdir -p /mnt/dev/pts /mnt/dev/shm
mount -t devpts devpts /mnt/dev/pts
mount -t tmpfs shm /mnt/dev/shm
ln -sf /proc/self/fd /mnt/dev/fd
ln -sf /proc/self/fd/0 /mnt/dev/stdin
ln -sf /proc/self/fd/1 /mnt/dev/stdout
ln -sf /proc/self/fd/2 /mnt/dev/stderr
ulimit -n 1048576
chroot /mnt /bin/bash "$job"
echo "GIONG-VM-EXIT=$?"
sync
poweroff -f
EOF
	chmod +x "$ird/init"
	(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$ird"
fi

# --- a fresh /tmp and the job ----------------------------------------------------------------
disk=$vmdir/tmp.img
rm -f "$disk"
truncate -s 4G "$disk"
mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$disk"

job=$vmdir/job.sh
{
	echo '#!/bin/bash'
	echo "# written by scripts/kernel-vm.sh: what the guest runs, in a chroot of the host's /"
	echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp'
	echo '# the guest'"'"'s writable disk (its /var/tmp is the host'"'"'s, read-only)'
	echo 'export TMPDIR=/tmp'
	echo "cd $(printf %q "$src")"
	# shellcheck disable=SC2016 # expanded in the guest
	echo 'echo "guest: kernel $(uname -r) ($(uname -v))"'
	for kv in ${GIONG_VM_ENV:-}; do
		echo "export $(printf %q "$kv")"
		echo "echo 'guest: $kv'"
	done
	echo "$(printf %q "$build")/bin/ring_info --ops /tmp 2>&1 | sed 's/^/guest: /'"
	# kTLS: the module and the AEAD drivers the kernel picked (aesni or generic under TCG).
	cat <<'JOB'
grep -qw tls /proc/modules && echo "guest: kTLS: tls module loaded" || echo "guest: kTLS: no tls module"
JOB
	# Through a pipe: the console is a terminal, and ctest would colour it.
	if [ -n "${GIONG_VM_RUN:-}" ]; then
		echo "{ $GIONG_VM_RUN"
		echo '} 2>&1 | cat'
	else
		printf 'ctest --test-dir %q --output-on-failure -LE %q' "$build" "${GIONG_VM_EXCLUDE:-^(build|install|tls|tools)\$}"
		printf ' %q' "$@"
		echo ' 2>&1 | cat'
	fi
	cat <<'JOB'
status=${PIPESTATUS[0]}
# What the tests did through kTLS (the counters that moved; none when no test used it).
[ -r /proc/net/tls_stat ] && awk '$2 != 0 { print "guest: tls_stat " $1 " " $2 }' /proc/net/tls_stat
exit "$status"
JOB
}>"$job"

# shellcheck disable=SC2054 # QEMU's option value has commas
accel=(-accel tcg,thread=multi -cpu max)
if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	accel=(-enable-kvm -cpu host)
fi
log=$vmdir/console.log
echo "kernel: booting $pkg (${accel[*]}), $smp CPUs; console in $log"
start=$(date +%s)
set +e
timeout -k 10 "$timeout_s" qemu-system-x86_64 "${accel[@]}" -machine pc -smp "$smp" -m 3072 \
	-nographic -nodefaults -no-user-config -no-reboot -monitor none -serial stdio \
	-kernel "$vmlinux" -initrd "$initrd" \
	-append "console=ttyS0 quiet loglevel=3 panic=-1 giong.src=$src giong.job=$job" \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$src,mount_tag=srctree,security_model=none,multidevs=remap" \
	-drive "file=$disk,if=virtio,format=raw,cache=unsafe" \
	</dev/null 2>&1 | tr -d '\r' | tee "$log"
qemu_status=${PIPESTATUS[0]}
set -e
rm -f "$disk"
echo "kernel: the guest ran $(($(date +%s) - start)) s"
status=$(sed -n 's/^GIONG-VM-EXIT=\([0-9]*\).*/\1/p' "$log" | tail -1)
if [ -z "$status" ]; then
	[ "$qemu_status" -eq 124 ] && cannot "the guest did not finish within $timeout_s s ($log)"
	cannot "the guest ended without running the tests (QEMU exit $qemu_status; $log)"
fi
exit "$status"
