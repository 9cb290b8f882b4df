# The "fresh build" row of scripts/test (sourced by it; uses its row() and
# FAILED): the Maven -> CMake -> scripts/openssl path a newcomer's first
# `mvn package` takes, with an OpenSSL cache that is empty. The other rows
# cannot see a fault there, because scripts/test fills the cache from bash
# before Maven runs. The cross build is the one that broke (CMake's compiler
# variables leaking into OpenSSL's Configure), and the shortest: Zig installed
# into the empty cache, one OpenSSL build and the aarch64 libraries.
# shellcheck shell=bash

fresh_build_row() {
  local cache build root rc t0=$SECONDS lib log=target/fresh-build.log
  need_pkgs file
  mkdir -p target
  cache=$(mktemp -d /tmp/tlsbridge-fresh-cache.XXXXXX) && build=$(mktemp -d /tmp/tlsbridge-fresh-build.XXXXXX) || {
    row "fresh build (empty cache)" 1 0 1 "mktemp failed"; FAILED=1; return; }
  # The arm64 Debian root (JDK, libssl-dev) is not OpenSSL's build: reuse it.
  root=$(tb_arm64_root)
  log "fresh build: mvn (aarch64 configure + build) with an empty OpenSSL cache $cache"
  TB_CACHE=$cache TB_ARM64_ROOT=$root mvn -B -q exec:exec@cmake-configure-aarch64 exec:exec@cmake-build-aarch64 \
    -Dtlsbridge.native.aarch64.dir="$build" -Dtlsbridge.build.id=fresh >"$log" 2>&1
  rc=$?
  lib=$build/native/libtlsbridge-bundled.so
  if ((rc == 0)) && [[ -f $cache/openssl/$(basename "$(TB_CACHE=$cache tb_openssl_dir 3.5 aarch64)")/BUILD-INFO && -f $lib ]] &&
    file -b "$lib" | grep -q 'ARM aarch64'; then
    row "fresh build (empty cache)" 1 1 0 "$((SECONDS - t0))s: mvn built OpenSSL 3.5 and libtlsbridge for aarch64"
  else
    grep -vE '^\[ *[0-9]+%\]|^-- ' "$log" | tail -40
    row "fresh build (empty cache)" 1 0 1 "mvn exit $rc; see $log"
    FAILED=1
  fi
  rm -rf "$cache" "$build"
}
