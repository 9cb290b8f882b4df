# Builds the OpenSSL releases tlsbridge bundles or tests against, from the
# `openssl-src` crate sources (pinned with their checksum in
# scripts/lib/openssl-crates/<series>/Cargo.lock), into a cache outside the
# tree keyed by version, arch and compiler, all compiled with Zig
# (scripts/lib/zig.sh): x86_64 and aarch64 for glibc 2.17 and later, the
# C library floor of the jar's linux libraries; x86_64-musl and
# aarch64-musl for the jar's musl libraries. Sourced by scripts/openssl,
# scripts/test and scripts/bench; needs common.sh.
#
# A cached build is a directory $TB_CACHE/openssl/<version>-<arch>[-<floor>]
# (x86_64-gnu2.17, aarch64-gnu2.17, x86_64-musl, aarch64-musl) with
#   include/, lib/libssl.a, lib/libcrypto.a   static, -fPIC: what the bundled
#                                             flavour links
#   so/libssl.so.N, so/libcrypto.so.N         the same code as shared
#                                             libraries with their soname, for
#                                             the system-flavour tests
#   bin/openssl                               the apps (series 3.5 on the
#                                             host's arch only)
#   BUILD-INFO                                source checksum, options, times
# It is built in a temporary directory and renamed into place in one step,
# so an interrupted build is never taken for a cached one.
# shellcheck shell=bash

TB_CACHE=${TB_CACHE:-/var/cache/tlsbridge}
source "$(dirname "${BASH_SOURCE[0]}")/zig.sh"
# Configure options common to every build: static only (the crate's sources
# are trimmed for that: no util/mkdef.pl, so no shared build), no loadable
# modules or legacy provider, no docs or test programs to keep the build short.
# enable-ktls compiles in libssl's kTLS record method, through which the
# engine's BIO takes the application traffic keys and seals records itself
# (native/core/seal.c); it costs nothing where a BIO declines the keys, and
# OpenSSL's own socket BIO uses it only with SSL_OP_ENABLE_KTLS.
TB_OSSL_OPTIONS=(no-shared no-module no-legacy no-tests no-docs no-comp no-zlib enable-ktls -fPIC)
# Where the library looks for openssl.cnf (unless OPENSSL_CONF says): OpenSSL's
# own default rather than a path in the build cache, so the bundled flavour
# does not read the distribution's configuration written for its own libssl.
TB_OSSL_DIR=/usr/local/ssl

# tb_openssl_crate SERIES -> prints "<crate version> <openssl version>"
tb_openssl_crate() {
  local toml=$TB_ROOT/scripts/lib/openssl-crates/$1/Cargo.toml cv
  [[ -f $toml ]] || die "no pinned OpenSSL source for series '$1' (have: $(ls "$TB_ROOT/scripts/lib/openssl-crates" | tr '\n' ' '))"
  cv=$(sed -nE 's/^openssl-src = "=(.*)"/\1/p' "$toml")
  echo "$cv ${cv#*+}"
}

# _tb_openssl_zig_target ARCH -> Zig's target for ARCH's builds; nothing
# (and false) for an arch without one. aarch64 is cross-built without
# Configure's --cross-compile-prefix: Zig's one compiler has every target.
_tb_openssl_zig_target() {
  case $1 in
    x86_64|aarch64) echo "$1-linux-gnu.2.17" ;;
    x86_64-musl | aarch64-musl) echo "${1%-musl}-linux-musl" ;;
    *) return 1 ;;
  esac
}

# tb_openssl_dir SERIES [ARCH] -> prints the cache directory of that series'
# build for ARCH (default: the host's), whether or not it is built yet. The
# directory names the C library floor of a Zig build, so that a build made
# with Debian's gcc for glibc 2.36 (<version>-x86_64, <version>-aarch64) is
# never taken for one.
tb_openssl_dir() {
  local cv v a=${2:-$(uname -m)}
  read -r cv v < <(tb_openssl_crate "$1")
  [[ $a != *-musl ]] && _tb_openssl_zig_target "$a" >/dev/null && a+=-gnu2.17
  echo "$TB_CACHE/openssl/$v-$a"
}

# _tb_openssl_opts SERIES ARCH -> prints the Configure options of that build.
_tb_openssl_opts() {
  local opts=("${TB_OSSL_OPTIONS[@]}")
  # The apps (s_server, s_client) are what the interop tests talk to: the
  # host's 3.5 is enough. Every other build is libraries and headers only.
  [[ $1 == 3.5 && $2 == "$(uname -m)" ]] || opts+=(no-apps)
  echo "${opts[*]}"
}

# _tb_openssl_compiler ARCH -> Zig's version, target and the flags it adds,
# as BUILD-INFO records them: a build by another Zig, or with other flags, is
# not today's.
_tb_openssl_compiler() {
  local zt
  zt=$(_tb_openssl_zig_target "$1") && echo "zig $TB_ZIG_VERSION cc -target $zt ${TB_ZIG_CFLAGS[*]}"
  return 0
}

# _tb_openssl_cached DIR SERIES ARCH: a finished build made with today's
# options and compiler. enable-ktls alone does not promise kTLS: Configure
# leaves it out, silently, when its probe of the compiler for <linux/tls.h>
# fails, and the engine's sealing record path needs it (native/core/seal.c,
# docs/record-path.md): such a build is not taken.
_tb_openssl_cached() {
  local compiler
  compiler=$(_tb_openssl_compiler "$3")
  [[ -f $1/BUILD-INFO ]] && grep -qxF "options=$(_tb_openssl_opts "$2" "$3")" "$1/BUILD-INFO" &&
    grep -qxF "compiler=$compiler" "$1/BUILD-INFO" &&
    ! grep -q 'define OPENSSL_NO_KTLS' "$1/include/openssl/configuration.h"
}

# tb_openssl SERIES [ARCH]: builds the series for ARCH (default: the host's,
# x86_64; or aarch64, cross-compiled) if it is not cached; prints the cache
# directory on stdout (the build's progress goes to stderr and its output to
# a log file beside the cache).
tb_openssl() {
  local series=$1 arch=${2:-$(uname -m)} cv v dir tmp
  read -r cv v < <(tb_openssl_crate "$series") || return 1
  [[ $arch =~ ^(x86_64|aarch64)(-musl)?$ ]] || die "no OpenSSL build for '$arch' (x86_64, aarch64, x86_64-musl, aarch64-musl)"
  dir=$(tb_openssl_dir "$series" "$arch")
  if _tb_openssl_cached "$dir" "$series" "$arch"; then
    echo "$dir"
    return 0
  fi
  mkdir -p "$TB_CACHE/openssl" || die "cannot create $TB_CACHE/openssl"
  # One build per version at a time: a second caller waits, then finds it
  # cached. The holder writes its pid and start time into the lock file so
  # that a waiter can say whom it waits for.
  local lock waited=0 holder
  exec {lock}<>"$dir.lock"
  if ! flock -n "$lock"; then
    while ! flock -w 30 "$lock"; do
      waited=$((waited + 30))
      holder=$(head -c 200 "$dir.lock" 2>/dev/null | tr -d '\n')
      log "OpenSSL $v ($arch): waiting ${waited} s for another build of it to finish (${holder:-holder unknown})"
    done
  fi
  printf 'pid %s (%s), since %s' "$$" "$(tr '\0' ' ' </proc/$$/cmdline 2>/dev/null | cut -c1-80)" "$(date +%T)" >"$dir.lock"
  if _tb_openssl_cached "$dir" "$series" "$arch"; then
    exec {lock}>&-
    echo "$dir"
    return 0
  fi
  tmp=$(mktemp -d "$TB_CACHE/openssl/.build-$v-XXXXXX") || return 1
  need_pkgs build-essential perl curl ca-certificates
  tb_zig_tools "$(_tb_openssl_zig_target "$arch")" >/dev/null || return 1
  log "building OpenSSL $v for $arch (crate openssl-src $cv; 2 to 3 minutes on 2 idle cores) into $dir; log: $dir.log"
  _tb_openssl_build "$series" "$cv" "$v" "$dir" "$tmp" "$arch" >"$dir.log" 2>&1 &
  local pid=$! t0=$SECONDS rc
  # A line every 20 s, so that a first build is never a silent terminal.
  while ! wait_timeout "$pid" 20; do
    log "OpenSSL $v ($arch): $((SECONDS - t0)) s, $(_tb_openssl_phase "$dir.log")"
  done
  wait "$pid"; rc=$?
  if ((rc != 0)); then
    tail -30 "$dir.log" >&2
    rm -rf "$tmp"
    die "OpenSSL $v build failed; see $dir.log"
  fi
  rm -rf "$dir" && mv -T "$tmp/out" "$dir" && rm -rf "$tmp" || die "cannot move the OpenSSL $v build into $dir"
  exec {lock}>&-
  log "OpenSSL $v ready in $dir ($(sed -n 's/^build-seconds=//p' "$dir/BUILD-INFO") s, $(sed -n 's/^build-cpu-seconds=//p' "$dir/BUILD-INFO") CPU-seconds)"
  echo "$dir"
}

# wait_timeout PID SECONDS: true once PID has exited (it stays reapable).
wait_timeout() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.5
  done
  ! kill -0 "$1" 2>/dev/null
}

# _tb_openssl_phase LOG -> what the build in LOG is doing, in a few words.
_tb_openssl_phase() {
  local n
  if grep -q '^+ mv -T' "$1" 2>/dev/null; then echo "installing"
  elif n=$(grep -c -- ' -c -o ' "$1" 2>/dev/null) && ((n > 0)); then
    echo "compiling ($n files so far)"
  elif grep -q 'Configure' "$1" 2>/dev/null; then echo "configuring"
  else echo "fetching the source"
  fi
}

# Runs in a subshell: its trace stays there. The caller's compiler variables
# are not OpenSSL's: Configure reads CC, CFLAGS, AR and friends from the
# environment and prefixes --cross-compile-prefix to CC, so a CC that CMake or
# a cross toolchain exported (an absolute aarch64-linux-gnu-gcc) would become
# "aarch64-linux-gnu-/usr/bin/aarch64-linux-gnu-gcc". Each build says its own.
_tb_openssl_build() (
  unset CC CXX CPP CFLAGS CXXFLAGS CPPFLAGS LDFLAGS LDLIBS AR ARFLAGS AS LD NM OBJCOPY RANLIB RC CROSS_COMPILE \
    PERL HASHBANGPERL KERNEL_BITS
  local series=$1 cv=$2 v=$3 dir=$4 tmp=$5 arch=$6 t0=$SECONDS src opts so cc target build install sum zt tools load0 cpu
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  sum=$(sed -n '/^name = "openssl-src"/,/^$/s/^checksum = "\(.*\)"/\1/p' "$TB_ROOT/scripts/lib/openssl-crates/$series/Cargo.lock")
  [[ $sum =~ ^[0-9a-f]{64}$ ]] || { echo "no openssl-src checksum in openssl-crates/$series/Cargo.lock"; return 1; }
  set -x
  # The crate file from crates.io's download host, checked against the
  # checksum Cargo.lock pins (what `cargo vendor --locked` checks): no cargo
  # on the machine, since Debian 12's cannot read a version-4 lock file.
  curl -sSfL --retry 3 --connect-timeout 30 --max-time 900 -o "$tmp/src.crate" \
    "https://static.crates.io/crates/openssl-src/openssl-src-${cv//+/%2B}.crate" || return 1
  echo "$sum  $tmp/src.crate" | sha256sum --check --quiet - || { echo "openssl-src $cv: checksum mismatch"; return 1; }
  mkdir -p "$tmp/vendor" && tar xzf "$tmp/src.crate" -C "$tmp/vendor" && rm -f "$tmp/src.crate" || return 1
  src=$tmp/vendor/openssl-src-$cv/openssl
  [[ -x $src/Configure ]] || { echo "no Configure in $src"; return 1; }
  read -r -a opts < <(_tb_openssl_opts "$series" "$arch")
  # Configure's own target, with Zig for compiler and archiver (arguments:
  # the environment's were unset above) and the flags that keep Zig's code
  # what gcc's -O3 was (TB_ZIG_CFLAGS, scripts/lib/zig.sh); Configure's -O3
  # and the perlasm modules stay as they are. tb_openssl admits only arches
  # with a Zig target.
  zt=$(_tb_openssl_zig_target "$arch") || return 1
  tools=$(tb_zig_tools "$zt") || return 1
  cc=$tools/$zt-cc
  target=("linux-${arch%-musl}" CC="$cc" AR="$tools/$zt-ar" RANLIB="$tools/$zt-ranlib" "${TB_ZIG_CFLAGS[@]}")
  # Without the apps, build_libs and install_dev skip the programs.
  if [[ " ${opts[*]} " == *" no-apps "* ]]; then
    build=build_libs install=install_dev
  else
    build=build_sw install=install_sw
  fi
  mkdir -p "$tmp/build" &&
    (cd "$tmp/build" && perl "$src/Configure" "${target[@]}" "${opts[@]}" --prefix="$dir" --libdir=lib --openssldir="$TB_OSSL_DIR") || return 1
  # Configure drops kTLS without a word when its compiler probe fails.
  if grep -q 'define OPENSSL_NO_KTLS' "$tmp/build/include/openssl/configuration.h"; then
    echo "OpenSSL $v for $arch: Configure left kTLS out (enable-ktls given; its probe of $cc for <linux/tls.h> failed)"
    return 1
  fi
  (cd "$tmp/build" && make -j"$(nproc)" "$build" && make DESTDIR="$tmp/dest" "$install") || return 1
  mv -T "$tmp/dest$dir" "$tmp/out" || return 1
  # Shared libraries for the system-flavour tests, from the static archives
  # (their own soname, every symbol exported, libssl needing libcrypto).
  so=${v%%.*}
  mkdir -p "$tmp/out/so" &&
    $cc -shared -o "$tmp/out/so/libcrypto.so.$so" -Wl,-soname,"libcrypto.so.$so" \
      -Wl,--whole-archive "$tmp/out/lib/libcrypto.a" -Wl,--no-whole-archive -pthread -ldl &&
    $cc -shared -o "$tmp/out/so/libssl.so.$so" -Wl,-soname,"libssl.so.$so" \
      -Wl,--whole-archive "$tmp/out/lib/libssl.a" -Wl,--no-whole-archive \
      "$tmp/out/so/libcrypto.so.$so" -pthread -ldl &&
    ln -s "libssl.so.$so" "$tmp/out/so/libssl.so" && ln -s "libcrypto.so.$so" "$tmp/out/so/libcrypto.so" || return 1
  set +x
  {
    echo "openssl=$v"
    echo "crate=openssl-src $cv"
    echo "checksum=$sum"
    echo "options=${opts[*]}"
    echo "compiler=$(_tb_openssl_compiler "$arch")"
    echo "arch=$arch"
    echo "built=$(date -u +%FT%TZ)"
    echo "build-seconds=$((SECONDS - t0))"
    # CPU time of the build's processes (bash's `times`, children's line; in
    # this shell, not a pipeline's): what a loaded machine does not change,
    # unlike the wall time above.
    times >"$tmp/times"
    cpu=$(sed -n 2p "$tmp/times" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f (user %.0f, system %.0f)", u[1] * 60 + u[2] + s[1] * 60 + s[2], u[1] * 60 + u[2], s[1] * 60 + s[2] }')
    echo "build-cpu-seconds=$cpu"
    echo "load-average=$load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  } >"$tmp/out/BUILD-INFO"
)
