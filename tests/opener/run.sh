#!/usr/bin/env bash
# Every record tlsbridge sends, opened by an implementation that is not
# OpenSSL. OpenerRun (Java) runs tlsbridge against SunJSSE as server and as
# client, over the engine (a layered socket: records leave through the
# engine's buffer BIO) and the native socket (the socket BIO), for the nine
# TLS 1.2/1.3 AEAD suites, on the bundled OpenSSL 3.5 and on a system
# OpenSSL 4.0; a relay between the two ends records each direction, and
# tlsbridge writes its key log. On TLS 1.3 tlsbridge asks for a KeyUpdate
# before each of its sends and the SunJSSE peer, with 2^14-byte
# jdk.tls.keyLimits, updates and asks for updates every 16 KiB.
# open_records.py then opens every record with Python's `cryptography` and
# its own TLS 1.3 key schedule and TLS 1.2 key block, checks the bytes
# against the stream each side sent and that no (key, nonce) pair repeats;
# and, run again with a TLS 1.3 sequence number skipped, a TLS 1.2
# ChaCha20 one reused, and a TLS 1.2 explicit nonce repeated, it must fail
# each time.
#
#   tests/opener/run.sh        (the JVM side comes from target/classes)
set -uo pipefail
SUITE=opener
source "$(dirname "$0")/../lib/suite.sh"
source scripts/lib/openssl.sh
summary() { echo "SUMMARY opener: $PASS passed, $FAIL failed"; }
trap summary EXIT
T0=$SECONDS

# The AEADs and HMAC come from `cryptography`: the Python found first if it
# has it, else Debian's package for Debian's Python.
PY=python3
aead_ok() { "$1" -c 'from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305' 2>/dev/null; }
if ! aead_ok "$PY"; then
  need_pkgs python3-cryptography
  PY=/usr/bin/python3
  aead_ok "$PY" || { bad "setup" "no Python with cryptography's AEADs"; exit 1; }
fi

suite_classes || { bad "build" "mvn package failed"; exit 1; }
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
JAVAC=${JAVA_HOME:+$JAVA_HOME/bin/}javac
KEYTOOL=${JAVA_HOME:+$JAVA_HOME/bin/}keytool

WORK=$(mktemp -d /tmp/tb-opener.XXXXXX)
trap 'summary; rm -rf "$WORK"' EXIT
"$JAVAC" -nowarn -d "$WORK/classes" -cp target/classes tests/opener/OpenerRun.java ||
  { bad "compile" "OpenerRun.java"; exit 1; }
"$KEYTOOL" -genkeypair -keyalg RSA -keysize 2048 -alias rsa -dname CN=localhost -validity 2 \
  -ext san=dns:localhost,ip:127.0.0.1 -storetype PKCS12 -keystore "$WORK/rsa.p12" -storepass opener 2>/dev/null &&
"$KEYTOOL" -genkeypair -keyalg EC -groupname secp256r1 -alias ec -dname CN=localhost -validity 2 \
  -ext san=dns:localhost,ip:127.0.0.1 -storetype PKCS12 -keystore "$WORK/ec.p12" -storepass opener 2>/dev/null ||
  { bad "keys" "keytool cannot make the server keys"; exit 1; }
# SunJSSE re-keys after 2^14 bytes under a key, sending and receiving.
echo 'jdk.tls.keyLimits=AES/GCM/NoPadding KeyUpdate 2^14, ChaCha20-Poly1305 KeyUpdate 2^14' >"$WORK/limits.security"

# capture FLAVOUR EXPECT_VERSION [LD_LIBRARY_PATH] [java options...]
capture() {
  local flavour=$1 version=$2 libpath=$3 out rc
  shift 3
  out=$WORK/$flavour.log
  log "capturing tlsbridge on $flavour"
  LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 300 \
    "$JAVA" "$@" -Djava.security.properties="$WORK/limits.security" -Dtlsbridge.keylog="$WORK/keylog" \
    -cp "$WORK/classes:target/classes" OpenerRun "$WORK/conns" "$flavour" "$WORK/rsa.p12" "$WORK/ec.p12" opener \
    >"$out" 2>"$WORK/$flavour.err"
  rc=$?
  grep -E '^(SEAL|OK|FAILED)' "$out"
  if grep -q "^SEAL records sealed by tlsbridge (OpenSSL $version" "$out"; then
    ok "$flavour: tlsbridge seals its records on OpenSSL $version"
  else
    bad "$flavour: tlsbridge seals its records on OpenSSL $version" "$(grep '^SEAL' "$out")"
  fi
  local n
  n=$(grep -c '^OK ' "$out")
  if ((rc == 0 && n == 36)); then
    ok "$flavour: 36 connections (2 roles x 2 BIOs x 9 suites) carried the stream both ways"
  else
    bad "$flavour: connections" "$n of 36 completed (exit $rc); $(grep -m1 '^FAILED' "$out")"
    tail -20 "$WORK/$flavour.err"
  fi
}

capture bundled 3.5.5 ""
if o4=$(tb_openssl 4.0) && [[ -f $o4/so/libssl.so.4 ]]; then
  capture system-4 4.0.3 "$o4/so" -Dtlsbridge.openssl=system
else
  bad "system-4" "no OpenSSL 4.0 build (scripts/openssl 4.0)"
fi

shopt -s nullglob
CONNS=("$WORK"/conns/*/meta.txt)
CONNS=("${CONNS[@]%/meta.txt}")
if ((${#CONNS[@]} == 0)); then
  bad "open" "nothing captured"
  exit 1
fi
log "opening ${#CONNS[@]} connections' records"
"$PY" tests/opener/open_records.py "$WORK/keylog" "${CONNS[@]}" >"$WORK/open.log" 2>&1
rc=$?
grep -E '^(OPENED|FAIL)' "$WORK/open.log" | sed -E 's/^/  /'
grep "^CONFIG" "$WORK/open.log" | sed -E 's/^CONFIG /  /'
total=$(grep '^TOTAL' "$WORK/open.log")
echo "$total"
if ((rc == 0)) && [[ $total == *"failed 0;"* ]]; then
  ok "every record opened, application bytes as sent, no (key, nonce) pair twice (${#CONNS[@]} connections)"
else
  bad "opening" "$(grep -m3 '^FAIL' "$WORK/open.log" | tr '\n' ' ')"
fi

# The opener must fail when a nonce or sequence number is wrong.
for mode in skip-seq reuse-seq repeat-nonce; do
  case $mode in
    repeat-nonce) want='(key, nonce) pair used twice' ;;
    *) want='authentication failed' ;;
  esac
  "$PY" tests/opener/open_records.py --break $mode "$WORK/keylog" "${CONNS[@]}" >"$WORK/break-$mode.log" 2>&1
  rc=$?
  hit=$(grep -m1 '^FAIL' "$WORK/break-$mode.log")
  if ((rc == 1)) && [[ $hit == *"$want"* ]]; then
    ok "self-check $mode: the opener fails ($hit)"
  else
    bad "self-check $mode: the opener should fail with '$want'" "exit $rc; ${hit:-no failure}"
  fi
done
echo "NOTE $(sed -nE 's/.*records opened: ([0-9]+) sent by tlsbridge.*pairs checked: ([0-9]+),.*/\1 records opened, \2 pairs checked/p' <<<"$total"); $((SECONDS - T0)) s"
exit $((FAIL > 0))
