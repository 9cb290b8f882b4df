#!/usr/bin/env bash
# Every record tlsbridge sends, opened by an implementation that is not
# OpenSSL. OpenerRun (Java) runs tlsbridge against SunJSSE as server and as
# client, over the engine (a layered socket: records leave through the
# engine's buffer BIO) and the native socket (the socket BIO), for the nine
# TLS 1.2/1.3 AEAD suites, on the bundled OpenSSL 3.5 and on a system
# OpenSSL 4.0; a relay between the two ends records each direction, and
# tlsbridge writes its key log. On TLS 1.3 tlsbridge asks for a KeyUpdate
# before each of its sends and the SunJSSE peer, with jdk.tls.keyLimits of
# 2^14 bytes (AES-GCM) and 2^15 (ChaCha20-Poly1305), updates and asks for
# updates as often. The same connections run again against two peers that
# never re-key on their own: OpenSSL 3.5's `s_client`/`s_server` (every suite)
# and Go's crypto/tls (gopeer.go, built with Debian's Go; the TLS 1.3
# suites). There tlsbridge asks for nothing, so each KeyUpdate it sends comes
# from the same key limits, which it shares with SunJSSE.
# open_records.py then opens every record with Python's `cryptography` and
# its own TLS 1.3 key schedule and TLS 1.2 key block, checks the bytes
# against the stream each side sent and that no (key, nonce) pair repeats,
# and on the Go and OpenSSL connections that each tlsbridge key but the last
# protected exactly the limit and the peer answered; run again with a TLS 1.3
# sequence number skipped, a TLS 1.2 ChaCha20 one reused, and a TLS 1.2
# explicit nonce repeated, it must fail each time; so must one byte flipped
# in the capture of a record tlsbridge sealed to the Go client after its
# KeyUpdates, and the Go connections captured without the limits (the JDK's
# 2^37 bytes) must fail the key-limit check.
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

# Go's crypto/tls: Debian's Go (the same everywhere), its caches under target/go.
need_pkgs golang-go
GO=/usr/lib/go/bin/go
GODIR=$TB_ROOT/target/go
mkdir -p "$GODIR"

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
# Standard library only: no module, no proxy; nothing outside target/go and $WORK.
if env -u GOROOT GOPATH="$GODIR/path" GOCACHE="$GODIR/cache" GOENV=off GOFLAGS= GOPROXY=off GO111MODULE=off \
    "$GO" build -o "$WORK/gopeer" tests/opener/gopeer.go 2>"$WORK/go-build.log"; then
  GOPEER=(-Dopener.go="$WORK/gopeer")
else
  cat "$WORK/go-build.log"
  bad "go" "cannot build tests/opener/gopeer.go with $("$GO" version)"
  GOPEER=()
fi
if o35=$(tb_openssl 3.5) && [[ -x $o35/bin/openssl ]]; then
  OSSLPEER=(-Dopener.openssl="$o35/bin/openssl")
else
  bad "openssl" "no OpenSSL 3.5 build with its openssl command (scripts/openssl 3.5)"
  OSSLPEER=()
fi
# tlsbridge and SunJSSE both re-key after this many bytes under a key (the
# checker is told them for the Go and openssl connections).
GCM_LIMIT=16384
CHACHA_LIMIT=32768
echo "jdk.tls.keyLimits=AES/GCM/NoPadding KeyUpdate $GCM_LIMIT, ChaCha20-Poly1305 KeyUpdate $CHACHA_LIMIT" \
  >"$WORK/limits.security"
LIMITS=(-Djava.security.properties="$WORK/limits.security")

# run_opener OUT FLAVOUR LOG [java options...]: OpenerRun's connections into OUT/
run_opener() {
  local out=$1 flavour=$2 logf=$3
  shift 3
  timeout 300 "$JAVA" "$@" -Dopener.keyLimits=$GCM_LIMIT,$CHACHA_LIMIT \
    -cp "$WORK/classes:target/classes" OpenerRun "$out" "$flavour" "$WORK/rsa.p12" "$WORK/ec.p12" opener \
    >"$logf" 2>"${logf%.log}.err"
}

# capture FLAVOUR EXPECT_VERSION [LD_LIBRARY_PATH] [java options...]
capture() {
  local flavour=$1 version=$2 libpath=$3 out rc want=36 what="2 roles x 2 BIOs x 9 suites with SunJSSE"
  shift 3
  out=$WORK/$flavour.log
  ((${#OSSLPEER[@]})) && want=$((want + 36)) what="$what and with openssl"
  ((${#GOPEER[@]})) && want=$((want + 12)) what="$what, x 3 TLS 1.3 suites with Go"
  log "capturing tlsbridge on $flavour"
  LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    run_opener "$WORK/conns" "$flavour" "$out" "$@" "${LIMITS[@]}" "${GOPEER[@]}" "${OSSLPEER[@]}" -Dtlsbridge.keylog="$WORK/keylog"
  rc=$?
  grep -E '^(SEAL|OK|FAILED)' "$out"
  if grep -q "^SEAL records sealed by tlsbridge (OpenSSL $version" "$out"; then
    ok "$flavour: tlsbridge seals its records on OpenSSL $version"
  else
    bad "$flavour: tlsbridge seals its records on OpenSSL $version" "$(grep '^SEAL' "$out")"
  fi
  local n
  n=$(grep -c '^OK ' "$out")
  if ((rc == 0 && n == want)); then
    ok "$flavour: $want connections ($what) carried the stream both ways"
  else
    bad "$flavour: connections" "$n of $want completed (exit $rc); $(grep -m1 '^FAILED' "$out")"
    tail -20 "${out%.log}.err"
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
# A broken record must fail the suite: one byte flipped in the capture file,
# inside a record tlsbridge sealed to the Go client after its KeyUpdates (the
# middle application record of its direction).
FLIPPED=$WORK/conns/bundled-go-server-socket-TLS_AES_128_GCM_SHA256
if [[ -f $FLIPPED/meta.txt ]]; then
  rm -rf "$WORK/flipped" && cp -r "$FLIPPED" "$WORK/flipped"
  where=$("$PY" - "$WORK/flipped/s2c.bin" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
recs, at = [], 0
while at + 5 <= len(data):
    n = int.from_bytes(data[at + 3:at + 5], "big")
    if data[at] == 23 and n > 64:
        recs.append((at, n))
    at += 5 + n
at, n = recs[len(recs) // 2]
data[at + 5 + n // 2] ^= 0x01
open(sys.argv[1], "wb").write(data)
print(f"application record {len(recs) // 2} of {len(recs)}, byte {at + 5 + n // 2} of the capture")
EOF
)
  "$PY" tests/opener/open_records.py "$WORK/keylog" "$WORK/flipped" >"$WORK/break-flip.log" 2>&1
  rc=$?
  hit=$(grep -m1 '^FAIL' "$WORK/break-flip.log")
  if ((rc == 1)) && [[ $hit == *"authentication failed"* ]]; then
    ok "self-check flipped byte ($where): the opener fails ($hit)"
  else
    bad "self-check flipped byte ($where): the opener should fail with 'authentication failed'" "exit $rc; ${hit:-no failure}"
  fi
else
  bad "self-check flipped byte" "no capture of tlsbridge's server socket against the Go client"
fi
# The key-limit check must fail when tlsbridge's limits are not the ones
# the checker is told: the Go connections again, with the JDK's own limits.
if ((${#GOPEER[@]})); then
  log "capturing tlsbridge against Go without the small key limits"
  run_opener "$WORK/nolimit" bundled "$WORK/nolimit.log" "${GOPEER[@]}" -Dopener.peers=go \
    -Dtlsbridge.keylog="$WORK/keylog-nolimit"
  rc=$?
  nl=("$WORK"/nolimit/*/meta.txt)
  nl=("${nl[@]%/meta.txt}")
  "$PY" tests/opener/open_records.py "$WORK/keylog-nolimit" "${nl[@]}" >"$WORK/break-nolimit.log" 2>&1
  orc=$?
  n=$(grep -c '^FAIL .*KeyUpdates for [0-9]* bytes under a [0-9]*-byte key limit' "$WORK/break-nolimit.log")
  if ((rc == 0 && orc == 1 && ${#nl[@]} == 12 && n == 12)); then
    ok "self-check key limits off: all 12 Go connections fail the key-limit check ($(grep -m1 '^FAIL' "$WORK/break-nolimit.log" | cut -c1-160))"
  else
    bad "self-check key limits off: 12 Go connections should fail the key-limit check" \
      "capture exit $rc, ${#nl[@]} captured, opener exit $orc, $n failed so; $(grep -m1 -E '^(FAIL|FAILED)' "$WORK/break-nolimit.log" "$WORK/nolimit.log")"
  fi
fi
echo "NOTE $(sed -nE 's/.*records opened: ([0-9]+) sent by tlsbridge.*pairs checked: ([0-9]+),.*key limits checked on ([0-9]+) .*/\1 records opened, \2 pairs checked, key limits on \3 connections/p' <<<"$total"); $((SECONDS - T0)) s"
exit $((FAIL > 0))
