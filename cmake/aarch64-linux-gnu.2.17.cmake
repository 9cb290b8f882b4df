# The jar's linux-aarch64 libraries, for glibc 2.17 and later, cross-built on
# this x86_64 host with Zig (the compiler of the linux-x86_64 ones, with its
# own aarch64 C library headers and link stubs). Nothing of this build runs
# here: no native tests or probe (the pom turns them off); tests/aarch64 runs
# the jar under qemu-user. The system flavour's libssl headers and libraries
# come from the arm64 root of scripts/aarch64 (Debian's libssl-dev:arm64,
# unpacked into the build cache), whose usr/include holds OpenSSL's alone.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(TB_ZIG_TARGET aarch64-linux-gnu.2.17)
set(TB_OPENSSL_ARCH aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/zig.cmake)

# try_compile re-reads this file: ask scripts/aarch64 once per CMake run.
if(NOT DEFINED ENV{TB_ARM64_ROOT})
  execute_process(COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/../scripts/aarch64 root
                  OUTPUT_VARIABLE _tb_root OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _tb_rc)
  if(NOT _tb_rc EQUAL 0 OR NOT IS_DIRECTORY "${_tb_root}")
    message(FATAL_ERROR "scripts/aarch64 root failed (${_tb_rc}); -Dtlsbridge.aarch64.skip=true builds x86_64 only")
  endif()
  set(ENV{TB_ARM64_ROOT} "${_tb_root}")
endif()
set(TB_ARM64_ROOT $ENV{TB_ARM64_ROOT})
set(OPENSSL_INCLUDE_DIR ${TB_ARM64_ROOT}/usr/include CACHE PATH "")
set(OPENSSL_SSL_LIBRARY ${TB_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/libssl.so CACHE FILEPATH "")
set(OPENSSL_CRYPTO_LIBRARY ${TB_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/libcrypto.so CACHE FILEPATH "")
# Debian keeps the per-arch openssl/configuration.h beside the others; -idirafter
# keeps the bundled flavour's own headers (-I) first.
set(CMAKE_C_FLAGS_INIT "-idirafter ${TB_ARM64_ROOT}/usr/include/aarch64-linux-gnu")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_SKIP_BUILD_RPATH ON)  # nothing of this build runs on the host: no RUNPATH into the cache
