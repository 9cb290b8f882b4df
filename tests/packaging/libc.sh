# The jar's libraries against the C libraries they must load on: every
# linux-x86_64 one asks for at most GLIBC_2.17 (RHEL 7 and later: RHEL/UBI 8
# have 2.28, Amazon Linux 2 2.26) and needs nothing but libc, libdl,
# libpthread, libm, the dynamic loader and, for a system flavour, its
# libssl/libcrypto. The rule is shown to fail on a library built the old way
# (the host's gcc against Debian 12's glibc) and on one with an unexpected
# NEEDED. The linux-aarch64 libraries are still built with Debian's cross gcc
# for its glibc 2.36: this says so, loudly, rather than pass them. The musl
# libraries are musl.sh's.
# Sourced by tests/packaging/run.sh (its ok/ko, $JAR, $WORK) with the path of
# a gcc-built libtlsbridge.so as $1.
# shellcheck shell=bash

source "$TB_ROOT/scripts/lib/zig.sh"
LIBC_GLIBC_FLOOR=2.17
LIBC_BASE="libc.so.6 libdl.so.2 libpthread.so.0 libm.so.6 ld-linux-x86-64.so.2"
LIBC_OLD=$1

# libc_needed FILE -> its NEEDED entries, space-separated.
libc_needed() { readelf -W -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' '; }
# libc_glibc_max FILE -> the highest GLIBC_ version it asks for (empty: none).
libc_glibc_max() { readelf -W -V "$1" | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sort -uV | tail -1; }

# libc_glibc_verdict FILE EXTRA_NEEDED -> "GLIBC_x, needs ..." and true when
# the file keeps to the rule; else what breaks it, and false.
libc_glibc_verdict() {
  local f=$1 extra=$2 max needed n bad=()
  max=$(libc_glibc_max "$f")
  needed=$(libc_needed "$f")
  if [[ -z $max ]]; then
    bad+=("asks for no GLIBC_ version (not linked against glibc)")
  elif [[ $(printf '%s\n' "$max" "GLIBC_$LIBC_GLIBC_FLOOR" | sort -V | tail -1) != "GLIBC_$LIBC_GLIBC_FLOOR" ]]; then
    bad+=("asks for $max, above GLIBC_$LIBC_GLIBC_FLOOR")
  fi
  for n in $needed; do
    [[ " $LIBC_BASE $extra " == *" $n "* ]] || bad+=("needs $n")
  done
  if ((${#bad[@]})); then
    echo "${bad[*]}"
    return 1
  fi
  echo "highest $max, needs $needed"
}

LIBS=$WORK/jar-native
rm -rf "$LIBS" && mkdir -p "$LIBS" && python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("META-INF/native/")])' "$JAR" "$LIBS"
LIBS=$LIBS/META-INF/native

# --- glibc: every library of linux-x86_64 ---
declare -A LIBC_EXPECT=(
  [linux-x86_64/libtlsbridge-bundled.so]=""
  [linux-x86_64/libtlsbridge.so]="libssl.so.3 libcrypto.so.3"
  [linux-x86_64/libtlsbridge-system4.so]="libssl.so.4 libcrypto.so.4"
)
for lib in $(printf '%s\n' "${!LIBC_EXPECT[@]}" | sort); do
  if [[ ! -f $LIBS/$lib ]]; then
    ko "glibc floor: $lib is not in the jar"
    continue
  fi
  if v=$(libc_glibc_verdict "$LIBS/$lib" "${LIBC_EXPECT[$lib]}"); then
    ok "glibc floor: $lib: $v"
  else
    ko "glibc floor: $lib: $v"
  fi
done
for lib in "$LIBS"/linux-x86_64/*.so; do
  [[ -f $lib ]] || continue
  [[ -n ${LIBC_EXPECT[${lib#"$LIBS"/}]+x} ]] || ko "glibc floor: the jar has ${lib#"$LIBS"/}, which this check does not know"
done
for lib in "$LIBS"/linux-aarch64/*.so; do
  [[ -f $lib ]] || continue
  echo "NOT RUN (glibc floor, ${lib#"$LIBS"/}): built with Debian's gcc-aarch64-linux-gnu, it asks for $(libc_glibc_max "$lib"); the GLIBC_$LIBC_GLIBC_FLOOR rule covers linux-x86_64 only so far"
done

# The same rule must reject a library built the old way, and one that needs
# a library outside the list.
if [[ -f $LIBC_OLD ]]; then
  if v=$(libc_glibc_verdict "$LIBC_OLD" "libssl.so.3 libcrypto.so.3"); then
    ko "glibc floor: a library built with the host's gcc passes the check ($v)"
  else
    ok "glibc floor: a library built with the host's gcc fails the check ($v)"
  fi
else
  ko "glibc floor: no gcc-built library to prove the check on ($LIBC_OLD)"
fi
# shm_open is librt's in glibc 2.17 (libc's from 2.34).
if zt=$(tb_zig_tools x86_64-linux-gnu.2.17) &&
  printf '#include <sys/mman.h>\n#include <fcntl.h>\nint tb_f(void) { return shm_open("/tb", O_RDONLY, 0); }\n' >"$WORK/rt.c" &&
  "$zt/x86_64-linux-gnu.2.17-cc" -shared -o "$WORK/librt-user.so" "$WORK/rt.c" -lrt 2>"$WORK/rt.err"; then
  if v=$(libc_glibc_verdict "$WORK/librt-user.so" ""); then
    ko "glibc floor: a library needing librt passes the check ($v)"
  else
    ok "glibc floor: a library needing librt fails the check ($v)"
  fi
else
  ko "glibc floor: cannot build the librt probe: $(head -c 300 "$WORK/rt.err" 2>/dev/null)"
fi
