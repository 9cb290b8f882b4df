#!/usr/bin/env bash
# How the jar finds its native library: plain `java -cp tlsbridge.jar` with
# no property, a noexec /tmp, -Dtlsbridge.workdir, -Dtlsbridge.library.path,
# a library from another build (refused, and JCA falls back to SunJSSE), and
# security.provider.1=TLSBridge in a java.security override; the OpenSSL
# flavours (bundled by default, -Dtlsbridge.openssl=system on OpenSSL 3.0 and
# 4.0, one clear error and SunJSSE where the chosen one cannot load); the C
# libraries the jar's libraries need (libc.sh), the musl ones on musl (musl.sh).
set -uo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
source "$(dirname "$0")/../../scripts/lib/openssl.sh"
cd "$TB_ROOT"
BUILD=${1:-target/native}
JAR=$(ls target/tlsbridge-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)
PASS=0; FAIL=0
ok() { echo "PASS $*"; PASS=$((PASS + 1)); }
ko() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }
[[ -f $JAR ]] || { ko "no jar under target/ (run mvn package first)"; echo "SUMMARY packaging: $PASS passed, $FAIL failed"; exit 1; }
WORK=$(mktemp -d)
trap 'umount "$WORK/noexec" 2>/dev/null; rm -rf "$WORK"' EXIT

out=$(java -cp "$JAR" org.tlsbridge.Info 2>&1)
if grep -q "^openssl OpenSSL 3" <<<"$out" && grep -q "self-test: ClientHello" <<<"$out"; then
  ok "plain java -cp jar loads the library from the jar ($(grep '^native library' <<<"$out"))"
else
  ko "plain java -cp jar: $out"
fi

out=$(java -jar "$JAR" 2>&1) && grep -q "self-test" <<<"$out" && ok "java -jar runs Info" || ko "java -jar: $out"

mkdir -p "$WORK/wd"
out=$(java -Dtlsbridge.workdir="$WORK/wd" -cp "$JAR" org.tlsbridge.Info 2>&1)
grep -q "native library $WORK/wd/tlsbridge-" <<<"$out" && ok "tlsbridge.workdir is honoured" || ko "workdir: $out"
perms=$(stat -c %a "$WORK"/wd/tlsbridge-* 2>/dev/null | head -1)
[[ -z $perms || $perms == 700 ]] && ok "extraction directory is owner-only (${perms:-removed at exit})" || ko "extraction dir mode $perms"

if [[ $(id -u) -eq 0 ]] && mkdir -p "$WORK/noexec" && mount -t tmpfs -o noexec,size=16m tmpfs "$WORK/noexec" 2>/dev/null; then
  out=$(HOME="$WORK/home" java -Djava.io.tmpdir="$WORK/noexec" -Duser.home="$WORK/home" -cp "$JAR" org.tlsbridge.Info 2>&1)
  if grep -q "native library $WORK/home/.cache/tlsbridge/" <<<"$out"; then
    ok "noexec java.io.tmpdir falls back to ~/.cache/tlsbridge"
  else
    ko "noexec fallback: $out"
  fi
  umount "$WORK/noexec"
else
  echo "NOT RUN (check only): noexec /tmp needs root to mount a tmpfs"
fi

LIB="$BUILD/native/libtlsbridge.so"
out=$(java -Dtlsbridge.library.path="$LIB" -cp "$JAR" org.tlsbridge.Info 2>&1)
grep -q "native library $(readlink -f "$LIB" 2>/dev/null || echo "$LIB")\|native library .*libtlsbridge.so" <<<"$out" \
  && grep -q self-test <<<"$out" && ok "tlsbridge.library.path loads the same build" || ko "library.path: $out"

# A library from another build must be refused, and with TLSBridge first in
# java.security, JCA must fall through to SunJSSE rather than fail.
cmake -S . -B "$WORK/other" -DTB_BUILD_ID=another-build -DTB_BUILD_PROBE=OFF -DTB_BUILD_TESTS=OFF -DTB_FLAVOURS=OFF >/dev/null &&
  cmake --build "$WORK/other" --target tlsbridge -j2 >/dev/null
cat >"$WORK/java.security" <<'SEC'
security.provider.1=TLSBridge
security.provider.2=SUN
security.provider.3=SunRsaSign
security.provider.4=SunEC
security.provider.5=SunJSSE
security.provider.6=SunJCE
SEC
cat >"$WORK/Which.java" <<'J'
public class Which {
  public static void main(String[] a) throws Exception {
    System.out.println("TLS=" + javax.net.ssl.SSLContext.getInstance("TLS").getProvider().getName());
    System.out.println("Default=" + javax.net.ssl.SSLContext.getDefault().getProvider().getName());
  }
}
J
javac -d "$WORK" "$WORK/Which.java"
out=$(java -Dtlsbridge.library.path="$WORK/other/native/libtlsbridge.so" -cp "$JAR" org.tlsbridge.Info 2>&1)
grep -q "does not match" <<<"$out" && ok "a library from another build is refused: $(grep -o 'libtlsbridge build [^ ]*' <<<"$out" | head -1)" || ko "mismatch: $out"
out=$(java -Djava.security.properties="$WORK/java.security" -cp "$JAR:$WORK" Which 2>&1)
grep -q "TLS=TLSBridge" <<<"$out" && grep -q "Default=TLSBridge" <<<"$out" \
  && ok "security.provider.1=TLSBridge serves SSLContext TLS and Default" || ko "provider override: $out"
out=$(java -Djava.security.properties="$WORK/java.security" -Dtlsbridge.library.path="$WORK/other/native/libtlsbridge.so" -cp "$JAR:$WORK" Which 2>&1)
grep -q "TLS=SunJSSE" <<<"$out" && ok "unloadable library: JCA falls through to SunJSSE" || ko "fallthrough: $out"

# --- OpenSSL flavours ---
out=$(java -jar "$JAR" 2>&1)
grep -q "^openssl OpenSSL 3\.5\..*(bundled;" <<<"$out" && grep -q "self-test" <<<"$out" &&
  grep -q "native library .*/libtlsbridge-bundled.so" <<<"$out" \
  && ok "default flavour: $(grep '^openssl' <<<"$out" | cut -d';' -f1))" || ko "default flavour: $out"
BUNDLED=$BUILD/native/libtlsbridge-bundled.so
syms=$(nm -D --defined-only "$BUNDLED" 2>&1 | awk '{print $NF}' | sort | tr '\n' ' ')
[[ $syms == "JNI_OnLoad JNI_OnUnload " ]] && ok "bundled library exports only $syms" || ko "bundled exports: ${syms:0:300}"
needs=$(readelf -d "$BUNDLED" | sed -nE 's/.*NEEDED.*\[(.*)\]/\1/p' | tr '\n' ' ')
grep -qE 'libssl|libcrypto' <<<"$needs" && ko "bundled library needs $needs" || ok "bundled library needs no system OpenSSL ($needs)"
SYS_SSL=$(ldconfig -p | awk '/libssl\.so\.3 /{print $NF; exit}')
out=$(LD_PRELOAD="$SYS_SSL" java -jar "$JAR" 2>&1)
grep -q "^openssl OpenSSL 3\.5\..*(bundled;" <<<"$out" && grep -q "self-test" <<<"$out" \
  && ok "bundled OpenSSL 3.5 works in a process that has the system $(basename "$SYS_SSL") loaded" || ko "bundled beside system libssl: $out"
out=$(java -Dtlsbridge.openssl=system -jar "$JAR" 2>&1)
grep -q "^openssl OpenSSL 3\.0\..*(system (libssl.so.3);" <<<"$out" && grep -q "self-test" <<<"$out" \
  && ok "-Dtlsbridge.openssl=system on Debian 12: $(grep '^openssl' <<<"$out" | cut -d';' -f1))" || ko "system 3: $out"
O4=$(tb_openssl_dir 4.0)
if [[ -f $O4/so/libssl.so.4 ]]; then
  out=$(LD_LIBRARY_PATH="$O4/so" java -Dtlsbridge.openssl=system -jar "$JAR" 2>&1)
  grep -q "^openssl OpenSSL 4\.0\..*(system (libssl.so.4);" <<<"$out" && grep -q "self-test" <<<"$out" \
    && ok "-Dtlsbridge.openssl=system with a libssl.so.4: $(grep '^openssl' <<<"$out" | cut -d';' -f1))" || ko "system 4: $out"
else
  ko "no OpenSSL 4.0 build in $O4 (scripts/openssl 4.0)"
fi
out=$(java -Dtlsbridge.openssl=fips -jar "$JAR" 2>&1)
grep -q 'tlsbridge.openssl=fips is neither "bundled" nor "system"' <<<"$out" && ok "an unknown flavour is named in the error" || ko "unknown flavour: $out"
# A host without the system OpenSSL: libssl.so.3 hidden in a private mount namespace.
if [[ $(id -u) -eq 0 && -n $SYS_SSL ]] && unshare -m true 2>/dev/null; then
  hide="mount --bind /dev/null $(readlink -f "$SYS_SSL") &&"
  out=$(unshare -m bash -c "$hide exec java -Dtlsbridge.openssl=system -jar '$JAR'" 2>&1)
  grep -q "no OpenSSL for -Dtlsbridge.openssl=system loads here: system (libssl.so.4) .*libssl.so.4.*system (libssl.so.3)" <<<"$out" \
    && ok "no system OpenSSL: one error naming what was looked for" || ko "no system OpenSSL: $out"
  out=$(unshare -m bash -c "$hide exec java -Djava.security.properties='$WORK/java.security' -Dtlsbridge.openssl=system -cp '$JAR:$WORK' Which" 2>&1)
  grep -q "TLS=SunJSSE" <<<"$out" && ok "no system OpenSSL: JCA falls through to SunJSSE" || ko "no system OpenSSL fallthrough: $out"
else
  echo "NOT RUN (check only): hiding the system libssl needs root and unshare -m"
fi

# Maven Central's rules for the POM; the sources and javadoc jars; the bundled OpenSSL the manifest names.
rules=$(python3 tests/packaging/pom_rules.py --jar "$JAR" 2>&1); rules_rc=$?
while read -r line; do
  case $line in PASS\ *) ok "${line#PASS }" ;; FAIL\ *) ko "${line#FAIL }" ;; *) echo "$line" ;; esac
done <<<"$rules"
grep -q '^FAIL ' <<<"$rules" || ((rules_rc == 0)) || ko "tests/packaging/pom_rules.py stopped (exit $rules_rc)"

# The C libraries the jar's libraries need (glibc floor, musl), proven
# against the gcc-built library above.
source "$(dirname "$0")/libc.sh" "$WORK/other/native/libtlsbridge.so"
source "$(dirname "$0")/musl.sh"

echo "SUMMARY packaging: $PASS passed, $FAIL failed"
((FAIL == 0))
