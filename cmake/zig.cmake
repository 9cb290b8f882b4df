# Shared part of the Zig toolchain files cmake/<target>.cmake: the C compiler
# is Zig's clang for TB_ZIG_TARGET (scripts/zig installs it), which brings
# its own C library headers and link stubs, so that a library built on
# Debian 12 asks no more than glibc 2.17 of its host. The OpenSSL builds of
# the same target (scripts/openssl --arch TB_OPENSSL_ARCH) come from the same
# compiler, with the same flags (TB_ZIG_CFLAGS, which the top-level
# CMakeLists.txt adds to every compile).
# try_compile re-reads the toolchain file: ask scripts/zig once per CMake run.
if(NOT DEFINED ENV{TB_ZIG_TOOLS_${TB_OPENSSL_ARCH}})
  execute_process(COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/../scripts/zig ${TB_ZIG_TARGET}
                  OUTPUT_VARIABLE _tb_zig OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _tb_rc)
  string(REPLACE "\n" ";" _tb_zig "${_tb_zig}")
  list(GET _tb_zig 0 _tb_dir)
  if(NOT _tb_rc EQUAL 0 OR NOT EXISTS "${_tb_dir}/${TB_ZIG_TARGET}-cc")
    message(FATAL_ERROR "scripts/zig ${TB_ZIG_TARGET} failed (${_tb_rc}): no Zig compiler for ${TB_ZIG_TARGET}")
  endif()
  set(ENV{TB_ZIG_TOOLS_${TB_OPENSSL_ARCH}} "${_tb_zig}")
endif()
set(_tb_zig $ENV{TB_ZIG_TOOLS_${TB_OPENSSL_ARCH}})
list(GET _tb_zig 0 _tb_dir)
list(GET _tb_zig 1 TB_ZIG_CFLAGS)
separate_arguments(TB_ZIG_CFLAGS UNIX_COMMAND "${TB_ZIG_CFLAGS}")
set(CMAKE_C_COMPILER ${_tb_dir}/${TB_ZIG_TARGET}-cc)
set(CMAKE_AR ${_tb_dir}/${TB_ZIG_TARGET}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${_tb_dir}/${TB_ZIG_TARGET}-ranlib CACHE FILEPATH "")
set(TB_OPENSSL_ARCH ${TB_OPENSSL_ARCH} CACHE INTERNAL "scripts/openssl --arch of this build")
