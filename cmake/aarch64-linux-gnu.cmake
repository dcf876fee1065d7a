# CMake toolchain file: giong cross-built for AArch64 Linux with Debian's gcc-aarch64-linux-gnu,
# its tests run under qemu-user (qemu-user-static), which has no io_uring: only the tests that
# need no ring can pass there (scripts/aarch64-check.sh runs those).
#
#   cmake -S . -B build-arm64 --toolchain cmake/aarch64-linux-gnu.cmake \
#     -DGIONG_AARCH64_SYSROOT=/path/to/sysroot -DGIONG_BUILD_NET=OFF ...
#
# GIONG_AARCH64_SYSROOT: where the arm64 -dev packages giong needs (liburing-dev, libcmocka-dev
# and their libraries) are unpacked with dpkg-deb -x, so that nothing arm64 is installed; the
# C library is the cross one, libc6-dev-arm64-cross, in /usr/aarch64-linux-gnu. Leave it empty
# when those packages are installed for arm64 (dpkg --add-architecture arm64).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)

set(GIONG_AARCH64_SYSROOT "" CACHE PATH "Unpacked arm64 -dev packages (dpkg-deb -x)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GIONG_AARCH64_SYSROOT)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu ${GIONG_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads only the arm64 .pc files, and prefixes their paths with the sysroot.
if(GIONG_AARCH64_SYSROOT)
  set(ENV{PKG_CONFIG_LIBDIR} "${GIONG_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${GIONG_AARCH64_SYSROOT}")
  # The libraries' own dependencies (libcmocka.so.0, liburing.so.2) at link time.
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${GIONG_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${GIONG_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
else()
  set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
endif()
