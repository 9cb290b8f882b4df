# The jar's libraries against the C libraries they must load on: every
# linux-x86_64 and linux-aarch64 one asks for at most GLIBC_2.17 (RHEL 7 and
# later: RHEL/UBI 8 have 2.28, Amazon Linux 2 2.26) and needs nothing but
# libc, libdl, libpthread, libm, its arch's dynamic loader and, for a system
# flavour, its libssl/libcrypto. The rule is shown to fail, per arch, on a
# library built against Debian 12's glibc (x86_64: the host's gcc; aarch64:
# Zig for glibc 2.36, Debian's cross gcc being no longer installed) and on
# one with an unexpected NEEDED. The musl libraries are musl.sh's.
# Sourced by tests/packaging/run.sh (its ok/ko, $JAR, $WORK) with the path of
# a gcc-built libtlsbridge.so as $1.
# shellcheck shell=bash

source "$TB_ROOT/scripts/lib/zig.sh"
LIBC_GLIBC_FLOOR=2.17
declare -A LIBC_LOADER=([x86_64]=ld-linux-x86-64.so.2 [aarch64]=ld-linux-aarch64.so.1)
# readelf -h's Machine line per arch: a library in the wrong directory fails.
declare -A LIBC_MACHINE=([x86_64]="Advanced Micro Devices X86-64" [aarch64]="AArch64")
LIBC_OLD=$1

# libc_needed FILE -> its NEEDED entries, space-separated.
libc_needed() { readelf -W -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' '; }
# libc_glibc_max FILE -> the highest GLIBC_ version it asks for (empty: none).
libc_glibc_max() { readelf -W -V "$1" | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sort -uV | tail -1; }

# libc_glibc_verdict FILE ARCH EXTRA_NEEDED -> "GLIBC_x, needs ..." and true
# when the file keeps to the rule for ARCH; else what breaks it, and false.
libc_glibc_verdict() {
  local f=$1 arch=$2 extra=$3 max needed n machine bad=()
  machine=$(readelf -h "$f" | sed -nE 's/^ *Machine: *//p')
  [[ $machine == "${LIBC_MACHINE[$arch]}" ]] || bad+=("is built for $machine, not $arch")
  max=$(libc_glibc_max "$f")
  needed=$(libc_needed "$f")
  if [[ -z $max ]]; then
    bad+=("asks for no GLIBC_ version (not linked against glibc)")
  elif [[ $(printf '%s\n' "$max" "GLIBC_$LIBC_GLIBC_FLOOR" | sort -V | tail -1) != "GLIBC_$LIBC_GLIBC_FLOOR" ]]; then
    bad+=("asks for $max, above GLIBC_$LIBC_GLIBC_FLOOR")
  fi
  for n in $needed; do
    [[ " libc.so.6 libdl.so.2 libpthread.so.0 libm.so.6 ${LIBC_LOADER[$arch]} $extra " == *" $n "* ]] || bad+=("needs $n")
  done
  if ((${#bad[@]})); then
    local IFS=';'
    echo "${bad[*]}" | sed 's/;/; /g'
    return 1
  fi
  echo "highest $max, needs $needed"
}

LIBS=$WORK/jar-native
rm -rf "$LIBS" && mkdir -p "$LIBS" && python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("META-INF/native/")])' "$JAR" "$LIBS"
LIBS=$LIBS/META-INF/native

# --- glibc: every library of linux-x86_64 and linux-aarch64 ---
declare -A LIBC_EXPECT=(
  [linux-x86_64/libtlsbridge-bundled.so]=""
  [linux-x86_64/libtlsbridge.so]="libssl.so.3 libcrypto.so.3"
  [linux-x86_64/libtlsbridge-system4.so]="libssl.so.4 libcrypto.so.4"
  [linux-aarch64/libtlsbridge-bundled.so]=""
  [linux-aarch64/libtlsbridge.so]="libssl.so.3 libcrypto.so.3"
)
# A jar built with -Dtlsbridge.aarch64.skip=true has no linux-aarch64 at all:
# said, not failed (tests/aarch64 fails on such a jar).
for lib in $(printf '%s\n' "${!LIBC_EXPECT[@]}" | sort); do
  if [[ $lib == linux-aarch64/* && ! -d $LIBS/linux-aarch64 ]]; then
    [[ $lib == */libtlsbridge.so ]] &&
      echo "NOT RUN (glibc floor, linux-aarch64): the jar has no aarch64 libraries (built with -Dtlsbridge.aarch64.skip=true?)"
    continue
  fi
  if [[ ! -f $LIBS/$lib ]]; then
    ko "glibc floor: $lib is not in the jar"
    continue
  fi
  arch=${lib%%/*} arch=${arch#linux-}
  if v=$(libc_glibc_verdict "$LIBS/$lib" "$arch" "${LIBC_EXPECT[$lib]}"); then
    ok "glibc floor: $lib: $v"
  else
    ko "glibc floor: $lib: $v"
  fi
done
for lib in "$LIBS"/linux-x86_64/*.so "$LIBS"/linux-aarch64/*.so; do
  [[ -f $lib ]] || continue
  [[ -n ${LIBC_EXPECT[${lib#"$LIBS"/}]+x} ]] || ko "glibc floor: the jar has ${lib#"$LIBS"/}, which this check does not know"
done

# The same rule must reject, on each arch, a library built against Debian
# 12's glibc and one that needs a library outside the list.
if [[ -f $LIBC_OLD ]]; then
  if v=$(libc_glibc_verdict "$LIBC_OLD" x86_64 "libssl.so.3 libcrypto.so.3"); then
    ko "glibc floor: an x86_64 library built with the host's gcc passes the check ($v)"
  else
    ok "glibc floor: an x86_64 library built with the host's gcc fails the check ($v)"
  fi
else
  ko "glibc floor: no gcc-built library to prove the check on ($LIBC_OLD)"
fi
# pthread_key_create moved into libc in glibc 2.34 (GLIBC_2.34 there);
# shm_open is librt's in glibc 2.17 (libc's from 2.34).
printf '#include <pthread.h>\nint tb_k(pthread_key_t *k) { return pthread_key_create(k, 0); }\n' >"$WORK/new.c"
printf '#include <sys/mman.h>\n#include <fcntl.h>\nint tb_f(void) { return shm_open("/tb", O_RDONLY, 0); }\n' >"$WORK/rt.c"
for arch in x86_64 aarch64; do
  if [[ $arch == aarch64 ]]; then
    if zig=$(tb_zig) && "$zig" cc -target aarch64-linux-gnu.2.36 -shared -o "$WORK/new-aarch64.so" "$WORK/new.c" 2>"$WORK/new.err"; then
      if v=$(libc_glibc_verdict "$WORK/new-aarch64.so" aarch64 ""); then
        ko "glibc floor: an aarch64 library built for Debian 12's glibc 2.36 passes the check ($v)"
      else
        ok "glibc floor: an aarch64 library built for Debian 12's glibc 2.36 fails the check ($v)"
      fi
    else
      ko "glibc floor: cannot build the aarch64 glibc 2.36 probe: $(head -c 300 "$WORK/new.err" 2>/dev/null)"
    fi
  fi
  if zt=$(tb_zig_tools "$arch-linux-gnu.2.17") &&
    "$zt/$arch-linux-gnu.2.17-cc" -shared -o "$WORK/librt-user-$arch.so" "$WORK/rt.c" -lrt 2>"$WORK/rt.err"; then
    if v=$(libc_glibc_verdict "$WORK/librt-user-$arch.so" "$arch" ""); then
      ko "glibc floor: an $arch library needing librt passes the check ($v)"
    else
      ok "glibc floor: an $arch library needing librt fails the check ($v)"
    fi
  else
    ko "glibc floor: cannot build the $arch librt probe: $(head -c 300 "$WORK/rt.err" 2>/dev/null)"
  fi
done
# The arch is checked too: an x86_64 library is no aarch64 one.
if [[ -f $LIBS/linux-x86_64/libtlsbridge-bundled.so ]]; then
  if v=$(libc_glibc_verdict "$LIBS/linux-x86_64/libtlsbridge-bundled.so" aarch64 ""); then
    ko "glibc floor: the x86_64 bundled library passes as an aarch64 one ($v)"
  else
    ok "glibc floor: the x86_64 bundled library fails as an aarch64 one ($v)"
  fi
fi
