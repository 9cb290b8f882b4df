# The jar's linux-x86_64 libraries, for glibc 2.17 and later, built on this
# x86_64 host with Zig (not a cross build: the native tests, the probe and
# icount's harness run here, on the host's libssl).
set(TB_ZIG_TARGET x86_64-linux-gnu.2.17)
set(TB_OPENSSL_ARCH x86_64)
include(${CMAKE_CURRENT_LIST_DIR}/zig.cmake)
# The host's headers that the build uses besides the C library's (the system
# flavour's OpenSSL 3.0, the probe's libbpf, libelf and zlib), in a directory
# of their own: -I/usr/include would put the host's glibc 2.36 headers before
# Zig's 2.17 ones. -idirafter keeps the bundled flavour's OpenSSL (-I) first.
set(_tb_inc ${CMAKE_BINARY_DIR}/tb-host-include)
if(NOT EXISTS ${_tb_inc}/openssl/configuration.h AND EXISTS /usr/include/openssl/ssl.h)
  file(MAKE_DIRECTORY ${_tb_inc}/openssl)
  file(GLOB _tb_h /usr/include/openssl/*.h /usr/include/x86_64-linux-gnu/openssl/*.h)
  file(COPY ${_tb_h} DESTINATION ${_tb_inc}/openssl)
  foreach(_h bpf libelf.h gelf.h zlib.h zconf.h)
    if(EXISTS /usr/include/${_h})
      file(CREATE_LINK /usr/include/${_h} ${_tb_inc}/${_h} SYMBOLIC)
    endif()
  endforeach()
endif()
set(CMAKE_C_FLAGS_INIT "-idirafter ${_tb_inc}")
set(OPENSSL_INCLUDE_DIR ${_tb_inc} CACHE PATH "")
set(OPENSSL_SSL_LIBRARY /usr/lib/x86_64-linux-gnu/libssl.so CACHE FILEPATH "")
set(OPENSSL_CRYPTO_LIBRARY /usr/lib/x86_64-linux-gnu/libcrypto.so CACHE FILEPATH "")
# The programs of this build (native tests, probe) run here, on the host's
# libssl and libbpf, which need the host's glibc: their links may leave those
# libraries' newer glibc symbols to the host's loader. The shared libraries
# (what the jar carries) are checked by tests/packaging/libc.sh.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--allow-shlib-undefined")
