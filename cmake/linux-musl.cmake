# Shared part of cmake/<arch>-linux-musl.cmake: the jar's linux-<arch>-musl
# library (Alpine and other musl distributions), compiled with Zig for musl
# (cmake/zig.cmake) against the OpenSSL 3.5 that scripts/openssl --arch
# <arch>-musl builds with the same compiler. The bundled flavour alone: the
# system flavours link a distribution's libssl, which is glibc's here.
# The library is linked dynamically against musl's libc (Zig names it
# libc.so, which musl's loader takes as itself); the native tests are static
# musl programs, so that they run without a musl loader on the host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${TB_MUSL_ARCH})
set(TB_ZIG_TARGET ${TB_MUSL_ARCH}-linux-musl)
set(TB_OPENSSL_ARCH ${TB_MUSL_ARCH}-musl)
include(${CMAKE_CURRENT_LIST_DIR}/zig.cmake)
set(TB_SYSTEM_FLAVOURS OFF CACHE BOOL "musl: the bundled flavour only")
set(TB_BUILD_PROBE OFF CACHE BOOL "musl: no probe (it is glibc's, with libbpf)")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_SKIP_BUILD_RPATH ON)
