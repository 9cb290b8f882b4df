#!/usr/bin/env bash
# How the jar finds its native library: plain `java -cp tlsbridge.jar` with
# no property, a noexec /tmp, -Dtlsbridge.workdir, -Dtlsbridge.library.path,
# a library from another build (refused, and JCA falls back to SunJSSE), and
# security.provider.1=TLSBridge in a java.security override.
set -uo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$TB_ROOT"
BUILD=${1:-target/native}
JAR=$(ls target/tlsbridge-*.jar 2>/dev/null | grep -v sources | head -1)
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
cmake -S . -B "$WORK/other" -DTB_BUILD_ID=another-build -DTB_BUILD_PROBE=OFF -DTB_BUILD_TESTS=OFF >/dev/null &&
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

echo "SUMMARY packaging: $PASS passed, $FAIL failed"
((FAIL == 0))
